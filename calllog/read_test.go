package calllog

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

func TestReader(t *testing.T) {
	var good bytes.Buffer
	w := New(&good)
	w.Write(&Record{Time: time.Date(2026, 6, 15, 10, 0, 0, 0, time.UTC), RequestID: "r1", Route: "groq/a", Outcome: "ok"})
	w.Write(&Record{Time: time.Date(2026, 6, 15, 11, 0, 0, 0, time.UTC), RequestID: "r2", Route: "groq/b", Outcome: "timeout"})
	lines := strings.SplitAfter(good.String(), "\n")
	long := `{"time":"2026-06-15T10:00:00Z","route":"x","error":"` + strings.Repeat("a", MaxLine) + "\"}\n"

	tests := []struct {
		name      string
		in        string
		wantIDs   []string
		wantBad   int
		wantFirst int
	}{
		{name: "records", in: good.String(), wantIDs: []string{"r1", "r2"}},
		{name: "empty", in: ""},
		{name: "blank lines are not bad", in: "\n" + lines[0] + "\n  \n" + lines[1], wantIDs: []string{"r1", "r2"}},
		{name: "no final newline", in: lines[0] + strings.TrimSuffix(lines[1], "\n"), wantIDs: []string{"r1", "r2"}},
		{name: "cut line", in: lines[0][:40] + "\n" + lines[1], wantIDs: []string{"r2"}, wantBad: 1, wantFirst: 1},
		{name: "not JSON", in: lines[0] + "hello\n" + lines[1] + "{]\n", wantIDs: []string{"r1", "r2"}, wantBad: 2, wantFirst: 2},
		{name: "no route or time", in: `{"time":"2026-06-15T10:00:00Z"}` + "\n" + `{"route":"a"}` + "\n" + lines[1], wantIDs: []string{"r2"}, wantBad: 2, wantFirst: 1},
		{name: "line over MaxLine", in: lines[0] + long + lines[1], wantIDs: []string{"r1", "r2"}, wantBad: 1, wantFirst: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewReader(strings.NewReader(tt.in))
			var ids []string
			var rec Record
			for {
				err := r.Next(&rec)
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatalf("Next: %v", err)
				}
				ids = append(ids, rec.RequestID)
			}
			if strings.Join(ids, ",") != strings.Join(tt.wantIDs, ",") {
				t.Errorf("records %v, want %v", ids, tt.wantIDs)
			}
			bad, first := r.Bad()
			if bad != tt.wantBad || first != tt.wantFirst {
				t.Errorf("Bad() = %d, first %d; want %d, first %d", bad, first, tt.wantBad, tt.wantFirst)
			}
		})
	}
}

// errReader fails after its data.
type errReader struct{ data io.Reader }

func (e errReader) Read(p []byte) (int, error) {
	n, err := e.data.Read(p)
	if errors.Is(err, io.EOF) {
		return n, errors.New("disk on fire")
	}
	return n, err
}

func TestReaderError(t *testing.T) {
	r := NewReader(errReader{strings.NewReader(`{"time":"2026-06-15T10:00:00Z","route":"a"}` + "\n")})
	var rec Record
	if err := r.Next(&rec); err != nil {
		t.Fatalf("first Next: %v", err)
	}
	err := r.Next(&rec)
	if err == nil || errors.Is(err, io.EOF) || !strings.Contains(err.Error(), "disk on fire") {
		t.Errorf("Next at a read error = %v, want the read error", err)
	}
}
