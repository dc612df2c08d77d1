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
}
