package secret

import (
	"io"
	"sync/atomic"
)

// Writer scrubs a Set's secrets from everything written to it. The set can
// be given after the Writer is in use (Use): the command line wraps its
// standard output and error before it has read the config that names the
// secrets. Each Write is scrubbed on its own, so a secret split across two
// writes is not seen; every writer here writes whole lines. It is safe for
// concurrent use if the underlying writer is.
type Writer struct {
	w   io.Writer
	set atomic.Pointer[Set]
}

// NewWriter returns a Writer to w scrubbing set (nil: nothing yet).
func NewWriter(w io.Writer, set *Set) *Writer {
	x := &Writer{w: w}
	x.set.Store(set)
	return x
}

// Use makes the Writer scrub set from now on.
func (x *Writer) Use(set *Set) { x.set.Store(set) }

// Write writes p with its secrets scrubbed. It reports len(p) written when
// the scrubbed text was written whole.
func (x *Writer) Write(p []byte) (int, error) {
	q := x.set.Load().ScrubBytes(p)
	if len(q) == len(p) && (len(p) == 0 || &q[0] == &p[0]) {
		return x.w.Write(p)
	}
	if _, err := x.w.Write(q); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Unwrap returns the writer it writes to, so that a caller can ask
// whether that is a terminal.
func (x *Writer) Unwrap() io.Writer { return x.w }
