package main

import (
	"fmt"
	"io"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/tollfree/tollfree/config"
)

// writeCheckTable writes the plan's providers, then each chain's routes, as
// aligned text for `tollfree check`: status (ready, or why it is
// disabled), limits, reset, timeout, context size, what the model takes
// besides text (tools, images, audio; or embeddings) and where the key
// comes from; then who may call, with which limits. It never writes a key, a
// token or a header value. A line stays within about 200 characters (issue
// 34): the limits are one cell, a route's key and reset are its provider's
// (shown in the providers' table), and a preset's own base URL is "preset".
func writeCheckTable(w io.Writer, p *config.Plan) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PROVIDER\tPRESET\tDIALECT\tSTATUS\tLIMITS\tRESET\tKEY\tBASE URL")
	for _, name := range p.ProviderOrder {
		pr := p.Providers[name]
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
			pr.Name, orDash(pr.Preset), pr.Dialect, statusCell(pr.Disabled, pr.DisabledReason), limitCell(pr.Limits),
			pr.Reset.String(), orDash(pr.KeySource), baseURLCell(pr))
	}
	tw.Flush()
	for _, name := range p.ChainOrder {
		c := p.Chains[name]
		fmt.Fprintf(w, "\nchain %s: %s\n", c.Name, chainSummary(c))
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "RANK\tROUTE\tSTATUS\tLIMITS\tTIMEOUT\tCONTEXT\tTAKES\tFLAGS")
		for i, r := range c.Routes {
			timeout := "chain"
			if r.Timeout > 0 {
				timeout = r.Timeout.String()
			}
			flags := routeFlags(r)
			if r.Reset != r.Provider.Reset {
				flags = strings.TrimPrefix(flags+" reset="+strings.ReplaceAll(r.Reset.String(), " ", "_"), "- ")
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
				c.Ranks[i], r.ID, routeStatus(r), limitCell(r.Limits), timeout, count(r.MaxContext), takes(r), flags)
		}
		tw.Flush()
		for _, pat := range c.Patterns {
			fmt.Fprintf(w, "  %s (free models, largest context first)\n", config.PatternNote(pat))
		}
		for _, r := range c.Routes {
			if len(r.Extra) > 0 {
				fmt.Fprintf(w, "  %s sends extra fields: %s\n", r.ID, strings.Join(slices.Sorted(maps.Keys(r.Extra)), ", "))
			}
		}
	}
	writeCallers(w, p)
}

// limitCell is every limit set, in one cell, named as in the config:
// "rpm=30 rpd=1000 tpm=12k tpd=100k"; "-" for none.
func limitCell(l config.Limits) string {
	var b strings.Builder
	for _, x := range []struct {
		name string
		n    int
	}{{"rpm", l.RPM}, {"rpd", l.RPD}, {"tpm", l.TPM}, {"tpd", l.TPD}, {"rph", l.RPH}, {"tph", l.TPH}, {"tpmo", l.TPMo}, {"rpmo", l.RPMo}} {
		if x.n == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(x.name + "=" + short(x.n))
	}
	return orDash(b.String())
}

// short writes n with k, M or G when that loses nothing: 250000 is 250k,
// 14400 stays 14400.
func short(n int) string {
	for _, u := range []struct {
		div    int
		suffix string
	}{{1_000_000_000, "G"}, {1_000_000, "M"}, {1000, "k"}} {
		if n >= u.div && n%u.div == 0 {
			return strconv.Itoa(n/u.div) + u.suffix
		}
	}
	return strconv.Itoa(n)
}

// quotedVar matches a ${VAR} in a regexp.QuoteMeta'd string.
var quotedVar = regexp.MustCompile(`\\\$\\\{[^}]*\\\}`)

// baseURLCell is the provider's base URL, credentials dropped, or "preset"
// when it is its preset's own (a ${VAR} in the preset's filled by
// anything).
func baseURLCell(pr *config.Provider) string {
	if ps, ok := config.LookupPreset(pr.Preset); ok && ps.BaseURL != "" {
		pattern := "^" + quotedVar.ReplaceAllString(regexp.QuoteMeta(ps.BaseURL), `[^/]*`) + "$"
		if m, err := regexp.MatchString(pattern, pr.BaseURL); err == nil && m {
			return "preset"
		}
	}
	return redactURL(pr.BaseURL)
}

// routeStatus is a route's status: ready, disabled by itself (its reason),
// or "off: provider" when its provider is disabled (the reason is in the
// providers' table).
func routeStatus(r *config.Route) string {
	if r.Disabled && r.Provider.Disabled && r.DisabledReason == r.Provider.DisabledReason {
		return "off: provider"
	}
	return statusCell(r.Disabled, r.DisabledReason)
}

// redactURL drops the credentials a base URL may carry
// (https://user:pass@host).
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return s
	}
	u.User = url.User("redacted")
	return u.String()
}

// statusCell is "ready", or why it is disabled ("no key: set GROQ_API_KEY").
func statusCell(disabled bool, reason string) string {
	if disabled {
		return orDash(reason)
	}
	return "ready"
}

func count(n int) string {
	if n == 0 {
		return "-"
	}
	return strconv.Itoa(n)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// takes is what a route takes besides text (issue 33): "tools,vision"
// ("?" for what nothing says; "text" for nothing else), or,
// for an embedding model, "embeddings" and its dimensions.
func takes(r *config.Route) string {
	if r.Embedding {
		if r.Dimensions > 0 {
			return "embeddings(" + strconv.Itoa(r.Dimensions) + ")"
		}
		return "embeddings"
	}
	return capsWords(r.Caps)
}

// capsWords is what a model takes besides text, as check and presets show
// it: "tools,vision" ("?" for what nothing says; "text" for nothing else).
func capsWords(caps config.Capabilities) string {
	var took []string
	for _, c := range strings.Fields(caps.String()) {
		if !strings.HasPrefix(c, "-") { // what it does not take goes unsaid
			took = append(took, c)
		}
	}
	if len(took) == 0 {
		return "text"
	}
	return strings.Join(took, ",")
}

func routeFlags(r *config.Route) string {
	var f []string
	for _, x := range []struct {
		on   bool
		name string
	}{{r.Scarce, "scarce"}, {r.Plentiful, "plentiful"}, {r.Reasoning, "reasoning"},
		{r.Continuation == config.ContinuePrefix, "prefix"}, {r.Continuation == config.ContinueOff, "continuation=off"}} {
		if x.on {
			f = append(f, x.name)
		}
	}
	if r.Schema != config.SchemaNone {
		f = append(f, "schema="+r.Schema.String())
	}
	if r.MaxOutput > 0 {
		f = append(f, "max_output="+strconv.Itoa(r.MaxOutput))
	}
	if len(r.Extra) > 0 {
		f = append(f, "extra") // named under the table (extraNotes)
	}
	return orDash(strings.Join(f, " "))
}

func chainSummary(c *config.Chain) string {
	parts := []string{
		"attempt " + c.AttemptTimeout.String(),
		"first token " + c.FirstTokenTimeout.String(),
		"deadline " + c.Deadline.String(),
	}
	if c.HedgeDelay > 0 {
		parts = append(parts, fmt.Sprintf("hedge %s (max %d in flight, min daily %d)", c.HedgeDelay, c.MaxInFlight, c.HedgeMinDaily))
	}
	parts = append(parts, fmt.Sprintf("margin %g (config-only limits)", c.Margin))
	if c.Pace {
		parts = append(parts, "paced")
	} else {
		parts = append(parts, "pace off")
	}
	if c.SameModel {
		parts = append(parts, "same model")
	}
	switch {
	case c.PerRequestVectors:
		parts = append(parts, "embeddings (vectors per request)")
	case c.Embeddings:
		parts = append(parts, "embeddings (one model)")
	}
	if c.Interactive {
		parts = append(parts, "interactive")
	} else {
		parts = append(parts, "waits up to "+c.WaitCap.String())
	}
	if c.CacheTTL > 0 {
		parts = append(parts, "cache "+c.CacheTTL.String())
	}
	for _, x := range []struct {
		on   bool
		name string
	}{{c.LatencyAware, "latency aware"}, {c.HideRoute, "hides route"}, {c.FailoverOnRefusal, "fails over on refusal"}, {c.TrimSystem, "trims system"}} {
		if x.on {
			parts = append(parts, x.name)
		}
	}
	switch {
	case !c.RetryBlips:
		parts = append(parts, "no blip retry")
	case c.BlipWait != config.DefaultBlipWait:
		parts = append(parts, "blip wait "+c.BlipWait.String())
	}
	if c.KeepExchanges > 0 {
		parts = append(parts, fmt.Sprintf("keeps %d exchanges", c.KeepExchanges))
	}
	if c.RequireSchema {
		parts = append(parts, "requires schema")
	}
	if c.SchemaRepairs != config.DefaultSchemaRepairs {
		parts = append(parts, fmt.Sprintf("%d schema repairs", c.SchemaRepairs))
	}
	if c.TypedCalls != config.DefaultTypedCalls && c.TypedCalls > 0 {
		parts = append(parts, fmt.Sprintf("typed requests spend at most %d calls", c.TypedCalls))
	}
	parts = append(parts, "reasoning "+c.Reasoning, "idle "+c.IdleTimeout.String())
	switch c.Fallback.Kind {
	case config.FallbackMessage:
		parts = append(parts, "fallback message")
	case config.FallbackSearch:
		parts = append(parts, "fallback search "+c.Fallback.Content)
	default:
		parts = append(parts, "fallback error")
	}
	return wrapParts(parts, len("chain "+c.Name+": "), summaryWidth)
}

// summaryWidth is where a chain's summary line is wrapped.
const summaryWidth = 160

// wrapParts joins parts with ", ", starting a new line indented by two
// spaces before a part that would carry the line past width (the first
// line starts at column first).
func wrapParts(parts []string, first, width int) string {
	var b strings.Builder
	col := first
	for i, p := range parts {
		if i > 0 {
			b.WriteByte(',')
			col++
			if col+1+len(p) > width {
				b.WriteString("\n ")
				col = 1
			}
			b.WriteByte(' ')
			col++
		}
		b.WriteString(p)
		col += len(p)
	}
	return b.String()
}
