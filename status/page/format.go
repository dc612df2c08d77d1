package page

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/tollfree/tollfree/status"
	"github.com/tollfree/tollfree/status/figures"
)

// pct formats a rate as a percentage; "–" when there is none.
func pct(f *float64) string {
	if f == nil {
		return "–"
	}
	return percent(*f)
}

// ms formats a latency in milliseconds: "850 ms", "1.2 s"; "–" when there
// is none.
func ms(ms int64) string {
	switch {
	case ms <= 0:
		return "–"
	case ms < 1000:
		return strconv.FormatInt(ms, 10) + " ms"
	}
	return strconv.FormatFloat(float64(ms)/1000, 'f', 1, 64) + " s"
}

// until says when t comes, relative to now: "until 10:05:30 UTC (in 4m
// 30s)", the time a <time> element the page's script shows in the
// viewer's zone; "until lifted" when t is nil. It is HTML, built only from
// times.
func until(t *time.Time, now time.Time) string {
	if t == nil {
		return "until lifted"
	}
	return "until " + stamp(*t, now) + " (in " + human(t.Sub(now)) + ")"
}

// stamp is a time as a <time> element: its text the time in UTC, as a page
// read without its script shows it, its datetime attribute for the script
// to show it in the viewer's zone, keeping the UTC text as its title. It
// is HTML, built only from the time's formats, which need no escaping.
func stamp(t, now time.Time) string {
	utc := clockTime(t, now)
	return `<time datetime="` + t.UTC().Format(time.RFC3339) + `" title="` + utc + `">` + utc + `</time>`
}

// ago says how long before now t was: "4m 30s ago"; "" when t is nil.
func ago(t *time.Time, now time.Time) string {
	if t == nil {
		return ""
	}
	return human(now.Sub(*t)) + " ago"
}

// width is a window's fill as a CSS percentage.
func width(w status.Window) string { return percent(w.Fraction()) }

// level is a window's fill as a class of its bar: ok, high (from 80%) or
// full.
func level(w status.Window) string {
	switch f := w.Fraction(); {
	case f >= 1:
		return "full"
	case f >= 0.8:
		return "high"
	}
	return "ok"
}

// plural counts n things: "1 polite retry", "2 polite retries".
func plural[N int | uint64](n N, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// latest says what a failing route's latest attempts were: "silent on 2
// of its last 2 attempts: it lost the race to another route", "3 of its
// last 4 attempts failed, 1 of them silent until another route answered";
// "" when l is nil.
func latest(l *status.Latest) string {
	if l == nil {
		return ""
	}
	last := strings.TrimPrefix(plural(l.Judged, "attempt", "attempts"), "1 ")
	switch {
	case l.Silent == l.Failed:
		return fmt.Sprintf("silent on %d of its last %s: it lost the race to another route", l.Silent, last)
	case l.Silent > 0:
		return fmt.Sprintf("%d of its last %s failed, %d of them silent until another route answered", l.Failed, last, l.Silent)
	}
	return fmt.Sprintf("%d of its last %s failed", l.Failed, last)
}

// methods lists the rescues of a route by method, in figures.Methods'
// order: "prefix 2, instruct 1".
func methods(by map[string]uint64) string {
	var parts []string
	for _, m := range figures.Methods {
		if n := by[m]; n > 0 {
			parts = append(parts, m+" "+strconv.FormatUint(n, 10))
		}
	}
	return strings.Join(parts, ", ")
}

// percent formats a fraction as a percentage to a tenth, without trailing
// zeros: 0.9 is "90%", 0.12345 is "12.3%".
func percent(f float64) string {
	return strconv.FormatFloat(math.Round(f*1000)/10, 'f', -1, 64) + "%"
}

// bar is one window drawn as a bar.
type bar struct {
	Label string
	W     status.Window
}

// bars lists the windows worth drawing: those with a limit.
func bars(ws status.Windows) []bar {
	var out []bar
	for _, b := range [...]bar{
		{"requests this month", ws.RPMo}, {"tokens this month", ws.TPMo}, {"requests today", ws.RPD}, {"requests this hour", ws.RPH}, {"requests this minute", ws.RPM},
		{"tokens today", ws.TPD}, {"tokens this hour", ws.TPH}, {"tokens this minute", ws.TPM},
	} {
		if b.W.Limit > 0 {
			out = append(out, b)
		}
	}
	return out
}

// count formats a count briefly: 950, 12.3k, 1.2M.
func count(n int64) string {
	switch {
	case n < 10_000:
		return strconv.FormatInt(n, 10)
	case n < 1_000_000:
		return strconv.FormatFloat(float64(n)/1000, 'f', 1, 64) + "k"
	}
	return strconv.FormatFloat(float64(n)/1e6, 'f', 1, 64) + "M"
}

// clockTime is t in UTC: the time of day if it is today, and the date too
// if not.
func clockTime(t, now time.Time) string {
	t = t.UTC()
	if t.Sub(now) >= 24*time.Hour || t.YearDay() != now.UTC().YearDay() {
		return t.Format("Jan 2 15:04 UTC")
	}
	return t.Format("15:04:05 UTC")
}

// human formats a duration briefly: 45s, 4m 30s, 3h 10m, 2d 4h.
func human(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	s := int64(d.Round(time.Second) / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		if s%60 == 0 {
			return fmt.Sprintf("%dm", s/60)
		}
		return fmt.Sprintf("%dm %ds", s/60, s%60)
	case s < 86400:
		return fmt.Sprintf("%dh %dm", s/3600, s%3600/60)
	}
	return fmt.Sprintf("%dd %dh", s/86400, s%86400/3600)
}
