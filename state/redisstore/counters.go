package redisstore

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/tollfree/tollfree/state"
)

// slotKey names one counter slot.
type slotKey struct {
	key  string
	slot int64
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
// never refused. When Redis does not answer within OpTimeout, the call is
// served locally, where each instance spends only its share of what was
// left (see view.go); the error wraps state.ErrUnavailable only if Local
// failed.
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
				// Mirror into Local, so that an instance restarted during
				// an outage still holds its own counts.
				_ = s.local.Add(ctx, spends)
			}
			return failed, nil
		}
		if callerGone(ctx) {
			return -1, fmt.Errorf("redisstore: spend: %w", ctx.Err())
		}
		s.failed(err)
	}
	return s.localSpend(ctx, spends)
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
	s.pendLocked(spends, s.clock.Now())
	return nil
}

// runSpend runs spendScript within OpTimeout and learns the counts and the
// number of instances it returns.
func (s *Store) runSpend(ctx context.Context, spends []state.Spend, check bool) (int, error) {
	nkeys := 1
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
	keys = append(keys, s.aliveKey())
	octx, cancel := s.opContext(ctx)
	defer cancel()
	reply, err := spendScript.Run(octx, s.client, keys, args...).Slice()
	if err != nil {
		return -1, err
	}
	failed, alive, vals, err := spendReply(reply)
	if err != nil {
		return -1, err
	}
	s.mu.Lock()
	s.setInstancesLocked(alive)
	s.learnLocked(spends, vals, s.clock.Now())
	s.mu.Unlock()
	return int(failed), nil
}

// spendReply decodes spendScript's reply.
func spendReply(reply []any) (failed, alive int64, vals []int64, err error) {
	if len(reply) != 3 {
		return 0, 0, nil, fmt.Errorf("spend script: a reply of %d values, want 3", len(reply))
	}
	failed, ok1 := reply[0].(int64)
	alive, ok2 := reply[1].(int64)
	counts, ok3 := reply[2].(string)
	if !ok1 || !ok2 || !ok3 {
		return 0, 0, nil, fmt.Errorf("spend script: an unexpected reply %T, %T, %T", reply[0], reply[1], reply[2])
	}
	vals, err = parseCounts(counts)
	if err != nil {
		return 0, 0, nil, fmt.Errorf("spend script: %w", err)
	}
	return failed, alive, vals, nil
}

// Sums returns each spend's window sum: from Redis, or while Redis is away
// the higher of what this instance last knew of the shared count (with its
// own spends since) and its Local count.
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
	return s.localSums(ctx, spends)
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
	counts := make([]int64, len(keys))
	k := 0
	for i, sp := range spends {
		for range sp.Slots {
			if str, ok := vals[k].(string); ok {
				n, err := strconv.ParseInt(str, 10, 64)
				if err != nil {
					return nil, fmt.Errorf("counter %s is not a number: %w", keys[k], err)
				}
				out[i] += n
				counts[k] = n
			}
			k++
		}
	}
	s.mu.Lock()
	s.learnLocked(spends, counts, s.clock.Now())
	s.mu.Unlock()
	return out, nil
}
