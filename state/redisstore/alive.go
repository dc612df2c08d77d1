package redisstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"time"
)

// Each instance writes a heartbeat into the sorted set {ns}:alive every
// refreshEvery, scored by its clock; heartbeats older than aliveFor are
// dropped. The set's size, read at each heartbeat and with every spend, is
// the number of instances alive: the N an instance divides what is left by
// when it loses Redis (see view.go). An instance that stops without Close
// still counts for aliveFor, which only makes the others' shares smaller.
// The clocks of the instances must agree within aliveFor less refreshEvery.

// aliveFor is how long a heartbeat counts an instance as alive.
const aliveFor = 10 * refreshEvery

func (s *Store) aliveKey() string { return s.tag + ":alive" }

// newInstanceID names this instance in the heartbeat set.
func newInstanceID() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}

// heartbeat records this instance as alive and learns how many are. A
// Redis failure is returned for the caller to report.
func (s *Store) heartbeat(ctx context.Context) error {
	now := s.clock.Now()
	octx, cancel := s.opContext(ctx)
	defer cancel()
	n, err := heartbeatScript.Run(octx, s.client, []string{s.aliveKey()},
		s.id, now.UnixMilli(), now.Add(-aliveFor).UnixMilli(), aliveFor.Milliseconds()).Int64()
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.setInstancesLocked(n)
	s.mu.Unlock()
	return nil
}

// setInstancesLocked records how many instances Redis says are alive;
// this one always counts. s.mu must be held.
func (s *Store) setInstancesLocked(n int64) {
	s.instances = int(max(n, 1))
	s.health.Instances = s.instances
}

// leave removes this instance's heartbeat, so that the others' shares grow
// back at once rather than after aliveFor. Best effort: a Redis that is
// away forgets it by itself.
func (s *Store) leave() {
	if !s.up.Load() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), min(s.timeout, time.Second))
	defer cancel()
	_ = s.client.ZRem(ctx, s.aliveKey(), s.id).Err()
}
