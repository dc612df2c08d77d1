package memstore

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/tollfree/tollfree/state"
)

// counters.json, version 2, is JSON lines: a header, then one line per
// counter, then the journal: one line per counter changed, appended each
// flush. A line holds a counter's live slots whole, not a change, so the
// last line of a counter wins and a line read twice does no harm:
//
//	{"version":2,"saved":"2026-12-01T12:00:00Z"}
//	{"k":"groq/llama|rpm","s":[[178048080,3,1764590520000000000],...]}
//	{"h":"9c1185a5c5e9fc54","s":[[494608,2,1764680400000000000]]}
//
// A "k" line names a full counter by its key; an "h" line a single-slot
// counter of the compact table by its key's hash (state.HashKey), so a caller's
// id, already hashed by quota, is not even written hashed once. A slot is
// [index, count, expiry in unix nanoseconds]. When the journal passes
// twice the snapshot and a megabyte, the next flush writes the file whole
// (write-then-rename): the file stays within about three times what is
// live, and the cost of a rewrite, shared among the flushes that made it
// due, is at most half theirs per flush.
//
// A crash while appending leaves a torn last line: load reads every line
// before it and the next flush rewrites the file. A version-1 file (one
// object, rewritten whole each flush) loads and is rewritten as version 2
// at the first flush.
const countersVersion = 2

// minJournal is the journal a rewrite waits for at least, so that a small
// state is not rewritten each flush.
const minJournal = 1 << 20

// maxLine bounds one line of counters.json (a counter of many slots).
const maxLine = 1 << 20

type countersHeader struct {
	Version int       `json:"version"`
	Saved   time.Time `json:"saved"`
}

// record is one counter line.
type record struct {
	K *string    `json:"k"`
	H string     `json:"h"`
	S [][3]int64 `json:"s"`
}

func appendHeader(buf []byte, now time.Time) []byte {
	buf = append(buf, `{"version":`...)
	buf = strconv.AppendInt(buf, countersVersion, 10)
	buf = append(buf, `,"saved":"`...)
	buf = now.UTC().AppendFormat(buf, time.RFC3339Nano)
	return append(buf, "\"}\n"...)
}

func appendSlot(buf []byte, idx, n, expires int64) []byte {
	buf = append(buf, '[')
	buf = strconv.AppendInt(buf, idx, 10)
	buf = append(buf, ',')
	buf = strconv.AppendInt(buf, n, 10)
	buf = append(buf, ',')
	buf = strconv.AppendInt(buf, expires, 10)
	return append(buf, ']')
}

// appendSmall appends the line of the single-slot counter h.
func appendSmall(buf []byte, h uint64, e entry) []byte {
	buf = append(buf, `{"h":"`...)
	for shift := 60; shift >= 0; shift -= 4 {
		buf = append(buf, "0123456789abcdef"[h>>uint(shift)&0xf])
	}
	buf = append(buf, `","s":[`...)
	buf = appendSlot(buf, int64(e.slot), int64(e.n), e.expiresAt())
	return append(buf, "]}\n"...)
}

// appendFull appends the line of c with its slots live at now; nothing when
// none is.
func appendFull(buf []byte, c *counter, now int64) []byte {
	first := true
	for _, sl := range c.slots {
		if sl.expires <= now {
			continue
		}
		if first {
			key, _ := json.Marshal(c.key) // a string always encodes
			buf = append(buf, `{"k":`...)
			buf = append(buf, key...)
			buf = append(buf, `,"s":[`...)
			first = false
		} else {
			buf = append(buf, ',')
		}
		buf = appendSlot(buf, sl.idx, sl.n, sl.expires)
	}
	if first {
		return buf
	}
	return append(buf, "]}\n"...)
}

// flushCounts appends the counters changed since the last flush to
// counters.json, or writes the file whole when it is due.
func (s *Store) flushCounts() error {
	if s.dir == "" {
		return nil
	}
	s.countsFileMu.Lock()
	defer s.countsFileMu.Unlock()
	aw, canAppend := s.files.(AppendWriter)
	s.mu.Lock()
	changed := len(s.changed) > 0 || len(s.changedSmall) > 0
	if s.rewrite || (!canAppend && changed) {
		s.mu.Unlock()
		return s.rewriteCounts()
	}
	if !changed {
		s.mu.Unlock()
		return nil
	}
	buf := s.appendChangedLocked(s.flushBuf[:0], s.clock.Now().UnixNano())
	s.mu.Unlock()
	err := aw.AppendFile(s.dir, countersFile, buf)
	s.keepFlushBuf(buf)
	s.persisted(countersFile, err)
	if err != nil {
		// The append may have left a torn line, and lost these counts:
		// the next flush writes the file whole.
		s.mu.Lock()
		s.rewrite = true
		s.mu.Unlock()
		return fmt.Errorf("append to %s: %w", countersFile, err)
	}
	s.mu.Lock()
	s.journal += int64(len(buf))
	due := s.journal > 2*s.snapshot+minJournal
	s.mu.Unlock()
	if due {
		return s.rewriteCounts()
	}
	return nil
}

// keepFlushBuf keeps buf's memory for the next flush, unless a burst made
// it large. s.countsFileMu must be held.
func (s *Store) keepFlushBuf(buf []byte) {
	s.flushBuf = buf[:0]
	if cap(buf) > 4<<20 {
		s.flushBuf = nil // a burst's buffer is not kept
	}
}

// appendChangedLocked appends the lines of the counters changed since the
// last flush and forgets them. s.mu must be held.
func (s *Store) appendChangedLocked(buf []byte, now int64) []byte {
	slices.Sort(s.changedSmall)
	var last uint64
	for _, h := range s.changedSmall {
		if h == last {
			continue
		}
		last = h
		// A counter gone from small expired, was given back to 0, or
		// was promoted (its line is in changed). The first two are
		// written as expired, so that a load drops the line before.
		if e, ok := s.small.get(h, now); ok {
			buf = appendSmall(buf, h, e)
		} else if s.counters[h] == nil {
			buf = appendSmall(buf, h, entry{exp: 1})
		}
	}
	s.changedSmall = s.changedSmall[:0]
	for i, c := range s.changed {
		c.changed = false
		buf = appendFull(buf, c, now)
		s.changed[i] = nil
	}
	s.changed = s.changed[:0]
	return buf
}

// rewriteCounts writes counters.json whole from memory. s.countsFileMu
// must be held, s.mu not: it is taken for the full counters, then for
// each shard of small in turn, so requests are not held up for the whole
// write. A counter changed meanwhile is listed as changed and appended by
// the next flush, so the file misses nothing; one written twice does no
// harm.
func (s *Store) rewriteCounts() error {
	s.mu.Lock()
	s.rewrite = false
	for i, c := range s.changed {
		c.changed = false
		s.changed[i] = nil
	}
	s.changed, s.changedSmall = s.changed[:0], s.changedSmall[:0]
	s.mu.Unlock()

	var written int64
	write := func(w io.Writer) error {
		at := s.clock.Now()
		now := at.UnixNano()
		// s.flushBuf, under countsFileMu as this is: a buffer made here
		// would live on the flush goroutine's stack, growing it to 128 KB.
		buf := appendHeader(s.flushBuf[:0], at)
		defer func() { s.keepFlushBuf(buf) }()
		s.mu.Lock()
		for _, c := range s.counters {
			buf = appendFull(buf, c, now)
		}
		s.mu.Unlock()
		for i := range nShards {
			s.mu.Lock()
			s.small.each(i, now, func(h uint64, e entry) { buf = appendSmall(buf, h, e) })
			s.mu.Unlock()
			if len(buf) >= 32<<10 || i == nShards-1 {
				n, err := w.Write(buf)
				written += int64(n)
				if err != nil {
					return err
				}
				buf = buf[:0]
			}
		}
		return nil
	}
	var err error
	if aw, ok := s.files.(AppendWriter); ok {
		err = aw.WriteFileFrom(s.dir, countersFile, write)
	} else {
		var b bytes.Buffer
		if err = write(&b); err == nil {
			err = s.files.WriteFile(s.dir, countersFile, b.Bytes())
		}
	}
	s.persisted(countersFile, err)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.rewrite = true // try again at the next flush
		return fmt.Errorf("write %s: %w", countersFile, err)
	}
	s.journal, s.snapshot = 0, written
	return nil
}

// loadCounts reads counters.json into memory, leaving expired slots out.
// A torn last line (a crash while appending) is skipped; any other line
// that does not read is an error naming the file.
func (s *Store) loadCounts(now int64) error {
	path := filepath.Join(s.dir, countersFile)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		s.rewrite = true // the journal needs its header first
		return nil
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	const remedy = "move it away to start with empty counters"
	corrupt := func(line int, err error) error {
		return fmt.Errorf("%s is corrupt (line %d: %w); %s", path, line, err, remedy)
	}
	r := bufio.NewReaderSize(f, 64<<10)
	l := loader{s: s, now: now}
	var size int64
	for n := 1; ; n++ {
		line, err := r.ReadSlice('\n')
		for errors.Is(err, bufio.ErrBufferFull) && len(line) < maxLine {
			// A line longer than the buffer: gather it.
			more := slices.Clone(line)
			line, err = r.ReadSlice('\n')
			line = append(more, line...)
		}
		if err != nil && !errors.Is(err, io.EOF) {
			if errors.Is(err, bufio.ErrBufferFull) {
				return corrupt(n, fmt.Errorf("line longer than %d bytes", maxLine))
			}
			return fmt.Errorf("read %s: %w", path, err)
		}
		size += int64(len(line))
		eof := errors.Is(err, io.EOF)
		if len(bytes.TrimSpace(line)) > 0 {
			var lerr error
			if n == 1 {
				lerr = l.first(line)
				if lerr != nil {
					if v := new(countersHeader); json.Unmarshal(line, v) == nil && v.Version != countersVersion && v.Version != 1 {
						return fmt.Errorf("%s has version %d, want %d; %s", path, v.Version, countersVersion, remedy)
					}
					return corrupt(n, lerr)
				}
			} else if lerr = l.record(line); lerr != nil {
				if _, perr := r.Peek(1); !eof && perr == nil {
					return corrupt(n, lerr) // not the last line
				}
				// A crash while appending: what came before stands.
				s.logger.Warn("memstore: counters.json ends with a torn line, from a crash while writing it; the counts before it are loaded",
					"dir", s.dir, "line", n)
				s.rewrite = true
			}
		}
		if eof {
			break
		}
	}
	l.settle()
	// A file much larger than what it holds live is rewritten soon.
	s.journal = size
	s.snapshot = int64(len(s.counters)+s.small.len(now)) * 64
	return nil
}

// loader applies the lines of counters.json in order: a counter's last line
// wins, whether it names the counter by key or by hash (both are kept by
// the key's hash).
type loader struct {
	s   *Store
	now int64
}

// first reads the first line: a version-2 header, or a whole version-1
// file, which it migrates.
func (l *loader) first(line []byte) error {
	var v countersJSON
	if err := json.Unmarshal(line, &v); err != nil {
		return err
	}
	switch v.Version {
	case countersVersion:
		return nil
	case 1:
		for key, slots := range v.Counters {
			ss := make([][3]int64, len(slots))
			for i, sl := range slots {
				ss[i] = [3]int64{sl.Slot, sl.N, unixNanos(sl.Expires)}
			}
			l.fullLine(key, ss)
		}
		l.s.rewrite = true
		return nil
	}
	return fmt.Errorf("version %d, want %d", v.Version, countersVersion)
}

// record applies one counter line.
func (l *loader) record(line []byte) error {
	var r record
	if h, sl, ok := parseSmall(line); ok {
		// The line exactly as appendSmall writes it: millions of them in
		// a busy site's file, read five times faster than by json.
		r.H, r.S = h, [][3]int64{sl}
	} else if err := json.Unmarshal(line, &r); err != nil {
		return err
	}
	switch {
	case r.K != nil && r.H == "":
		l.fullLine(*r.K, r.S)
		return nil
	case r.K == nil && len(r.H) == 16:
		h, err := strconv.ParseUint(r.H, 16, 64)
		if err != nil || h == 0 {
			return fmt.Errorf("hash %q: want 16 hex digits, not all 0", r.H)
		}
		if len(r.S) != 1 {
			return fmt.Errorf("hash %s: %d slots, want 1", r.H, len(r.S))
		}
		sl := r.S[0]
		exp, ok := compactExpiry(sl[2])
		if !ok || !fits32(sl[0]) || !fits32(sl[1]) {
			return fmt.Errorf("hash %s: slot %v out of range", r.H, sl)
		}
		delete(l.s.counters, h)
		l.s.small.put(h, entry{n: int32(sl[1]), slot: int32(sl[0]), exp: exp}, l.now)
		return nil
	}
	return errors.New(`want a line with either "k" or a 16-digit "h"`)
}

// fullLine sets the counter key to the live slots among ss.
func (l *loader) fullLine(key string, ss [][3]int64) {
	h := state.HashKey(key)
	l.s.small.take(h, l.now)
	c := &counter{key: key}
	for _, sl := range ss {
		if sl[2] > l.now {
			c.add(sl[0], sl[1], sl[2], l.now)
		}
	}
	if len(c.slots) == 0 {
		delete(l.s.counters, h)
		return
	}
	l.s.counters[h] = c
}

// settle moves each full counter that fits the compact table there, as a
// running store keeps it.
func (l *loader) settle() {
	for h, c := range l.s.counters {
		if len(c.slots) != 1 {
			continue
		}
		sl := c.slots[0]
		exp, ok := compactExpiry(sl.expires)
		if !ok || !fits32(sl.idx) || !fits32(sl.n) {
			continue
		}
		l.s.small.put(h, entry{n: int32(sl.n), slot: int32(sl.idx), exp: exp}, l.now)
		delete(l.s.counters, h)
	}
}

// parseSmall reads a line exactly as appendSmall writes it, and reports
// whether it was one.
func parseSmall(line []byte) (string, [3]int64, bool) {
	var sl [3]int64
	line = bytes.TrimRight(line, "\r\n")
	rest, ok := bytes.CutPrefix(line, []byte(`{"h":"`))
	if !ok || len(rest) < 16 {
		return "", sl, false
	}
	h := string(rest[:16])
	rest, ok = bytes.CutPrefix(rest[16:], []byte(`","s":[[`))
	if !ok {
		return "", sl, false
	}
	rest, ok = bytes.CutSuffix(rest, []byte("]]}"))
	if !ok {
		return "", sl, false
	}
	for i := range sl {
		num := rest
		if i < 2 {
			var found bool
			num, rest, found = bytes.Cut(rest, []byte{','})
			if !found {
				return "", sl, false
			}
		}
		v, err := strconv.ParseInt(string(num), 10, 64)
		if err != nil {
			return "", sl, false
		}
		sl[i] = v
	}
	return h, sl, true
}
