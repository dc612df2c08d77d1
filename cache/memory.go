package cache

import (
	"context"
	"sync"
	"time"

	"github.com/tollfree/tollfree/internal/clock"
)

// Memory is an in-process Backend: an LRU bounded in bytes (each entry
// counts len(Key) plus the length of its value), whose entries expire by
// TTL when read. It is safe for concurrent use.
type Memory struct {
	max   int64
	clock clock.Clock

	mu    sync.Mutex // guards size, items and the list through root
	size  int64
	items map[Key]*memItem
	root  memItem // sentinel: root.next is the most recently used
}

type memItem struct {
	k          Key
	v          []byte
	exp        time.Time // zero: never
	prev, next *memItem
}

var (
	_ Backend   = (*Memory)(nil)
	_ TTLGetter = (*Memory)(nil)
)

// NewMemory returns a Memory holding at most maxBytes (DefaultMemoryBytes
// when maxBytes <= 0), timed by c (clock.Real when nil).
func NewMemory(maxBytes int64, c clock.Clock) *Memory {
	if maxBytes <= 0 {
		maxBytes = DefaultMemoryBytes
	}
	if c == nil {
		c = clock.Real{}
	}
	m := &Memory{max: maxBytes, clock: c, items: make(map[Key]*memItem)}
	m.root.next, m.root.prev = &m.root, &m.root
	return m
}

// Get returns the value of k, marking it recently used. An expired value is
// removed and reported missing. The returned slice must not be modified.
func (m *Memory) Get(ctx context.Context, k Key) ([]byte, bool, error) {
	v, _, ok, err := m.GetTTL(ctx, k)
	return v, ok, err
}

// GetTTL is Get that also returns how long the value has left (0: never
// expires).
func (m *Memory) GetTTL(_ context.Context, k Key) ([]byte, time.Duration, bool, error) {
	now := m.clock.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	it, ok := m.items[k]
	if !ok {
		return nil, 0, false, nil
	}
	var left time.Duration
	if !it.exp.IsZero() {
		left = it.exp.Sub(now)
		if left <= 0 {
			m.removeLocked(it)
			return nil, 0, false, nil
		}
	}
	m.unlinkLocked(it)
	m.pushFrontLocked(it)
	return it.v, left, true, nil
}

// Set stores a copy of v under k for ttl (no expiry when ttl <= 0), evicting
// the least recently used entries until the total fits. A value too large
// to fit at all is not stored, and any older value of k is dropped.
func (m *Memory) Set(_ context.Context, k Key, v []byte, ttl time.Duration) error {
	var exp time.Time
	if ttl > 0 {
		exp = m.clock.Now().Add(ttl)
	}
	cp := append([]byte(nil), v...)
	size := itemSize(cp)
	m.mu.Lock()
	defer m.mu.Unlock()
	if old, ok := m.items[k]; ok {
		m.removeLocked(old)
	}
	if size > m.max {
		return nil
	}
	for m.size+size > m.max {
		m.removeLocked(m.root.prev)
	}
	it := &memItem{k: k, v: cp, exp: exp}
	m.items[k] = it
	m.size += size
	m.pushFrontLocked(it)
	return nil
}

// Len returns the number of entries held, expired ones not yet removed
// included.
func (m *Memory) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.items)
}

// Bytes returns the total size of the entries held, as counted against the
// bound.
func (m *Memory) Bytes() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.size
}

func itemSize(v []byte) int64 { return int64(len(Key{}) + len(v)) }

func (m *Memory) removeLocked(it *memItem) {
	m.unlinkLocked(it)
	delete(m.items, it.k)
	m.size -= itemSize(it.v)
}

func (m *Memory) unlinkLocked(it *memItem) {
	it.prev.next = it.next
	it.next.prev = it.prev
	it.prev, it.next = nil, nil
}

func (m *Memory) pushFrontLocked(it *memItem) {
	it.prev = &m.root
	it.next = m.root.next
	m.root.next.prev = it
	m.root.next = it
}
