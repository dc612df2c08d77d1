package secret

import (
	"context"
	"fmt"
	"log/slog"
)

// NewHandler returns a slog.Handler that scrubs set's secrets from every
// record's message and attribute values (strings, errors, anything
// printed) before h sees them. With an empty set it returns h.
func NewHandler(h slog.Handler, set *Set) slog.Handler {
	if set.Len() == 0 {
		return h
	}
	return &handler{h: h, set: set}
}

type handler struct {
	h   slog.Handler
	set *Set
}

func (x *handler) Enabled(ctx context.Context, l slog.Level) bool { return x.h.Enabled(ctx, l) }

func (x *handler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, x.set.Scrub(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(x.attr(a))
		return true
	})
	return x.h.Handle(ctx, out)
}

func (x *handler) WithAttrs(as []slog.Attr) slog.Handler {
	clean := make([]slog.Attr, len(as))
	for i, a := range as {
		clean[i] = x.attr(a)
	}
	return &handler{h: x.h.WithAttrs(clean), set: x.set}
}

func (x *handler) WithGroup(name string) slog.Handler {
	return &handler{h: x.h.WithGroup(name), set: x.set}
}

// attr returns a with its value scrubbed. A value that is not a string is
// kept as it is unless its printed form holds a secret; then it becomes
// that printed form, scrubbed.
func (x *handler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		v = slog.StringValue(x.set.Scrub(v.String()))
	case slog.KindGroup:
		g := v.Group()
		clean := make([]slog.Attr, len(g))
		for i, ga := range g {
			clean[i] = x.attr(ga)
		}
		v = slog.GroupValue(clean...)
	case slog.KindAny:
		var s string
		switch t := v.Any().(type) {
		case error:
			s = t.Error()
		case fmt.Stringer:
			s = t.String()
		default:
			s = fmt.Sprintf("%+v", t)
		}
		if clean := x.set.Scrub(s); clean != s {
			v = slog.StringValue(clean)
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}
