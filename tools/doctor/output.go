package doctor

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/llm"
	"github.com/tollfree/tollfree/quota"
)

// promptTokens estimates the probe prompt's size as the budget book would.
func promptTokens() int {
	return quota.Estimate(&llm.Request{Messages: []llm.Message{{Role: "user", Content: probePrompt}}})
}

// writeHeader prints the config line, the keys, and what the run will cost.
func writeHeader(w io.Writer, o *Options, jobs []providerJob, planned int) {
	p := o.Plan
	fmt.Fprintf(w, "config %s: valid, %s, %s, %s\n", o.Source, plural(len(p.ProviderOrder), "provider"), plural(len(p.RouteOrder), "route"), plural(len(p.ChainOrder), "chain"))
	fmt.Fprintln(w, "\nkeys:")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, name := range p.ProviderOrder {
		pr := p.Providers[name]
		routes := 0
		for _, id := range p.RouteOrder {
			if p.Routes[id].Provider == pr {
				routes++
			}
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", name, keyState(pr), plural(routes, "route"))
	}
	tw.Flush()

	nroutes := 0
	for _, j := range jobs {
		nroutes += len(j.routes)
	}
	fmt.Fprintln(w)
	if nroutes == 0 {
		fmt.Fprintln(w, "nothing to probe: no route is enabled (set a provider key; `tollfree check` lists them)")
		return
	}
	fmt.Fprintf(w, "probing spends quota: %d routes at %s, at most %s, each asking for at most %d answer tokens (prompt ~%d tokens)",
		nroutes, plural(len(jobs), "provider"), plural(planned, "request"), o.MaxTokens, promptTokens())
	if o.NoThinking {
		fmt.Fprintln(w)
	} else {
		fmt.Fprintln(w, "; thinking-level probes may spend thinking tokens on top (-thinking=false skips them)")
	}
	for _, j := range jobs {
		n := 0
		for _, rj := range j.routes {
			n += rj.requests()
		}
		fmt.Fprintf(w, "  %s: at most %s, %d answer tokens\n", j.provider.Name, plural(n, "request"), n*o.MaxTokens)
	}
	for _, j := range jobs {
		for _, rj := range j.routes {
			if rpd := rj.route.Limits.RPD; rpd > 0 && rj.requests()*10 >= rpd {
				fmt.Fprintf(w, "  note: %s: %s is %d%% of its %d a day\n", rj.route.ID, plural(rj.requests(), "request"), rj.requests()*100/rpd, rpd)
			}
		}
	}
}

func keyState(pr *config.Provider) string {
	switch {
	case pr.Disabled:
		return "missing (" + pr.DisabledReason + "): its routes are not probed"
	case pr.APIKey != "" && pr.KeySource != "":
		return "present (" + pr.KeySource + ")"
	case pr.APIKey != "":
		return "present (in the config file)"
	}
	return "none needed"
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// writeDryRun lists each route to probe with its requests.
func writeDryRun(w io.Writer, o *Options, jobs []providerJob) {
	fmt.Fprintln(w, "\ndry run: nothing is sent. Would probe:")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  ROUTE\tREQUESTS\tTHINKING LEVELS\tRPM\tRPD")
	for _, j := range jobs {
		for _, rj := range j.routes {
			var names []string
			for _, l := range rj.levels {
				names = append(names, l.name)
			}
			fmt.Fprintf(tw, "  %s\t%d\t%s\t%s\t%s\n", rj.route.ID, rj.requests(), orDash(strings.Join(names, ", ")),
				limit(rj.route.Limits.RPM), limit(rj.route.Limits.RPD))
		}
	}
	tw.Flush()
}

func limit(n int) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprint(n)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// writeProgress prints one finished route.
func writeProgress(w io.Writer, done, total int, r *RouteResult) {
	fmt.Fprintf(w, "  [%d/%d] %s: %s", done, total, r.Route, r.Result)
	if r.Result == ResultOK {
		fmt.Fprintf(w, " in %s", fmtLatency(r.Latency))
	}
	if r.Detail != "" {
		fmt.Fprintf(w, " (%s)", r.Detail)
	}
	if len(r.Thinking) > 0 {
		fmt.Fprintf(w, "; thinking: %s", thinkingSummary(r.Thinking))
	}
	fmt.Fprintln(w)
	for _, l := range r.Thinking {
		if l.Result != LevelAccepted {
			fmt.Fprintf(w, "         %s %s: %s (%s)\n", l.Level, l.Result, l.Class, l.Detail)
		}
	}
}

func fmtLatency(d time.Duration) string {
	return d.Round(time.Millisecond).String()
}

// thinkingSummary says which levels were accepted, refused and untested:
// "accepts LOW MEDIUM HIGH; refuses MINIMAL".
func thinkingSummary(ls []LevelResult) string {
	var acc, ref, unk []string
	for _, l := range ls {
		switch l.Result {
		case LevelAccepted:
			acc = append(acc, l.Level)
		case LevelRefused:
			ref = append(ref, l.Level)
		default:
			unk = append(unk, l.Level)
		}
	}
	var parts []string
	if len(acc) > 0 {
		parts = append(parts, "accepts "+strings.Join(acc, " "))
	}
	if len(ref) > 0 {
		parts = append(parts, "refuses "+strings.Join(ref, " "))
	}
	if len(unk) > 0 {
		parts = append(parts, "untested "+strings.Join(unk, " "))
	}
	return strings.Join(parts, "; ")
}

// writeResults prints the route table, the chains and the spend.
func writeResults(w io.Writer, rep *Report) {
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ROUTE\tRESULT\tHTTP\tLATENCY\tTOKENS IN/OUT\tTHINKING\tDETAIL")
	for i := range rep.Routes {
		r := &rep.Routes[i]
		status, lat, tokens := "-", "-", "-"
		if r.Status != 0 {
			status = fmt.Sprint(r.Status)
		}
		if r.Requests > 0 {
			lat = fmtLatency(r.Latency)
			tokens = fmt.Sprintf("%d/%d", r.TokensIn, r.TokensOut)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Route, r.Result, status, lat, tokens,
			orDash(thinkingSummary(r.Thinking)), orDash(r.Detail))
	}
	tw.Flush()

	fmt.Fprintln(w)
	for _, c := range rep.Chains {
		if len(c.Working) == 0 {
			fmt.Fprintf(w, "chain %s: NO WORKING ROUTE (0 of %d)\n", c.Chain, c.Routes)
			continue
		}
		fmt.Fprintf(w, "chain %s: %d of %s working, first %s\n", c.Chain, len(c.Working), plural(c.Routes, "route"), c.Working[0])
	}

	if len(rep.LimitsSaid) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "limits the providers report unlike the configuration (the provider's figure is used):")
		for _, l := range rep.LimitsSaid {
			fmt.Fprintln(w, "  "+l)
		}
	}

	fmt.Fprintln(w)
	if len(rep.Spent) == 0 {
		fmt.Fprintln(w, "spent: nothing")
		return
	}
	total := Spend{}
	for _, s := range rep.Spent {
		total.Requests += s.Requests
		total.MaxAnswerTokens += s.MaxAnswerTokens
		total.TokensIn += s.TokensIn
		total.TokensOut += s.TokensOut
	}
	fmt.Fprintf(w, "spent: %s (answers capped at %d tokens); providers reported %d tokens in, %d out\n",
		plural(total.Requests, "request"), total.MaxAnswerTokens, total.TokensIn, total.TokensOut)
	for _, s := range rep.Spent {
		fmt.Fprintf(w, "  %s: %s, %d tokens in, %d out\n", s.Provider, plural(s.Requests, "request"), s.TokensIn, s.TokensOut)
	}
}
