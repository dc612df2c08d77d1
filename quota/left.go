package quota

import (
	"context"
	"fmt"
	"time"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/state"
)

// Window is one budget's state.
type Window struct {
	// Limit is the limit in force (configured or learned, before the
	// chain's margin); 0 means none is known.
	Limit int64
	// Used is the window's count now.
	Used int64
	// Resets is when the window next changes: the next slot expiry of a
	// sliding window, the next reset of a midnight day.
	Resets time.Time
	// Learned reports that Limit came from the provider's headers.
	Learned bool
}

// Remaining returns Limit − Used, at least 0; ok is false with no limit.
func (w Window) Remaining() (n int64, ok bool) {
	if w.Limit <= 0 {
		return 0, false
	}
	return max(w.Limit-w.Used, 0), true
}

// Budget is the windows of a route or a provider: the minute and the day
// always, the hour and the month only where a limit is configured.
type Budget struct {
	RPM, RPD, TPM, TPD   Window
	RPH, TPH, TPMo, RPMo Window
}

func (b *Budget) at(k kind) *Window {
	switch k {
	case rpm:
		return &b.RPM
	case rpd:
		return &b.RPD
	case tpm:
		return &b.TPM
	case tpd:
		return &b.TPD
	case rph:
		return &b.RPH
	case tph:
		return &b.TPH
	case tpmo:
		return &b.TPMo
	default:
		return &b.RPMo
	}
}

// Left is what a route may still spend, for the status page and hedging.
type Left struct {
	// Route is the route's own windows; Provider its provider's
	// account-wide ones (zero when the route has no provider).
	Route    Budget
	Provider Budget
}

// DailyLeft returns the requests the route may still make today: the
// smaller remainder of its own and its provider's RPD. limited is false when
// neither has a daily limit, that is, plenty left.
func (l Left) DailyLeft() (n int64, limited bool) {
	for _, w := range [...]Window{l.Route.RPD, l.Provider.RPD} {
		if r, ok := w.Remaining(); ok && (!limited || r < n) {
			n, limited = r, true
		}
	}
	return n, limited
}

// Left reports the route's and its provider's windows. A Store error is
// returned wrapped, with the limits still filled in.
func (b *Book) Left(ctx context.Context, r *config.Route) (Left, error) {
	now := b.clock.Now()
	var out Left
	scArr, nsc := scopes(r)
	sc := scArr[:nsc]
	spends := make([]state.Spend, 0, len(sc)*int(nKinds))
	wins := make([]*Window, 0, cap(spends))
	for i, s := range sc {
		bud := &out.Route
		if i > 0 {
			bud = &out.Provider
		}
		for k := kind(0); k < nKinds; k++ {
			if !k.counted(s.limits) {
				continue
			}
			w := windowFor(k, s.reset, now)
			win := bud.at(k)
			win.Limit = b.limit(s, k, now)
			win.Learned = b.learnedAt(s, k, now)
			win.Resets = w.firstExpiry()
			spends = append(spends, w.spend(counterKey(s.key, k), 0, 0))
			wins = append(wins, win)
		}
	}
	sums, err := b.store.Sums(ctx, spends)
	if err != nil {
		return out, fmt.Errorf("quota: left %s: %w", r.ID, err)
	}
	for i := range wins {
		if i < len(sums) {
			wins[i].Used = sums[i]
		}
	}
	return out, nil
}
