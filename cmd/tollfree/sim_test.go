package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestSimChain: `tollfree sim` plays seed 000's capped routes by default
// (no NVIDIA: a day that can bind), all 13 with -chain seed000, and says
// which in its first line; an unknown chain is a usage error naming both.
func TestSimChain(t *testing.T) {
	for _, tt := range []struct {
		args   []string
		head   string
		nvidia bool
	}{
		{args: nil, head: "a chain of 10 routes (-chain capped)"},
		{args: []string{"-chain", "seed000"}, head: "a chain of 13 routes (-chain seed000)", nvidia: true},
	} {
		var stdout, stderr bytes.Buffer
		args := append([]string{"sim", "-requests", "2", "-incidents=false"}, tt.args...)
		if code := run(args, &stdout, &stderr); code != 0 {
			t.Fatalf("%v exited %d: %s", args, code, stderr.String())
		}
		if !strings.Contains(stdout.String(), tt.head) {
			t.Errorf("%v: first line does not say %q:\n%s", args, tt.head, stdout.String())
		}
		if got := strings.Contains(stdout.String(), "nvidia/meta/llama-3.3-70b-instruct"); got != tt.nvidia {
			t.Errorf("%v: NVIDIA's route in the table is %v, want %v:\n%s", args, got, tt.nvidia, stdout.String())
		}
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"sim", "-chain", "all"}, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), "-chain must be capped or seed000") {
		t.Errorf("-chain all: exit %d, stderr %q; want 1 and the choices", code, stderr.String())
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"sim", "-shape", "month"}, "-shape must be one of site, chat, batch, week, wrong-limits"},
		{[]string{"sim", "-policies", "tollfree,random"}, `-policies: "random" is not one of`},
	} {
		stdout.Reset()
		stderr.Reset()
		if code := run(tt.args, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want 1 and %q", tt.args, code, stderr.String(), tt.want)
		}
	}
}

// TestSimShape: -shape plays the shape named, says so in its first line
// with the shape's chain, and -policies picks the columns.
func TestSimShape(t *testing.T) {
	var stdout, stderr bytes.Buffer
	args := []string{"sim", "-shape", "batch", "-requests", "30", "-policies", "naive,optimum"}
	if code := run(args, &stdout, &stderr); code != 0 {
		t.Fatalf("%v exited %d: %s", args, code, stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{"-shape batch (an evaluation batch", "model / day caps / fallback", "a chain of 3 routes (-chain gpt-oss-120b)", "naive chain", "optimum (bound)", "share of optimum", "cerebras/gpt-oss-120b"} {
		if !strings.Contains(out, want) {
			t.Errorf("%v: the output does not say %q:\n%s", args, want, out)
		}
	}
	if strings.Contains(out, "capacity  ") || strings.Contains(out, "limits learned") {
		t.Errorf("%v: a policy not asked for is in the table:\n%s", args, out)
	}
}
