package cache

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode"

	"github.com/tollfree/tollfree/llm"
)

func ptr[T any](v T) *T { return &v }

// baseRequest is a small request every key case varies from.
func baseRequest() *llm.Request {
	return &llm.Request{
		Messages: []llm.Message{
			{Role: "system", Content: "You are a helpful assistant."},
			{Role: "user", Content: "How do I renew my TLS certificate?"},
		},
		MaxTokens:   256,
		Temperature: ptr(0.2),
	}
}

func TestKeyForSame(t *testing.T) {
	base := KeyFor("answer", baseRequest(), "v1")
	tests := []struct {
		name   string
		modify func(r *llm.Request)
	}{
		{"identical", func(r *llm.Request) {}},
		{"doubled spaces", func(r *llm.Request) { r.Messages[1].Content = "How  do I   renew my TLS certificate?" }},
		{"leading and trailing space", func(r *llm.Request) { r.Messages[1].Content = " \n\tHow do I renew my TLS certificate?\r\n " }},
		{"newlines and tabs", func(r *llm.Request) { r.Messages[1].Content = "How\ndo\tI\r\nrenew my TLS certificate?" }},
		{"unicode spaces", func(r *llm.Request) {
			r.Messages[1].Content = "How\u00a0do I\u2003renew my\u3000TLS certificate?\u2028"
		}},
		{"stream", func(r *llm.Request) { r.Stream, r.IncludeUsage = true, true }},
		{"user", func(r *llm.Request) { r.User = "visitor-42" }},
		{"ignored extras", func(r *llm.Request) {
			r.Extra = map[string]json.RawMessage{"stream": json.RawMessage(`true`), "user": json.RawMessage(`"x"`), "stream_options": json.RawMessage(`{}`)}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := baseRequest()
			tt.modify(r)
			if got := KeyFor("answer", r, "v1"); got != base {
				t.Errorf("KeyFor = %s, want %s (same as the base request)", got, base)
			}
		})
	}
}

func TestKeyForJSONWhitespace(t *testing.T) {
	mk := func(tools string) Key {
		r := baseRequest()
		r.Extra = map[string]json.RawMessage{"tools": json.RawMessage(tools), "tool_choice": json.RawMessage(`"auto"`)}
		return KeyFor("answer", r, "")
	}
	compact := mk(`[{"type":"function","function":{"name":"f","description":"a  b"}}]`)
	pretty := mk("[\n  {\"type\": \"function\",\n   \"function\": {\"name\": \"f\", \"description\": \"a  b\"}}\n]")
	if pretty != compact {
		t.Errorf("pretty-printed tools: got %s, want %s", pretty, compact)
	}
	inString := mk(`[{"type":"function","function":{"name":"f","description":"a b"}}]`)
	if inString == compact {
		t.Errorf("white space inside a JSON string was dropped: keys are equal")
	}
}

func TestKeyForDifferent(t *testing.T) {
	base := KeyFor("answer", baseRequest(), "v1")
	tests := []struct {
		name           string
		chain, version string
		modify         func(r *llm.Request)
	}{
		{"chain", "planner", "v1", nil},
		{"content version", "answer", "v2", nil},
		{"no content version", "answer", "", nil},
		{"temperature", "answer", "v1", func(r *llm.Request) { r.Temperature = ptr(0.3) }},
		{"temperature unset", "answer", "v1", func(r *llm.Request) { r.Temperature = nil }},
		{"top_p", "answer", "v1", func(r *llm.Request) { r.TopP = ptr(0.9) }},
		{"max_tokens", "answer", "v1", func(r *llm.Request) { r.MaxTokens = 512 }},
		{"seed", "answer", "v1", func(r *llm.Request) { r.Seed = ptr(int64(7)) }},
		{"stop", "answer", "v1", func(r *llm.Request) { r.Stop = []string{"\n\n"} }},
		{"response_format", "answer", "v1", func(r *llm.Request) { r.ResponseFormat = json.RawMessage(`{"type":"json_object"}`) }},
		{"reasoning_effort", "answer", "v1", func(r *llm.Request) { r.ReasoningEffort = "low" }},
		{"tools", "answer", "v1", func(r *llm.Request) { r.Extra = map[string]json.RawMessage{"tools": json.RawMessage(`[]`)} }},
		{"system prompt", "answer", "v1", func(r *llm.Request) { r.Messages[0].Content = "You are a terse assistant." }},
		{"case", "answer", "v1", func(r *llm.Request) { r.Messages[1].Content = "how do i renew my tls certificate?" }},
		{"role", "answer", "v1", func(r *llm.Request) { r.Messages[0].Role = "developer" }},
		{"split message", "answer", "v1", func(r *llm.Request) {
			r.Messages = append(r.Messages, llm.Message{Role: "user", Content: "certificate?"})
			r.Messages[1].Content = "How do I renew my TLS"
		}},
		{"word boundary", "answer", "v1", func(r *llm.Request) { r.Messages[1].Content = "How do I renew myTLS certificate?" }},
		{"name", "answer", "v1", func(r *llm.Request) { r.Messages[1].Name = "priya" }},
		{"prefix", "answer", "v1", func(r *llm.Request) { r.Messages[1].Prefix = true }},
		{"parts", "answer", "v1", func(r *llm.Request) { r.Messages[1].Parts = json.RawMessage(`[{"type":"image_url"}]`) }},
	}
	seen := map[Key]string{base: "base"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := baseRequest()
			if tt.modify != nil {
				tt.modify(r)
			}
			got := KeyFor(tt.chain, r, tt.version)
			if other, dup := seen[got]; dup {
				t.Errorf("KeyFor = %s, the same as %q; want a distinct key", got, other)
			}
			seen[got] = tt.name
		})
	}
}

func TestKeyForStable(t *testing.T) {
	// The key of a request must not change between builds without a new
	// keyScheme: a changed key silently empties every cache.
	r := &llm.Request{Messages: []llm.Message{{Role: "user", Content: "hello"}}}
	got := KeyFor("answer", r, "").String()
	const want = "549ba6015def7c2d1b9fbfd76576de3b85c9f0583315c35bc630969af540e809"
	if got != want {
		t.Errorf("KeyFor = %s, want %s", got, want)
	}
}

func TestKeyForLongText(t *testing.T) {
	// Text longer than the writer's buffer, with white space at every
	// buffer boundary, still normalises the same.
	a, b := make([]byte, 0, 5000), make([]byte, 0, 9000)
	for i := range 1000 {
		a = append(a, "word "...)
		b = append(b, "word"...)
		for range i%3 + 1 {
			b = append(b, " \n"...)
		}
	}
	ra := &llm.Request{Messages: []llm.Message{{Role: "user", Content: string(a)}}}
	rb := &llm.Request{Messages: []llm.Message{{Role: "user", Content: string(b)}}}
	if ka, kb := KeyFor("c", ra, ""), KeyFor("c", rb, ""); ka != kb {
		t.Errorf("long texts: got %s and %s, want equal keys", ka, kb)
	}
}

func TestKeyForNegativeZero(t *testing.T) {
	r1, r2 := baseRequest(), baseRequest()
	neg := 0.0
	neg = -neg // the constant -0.0 is +0 in Go
	r1.Temperature, r2.Temperature = ptr(0.0), &neg
	if k1, k2 := KeyFor("c", r1, ""), KeyFor("c", r2, ""); k1 != k2 {
		t.Errorf("temperature 0 and -0: got %s and %s, want equal keys", k1, k2)
	}
}

func TestKeyForAllocs(t *testing.T) {
	r := benchRequest()
	allocs := testing.AllocsPerRun(100, func() { KeyFor("answer", r, "v1") })
	if allocs > 2 {
		t.Errorf("KeyFor allocates %v times per call, want at most 2", allocs)
	}
}

func TestNormalized(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"", true},
		{"a", true},
		{"a b c", true},
		{"née à Paris", true},
		{"a\x00b", true},
		{" a", false},
		{"a ", false},
		{"a  b", false},
		{"a\tb", false},
		{"a\nb", false},
		{"a\u00a0b", false},
		{"a\u3000b", false},
	}
	for _, tt := range tests {
		if got := normalized(tt.in); got != tt.want {
			t.Errorf("normalized(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

// FuzzKeyForWhitespace checks that the fast path (already normalised text)
// and the slow path agree: text and its words joined by single spaces hash
// the same.
func FuzzKeyForWhitespace(f *testing.F) {
	f.Add("How  do I\trenew?")
	f.Add(" née\u00a0à\nParis ")
	f.Fuzz(func(t *testing.T, s string) {
		words := strings.FieldsFunc(s, unicode.IsSpace)
		joined := strings.Join(words, " ")
		r1 := &llm.Request{Messages: []llm.Message{{Role: "user", Content: s}}}
		r2 := &llm.Request{Messages: []llm.Message{{Role: "user", Content: joined}}}
		if k1, k2 := KeyFor("c", r1, ""), KeyFor("c", r2, ""); k1 != k2 {
			t.Errorf("KeyFor(%q) = %s, KeyFor(%q) = %s; want equal", s, k1, joined, k2)
		}
	})
}

// FuzzNormalized checks normalized against its definition.
func FuzzNormalized(f *testing.F) {
	for _, s := range []string{"", "abcdefgh ijklmnop", "abcdefg  hijklmnop", "abcdefgh\x1fijk", "abcdefg\u00a0hij", "a b c d e f g h i j"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := s == strings.Join(strings.FieldsFunc(s, unicode.IsSpace), " ")
		if got := normalized(s); got != want {
			t.Errorf("normalized(%q) = %v, want %v", s, got, want)
		}
	})
}
