package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/tollfree/tollfree/config"
	tfdoctor "github.com/tollfree/tollfree/tools/doctor"
)

// doctor validates the config, probes every enabled route with a tiny
// request and fails when a chain has no working route (issue 6, part 4).
func doctor(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("doctor", flag.ContinueOnError)
	fs.SetOutput(stderr)
	path := fs.String("config", "", "config file (default tollfree.yaml if present, else built-in presets)")
	dry := fs.Bool("dry-run", false, "list what would be probed and what it would cost; send nothing")
	maxTokens := fs.Int("max-tokens", 8, "answer tokens each probe may take")
	thinking := fs.Bool("thinking", true, "also probe the thinking levels of thinking models (one request per level)")
	timeout := fs.Duration("timeout", 0, "cap on each probe (default the route's timeout, else 20s)")
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "tollfree doctor: unexpected argument %q\n", fs.Arg(0))
		return usageError{errors.New("unexpected argument")}
	}
	plan, err := loadPlan(*path, stdout, stderr)
	if err != nil {
		return fmt.Errorf("the config is not valid: %w", err)
	}
	rep, err := tfdoctor.Run(ctx, tfdoctor.Options{
		Plan: plan, Source: configName(*path), Out: stdout, Progress: progressTo(stderr),
		MaxTokens: *maxTokens, Timeout: *timeout, NoThinking: !*thinking, DryRun: *dry,
	})
	if err != nil {
		return err
	}
	if broken := rep.Broken(); len(broken) > 0 {
		return fmt.Errorf("no working route in chain %s: fix the routes above (keys, model names) or add routes that answer", strings.Join(broken, ", "))
	}
	return nil
}

// configName names the config loadPlan reads, for messages.
func configName(path string) string {
	if path != "" {
		return path
	}
	if _, err := os.Stat("tollfree.yaml"); err == nil {
		return "tollfree.yaml"
	}
	return config.DefaultName
}
