package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"time"
)

// health asks a gateway's /readyz (or any URL) and fails unless it answers
// 200: the container's HEALTHCHECK, since a FROM scratch image has no curl
// or shell (issue 17). With -wait it asks again, twice a second, until the
// URL answers 200 or the wait is over: a script (a README's) starts a
// gateway in the background and waits for it without a sleep.
func health(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("health", flag.ContinueOnError)
	timeout := fs.Duration("timeout", 5*time.Second, "give up after this long")
	wait := fs.Duration("wait", 0, "ask again until the URL answers 200, for at most this long (e.g. 2m)")
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	url := "http://127.0.0.1:8080/readyz"
	switch fs.NArg() {
	case 0:
	case 1:
		url = fs.Arg(0)
	default:
		return fmt.Errorf("give one URL, not %d (tollfree health http://127.0.0.1:8080/readyz)", fs.NArg())
	}
	if *wait <= 0 {
		return ask(ctx, url, *timeout, stdout)
	}
	deadline := time.Now().Add(*wait)
	for {
		err := ask(ctx, url, *timeout, stdout)
		if err == nil || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// ask asks url once and fails unless it answers 200.
func ask(ctx context.Context, url string, timeout time.Duration, stdout io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("bad URL %q: %w", url, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("asking %s: %w (is the gateway running and listening there?)", url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answered %s: %s", url, resp.Status, body)
	}
	fmt.Fprintf(stdout, "%s\n", body)
	return nil
}
