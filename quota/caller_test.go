package quota

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tollfree/tollfree/state"
)

// seed 000: 15 questions an hour and 40 a day per visitor, 3,000 a day for
// the site; seed 004: a reserve for the owner.
var siteLimits = CallerLimits{PerHour: 15, PerDay: 40, SiteDay: 3000, Reserve: 100}

func admit(t *testing.T, b *Book, caller string, owner bool, l CallerLimits) Admission {
	t.Helper()
	a, err := b.Admit(context.Background(), caller, owner, l)
	if err != nil {
		t.Fatalf("Admit: %v", err)
	}
	return a
}

func TestAdmitCallerLimits(t *testing.T) {
	b, _, clk := newTestBook(t0)
	for i := range 15 {
		clk.Set(t0.Add(time.Duration(i) * time.Minute))
		if a := admit(t, b, "visitor-a", false, siteLimits); !a.OK {
			t.Fatalf("question %d refused: %+v", i+1, a)
		}
	}
	a := admit(t, b, "visitor-a", false, siteLimits)
	if a.OK || a.Limit != "caller hour" || !a.RetryAt.Equal(t0.Add(time.Hour)) {
		t.Errorf("16th in an hour: got %+v, want caller hour until %v", a, t0.Add(time.Hour))
	}
	if a := admit(t, b, "visitor-b", false, siteLimits); !a.OK {
		t.Errorf("another visitor: got %+v, want OK", a)
	}
	// The sliding hour frees the first 10-minute slot's questions.
	clk.Set(t0.Add(time.Hour))
	for i := range 10 {
		if a := admit(t, b, "visitor-a", false, siteLimits); !a.OK {
			t.Fatalf("question %d after an hour refused: %+v", i+1, a)
		}
	}
	clk.Set(t0.Add(2 * time.Hour))
	for i := range 15 {
		if a := admit(t, b, "visitor-a", false, siteLimits); !a.OK {
			t.Fatalf("question %d of the third hour refused: %+v", i+1, a)
		}
	}
	clk.Set(t0.Add(3 * time.Hour)) // the hour is free again, the day is not
	a = admit(t, b, "visitor-a", false, siteLimits)
	if a.OK || a.Limit != "caller day" || !a.RetryAt.Equal(t0.Add(24*time.Hour)) {
		t.Errorf("41st today: got %+v, want caller day until %v", a, t0.Add(24*time.Hour))
	}
	// An owner skips the per-caller limits.
	for range 20 {
		if a := admit(t, b, "visitor-a", true, siteLimits); !a.OK {
			t.Fatalf("owner refused: %+v", a)
		}
	}
}

func TestAdmitSiteDayReserve(t *testing.T) {
	b, _, _ := newTestBook(t0)
	n := 0
	for i := range 3000 {
		if a := admit(t, b, fmt.Sprintf("visitor-%d", i), false, siteLimits); !a.OK {
			if a.Limit != "site day" {
				t.Fatalf("visitor %d: got %+v, want site day", i, a)
			}
			break
		}
		n++
	}
	if n != 2900 {
		t.Errorf("visitors admitted: got %d, want 2900 (3000 less the owner's 100)", n)
	}
	for i := range 100 {
		if a := admit(t, b, "owner", true, siteLimits); !a.OK {
			t.Fatalf("owner question %d refused: %+v", i+1, a)
		}
	}
	if a := admit(t, b, "owner", true, siteLimits); a.OK || a.Limit != "site day" {
		t.Errorf("owner past the whole site day: got %+v, want site day", a)
	}
	if a := admit(t, b, "x", false, CallerLimits{SiteDay: 5, Reserve: 5}); a.OK || a.Limit != "site day" {
		t.Errorf("all reserved: got %+v, want refused", a)
	}
	if a := admit(t, b, "x", false, CallerLimits{}); !a.OK {
		t.Errorf("no limits: got %+v, want OK", a)
	}
}

func TestAdmitHashesCaller(t *testing.T) {
	b, st, _ := newTestBook(t0)
	const id = "gw-key-sk-secret-123"
	admit(t, b, id, false, siteLimits)
	keys := st.keys()
	if len(keys) != 3 {
		t.Errorf("keys: got %d, want 3", len(keys))
	}
	for _, k := range keys {
		if strings.Contains(k, id) || strings.Contains(k, "secret") {
			t.Errorf("a counter key holds the raw caller id")
		}
	}
}

func TestAdmitStoreDown(t *testing.T) {
	b, st, _ := newTestBook(t0)
	st.setErr(errDown())
	a, err := b.Admit(context.Background(), "v", false, siteLimits)
	if !a.OK || !errors.Is(err, state.ErrUnavailable) {
		t.Errorf("Admit with the store down: got %+v, %v; want OK and a wrapped ErrUnavailable", a, err)
	}
}
