package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/discover"
	"github.com/tollfree/tollfree/state/memstore"
)

// now is the clock `check`, `serve` and `presets` judge a preset's age by;
// tests move it.
var now = time.Now

// presetsCmd prints the catalog (issues 34 and 35): each preset with its
// status, the page it was last checked against and that page's date, the
// variable its key is read from and whether it is set, then its models
// with their free limits, what they take besides text (tools, images,
// audio), their context size and typed-answer support and, for those
// retired or no longer free, since when and what to use instead.
//
// With -read it then reads, now, the model list of every provider the
// config (or the built-in defaults, keyed from the environment) enables,
// and says which of its routes' models the list lacks and which free
// models on offer no chain uses.
func presetsCmd(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("presets", flag.ContinueOnError)
	read := fs.Bool("read", false, "also read each enabled provider's model list now: routes gone from it, free models no chain uses")
	path := fs.String("config", "", "with -read: config file, also given as the one argument (default tollfree.yaml if present, else built-in presets)")
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	if err := configArg(fs, path); err != nil {
		return err
	}
	if !*read && *path != "" {
		return fmt.Errorf("presets reads a config only with -read")
	}
	writePresets(stdout, config.Presets(), now(), os.Getenv)
	if !*read {
		return nil
	}
	plan, err := loadPlan(*path, stdout)
	if err != nil {
		return err
	}
	return writeLists(ctx, stdout, plan)
}

// writeLists reads the plan's enabled providers' model lists into a
// store of its own (nothing is written to the gateway's state) and prints
// what each says.
func writeLists(ctx context.Context, w io.Writer, plan *config.Plan) error {
	st, err := memstore.Open(memstore.Options{})
	if err != nil {
		return err
	}
	defer st.Close()
	logs := &strings.Builder{}
	d := discover.New(discover.Options{Plan: plan, Store: st, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	d.Refresh(ctx)
	found := d.Findings(ctx)
	plan, _ = plan.Expand(discover.Lists(found)) // what serve would serve now
	fmt.Fprintln(w)
	for _, name := range plan.ProviderOrder {
		pr := plan.Providers[name]
		if pr.Disabled {
			continue
		}
		f, ok := found[name]
		if !ok {
			fmt.Fprintf(w, "%s: model list not read (see below); routes left as they are\n", name)
			continue
		}
		fmt.Fprintf(w, "%s: %d models listed\n", name, len(f.Models))
		for _, id := range slices.Sorted(maps.Keys(f.Gone)) {
			fmt.Fprintf(w, "  gone: %s is not in the list\n", id)
		}
		if free := f.FreeUnused(plan, name); len(free) > 0 {
			fmt.Fprintf(w, "  free and used by no chain: %s\n", strings.Join(free, ", "))
		}
	}
	for _, name := range plan.ChainOrder {
		if pats := plan.Chains[name].Patterns; len(pats) > 0 {
			routes := strings.Join(plan.Expansion()[name], ", ")
			if routes == "" {
				routes = "no route"
			}
			fmt.Fprintf(w, "chain %s: %s expanded to %s\n", name, strings.Join(pats, ", "), routes)
		}
	}
	if logs.Len() > 0 {
		fmt.Fprint(w, logs.String())
	}
	return nil
}

func writePresets(w io.Writer, presets []config.Preset, at time.Time, getenv func(string) string) {
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
		fmt.Fprintf(w, "  key: %s\n", keyWords(p, getenv))
		fmt.Fprintf(w, "  account limits: %s; day resets %s\n", limitWords(p.Limits), p.Reset)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  MODEL\tFREE LIMITS\tTAKES\tCONTEXT\tJSON\tSTATUS")
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
			kind, took, schema := "", capsWords(config.Capabilities{Tools: m.Tools, Vision: m.Vision, Audio: m.Audio}), orDash(m.Schema)
			if schema == "-" {
				schema = orDash(p.Schema)
			}
			if m.Embedding {
				kind, took, schema = " (embeddings)", "embeddings", "-"
				if m.Dimensions > 0 {
					took = "embeddings(" + strconv.Itoa(m.Dimensions) + ")"
				}
			}
			fmt.Fprintf(tw, "  %s/%s%s\t%s\t%s\t%s\t%s\t%s\n", p.Name, m.ID, kind, limitWords(m.Limits), took, count(m.MaxContext), schema, status)
		}
		tw.Flush()
	}
}

// keyWords says where a preset's key is read from and whether it is set
// in this environment (never the key): "GROQ_API_KEY (set)", "(not set)";
// "none needed" for a provider that takes no key.
func keyWords(p config.Preset, getenv func(string) string) string {
	switch {
	case p.KeyEnv == "":
		return "none needed"
	case getenv(p.KeyEnv) != "":
		return p.KeyEnv + " (set)"
	case p.KeyOptional:
		return p.KeyEnv + " (not set: the keyless tier is used)"
	}
	return p.KeyEnv + " (not set: the provider is disabled)"
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
