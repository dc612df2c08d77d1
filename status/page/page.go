package page

import (
	"bytes"
	_ "embed"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tollfree/tollfree/status"
)

// head is the page up to its body: the meta tags and the style. foot is
// the page after its live part: the toast, the pause dialog and the
// script, ending at </html> with no newline. Both are served as they are.
//
// The script has no comments, only the indentation of the ones it had
// (the lines of two spaces): html/template, which wrote the page before,
// dropped JavaScript comments, and the page is still served byte for byte
// as it was then. What they said: the token typed on a private page stays
// in the tab's sessionStorage and goes with the page's own fetches; times
// are shown in the viewer's zone, the UTC time kept as their title; Pause
// asks in a dialog outside the live part, which the refresh would
// otherwise wipe while one types.
//
//go:embed head.html
var head string

//go:embed foot.html
var foot string

// locked is the live part of a page served without a token.
const locked = `<p class="locked" data-locked>This gateway's status is private: type a gateway key or the admin token above to see it.</p>`

// escaper escapes data for an HTML text node or a double-quoted attribute
// value exactly as html/template did in both (its htmlReplacementTable):
// the five of html.EscapeString, written the same way, plus '+' as "&#43;"
// (html/template's guard against UTF-7 sniffing) and NUL as U+FFFD.
// Keeping '+' keeps the page as it was, and it is a form secret.Set
// scrubs (secret/set.go, templateEscaper).
var escaper = strings.NewReplacer(
	"\x00", "\uFFFD", `"`, "&#34;", "&", "&amp;", "'", "&#39;", "+", "&#43;", "<", "&lt;", ">", "&gt;",
)

// writer is a page being written: WriteString for markup of our own, text
// for anything else. Numbers are written as they are; a string goes
// through text unless it is markup built here (stamp, until).
type writer struct{ bytes.Buffer }

// text writes s escaped.
func (w *writer) text(s string) { escaper.WriteString(w, s) }

func (w *writer) itoa(n int) { w.Write(strconv.AppendInt(w.AvailableBuffer(), int64(n), 10)) }

func (w *writer) utoa(n uint64) { w.Write(strconv.AppendUint(w.AvailableBuffer(), n, 10)) }

// page is the whole page; for a locked view, without data.
func (v view) page() []byte {
	var w writer
	w.WriteString(head)
	w.WriteString(`<body data-admin="`)
	w.WriteString(strconv.FormatBool(v.Admin))
	w.WriteString(`" data-private="`)
	w.WriteString(strconv.FormatBool(v.Private))
	w.WriteString(`" data-refresh="`)
	w.Write(strconv.AppendInt(w.AvailableBuffer(), v.RefreshMS, 10))
	w.WriteString(`">
<header>
<h1>tollfree status</h1>
<span class="live" id="live-ind"><span class="dot"></span><span id="updated">`)
	if v.Locked {
		w.WriteString("needs a token")
	} else {
		w.WriteString("updated ")
		w.WriteString(stamp(v.Now, v.Now))
	}
	w.WriteString("</span></span>\n")
	switch {
	case v.Private:
		w.WriteString(`<label class="admin">token <input id="token" type="password" autocomplete="off" placeholder="gateway key or admin token"></label> <span id="token-state" aria-live="polite"></span>` + "\n")
	case v.Admin:
		w.WriteString(`<label class="admin">admin token <input id="token" type="password" autocomplete="off" placeholder="to pause, resume, probe"></label> <span id="token-state" aria-live="polite"></span>` + "\n")
	default:
		w.WriteString(`<span class="admin off">admin actions off (no admin_token)</span>`)
	}
	w.WriteString("\n</header>\n" + `<main id="live">`)
	if v.Locked {
		w.WriteString(locked)
	} else {
		v.writeLive(&w)
	}
	w.WriteString("</main>\n")
	w.WriteString(foot)
	return w.Bytes()
}

// live is the live part alone, which the page fetches to refresh itself.
func (v view) live() []byte {
	var w writer
	v.writeLive(&w)
	return w.Bytes()
}

// writeLive writes the live part: the snapshot's time (which the page's
// script copies into its header), its problems, and its chains, routes
// and providers, each most urgent first.
// lines writes items, each escaped in a div of its own, in a div of
// class, after head (HTML, written as is) when it is not empty; nothing
// when there are no items.
func (w *writer) lines(class, head string, items []string) {
	if len(items) == 0 {
		return
	}
	w.WriteString(`<div class="` + class + `">`)
	if head != "" {
		w.WriteString("<div>" + head + "</div>")
	}
	for _, it := range items {
		w.WriteString("<div>")
		w.text(it)
		w.WriteString("</div>")
	}
	w.WriteString("</div>")
}

func (v view) writeLive(w *writer) {
	w.WriteString(`<span hidden data-now>`)
	w.WriteString(stamp(v.Now, v.Now))
	w.WriteString("</span>\n")
	w.lines("problems", "", v.Problems)
	// What the providers' headers say unlike the configuration (issue 35).
	w.lines("problems said", "Limits the providers report unlike the configuration (the provider's figure is in force):", v.LimitsSaid)
	if len(v.FreeUnused) > 0 {
		// Free models on offer that no chain uses (issue 35).
		w.WriteString(`<div class="problems free"><div>Free models on offer that no chain uses:</div>`)
		for _, prov := range slices.Sorted(maps.Keys(v.FreeUnused)) {
			w.WriteString("<div>")
			w.text(prov + ": " + strings.Join(v.FreeUnused[prov], ", "))
			w.WriteString("</div>")
		}
		w.WriteString("</div>")
	}
	w.section("Chains", "grid")
	for _, c := range v.ChainsByUrgency() {
		w.chain(&c, v.Now)
	}
	w.WriteString(sectionEnd)
	w.section("Routes", "grid")
	for _, r := range v.RoutesByUrgency() {
		w.route(&r, v.Now, v.Admin)
	}
	w.WriteString(sectionEnd)
	w.section("Providers", "provs")
	for _, p := range v.ProvidersByUrgency() {
		w.provider(&p, v.Now, v.Admin)
	}
	w.WriteString(sectionEnd)
}

// section opens a section of the live part: its heading, and the grid
// (of class class) its cards go in, which sectionEnd closes.
func (w *writer) section(title, class string) {
	w.WriteString("\n<h2>" + title + "</h2>\n<div class=\"" + class + "\">")
}

const sectionEnd = "\n</div>\n"

// chain writes a chain's card.
func (w *writer) chain(c *status.Chain, now time.Time) {
	w.card("chain", c.Name, c.State)
	w.itoa(c.Ready)
	w.WriteString(" of ")
	w.text(plural(len(c.Routes), "route", "routes"))
	w.WriteString(" ready · fallback: ")
	w.text(c.Fallback)
	w.pill(c.State, c.State)
	w.WriteString(`<dl class="figs">` + "\n")
	w.fig("success", pct(c.SuccessRate))
	w.fig("failover", pct(c.FailoverRate))
	w.fig("p50", ms(c.P50MS))
	w.fig("p95", ms(c.P95MS))
	w.WriteString("</dl>\n" + `<div class="last">`)
	w.utoa(c.Answered)
	w.WriteString(" answered · ")
	w.utoa(c.Unanswered)
	w.WriteString(" unanswered · ")
	w.utoa(c.Cached)
	w.WriteString(" cached")
	if c.StreamsRescued > 0 {
		w.WriteString(" · ")
		w.text(plural(c.StreamsRescued, "broken stream", "broken streams"))
		w.WriteString(" rescued")
	}
	w.WriteString("</div>\n")
	if c.Pace != nil {
		w.chainPace(c.Pace, now)
	}
	w.WriteString("</section>")
}

// chainPace writes a chain's pacing of its day caps (issue 31): today's
// answers, what is left of the day caps, and how long they last.
func (w *writer) chainPace(p *status.ChainPace, now time.Time) {
	w.WriteString(`<div class="last" data-pace>`)
	if !p.Forecast {
		w.WriteString("pace: on, no forecast yet</div>\n")
		return
	}
	w.WriteString("today: ")
	w.text(plural(int(p.AnsweredToday), "answer by a model", "answers by a model"))
	w.WriteString(" · day caps left: about ")
	w.text(count(int64(math.Round(p.CapsLeft))))
	w.WriteString(" · ")
	switch {
	case p.CapsLast != nil:
		w.WriteString("day caps last until about ")
		w.WriteString(stamp(*p.CapsLast, now))
		w.WriteString(" at this rate")
	default:
		w.WriteString("day caps last until their resets at this rate")
	}
	w.WriteString(" · pace: ")
	switch {
	case p.Binding && len(p.Held) > 0:
		w.WriteString("holding back ")
		w.text(strings.Join(p.Held, ", "))
	case p.Binding:
		w.WriteString("caps bind, all within pace")
	default:
		w.WriteString("caps will not bind, chain order kept")
	}
	w.WriteString("</div>\n")
}

// route writes a route's card: its rest or failure, its budget bars, its
// figures and, with admin on, its buttons.
func (w *writer) route(r *status.Route, now time.Time, admin bool) {
	w.card("route", r.ID, r.State)
	for i, c := range r.Chains {
		if i > 0 {
			w.WriteString(", ")
		}
		w.text(c)
	}
	if len(r.Chains) == 0 {
		w.WriteString("in no chain")
	}
	w.pill(r.State, r.State)
	w.why(r.Rest, now, true)
	w.WriteString("\n")
	if r.State == status.Failing {
		w.WriteString(`<div class="why" data-failing><b>failing</b> <span class="reason">`)
		w.text(latest(r.Latest))
		w.WriteString("</span></div>")
	}
	w.WriteString("\n")
	if b := bars(r.Budget); len(b) > 0 {
		w.bars(b)
	}
	w.WriteString("\n")
	for _, p := range r.Pace {
		w.routePace(p)
	}
	if b := bars(r.ProviderBudget); len(b) > 0 {
		w.WriteString(`<div class="scope">account-wide</div>`)
		w.bars(b)
	}
	w.WriteString("\n" + `<dl class="figs">` + "\n")
	w.fig("p50", ms(r.P50MS))
	w.fig("p95", ms(r.P95MS))
	w.fig("success", pct(r.SuccessRate))
	w.fig("failover", pct(r.FailoverRate))
	w.WriteString("</dl>\n" + `<div class="last">`)
	w.text(plural(r.Attempts, "attempt", "attempts"))
	if r.Cached > 0 {
		w.WriteString(" · ")
		w.text(plural(r.Cached, "answer from the cache", "answers from the cache"))
	}
	if r.SilentLosses > 0 {
		w.WriteString(` · <span data-silent>`)
		w.text(plural(r.SilentLosses, "race lost in silence", "races lost in silence"))
		w.WriteString("</span>")
	}
	if r.SchemaFailures > 0 {
		w.WriteString(" · ")
		w.text(plural(r.SchemaFailures, "schema failure", "schema failures"))
	}
	if r.LastError != "" {
		w.WriteString(" · last error <code>")
		w.text(r.LastError)
		w.WriteString("</code> ")
		w.text(ago(r.LastErrorAt, now))
	}
	w.WriteString("</div>\n")
	if r.StreamsRescued > 0 || r.PoliteRetries > 0 {
		w.WriteString(`<div class="last" data-rescues>`)
		if r.StreamsRescued > 0 {
			w.WriteString("rescued ")
			w.text(plural(r.StreamsRescued, "broken stream", "broken streams"))
			w.WriteString(" (")
			w.text(methods(r.RescuedBy))
			w.WriteString(")")
		}
		if r.StreamsRescued > 0 && r.PoliteRetries > 0 {
			w.WriteString(" · ")
		}
		if r.PoliteRetries > 0 {
			w.text(plural(r.PoliteRetries, "polite retry", "polite retries"))
			w.WriteString(", ")
			w.utoa(r.PoliteRetriesAnswered)
			w.WriteString(" answered")
		}
		w.WriteString("</div>")
	}
	w.WriteString("\n")
	if admin && r.State != status.Disabled {
		// Resume lifts a pause and Lift rest a rest, both only when they
		// were put on the route itself, not on its whole provider.
		own := r.Rest != nil && r.Rest.Key == r.ID
		w.WriteString(`<div class="acts">` + "\n")
		w.button("probe", "route", r.ID, "", "Probe")
		w.WriteString("\n")
		switch {
		case r.State != status.Paused:
			w.button("pause", "route", r.ID, "", "Pause")
		case own:
			w.button("resume", "route", r.ID, "", "Resume")
		}
		w.WriteString("\n")
		if own && r.State != status.Paused {
			w.button("resume", "route", r.ID, "lift the rest now", "Lift rest")
		}
		w.WriteString("\n</div>")
	}
	w.WriteString("\n</section>")
}

// provider writes a provider's card.
func (w *writer) provider(p *status.Provider, now time.Time, admin bool) {
	w.card("provider", p.Name, p.State)
	w.text(plural(len(p.Routes), "route", "routes"))
	if p.Enabled != 0 && p.State != status.Disabled {
		w.WriteString(" · ")
		w.itoa(p.Ready)
		w.WriteString(" of ")
		w.itoa(p.Enabled)
		w.WriteString(" ready")
	}
	label := p.State
	if p.State == status.Partly {
		label = "partly " + p.NotReady
	}
	w.pill(p.State, label)
	w.why(p.Rest, now, false)
	w.WriteString("\n")
	if admin && p.State != status.Disabled {
		w.WriteString(`<div class="acts">` + "\n")
		w.button("probe", "provider", p.Name, "", "Probe")
		w.WriteString("\n")
		if p.Rest != nil {
			w.button("resume", "provider", p.Name, "", "Resume")
		} else {
			w.button("pause", "provider", p.Name, "", "Pause")
		}
		w.WriteString("\n</div>")
	}
	w.WriteString("\n</section>")
}

// card opens the card of a chain, route or provider (kind) up to the text
// under its name, which pill ends.
func (w *writer) card(kind, name, state string) {
	w.WriteString("\n" + `<section class="card `)
	w.text(state)
	w.WriteString(`" data-` + kind + `="`)
	w.text(name)
	w.WriteString(`" data-state="`)
	w.text(state)
	w.WriteString(`">` + "\n" + `<div class="top"><div><div class="name">`)
	w.text(name)
	w.WriteString(`</div><div class="sub">`)
}

// pill ends the top of a card with its state, labelled label.
func (w *writer) pill(state, label string) {
	w.WriteString(`</div></div><span class="pill `)
	w.text(state)
	w.WriteString(`">`)
	w.text(label)
	w.WriteString("</span></div>\n")
}

// why says why a route or a provider is not ready: its rest, if any. A
// route's says when the rest is its whole provider's.
func (w *writer) why(r *status.Rest, now time.Time, route bool) {
	if r == nil {
		return
	}
	w.WriteString(`<div class="why">`)
	if r.Class == status.Disabled {
		if route {
			w.WriteString("<b>disabled</b>")
		}
		w.reason(r.Reason)
	} else {
		w.WriteString("<b>")
		w.text(r.Class)
		w.WriteString("</b>")
		if route && strings.HasPrefix(r.Key, "provider:") {
			w.WriteString(" (whole provider)")
		}
		w.WriteString(" ")
		w.WriteString(until(r.Until, now))
		if r.Reason != "" {
			w.reason(r.Reason)
		}
	}
	w.WriteString("</div>")
}

func (w *writer) reason(s string) {
	w.WriteString(`<span class="reason">`)
	w.text(s)
	w.WriteString("</span>")
}

// fig writes one figure of a card's <dl>.
func (w *writer) fig(name, value string) {
	w.WriteString("<div><dt>" + name + "</dt><dd>")
	w.text(value)
	w.WriteString("</dd></div>\n")
}

// bars draws windows, each its use against its limit.
func (w *writer) bars(bs []bar) {
	w.WriteString(`<div class="bars">`)
	for _, b := range bs {
		w.WriteString(`<div class="bar"><div class="lbl"><span>`)
		w.text(b.Label)
		w.WriteString("</span><span>")
		w.text(count(b.W.Used))
		w.WriteString(" / ")
		w.text(count(b.W.Limit))
		w.WriteString(`</span></div><div class="track"><div class="fill `)
		w.text(level(b.W))
		w.WriteString(`" style="width:`)
		w.WriteString(width(b.W)) // digits, a point, maybe a minus, and %
		w.WriteString(`"></div></div></div>`)
	}
	w.WriteString("</div>")
}

// routePace writes a day-capped route's spend against its pace line in
// one chain: a bar with the line marked.
func (w *writer) routePace(p status.RoutePace) {
	w.WriteString(`<div class="bars" data-pace-route><div class="bar"><div class="lbl"><span>pace in `)
	w.text(p.Chain)
	if p.Held {
		w.WriteString(" (held)")
	}
	w.WriteString("</span><span>")
	w.text(count(int64(math.Round(p.Used))))
	w.WriteString(" spent / line ")
	w.text(count(int64(math.Round(p.Line))))
	w.WriteString(" / cap ")
	w.text(count(int64(math.Round(p.Cap))))
	w.WriteString(`</span></div><div class="track paced"><div class="fill`)
	if p.Held {
		w.WriteString(" high")
	}
	w.WriteString(`" style="width:`)
	w.WriteString(percent(fraction(p.Used, p.Cap)))
	w.WriteString(`"></div><div class="pace-line" style="left:`)
	w.WriteString(percent(fraction(p.Line, p.Cap)))
	w.WriteString(`"></div></div></div></div>`)
}

func fraction(a, b float64) float64 {
	if b <= 0 {
		return 0
	}
	return min(max(a/b, 0), 1)
}

// button writes an admin action's button; title may be empty.
func (w *writer) button(act, kind, target, title, label string) {
	w.WriteString(`<button data-act="` + act + `" data-kind="` + kind + `" data-target="`)
	w.text(target)
	if title != "" {
		w.WriteString(`" title="`)
		w.text(title)
	}
	w.WriteString(`">` + label + "</button>")
}
