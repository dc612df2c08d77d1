package tollfree

import (
	"errors"
	"io/fs"
	"maps"
	"strconv"

	"github.com/tollfree/tollfree/calllog"
	"github.com/tollfree/tollfree/state"
)

// persistHealth is the optional ability of a state store that writes files
// (memstore.Store): the error of its last write, nil when writing works.
type persistHealth interface {
	Health() error
}

// health returns what /healthz adds to its "status": the lines of extra
// (the state store's condition, from cmd/tollfree), then "call_log" and,
// for a store that writes files, "state_files": "ok", or what is failing
// and what is being done about it (issue 10: a full disk is reported, not
// silent). The lines name no path: /healthz is open to anyone.
func (g *Gateway) health(extra func() map[string]string) func() map[string]string {
	return func() map[string]string {
		m := make(map[string]string)
		if extra != nil {
			maps.Copy(m, extra())
		}
		g.contentHealth(m)
		if g.log != nil {
			m["call_log"] = callLogHealth(g.log.Health())
		}
		if ph, ok := storeAbility[persistHealth](g.store); ok {
			m["state_files"] = "ok"
			if err := ph.Health(); err != nil {
				m["state_files"] = "failing (" + cause(err) + "): rests, pauses and counts hold in memory; writing them is retried every second"
			}
		}
		return m
	}
}

func callLogHealth(h calllog.Health) string {
	dropped := strconv.FormatInt(h.Dropped, 10) + " records dropped"
	switch {
	case h.Err != nil:
		return "failing (" + cause(h.Err) + "): records are held and retried; " + dropped
	case h.Dropped > 0:
		return "ok; " + dropped + " while writing failed"
	}
	return "ok"
}

// cause is err without the path an *fs.PathError carries ("no space left on
// device").
func cause(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// storeAbility finds an optional ability of a store, looking through the
// wrappers the gateway puts around it (scrubStore).
func storeAbility[T any](s state.Store) (T, bool) {
	for {
		if t, ok := s.(T); ok {
			return t, true
		}
		u, ok := s.(interface{ Unwrap() state.Store })
		if !ok {
			var zero T
			return zero, false
		}
		s = u.Unwrap()
	}
}
