// Package sse owns the reading of server-sent events as upstream LLM APIs
// send them: OpenAI-shaped chat streams and Gemini's streamGenerateContent
// with alt=sse. It follows the WHATWG event-stream grammar: LF, CRLF and CR
// line ends, "data:x" with or without the space, multi-line data joined with
// "\n", and comment lines, which it returns as events so that callers can
// count keep-alives (OpenRouter's ": OPENROUTER PROCESSING"). Servers differ
// in exactly these details (docs/PROVIDERS.md, "Streaming"), so the reader
// accepts them all.
package sse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
)

// ErrLineTooLong is returned (wrapped) by Next when a line is longer than the
// Reader's maxLine.
var ErrLineTooLong = errors.New("sse: line too long")

// DefaultMaxLine is the line limit NewReader uses when given maxLine <= 0.
const DefaultMaxLine = 4 << 20

const initialBuf = 4096

// Event is one dispatched event, or one comment line.
type Event struct {
	// Name is the value of the event's "event:" field, "" when absent.
	Name string
	// Data is the event's data lines joined with "\n". For a comment, it is
	// the comment text after the colon (and one optional space). Data is
	// owned by the Reader and valid only until the next call to Next.
	Data []byte
	// Comment reports that this is a comment line, not an event.
	Comment bool
}

// Reader reads events from a stream. It is not safe for concurrent use.
type Reader struct {
	r       io.Reader
	maxLine int
	buf     []byte // read buffer; unread bytes are buf[start:end]
	start   int
	end     int
	skipLF  bool // the previous line ended in CR: a following LF belongs to it
	err     error
	data    []byte // data buffer of the event being read
	hasData bool   // a data field was seen for the event being read
	name    string
}

// NewReader returns a Reader of r that refuses lines longer than maxLine
// bytes (DefaultMaxLine when maxLine <= 0).
func NewReader(r io.Reader, maxLine int) *Reader {
	if maxLine <= 0 {
		maxLine = DefaultMaxLine
	}
	return &Reader{r: r, maxLine: maxLine, buf: make([]byte, min(initialBuf, maxLine+1))}
}

// Reset makes the Reader read from r, keeping its buffers, so that Readers
// can be pooled.
func (rd *Reader) Reset(r io.Reader) {
	*rd = Reader{r: r, maxLine: rd.maxLine, buf: rd.buf, data: rd.data[:0]}
}

// Next returns the next event or comment. At the end of the stream it
// returns io.EOF; an event not followed by a blank line before the end is
// still returned first. A read error is returned as is; a line longer than
// maxLine is an error wrapping ErrLineTooLong. Once Next has returned an
// error, it returns the same error again.
func (rd *Reader) Next() (Event, error) {
	for {
		line, err := rd.line()
		if err != nil {
			if err == io.EOF && rd.hasData {
				return rd.dispatch(), nil
			}
			return Event{}, err
		}
		if len(line) == 0 {
			if rd.hasData {
				return rd.dispatch(), nil
			}
			rd.name = ""
			continue
		}
		if line[0] == ':' {
			return Event{Data: trimSpace1(line[1:]), Comment: true}, nil
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], trimSpace1(line[i+1:])
		}
		switch string(field) {
		case "data":
			if rd.hasData {
				rd.data = append(rd.data, '\n')
			}
			rd.data = append(rd.data, value...)
			rd.hasData = true
		case "event":
			rd.name = string(value)
		}
		// id, retry and unknown fields are ignored: no upstream we speak
		// resumes streams.
	}
}

func (rd *Reader) dispatch() Event {
	ev := Event{Name: rd.name, Data: rd.data}
	rd.data = rd.data[:0]
	rd.hasData = false
	rd.name = ""
	return ev
}

func trimSpace1(b []byte) []byte {
	if len(b) > 0 && b[0] == ' ' {
		return b[1:]
	}
	return b
}

// line returns the next line without its end. The slice is valid until the
// next call.
func (rd *Reader) line() ([]byte, error) {
	scanned := 0 // bytes of buf[start:end] known to hold no line end
	for {
		if rd.skipLF && rd.start < rd.end {
			if rd.buf[rd.start] == '\n' {
				rd.start++
			}
			rd.skipLF = false
		}
		if rest := rd.buf[rd.start+scanned : rd.end]; len(rest) > 0 {
			if i := lineEnd(rest); i >= 0 {
				i += rd.start + scanned
				line := rd.buf[rd.start:i]
				rd.skipLF = rd.buf[i] == '\r'
				rd.start = i + 1
				if len(line) > rd.maxLine {
					return nil, rd.fail(fmt.Errorf("%w: more than %d bytes", ErrLineTooLong, rd.maxLine))
				}
				return line, nil
			}
			scanned = rd.end - rd.start
		}
		if rd.err != nil {
			if rd.start < rd.end { // a last line without a line end
				line := rd.buf[rd.start:rd.end]
				rd.start = rd.end
				return line, nil
			}
			return nil, rd.err
		}
		if scanned > rd.maxLine {
			return nil, rd.fail(fmt.Errorf("%w: more than %d bytes", ErrLineTooLong, rd.maxLine))
		}
		rd.fill()
	}
}

// lineEnd returns the index of the first CR or LF in b, or -1: two
// vectorised IndexByte scans rather than IndexAny's byte-at-a-time set
// test, which showed in the profile of a streamed answer (issue 18).
func lineEnd(b []byte) int {
	i := bytes.IndexByte(b, '\n')
	end := b
	if i >= 0 {
		end = b[:i]
	}
	if j := bytes.IndexByte(end, '\r'); j >= 0 {
		return j
	}
	return i
}

func (rd *Reader) fail(err error) error {
	rd.err = err
	rd.start, rd.end = 0, 0
	return err
}

// fill reads more bytes, first making room by moving unread bytes to the
// front or growing the buffer (to at most maxLine+2 bytes: a full line and
// its CRLF).
func (rd *Reader) fill() {
	if rd.start > 0 {
		rd.end = copy(rd.buf, rd.buf[rd.start:rd.end])
		rd.start = 0
	}
	if rd.end == len(rd.buf) {
		n := min(2*len(rd.buf), rd.maxLine+2)
		if n <= len(rd.buf) {
			n = len(rd.buf) + 1
		}
		nb := make([]byte, n)
		copy(nb, rd.buf[:rd.end])
		rd.buf = nb
	}
	for range 100 {
		n, err := rd.r.Read(rd.buf[rd.end:])
		rd.end += n
		if err != nil {
			rd.err = err
			return
		}
		if n > 0 {
			return
		}
	}
	rd.err = io.ErrNoProgress
}

// Buffered returns how many bytes have been read from the underlying reader
// but not yet returned as events: more events may be ready without a read.
func (r *Reader) Buffered() int { return r.end - r.start }
