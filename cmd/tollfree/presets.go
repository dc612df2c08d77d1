package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tollfree/tollfree/config"
)

// now is the clock `check`, `serve` and `presets` judge a preset's age by;
// tests move it.
var now = time.Now

// presetsCmd prints the catalog (issue 35): each preset with its status,
// the page it was last checked against and that page's date, then its
// models with their free limits and, for those retired or no longer free,
// since when and what to use instead.
func presetsCmd(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("presets", flag.ContinueOnError)
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("presets takes no argument, not %q", strings.Join(fs.Args(), " "))
	}
	writePresets(stdout, config.Presets(), now())
	return nil
}

func writePresets(w io.Writer, presets []config.Preset, at time.Time) {
	for i, p := range presets {
		if i > 0 {
			fmt.Fprintln(w)
		}
		c := p.Checked
		status := c.Status.String()
		if c.Status != config.StatusActive {
			status += " since " + c.Since + "; use " + c.Instead
		}
		age := ""
		if when, err := c.When(); err == nil {
			days := int(at.Sub(when) / (24 * time.Hour))
			age = fmt.Sprintf(", %d days ago", days)
			if at.Sub(when) > config.StaleAfter && c.Status != config.StatusRetired {
				age += " (stale: re-check)"
			}
		}
		fmt.Fprintf(w, "%s: %s\n", p.Name, status)
		fmt.Fprintf(w, "  checked: %s dated %s%s\n", c.URL, c.Date, age)
		fmt.Fprintf(w, "  %s\n", c.Note)
		fmt.Fprintf(w, "  account limits: %s; day resets %s\n", limitWords(p.Limits), p.Reset)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, m := range p.Models {
			var status string
			switch {
			case c.Status == config.StatusRetired:
				status = "retired with the preset"
			case m.Status == config.StatusRetired:
				status = "retired " + m.Retired + ", use " + m.Instead
			case m.Status == config.StatusPaidOnly:
				status = "paid-only since " + m.Retired + ", use " + m.Instead
			default:
				status = "active"
			}
			kind := ""
			if m.Embedding {
				kind = " (embeddings)"
			}
			fmt.Fprintf(tw, "  %s/%s%s\t%s\t%s\n", p.Name, m.ID, kind, limitWords(m.Limits), status)
		}
		tw.Flush()
	}
}

// limitWords is a preset's limits as a config file writes them ("rpm 30,
// rpd 1000"), or "none published".
func limitWords(l config.Limits) string {
	var parts []string
	for _, f := range []struct {
		name string
		n    int
	}{{"rpm", l.RPM}, {"rpd", l.RPD}, {"tpm", l.TPM}, {"tpd", l.TPD}, {"rph", l.RPH}, {"tph", l.TPH}, {"tpmo", l.TPMo}, {"rpmo", l.RPMo}} {
		if f.n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", f.name, f.n))
		}
	}
	if len(parts) == 0 {
		return "none published"
	}
	return strings.Join(parts, ", ")
}

// writeCatalogNotes prints the warnings about the presets the plan's
// chains use: a check older than 120 days, a paid-only preset, a retired
// model (config.Plan.CatalogNotes).
func writeCatalogNotes(w io.Writer, plan *config.Plan) {
	for _, n := range plan.CatalogNotes(now()) {
		fmt.Fprintln(w, "warning: "+n.Text)
	}
}
