package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/tollfree/tollfree/status/logstats"
)

const logUsage = `Usage:
  tollfree log stats [-config FILE] [-file LOG | LOG] [-tz ZONE] [-json]

stats reads the call log and prints, per route and day: calls, ok, failover
rate, schema failures (answers that broke their request's schema), latency
p50/p95 of ok calls, tokens, requests and tokens used against the route's
daily limits, cached answers and the outcome mix; then, for the routes and
days that have any, and in total: the broken streams each route rescued, by
method (prefix, instruct, afresh), and the polite retries of a blip made on
it, with how many answered.
`

// logCmd runs the call-log tools (issue 6, part 5).
func logCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "stats" {
		if len(args) > 0 && args[0] != "-h" && args[0] != "-help" && args[0] != "help" {
			fmt.Fprintf(stderr, "tollfree log: unknown subcommand %q\n\n", args[0])
		}
		fmt.Fprint(stderr, logUsage)
		return usageError{errors.New("log: subcommand required")}
	}
	return logStats(args[1:], stdout, stderr)
}

func logStats(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("log stats", flag.ContinueOnError)
	fs.SetOutput(stderr)
	path := fs.String("config", "", "config file: where the log is and the routes' daily limits (default tollfree.yaml if present, else built-in presets)")
	file := fs.String("file", "", `call log to read, "-" for standard input (default the config's call_log, i.e. data_dir/calls.jsonl)`)
	tz := fs.String("tz", "UTC", "time zone days are counted in (America/Los_Angeles matches Gemini's daily reset)")
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	if fs.NArg() == 1 && *file == "" {
		// `tollfree log stats FILE`, as the demo prints it.
		*file = fs.Arg(0)
	} else if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "tollfree log stats: unexpected argument %q\n", fs.Arg(0))
		return usageError{errors.New("unexpected argument")}
	}
	loc, err := time.LoadLocation(*tz)
	if err != nil {
		return fmt.Errorf("-tz %q: %w (use an IANA zone such as UTC or Europe/Paris)", *tz, err)
	}
	plan, err := loadPlan(*path, stdout, stderr)
	switch {
	case err != nil && *path == "" && *file != "":
		// A log named with -file needs no config: the folder's own
		// tollfree.yaml (its variables unset here, say) only adds the
		// routes' daily limits. Read the log without them.
		fmt.Fprintf(stderr, "tollfree log stats: the config found here does not load (%v); summing %s without the routes' daily limits\n", err, *file)
		plan = nil
	case err != nil:
		return fmt.Errorf("the config is not valid: %w", err)
	}
	name := *file
	if name == "" {
		switch plan.CallLog { // plan is set: a nil one comes only with -file
		case "off":
			return errors.New(`the config turns the call log off (call_log: "off"); name a log with -file`)
		case "-":
			return errors.New("the config sends the call log to standard output; name a saved copy with -file, or pipe it in with -file -")
		case "":
			name = filepath.Join(plan.DataDir, "calls.jsonl")
		default:
			name = plan.CallLog
		}
	}
	var in io.Reader = os.Stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return fmt.Errorf("opening the call log: %w (is the gateway writing elsewhere? see call_log in the config, or pass -file)", err)
		}
		defer f.Close()
		in = f
	}
	sum, err := logstats.Summarize(in, name, loc, plan)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(sum)
	}
	sum.WriteTable(stdout)
	return nil
}
