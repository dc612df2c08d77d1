package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tollfree/tollfree"
	"github.com/tollfree/tollfree/calllog"
	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/internal/watch"
	"github.com/tollfree/tollfree/secret"
	"github.com/tollfree/tollfree/state"
	"github.com/tollfree/tollfree/state/memstore"
)

// live is the gateway `tollfree serve` answers with, reloadable (issue 17):
// each request is served, to its end, by the gateway current when it
// arrived; a reload builds a new gateway from the new config on the same
// state store and call log (so rests, pauses and counts carry over), makes
// it current, and closes the old one once its requests in flight are over.
// A config that does not load is refused and the current one kept.
type live struct {
	path    string // the config file; "" for tollfree.yaml or the presets
	listen  string // -listen, which overrides every config's listen
	outs    []io.Writer
	logger  *slog.Logger
	store   state.Store
	log     *calllog.Writer // nil when call_log is off
	health  func() map[string]string
	secrets []string // every secret value of every config loaded, scrubbed from the outputs
	lastSum string   // the config file's contents as last read by a reload, hashed (watch.File)
	// discover is how often each gateway reads the providers' model lists
	// (-discover; 0 reads none).
	discover time.Duration
	// clock drives the gateways; nil is the real one (tests set a fake).
	clock clock.Clock

	mu      sync.Mutex // guards cur and the generations' in-flight counts
	cur     *generation
	closing sync.WaitGroup // the retired gateways being closed
}

// What asked for a reload, as the log says.
const (
	triggerHUP  = "SIGHUP"
	triggerEdit = "file changed"
)

// generation is one gateway and its requests in flight.
type generation struct {
	gw      *tollfree.Gateway
	h       http.Handler
	n       int  // requests in flight, under live.mu
	retired bool // no longer current: closed once n is 0
}

// shared is what every generation uses: the state store and the call log,
// opened once for the process.
type shared struct {
	store state.Store
	log   *calllog.Writer
	own   *memstore.Store // the local store opened here, when no Redis
}

// openShared opens the local state store (unless st, the Redis one, is
// given) and the call log the plan names, as tollfree.New would.
func openShared(plan *config.Plan, st state.Store, logger *slog.Logger) (*shared, error) {
	sh := &shared{store: st}
	if st == nil {
		dir := ""
		if plan.DataDir != "" {
			dir = filepath.Join(plan.DataDir, "state")
		}
		ms, err := memstore.Open(memstore.Options{Dir: dir, Logger: logger})
		if err != nil {
			return nil, fmt.Errorf("opening local state: %w", err)
		}
		sh.own, sh.store = ms, ms
	}
	if p := plan.CallLog; p != "off" {
		if p == "" {
			p = filepath.Join(plan.DataDir, "calls.jsonl")
		}
		w, err := calllog.Open(p, logger)
		if err != nil {
			sh.close()
			return nil, fmt.Errorf("opening the call log: %w", err)
		}
		sh.log = w
	}
	return sh, nil
}

// close flushes the call log and the local state to disk.
func (sh *shared) close() error {
	var errs []error
	if sh.log != nil {
		errs = append(errs, sh.log.Close())
	}
	if sh.own != nil {
		errs = append(errs, sh.own.Close())
	}
	return errors.Join(errs...)
}

// build makes a gateway of plan on the shared store and call log.
func (l *live) build(plan *config.Plan) (*generation, error) {
	g := &generation{}
	o := tollfree.Options{Plan: plan, Store: l.store, Logger: l.logger, Health: l.health, Metrics: newMetrics, DiscoverEvery: l.discover, Clock: l.clock,
		Replan: func(p *config.Plan) { l.replan(g, p) }}
	if l.log != nil {
		o.CallLog, o.KeepCallLog = l.log, true
	}
	gw, err := tollfree.New(o)
	if err != nil {
		return nil, err
	}
	g.gw, g.h = gw, gw.Handler()
	return g, nil
}

// replan serves p, the plan of from with its route patterns expanded
// again from the providers' model lists, from now on: as a reload, but
// only while from is current (a reload since has the last word).
func (l *live) replan(from *generation, p *config.Plan) {
	if !l.isCurrent(from) {
		return
	}
	g, err := l.build(p)
	if err != nil {
		l.logger.Error("route patterns expanded again, but not served: " + err.Error() + "; still serving the previous routes")
		return
	}
	l.mu.Lock()
	current := l.cur == from
	if current {
		l.swapLocked(g)
	}
	l.mu.Unlock()
	if !current {
		g.gw.Close() // never served; closed outside l.mu, which its own discovery may wait for
	}
}

func (l *live) isCurrent(g *generation) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.cur == g
}

// ServeHTTP serves r with the current gateway, which stays open until r is
// answered, a reload or not.
func (l *live) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g := l.acquire()
	defer l.release(g)
	g.h.ServeHTTP(w, r)
}

func (l *live) acquire() *generation {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cur.n++
	return l.cur
}

func (l *live) release(g *generation) {
	l.mu.Lock()
	defer l.mu.Unlock()
	g.n--
	if g.retired && g.n == 0 {
		l.retire(g)
	}
}

// retire closes g in the background; close waits for it. Under l.mu, with
// g's requests over.
func (l *live) retire(g *generation) {
	l.closing.Add(1)
	go func() {
		defer l.closing.Done()
		if err := g.gw.Close(); err != nil {
			l.logger.Warn("closing the previous config's gateway", "err", err)
		}
	}()
}

// swap makes g current and retires the one before.
func (l *live) swap(g *generation) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.swapLocked(g)
}

func (l *live) swapLocked(g *generation) {
	old := l.cur
	l.cur = g
	if old == nil {
		return
	}
	old.retired = true
	if old.n == 0 {
		l.retire(old)
	}
}

// plan is the current config.
func (l *live) plan() *config.Plan {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.cur.gw.Plan()
}

// drain tells the current gateway that the process is shutting down:
// its /readyz answers 503 while the requests in flight finish.
func (l *live) drain() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cur.gw.Drain()
}

// close retires the current gateway and waits until every gateway is
// closed (their attempts wound down). Call it once the server is shut down.
func (l *live) close() {
	l.mu.Lock()
	if g := l.cur; g != nil && !g.retired {
		g.retired = true
		if g.n == 0 {
			l.retire(g)
		}
	}
	l.mu.Unlock()
	l.closing.Wait()
}

// reload reads the config again and, when it loads, serves it from now on;
// otherwise it logs why, with the lines as `tollfree check` prints them,
// and keeps serving the current one.
func (l *live) reload(trigger string) {
	sum := watch.File(configFile(l.path))()
	if trigger == triggerEdit && sum != "" && sum == l.lastSum {
		return // a SIGHUP read this edit already
	}
	l.lastSum = sum
	plan, err := l.load()
	if err != nil {
		l.logger.Error("config reload refused: "+err.Error()+"; still serving the previous config", "trigger", trigger)
		return
	}
	g, err := l.build(plan)
	if err != nil {
		l.logger.Error("config reload refused: "+err.Error()+"; still serving the previous config", "trigger", trigger)
		return
	}
	l.swap(g)
	plan = g.gw.Plan() // its route patterns expanded from the lists the store keeps
	enabled := 0
	var fixes []string
	for _, r := range plan.Readiness() {
		enabled += r.Enabled
		fixes = append(fixes, r.Fixes...)
	}
	msg := fmt.Sprintf("config reloaded: %d chains, %d routes enabled", len(plan.ChainOrder), enabled)
	if enabled == 0 {
		// Served all the same (the file loaded), but every request now
		// gets a fallback or a 503 and /readyz says so: an operator
		// reading INFO lines would miss it (issue 32).
		fix := strings.Join(slices.Compact(fixes), "; ")
		if fix == "" {
			fix = "give each chain a route"
		}
		l.logger.Error(msg+": no route can answer, every request gets its chain's fallback and /readyz answers 503", "trigger", trigger, "fix", fix)
		return
	}
	l.logger.Info(msg, "trigger", trigger)
}

// load reads and checks the config as serve did at start, and keeps what
// only a restart changes (the listener, the state store, the call log)
// as it was, with a warning naming what was left.
func (l *live) load() (*config.Plan, error) {
	plan, err := readPlan(l.path)
	if err != nil {
		return nil, err
	}
	if err := plan.Serves(configName(l.path)); err != nil {
		return nil, err
	}
	for _, v := range plan.SecretValues() {
		if !slices.Contains(l.secrets, v) {
			l.secrets = append(l.secrets, v) // an old key stays scrubbed too
		}
	}
	set := secret.New(l.secrets...)
	for _, w := range l.outs {
		if sw, ok := w.(*secret.Writer); ok {
			sw.Use(set)
		}
	}
	if l.listen != "" {
		plan.ListenOn(l.listen)
	}
	if kept := keepFixed(l.plan(), plan); len(kept) > 0 {
		l.logger.Warn("config reload: these settings take a restart; still using the previous ones: " + strings.Join(kept, ", "))
	}
	return plan, nil
}

// keepFixed sets on next what only a restart changes, from cur, and names
// the settings next had changed.
func keepFixed(cur, next *config.Plan) []string {
	var kept []string
	keep := func(name string, changed bool) {
		if changed {
			kept = append(kept, name)
		}
	}
	keep("listen", cur.Listen != next.Listen)
	keep("data_dir", cur.DataDir != next.DataDir)
	keep("redis", cur.Redis != next.Redis)
	keep("call_log", cur.CallLog != next.CallLog)
	c, n := cur.Server, next.Server
	keep("server.max_connections", c.MaxConnections != n.MaxConnections)
	keep("server.max_connections_per_address", c.MaxConnectionsPerAddress != n.MaxConnectionsPerAddress)
	keep("server.read_header_timeout", c.ReadHeaderTimeout != n.ReadHeaderTimeout)
	keep("server.read_timeout", c.ReadTimeout != n.ReadTimeout)
	keep("server.idle_timeout", c.IdleTimeout != n.IdleTimeout)
	next.Listen, next.DataDir, next.Redis, next.CallLog = cur.Listen, cur.DataDir, cur.Redis, cur.CallLog
	next.Server.MaxConnections, next.Server.ReadHeaderTimeout = c.MaxConnections, c.ReadHeaderTimeout
	next.Server.MaxConnectionsPerAddress = c.MaxConnectionsPerAddress
	next.Server.ReadTimeout, next.Server.IdleTimeout = c.ReadTimeout, c.IdleTimeout
	return kept
}
