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
	for _, id := range chain {
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

// WriteSVG draws answers by a model per hour for each policy, and the
// fallback answers of each below the axis, as a self-contained SVG.
func (r *Report) WriteSVG(w io.Writer) error {
	const W, H, left, right, top, bottom = 900, 420, 60, 20, 40, 70
	hours := 0
	peak := 1
	for _, x := range r.Results {
		hours = max(hours, len(x.ByModelHour))
		for i := range x.ByModelHour {
			peak = max(peak, x.ByModelHour[i]+x.FallbackHour[i])
		}
	}
	if hours == 0 {
		hours = 24
	}
	peak = niceCeil(peak)
	pw, ph := float64(W-left-right), float64(H-top-bottom)
	px := func(h float64) float64 { return left + pw*h/float64(hours) }
	py := func(v float64) float64 { return top + ph*(1-v/float64(peak)) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", W, H, W, H)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", W, H)
	fmt.Fprintf(&b, `<text x="%d" y="20" font-size="14">Questions answered by a model per hour (solid) and by the fallback (dashed), %d questions</text>`+"\n", left, r.Requests)
	for i := 0; i <= 4; i++ {
		v := float64(peak) * float64(i) / 4
		y := py(v)
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/><text x="%d" y="%.1f" text-anchor="end">%.0f</text>`+"\n", left, y, W-right, y, left-6, y+4, v)
	}
	step := max(1, hours/24) * 3
	for h := 0; h <= hours; h += step {
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%02d:00</text>`+"\n", px(float64(h)), H-bottom+16, h%24)
	}
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>`+"\n", left, H-bottom, W-right, H-bottom)
	for i, x := range r.Results {
		c := colours[i%len(colours)]
		for _, series := range []struct {
			v    []int
			dash string
		}{{x.ByModelHour, ""}, {x.FallbackHour, ` stroke-dasharray="4 3"`}} {
			var pts []string
			for h, v := range series.v {
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", px(float64(h)+0.5), py(float64(v))))
			}
			fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="%d"%s points="%s"/>`+"\n", c, 2+(len(r.Results)-1-i), series.dash, strings.Join(pts, " "))
		}
		lx := left + 10 + i*210
		fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="3"/><text x="%d" y="%d">%s: %d by model, %d fallback</text>`+"\n",
			lx, H-22, lx+20, H-22, c, lx+25, H-18, x.Policy, x.ByModel, x.ByFallback)
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
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
