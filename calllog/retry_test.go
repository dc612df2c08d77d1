package calllog

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tollfree/tollfree/route"
)

// TestRetryWritten: the polite retry of a blip is marked "retry": true on
// its line (issue 13), and read back; other lines leave the field out.
func TestRetryWritten(t *testing.T) {
	var buf bytes.Buffer
	w := New(&buf)
	w.RecordAttempt(&route.Attempt{Start: rec("a").Time, RequestID: "r1", Route: "groq/a"})
	w.RecordAttempt(&route.Attempt{Start: rec("a").Time, RequestID: "r1", Route: "groq/a", Retry: true})
	lines := strings.SplitAfter(buf.String(), "\n")
	if len(lines) < 2 || strings.Contains(lines[0], `"retry"`) || !strings.Contains(lines[1], `"retry":true`) {
		t.Fatalf("lines:\n%s\nwant only the second marked \"retry\":true", buf.String())
	}
	r := NewReader(strings.NewReader(lines[1]))
	var got Record
	if err := r.Next(&got); err != nil || !got.Retry {
		t.Errorf("read back %+v (%v), want Retry", got, err)
	}
}
