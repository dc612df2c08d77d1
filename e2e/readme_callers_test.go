package e2e_test

import (
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/tollfree/tollfree/emulator"
	"github.com/tollfree/tollfree/internal/testenv"
)

// readmeConfig returns the yaml block of the README that follows the text
// after, with its providers: section taken out (the tests put the
// emulator's in its place) and its content folder replaced by the
// repository's.
func readmeConfig(t *testing.T, after string) string {
	t.Helper()
	b, err := os.ReadFile(repoPath("README.md"))
	if err != nil {
		t.Fatal(err)
	}
	rest := string(b)
	i := strings.Index(rest, after)
	if i < 0 {
		t.Fatalf("the README has no %q", after)
	}
	rest = rest[i:]
	start := strings.Index(rest, "```yaml\n")
	end := strings.Index(rest[start+8:], "```")
	if start < 0 || end < 0 {
		t.Fatalf("no yaml block after %q", after)
	}
	var out []string
	skipping := false
	for _, line := range strings.Split(rest[start+8:start+8+end], "\n") {
		top := line != "" && line[0] != ' ' && line[0] != '#'
		if top {
			skipping = strings.HasPrefix(line, "providers:")
		}
		if !skipping {
			out = append(out, line)
		}
	}
	return strings.ReplaceAll(strings.Join(out, "\n"), "search: ./content", "search: ../examples/content")
}

// TestReadmePublicSite: the README's public site assistant, as written,
// on two instances: visitors behind its proxy are counted apart and muted
// for a burst (seed 004), get a visitor id, and the owner gets through.
func TestReadmePublicSite(t *testing.T) {
	checkLeaks(t)
	env := map[string]string{"TOLLFREE_ADMIN_TOKEN": fairAdmin, "TOLLFREE_VISITOR_SECRET": fairEnv["TOLLFREE_VISITOR_SECRET"]}
	p := newPair(t, readmeConfig(t, "A **public site assistant**"), env, nil)
	a := ask{chain: "answer", from: visitorAddr("a")}
	r := p.pass("a visitor's first question", a)
	if r.header.Get("Set-Cookie") == "" || r.header.Get("X-Tollfree-Route") != "" {
		t.Errorf("first question: Set-Cookie %q, X-Tollfree-Route %q; want a visitor id, and the route hidden", r.header.Get("Set-Cookie"), r.header.Get("X-Tollfree-Route"))
	}
	for i := range 4 {
		p.pass("a visitor's question, within seconds", ask{chain: "answer", from: visitorAddr("a"), text: strings.Repeat("Really? ", i+1)})
	}
	p.limited("a 6th within 10s", a, "caller burst")
	p.pass("another visitor behind the same proxy", ask{chain: "answer", from: visitorAddr("b")})
	p.pass("the owner", ask{chain: "answer", auth: fairAdmin})
}

// TestReadmeTeamGateway: the README's private team gateway, as written,
// on two instances sharing its Redis: keys only; each key its chains and
// limits; a bot's end users apart; the owner's key and the admin token
// get through.
func TestReadmeTeamGateway(t *testing.T) {
	checkLeaks(t)
	env := map[string]string{
		"TOLLFREE_ADMIN_TOKEN": fairAdmin, "REDIS_URL": testenv.RedisURL(t),
		"ALICE_KEY": "FAKE-alice-key-0123456789", "CI_KEY": "FAKE-ci-key-0123456789", "SUPPORT_BOT_KEY": "FAKE-support-bot-key-0123456789",
	}
	p := newPair(t, readmeConfig(t, "A **private team gateway**"), env, nil)
	for _, in := range p.in {
		in.emu.AddModel("cerebras", emulator.Model{ID: "llama-3.3-70b"})
	}
	if r := p.send(ask{chain: "answer"}); r.status != http.StatusUnauthorized {
		t.Errorf("no key: %d, want 401", r.status)
	}
	if r := p.send(ask{chain: "answer", auth: env["CI_KEY"]}); r.status != http.StatusForbidden {
		t.Errorf("ci on answer: %d, want 403", r.status)
	}
	p.pass("ci on review", ask{chain: "review", auth: env["CI_KEY"]})
	bot := func(user string) ask { return ask{chain: "answer", auth: env["SUPPORT_BOT_KEY"], user: user} }
	for range 5 {
		p.pass("the bot's alice, within seconds", bot("alice"))
	}
	p.limited("the bot's alice, a 6th within 10s", bot("alice"), "caller burst")
	p.pass("the bot's bob", bot("bob"))
	p.pass("alice's own key, the owner", ask{chain: "review", auth: env["ALICE_KEY"]})
	p.pass("the admin token", ask{chain: "answer", auth: fairAdmin})
}
