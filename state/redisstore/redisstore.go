// Package redisstore owns the shared state.Store: budget counters, rests and
// pauses kept in Redis (or Valkey) so that every instance of tollfree counts
// against the same caps and honours the same pauses. It is the only package
// that imports the Redis client.
//
// Spend is one Lua script that sums every window, checks every limit and only
// then adds, atomically on the server, so two instances never together pass
// a cap. SpendSplit is the same script checking two groups, the second only
// once the first was added (a caller's limits and a route's budget in one
// round trip). A window of many slots (a rolling day has 25) is read as
// three keys: its current slot, the one before, and the kept sum of the
// older ones (scripts.go). AddLater queues the adds made after an answer;
// they are applied in batches off the caller's path, or with the next
// spend in the same round trip, and at Close; a spend near its limit waits
// for a give-back already on its way (later.go). Far from its limit, a
// window this instance spends on again and again is spent from a share
// the script grants it, in memory, without a round trip (shares.go).
// Rests are keys that expire with the rest; a pause set by hand has no
// expiry. Every change to a rest is published on the channel {ns}:events, and
// each instance keeps a local copy of the rests current from that channel
// (and from a full read at most every second, and at once after a
// reconnect), so reading rests on the request path costs no round trip.
//
// # Keys and Cluster
//
// Every key carries one hash tag per deployment, the namespace: counters are
// {ns}:c:<key>:<slot>, the sums of their older slots {ns}:o:<key>, rests
// {ns}:rest:<key>, the index of rests {ns}:rests.
// On a Redis Cluster every key of a deployment therefore lives in one slot,
// on one shard. That is what lets one script check a route's counter and its
// provider's counter together; the cost is that a deployment's state cannot
// be spread over shards. A deployment's state is small (a few counters per
// route), so one shard carries it easily; a hash tag per route would spread
// it but would split a route's and its provider's spends into two scripts
// that could no longer be all-or-nothing.
//
// # When Redis is away
//
// Redis trouble is not an outage. Each call waits at most OpTimeout for
// Redis, or until the caller's deadline if that comes first; when Redis does
// not answer in time the call is served locally instead, Health reports it,
// and later calls go straight to local state until a background probe
// (every second) finds Redis again.
//
// While disconnected, an instance spends on each window only its share of
// what was left: (limit − the shared count it last saw) divided by the
// number of instances alive (a heartbeat key, alive.go), so that together
// they do not pass the cap (view.go states the bound). When Redis returns
// it writes its view of every counter back, before the store switches
// back: a Redis that kept its data gets the outage's spends added, and one
// that came back empty is re-seeded with the larger of what it holds and
// what the instance knew. The rests set locally are pushed too. A Spend
// whose reply timed out may also have been applied by Redis; it is then
// counted twice, which errs on the safe side.
//
// Local also mirrors what this instance added to Redis's counts (a share
// when it is granted, not the spends it covers: see mirror), on the
// slots the view of the shared counters holds (view.go), so that an
// instance restarted during an outage still holds its own recent counts of
// the windows it knew; a slot the view drops is taken out of Local too, so
// that a million visitors a day do not cost local mode's memory again.
package redisstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/state"
	"github.com/tollfree/tollfree/state/memstore"
)

// Defaults for Options.
const (
	DefaultURL       = "redis://127.0.0.1:6379/0"
	DefaultNamespace = "tollfree"
	DefaultOpTimeout = 100 * time.Millisecond
)

// refreshEvery is how often the rests are read in full from Redis while
// connected, and how often Redis is probed while not.
const refreshEvery = time.Second

// Options configures a Store. The zero value connects to a local Redis.
type Options struct {
	// URL locates Redis: redis://[user:password@]host:port/db, or rediss://
	// for TLS. Default DefaultURL. It is never logged.
	URL string
	// Namespace prefixes every key and is the hash tag shared by all of them,
	// so deployments can share a Redis. It must not contain '{' or '}'.
	// Default DefaultNamespace.
	Namespace string
	// Local serves calls while Redis is unreachable. Default: a memory-only
	// memstore, closed by Close. A Local given here is not closed by Close.
	Local state.Store
	// OpTimeout bounds each call's wait for Redis, dialling included; past it
	// the call is served by Local. Default DefaultOpTimeout (100ms).
	OpTimeout time.Duration
	// Clock tells the time for rest expiry and paces the probe and refresh.
	// Default clock.Real.
	Clock clock.Clock
	// Logger receives one line per change of connection state. Default
	// slog.Default().
	Logger *slog.Logger

	// hook, set by tests only, is called with "subscribed", "event" or
	// "refreshed" after the rest cache changed that way, with "view"
	// after a connected tick read the counters, with "batch" before a
	// batch of queued adds is applied, and with "waiting" when a spend
	// waits for one (later.go).
	hook func(what string)
}

// Health is the state of a Store's connection to Redis.
type Health struct {
	// Connected is true while calls go to Redis, false while they go to
	// Local.
	Connected bool
	// Since is when Connected last changed.
	Since time.Time
	// LastError is the last Redis error seen, empty if none. It never holds
	// the URL or a password.
	LastError string
	// Instances is how many instances (this one included) had a heartbeat
	// in Redis when it was last reached: while Redis is away, each spends
	// only its share, what was left divided by Instances. 1 until Redis
	// was reached.
	Instances int
}

// Store is a state.Store shared through Redis. It is safe for concurrent
// use. Close it to stop its background goroutines.
type Store struct {
	client   *redis.Client
	tag      string // "{ns}"
	events   string // pub/sub channel
	local    state.Store
	ownLocal *memstore.Store // closed by Close; nil when Local was given
	timeout  time.Duration
	clock    clock.Clock
	logger   *slog.Logger
	hook     func(string)
	id       string // this instance's name in the heartbeat set

	up atomic.Bool // mirrors health.Connected for the request path

	mu        sync.Mutex // guards health, known, view, viewSeq, instances, epoch, clears, cache, gen
	health    Health
	known     bool // health was reported at least once
	view      map[slotKey]*viewSlot
	viewSeq   uint64
	instances int    // alive when Redis was last reached, at least 1
	epoch     string // Redis's epoch key when last reached (see redisLost)
	clears    []clearOp
	cache     map[string]state.Rest
	gen       uint64 // bumped at every change to cache

	psMu sync.Mutex    // guards ps
	ps   *redis.PubSub // the current subscription, closed by Close

	later  laterQueue // adds applied off the caller's path (later.go)
	shares shares     // the windows this instance holds a share of (shares.go)

	refresh   chan struct{} // asks the maintenance loop for a refresh now
	cancel    context.CancelFunc
	wg        sync.WaitGroup
	closeOnce sync.Once
}

var (
	_ state.Store        = (*Store)(nil)
	_ state.SplitSpender = (*Store)(nil)
	_ state.Deferrer     = (*Store)(nil)
)

// Open returns a Store for o. It fails only on bad options: when Redis does
// not answer, the Store starts on Local and connects later.
func Open(ctx context.Context, o Options) (*Store, error) {
	if o.URL == "" {
		o.URL = DefaultURL
	}
	if o.Namespace == "" {
		o.Namespace = DefaultNamespace
	}
	if strings.ContainsAny(o.Namespace, "{}") {
		return nil, fmt.Errorf("redisstore: open: namespace %q contains '{' or '}'", o.Namespace)
	}
	if o.OpTimeout <= 0 {
		o.OpTimeout = DefaultOpTimeout
	}
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	opt, err := redis.ParseURL(o.URL)
	if err != nil {
		// The parse error may quote the URL, and with it a password.
		return nil, errors.New("redisstore: open: the Redis URL does not parse (not shown: it may hold a password)")
	}
	opt.DialTimeout = o.OpTimeout
	opt.ReadTimeout = o.OpTimeout
	opt.WriteTimeout = o.OpTimeout
	opt.PoolTimeout = o.OpTimeout
	opt.ContextTimeoutEnabled = true
	opt.MaxRetries = -1 // a retry would break the bounded wait
	opt.DialerRetries = 1
	sizeBuffers(opt)

	tag := "{" + o.Namespace + "}"
	s := &Store{
		client:    redis.NewClient(opt),
		tag:       tag,
		events:    tag + ":events",
		local:     o.Local,
		timeout:   o.OpTimeout,
		clock:     o.Clock,
		logger:    o.Logger,
		hook:      o.hook,
		id:        newInstanceID(),
		health:    Health{Since: o.Clock.Now(), Instances: 1},
		view:      make(map[slotKey]*viewSlot),
		instances: 1,
		cache:     make(map[string]state.Rest),
		refresh:   make(chan struct{}, 1),
	}
	s.later.init()
	if o.hook != nil {
		s.later.onWait = func() { o.hook("waiting") }
	}
	s.client.AddHook(roundTrips{})
	if s.local == nil {
		m, err := memstore.Open(memstore.Options{Clock: o.Clock, Logger: o.Logger})
		if err != nil {
			_ = s.client.Close()
			return nil, fmt.Errorf("redisstore: open local store: %w", err)
		}
		s.local, s.ownLocal = m, m
	}
	// The first connection attempt runs before Open returns, so a Store
	// over a healthy Redis starts connected with its rests loaded.
	s.reconnect(ctx)
	loopCtx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	s.wg.Go(func() { s.maintainLoop(loopCtx) })
	s.wg.Go(func() { s.subscribeLoop(loopCtx) })
	s.wg.Go(func() { s.flushLoop(loopCtx) })
	return s, nil
}

// Close stops the background goroutines, applies the adds still queued
// (AddLater), and closes the Redis client, and Local if Open made it.
// Close is idempotent.
func (s *Store) Close() error {
	var err error
	s.closeOnce.Do(func() {
		s.cancel()
		s.psMu.Lock()
		if s.ps != nil {
			_ = s.ps.Close() // ends a ReceiveTimeout under way
		}
		s.psMu.Unlock()
		s.wg.Wait()
		s.sweepShares(true) // given back before the last adds are applied
		s.closeLater()
		s.leave()
		if cerr := s.client.Close(); cerr != nil {
			err = fmt.Errorf("redisstore: close: %w", cerr)
		}
		if s.ownLocal != nil {
			err = errors.Join(err, s.ownLocal.Close())
		}
	})
	return err
}

// Health reports whether calls currently go to Redis.
func (s *Store) Health() Health {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.health
}

func (s *Store) counterKey(key string, slot int64) string {
	return s.tag + ":c:" + key + ":" + strconv.FormatInt(slot, 10)
}

// sumKey names the sum of a window's older slots (see spendScript).
func (s *Store) sumKey(key string) string { return s.tag + ":o:" + key }

func (s *Store) restKey(key string) string { return s.tag + ":rest:" + key }

func (s *Store) restIndex() string { return s.tag + ":rests" }

// opContext bounds one call's wait for Redis.
func (s *Store) opContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.timeout)
}

// failed reports a Redis failure seen by a call; it switches the store to
// Local and logs once per change.
func (s *Store) failed(err error) {
	msg := errorText(err)
	s.mu.Lock()
	s.health.LastError = msg
	changed := s.health.Connected || !s.known
	if changed {
		s.health.Connected = false
		s.health.Since = s.clock.Now()
		s.known = true
		s.up.Store(false)
	}
	s.mu.Unlock()
	if changed {
		s.logger.Warn("redisstore: Redis unreachable; serving from local state until it returns", "error", msg)
		// What this instance held is given back to Local, pending: its
		// outage share counts them as its own (view.go).
		s.sweepShares(true)
	}
}

// callerGone reports whether a call that failed on Redis failed by its
// caller's doing: the caller cancelled it (it went away), which says nothing
// about Redis. A caller's deadline that passed while Redis was silent is
// Redis being slow, as OpTimeout is, and counts as a Redis failure: the
// router bounds store calls to 250ms, so with an OpTimeout longer than that
// a frozen Redis would otherwise never be left for Local, and every request
// would wait on it. (A deadline already passed before the call is returned
// before Redis is asked.)
func callerGone(ctx context.Context) bool {
	return errors.Is(ctx.Err(), context.Canceled)
}

// errorText is err's text, cut short. Redis client errors name the address
// and the failure, never the password.
func errorText(err error) string {
	msg := err.Error()
	if len(msg) > 200 {
		msg = msg[:200] + "..."
	}
	return msg
}

// maintainLoop refreshes the rests and the view of the counters and sends
// a heartbeat every refreshEvery while connected, or probes Redis and
// reconciles while not. It also refreshes at once when asked (after a
// resubscribe).
func (s *Store) maintainLoop(ctx context.Context) {
	for {
		t := s.clock.NewTimer(refreshEvery)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C():
		case <-s.refresh:
			t.Stop()
		}
		if s.up.Load() {
			s.refreshAll(ctx)
		} else {
			s.reconnect(ctx)
		}
	}
}

// refreshAll runs the connected tick: rests, heartbeat, view. A failure
// switches to Local and skips the rest.
func (s *Store) refreshAll(ctx context.Context) {
	s.sweepShares(false)
	s.refreshRests(ctx)
	if !s.up.Load() {
		return
	}
	if err := s.heartbeat(ctx); err != nil {
		if ctx.Err() == nil {
			s.failed(err)
		}
		return
	}
	if s.refreshView(ctx) {
		if _, err := s.pushCounts(ctx, false); err != nil && ctx.Err() == nil {
			s.failed(err)
		}
	}
	if s.hook != nil && s.up.Load() {
		s.hook("view")
	}
}

// requestRefresh asks the maintenance loop to read the rests now.
func (s *Store) requestRefresh() {
	select {
	case s.refresh <- struct{}{}:
	default:
	}
}

// reconnect probes Redis and, when it answers, sends a heartbeat, pushes
// what was done locally and switches calls back to Redis.
func (s *Store) reconnect(ctx context.Context) {
	pctx, cancel := s.opContext(ctx)
	err := s.client.Ping(pctx).Err()
	cancel()
	if err == nil {
		err = s.heartbeat(ctx)
	}
	if err == nil {
		err = s.reconcile(ctx)
	}
	if err != nil {
		if ctx.Err() == nil {
			s.failed(err)
		}
		return
	}
	s.refreshRests(ctx)
}

// reconcile writes the view of the counters back to Redis (see view.go:
// counts spent locally are added, and a Redis that came back empty is
// seeded again with everything this instance knew), applies the rests
// lifted and set locally, and switches calls back to Redis. The first round
// writes while calls still go to Local; the second writes what was spent
// meanwhile and switches in the same step, so a steady stream of local
// spends cannot keep the store on Local. If the second round fails, the
// caller reports the failure, which switches back to Local with the
// unpushed counts kept.
func (s *Store) reconcile(ctx context.Context) error {
	lost, epoch, err := s.redisLost(ctx)
	if err != nil {
		return err
	}
	pushed := 0
	for round := range 2 {
		s.mu.Lock()
		clears := s.clears
		s.clears = nil
		changed := false
		if round == 1 {
			changed = !s.health.Connected || !s.known
			s.health.Connected, s.known = true, true
			if changed {
				s.health.Since = s.clock.Now()
			}
			s.up.Store(true)
		}
		s.mu.Unlock()
		if changed {
			s.logger.Info("redisstore: Redis reachable; serving from Redis", "reconciled", pushed)
		}
		n, err := s.pushCounts(ctx, lost && round == 0)
		pushed += n
		if err != nil {
			s.mu.Lock()
			s.clears = append(clears, s.clears...) // replayed next time
			s.mu.Unlock()
			return err
		}
		if round == 0 {
			s.mu.Lock()
			s.epoch = epoch
			s.mu.Unlock()
		}
		n, err = s.pushRests(ctx, clears)
		pushed += n
		if err != nil {
			return err
		}
	}
	return nil
}

// Buffers of a connection to Redis. The store's commands are scripts with
// a few keys and short arguments, and their replies are a few integers or
// one status: go-redis's defaults (32 KiB each way per connection, and
// 128 KiB each way on each of the ten connections of its pipeline pool)
// held 3.9 MB of a 7 MB live heap at 64 connections in bench/run.sh
// (issue 18, item 7). At 8 KiB each way, the 20-odd connections such a
// load opens still held 350 KB; at 4 KiB (net/http's own size) half
// that, and the peak resident set measured 0.37 MiB lower on average (three
// alternating rounds of wrk -c64 in Redis mode). A reply larger than a
// buffer is still read whole, in more than one read.
const (
	connBuffer     = 4 << 10
	pipelineBuffer = 16 << 10
	pipelineConns  = 4
)

// sizeBuffers sets the buffers and the pipeline pool the Redis URL left
// at their defaults.
func sizeBuffers(opt *redis.Options) {
	if opt.ReadBufferSize == 0 {
		opt.ReadBufferSize = connBuffer
	}
	if opt.WriteBufferSize == 0 {
		opt.WriteBufferSize = connBuffer
	}
	if opt.PipelineReadBufferSize == 0 {
		opt.PipelineReadBufferSize = pipelineBuffer
	}
	if opt.PipelineWriteBufferSize == 0 {
		opt.PipelineWriteBufferSize = pipelineBuffer
	}
	if opt.PipelinePoolSize == 0 {
		opt.PipelinePoolSize = pipelineConns
	}
}
