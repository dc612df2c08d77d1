package config

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestProblems checks every validation message with its file, line and
// field. Each case's want lists the problems expected, exactly and in order.
func TestProblems(t *testing.T) {
	const groq = "providers:\n  groq: {}\n"
	for _, tc := range []struct {
		name string
		src  string
		env  map[string]string
		want []string
	}{
		{
			name: "syntax",
			src:  "listen: [a\nx: y\n",
			want: []string{`t.yaml:2: cannot parse YAML: ',' or ']' must be specified`},
		},
		{
			name: "not a mapping",
			src:  "- a\n- b\n",
			want: []string{`t.yaml:1: want a mapping of fields, not a list`},
		},
		{
			name: "two documents",
			src:  "listen: :1\n---\nlisten: :2\n",
			want: []string{`t.yaml:3: the file holds more than one YAML document; keep one`},
		},
		{
			name: "unknown field with a suggestion",
			src:  groq + "chains:\n  a:\n    routes: [groq/llama-3.1-8b-instant]\n    atempt_timeout: 8s\n",
			want: []string{`t.yaml:6: chains.a.atempt_timeout: unknown field (did you mean "attempt_timeout"?)`},
		},
		{
			name: "unknown field without a suggestion",
			src:  "server: {colour: red}\n",
			want: []string{`t.yaml:1: server.colour: unknown field; valid fields here: idle_timeout, max_body, max_connections, max_content, max_messages, max_requests, queue_length, queue_wait, read_header_timeout, read_timeout, shutdown_grace, stream_keepalive, write_timeout`},
		},
		{
			name: "duplicate key",
			src:  "listen: :1\nlisten: :2\n",
			want: []string{`t.yaml:2: cannot parse YAML: mapping key "listen" already defined at [1:1]`},
		},
		{
			name: "bare number duration",
			src:  groq + "chains:\n  a:\n    routes: [groq/llama-3.1-8b-instant]\n    attempt_timeout: \"8\"\n",
			want: []string{`t.yaml:6: chains.a.attempt_timeout: "8" is not a duration (write 8s)`},
		},
		{
			name: "bad duration",
			src:  "server:\n  idle_timeout: soon\n",
			want: []string{`t.yaml:2: server.idle_timeout: "soon" is not a duration (write, say, 8s, 1m30s or 250ms)`},
		},
		{
			name: "negative duration",
			src:  "rest: {gone: -1h}\n",
			want: []string{`t.yaml:1: rest.gone: "-1h" is negative; a duration is 0 or more`},
		},
		{
			name: "duration from the environment",
			src:  "server: {read_timeout: \"${RT}\"}\n",
			env:  map[string]string{"RT": "30"},
			want: []string{`t.yaml:1: server.read_timeout: the value of ${RT} is not a duration (write, say, 8s)`},
		},
		{
			name: "bad size",
			src:  "server: {max_body: lots}\n",
			want: []string{`t.yaml:1: server.max_body: "lots" is not a size (write, say, 4MiB, 512KiB or 1048576)`},
		},
		{
			name: "negative request limits",
			src:  "server: {max_messages: -1, max_connections: -5, write_timeout: -1s}\n",
			want: []string{
				`t.yaml:1: server.write_timeout: "-1s" is negative; a duration is 0 or more`,
				`t.yaml:1: server.max_connections: must be more than 0`,
				`t.yaml:1: server.max_messages: must be more than 0`,
			},
		},
		{
			name: "bad number",
			src:  "providers:\n  groq:\n    limits: {rpm: many}\n",
			want: []string{`t.yaml:3: providers.groq.limits.rpm: "many" is not a whole number (write, say, 30)`},
		},
		{
			name: "bad bool",
			src:  groq + "chains:\n  a: {routes: [groq/llama-3.1-8b-instant], hide_route: maybe}\n",
			want: []string{`t.yaml:4: chains.a.hide_route: "maybe" is not true or false`},
		},
		{
			name: "wrong shape",
			src:  "providers: [groq]\n",
			want: []string{`t.yaml:1: providers: want a mapping, not a list`},
		},
		{
			name: "listen",
			src:  "listen: localhost\n",
			want: []string{`t.yaml:1: listen: "localhost" is not host:port (write, say, 127.0.0.1:8080 or :8080)`},
		},
		{
			name: "status value",
			src:  "status: hidden\n",
			want: []string{`t.yaml:1: status: "hidden" is not public or private`},
		},
		{
			name: "private status nobody can read",
			src:  "status: private\ngateway_keys: [${UNSET_KEY:-}]\n",
			want: []string{`t.yaml:1: status: private needs a token to read it: set gateway_keys or admin_token (or write public)`},
		},
		{
			name: "redis",
			src:  "redis: http://cache:6379\n",
			want: []string{`t.yaml:1: redis: want a redis://, rediss:// or unix:// address`},
		},
		{
			name: "rest",
			src:  "rest:\n  minute_min: 5m\n  minute_max: 1m\n  growth: 0.5\n",
			want: []string{
				`t.yaml:3: rest.minute_max: 1m0s is less than minute_min 5m0s`,
				`t.yaml:4: rest.growth: must be between 1 (no growth) and 100`,
			},
		},
		{
			name: "literal key",
			src:  "providers:\n  groq:\n    api_key: not-a-reference\n",
			want: []string{`t.yaml:3: providers.groq.api_key: a key written in the file is refused: write api_key: ${GROQ_API_KEY} (any variable name) or api_key_file: /run/secrets/groq`},
		},
		{
			name: "key default",
			src:  "providers:\n  groq:\n    api_key: ${GROQ_API_KEY:-fallback}\n",
			want: []string{`t.yaml:3: providers.groq.api_key: a key written in the file is refused: write api_key: ${GROQ_API_KEY} (any variable name) or api_key_file: /run/secrets/groq`},
		},
		{
			name: "key variable in lower case",
			src:  "providers:\n  groq:\n    api_key: ${groq_key}\n",
			want: []string{`t.yaml:3: providers.groq.api_key: ${...} must name an environment variable in capitals, such as ${GROQ_API_KEY}`},
		},
		{
			name: "key and key file",
			src:  "providers:\n  groq:\n    api_key: ${K}\n    api_key_file: /k\n",
			want: []string{`t.yaml:4: providers.groq.api_key_file: set api_key or api_key_file, not both`},
		},
		{
			name: "bad reference",
			src:  "providers:\n  groq:\n    api_key: ${K\n",
			want: []string{`t.yaml:3: providers.groq.api_key: unterminated ${ (write ${NAME} or ${NAME:-default})`},
		},
		{
			name: "unknown preset",
			src:  "providers:\n  g:\n    preset: gorq\n",
			want: []string{
				`t.yaml:3: providers.g.preset: unknown preset "gorq" (did you mean "groq"?); presets: cerebras, cloudflare, cohere, gemini, github, groq, huggingface, mistral, nvidia, ollama, openrouter, ovhcloud, pollinations, sambanova, zai`,
			},
		},
		{
			name: "dialect and base url",
			src:  "providers:\n  lab:\n    dialect: anthropic\n    base_url: ftp://x\n",
			want: []string{
				`t.yaml:3: providers.lab.dialect: unknown dialect "anthropic"; want openai or gemini`,
				`t.yaml:4: providers.lab.base_url: "ftp://x" is not an http:// or https:// URL`,
			},
		},
		{
			name: "provider name",
			src:  "providers:\n  \"a/b\": {base_url: http://x}\n",
			want: []string{`t.yaml:2: providers["a/b"]: a provider's name cannot be empty or hold / or spaces (it starts every route's id)`},
		},
		{
			name: "header name",
			src:  "providers:\n  groq:\n    headers: {\"X Bad\": v}\n",
			want: []string{`t.yaml:3: providers.groq.headers["X Bad"]: not a valid header name`},
		},
		{
			name: "negative limit",
			src:  "providers:\n  groq:\n    limits:\n      tpd: -5\n",
			want: []string{`t.yaml:4: providers.groq.limits.tpd: -5 is negative; write 0 for no limit`},
		},
		{
			name: "negative hour and month limits",
			src:  "providers:\n  groq:\n    limits: {tph: -1}\n    models:\n      x: {rph: -2, tpmo: -3}\n",
			want: []string{
				`t.yaml:3: providers.groq.limits.tph: -1 is negative; write 0 for no limit`,
				`t.yaml:5: providers.groq.models.x.rph: -2 is negative; write 0 for no limit`,
				`t.yaml:5: providers.groq.models.x.tpmo: -3 is negative; write 0 for no limit`,
			},
		},
		{
			name: "reset",
			src:  "providers:\n  groq:\n    reset: noon\n",
			want: []string{`t.yaml:3: providers.groq.reset: "noon" is not a reset (write "midnight UTC", "midnight America/Los_Angeles" or "rolling")`},
		},
		{
			name: "reset zone",
			src:  "providers:\n  groq:\n    reset: midnight Mars/Olympus\n",
			want: []string{`t.yaml:3: providers.groq.reset: "Mars/Olympus" names no time zone the system knows (write an IANA name such as America/Los_Angeles, or UTC)`},
		},
		{
			name: "model fields",
			src:  "providers:\n  groq:\n    models:\n      x:\n        max_output: -1\n        scarce: true\n        plentiful: true\n        reset: weekly\n",
			want: []string{
				`t.yaml:5: providers.groq.models.x.max_output: -1 is negative; write 0 for unknown`,
				`t.yaml:6: providers.groq.models.x.scarce: a model cannot be both plentiful and scarce`,
				`t.yaml:8: providers.groq.models.x.reset: "weekly" is not a reset (write "midnight UTC", "midnight America/Los_Angeles" or "rolling")`,
			},
		},
		{
			name: "extra without JSON form",
			src:  "providers:\n  groq:\n    models:\n      x: {extra: {t: .inf}}\n",
			want: []string{`t.yaml:4: providers.groq.models.x.extra.t: ".inf" has no JSON form (write a finite number)`},
		},
		{
			name: "unknown route of a preset",
			src:  groq + "chains:\n  answer:\n    routes:\n      - groq/llama-3.1-8b-instant\n      - groq/llama-9\n",
			want: []string{`t.yaml:7: chains.answer.routes[1]: unknown route "groq/llama-9"; groq's models are: llama-3.1-8b-instant, llama-3.3-70b-versatile, openai/gpt-oss-120b, openai/gpt-oss-20b, qwen/qwen3-32b, meta-llama/llama-4-scout-17b-16e-instruct, moonshotai/kimi-k2-instruct-0905, groq/compound, groq/compound-mini, allam-2-7b, qwen/qwen3.6-27b (add others under providers.groq.models)`},
		},
		{
			name: "unknown route with a suggestion",
			src:  "providers:\n  cerebras: {}\nchains:\n  a: {routes: [cerebras/llama-3.3-70c]}\n",
			want: []string{`t.yaml:4: chains.a.routes[0]: unknown route "cerebras/llama-3.3-70c" (did you mean "cerebras/llama-3.3-70b"?); cerebras's models are: gpt-oss-120b, llama3.1-8b, llama-3.3-70b, qwen-3-32b, qwen-3-235b-a22b-instruct-2507, qwen-3-235b-a22b-thinking-2507, qwen-3-coder-480b (add others under providers.cerebras.models)`},
		},
		{
			name: "openrouter takes any free model",
			src:  "providers:\n  openrouter: {}\nchains:\n  a: {routes: [openrouter/some/model]}\n",
			want: []string{`t.yaml:4: chains.a.routes[0]: unknown route "openrouter/some/model"; openrouter's models are: qwen/qwen3-coder:free, or any id ending in :free (add others under providers.openrouter.models)`},
		},
		{
			name: "unknown provider",
			src:  groq + "chains:\n  a: {routes: [grok/llama-3.1-8b-instant]}\n",
			want: []string{`t.yaml:4: chains.a.routes[0]: unknown provider "grok" in route "grok/llama-3.1-8b-instant" (did you mean "groq"?); providers are: groq`},
		},
		{
			name: "not provider/model",
			src:  groq + "chains:\n  a: {routes: [groq]}\n",
			want: []string{`t.yaml:4: chains.a.routes[0]: "groq" is not provider/model (write, say, groq/llama-3.3-70b-versatile)`},
		},
		{
			name: "duplicate route",
			src:  groq + "chains:\n  a:\n    routes:\n      - groq/llama-3.1-8b-instant\n      - {route: groq/llama-3.1-8b-instant}\n",
			want: []string{`t.yaml:7: chains.a.routes[1]: "groq/llama-3.1-8b-instant" is listed twice (first as routes[0])`},
		},
		{
			name: "rank order",
			src:  groq + "chains:\n  a:\n    routes:\n      - {route: groq/llama-3.1-8b-instant, rank: 2}\n      - {route: groq/openai/gpt-oss-20b, rank: 1}\n",
			want: []string{`t.yaml:7: chains.a.routes[1].rank: rank 1 comes after rank 2; list routes in rank order`},
		},
		{
			name: "route entry shape",
			src:  groq + "chains:\n  a:\n    routes:\n      - [[groq/x]]\n      - {route: groq/llama-3.1-8b-instant, rnak: 1}\n      - []\n",
			want: []string{
				`t.yaml:6: chains.a.routes[0]: a tier lists provider/model names; its item 1 is a list`,
				`t.yaml:7: chains.a.routes[1].rnak: unknown field (did you mean "rank"?)`,
				`t.yaml:8: chains.a.routes[2]: an empty tier: list its routes, as in [gemini/gemma-3-27b-it, groq/llama-3.3-70b-versatile]`,
			},
		},
		{
			name: "no routes",
			src:  "chains:\n  a: {}\n",
			want: []string{`t.yaml:2: chains.a.routes: a chain needs at least one route (write, say, routes: [groq/llama-3.3-70b-versatile])`},
		},
		{
			name: "chain name",
			src:  groq + "chains:\n  \"x/y\": {routes: [groq/llama-3.1-8b-instant]}\n",
			want: []string{`t.yaml:4: chains["x/y"]: a chain's name cannot be empty or hold / or spaces (clients send it as the model)`},
		},
		{
			name: "timeouts",
			src:  groq + "chains:\n  a:\n    routes: [groq/llama-3.1-8b-instant]\n    attempt_timeout: 10s\n    deadline: 5s\n    hedge_delay: 10s\n",
			want: []string{
				`t.yaml:7: chains.a.deadline: 5s is shorter than attempt_timeout 10s; the deadline caps every attempt together`,
				`t.yaml:8: chains.a.hedge_delay: 10s is not shorter than attempt_timeout 10s, so a hedge could never start`,
			},
		},
		{
			name: "zero attempt timeout",
			src:  groq + "chains:\n  a: {routes: [groq/llama-3.1-8b-instant], attempt_timeout: 0s}\n",
			want: []string{`t.yaml:4: chains.a.attempt_timeout: must be more than 0 (write, say, 20s)`},
		},
		{
			name: "hedging needs room",
			src:  groq + "chains:\n  a: {routes: [groq/llama-3.1-8b-instant], hedge_delay: 2s, max_in_flight: 1}\n",
			want: []string{`t.yaml:4: chains.a.hedge_delay: hedging needs max_in_flight of 2 or more`},
		},
		{
			name: "counts",
			src:  groq + "chains:\n  a:\n    routes: [groq/llama-3.1-8b-instant]\n    max_in_flight: 0\n    hedge_min_daily: -1\n    keep_exchanges: -2\n",
			want: []string{
				`t.yaml:6: chains.a.max_in_flight: must be 1 or more`,
				`t.yaml:7: chains.a.hedge_min_daily: -1 is negative`,
				`t.yaml:8: chains.a.keep_exchanges: -2 is negative; 0 sends every exchange`,
			},
		},
		{
			name: "margin",
			src:  groq + "chains:\n  a:\n    routes: [groq/llama-3.1-8b-instant]\n    margin: 0.5\n",
			want: []string{`t.yaml:6: chains.a.margin: 0.5 is outside [0, 0.5) (write, say, 0.05)`},
		},
		{
			name: "reasoning",
			src:  groq + "chains:\n  a:\n    routes: [groq/llama-3.1-8b-instant]\n    reasoning: keep\n",
			want: []string{`t.yaml:6: chains.a.reasoning: "keep" is neither pass nor drop`},
		},
		{
			name: "idle timeout",
			src:  groq + "chains:\n  a:\n    routes: [groq/llama-3.1-8b-instant]\n    idle_timeout: 0s\n",
			want: []string{`t.yaml:6: chains.a.idle_timeout: must be more than 0 (write, say, 30s)`},
		},
		{
			name: "first token timeout",
			src:  groq + "chains:\n  a:\n    routes: [groq/llama-3.1-8b-instant]\n    first_token_timeout: 0s\n  b:\n    routes: [groq/llama-3.1-8b-instant]\n    attempt_timeout: 8s\n    first_token_timeout: 12s\n",
			want: []string{
				`t.yaml:6: chains.a.first_token_timeout: must be more than 0 (write, say, 10s)`,
				`t.yaml:10: chains.b.first_token_timeout: 12s is longer than attempt_timeout 8s, which caps the wait for a first token too; write at most 8s, or raise attempt_timeout`,
			},
		},
		{
			name: "stream keep-alive",
			src:  "server:\n  stream_keepalive: 100ms\n",
			want: []string{`t.yaml:2: server.stream_keepalive: 100ms is under 1s: a keep-alive that often is only traffic (write, say, 10s, or 0s for none)`},
		},
		{
			name: "blip wait negative",
			src:  groq + "chains:\n  a:\n    routes: [groq/llama-3.1-8b-instant]\n    blip_wait: -1s\n",
			want: []string{`t.yaml:6: chains.a.blip_wait: "-1s" is negative; a duration is 0 or more`},
		},
		{
			name: "blip wait past half the deadline",
			src:  groq + "chains:\n  a:\n    routes: [groq/llama-3.1-8b-instant]\n    deadline: 20s\n    blip_wait: 15s\n",
			want: []string{`t.yaml:7: chains.a.blip_wait: 15s is more than half the deadline 20s, which would leave the retry little time to answer (write, say, 5s)`},
		},
		{
			name: "wait cap on an interactive chain",
			src:  groq + "chains:\n  a:\n    routes: [groq/llama-3.1-8b-instant]\n    wait_cap: 1m\n",
			want: []string{`t.yaml:6: chains.a.wait_cap: interactive chains never wait; set interactive: false to wait`},
		},
		{
			name: "wait cap past the deadline",
			src:  groq + "chains:\n  a:\n    routes: [groq/llama-3.1-8b-instant]\n    interactive: false\n    wait_cap: 5m\n    deadline: 1m\n",
			want: []string{`t.yaml:7: chains.a.wait_cap: 5m0s is longer than the deadline 1m0s`},
		},
		{
			name: "fallback",
			src:  groq + "chains:\n  a:\n    routes: [groq/llama-3.1-8b-instant]\n    fallback: {error: true, search: ./content}\n",
			want: []string{`t.yaml:6: chains.a.fallback: {error: true} stands alone; want {message: "..."}, {error: true}, {search: ./content} or {search: ./content, message: "..."}`},
		},
		{
			name: "same model",
			src:  "providers:\n  groq: {}\n  cerebras: {}\nchains:\n  oss:\n    same_model: true\n    routes:\n      - groq/openai/gpt-oss-120b\n      - cerebras/gpt-oss-120b\n      - cerebras/llama-3.3-70b\n",
			want: []string{`t.yaml:10: chains.oss.routes[2]: same_model chain: cerebras/llama-3.3-70b is model llama-3.3-70b, but routes[0] groq/openai/gpt-oss-120b is model gpt-oss-120b (set canonical: on the model if they are the same)`},
		},
		{
			name: "role syntax",
			src:  "listen: :1\n",
			env:  map[string]string{"PLANNER_MODEL": "groq/openai/gpt-oss-120b"},
			want: []string{`environment: PLANNER_MODEL: route 1 is not kind:provider:model; want kind:provider:model, several joined with " | ", such as "openai-compatible:groq:openai/gpt-oss-120b | openai-compatible:cerebras:gpt-oss-120b" (kind is openai-compatible or gemini)`},
		},
		{
			name: "role kind",
			src:  "listen: :1\n",
			env:  map[string]string{"JUDGE_MODEL": "openai:groq:llama-3.1-8b-instant"},
			want: []string{`environment: JUDGE_MODEL: route 1: unknown kind "openai" (did you mean "openai-compatible"?); want kind:provider:model, several joined with " | ", such as "openai-compatible:groq:openai/gpt-oss-120b | openai-compatible:cerebras:gpt-oss-120b" (kind is openai-compatible or gemini)`},
		},
		{
			name: "role dialect",
			src:  "listen: :1\n",
			env:  map[string]string{"JUDGE_MODEL": "gemini:groq:llama-3.1-8b-instant"},
			want: []string{`environment: JUDGE_MODEL: route 1 is gemini but provider groq speaks openai`},
		},
		{
			name: "role same model",
			src:  "listen: :1\n",
			env:  map[string]string{"EXTRACTOR_MODEL": "openai-compatible:groq:openai/gpt-oss-120b | gemini:gemini:gemma-3-27b-it"},
			want: []string{`environment: EXTRACTOR_MODEL: same_model chain: gemini/gemma-3-27b-it is model gemma-3-27b-it, but routes[0] groq/openai/gpt-oss-120b is model gpt-oss-120b (set canonical: on the model if they are the same)`},
		},
		{
			name: "role unknown model",
			src:  "listen: :1\n",
			env:  map[string]string{"PLANNER_MODEL": "openai-compatible:groq:gpt-oss-120b"},
			want: []string{`environment: PLANNER_MODEL: unknown route "groq/gpt-oss-120b" (did you mean "groq/openai/gpt-oss-120b"?); groq's models are: llama-3.1-8b-instant, llama-3.3-70b-versatile, openai/gpt-oss-120b, openai/gpt-oss-20b, qwen/qwen3-32b, meta-llama/llama-4-scout-17b-16e-instruct, moonshotai/kimi-k2-instruct-0905, groq/compound, groq/compound-mini, allam-2-7b, qwen/qwen3.6-27b (add others under providers.groq.models)`},
		},
		{
			name: "role clashes with a chain",
			src:  groq + "chains:\n  planner: {routes: [groq/llama-3.1-8b-instant]}\n",
			env:  map[string]string{"PLANNER_MODEL": "openai-compatible:groq:llama-3.1-8b-instant"},
			want: []string{`environment: PLANNER_MODEL: defines chain "planner", which chains: already defines; rename one or drop PLANNER_MODEL from roles:`},
		},
		{
			name: "role variable name",
			src:  "roles: [planner-model]\n",
			want: []string{`t.yaml:1: roles[0]: "planner-model" is not an environment variable's name (write, say, PLANNER_MODEL)`},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("t.yaml", []byte(tc.src), func(k string) string { return tc.env[k] })
			var cfgErr *Error
			if !errors.As(err, &cfgErr) {
				t.Fatalf("Parse error = %v, want a *config.Error", err)
			}
			var got []string
			for _, p := range cfgErr.Problems {
				got = append(got, p.String())
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("problems:\ngot:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// TestValid checks files that must compile.
func TestValid(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		env       map[string]string
	}{
		{"empty file", "", nil},
		{"comments only", "# nothing\n", nil},
		{"flow mapping with references", "providers: {groq: {api_key: ${GROQ_API_KEY}}}\ngateway_keys: [${A}, ${B:-}]\n", map[string]string{"GROQ_API_KEY": "k", "A": "gw-key-0123456789abcdef"}},
		{"anchors and merge keys", "x: &base {attempt_timeout: 8s, deadline: 20s}\n", nil},
		{"same model across providers", "providers: {groq: {}, cerebras: {}}\nchains:\n  oss: {same_model: true, routes: [groq/openai/gpt-oss-120b, cerebras/gpt-oss-120b]}\n", nil},
		{"canonical override", "providers:\n  groq: {}\n  lab: {base_url: http://x/v1, models: {big: {canonical: gpt-oss-120b}}}\nchains:\n  oss: {same_model: true, routes: [groq/openai/gpt-oss-120b, lab/big]}\n", nil},
		{"ollama takes any model", "providers:\n  ollama: {}\nchains:\n  l: {routes: [\"ollama/qwen3:8b\"]}\n", nil},
		{"gemini role", "listen: :1\n", map[string]string{"JUDGE_MODEL": "gemini:gemini:gemma-3-27b-it"}},
		{"roles off", "roles: []\n", map[string]string{"PLANNER_MODEL": "nonsense"}},
		{"escaped reference", "call_log: \"$${HOME}/calls.jsonl\"\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := tc.src
			if tc.name == "anchors and merge keys" {
				src = "providers: {groq: {}}\nchains:\n  a: &a {routes: [groq/llama-3.1-8b-instant], attempt_timeout: 8s}\n  b:\n    <<: *a\n    deadline: 30s\n"
			}
			p, err := Parse("t.yaml", []byte(src), func(k string) string { return tc.env[k] })
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if p.Listen == "" || p.DataDir == "" {
				t.Errorf("defaults not applied")
			}
		})
	}
}

func TestMergeAndEscape(t *testing.T) {
	src := "providers: {groq: {}}\ncall_log: \"$${HOME}/c\"\nchains:\n  a: &a {routes: [groq/llama-3.1-8b-instant], attempt_timeout: 8s}\n  b:\n    <<: *a\n    deadline: 30s\n"
	p, err := Parse("t.yaml", []byte(src), func(k string) string { return map[string]string{"HOME": "/h"}[k] })
	if err != nil {
		t.Fatal(err)
	}
	if b := p.Chains["b"]; b.AttemptTimeout.String() != "8s" || b.Deadline.String() != "30s" || len(b.Routes) != 1 {
		t.Errorf("merged chain b = attempt %s deadline %s routes %d", b.AttemptTimeout, b.Deadline, len(b.Routes))
	}
	if p.CallLog != "${HOME}/c" {
		t.Errorf("call_log = %q, want the escaped reference kept", p.CallLog)
	}
}

// TestBlipDefaults: a blip is retried by default, after a 429's wait of up
// to 5s, or half a deadline shorter than 10s (issue 13); a chain turns it
// off with retry_blips: false.
func TestBlipDefaults(t *testing.T) {
	src := "providers: {groq: {}}\nchains:\n" +
		"  plain: {routes: [groq/llama-3.1-8b-instant]}\n" +
		"  short: {routes: [groq/llama-3.1-8b-instant], attempt_timeout: 3s, deadline: 6s}\n" +
		"  off: {routes: [groq/llama-3.1-8b-instant], retry_blips: false, blip_wait: 0s}\n"
	p, err := Parse("t.yaml", []byte(src), func(string) string { return "" })
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	for _, tc := range []struct {
		chain string
		retry bool
		wait  time.Duration
	}{{"plain", true, 5 * time.Second}, {"short", true, 3 * time.Second}, {"off", false, 0}} {
		if c := p.Chains[tc.chain]; c.RetryBlips != tc.retry || c.BlipWait != tc.wait {
			t.Errorf("chain %s: retry_blips %v, blip_wait %s; want %v, %s", tc.chain, c.RetryBlips, c.BlipWait, tc.retry, tc.wait)
		}
	}
}

// TestHourMonthLimits: rph, tph and tpmo are read at the provider and the
// model, and a preset's hour and month reach the route (Cerebras's RPH,
// Mistral's tokens per month).
func TestHourMonthLimits(t *testing.T) {
	src := "providers:\n  cerebras: {limits: {tph: 500}, models: {gpt-oss-120b: {rph: 3}}}\n  mistral: {}\n" +
		"chains:\n  a: {routes: [cerebras/gpt-oss-120b, mistral/mistral-small-latest]}\n"
	p, err := Parse("t.yaml", []byte(src), func(k string) string {
		if strings.HasSuffix(k, "_API_KEY") {
			return "k"
		}
		return ""
	})
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	c := p.Routes["cerebras/gpt-oss-120b"]
	if c.Limits.RPH != 3 || c.Limits.TPH != 1000000 || c.Provider.Limits.TPH != 500 {
		t.Errorf("cerebras: rph %d, tph %d, provider tph %d; want 3, 1000000 (preset), 500", c.Limits.RPH, c.Limits.TPH, c.Provider.Limits.TPH)
	}
	if m := p.Routes["mistral/mistral-small-latest"].Provider.Limits.TPMo; m != 1000000000 {
		t.Errorf("mistral: provider tpmo %d, want 1000000000 (the preset's month)", m)
	}
}

// TestKeylessPreset: Pollinations and OVHcloud are enabled with no variable set and say
// so in check's KEY column; a key set in its variable is used.
func TestKeylessPreset(t *testing.T) {
	src := "providers:\n  pollinations: {}\n  huggingface: {}\n  ovhcloud: {}\nchains:\n  a: {routes: [pollinations/openai, huggingface/openai/gpt-oss-120b, ovhcloud/gpt-oss-120b]}\n"
	p, err := Parse("t.yaml", []byte(src), func(string) string { return "" })
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	pol := p.Routes["pollinations/openai"].Provider
	if pol.Disabled || pol.APIKey != "" || !strings.Contains(pol.KeySource, "keyless") {
		t.Errorf("pollinations without a key: disabled %v (%s), key set %v, key source %q; want enabled and keyless", pol.Disabled, pol.DisabledReason, pol.APIKey != "", pol.KeySource)
	}
	if ovh := p.Routes["ovhcloud/gpt-oss-120b"]; ovh.Disabled || ovh.Provider.APIKey != "" || ovh.Limits.RPM != 2 {
		t.Errorf("ovhcloud without a key: disabled %v (%s), key set %v, rpm %d; want enabled, keyless, 2 RPM", ovh.Disabled, ovh.DisabledReason, ovh.Provider.APIKey != "", ovh.Limits.RPM)
	}
	if hf := p.Routes["huggingface/openai/gpt-oss-120b"].Provider; !hf.Disabled || hf.DisabledReason != "no key: set HF_TOKEN" {
		t.Errorf("huggingface without HF_TOKEN: disabled %v %q, want disabled, no key: set HF_TOKEN", hf.Disabled, hf.DisabledReason)
	}
	p, err = Parse("t.yaml", []byte(src), func(k string) string { return map[string]string{"POLLINATIONS_API_KEY": "sk_test"}[k] })
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if pol := p.Routes["pollinations/openai"].Provider; pol.APIKey != "sk_test" || pol.KeySource != "env POLLINATIONS_API_KEY" {
		t.Errorf("pollinations with a key: key set %v, source %q; want the key from env POLLINATIONS_API_KEY", pol.APIKey == "sk_test", pol.KeySource)
	}
}
