package cache

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tollfree/tollfree/llm"
)

// Entry is one cached answer, whole.
type Entry struct {
	// Route is the provider/model that answered ("groq/llama-3.3-70b-versatile").
	Route string
	// Content, Reasoning and FinishReason are the answer's, as llm.Response.
	Content      string
	Reasoning    string
	FinishReason string
	// ToolCalls is the assistant's tool_calls array, verbatim.
	ToolCalls json.RawMessage
	// Usage is what the answer cost when it was first made; UsageKnown is
	// false when the upstream reported none.
	Usage      llm.Usage
	UsageKnown bool
	// Created is when the answer was made. Cache.Do sets it from its clock
	// when fn leaves it zero.
	Created time.Time
}

// Empty reports whether e holds no answer: no content but whitespace, and
// no tool call. Reasoning alone is no answer. The cache never stores an
// empty entry.
func (e *Entry) Empty() bool {
	return len(e.ToolCalls) == 0 && strings.TrimSpace(e.Content) == ""
}

// entryVersion is the first byte of every encoded Entry. A new layout takes
// a new number; UnmarshalBinary refuses numbers it does not know, and the
// cache treats such entries as misses.
const entryVersion = 1

const (
	flagUsageKnown = 1 << iota
	flagCreated
)

// ErrEntryVersion is wrapped by UnmarshalBinary for an entry written by an
// encoding version this build does not know.
var ErrEntryVersion = errors.New("unknown entry encoding version")

// errTruncated reports an encoded entry cut short or malformed.
var errTruncated = errors.New("truncated or malformed entry")

// MarshalBinary encodes e: a version byte, a flags varint, then the strings
// length-prefixed and the counts as varints.
func (e *Entry) MarshalBinary() ([]byte, error) {
	n := 1 + 6*binary.MaxVarintLen64 + 5*binary.MaxVarintLen64 +
		len(e.Route) + len(e.Content) + len(e.Reasoning) + len(e.FinishReason) + len(e.ToolCalls) +
		5*binary.MaxVarintLen64
	b := make([]byte, 0, n)
	b = append(b, entryVersion)
	var flags uint64
	if e.UsageKnown {
		flags |= flagUsageKnown
	}
	if !e.Created.IsZero() {
		flags |= flagCreated
	}
	b = binary.AppendUvarint(b, flags)
	for _, s := range [...]string{e.Route, e.Content, e.Reasoning, e.FinishReason} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	b = binary.AppendUvarint(b, uint64(len(e.ToolCalls)))
	b = append(b, e.ToolCalls...)
	u := &e.Usage
	for _, v := range [...]int{u.PromptTokens, u.CompletionTokens, u.TotalTokens, u.ReasoningTokens, u.CachedTokens} {
		b = binary.AppendVarint(b, int64(v))
	}
	if !e.Created.IsZero() {
		b = binary.AppendVarint(b, e.Created.UnixNano())
	}
	return b, nil
}

// UnmarshalBinary decodes what MarshalBinary encoded, replacing e. It copies
// out of data, so data may be reused afterwards. It fails, wrapping
// ErrEntryVersion, for an unknown version, and for any truncated, malformed
// or over-long input.
func (e *Entry) UnmarshalBinary(data []byte) error {
	if len(data) == 0 {
		return fmt.Errorf("cache: decode entry: %w", errTruncated)
	}
	if data[0] != entryVersion {
		return fmt.Errorf("cache: decode entry: version %d: %w", data[0], ErrEntryVersion)
	}
	d := decoder{b: data[1:]}
	var out Entry
	flags := d.uvarint()
	out.Route = d.str()
	out.Content = d.str()
	out.Reasoning = d.str()
	out.FinishReason = d.str()
	if tc := d.bytes(); len(tc) > 0 {
		out.ToolCalls = json.RawMessage(append([]byte(nil), tc...))
	}
	u := &out.Usage
	for _, p := range [...]*int{&u.PromptTokens, &u.CompletionTokens, &u.TotalTokens, &u.ReasoningTokens, &u.CachedTokens} {
		*p = int(d.varint())
	}
	out.UsageKnown = flags&flagUsageKnown != 0
	if flags&flagCreated != 0 {
		out.Created = time.Unix(0, d.varint()).UTC()
	}
	if d.bad || len(d.b) != 0 {
		return fmt.Errorf("cache: decode entry: %w", errTruncated)
	}
	*e = out
	return nil
}

// decoder reads varints and length-prefixed bytes; after the first error
// it sets bad and returns zero values.
type decoder struct {
	b   []byte
	bad bool
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.bad = true
		d.b = nil
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.bad = true
		d.b = nil
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) bytes() []byte {
	n := d.uvarint()
	if d.bad || n > uint64(len(d.b)) {
		d.bad = true
		d.b = nil
		return nil
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) str() string { return string(d.bytes()) }
