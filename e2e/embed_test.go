package e2e_test

import (
	"strings"
	"testing"
)

// TestEmbedExample builds and runs examples/embed, a Go program outside
// this module that embeds the Gateway, offline, and wants the chain's
// fallback answer from it when every route is down (issue 11). It runs a
// copy, its replace directive pointed at this checkout, so that the
// example's own go.mod and go.sum are never rewritten; the module cache
// already holds every dependency (GOPROXY=off).
func TestEmbedExample(t *testing.T) {
	checkLeaks(t)
	root := repoRoot(t)
	out := goIn(t, copyExampleModule(t, root, "embed"), nil, "run", ".")
	const fallback = "The assistant is resting; please try again in a minute."
	for _, want := range []string{
		"chat: served by fallback message (request req_",
		"): " + fallback + "\n",
		"stream: served by fallback message: " + fallback + "\n",
		"strict: no answer; a route comes back in about",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the example's output lacks %q:\n%s", want, out)
		}
	}
}
