package e2e_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/tollfree/tollfree"
	"github.com/tollfree/tollfree/emulator"
	"github.com/tollfree/tollfree/status/metrics"
)

// parityConfig has one chain per way a request can end. Each visitor may
// ask one question an hour.
const parityConfig = `
trusted_proxies: [127.0.0.1]
callers: {per_hour: 1}
chains:
  answer:
    routes: [groq/llama-3.3-70b-versatile, cerebras/gpt-oss-120b]
    attempt_timeout: 8s
    deadline: 20s
    fallback: {message: "Resting."}
  site:
    routes: [groq/llama-3.3-70b-versatile, cerebras/gpt-oss-120b]
    attempt_timeout: 8s
    deadline: 20s
    fallback: {search: ../examples/content, message: "Resting."}
  cached:
    routes: [groq/llama-3.3-70b-versatile, cerebras/gpt-oss-120b]
    attempt_timeout: 8s
    deadline: 20s
    cache_ttl: 1h
    fallback: {message: "Resting."}
  strict:
    routes: [groq/llama-3.3-70b-versatile, cerebras/gpt-oss-120b]
    attempt_timeout: 8s
    deadline: 20s
`

// question is one request of a parity case.
type question struct {
	chain, user, text string
}

// ending is how one request ended, in terms both the library and the HTTP
// API can be read in.
type ending struct {
	Err      string // "" for an answer, else the kind of error
	Retry    bool   // the error says when to come back
	ServedBy string
	Route    string
	Content  string
}

// asker sends a question through the library or the HTTP API of s.
type asker func(t *testing.T, s *stack, q question, stream bool) ending

// TestLibraryAndServerAgree drives the library (Gateway.Chat and
// Gateway.Stream) and the HTTP API with the same cases and wants the same
// ending for each: who answered and with what, or which error; the same
// call-log records; and the same request counts in the metrics (issue 11:
// the library skipped the caller check, the cache and the fallback, and got
// an ExhaustedError where an HTTP caller got the chain's fallback).
func TestLibraryAndServerAgree(t *testing.T) {
	checkLeaks(t)
	down := func(s *stack) {
		s.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.HighDemand})
		s.emu.Script("cerebras", "gpt-oss-120b", emulator.Step{Kind: emulator.HighDemand})
	}
	tests := []struct {
		name  string
		setup func(s *stack)
		first *question // asked before, its ending not compared
		ask   question
		want  ending
	}{
		{name: "answered by a route", ask: question{"answer", "v1", "What does tollfree do?"},
			want: ending{ServedBy: "route", Route: "groq/llama-3.3-70b-versatile", Content: defaultAnswer("groq/llama-3.3-70b-versatile")}},
		{name: "every route down: the fallback message", setup: down, ask: question{"answer", "v1", "What does tollfree do?"},
			want: ending{ServedBy: "fallback message", Content: "Resting."}},
		{name: "every route down: the search answer", setup: down, ask: question{"site", "v1", "How can I contact you?"},
			want: ending{ServedBy: "fallback search", Content: "*"}},
		{name: "every route down, no fallback: the error", setup: down, ask: question{"strict", "v1", "What does tollfree do?"},
			want: ending{Err: "exhausted", Retry: true}},
		{name: "caller over its limit", first: &question{"answer", "v1", "What does tollfree do?"}, ask: question{"answer", "v1", "And then?"},
			want: ending{Err: "caller limit", Retry: true}},
		{name: "cache hit", first: &question{"cached", "v1", "What does tollfree do?"}, ask: question{"cached", "v2", "What does tollfree do?"},
			want: ending{ServedBy: "cache", Route: "groq/llama-3.3-70b-versatile", Content: defaultAnswer("groq/llama-3.3-70b-versatile")}},
		{name: "the caller's bad request", ask: question{"answer", "v1", "What does tollfree do?"},
			setup: func(s *stack) {
				s.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.BadRequest, Text: "'temperature' must be at most 2"})
			},
			want: ending{Err: "caller error: bad_request"}},
	}
	sides := []struct {
		name string
		ask  asker
	}{{"library", askLibrary}, {"http", askHTTP}}
	for _, tt := range tests {
		for _, stream := range []bool{false, true} {
			name := tt.name
			if stream {
				name += " (stream)"
			}
			t.Run(name, func(t *testing.T) {
				var got [2]ending
				var calls, counts [2]string
				for i, side := range sides {
					s := startStackWith(t, stackOptions{config: parityConfig})
					if tt.setup != nil {
						tt.setup(s)
					}
					if tt.first != nil {
						side.ask(t, s, *tt.first, stream)
					}
					got[i] = side.ask(t, s, tt.ask, stream)
					calls[i], counts[i] = callRecords(s), requestCounts(t, s)
				}
				want := tt.want
				if want.Content == "*" {
					want.Content = got[1].Content // a search answer: the same text on both sides
					if got[1].Content == "" {
						t.Errorf("http: an empty search answer")
					}
				}
				for i, side := range sides {
					if got[i] != want {
						t.Errorf("%s: ended %+v, want %+v", side.name, got[i], want)
					}
				}
				if calls[0] != calls[1] {
					t.Errorf("call log: library %q, http %q", calls[0], calls[1])
				}
				if counts[0] != counts[1] {
					t.Errorf("request counts: library %q, http %q", counts[0], counts[1])
				}
			})
		}
	}
}

// askLibrary asks through Gateway.Chat or Gateway.Stream, with the user as
// the request's user (a Go program's caller).
func askLibrary(t *testing.T, s *stack, q question, stream bool) ending {
	t.Helper()
	req := &tollfree.Request{User: q.user, Messages: []tollfree.Message{{Role: "user", Content: q.text}}}
	if !stream {
		a, err := s.gw.Chat(t.Context(), q.chain, req)
		if err != nil {
			return libraryError(err)
		}
		return ending{ServedBy: a.ServedBy.String(), Route: a.Route, Content: a.Content}
	}
	as, err := s.gw.Stream(t.Context(), q.chain, req)
	if err != nil {
		return libraryError(err)
	}
	defer as.Close()
	var text strings.Builder
	for {
		c, err := as.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("library stream: %v", err)
		}
		text.WriteString(c.Content)
	}
	return ending{ServedBy: as.ServedBy.String(), Route: as.Route, Content: text.String()}
}

func libraryError(err error) ending {
	var ex *tollfree.ExhaustedError
	var ce *tollfree.CallerError
	var le *tollfree.CallerLimitError
	switch {
	case errors.As(err, &ex):
		return ending{Err: "exhausted", Retry: !ex.RetryAt.IsZero()}
	case errors.As(err, &le):
		return ending{Err: "caller limit", Retry: !le.RetryAt.IsZero()}
	case errors.As(err, &ce):
		return ending{Err: "caller error: " + ce.Class.String()}
	}
	return ending{Err: "other: " + err.Error()}
}

// askHTTP asks through the HTTP API, as an OpenAI client would, from the
// user's own address behind a trusted proxy.
func askHTTP(t *testing.T, s *stack, q question, stream bool) ending {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"model": q.chain, "user": q.user, "stream": stream,
		"messages": []map[string]string{{"role": "user", "content": q.text}}})
	req, _ := http.NewRequest(http.MethodPost, s.srv.URL+"/v1/chat/completions", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Forwarded-For", visitorAddr(q.user)) // the user field names no one
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	r := reply{status: resp.StatusCode, header: resp.Header, body: b}
	retry := r.header.Get("Retry-After") != ""
	switch r.status {
	case http.StatusOK:
	case http.StatusServiceUnavailable:
		return ending{Err: "exhausted", Retry: retry}
	case http.StatusTooManyRequests:
		return ending{Err: "caller limit", Retry: retry}
	case http.StatusBadRequest:
		return ending{Err: "caller error: " + r.errorCode(t), Retry: retry}
	default:
		return ending{Err: "other: " + strconv.Itoa(r.status) + " " + string(b)}
	}
	e := ending{ServedBy: "route", Route: r.header.Get("X-Tollfree-Route")}
	switch {
	case r.header.Get("X-Tollfree-Fallback") != "":
		e.ServedBy = "fallback " + r.header.Get("X-Tollfree-Fallback")
	case r.header.Get("X-Tollfree-Cache") == "hit":
		e.ServedBy = "cache"
	case r.header.Get("X-Tollfree-Cache") == "shared":
		e.ServedBy = "shared call"
	}
	if stream {
		e.Content, _, _ = streamed(t, b)
	} else {
		e.Content = r.content(t)
	}
	return e
}

// callRecords lists what the call log got: each record's chain, route and
// class, and whether it was a cache hit.
func callRecords(s *stack) string {
	var out []string
	for _, a := range s.recs.all() {
		out = append(out, fmt.Sprintf("%s %s %s cached=%v", a.Chain, a.Route, a.Class, a.Cached))
	}
	slices.Sort(out)
	return strings.Join(out, "; ")
}

// requestCounts lists the metrics' non-zero request, cache-hit and
// fallback counters.
func requestCounts(t *testing.T, s *stack) string {
	t.Helper()
	resp, err := http.Get(s.srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("/metrics does not parse: %v", err)
	}
	var out []string
	for _, name := range []string{metrics.NameRequests, metrics.NameCacheHits, metrics.NameFallbacks} {
		for _, m := range fams[name].GetMetric() {
			if v := m.GetCounter().GetValue(); v != 0 {
				var labels []string
				for _, l := range m.GetLabel() {
					labels = append(labels, l.GetName()+"="+l.GetValue())
				}
				out = append(out, fmt.Sprintf("%s{%s} %v", name, strings.Join(labels, ","), v))
			}
		}
	}
	slices.Sort(out)
	return strings.Join(out, "; ")
}
