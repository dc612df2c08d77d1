package config

import (
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// Fake keys of a safe length for the callers tests.
const (
	teamKey    = "FAKE_team_key_0123456789"
	botKey     = "FAKE_bot_key_0123456789"
	visitorKey = "FAKE_visitor_secret_0123456789abcdef"
)

// TestCallersProblems: a config that would start a gateway open by
// accident, or easier to get into than it says, is refused with the file,
// the line and how to fix it (issue 12); so is every malformed limit.
func TestCallersProblems(t *testing.T) {
	const chain = "providers: {groq: {}}\nchains:\n  answer: {routes: [groq/llama-3.1-8b-instant]}\n"
	env := map[string]string{"TEAM_KEY": teamKey, "SHORT": "short-key-123", "SPACEY": "key with spaces 0123456789", "ADMIN": teamKey}
	for _, tc := range []struct {
		name string
		src  string
		want []string
	}{
		{
			name: "key list that resolves to nothing",
			src:  "gateway_keys: [${TOLLFREE_KEY}]\n",
			want: []string{`t.yaml:1: gateway_keys[0]: ${TOLLFREE_KEY} is unset or empty, and a key list that resolves to nothing leaves the gateway open to anyone: set TOLLFREE_KEY, or write ${TOLLFREE_KEY:-} if the gateway may run without it`},
		},
		{
			name: "one key of a list unset",
			src:  "gateway_keys:\n  - ${TEAM_KEY}\n  - {name: bot, key: ${BOT_KEY}}\n",
			want: []string{`t.yaml:3: gateway_keys[1].key: ${BOT_KEY} is unset or empty, and a key list that resolves to nothing leaves the gateway open to anyone: set BOT_KEY, or write ${BOT_KEY:-} if the gateway may run without it`},
		},
		{
			name: "short key",
			src:  "gateway_keys: [${SHORT}]\n",
			want: []string{`t.yaml:1: gateway_keys[0]: the gateway key from env SHORT is shorter than 20 bytes, short enough to be guessed: use a random one (openssl rand -hex 20)`},
		},
		{
			name: "key with a space",
			src:  "gateway_keys: [${SPACEY}]\n",
			want: []string{`t.yaml:1: gateway_keys[0]: the gateway key from env SPACEY holds a space or a control character, which a bearer token cannot carry`},
		},
		{
			name: "key written in the file",
			src:  "gateway_keys:\n  - {name: team, key: sk-team-0123456789abcdef}\n",
			want: []string{`t.yaml:2: gateway_keys[0].key: a secret written in the file is refused: write ${TEAM_KEY} (any variable name) or key_file: /run/secrets/name`},
		},
		{
			name: "key in lower case",
			src:  "gateway_keys: [${team_key}]\n",
			want: []string{`t.yaml:1: gateway_keys[0]: ${...} must name an environment variable in capitals, such as ${TOLLFREE_KEY}`},
		},
		{
			name: "empty key",
			src:  "gateway_keys: [\"\"]\n",
			want: []string{`t.yaml:1: gateway_keys[0]: an empty key: write ${TOLLFREE_KEY} (any variable name), or leave gateway_keys out for none`},
		},
		{
			name: "mapping without name or key",
			src:  "gateway_keys:\n  - {owner: true}\n",
			want: []string{
				`t.yaml:2: gateway_keys[0]: a key needs a name (write, say, {name: team, key: ${TEAM_KEY}})`,
				`t.yaml:2: gateway_keys[0].key: a key needs key: ${NAME} or key_file: /run/secrets/name`,
			},
		},
		{
			name: "key and key file",
			src:  "gateway_keys:\n  - name: team\n    key: ${TEAM_KEY}\n    key_file: /k\n",
			want: []string{`t.yaml:4: gateway_keys[0].key_file: set key or key_file, not both`},
		},
		{
			name: "unreadable key file",
			src:  "gateway_keys:\n  - {name: team, key_file: /nonexistent/team.key}\n",
			want: []string{`t.yaml:2: gateway_keys[0].key_file: cannot read /nonexistent/team.key: no such file or directory`},
		},
		{
			name: "names",
			src:  "gateway_keys:\n  - {name: team, key: ${TEAM_KEY}}\n  - {name: team, key: ${BOT_KEY:-}}\n  - {name: \"a b\", key: ${BOT_KEY:-}}\n",
			want: []string{
				`t.yaml:3: gateway_keys[1].name: "team" is the name of gateway_keys[0] too`,
				`t.yaml:4: gateway_keys[2].name: "a b" is not a key name: letters, digits, '.', '_' and '-', at most 64`,
			},
		},
		{
			name: "same key twice",
			src:  "gateway_keys:\n  - {name: team, key: ${TEAM_KEY}}\n  - {name: copy, key: ${TEAM_KEY}}\n",
			want: []string{`t.yaml:3: gateway_keys[1].key: the same key as team (env TEAM_KEY): one key, one name`},
		},
		{
			name: "key is the admin token",
			src:  "admin_token: ${ADMIN}\ngateway_keys: [${TEAM_KEY}]\n",
			want: []string{`t.yaml:2: gateway_keys[0]: the same value as admin_token: give the owner a key marked owner: true, or use the admin token alone`},
		},
		{
			name: "unknown chain",
			src:  chain + "gateway_keys:\n  - {name: team, key: ${TEAM_KEY}, chains: [anwser]}\n  - {name: none, key: ${BOT_KEY:-}, chains: []}\n",
			want: []string{
				`t.yaml:5: gateway_keys[0].chains[0]: no chain is named "anwser" (did you mean "answer"?); chains: answer`,
				`t.yaml:6: gateway_keys[1].chains: an empty list lets the key use no chain; name chains, or leave chains out for every chain`,
			},
		},
		{
			name: "owner with limits, user limits without narrow",
			src:  "gateway_keys:\n  - {name: me, key: ${TEAM_KEY}, owner: true, limits: {per_day: 5}}\n  - {name: bot, key: ${BOT_KEY:-}, user_limits: {per_hour: 5}}\n",
			want: []string{
				`t.yaml:2: gateway_keys[0].owner: the owner skips caller limits; remove limits: and user_limits:, or owner: true`,
				`t.yaml:3: gateway_keys[1].user_limits: user limits need narrow: true (without it the key is one caller: put its limits under limits:)`,
			},
		},
		{
			name: "admin token unset where admin actions are on",
			src:  "admin_token: ${TOLLFREE_ADMIN_TOKEN}\n",
			want: []string{`t.yaml:1: admin_token: admin actions are on (admin_token is written) but ${TOLLFREE_ADMIN_TOKEN} is unset or empty: set TOLLFREE_ADMIN_TOKEN (say, to the output of openssl rand -hex 20), or write ${TOLLFREE_ADMIN_TOKEN:-} to run without admin actions`},
		},
		{
			name: "admin token short",
			src:  "admin_token: ${SHORT}\n",
			want: []string{`t.yaml:1: admin_token: the admin token from env SHORT is shorter than 20 bytes, short enough to be guessed: use a random one (openssl rand -hex 20)`},
		},
		{
			name: "admin token written in the file",
			src:  "admin_token: hunter2-hunter2-hunter2\n",
			want: []string{`t.yaml:1: admin_token: a secret written in the file is refused: write admin_token: ${TOLLFREE_ADMIN_TOKEN} (any variable name)`},
		},
		{
			name: "caller limits values",
			src: "providers: {groq: {}}\ncallers: {per_hour: -1, site_day: 10, reserve: 10, burst: {count: 5}}\n" +
				"gateway_keys:\n  - {name: team, key: ${TEAM_KEY}, limits: {concurrent: -2, burst: {within: 10s}}}\n" +
				"chains:\n  answer: {routes: [groq/llama-3.1-8b-instant], callers: {tokens_day: -5, burst: {count: 2, within: 500ms}}}\n",
			want: []string{
				`t.yaml:2: callers.per_hour: -1 is negative; write 0 for no limit`,
				`t.yaml:2: callers.burst.within: must be 1s or more (write, say, within: 10s)`,
				`t.yaml:2: callers.reserve: 10 must be less than site_day 10`,
				`t.yaml:4: gateway_keys[0].limits.concurrent: -2 is negative; write 0 for no limit`,
				`t.yaml:4: gateway_keys[0].limits.burst: a burst needs count and within (write, say, {count: 5, within: 10s, mute: 2m})`,
				`t.yaml:6: chains.answer.callers.tokens_day: -5 is negative; write 0 for no limit`,
				`t.yaml:6: chains.answer.callers.burst.within: must be 1s or more (write, say, within: 10s)`,
			},
		},
		{
			name: "trusted proxies",
			src:  "trusted_proxies: [10.0.0.0/8, 10.0.0.300, 0.0.0.0/0, ::/0]\nforwarded_header: X-Real-IP\n",
			want: []string{
				`t.yaml:1: trusted_proxies[1]: "10.0.0.300" is not an address or a CIDR (write, say, 10.0.0.0/8, 127.0.0.1 or fd00::/8)`,
				`t.yaml:1: trusted_proxies[2]: "0.0.0.0/0" trusts every address, so any client could write its own address: list only your proxies`,
				`t.yaml:1: trusted_proxies[3]: "::/0" trusts every address, so any client could write its own address: list only your proxies`,
				`t.yaml:2: forwarded_header: "X-Real-IP" is neither X-Forwarded-For nor Forwarded`,
			},
		},
		{
			name: "visitor ids",
			src:  "visitor_ids: {secret: ${TEAM_KEY}, ttl: 30s, cookie: \"a b\"}\n",
			want: []string{
				`t.yaml:1: visitor_ids.secret: the visitor id secret from env TEAM_KEY is shorter than 32 bytes, short enough to be guessed: use a random one (openssl rand -hex 20)`,
				`t.yaml:1: visitor_ids.ttl: must be 1m or more (write, say, 720h)`,
				`t.yaml:1: visitor_ids.cookie: "a b" is not a cookie name`,
			},
		},
		{
			name: "visitor ids without a secret",
			src:  "visitor_ids: {ttl: 24h}\n",
			want: []string{`t.yaml:1: visitor_ids: visitor ids need secret: ${NAME} or secret_file: /run/secrets/name`},
		},
		{
			name: "visitor secret unset",
			src:  "visitor_ids: {secret: ${VISITOR_SECRET}}\n",
			want: []string{`t.yaml:1: visitor_ids.secret: visitor ids are on but ${VISITOR_SECRET} is unset or empty: set VISITOR_SECRET (openssl rand -hex 32), or leave visitor_ids out`},
		},
		{
			name: "gateway queue",
			src:  "server: {max_requests: -1, queue_length: -3}\n",
			want: []string{
				`t.yaml:1: server.max_requests: must be more than 0`,
				`t.yaml:1: server.queue_length: -3 is negative; write 0 for the default`,
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("t.yaml", []byte(tc.src), func(k string) string { return env[k] })
			var cfgErr *Error
			if !errors.As(err, &cfgErr) {
				t.Fatalf("Parse error = %v, want a *config.Error", err)
			}
			var got []string
			for _, p := range cfgErr.Problems {
				got = append(got, p.String())
				for _, secret := range env {
					if strings.Contains(p.String(), secret) {
						t.Errorf("a problem quotes a secret: %s", p)
					}
				}
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("problems:\ngot:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// TestCallersCompiled: both forms of gateway_keys, the proxies, visitor
// ids, per-chain limits and the gateway's queue compile to the plan's
// values, with each key's default limits.
func TestCallersCompiled(t *testing.T) {
	dir := t.TempDir()
	botFile := filepath.Join(dir, "bot.key")
	if err := os.WriteFile(botFile, []byte(botKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	src := `
admin_token: ${ADMIN}
gateway_keys:
  - ${TEAM_KEY}
  - ${LATER_KEY:-}
  - name: bot
    key_file: ` + botFile + `
    chains: [answer]
    narrow: true
    limits: {per_day: 2000}
  - {name: me, key: ${OWNER_KEY}, owner: true}
  - {name: ci, key: ${CI_KEY}, limits: {concurrent: 4, burst: {count: 10, within: 10s, mute: 2m}}}
trusted_proxies: [10.0.0.0/8, 127.0.0.1, "::ffff:192.168.1.1", fd00::/8]
forwarded_header: forwarded
visitor_ids: {secret: ${VISITOR}}
callers: {per_hour: 15, per_day: 40, tokens_day: 50000, concurrent: 2, burst: {count: 5, within: 10s}, site_day: 3000, reserve: 100}
server: {max_requests: 8}
providers: {groq: {}}
chains:
  answer:
    routes: [groq/llama-3.1-8b-instant]
    callers: {per_hour: 10}
  other: {routes: [groq/llama-3.1-8b-instant]}
`
	env := map[string]string{"ADMIN": "FAKE_admin_0123456789abc", "TEAM_KEY": teamKey, "OWNER_KEY": "FAKE_owner_key_0123456789", "CI_KEY": "FAKE_ci_key_0123456789", "VISITOR": visitorKey}
	p, err := Parse("t.yaml", []byte(src), func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	each := CallerLimits{PerHour: 15, PerDay: 40, TokensDay: 50000, Concurrent: 2, Burst: Burst{Count: 5, Within: 10 * time.Second}}
	if got := p.Callers.Each(); got != each {
		t.Errorf("callers each = %+v, want %+v", got, each)
	}
	if p.Callers.SiteDay != 3000 || p.Callers.Reserve != 100 {
		t.Errorf("site = %d, reserve %d", p.Callers.SiteDay, p.Callers.Reserve)
	}
	want := []GatewayKey{
		{Name: "key1", Value: teamKey, Source: "env TEAM_KEY", Limits: each},
		{Name: "bot", Value: botKey, Source: "file " + botFile, Chains: []string{"answer"}, Limits: CallerLimits{PerDay: 2000}, UserLimits: each, Narrow: true},
		{Name: "me", Value: env["OWNER_KEY"], Source: "env OWNER_KEY", Owner: true},
		{Name: "ci", Value: env["CI_KEY"], Source: "env CI_KEY", Limits: CallerLimits{Concurrent: 4, Burst: Burst{Count: 10, Within: 10 * time.Second, Mute: 2 * time.Minute}}},
	}
	if !reflect.DeepEqual(p.Keys, want) {
		t.Errorf("keys:\ngot  %+v\nwant %+v", p.Keys, want)
	}
	if got := p.GatewayKeys; !reflect.DeepEqual(got, []string{teamKey, botKey, env["OWNER_KEY"], env["CI_KEY"]}) {
		t.Errorf("gateway key values do not follow Keys")
	}
	if p.AdminToken != env["ADMIN"] || p.AdminTokenSource != "env ADMIN" {
		t.Errorf("admin token not read, source %q", p.AdminTokenSource)
	}
	wantProxies := []netip.Prefix{
		netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("127.0.0.1/32"),
		netip.MustParsePrefix("192.168.1.1/32"), netip.MustParsePrefix("fd00::/8"),
	}
	if !reflect.DeepEqual(p.ClientAddress.TrustedProxies, wantProxies) || p.ClientAddress.Header != HeaderForwarded {
		t.Errorf("client address = %+v", p.ClientAddress)
	}
	v := p.VisitorIDs
	if v.Secret != visitorKey || v.TTL != DefaultVisitorTTL || v.Cookie != DefaultVisitorCookie || v.Header != DefaultVisitorHeader {
		t.Errorf("visitor ids = %+v (secret not shown)", VisitorIDs{Source: v.Source, TTL: v.TTL, Cookie: v.Cookie, Header: v.Header})
	}
	if got := p.Chains["answer"].Callers; got != (CallerLimits{PerHour: 10}) {
		t.Errorf("answer's caller limits = %+v", got)
	}
	if !p.Chains["other"].Callers.IsZero() {
		t.Errorf("other's caller limits = %+v, want none", p.Chains["other"].Callers)
	}
	if s := p.Server; s.MaxRequests != 8 || s.QueueLength != 64 || s.QueueWait != 2*time.Second {
		t.Errorf("server queue = %d, %d, %s; want 8, 64 (default), 2s (default)", s.MaxRequests, s.QueueLength, s.QueueWait)
	}
	for _, s := range []string{teamKey, botKey, visitorKey, env["ADMIN"]} {
		if got := p.Secrets.Scrub("x " + s + " y"); got != "x [secret] y" {
			t.Errorf("the secret set misses a key: scrubbed to %q", strings.ReplaceAll(got, s, "<key>"))
		}
	}
}

// TestCallersSimpleForms: the forms written before issue 12 still work:
// gateway_keys as a list of references (or a single one), and callers with
// per_hour, per_day, site_day and reserve.
func TestCallersSimpleForms(t *testing.T) {
	env := func(k string) string { return map[string]string{"TOLLFREE_KEY": teamKey}[k] }
	for _, src := range []string{
		"gateway_keys: [${TOLLFREE_KEY}]\ncallers: {per_hour: 15, per_day: 40, site_day: 3000, reserve: 100}\n",
		"gateway_keys: ${TOLLFREE_KEY}\ncallers: {per_hour: 15, per_day: 40, site_day: 3000, reserve: 100}\n",
	} {
		p, err := Parse("t.yaml", []byte(src), env)
		if err != nil {
			t.Fatalf("%q: %v", src, err)
		}
		if p.Callers != (Callers{PerHour: 15, PerDay: 40, SiteDay: 3000, Reserve: 100}) {
			t.Errorf("callers = %+v", p.Callers)
		}
		if len(p.Keys) != 1 || p.Keys[0].Name != "key1" || p.Keys[0].Limits != (CallerLimits{PerHour: 15, PerDay: 40}) {
			t.Errorf("keys = %+v, want key1 limited as each caller", p.Keys)
		}
	}
	// Optional references: unset, the gateway is open on purpose.
	p, err := Parse("t.yaml", []byte("admin_token: ${NO_ADMIN:-}\ngateway_keys: [${NO_KEY:-}]\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Keys) != 0 || p.AdminToken != "" {
		t.Errorf("optional and unset: keys %d, admin token set %v", len(p.Keys), p.AdminToken != "")
	}
}

// TestReadmeCallerConfigs: the README's two complete configurations, a
// public site assistant and a private team gateway, compile, and say what
// the README says of them.
func TestReadmeCallerConfigs(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	block := func(after string) string {
		i := strings.Index(readme, after)
		if i < 0 {
			t.Fatalf("the README has no %q", after)
		}
		rest := readme[i:]
		start := strings.Index(rest, "```yaml\n")
		end := strings.Index(rest[start+8:], "```")
		if start < 0 || end < 0 {
			t.Fatalf("no yaml block after %q", after)
		}
		return rest[start+8 : start+8+end]
	}
	site, err := Parse("README site", []byte(block("A **public site assistant**")), testEnv(nil))
	if err != nil {
		t.Fatalf("the site assistant: %v", err)
	}
	if len(site.Keys) != 0 || site.Callers.PerHour != 15 || site.Callers.PerDay != 40 || site.Callers.SiteDay != 3000 || site.VisitorIDs.Secret == "" || len(site.ClientAddress.TrustedProxies) != 2 {
		t.Errorf("the site assistant is not open with seed 000's limits, visitor ids and a proxy")
	}
	team, err := Parse("README team", []byte(block("A **private team gateway**")), testEnv(nil))
	if err != nil {
		t.Fatalf("the team gateway: %v", err)
	}
	if len(team.Keys) != 3 || !team.Keys[0].Owner || !team.Keys[2].Narrow {
		t.Errorf("the team gateway's keys = %d", len(team.Keys))
	}
}
