package calllog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// MaxLine is the longest line Reader decodes; a longer one is skipped as
// bad. Writer's records are a few hundred bytes.
const MaxLine = 1 << 20

// Reader reads a call log one record at a time, holding one line in
// memory, so that a log of any size can be read. Lines that are not records
// (a line cut short by a crash, a stray edit) are skipped and counted. It
// is not safe for concurrent use.
type Reader struct {
	br       *bufio.Reader
	line     int
	bad      int
	firstBad int
	long     []byte // assembles a line longer than the bufio buffer
}

// NewReader reads records from r.
func NewReader(r io.Reader) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, 64<<10)}
}

// Next decodes the next record into rec. It returns io.EOF after the last
// one, or the read error that stopped it. Blank lines are skipped; a line
// that does not decode, or has no time or route, is counted as bad (Bad)
// and skipped.
func (r *Reader) Next(rec *Record) error {
	for {
		line, err := r.readLine()
		if line == nil && err != nil {
			return err
		}
		r.line++
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		*rec = Record{}
		if len(line) > MaxLine || json.Unmarshal(line, rec) != nil || rec.Time.IsZero() || rec.Route == "" {
			r.bad++
			if r.firstBad == 0 {
				r.firstBad = r.line
			}
			continue
		}
		return nil
	}
}

// readLine returns the next line without its newline, and an error only
// when no line is left (io.EOF) or reading failed. A line over MaxLine is
// returned cut at MaxLine+1 bytes, its rest discarded.
func (r *Reader) readLine() ([]byte, error) {
	r.long = r.long[:0]
	for {
		chunk, err := r.br.ReadSlice('\n')
		if err == nil && len(r.long) == 0 {
			return chunk[:len(chunk)-1], nil
		}
		if len(r.long) <= MaxLine {
			r.long = append(r.long, chunk[:min(len(chunk), MaxLine+1-len(r.long))]...)
		}
		switch {
		case err == nil:
			return bytes.TrimSuffix(r.long, []byte("\n")), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if len(r.long) == 0 {
				return nil, io.EOF
			}
			return r.long, nil // a last line without its newline
		default:
			return nil, fmt.Errorf("calllog: reading line %d: %w", r.line+1, err)
		}
	}
}

// Lines returns how many lines were read so far.
func (r *Reader) Lines() int { return r.line }

// Bad returns how many lines were skipped as not records, and the number
// of the first (0 when none).
func (r *Reader) Bad() (n, first int) { return r.bad, r.firstBad }
