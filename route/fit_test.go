package route

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/llm"
	"github.com/tollfree/tollfree/quota"
)

func msgs(roles ...string) []llm.Message {
	out := make([]llm.Message, len(roles))
	for i, r := range roles {
		out[i] = llm.Message{Role: r, Content: r + string(rune('a'+i))}
	}
	return out
}

func roles(ms []llm.Message) string {
	var b []string
	for _, m := range ms {
		b = append(b, m.Content)
	}
	return strings.Join(b, " ")
}

func TestKeepExchanges(t *testing.T) {
	tests := []struct {
		name     string
		roles    []string
		n        int
		want     string
		wantNote string
	}{
		{"zero keeps all", []string{"system", "user", "assistant", "user"}, 0, "systema userb assistantc userd", ""},
		{"fewer exchanges than n", []string{"system", "user", "assistant", "user"}, 2, "systema userb assistantc userd", ""},
		{"last two of three", []string{"system", "user", "assistant", "user", "assistant", "user"}, 2, "systema userd assistante userf", "kept the last 2 exchanges: 2 earlier messages dropped"},
		{"tool turns stay with their exchange", []string{"system", "user", "assistant", "user", "assistant", "tool", "assistant", "user"}, 2, "systema userd assistante toolf assistantg userh", "kept the last 2 exchanges: 2 earlier messages dropped"},
		{"a late system message is kept", []string{"user", "assistant", "developer", "user", "assistant", "user"}, 1, "developerc userf", "kept the last 1 exchanges: 4 earlier messages dropped"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := &llm.Request{Messages: msgs(tt.roles...)}
			before := roles(req.Messages)
			got, note := keepExchanges(req, tt.n)
			if roles(got.Messages) != tt.want || note != tt.wantNote {
				t.Errorf("got %q (%q), want %q (%q)", roles(got.Messages), note, tt.want, tt.wantNote)
			}
			if roles(req.Messages) != before {
				t.Error("the caller's request was modified")
			}
		})
	}
}

func TestTruncateOnCharacterBoundaries(t *testing.T) {
	s := "a😀b€c"
	for n := range len(s) + 2 {
		got := truncate(s, n)
		if !utf8.ValidString(got) || !strings.HasPrefix(s, got) || len(got) > n && n < len(s) {
			t.Errorf("truncate(%q, %d) = %q", s, n, got)
		}
	}
}

func TestFit(t *testing.T) {
	sys := strings.Repeat("Portfolio 🚀 project: a gateway over free tiers, café. ", 400) // about 22 KB
	req := &llm.Request{Messages: []llm.Message{{Role: "system", Content: sys}, {Role: "user", Content: "What did you build?"}}}
	est := quota.Estimate(req)
	big := &config.Route{ID: "big", MaxContext: 131072}
	small := &config.Route{ID: "small", MaxContext: 1000}
	trim := &config.Chain{TrimSystem: true}
	strict := &config.Chain{}

	if out, cut, ok := fit(req, est, big, strict); !ok || out != req || cut != "" {
		t.Errorf("big route: ok %v cut %q, want the request as is", ok, cut)
	}
	if _, _, ok := fit(req, est, small, strict); ok {
		t.Error("small route without trim_system: fits, want too large")
	}
	out, cut, ok := fit(req, est, small, trim)
	if !ok {
		t.Fatal("small route with trim_system: too large, want a condensed system prompt")
	}
	got := out.Messages[0].Content
	if !utf8.ValidString(got) || !strings.HasPrefix(sys, got) || len(got) >= len(sys) {
		t.Errorf("system prompt cut to %d bytes, valid UTF-8 %v; want a shorter prefix on a character boundary", len(got), utf8.ValidString(got))
	}
	if n := quota.Estimate(out) + minReserve; n > small.MaxContext {
		t.Errorf("condensed request is %d tokens with the answer's room; want within %d", n, small.MaxContext)
	}
	if !strings.HasPrefix(cut, "system prompt cut from ") || out.Messages[1].Content != "What did you build?" || req.Messages[0].Content != sys {
		t.Errorf("cut %q; the user turn or the caller's request changed", cut)
	}
	// A conversation too long without its system prompt is not cut at all.
	long := &llm.Request{Messages: []llm.Message{{Role: "system", Content: "Be brief."}, {Role: "user", Content: sys}}}
	if _, _, ok := fit(long, quota.Estimate(long), small, trim); ok {
		t.Error("a user turn over the context fits once the system prompt is cut")
	}
}

func TestForRoute(t *testing.T) {
	tests := []struct {
		name      string
		maxTokens int
		rt        config.Route
		want      int
	}{
		{"caller's max_tokens kept", 500, config.Route{MaxOutput: 4000}, 500},
		{"capped by max_output", 9000, config.Route{MaxOutput: 4000}, 4000},
		{"none stays none", 0, config.Route{MaxOutput: 4000}, 0},
		{"thinking route gets its whole output", 0, config.Route{MaxOutput: 4000, Reasoning: true}, 4000},
		{"within what the context leaves", 0, config.Route{MaxOutput: 4000, MaxContext: 3000, Reasoning: true}, 3000 - 100},
		{"thinking route without max_output keeps the provider's default", 0, config.Route{Reasoning: true}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := &llm.Request{MaxTokens: tt.maxTokens}
			if got := forRoute(req, 100, &tt.rt).MaxTokens; got != tt.want {
				t.Errorf("max_tokens = %d, want %d", got, tt.want)
			}
			if req.MaxTokens != tt.maxTokens {
				t.Error("the caller's request was modified")
			}
		})
	}
}

func TestAttemptTimeout(t *testing.T) {
	ch := &config.Chain{AttemptTimeout: 20 * time.Second}
	tests := []struct {
		rt   config.Route
		want time.Duration
	}{
		{config.Route{}, 20 * time.Second},
		{config.Route{Reasoning: true}, 60 * time.Second},
		{config.Route{Reasoning: true, Timeout: 90 * time.Second}, 90 * time.Second},
		{config.Route{Timeout: 5 * time.Second}, 5 * time.Second},
	}
	for _, tt := range tests {
		if got := attemptTimeout(&tt.rt, ch); got != tt.want {
			t.Errorf("attemptTimeout(%+v) = %s, want %s", tt.rt, got, tt.want)
		}
	}
}

// TestFirstTokenTimeoutOf (issue 13): a stream's wait for its first token.
func TestFirstTokenTimeoutOf(t *testing.T) {
	const s = time.Second
	tests := []struct {
		name string
		ch   config.Chain
		rt   config.Route
		want time.Duration
	}{
		{"ordinary", config.Chain{AttemptTimeout: 20 * s, FirstTokenTimeout: 10 * s}, config.Route{}, 10 * s},
		{"thinking", config.Chain{AttemptTimeout: 20 * s, FirstTokenTimeout: 10 * s}, config.Route{Reasoning: true}, 30 * s},
		{"capped by the attempt timeout", config.Chain{AttemptTimeout: 8 * s, FirstTokenTimeout: 10 * s}, config.Route{}, 8 * s},
		{"thinking, capped", config.Chain{AttemptTimeout: 8 * s, FirstTokenTimeout: 8 * s}, config.Route{Reasoning: true}, 24 * s},
		{"a route's own timeout, longer", config.Chain{AttemptTimeout: 20 * s, FirstTokenTimeout: 10 * s}, config.Route{Timeout: 2 * time.Minute}, 2 * time.Minute},
		{"a route's own timeout, shorter", config.Chain{AttemptTimeout: 20 * s, FirstTokenTimeout: 10 * s}, config.Route{Timeout: 5 * s, Reasoning: true}, 5 * s},
		{"a chain built without one", config.Chain{AttemptTimeout: 20 * s}, config.Route{Reasoning: true}, 60 * s},
	}
	for _, tt := range tests {
		if got := firstTokenTimeout(&tt.rt, &tt.ch); got != tt.want {
			t.Errorf("%s: firstTokenTimeout = %s, want %s", tt.name, got, tt.want)
		}
	}
}
