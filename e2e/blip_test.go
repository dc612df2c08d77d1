package e2e_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tollfree/tollfree/calllog"
	"github.com/tollfree/tollfree/emulator"
	"github.com/tollfree/tollfree/emulator/emutest"
)

// The polite retry of a blip (issue 13), end to end with the defaults
// only: answerChain sets no retry option.

// blipRealWait bounds the real time these tests wait for what needs no
// move of the fake clock: a hang is a failure, not a slow pass.
const blipRealWait = 10 * time.Second

// callLogOf waits until the call log at path holds n records of the
// request id (the writer flushes every second of real time) and returns
// them.
func callLogOf(t *testing.T, path, id string, n int) []calllog.Record {
	t.Helper()
	deadline := time.Now().Add(blipRealWait)
	for {
		var recs []calllog.Record
		b, _ := os.ReadFile(path)
		r := calllog.NewReader(bytes.NewReader(b))
		for {
			var rec calllog.Record
			err := r.Next(&rec)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("reading the call log: %v", err)
			}
			if rec.RequestID == id {
				recs = append(recs, rec)
			}
		}
		if len(recs) >= n || time.Now().After(deadline) {
			return recs
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestBlipRetriedEndToEnd: a 500 once is retried on the same route, which
// answers the caller; the next route is never called; the call log has two
// lines for the request, the second marked "retry". The same for a stream
// whose first route fails before its first token.
func TestBlipRetriedEndToEnd(t *testing.T) {
	checkLeaks(t)
	const route = "groq/llama-3.3-70b-versatile"
	for _, stream := range []bool{false, true} {
		name := "chat"
		if stream {
			name = "stream"
		}
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "calls.jsonl")
			h := harnessOf(t, startStackWith(t, stackOptions{config: answerChain, dataDir: dir, callLogPath: path}))
			h.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.ServerError})
			var r reply
			var content string
			if stream {
				r = h.post("/v1/chat/completions", "application/json", streamBody("answer", false))
				content, _, _ = streamed(t, r.body)
			} else {
				r = h.ask("answer")
				if r.status == 200 {
					content = r.content(t)
				}
			}
			if r.status != 200 || content != emutest.Answer(route) {
				t.Fatalf("got %d %q, want 200 with %s's answer", r.status, content, route)
			}
			if got := r.header.Get("X-Tollfree-Route"); got != route {
				t.Errorf("X-Tollfree-Route = %q, want %s", got, route)
			}
			if n := h.emu.Calls("groq", "llama-3.3-70b-versatile"); n != 2 {
				t.Errorf("%s called %d times, want 2", route, n)
			}
			if n := h.emu.Calls("groq", "llama-3.1-8b-instant"); n != 0 {
				t.Errorf("the next route was called %d times, want 0", n)
			}
			if rest, ok := h.rest(route); ok {
				t.Errorf("%s rests (%+v): a blip rests nothing", route, rest)
			}
			recs := callLogOf(t, path, r.header.Get("X-Request-Id"), 2)
			if len(recs) != 2 {
				t.Fatalf("call log holds %d lines of the request, want 2: %+v", len(recs), recs)
			}
			if a := recs[0]; a.Route != route || a.Outcome != "overloaded" || a.Status != 500 || a.Retry || a.RestKey != "" {
				t.Errorf("first line = %+v, want %s overloaded 500, not a retry, no rest", a, route)
			}
			if a := recs[1]; a.Route != route || a.Outcome != "ok" || !a.Retry {
				t.Errorf("second line = %+v, want %s ok with \"retry\": true", a, route)
			}
		})
	}
}

// TestBlip429RetriedAfterItsWait: a 429 asking 2 s is retried on the same
// route after 2 s on the gateway's clock, never sooner: the request does
// not complete until the clock has moved.
func TestBlip429RetriedAfterItsWait(t *testing.T) {
	checkLeaks(t)
	h := newHarness(t, answerChain)
	h.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.RateMinute, RetryAfter: 2 * time.Second})
	done := h.askAsync("answer")
	h.waitCalls("groq", "llama-3.3-70b-versatile", 1)
	ctx, cancel := context.WithTimeout(context.Background(), blipRealWait)
	defer cancel()
	if err := h.clk.BlockUntilDeadline(ctx, t0.Add(2*time.Second)); err != nil {
		t.Fatalf("the gateway does not wait for t0+2s: %v", err)
	}
	h.clk.Advance(2*time.Second - time.Millisecond)
	select {
	case r := <-done:
		t.Fatalf("answered before the asked wait: %d %s", r.status, r.body)
	default:
	}
	if n := h.emu.Calls("groq", "llama-3.3-70b-versatile"); n != 1 {
		t.Fatalf("retried before the asked wait: %d calls", n)
	}
	h.clk.Advance(time.Millisecond)
	var r reply
	select {
	case r = <-done:
	case <-time.After(blipRealWait):
		t.Fatal("no answer after the wait")
	}
	if r.status != 200 || r.content(t) != emutest.Answer("groq/llama-3.3-70b-versatile") {
		t.Fatalf("got %d %s, want the first route's answer", r.status, r.body)
	}
	var times []time.Time
	for _, rec := range h.emu.Records() {
		if rec.Model == "llama-3.3-70b-versatile" {
			times = append(times, rec.Time)
		}
	}
	if len(times) != 2 || times[1].Before(times[0].Add(2*time.Second)) {
		t.Errorf("the route was called at %v, want twice, the second 2 s or more after the first", times)
	}
	if n := h.emu.Calls("groq", "llama-3.1-8b-instant"); n != 0 {
		t.Errorf("the next route was called %d times, want 0", n)
	}
}

// TestNoBlipFailsOverAtOnce: a 429 asking 40 s, or a 503 "high demand",
// is no blip: the next route answers without the clock moving, and the
// first rests as its class says.
func TestNoBlipFailsOverAtOnce(t *testing.T) {
	checkLeaks(t)
	for _, tt := range []struct {
		name      string
		step      emulator.Step
		restClass string
		restFor   time.Duration
	}{
		{"429 asking 40s", emulator.Step{Kind: emulator.RateMinute, RetryAfter: 40 * time.Second}, "rate_minute", 40 * time.Second},
		{"503 high demand", emulator.Step{Kind: emulator.HighDemand}, "overloaded", 30 * time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, answerChain)
			h.emu.Script("groq", "llama-3.3-70b-versatile", tt.step)
			var r reply
			select {
			case r = <-h.askAsync("answer"):
			case <-time.After(blipRealWait):
				t.Fatal("no answer while the clock stood still")
			}
			if r.status != 200 || r.content(t) != emutest.Answer("groq/llama-3.1-8b-instant") {
				t.Fatalf("got %d %s, want the next route's answer", r.status, r.body)
			}
			if n := h.emu.Calls("groq", "llama-3.3-70b-versatile"); n != 1 {
				t.Errorf("the first route was called %d times, want 1", n)
			}
			rest, ok := h.rest("groq/llama-3.3-70b-versatile")
			if !ok || rest.Class != tt.restClass || !rest.Until.Equal(t0.Add(tt.restFor)) {
				t.Errorf("rest = %+v (found %v), want %s until t0+%s", rest, ok, tt.restClass, tt.restFor)
			}
		})
	}
}
