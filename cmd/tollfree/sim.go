package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tollfree/tollfree/tools/sim"
)

// simulate runs `tollfree sim`: a day (or days) of traffic on a virtual
// clock against the emulated free tiers, tollfree beside a naive chain.
func simulate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("sim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	shape := fs.String("shape", sim.ShapeSite, "the traffic: site (seed 000's day), chat (a chat bot's day), batch (an evaluation job's calls back to back), week (seven site days) or wrong-limits (a site day, the emulator's limits 50% off the presets)")
	policies := fs.String("policies", "tollfree,learned,naive,capacity,optimum", "the policies, comma-separated: tollfree, learned (tollfree with limits learned), naive, capacity (greedy), optimum (the bound)")
	days := fs.Int("days", 1, "days of generated traffic (site, chat, wrong-limits)")
	trace := fs.String("trace", "", "read the trace from this CSV file (seconds from the start, prompt tokens) instead of generating one")
	seed := fs.Uint64("seed", 0, "seed of the generated trace")
	requests := fs.Int("requests", 0, "questions a day in the generated trace, calls for the batch (default: 3,000, seed 000's site cap; chat 4,000; batch 600)")
	out := fs.String("out", "", "write sim.txt (the tables) and sim.svg (the plot) into this folder")
	incidents := fs.Bool("incidents", true, "replay seed 000's incidents every day (503s, a slow model, a hung call)")
	chainName := fs.String("chain", "", "the routes asked: capped (seed 000's routes with a daily cap, so that the day binds; the default but for the batch) or seed000 (all 13, NVIDIA's uncapped 40 a minute included)")
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	if *days < 1 || *days > 31 || *requests < 0 {
		return fmt.Errorf("-days must be 1 to 31 and -requests at least 1")
	}
	sh, err := sim.MakeShape(*shape, *requests, *days, *seed)
	if err != nil {
		return fmt.Errorf("-shape must be one of %s, not %q", strings.Join(sim.Shapes(), ", "), *shape)
	}
	tr := sh.Trace
	if *trace != "" {
		f, err := os.Open(*trace)
		if err != nil {
			return fmt.Errorf("opening the trace: %w", err)
		}
		tr, err = sim.ReadTrace(f)
		f.Close()
		if err != nil {
			return err
		}
	}
	o := sim.Options{Trace: tr, Chain: sh.Chain, Scale: sh.Scale}
	switch *chainName {
	case "":
		*chainName = "capped"
		if *shape == sim.ShapeBatch {
			*chainName = "gpt-oss-120b"
		}
	case "capped":
		o.Chain = sim.CappedChain()
	case "seed000":
		o.Chain = sim.Chain()
	default:
		return fmt.Errorf("-chain must be capped or seed000, not %q", *chainName)
	}
	if o.Scale != nil {
		// The wrong limits are the shape's chain's; a route added by
		// -chain keeps its own.
		o.Scale = sim.WrongScale(o.Chain, *seed)
	}
	for _, p := range strings.Split(*policies, ",") {
		name, ok := map[string]string{"tollfree": sim.PolicyTollfree, "learned": sim.PolicyLearning, "naive": sim.PolicyNaive,
			"capacity": sim.PolicyCapacity, "optimum": sim.PolicyOptimum}[strings.TrimSpace(p)]
		if !ok {
			return fmt.Errorf("-policies: %q is not one of tollfree, learned, naive, capacity, optimum", p)
		}
		o.Policies = append(o.Policies, name)
	}
	if *incidents {
		o.Incidents = sim.Incidents()
	}
	fmt.Fprintf(stderr, "simulating %d questions on a virtual clock: %s...\n", len(tr), strings.Join(o.Policies, "; "))
	o.Progress = simProgress(progressTo(stderr))
	rep, err := sim.Run(ctx, o)
	if err != nil {
		return err
	}
	var text bytes.Buffer
	fmt.Fprintf(&text, "-shape %s (%s, seed %d): %d questions from %s over %d day(s), a chain of %d routes (-chain %s)", sh.Name, sh.What, *seed, rep.Requests, rep.Start.Format("2006-01-02 15:04 MST"), rep.Days, len(rep.Chain), *chainName)
	if *trace != "" {
		fmt.Fprintf(&text, ", the trace read from %s", filepath.Base(*trace))
	}
	if len(rep.Incidents) > 0 {
		fmt.Fprintf(&text, ", with %d incidents a day", len(rep.Incidents))
	}
	text.WriteString("\n")
	if len(rep.Scale) > 0 {
		text.WriteString("limits the emulator enforces, against the presets the gateway is configured with:")
		for _, id := range rep.Chain {
			fmt.Fprintf(&text, " %s ×%g;", id, rep.Scale[id])
		}
		text.WriteString("\n")
	}
	text.WriteString("\n")
	if err := rep.WriteTable(&text); err != nil {
		return err
	}
	text.WriteString("\n")
	if err := rep.WriteRoutes(&text); err != nil {
		return err
	}
	text.WriteString("\n")
	if err := rep.WritePeriods(&text); err != nil {
		return err
	}
	if _, err := stdout.Write(text.Bytes()); err != nil {
		return err
	}
	if *out == "" {
		return nil
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", *out, err)
	}
	if err := os.WriteFile(filepath.Join(*out, "sim.txt"), text.Bytes(), 0o644); err != nil {
		return fmt.Errorf("writing the tables: %w", err)
	}
	var svg bytes.Buffer
	if err := rep.WriteSVG(&svg); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(*out, "sim.svg"), svg.Bytes(), 0o644); err != nil {
		return fmt.Errorf("writing the plot: %w", err)
	}
	fmt.Fprintf(stdout, "\nwrote %s and %s\n", filepath.Join(*out, "sim.txt"), filepath.Join(*out, "sim.svg"))
	return nil
}

// simProgress prints a line as each policy starts and how long the one
// before took: a run takes minutes.
func simProgress(w io.Writer) func(policy string, done, total int) {
	began := time.Now()
	return func(policy string, done, total int) {
		if done > 0 {
			fmt.Fprintf(w, " done in %s\n", time.Since(began).Round(time.Second))
		}
		began = time.Now()
		if policy != "" {
			fmt.Fprintf(w, "  [%d/%d] %s ...", done+1, total, policy)
		}
	}
}
