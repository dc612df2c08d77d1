package sse

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

type ev struct {
	name    string
	data    string
	comment bool
}

func readAll(t testing.TB, r io.Reader, maxLine int) ([]ev, error) {
	t.Helper()
	rd := NewReader(r, maxLine)
	var got []ev
	for range 10000 {
		e, err := rd.Next()
		if err != nil {
			return got, err
		}
		got = append(got, ev{e.Name, string(e.Data), e.Comment})
	}
	t.Fatal("reader does not end")
	return nil, nil
}

func TestReader(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []ev
	}{
		{"lf", "data: a\n\ndata: b\n\n", []ev{{data: "a"}, {data: "b"}}},
		{"crlf", "data: a\r\n\r\ndata: b\r\n\r\n", []ev{{data: "a"}, {data: "b"}}},
		{"cr", "data: a\r\rdata: b\r\r", []ev{{data: "a"}, {data: "b"}}},
		{"no space", "data:{\"x\":1}\n\n", []ev{{data: `{"x":1}`}}},
		{"two spaces keeps one", "data:  a\n\n", []ev{{data: " a"}}},
		{"multi-line", "data: a\ndata: b\ndata\n\n", []ev{{data: "a\nb\n"}}},
		{"comment", ": OPENROUTER PROCESSING\n\ndata: x\n\n", []ev{{data: "OPENROUTER PROCESSING", comment: true}, {data: "x"}}},
		{"event name", "event: error\ndata: boom\n\n", []ev{{name: "error", data: "boom"}}},
		{"id and retry ignored", "id: 7\nretry: 100\ndata: a\n\n", []ev{{data: "a"}}},
		{"no data no event", "event: ping\n\ndata: a\n\n", []ev{{data: "a"}}},
		{"final event without blank line", "data: a\n\ndata: b", []ev{{data: "a"}, {data: "b"}}},
		{"final event with one newline", "data: a\n", []ev{{data: "a"}}},
		{"empty", "", nil},
		{"blank lines only", "\n\r\n\r\n", nil},
		{"empty data", "data:\n\n", []ev{{data: ""}}},
		{"done", "data: {}\n\ndata: [DONE]\n\n", []ev{{data: "{}"}, {data: "[DONE]"}}},
	}
	for _, tt := range tests {
		readers := map[string]func(string) io.Reader{
			"whole":    func(s string) io.Reader { return strings.NewReader(s) },
			"one byte": func(s string) io.Reader { return iotest.OneByteReader(strings.NewReader(s)) },
			"half":     func(s string) io.Reader { return iotest.HalfReader(strings.NewReader(s)) },
		}
		for rname, mk := range readers {
			t.Run(tt.name+"/"+rname, func(t *testing.T) {
				got, err := readAll(t, mk(tt.in), 0)
				if err != io.EOF {
					t.Fatalf("err = %v, want io.EOF", err)
				}
				if !equal(got, tt.want) {
					t.Errorf("got %+v, want %+v", got, tt.want)
				}
			})
		}
	}
}

func equal(a, b []ev) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestReaderCRLFSplitAcrossReads(t *testing.T) {
	// "\r" at the end of one read and "\n" at the start of the next is one
	// line end, not two: the event must not be dispatched early.
	r := io.MultiReader(strings.NewReader("data: a\r"), strings.NewReader("\ndata: b\r\n\r\n"))
	got, err := readAll(t, r, 0)
	if err != io.EOF {
		t.Fatalf("err = %v, want io.EOF", err)
	}
	if want := []ev{{data: "a\nb"}}; !equal(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

func TestReaderLongLines(t *testing.T) {
	long := strings.Repeat("x", 100_000)
	t.Run("within limit", func(t *testing.T) {
		got, err := readAll(t, strings.NewReader("data: "+long+"\n\n"), 100_006)
		if err != io.EOF {
			t.Fatalf("err = %v, want io.EOF", err)
		}
		if len(got) != 1 || got[0].data != long {
			t.Errorf("got %d events, want the long one", len(got))
		}
	})
	t.Run("over limit", func(t *testing.T) {
		_, err := readAll(t, strings.NewReader("data: "+long+"\n\n"), 1000)
		if !errors.Is(err, ErrLineTooLong) {
			t.Fatalf("err = %v, want ErrLineTooLong", err)
		}
	})
	t.Run("over limit without line end", func(t *testing.T) {
		_, err := readAll(t, strings.NewReader("data: "+long), 1000)
		if !errors.Is(err, ErrLineTooLong) {
			t.Fatalf("err = %v, want ErrLineTooLong", err)
		}
	})
	t.Run("exactly the limit", func(t *testing.T) {
		got, err := readAll(t, iotest.OneByteReader(strings.NewReader("data:abc\r\n\r\n")), 8)
		if err != io.EOF || len(got) != 1 || got[0].data != "abc" {
			t.Errorf("got %+v, %v; want one event and io.EOF", got, err)
		}
	})
}

func TestReaderReadError(t *testing.T) {
	boom := errors.New("boom")
	r := io.MultiReader(strings.NewReader("data: a\n\ndata: b"), iotest.ErrReader(boom))
	rd := NewReader(r, 0)
	if e, err := rd.Next(); err != nil || string(e.Data) != "a" {
		t.Fatalf("first = %q, %v; want a", e.Data, err)
	}
	for i := range 2 {
		if _, err := rd.Next(); !errors.Is(err, boom) {
			t.Fatalf("call %d: err = %v, want boom", i, err)
		}
	}
}

func TestReaderReset(t *testing.T) {
	rd := NewReader(strings.NewReader("data: a"), 0)
	if _, err := rd.Next(); err != nil {
		t.Fatal(err)
	}
	rd.Reset(strings.NewReader("data: b\n\n"))
	e, err := rd.Next()
	if err != nil || string(e.Data) != "b" {
		t.Fatalf("after Reset got %q, %v; want b", e.Data, err)
	}
}

// FuzzReader checks that the reader never panics, always ends, and reads
// the same events whatever the read sizes.
func FuzzReader(f *testing.F) {
	for _, s := range []string{
		"data: a\n\n", "data:a\r\n\r\n", "data: a\r\rdata: b", ": c\n\n", "event: e\ndata: x\ndata: y\n\n",
		"data: {\"choices\":[]}\n\ndata: [DONE]\n\n", "\r\n\r", "data",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		whole, err1 := readAll(t, bytes.NewReader(in), 64)
		bytewise, err2 := readAll(t, iotest.OneByteReader(bytes.NewReader(in)), 64)
		if !equal(whole, bytewise) {
			t.Fatalf("whole read %+v, byte-wise read %+v", whole, bytewise)
		}
		if (err1 == io.EOF) != (err2 == io.EOF) {
			t.Fatalf("whole err %v, byte-wise err %v", err1, err2)
		}
		if err1 != io.EOF && !errors.Is(err1, ErrLineTooLong) {
			t.Fatalf("unexpected error %v", err1)
		}
	})
}

func BenchmarkReader(b *testing.B) {
	var in bytes.Buffer
	for range 100 {
		in.WriteString(`data: {"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"hello there"},"finish_reason":null}]}` + "\n\n")
	}
	r := bytes.NewReader(in.Bytes())
	rd := NewReader(r, 0)
	b.ReportAllocs()
	b.SetBytes(int64(in.Len()))
	for b.Loop() {
		r.Reset(in.Bytes())
		rd.Reset(r)
		for {
			if _, err := rd.Next(); err != nil {
				break
			}
		}
	}
}
