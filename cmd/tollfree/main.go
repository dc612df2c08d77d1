// Command tollfree runs the gateway and its tools. It only wires packages
// together; the logic lives in them.
//
//	tollfree serve [-config] [tollfree.yaml]   run the gateway (SIGHUP or an edit reloads the config)
//	tollfree check [-config] [tollfree.yaml]   validate a config and print its chains
//	tollfree presets                           print the provider catalog and when each was checked
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/tollfree/tollfree"
	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/discover"
	"github.com/tollfree/tollfree/httpapi"
	"github.com/tollfree/tollfree/internal/heapfloor"
	"github.com/tollfree/tollfree/internal/watch"
	"github.com/tollfree/tollfree/secret"
	"github.com/tollfree/tollfree/status"
	"github.com/tollfree/tollfree/status/metrics"
)

const usage = `tollfree keeps an AI feature answering on free LLM tiers.

Usage:
  tollfree serve [-listen ADDR] [-discover D] [FILE]  run the gateway (reads model lists every D, default 24h)
  tollfree check [FILE]                          validate a config, print chains, routes and limits
  tollfree presets [-read [FILE]]                the provider catalog: status, source page and date, models;
                                                 -read: each enabled provider's model list now (gone routes, free models unused)
  tollfree demo  [-duration D] [-speed N]        emulated free providers + the gateway, with sample traffic
  tollfree demo -assistant [-listen ADDR]        a demo site with the chat widget and its assistant, keyless
  tollfree doctor [-config FILE] [-dry-run]      probe every route with a tiny request (-thinking=false, -max-tokens N)
  tollfree sim   [-days N] [-trace FILE] [-chain capped|seed000]  simulate a day of traffic: tollfree vs a naive chain
  tollfree log stats [-config FILE] [-file F]    per route and day: calls, failover, outcomes, tokens (-tz ZONE, -json)
  tollfree emulator [-listen ADDR]               serve the emulated free tiers alone (an upstream needing no keys)
  tollfree health [-wait D] [URL]                exit 0 when URL (default http://127.0.0.1:8080/readyz) answers 200
  tollfree version                               print the version

FILE may also be given as -config FILE. Without one, tollfree.yaml is read
when it exists; otherwise the built-in
free-tier presets are used with the provider keys found in the environment
(GROQ_API_KEY, GEMINI_API_KEY, CEREBRAS_API_KEY, OPENROUTER_API_KEY,
NVIDIA_API_KEY, MISTRAL_API_KEY, CLOUDFLARE_API_TOKEN...).
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// Whatever a command prints, errors and logs included, goes through
	// writers that scrub the config's secrets once loadPlan has read them.
	stdout, stderr = secret.NewWriter(stdout, nil), secret.NewWriter(stderr, nil)
	var err error
	switch args[0] {
	case "serve":
		err = serve(ctx, args[1:], stdout, stderr)
	case "check":
		err = check(args[1:], stdout)
	case "presets":
		err = presetsCmd(ctx, args[1:], stdout)
	case "demo":
		err = demo(ctx, args[1:], stdout, stderr)
	case "doctor":
		err = doctor(ctx, args[1:], stdout, stderr)
	case "sim":
		err = simulate(ctx, args[1:], stdout, stderr)
	case "log":
		err = logCmd(ctx, args[1:], stdout, stderr)
	case "emulator":
		err = emulate(ctx, args[1:], stdout)
	case "health":
		err = health(ctx, args[1:], stdout)
	case "version", "-version", "--version":
		printVersion(stdout)
		return 0
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "tollfree: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	if err != nil {
		var ue usageError
		if errors.As(err, &ue) {
			return 2
		}
		fmt.Fprintf(stderr, "tollfree %s: %v\n", args[0], err)
		return 1
	}
	return 0
}

type usageError struct{ error }

// newMetrics builds the Prometheus metrics served on /metrics.
func newMetrics(p *config.Plan, s *status.Source) tollfree.Metrics {
	return metrics.New(metrics.Options{Plan: p, Status: s})
}

// loadPlan reads the config named by path, or tollfree.yaml when it exists,
// or builds the default plan from the environment. The outputs that scrub
// secrets (run's) scrub the plan's from then on.
func loadPlan(path string, outs ...io.Writer) (*config.Plan, error) {
	plan, err := readPlan(path)
	if err != nil {
		return nil, err
	}
	for _, w := range outs {
		if sw, ok := w.(*secret.Writer); ok {
			sw.Use(plan.Secrets)
		}
	}
	return plan, nil
}

func readPlan(path string) (*config.Plan, error) {
	if path == "" {
		if _, err := os.Stat("tollfree.yaml"); err == nil {
			path = "tollfree.yaml"
		}
	}
	if path == "" {
		return config.Default(os.Getenv)
	}
	return config.Load(path, os.Getenv)
}

func check(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	path := fs.String("config", "", "config file, also given as the one argument (default tollfree.yaml if present, else built-in presets)")
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	if err := configArg(fs, path); err != nil {
		return err
	}
	plan, err := loadServable(*path, stdout)
	if err != nil {
		return err
	}
	writeCheckTable(stdout, plan)
	fmt.Fprintln(stdout)
	writeReadiness(stdout, plan)
	writeCatalogNotes(stdout, plan)
	return nil
}

// configArg takes the config file from the one argument left after the
// flags (issue 16: `tollfree check FILE` used to check the built-in
// defaults and exit 0).
func configArg(fs *flag.FlagSet, path *string) error {
	switch {
	case fs.NArg() == 0:
		return nil
	case fs.NArg() > 1 || *path != "":
		return fmt.Errorf("give one config file, as the argument or as -config, not %q; flags go before it (tollfree %s -listen :8080 tollfree.yaml)", strings.Join(fs.Args(), " "), fs.Name())
	}
	*path = fs.Arg(0)
	return nil
}

// loadServable is loadPlan, refusing a plan with no chains.
func loadServable(path string, outs ...io.Writer) (*config.Plan, error) {
	plan, err := loadPlan(path, outs...)
	if err != nil {
		return nil, err
	}
	if err := plan.Serves(configName(path)); err != nil {
		return nil, err
	}
	return plan, nil
}

// configFile is the file the config is read from: path, else tollfree.yaml
// when it exists; "" for the built-in presets.
func configFile(path string) string {
	if path != "" {
		return path
	}
	if _, err := os.Stat("tollfree.yaml"); err == nil {
		return "tollfree.yaml"
	}
	return ""
}

// writeReadiness prints a line per chain: how many of its routes are
// enabled, and which variable enables the others; a chain with none is a
// warning, since every request to it gets its fallback.
func writeReadiness(w io.Writer, plan *config.Plan) {
	for _, r := range plan.Readiness() {
		if r.Enabled == 0 {
			fmt.Fprint(w, "warning: ")
		}
		fmt.Fprintln(w, r)
	}
}

func serve(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	path := fs.String("config", "", "config file, also given as the one argument (default tollfree.yaml if present, else built-in presets)")
	listen := fs.String("listen", "", "listen address (overrides the config's listen)")
	discoverEvery := fs.Duration("discover", discover.DefaultEvery, "read each enabled provider's model list at start and this often, and skip a route whose model it no longer lists until it is back; 0 reads none")
	pprofAddr := fs.String("pprof", "", "serve Go's profiler (/debug/pprof/, its mutex profile sampling 1 contention in 100) on this loopback address, e.g. 127.0.0.1:6060; off when empty, and then heap profiling is off too")
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	if *pprofAddr == "" {
		// Nothing can read a heap profile without -pprof, and its
		// sampler's bucket table (a 1.4 MB hash of allocation stacks,
		// filled under load) was the largest thing in serve's resident
		// set after the heap itself (issue 18 item 7).
		runtime.MemProfileRate = 0
	}
	// The collector's minimum heap goal at 6 MB rather than Go's 4:
	// under load a 4 MB goal made it run about 75 times a second, 15 %
	// of serve's CPU, and twice the live heap still decides once it is
	// larger (package heapfloor). GOGC in the environment turns it off.
	defer heapfloor.Start(heapfloor.Default)()
	if *pprofAddr != "" {
		// The mutex profile is empty unless sampled: one contention in
		// 100 is recorded, enough to show which lock requests wait on
		// (memstore's, the HTTP transport's idle pool) at a cost nobody
		// measures.
		runtime.SetMutexProfileFraction(100)
		stopProfiler, err := serveProfiler(*pprofAddr, stdout)
		if err != nil {
			return err
		}
		defer stopProfiler()
	}
	if err := configArg(fs, path); err != nil {
		return err
	}
	plan, err := loadServable(*path, stdout, stderr)
	if err != nil {
		return err
	}
	if *listen != "" {
		plan.ListenOn(*listen)
	}
	st, closeStore, health, err := openStore(ctx, plan, logger)
	if err != nil {
		return err
	}
	defer closeStore()
	sh, err := openShared(plan, st, logger)
	if err != nil {
		return err
	}
	defer sh.close() // last: the call log and the state, flushed
	lv := &live{path: *path, listen: *listen, outs: []io.Writer{stdout, stderr}, logger: logger,
		store: sh.store, log: sh.log, health: health, secrets: plan.SecretValues(), lastSum: watch.File(configFile(*path))(), discover: *discoverEvery}
	g, err := lv.build(plan)
	if err != nil {
		return err
	}
	lv.swap(g)
	defer lv.close()
	// The gateway's plan: its route patterns expanded from the model lists
	// the state store keeps, if any.
	return listenAndServe(ctx, lv, g.gw.Plan(), stdout)
}

// listenAndServe serves lv on the plan's address until ctx ends (SIGTERM,
// SIGINT), reloading the config on SIGHUP and when its file changes, then
// shuts down (shutdown).
func listenAndServe(ctx context.Context, lv *live, plan *config.Plan, stdout io.Writer) error {
	srv := httpapi.HTTPServer(plan, lv)
	base, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	srv.BaseContext = func(net.Listener) context.Context { return base }
	ln, err := net.Listen("tcp", plan.Listen)
	if err != nil {
		return fmt.Errorf("listening on %s: %w (is another tollfree running? change listen or -listen)", plan.Listen, err)
	}
	ln = httpapi.LimitListener(ln, httpapi.ConnLimitsOf(plan), srv)
	// Before the line that says it listens: a reload asked for from then
	// on is one.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	var edited chan struct{}
	if f := configFile(lv.path); f != "" {
		// Each time the file holds something else than when last looked
		// at; one reload pending reads the newest file anyway.
		edited = make(chan struct{}, 1)
		w := watch.New(watch.File(f), watch.Options{})
		w.Start(func() {
			select {
			case edited <- struct{}{}:
			default:
			}
		})
		defer w.Close()
	}
	fmt.Fprintf(stdout, "tollfree listening on http://%s (chains: %v)\n", ln.Addr(), plan.ChainOrder)
	writeReadiness(stdout, plan)
	writeCatalogNotes(stdout, plan)
	for _, r := range plan.Readiness() {
		if r.Enabled == 0 {
			lv.logger.Warn("chain has no enabled route: every request to it gets its fallback; /healthz says degraded", "chain", r.Chain, "fix", strings.Join(r.Fixes, "; "))
		}
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	for {
		select {
		case err := <-errc:
			return err
		case <-hup:
			lv.reload(triggerHUP)
		case <-edited:
			lv.reload(triggerEdit)
		case <-ctx.Done():
			lv.drain() // /readyz says 503 while requests in flight finish
			return shutdown(srv, errc, cancel, lv.plan().Server.ShutdownGrace, lv.logger)
		}
	}
}

// shutdown stops accepting connections and lets the requests in flight
// finish for up to grace; then it cancels what is left with
// httpapi.ErrShutdown (a stream ends with an error event, never a [DONE];
// a request not yet answered gets a 503) and waits for those to be
// written. Running out of grace is not a failure: the exit status is 0.
func shutdown(srv *http.Server, errc <-chan error, cancel context.CancelCauseFunc, grace time.Duration, logger *slog.Logger) error {
	logger.Info("shutting down; letting requests in flight finish", "grace", grace)
	sctx, stop := context.WithTimeout(context.Background(), grace)
	defer stop()
	if err := srv.Shutdown(sctx); err != nil {
		logger.Warn("shutdown grace over: cutting the requests still in flight", "grace", grace)
		cancel(httpapi.ErrShutdown)
		cctx, stop := context.WithTimeout(context.Background(), cutWait)
		defer stop()
		if err := srv.Shutdown(cctx); err != nil {
			srv.Close()
		}
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// cutWait is how long the requests cut at the end of the grace get to
// write their error and return.
const cutWait = 5 * time.Second
