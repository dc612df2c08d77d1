package main

import (
	"fmt"
	"io"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/tollfree/tollfree/config"
)

// writeCheckTable writes the plan's providers, then each chain's routes, as
// aligned text for `tollfree check`: status (ready, or disabled with the
// reason), limits, reset, timeout, context size, what the model takes
// besides text (tools, images, audio; or embeddings) and where the key
// comes from; then who may call, with which limits. It never writes a key, a
// token or a header value.
func writeCheckTable(w io.Writer, p *config.Plan) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PROVIDER\tFLAVOR\tDIALECT\tSTATUS\tRPM\tRPD\tTPM\tTPD\tRPH\tTPH\tTPMO\tRPMO\tRESET\tKEY\tBASE URL")
	for _, name := range p.ProviderOrder {
		pr := p.Providers[name]
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
			pr.Name, pr.Flavor, pr.Dialect, statusCell(pr.Disabled, pr.DisabledReason), limitCells(pr.Limits),
			pr.Reset.String(), orDash(pr.KeySource), redactURL(pr.BaseURL))
	}
	tw.Flush()
	for _, name := range p.ChainOrder {
		c := p.Chains[name]
		fmt.Fprintf(w, "\nchain %s: %s\n", c.Name, chainSummary(c))
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "RANK\tROUTE\tSTATUS\tRPM\tRPD\tTPM\tTPD\tRPH\tTPH\tTPMO\tRPMO\tRESET\tTIMEOUT\tCONTEXT\tTAKES\tFLAGS\tKEY")
		for i, r := range c.Routes {
			timeout := "chain"
			if r.Timeout > 0 {
				timeout = r.Timeout.String()
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
				c.Ranks[i], r.ID, statusCell(r.Disabled, r.DisabledReason), limitCells(r.Limits),
				r.Reset.String(), timeout, count(r.MaxContext), takes(r), routeFlags(r), orDash(r.Provider.KeySource))
		}
		tw.Flush()
	}
	writeCallers(w, p)
}

// limitCells is the limit columns, RPM to RPMO, tab-separated.
func limitCells(l config.Limits) string {
	return strings.Join([]string{count(l.RPM), count(l.RPD), count(l.TPM), count(l.TPD),
		count(l.RPH), count(l.TPH), count(l.TPMo), count(l.RPMo)}, "\t")
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

func statusCell(disabled bool, reason string) string {
	if disabled {
		return "disabled (" + reason + ")"
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

// takes is what a route takes besides text (issue 33): "tools vision
// -audio" ("-" for what it does not take, "?" for what nothing says), or,
// for an embedding model, "embeddings" and its dimensions.
func takes(r *config.Route) string {
	if r.Embedding {
		if r.Dimensions > 0 {
			return "embeddings(" + strconv.Itoa(r.Dimensions) + ")"
		}
		return "embeddings"
	}
	return strings.ReplaceAll(r.Caps.String(), " ", ",")
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
		f = append(f, "extra="+strings.Join(slices.Sorted(maps.Keys(r.Extra)), ","))
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
	parts = append(parts, "reasoning "+c.Reasoning, "idle "+c.IdleTimeout.String())
	switch c.Fallback.Kind {
	case config.FallbackMessage:
		parts = append(parts, "fallback message")
	case config.FallbackSearch:
		parts = append(parts, "fallback search "+c.Fallback.Content)
	default:
		parts = append(parts, "fallback error")
	}
	return strings.Join(parts, ", ")
}
