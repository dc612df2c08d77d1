package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestSecretValues: every configured secret is in the plan's set, whatever
// its shape and wherever it came from, and nothing that is not a secret is.
func TestSecretValues(t *testing.T) {
	keyFile := filepath.Join(t.TempDir(), "mistral")
	if err := os.WriteFile(keyFile, []byte("correcthorsebatterystaple\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	yaml := `
admin_token: ${TOLLFREE_ADMIN_TOKEN}
gateway_keys: [${TOLLFREE_KEY}, ${SECOND_KEY}]
redis: redis://app:${REDIS_PASSWORD}@127.0.0.1:6379/0
providers:
  groq: {}
  mistral: {api_key_file: ` + keyFile + `}
  proxy:
    base_url: https://user:${PROXY_PASSWORD}@proxy.example/v1?api_key=${PROXY_QUERY_KEY}&region=eu
    api_key: ${PROXY_KEY}
    headers: {cf-aig-authorization: "Bearer ${AIG_TOKEN}", HTTP-Referer: https://example.org}
    models: {m: {}}
chains:
  answer: {routes: [groq/llama-3.3-70b-versatile, proxy/m]}
`
	env := testEnv(map[string]string{
		"SECOND_KEY": "second-gateway-key-0042", "REDIS_PASSWORD": "redis-pass-0042",
		"PROXY_PASSWORD": "proxy-pass-0042", "PROXY_QUERY_KEY": "query-key-0042",
		"PROXY_KEY": "tfk.Zq9-weird+KEY/with=signs", "AIG_TOKEN": "aig-token-0042",
	})
	p, err := Parse("test.yaml", []byte(yaml), env)
	if err != nil {
		t.Fatal(err)
	}
	got := p.SecretValues()
	for _, want := range []string{
		groqKey, adminKey, gwKey, "second-gateway-key-0042", "redis-pass-0042", "correcthorsebatterystaple",
		"proxy-pass-0042", "query-key-0042", "tfk.Zq9-weird+KEY/with=signs", "Bearer aig-token-0042", "aig-token-0042",
	} {
		if !slices.Contains(got, want) {
			t.Errorf("SecretValues misses %q", want)
		}
	}
	for _, v := range got {
		if strings.Contains(v, "example.org") || v == "eu" || v == "app" {
			t.Errorf("SecretValues holds %q, which is no secret", v)
		}
	}
	if p.Secrets.Len() != len(got) {
		t.Errorf("Secrets holds %d values, SecretValues %d", p.Secrets.Len(), len(got))
	}
	if s := p.Secrets.Scrub("echo: tfk.Zq9-weird+KEY/with=signs"); s != "echo: [secret]" {
		t.Errorf("Secrets.Scrub = %q", s)
	}
}
