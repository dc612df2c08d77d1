// Package demo owns `tollfree demo`: in one process, the emulated free
// tiers of seed 000 (thirteen routes over Gemini, Groq and NVIDIA, with
// their limits, bursts of "high demand" 503s, one route that hangs, two
// models gone for new accounts and the 20-a-day Flash models), the gateway
// in front of them with seed 000's chain and hedging, and a stream of sample
// questions, each printed as it is answered. Time may run faster than the
// wall clock so that a day's quotas play out in minutes. Nothing in it needs
// a key or the network: everything listens on loopback.
package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/tollfree/tollfree"
	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/httpapi"
	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/quota"
)

// Options configure a demo run. The zero value runs until ctx ends, in
// real time, a question every 5 seconds, on 127.0.0.1:8080 or a free port.
type Options struct {
	// Listen is where the gateway listens. Default 127.0.0.1:8080; when
	// that is taken, a free loopback port.
	Listen string
	// Speed is how many virtual seconds pass per real second. Default 1.
	Speed float64
	// Every is the virtual time between two questions. Default 5s.
	Every time.Duration
	// Duration ends the run after this much real time; zero means until
	// ctx ends.
	Duration time.Duration
	// Requests ends the run after this many questions have been answered;
	// zero means no limit.
	Requests int
	// Out receives the demo's lines. Default io.Discard.
	Out io.Writer
	// Logger receives the gateway's operational messages. Default: none.
	Logger *slog.Logger
	// Ready, when set, is called with the gateway's base URL
	// (http://127.0.0.1:PORT) once it serves.
	Ready func(baseURL string)
}

// Run starts the emulator and the gateway, sends questions until the
// options or ctx end the run, waits for the questions in flight, prints a
// summary and shuts everything down. It returns an error only when the demo
// could not start.
func Run(ctx context.Context, o Options) error {
	if o.Listen == "" {
		o.Listen = "127.0.0.1:8080"
	}
	if o.Every <= 0 {
		o.Every = 5 * time.Second
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.Duration)
		defer cancel()
	}
	// One virtual clock for the emulator, the gateway and the questions,
	// standing still while work runs (pace.go): a sped-up run measures
	// the providers' delays, not the machine's time multiplied.
	pace := newPacer(time.Now().Truncate(time.Second), o.Speed)
	clk := pace.clk
	clockCtx, stopClock := context.WithCancel(context.WithoutCancel(ctx))
	defer stopClock()
	go clk.Run(clockCtx)
	rep := newReport(o.Out, clk)

	emu := newEmulator(pace.emulatorClock())
	emuLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("demo: listening for the emulator on loopback: %w", err)
	}
	emuSrv := &http.Server{Handler: emu, ReadHeaderTimeout: 10 * time.Second}
	var servers sync.WaitGroup
	servers.Go(func() { emuSrv.Serve(emuLn) })
	defer func() {
		emuSrv.Close()
		servers.Wait()
	}()

	ln, err := listen(o.Listen)
	if err != nil {
		return err
	}
	// The data folder is kept: its call log is for `tollfree log stats`.
	dataDir, err := os.MkdirTemp("", "tollfree-demo-")
	if err != nil {
		ln.Close()
		return fmt.Errorf("demo: making a directory for its state: %w", err)
	}
	token, err := adminToken()
	if err != nil {
		ln.Close()
		return err
	}
	// The fallback is a search over the sample site's pages, read from
	// disk like a real site's.
	if _, err := copyPortfolio(dataDir); err != nil {
		ln.Close()
		return fmt.Errorf("demo: writing its content folder: %w", err)
	}
	plan, err := config.Parse("demo", []byte(gatewayYAML("http://"+emuLn.Addr().String(), ln.Addr().String(), dataDir)), demoEnv(token))
	if err != nil {
		ln.Close()
		return fmt.Errorf("demo: its built-in config does not compile (a bug): %w", err)
	}
	upstream := &http.Client{Transport: transport{p: pace, base: http.DefaultTransport}}
	gw, err := tollfree.New(tollfree.Options{Plan: plan, Clock: clk, Recorder: rep, Logger: o.Logger, HTTPClient: upstream})
	if err != nil {
		ln.Close()
		return fmt.Errorf("demo: starting the gateway: %w", err)
	}
	for _, rt := range plan.Chains[Chain].Routes {
		rep.order = append(rep.order, rt.ID)
	}
	margin := plan.Chains[Chain].Margin
	rep.daySpent = func(id string) (bool, time.Time) {
		left, err := gw.Budget().Left(context.WithoutCancel(ctx), plan.Routes[id])
		if err != nil {
			return false, time.Time{}
		}
		return daySpent(left, margin)
	}
	srv := httpapi.HTTPServer(plan, gw.Handler())
	servers.Go(func() { srv.Serve(ln) })
	defer func() {
		srv.Close()
		gw.Close()
	}()

	base := "http://" + ln.Addr().String()
	intro(o, base, clk.Speed(), plan.CallLog, token)
	if o.Ready != nil {
		o.Ready(base)
	}

	wctx, stopWeather := context.WithCancel(ctx)
	var weatherDone sync.WaitGroup
	weatherDone.Go(func() { weather(wctx, clk, emu, rep.note) })
	drive(ctx, pace, base, o, rep)
	stopWeather()
	weatherDone.Wait()
	rep.summary()
	fmt.Fprintf(o.Out, "status page was at %s/status\n", base)
	fmt.Fprintf(o.Out, "call log kept: %s  (try: tollfree log stats %s)\n", plan.CallLog, plan.CallLog)
	return nil
}

// daySpent tells whether a route or its provider has spent today's
// requests, as the router sees it (a request is not sent past (1-margin) of
// a limit), and when that day resets.
func daySpent(l quota.Left, margin float64) (bool, time.Time) {
	for _, w := range []quota.Window{l.Route.RPD, l.Provider.RPD} {
		if w.Limit > 0 && float64(w.Used+1) > float64(w.Limit)*(1-margin) {
			return true, w.Resets
		}
	}
	return false, time.Time{}
}

// intro prints what runs where.
func intro(o Options, base string, speed float64, callLog, token string) {
	fmt.Fprintf(o.Out, "tollfree demo: emulated free tiers of gemini, groq and nvidia (no keys, no network)\n")
	fmt.Fprintf(o.Out, "chain %q: %d routes, attempt timeout 8s, hedge after 3s; one route hangs, two are gone, Flash is 20 a day\n", Chain, len(seedRoutes))
	fmt.Fprintf(o.Out, "gateway:     %s/v1  (any OpenAI client, model %q; tools and images: %q; /v1/embeddings: %q)\n", base, Chain, "agent", "vectors")
	fmt.Fprintf(o.Out, "status page: %s/status\n", base)
	fmt.Fprintf(o.Out, "admin token: %s  (paste it on the status page to pause and resume routes)\n", token)
	fmt.Fprintf(o.Out, "call log:    %s  (kept; after the demo: tollfree log stats %s)\n", callLog, callLog)
	day := time.Duration(float64(24*time.Hour) / speed).Round(time.Second)
	fmt.Fprintf(o.Out, "time runs x%g (a day takes %s); a question every %s of demo time\n\n", speed, day, o.Every)
}

// listen listens on addr, or on a free loopback port when addr is taken.
func listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err == nil {
		return ln, nil
	}
	ln, err2 := net.Listen("tcp", "127.0.0.1:0")
	if err2 != nil {
		return nil, fmt.Errorf("demo: listening on %s: %w; nor on a free loopback port: %v", addr, err, err2)
	}
	return ln, nil
}

// drive sends a question every o.Every of virtual time until ctx ends or
// o.Requests questions were sent, then waits for those in flight.
func drive(ctx context.Context, pace *pacer, base string, o Options, rep *report) {
	content := siteContent()
	client := &http.Client{}
	var inflight sync.WaitGroup
	defer inflight.Wait()
	for n := 1; o.Requests == 0 || n <= o.Requests; n++ {
		q := questions[(n-1)%len(questions)]
		label := fmt.Sprintf("q%d (%s)", n, q.label)
		done := pace.question()
		inflight.Go(func() {
			out := ask(ctx, client, pace.clk, base, content, q, label)
			done()
			rep.finish(out)
		})
		if n == o.Requests {
			break
		}
		if clock.Sleep(ctx, pace.clk, o.Every) != nil {
			return
		}
	}
}

// ask sends one question to the gateway over HTTP.
func ask(ctx context.Context, client *http.Client, clk clock.Clock, base, content string, q question, label string) outcome {
	body, _ := json.Marshal(map[string]any{
		"model": Chain,
		"messages": []map[string]string{
			{"role": "system", "content": content},
			{"role": "user", "content": q.text},
		},
		"max_tokens": 300,
	})
	start := clk.Now()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/chat/completions", bytes.NewReader(body))
	if err != nil {
		return outcome{label: label, err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return outcome{label: label, stopped: true}
		}
		return outcome{label: label, err: err}
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	return outcome{
		id:       resp.Header.Get(httpapi.HeaderRequestID),
		label:    label,
		status:   resp.StatusCode,
		fallback: resp.Header.Get(httpapi.HeaderFallback) != "",
		latency:  clk.Now().Sub(start),
	}
}
