package redisstore

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

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
	return s.spend(ctx, "spend", spends, len(spends))
}

// SpendSplit checks and adds spends[:must] all or nothing, then, only if
// they were added, spends[must:] the same way, in the same one script on
// Redis (state.SplitSpender): a caller's limits and a route's budget in one
// round trip. The two groups must not share a counter. Redis away, it is
// served locally as Spend is, group by group.
func (s *Store) SpendSplit(ctx context.Context, spends []state.Spend, must int) (int, error) {
	return s.spend(ctx, "spend split", spends, min(max(must, 0), len(spends)))
}

// spend is Spend and SpendSplit.
func (s *Store) spend(ctx context.Context, what string, spends []state.Spend, must int) (int, error) {
	if err := validate(spends); err != nil {
		return -1, fmt.Errorf("redisstore: %s: %w", what, err)
	}
	if len(spends) == 0 {
		return -1, nil
	}
	if s.up.Load() {
		if err := ctx.Err(); err != nil {
			return -1, fmt.Errorf("redisstore: %s: %w", what, err)
		}
		if s.takeShares(ctx, spends) {
			// Every checked window was covered by a share this
			// instance holds: no round trip (shares.go).
			return -1, nil
		}
		// What shares cover is taken here and sent as 0 (shares.go).
		send, taken := s.takeCovered(spends)
		if send == nil {
			send = spends
		}
		asks := s.shareAsks(send)
		var failed int
		var grants []int64
		var err error
		pre, seq, last := s.later.take()
		if seq != 0 {
			last = seq - 1 // the batch taken here goes first in this call
		}
		// The tallies of the windows checked here go first in this
		// call too, straight from the shares: queued, the queue's
		// applier could take them first and have them land after this
		// check, which would then not count them (a flaky
		// TestTallyOfAWindowWithoutALimit under load).
		pre = append(pre, s.owedOf(spends)...)
		// A request in flight given back, or tokens settled lower, by a
		// batch still on its way may be what lets this spend pass: near
		// a limit, wait for it (see later.go).
		s.later.waitGivenBack(last, spends, s.nearLimit)
		if len(pre) > 0 {
			// The adds queued meanwhile ride along: applied first, in
			// the same round trip, so that this check counts them.
			pre = mergeAdds(pre)
			var added bool
			failed, grants, added, err = s.runSpendAfter(ctx, pre, send, must, asks)
			if added {
				s.mirror(ctx, pre)
			} else if aerr := s.addLocal(ctx, pre); aerr != nil {
				s.logger.Warn("redisstore: adds queued after answers were not applied", "count", len(pre), "error", errorText(aerr))
			}
			s.later.applied(seq)
		} else {
			failed, grants, err = s.runSpend(ctx, send, must, asks)
		}
		if err == nil {
			added := addedBy(failed, must, len(spends))
			if taken != nil {
				s.putBack(spends, taken, added)
			}
			// Mirror what was added into Local, so that an instance
			// restarted during an outage still holds its own counts
			// (of the windows the view holds: view.go): what was sent,
			// and the shares granted with it. What shares covered was
			// mirrored with their grant.
			if added > 0 {
				s.mirrorGranted(ctx, send[:added], grants)
				s.granted(send[:added], grants)
			}
			return failed, nil
		}
		if taken != nil {
			s.putBack(spends, taken, 0)
		}
		if callerGone(ctx) {
			return -1, fmt.Errorf("redisstore: %s: %w", what, ctx.Err())
		}
		s.failed(err)
	}
	if must > 0 {
		failed, err := s.localSpend(ctx, spends[:must])
		if err != nil || failed >= 0 || must == len(spends) {
			return failed, err
		}
	}
	failed, err := s.localSpend(ctx, spends[must:])
	if failed >= 0 {
		failed += must
	}
	return failed, err
}

// nearLimit reports whether a checked spend would not pass by the view
// of the shared counts (view.go).
func (s *Store) nearLimit(spends []state.Spend) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock.Now()
	for _, sp := range spends {
		if sp.Limit <= 0 || sp.Amount <= 0 {
			continue
		}
		if seen, own := s.windowLocked(sp, now); seen+own+sp.Amount > sp.Limit {
			return true
		}
	}
	return false
}

// addedBy is how many spends, the first ones, a check-and-add of n spends
// whose first must go all or nothing added, when it reports failed.
func addedBy(failed, must, n int) int {
	switch {
	case failed < 0:
		return n
	case failed < must:
		return 0
	default:
		return must
	}
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
		_, _, err := s.runSpend(ctx, spends, -1, nil)
		if err == nil {
			s.mirror(ctx, spends)
			return nil
		}
		if callerGone(ctx) {
			return fmt.Errorf("redisstore: add: %w", ctx.Err())
		}
		s.failed(err)
	}
	if err := s.addLocal(ctx, spends); err != nil {
		return fmt.Errorf("redisstore: add: %w: %w", state.ErrUnavailable, err)
	}
	return nil
}

// addLocal adds spends to Local, pending for Redis's return.
func (s *Store) addLocal(ctx context.Context, spends []state.Spend) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.local.Add(ctx, spends); err != nil {
		return err
	}
	s.pendLocked(spends, s.clock.Now())
	return nil
}

// runSpend runs spendScript within OpTimeout and learns the counts and the
// number of instances it returns. must is the script's ARGV[1]: the spends
// checked all or nothing first, or -1 to add without checking. asks, nil
// or one per spend, are the shares asked for; grants, one per spend, what
// was granted besides each amount (shares.go).
func (s *Store) runSpend(ctx context.Context, spends []state.Spend, must int, asks []int64) (failed int, grants []int64, err error) {
	keys, args := s.spendArgs(spends, must, asks)
	octx, cancel := s.opContext(ctx)
	defer cancel()
	reply, err := spendScript.Run(octx, s.client, keys, args...).Slice()
	if err != nil {
		return -1, nil, err
	}
	return s.learnSpend(spends, reply)
}

// runSpendAfter is runSpend with the adds pre, queued by AddLater, applied
// first in the same round trip: one pipeline of two scripts. added reports
// whether pre was applied, even when the spend failed.
func (s *Store) runSpendAfter(ctx context.Context, pre, spends []state.Spend, must int, asks []int64) (failed int, grants []int64, added bool, err error) {
	pkeys, pargs := s.spendArgs(pre, -1, nil)
	keys, args := s.spendArgs(spends, must, asks)
	octx, cancel := s.opContext(ctx)
	defer cancel()
	var addCmd, spendCmd *redis.Cmd
	for try := 0; ; try++ {
		pipe := s.client.Pipeline()
		addCmd = pipe.EvalSha(octx, spendScript.Hash(), pkeys, pargs...)
		spendCmd = pipe.EvalSha(octx, spendScript.Hash(), keys, args...)
		_, err = pipe.Exec(octx)
		if try == 0 && err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
			// A server that does not know the script yet (restarted,
			// failed over): load it and send again.
			if err = spendScript.Load(octx, s.client).Err(); err == nil {
				continue
			}
		}
		break
	}
	if reply, aerr := addCmd.Slice(); aerr == nil {
		added = true
		_, _, _ = s.learnSpend(pre, reply)
	}
	reply, err := spendCmd.Slice()
	if err != nil {
		return -1, nil, added, err
	}
	failed, grants, err = s.learnSpend(spends, reply)
	return failed, grants, added, err
}

// spendArgs builds spendScript's keys and arguments; asks, nil or one per
// spend, are the shares asked for.
func (s *Store) spendArgs(spends []state.Spend, must int, asks []int64) ([]string, []any) {
	keys := make([]string, 1, 1+3*len(spends))
	keys[0] = s.aliveKey()
	nums := make([]byte, 0, 32*len(spends))
	for i := range spends {
		sp := &spends[i]
		keys = append(keys, s.counterKey(sp.Key, sp.Slot), s.counterKey(sp.Key, sp.Slot-1), s.sumKey(sp.Key))
		if i > 0 {
			nums = append(nums, ' ')
		}
		nums = strconv.AppendInt(nums, int64(sp.Slots), 10)
		nums = append(nums, ' ')
		nums = strconv.AppendInt(nums, sp.Limit, 10)
		nums = append(nums, ' ')
		nums = strconv.AppendInt(nums, sp.Amount, 10)
		nums = append(nums, ' ')
		nums = strconv.AppendInt(nums, max(sp.TTL.Milliseconds(), 1), 10)
		nums = append(nums, ' ')
		nums = strconv.AppendInt(nums, sp.Slot, 10)
		var ask int64
		if asks != nil {
			ask = asks[i]
		}
		nums = append(nums, ' ')
		nums = strconv.AppendInt(nums, ask, 10)
	}
	return keys, []any{must, len(spends), nums}
}

// learnSpend decodes spendScript's reply to spends and learns the counts
// and the number of instances it holds; grants are the shares granted.
func (s *Store) learnSpend(spends []state.Spend, reply []any) (int, []int64, error) {
	failed, alive, vals, grants, err := spendReply(reply)
	if err != nil {
		return -1, nil, err
	}
	s.mu.Lock()
	s.setInstancesLocked(alive)
	s.learnLocked(spends, vals, s.clock.Now())
	s.mu.Unlock()
	return int(failed), grants, nil
}

// spendReply decodes spendScript's reply.
func spendReply(reply []any) (failed, alive int64, vals, grants []int64, err error) {
	if len(reply) != 4 {
		return 0, 0, nil, nil, fmt.Errorf("spend script: a reply of %d values, want 4", len(reply))
	}
	failed, ok1 := reply[0].(int64)
	alive, ok2 := reply[1].(int64)
	counts, ok3 := reply[2].(string)
	gs, ok4 := reply[3].(string)
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return 0, 0, nil, nil, fmt.Errorf("spend script: an unexpected reply %T, %T, %T, %T", reply[0], reply[1], reply[2], reply[3])
	}
	if vals, err = parseCounts(counts); err != nil {
		return 0, 0, nil, nil, fmt.Errorf("spend script: %w", err)
	}
	if grants, err = parseCounts(gs); err != nil {
		return 0, 0, nil, nil, fmt.Errorf("spend script: %w", err)
	}
	return failed, alive, vals, grants, nil
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
		// What this instance set aside is not spent, and what it
		// tallied is (shares.go).
		left, owed := s.heldIn(sp)
		out[i] += owed - left
	}
	s.mu.Lock()
	s.learnSlotsLocked(spends, counts, s.clock.Now())
	s.mu.Unlock()
	return out, nil
}
