package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	tfdemo "github.com/tollfree/tollfree/tools/demo"
)

// demo runs the emulated free providers and the gateway in one process
// with sample traffic (package demo); with -assistant, a demo site with
// the chat widget and an assistant over its content (issue 14).
func demo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:8080", "gateway listen address (a free port when taken)")
	speed := fs.Float64("speed", 1, "virtual seconds per real second (600: a day in 2m24s)")
	every := fs.Duration("every", 5*time.Second, "demo time between two sample questions")
	duration := fs.Duration("duration", 0, "stop after this much real time (default: until Ctrl-C)")
	requests := fs.Int("requests", 0, "stop after this many questions (default: no limit)")
	assistant := fs.Bool("assistant", false, "serve a demo site with the chat widget and an assistant over its content instead")
	content := fs.String("content", "", "with -assistant: the content folder to answer from (default: the demo site's own)")
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	if *assistant {
		return tfdemo.RunAssistant(ctx, tfdemo.AssistantOptions{Listen: *listen, Content: *content, Out: stdout})
	}
	if *speed <= 0 || *every <= 0 || *duration < 0 || *requests < 0 {
		fmt.Fprintln(stderr, "tollfree demo: -speed and -every must be positive, -duration and -requests not negative")
		return usageError{fmt.Errorf("bad flags")}
	}
	return tfdemo.Run(ctx, tfdemo.Options{
		Listen: *listen, Speed: *speed, Every: *every, Duration: *duration, Requests: *requests, Out: stdout,
	})
}
