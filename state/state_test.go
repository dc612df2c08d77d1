package state

import (
	"encoding/json"
	"testing"
	"time"
)

// TestRestJSON pins the stored form of a rest: memstore's rests.json, Redis
// values and events all write it, and instances of other versions read it.
func TestRestJSON(t *testing.T) {
	since := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		r    Rest
		want string
	}{
		{Rest{Key: "provider:groq", Until: since.Add(time.Hour), Class: "auth", Reason: "401", Since: since},
			`{"key":"provider:groq","until":"2026-03-10T13:00:00Z","class":"auth","reason":"401","since":"2026-03-10T12:00:00Z"}`},
		{Rest{Key: "groq/llama", Class: "paused", Manual: true, Since: since},
			`{"key":"groq/llama","until":"0001-01-01T00:00:00Z","class":"paused","manual":true,"since":"2026-03-10T12:00:00Z"}`},
	} {
		b, err := json.Marshal(tc.r)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != tc.want {
			t.Errorf("got  %s\nwant %s", b, tc.want)
		}
		var back Rest
		if err := json.Unmarshal(b, &back); err != nil || back != tc.r {
			t.Errorf("round trip: got %+v (%v), want %+v", back, err, tc.r)
		}
	}
}
