package config

import (
	"strings"
	"testing"
	"time"
)

func TestParseDuration(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    time.Duration
		wantErr string
	}{
		{"8s", 8 * time.Second, ""},
		{"1m30s", 90 * time.Second, ""},
		{" 250ms ", 250 * time.Millisecond, ""},
		{"0s", 0, ""},
		{"8", 0, `"8" is not a duration (write 8s)`},
		{"1.5", 0, `"1.5" is not a duration (write 1.5s)`},
		{"eight", 0, `"eight" is not a duration (write, say, 8s, 1m30s or 250ms)`},
		{"-3s", 0, `"-3s" is negative; a duration is 0 or more`},
	} {
		got, err := ParseDuration(tc.in)
		if tc.wantErr != "" {
			if err == nil || err.Error() != tc.wantErr {
				t.Errorf("ParseDuration(%q) error = %v, want %s", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil || time.Duration(got) != tc.want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	var d Duration
	if err := d.UnmarshalText([]byte("2m")); err != nil || d.String() != "2m0s" {
		t.Errorf("UnmarshalText = %v, %v", d, err)
	}
}

func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Size
		ok   bool
	}{
		{"4MiB", 4 << 20, true},
		{"512KiB", 512 << 10, true},
		{"1MB", 1000000, true},
		{"1048576", 1 << 20, true},
		{"10B", 10, true},
		{"lots", 0, false},
		{"-1MiB", 0, false},
		{"1e300GiB", 0, false},
	} {
		got, err := ParseSize(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func TestExpand(t *testing.T) {
	env := func(k string) string { return map[string]string{"A": "alpha", "E": ""}[k] }
	for _, tc := range []struct {
		in, want string
		vars     int
		literal  bool
		wantErr  bool
	}{
		{in: "plain", want: "plain", literal: true},
		{in: "${A}", want: "alpha", vars: 1},
		{in: "${A}-${B}", want: "alpha-", vars: 2, literal: true},
		{in: "${E:-dflt}", want: "dflt", vars: 1, literal: true},
		{in: "${A:-dflt}", want: "alpha", vars: 1, literal: true},
		{in: "${E:-}", want: "", vars: 1},
		{in: "$${A}", want: "${A}", literal: true},
		{in: "$A stays", want: "$A stays", literal: true},
		{in: "$" + openBrace + "A" + closeBrace, want: "alpha", vars: 1},
		{in: "${A", wantErr: true},
		{in: "${1A}", wantErr: true},
		{in: "${}", wantErr: true},
	} {
		x, err := expand(tc.in, env)
		if tc.wantErr {
			if err == nil {
				t.Errorf("expand(%q): no error", tc.in)
			}
			continue
		}
		if err != nil || x.value != tc.want || len(x.vars) != tc.vars || x.literal != tc.literal {
			t.Errorf("expand(%q) = %q vars %v literal %v err %v; want %q vars %d literal %v",
				tc.in, x.value, x.vars, x.literal, err, tc.want, tc.vars, tc.literal)
		}
	}
}

func TestParseRole(t *testing.T) {
	got, err := parseRole("openai-compatible:groq:openai/gpt-oss-120b | openai-compatible:ollama:qwen3:8b|gemini:gemini:gemma-3-27b-it")
	if err != nil {
		t.Fatal(err)
	}
	want := []roleRoute{
		{"openai-compatible", "groq", "openai/gpt-oss-120b"},
		{"openai-compatible", "ollama", "qwen3:8b"},
		{"gemini", "gemini", "gemma-3-27b-it"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d routes, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("route %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	for _, bad := range []string{"groq", "openai-compatible:groq", "openai-compatible::m", "x:groq:m", "openai-compatible:groq:m |", "openai-compatible:a/b:m"} {
		if _, err := parseRole(bad); err == nil {
			t.Errorf("parseRole(%q): no error", bad)
		}
	}
	for in, want := range map[string]string{"PLANNER_MODEL": "planner", "JUDGE_MODEL": "judge", "WRITER": "writer"} {
		if got := roleChainName(in); got != want {
			t.Errorf("roleChainName(%s) = %s, want %s", in, got, want)
		}
	}
}

func TestDidYouMean(t *testing.T) {
	valid := []string{"attempt_timeout", "deadline", "rank", "openai/gpt-oss-120b"}
	for in, want := range map[string]string{
		"atempt_timeout": ` (did you mean "attempt_timeout"?)`,
		"dedline":        ` (did you mean "deadline"?)`,
		"rnak":           ` (did you mean "rank"?)`,
		"gpt-oss-120b":   ` (did you mean "openai/gpt-oss-120b"?)`,
		"colour":         ``,
	} {
		if got := didYouMean(in, valid); got != want {
			t.Errorf("didYouMean(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseReset(t *testing.T) {
	for in, want := range map[string]string{
		"rolling":                      "rolling",
		"midnight":                     "midnight UTC",
		"midnight UTC":                 "midnight UTC",
		"midnight America/Los_Angeles": "midnight America/Los_Angeles",
	} {
		r, err := parseReset(in)
		if err != nil || r.String() != want || r.Location == nil {
			t.Errorf("parseReset(%q) = %s, %v; want %s", in, r.String(), err, want)
		}
	}
	for _, bad := range []string{"", "noon", "midnight Local", "midnight ../../etc/passwd", "rolling UTC"} {
		if _, err := parseReset(bad); err == nil {
			t.Errorf("parseReset(%q): no error", bad)
		}
	}
}

func TestPresets(t *testing.T) {
	wantKeys := map[string]string{
		"groq": "GROQ_API_KEY", "gemini": "GEMINI_API_KEY", "cerebras": "CEREBRAS_API_KEY",
		"openrouter": "OPENROUTER_API_KEY", "nvidia": "NVIDIA_API_KEY", "mistral": "MISTRAL_API_KEY",
		"github": "GITHUB_TOKEN", "cloudflare": "CLOUDFLARE_API_TOKEN", "ollama": "",
		"pollinations": "POLLINATIONS_API_KEY", "huggingface": "HF_TOKEN", "ovhcloud": "OVH_AI_ENDPOINTS_ACCESS_TOKEN",
		"cohere": "COHERE_API_KEY", "sambanova": "SAMBANOVA_API_KEY", "zai": "ZAI_API_KEY",
	}
	ps := Presets()
	if len(ps) != len(wantKeys) {
		t.Errorf("%d presets, want %d", len(ps), len(wantKeys))
	}
	for _, p := range ps {
		if want, ok := wantKeys[p.Name]; !ok || p.KeyEnv != want {
			t.Errorf("preset %s key env = %q, want %q", p.Name, p.KeyEnv, want)
		}
		if p.Flavor != p.Name || p.Source == "" || p.BaseURL == "" {
			t.Errorf("preset %s: flavor %q, source or base URL missing", p.Name, p.Flavor)
		}
		if _, err := parseReset(p.Reset); err != nil {
			t.Errorf("preset %s reset: %v", p.Name, err)
		}
		for _, m := range p.Models {
			if m.Source == "" {
				t.Errorf("preset %s model %s has no source", p.Name, m.ID)
			}
		}
	}
	g, _ := LookupPreset("groq")
	c, _ := LookupPreset("cerebras")
	gm, _ := g.Model("openai/gpt-oss-120b")
	cm, _ := c.Model("gpt-oss-120b")
	if gm.Canonical != "gpt-oss-120b" || cm.Canonical != "gpt-oss-120b" {
		t.Errorf("gpt-oss-120b canonical names differ: %q, %q", gm.Canonical, cm.Canonical)
	}
	gem, _ := LookupPreset("gemini")
	if gem.Dialect != DialectGemini || gem.BaseURL != "https://generativelanguage.googleapis.com/v1beta" || gem.Reset != "midnight America/Los_Angeles" {
		t.Errorf("gemini preset = %+v", gem)
	}
	or, _ := LookupPreset("openrouter")
	if or.Limits.RPM != 20 || or.Limits.RPD != 50 || or.Reset != "midnight UTC" {
		t.Errorf("openrouter limits = %+v, reset %s", or.Limits, or.Reset)
	}
	nv, _ := LookupPreset("nvidia")
	if nv.Limits.RPM != 40 {
		t.Errorf("nvidia rpm = %d, want 40", nv.Limits.RPM)
	}
}

// TestMoreFreePresets: SambaNova's Free Tier limits are per model as its
// rate-limit table publishes them; Z.ai's free Flash models carry no limit,
// since Z.ai publishes none (0 is unknown, not invented).
func TestMoreFreePresets(t *testing.T) {
	sn, ok := LookupPreset("sambanova")
	if !ok || sn.BaseURL != "https://api.sambanova.ai/v1" || sn.Dialect != DialectOpenAI || sn.KeyOptional {
		t.Fatalf("sambanova preset = %+v", sn)
	}
	for _, m := range sn.Models {
		if m.Limits != (Limits{RPM: 20, RPD: 20, TPD: 200000}) {
			t.Errorf("sambanova %s limits = %+v, want 20 RPM / 20 RPD / 200000 TPD", m.ID, m.Limits)
		}
	}
	if m, ok := sn.Model("gpt-oss-120b"); !ok || m.Canonical != "gpt-oss-120b" {
		t.Errorf("sambanova gpt-oss-120b = %+v, %v; want canonical gpt-oss-120b", m, ok)
	}
	z, ok := LookupPreset("zai")
	if !ok || z.BaseURL != "https://api.z.ai/api/paas/v4" || z.Limits != (Limits{}) || len(z.Models) == 0 {
		t.Fatalf("zai preset = %+v", z)
	}
	for _, m := range z.Models {
		if m.Limits != (Limits{}) || !strings.HasSuffix(m.ID, "-flash") {
			t.Errorf("zai model %s limits = %+v, want a free flash model with no published limit", m.ID, m.Limits)
		}
	}
}
