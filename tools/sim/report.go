package sim

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// WriteTable writes the report as a text table, one column a policy. The
// optimum's column gives only what it computes: answers and fallbacks.
func (r *Report) WriteTable(w io.Writer) error {
	capRes, opt := r.Result(PolicyCapacity), r.Result(PolicyOptimum)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	row := func(name string, f func(x *Result) string) {
		cells := []string{name}
		for _, x := range r.Results {
			if x.Policy == PolicyOptimum && name != "" && name != "questions" && name != "answered by a model" &&
				name != "answered by the fallback" && !strings.HasPrefix(name, "  share") {
				cells = append(cells, "-")
				continue
			}
			cells = append(cells, f(x))
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
	}
	share := func(of *Result) func(x *Result) string {
		return func(x *Result) string { return fmt.Sprintf("%.1f%%", 100*float64(x.ByModel)/float64(of.ByModel)) }
	}
	row("", func(x *Result) string { return x.Policy })
	row("questions", func(*Result) string { return fmt.Sprint(r.Requests) })
	row("answered by a model", func(x *Result) string { return fmt.Sprint(x.ByModel) })
	if opt != nil && opt.ByModel > 0 {
		row("  share of optimum", share(opt))
	}
	if capRes != nil && capRes.ByModel > 0 {
		row("  share of capacity", share(capRes))
	}
	row("answered by the fallback", func(x *Result) string { return fmt.Sprint(x.ByFallback) })
	row("upstream calls", func(x *Result) string { return fmt.Sprint(x.Calls) })
	row("429s caused", func(x *Result) string { return fmt.Sprint(x.RateLimited) })
	row("calls wasted", func(x *Result) string { return fmt.Sprint(x.Calls - x.ByModel) })
	row("calls spent on failures", func(x *Result) string { return fmt.Sprint(x.FailedCalls) })
	row("calls spent on hedge losers", func(x *Result) string { return fmt.Sprint(x.LoserCalls) })
	row("tokens spent on hedge losers", func(x *Result) string { return fmt.Sprint(x.LoserTokens) })
	row("answer time p50", func(x *Result) string { return dur(x.P50) })
	row("answer time p95", func(x *Result) string { return dur(x.P95) })
	row("answer time p99", func(x *Result) string { return dur(x.P99) })
	row("driver stalls", func(x *Result) string { return fmt.Sprint(x.Stalls) })
	row("real time", func(x *Result) string { return x.Elapsed.Round(100 * time.Millisecond).String() })
	return tw.Flush()
}

func dur(d time.Duration) string {
	if d >= 10*time.Second {
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(10 * time.Millisecond).String()
}

// WriteRoutes writes, for each policy, the answers each route gave.
func (r *Report) WriteRoutes(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	cells := []string{"answers by route"}
	for _, x := range r.Results {
		cells = append(cells, x.Policy)
	}
	fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
	for _, id := range r.Chain {
		cells = []string{id}
		for _, x := range r.Results {
			cells = append(cells, fmt.Sprint(x.ByRoute[id]))
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
	}
	return tw.Flush()
}

// svg colours, one per policy in report order.
var colours = []string{"#1f77b4", "#2ca02c", "#d62728", "#7f7f7f", "#9467bd"}

// optColour is the optimum's, drawn thin in every panel.
const optColour = "#ff7f0e"

// WriteSVG draws one panel per played policy, stacked, on a common scale:
// answers by a model per hour (solid), by the fallback (dashed) and, when
// the report has it, the optimum's answers by a model (thin, orange: the
// schedule behind the bound). Each panel's legend (the policy, its
// totals, its share of the optimum and its 429s) stands above its plot
// area, clear of the lines; separate panels keep policies whose lines
// would coincide on one plot apart. A last panel draws the pacing
// (writePacing). It is a self-contained SVG.
func (r *Report) WriteSVG(w io.Writer) error {
	const W, left, right, head, panelH, gap, foot = 900, 60, 20, 40, 150, 44, 30
	opt := r.Result(PolicyOptimum)
	bin, from := r.Bin, r.From
	if bin <= 0 {
		bin = time.Hour
	}
	var played []*Result
	for _, x := range r.Results {
		if x.Policy != PolicyOptimum {
			played = append(played, x)
		}
	}
	hours, peak := 24, 1
	if r.Bin > 0 && r.Bin < time.Hour {
		hours = 1
	}
	for _, x := range r.Results {
		hours = max(hours, len(x.ByModelBin))
		for i := range x.ByModelBin {
			peak = max(peak, x.ByModelBin[i], x.FallbackBin[i])
		}
	}
	peak = niceCeil(peak)
	panels := len(played) + 1
	H := head + panels*(panelH+gap) + foot
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", W, H, W, H)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", W, H)
	per := "hour"
	if bin == time.Minute {
		per = "minute"
	}
	title := "Questions answered per " + per + " by a model (solid) and by the fallback (dashed)"
	if opt != nil {
		title += ", the optimum's (thin orange)"
	}
	fmt.Fprintf(&b, `<text x="%d" y="20" font-size="14">%s, %d questions</text>`+"\n", left, title, r.Requests)
	for i, x := range played {
		top := head + gap + i*(panelH+gap)
		share := ""
		if opt != nil && opt.ByModel > 0 {
			share = fmt.Sprintf(" (%.1f%% of the optimum)", 100*float64(x.ByModel)/float64(opt.ByModel))
		} else if c := r.Result(PolicyCapacity); c != nil && c.ByModel > 0 {
			share = fmt.Sprintf(" (%.1f%% of capacity)", 100*float64(x.ByModel)/float64(c.ByModel))
		}
		writePanel(&b, x, opt, share, colours[i%len(colours)], panel{left: left, top: top, w: W - left - right, h: panelH, hours: hours, peak: peak, bin: bin, from: from})
	}
	writePacing(&b, played, panel{left: left, top: head + gap + len(played)*(panelH+gap), w: W - left - right, h: panelH, hours: hours, bin: bin, from: from})
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// panel is where one policy's plot area is: hours is its number of bins
// of time, each bin long from from.
type panel struct {
	left, top, w, h, hours, peak int
	bin, from                    time.Duration
}

func (p panel) x(h float64) float64 { return float64(p.left) + float64(p.w)*h/float64(p.hours) }
func (p panel) y(v float64) float64 {
	return float64(p.top) + float64(p.h)*(1-v/float64(p.peak))
}

// frame draws a panel's legend (markup), its plot area, its grid and its
// hours.
func (p panel) frame(b *strings.Builder, legend string) {
	fmt.Fprintf(b, `<text class="legend" x="%d" y="%d" font-size="13">%s</text>`+"\n", p.left, p.top-10, legend)
	fmt.Fprintf(b, `<rect class="plot" x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#bbb"/>`+"\n", p.left, p.top, p.w, p.h)
	for i := 0; i <= 2; i++ {
		v := float64(p.peak) * float64(i) / 2
		y := p.y(v)
		fmt.Fprintf(b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#eee"/><text x="%d" y="%.1f" text-anchor="end">%.0f</text>`+"\n", p.left, y, p.left+p.w, y, p.left-6, y+4, v)
	}
	step := max(1, p.hours/24) * 3
	if p.bin < time.Hour {
		step = max(1, p.hours/12)
	}
	for h := 0; h <= p.hours; h += step {
		at := p.from + time.Duration(h)*p.bin
		fmt.Fprintf(b, `<text x="%.1f" y="%d" text-anchor="middle" fill="#555">%02d:%02d</text>`+"\n", p.x(float64(h)), p.top+p.h+14, int(at/time.Hour)%24, int(at/time.Minute)%60)
	}
}

// line draws a series, one point in the middle of each hour (mid true)
// or at each hour's end.
func (p panel) line(b *strings.Builder, v []int, colour, width, extra string, mid bool) {
	var pts []string
	off := 1.0
	if mid {
		off = 0.5
	}
	for h, n := range v {
		pts = append(pts, fmt.Sprintf("%.1f,%.1f", p.x(float64(h)+off), p.y(float64(n))))
	}
	fmt.Fprintf(b, `<polyline fill="none" stroke="%s" stroke-width="%s"%s points="%s"/>`+"\n", colour, width, extra, strings.Join(pts, " "))
}

// writePanel draws one policy: its legend above the plot area (share is
// its share of the optimum or of capacity, "" when unknown), the grid,
// the hours, its two lines and the optimum's answers (opt, when known).
func writePanel(b *strings.Builder, x, opt *Result, share, colour string, p panel) {
	b.WriteString(`<g class="panel">` + "\n")
	p.frame(b, fmt.Sprintf(`<tspan fill="%s" font-weight="bold">%s</tspan>: %d answered by a model%s, %d by the fallback, %d 429s caused`,
		colour, x.Policy, x.ByModel, share, x.ByFallback, x.RateLimited))
	if opt != nil {
		p.line(b, opt.ByModelBin, optColour, "1", ` class="optimum"`, true)
	}
	p.line(b, x.ByModelBin, colour, "2", "", true)
	p.line(b, x.FallbackBin, colour, "2", ` stroke-dasharray="4 3"`, true)
	b.WriteString("</g>\n")
}

// writePacing draws the pacing panel: for each played policy, the
// answers its day-capped routes have given since the day began, bin by
// bin; the even pace (dotted: each day, the most any policy got from the
// day caps, spread evenly over the day); and, for a policy that paced
// (Result.PaceBin), its own pace line (dashed, its colour). The optimum
// is left out: its schedule is one of many that answer as many, and when
// it spends the day caps is arbitrary.
func writePacing(b *strings.Builder, played []*Result, p panel) {
	dayStart := func(h int) bool { return (p.from+time.Duration(h)*p.bin)%(24*time.Hour) == 0 }
	cum := func(v []int) []int {
		out := make([]int, len(v))
		sum := 0
		for h, n := range v {
			if dayStart(h) {
				sum = 0
			}
			sum += n
			out[h] = sum
		}
		return out
	}
	peak := 1
	var most []int
	for _, x := range played {
		c := cum(x.CappedBin)
		if most == nil {
			most = make([]int, len(c))
		}
		for h, n := range c {
			peak = max(peak, n)
			most[h] = max(most[h], n)
		}
		for _, v := range x.PaceBin {
			peak = max(peak, int(v))
		}
	}
	p.peak = niceCeil(peak)
	b.WriteString(`<g class="pacing">` + "\n")
	legend := "Answers by the day-capped routes since the day began (colours as above), the even pace (dotted)"
	for _, x := range played {
		if x.PaceBin != nil {
			legend += ", " + x.Policy + "'s pace line (dashed)"
		}
	}
	p.frame(b, legend)
	// The even pace: each day's most spread over the bins of that day.
	pace := make([]int, len(most))
	for h := 0; h < len(most); {
		end := h + 1
		for end < len(most) && !dayStart(end) {
			end++
		}
		for i := h; i < end; i++ {
			pace[i] = most[end-1] * (i - h + 1) / (end - h)
		}
		h = end
	}
	p.line(b, pace, "#000", "1", ` class="pace" stroke-dasharray="1 3"`, false)
	for i, x := range played {
		p.line(b, cum(x.CappedBin), colours[i%len(colours)], "2", "", false)
		if x.PaceBin != nil {
			line := make([]int, len(x.PaceBin))
			for h, v := range x.PaceBin {
				line[h] = int(v + 0.5)
			}
			p.line(b, line, colours[i%len(colours)], "1.5", ` class="pace-line" stroke-dasharray="6 3"`, false)
		}
	}
	b.WriteString("</g>\n")
}

// niceCeil rounds n up to 1, 2 or 5 times a power of ten.
func niceCeil(n int) int {
	p := 1
	for {
		for _, m := range []int{1, 2, 5} {
			if m*p >= n {
				return m * p
			}
		}
		p *= 10
	}
}

// WritePeriods writes, for each policy, per period of the trace (three
// hours of a day, a day of a longer trace, a minute of a short one):
// the questions answered by a model, of them by the day-capped routes,
// and by the fallback. It shows where each policy loses answers, and when
// it spends the day caps.
func (r *Report) WritePeriods(w io.Writer) error {
	if len(r.Results) == 0 {
		return nil
	}
	n := len(r.Results[0].ByModelBin)
	bin := r.Bin
	if bin <= 0 {
		bin = time.Hour
	}
	group := 3
	switch {
	case bin < time.Hour:
		group = max(1, (n+14)/15)
	case n > 24:
		group = 24
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	cells := []string{"model / day caps / fallback"}
	for _, x := range r.Results {
		cells = append(cells, x.Policy)
	}
	fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
	label := func(i int) string {
		at := r.From + time.Duration(i)*bin
		if group == 24 {
			return fmt.Sprintf("day %d", int(at/(24*time.Hour))+1)
		}
		end := at + time.Duration(group)*bin
		return fmt.Sprintf("%02d:%02d-%02d:%02d", int(at/time.Hour)%24, int(at/time.Minute)%60, int(end/time.Hour)%24, int(end/time.Minute)%60)
	}
	for i := 0; i < n; i += group {
		cells = []string{label(i)}
		for _, x := range r.Results {
			var m, c, f int
			for j := i; j < min(i+group, len(x.ByModelBin)); j++ {
				m += x.ByModelBin[j]
				c += x.CappedBin[j]
				f += x.FallbackBin[j]
			}
			cells = append(cells, fmt.Sprintf("%d / %d / %d", m, c, f))
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
	}
	return tw.Flush()
}
