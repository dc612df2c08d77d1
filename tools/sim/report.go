package sim

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// WriteTable writes the report as a text table, one column a policy.
func (r *Report) WriteTable(w io.Writer) error {
	capRes := r.Result(PolicyCapacity)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	row := func(name string, f func(x *Result) string) {
		cells := []string{name}
		for _, x := range r.Results {
			cells = append(cells, f(x))
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
	}
	row("", func(x *Result) string { return x.Policy })
	row("questions", func(*Result) string { return fmt.Sprint(r.Requests) })
	row("answered by a model", func(x *Result) string { return fmt.Sprint(x.ByModel) })
	if capRes != nil && capRes.ByModel > 0 {
		row("  share of capacity", func(x *Result) string {
			return fmt.Sprintf("%.1f%%", 100*float64(x.ByModel)/float64(capRes.ByModel))
		})
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
var colours = []string{"#1f77b4", "#2ca02c", "#d62728", "#7f7f7f"}

// WriteSVG draws one panel per policy, stacked, on a common scale:
// answers by a model per hour (solid) and by the fallback (dashed). Each
// panel's legend (the policy, its totals and its 429s) stands above its
// plot area, clear of the lines; separate panels keep policies whose lines
// would coincide on one plot apart. It is a self-contained SVG.
func (r *Report) WriteSVG(w io.Writer) error {
	const W, left, right, head, panelH, gap, foot = 900, 60, 20, 40, 150, 44, 30
	hours, peak := 24, 1
	for _, x := range r.Results {
		hours = max(hours, len(x.ByModelHour))
		for i := range x.ByModelHour {
			peak = max(peak, x.ByModelHour[i], x.FallbackHour[i])
		}
	}
	peak = niceCeil(peak)
	H := head + len(r.Results)*(panelH+gap) + foot
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", W, H, W, H)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", W, H)
	fmt.Fprintf(&b, `<text x="%d" y="20" font-size="14">Questions answered per hour by a model (solid) and by the fallback (dashed), %d questions, one panel per policy</text>`+"\n", left, r.Requests)
	for i, x := range r.Results {
		top := head + gap + i*(panelH+gap)
		share := ""
		if c := r.Result(PolicyCapacity); c != nil && c.ByModel > 0 {
			share = fmt.Sprintf(" (%.1f%% of capacity)", 100*float64(x.ByModel)/float64(c.ByModel))
		}
		writePanel(&b, x, share, colours[i%len(colours)], panel{left: left, top: top, w: W - left - right, h: panelH, hours: hours, peak: peak})
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// panel is where one policy's plot area is.
type panel struct {
	left, top, w, h, hours, peak int
}

func (p panel) x(h float64) float64 { return float64(p.left) + float64(p.w)*h/float64(p.hours) }
func (p panel) y(v float64) float64 {
	return float64(p.top) + float64(p.h)*(1-v/float64(p.peak))
}

// writePanel draws one policy: its legend above the plot area (share is
// its share of capacity, "" when unknown), the grid, the hours and its two
// lines.
func writePanel(b *strings.Builder, x *Result, share, colour string, p panel) {
	fmt.Fprintf(b, `<g class="panel">`+"\n")
	fmt.Fprintf(b, `<text class="legend" x="%d" y="%d" font-size="13"><tspan fill="%s" font-weight="bold">%s</tspan>: %d answered by a model%s, %d by the fallback, %d 429s caused</text>`+"\n",
		p.left, p.top-10, colour, x.Policy, x.ByModel, share, x.ByFallback, x.RateLimited)
	fmt.Fprintf(b, `<rect class="plot" x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#bbb"/>`+"\n", p.left, p.top, p.w, p.h)
	for i := 0; i <= 2; i++ {
		v := float64(p.peak) * float64(i) / 2
		y := p.y(v)
		fmt.Fprintf(b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#eee"/><text x="%d" y="%.1f" text-anchor="end">%.0f</text>`+"\n", p.left, y, p.left+p.w, y, p.left-6, y+4, v)
	}
	step := max(1, p.hours/24) * 3
	for h := 0; h <= p.hours; h += step {
		fmt.Fprintf(b, `<text x="%.1f" y="%d" text-anchor="middle" fill="#555">%02d:00</text>`+"\n", p.x(float64(h)), p.top+p.h+14, h%24)
	}
	for _, series := range []struct {
		v    []int
		dash string
	}{{x.ByModelHour, ""}, {x.FallbackHour, ` stroke-dasharray="4 3"`}} {
		var pts []string
		for h, v := range series.v {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", p.x(float64(h)+0.5), p.y(float64(v))))
		}
		fmt.Fprintf(b, `<polyline fill="none" stroke="%s" stroke-width="2"%s points="%s"/>`+"\n", colour, series.dash, strings.Join(pts, " "))
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
