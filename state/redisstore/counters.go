package redisstore

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/tollfree/tollfree/state"
)

// slotKey names one counter slot in the journal of local spends.
type slotKey struct {
	key  string
	slot int64
}

// journalEntry is what was added locally to one slot during an outage.
type journalEntry struct {
	amount int64
	ttl    time.Duration
}

// maxPush is how many slots one reconciling script adds.
const maxPush = 500

func validate(spends []state.Spend) error {
	for i := range spends {
		sp := &spends[i]
		switch {
		case sp.Slots < 1:
			return fmt.Errorf("spend %d (%s): slots %d, want at least 1", i, sp.Key, sp.Slots)
		case sp.TTL <= 0:
			return fmt.Errorf("spend %d (%s): ttl %v, want more than 0", i, sp.Key, sp.TTL)
		case strings.ContainsAny(sp.Key, "{}"):
			return fmt.Errorf("spend %d (%s): key contains '{' or '}'", i, sp.Key)
		}
	}
	return nil
}

// Spend checks every spend's window and, only if all pass, adds every Amount,
// in one script on Redis. A spend with Limit 0, or an Amount of 0 or less, is
// never refused. When Redis does not answer within OpTimeout, Local serves
// the call; the error wraps state.ErrUnavailable only if Local failed too.
func (s *Store) Spend(ctx context.Context, spends []state.Spend) (int, error) {
	if err := validate(spends); err != nil {
		return -1, fmt.Errorf("redisstore: spend: %w", err)
	}
	if len(spends) == 0 {
		return -1, nil
	}
	if s.up.Load() {
		if err := ctx.Err(); err != nil {
			return -1, fmt.Errorf("redisstore: spend: %w", err)
		}
		failed, err := s.runSpend(ctx, spends, true)
		if err == nil {
			if failed < 0 {
				// Mirror into Local so that an outage starts from this
				// instance's own recent counts rather than from zero.
				_ = s.local.Add(ctx, spends)
			}
			return failed, nil
		}
		if callerGone(ctx) {
			return -1, fmt.Errorf("redisstore: spend: %w", ctx.Err())
		}
		s.failed(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	failed, err := s.local.Spend(ctx, spends)
	if err != nil {
		return -1, fmt.Errorf("redisstore: spend: %w: %w", state.ErrUnavailable, err)
	}
	if failed < 0 {
		s.journalLocked(spends)
	}
	return failed, nil
}

// Add adds every Amount without checking; see Spend for the fallback.
func (s *Store) Add(ctx context.Context, spends []state.Spend) error {
	if err := validate(spends); err != nil {
		return fmt.Errorf("redisstore: add: %w", err)
	}
	if len(spends) == 0 {
		return nil
	}
	if s.up.Load() {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("redisstore: add: %w", err)
		}
		_, err := s.runSpend(ctx, spends, false)
		if err == nil {
			_ = s.local.Add(ctx, spends)
			return nil
		}
		if callerGone(ctx) {
			return fmt.Errorf("redisstore: add: %w", ctx.Err())
		}
		s.failed(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.local.Add(ctx, spends); err != nil {
		return fmt.Errorf("redisstore: add: %w: %w", state.ErrUnavailable, err)
	}
	s.journalLocked(spends)
	return nil
}

// journalLocked remembers spends added to Local, to push them to Redis when
// it returns. s.mu must be held.
func (s *Store) journalLocked(spends []state.Spend) {
	for _, sp := range spends {
		k := slotKey{key: sp.Key, slot: sp.Slot}
		e := s.journal[k]
		if e == nil {
			e = &journalEntry{}
			s.journal[k] = e
		}
		e.amount += sp.Amount
		e.ttl = max(e.ttl, sp.TTL)
	}
}

// runSpend runs spendScript within OpTimeout.
func (s *Store) runSpend(ctx context.Context, spends []state.Spend, check bool) (int, error) {
	nkeys := 0
	for i := range spends {
		nkeys += spends[i].Slots
	}
	keys := make([]string, 0, nkeys)
	args := make([]any, 0, 2+4*len(spends))
	flag := "0"
	if check {
		flag = "1"
	}
	args = append(args, flag, len(spends))
	for _, sp := range spends {
		for slot := sp.Slot - int64(sp.Slots) + 1; slot <= sp.Slot; slot++ {
			keys = append(keys, s.counterKey(sp.Key, slot))
		}
		args = append(args, sp.Slots, sp.Limit, sp.Amount, max(sp.TTL.Milliseconds(), 1))
	}
	octx, cancel := s.opContext(ctx)
	defer cancel()
	failed, err := spendScript.Run(octx, s.client, keys, args...).Int64()
	if err != nil {
		return -1, err
	}
	return int(failed), nil
}

// Sums returns each spend's window sum: from Redis, or from Local while Redis
// is away.
func (s *Store) Sums(ctx context.Context, spends []state.Spend) ([]int64, error) {
	if err := validate(spends); err != nil {
		return nil, fmt.Errorf("redisstore: sums: %w", err)
	}
	if len(spends) == 0 {
		return []int64{}, nil
	}
	if s.up.Load() {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("redisstore: sums: %w", err)
		}
		out, err := s.redisSums(ctx, spends)
		if err == nil {
			return out, nil
		}
		if callerGone(ctx) {
			return nil, fmt.Errorf("redisstore: sums: %w", ctx.Err())
		}
		s.failed(err)
	}
	out, err := s.local.Sums(ctx, spends)
	if err != nil {
		return nil, fmt.Errorf("redisstore: sums: %w: %w", state.ErrUnavailable, err)
	}
	return out, nil
}

// redisSums reads every window's slots with one MGET: all keys share the
// namespace's hash tag.
func (s *Store) redisSums(ctx context.Context, spends []state.Spend) ([]int64, error) {
	var keys []string
	for _, sp := range spends {
		for slot := sp.Slot - int64(sp.Slots) + 1; slot <= sp.Slot; slot++ {
			keys = append(keys, s.counterKey(sp.Key, slot))
		}
	}
	octx, cancel := s.opContext(ctx)
	defer cancel()
	vals, err := s.client.MGet(octx, keys...).Result()
	if err != nil {
		return nil, err
	}
	out := make([]int64, len(spends))
	k := 0
	for i, sp := range spends {
		for range sp.Slots {
			if str, ok := vals[k].(string); ok {
				n, err := strconv.ParseInt(str, 10, 64)
				if err != nil {
					return nil, fmt.Errorf("counter %s is not a number: %w", keys[k], err)
				}
				out[i] += n
			}
			k++
		}
	}
	return out, nil
}

// pushCounts adds the journal to Redis, maxPush slots per script. On error
// the slots not yet added go back into the journal. It returns how many
// slots were added.
func (s *Store) pushCounts(ctx context.Context, journal map[slotKey]*journalEntry) (int, error) {
	batch := make([]state.Spend, 0, min(len(journal), maxPush))
	pushed := 0
	var err error
	flush := func() {
		if len(batch) == 0 || err != nil {
			return
		}
		if _, err = s.runSpend(ctx, batch, false); err == nil {
			for _, sp := range batch {
				delete(journal, slotKey{key: sp.Key, slot: sp.Slot})
			}
			pushed += len(batch)
		}
		batch = batch[:0]
	}
	for k, e := range journal {
		batch = append(batch, state.Spend{Key: k.key, Slot: k.slot, Slots: 1, Amount: e.amount, TTL: e.ttl})
		if len(batch) == maxPush {
			flush()
		}
	}
	flush()
	if err != nil {
		s.mu.Lock()
		for k, e := range journal {
			mine := s.journal[k]
			if mine == nil {
				s.journal[k] = e
				continue
			}
			mine.amount += e.amount
			mine.ttl = max(mine.ttl, e.ttl)
		}
		s.mu.Unlock()
		return pushed, fmt.Errorf("push local counts: %w", err)
	}
	return pushed, nil
}
