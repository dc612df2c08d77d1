package memstore

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// notesFile holds the notes. They change rarely (a limit learned) or in a
// small periodic snapshot (latencies), and matter less than a rest: SetNote
// marks them dirty and the flusher writes them within FlushEvery, and at
// Close.
const notesFile = "notes.json"

type note struct {
	Value   []byte    `json:"value"`
	Expires time.Time `json:"expires"`
}

type notesJSON struct {
	Version int             `json:"version"`
	Notes   map[string]note `json:"notes"`
}

// SetNote keeps value under key until ttl has passed.
func (s *Store) SetNote(_ context.Context, key string, value []byte, ttl time.Duration) error {
	if key == "" || ttl <= 0 {
		return fmt.Errorf("memstore: set note %q: want a key and a positive ttl, got ttl %s", key, ttl)
	}
	v := append([]byte(nil), value...)
	s.mu.Lock()
	s.notes[key] = note{Value: v, Expires: s.clock.Now().Add(ttl).UTC()}
	s.notesDirty = true
	s.mu.Unlock()
	return nil
}

// Notes returns every unexpired note whose key starts with prefix.
func (s *Store) Notes(_ context.Context, prefix string) (map[string][]byte, error) {
	now := s.clock.Now()
	out := make(map[string][]byte)
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, n := range s.notes {
		if strings.HasPrefix(k, prefix) && now.Before(n.Expires) {
			out[k] = append([]byte(nil), n.Value...)
		}
	}
	return out, nil
}

// pruneNotesLocked drops expired notes. s.mu must be held.
func (s *Store) pruneNotesLocked(now time.Time) {
	for k, n := range s.notes {
		if !now.Before(n.Expires) {
			delete(s.notes, k)
			s.notesDirty = true
		}
	}
}

// flushNotes writes notes.json if the notes changed since the last write.
func (s *Store) flushNotes() error {
	if s.dir == "" {
		return nil
	}
	s.notesFileMu.Lock()
	defer s.notesFileMu.Unlock()
	s.mu.Lock()
	if !s.notesDirty {
		s.mu.Unlock()
		return nil
	}
	doc := notesJSON{Version: fileVersion, Notes: make(map[string]note, len(s.notes))}
	for k, n := range s.notes {
		doc.Notes[k] = n
	}
	s.notesDirty = false
	s.mu.Unlock()
	data, err := json.Marshal(doc)
	if err == nil {
		err = s.files.WriteFile(s.dir, notesFile, data)
	}
	s.persisted(notesFile, err)
	if err != nil {
		s.mu.Lock()
		s.notesDirty = true // try again at the next flush
		s.mu.Unlock()
		return fmt.Errorf("write %s: %w", notesFile, err)
	}
	return nil
}

// loadNotes reads notes.json, leaving expired notes out.
func (s *Store) loadNotes(now time.Time) error {
	var doc notesJSON
	if err := readJSON(filepath.Join(s.dir, notesFile), &doc,
		"move it away to start without learned limits and latencies"); err != nil {
		return err
	}
	for k, n := range doc.Notes {
		if k != "" && now.Before(n.Expires) {
			s.notes[k] = n
		}
	}
	return nil
}
