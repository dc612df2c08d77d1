package cache

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/tollfree/tollfree/llm"
)

func TestEntryRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		e    Entry
	}{
		{"zero", Entry{}},
		{"full", Entry{
			Route:        "groq/llama-3.3-70b-versatile",
			Content:      "Check the keep-alive timeout first.\n\n1. …",
			Reasoning:    "The user moved regions.",
			FinishReason: "stop",
			ToolCalls:    json.RawMessage(`[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]`),
			Usage:        llm.Usage{PromptTokens: 412, CompletionTokens: 18, TotalTokens: 430, ReasoningTokens: 5, CachedTokens: 100},
			UsageKnown:   true,
			Created:      time.Date(2026, 3, 10, 12, 0, 0, 123456789, time.UTC),
		}},
		{"usage unknown", Entry{Route: "gemini/gemini-2.5-flash", Content: "x", Usage: llm.Usage{PromptTokens: 3}}},
		{"before 1970", Entry{Created: time.Date(1960, 1, 1, 0, 0, 0, 0, time.UTC)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := tt.e.MarshalBinary()
			if err != nil {
				t.Fatalf("MarshalBinary: %v", err)
			}
			var got Entry
			if err := got.UnmarshalBinary(b); err != nil {
				t.Fatalf("UnmarshalBinary: %v", err)
			}
			if !reflect.DeepEqual(got, tt.e) {
				t.Errorf("round trip: got %+v, want %+v", got, tt.e)
			}
		})
	}
}

func TestEntryCompact(t *testing.T) {
	e := Entry{Route: "groq/llama-3.3-70b-versatile", Content: "hello", FinishReason: "stop", UsageKnown: true,
		Usage: llm.Usage{PromptTokens: 412, CompletionTokens: 18, TotalTokens: 430}, Created: time.Unix(1, 0)}
	b, _ := e.MarshalBinary()
	text := len(e.Route) + len(e.Content) + len(e.FinishReason)
	if overhead := len(b) - text; overhead > 24 {
		t.Errorf("encoding overhead = %d bytes, want at most 24", overhead)
	}
}

func TestEntryUnmarshalErrors(t *testing.T) {
	good, _ := (&Entry{Route: "r", Content: "hello", Created: time.Unix(5, 0)}).MarshalBinary()
	tests := []struct {
		name    string
		data    []byte
		version bool // want ErrEntryVersion
	}{
		{"empty", nil, false},
		{"unknown version", append([]byte{2}, good[1:]...), true},
		{"version zero", append([]byte{0}, good[1:]...), true},
		{"truncated", good[:len(good)-1], false},
		{"trailing bytes", append(append([]byte(nil), good...), 0), false},
		{"length past end", []byte{1, 0, 200}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := Entry{Route: "kept"}
			err := e.UnmarshalBinary(tt.data)
			if err == nil {
				t.Fatalf("UnmarshalBinary: got nil error, want one")
			}
			if got := errors.Is(err, ErrEntryVersion); got != tt.version {
				t.Errorf("errors.Is(err, ErrEntryVersion) = %v, want %v (err: %v)", got, tt.version, err)
			}
			if e.Route != "kept" {
				t.Errorf("a failed UnmarshalBinary changed the entry: Route = %q", e.Route)
			}
		})
	}
}

func FuzzEntryUnmarshal(f *testing.F) {
	good, _ := (&Entry{Route: "r", Content: "hello", ToolCalls: json.RawMessage(`[]`), UsageKnown: true, Created: time.Unix(5, 0)}).MarshalBinary()
	f.Add(good)
	f.Add([]byte{1})
	f.Add([]byte{1, 3, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		var e Entry
		if err := e.UnmarshalBinary(data); err != nil {
			return
		}
		b, err := e.MarshalBinary()
		if err != nil {
			t.Fatalf("MarshalBinary of a decoded entry: %v", err)
		}
		var again Entry
		if err := again.UnmarshalBinary(b); err != nil {
			t.Fatalf("UnmarshalBinary of a re-encoded entry: %v", err)
		}
		if !reflect.DeepEqual(again, e) {
			t.Fatalf("re-encoded entry differs: got %+v, want %+v", again, e)
		}
	})
}
