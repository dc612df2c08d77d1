package failure

import (
	"strings"
	"testing"
)

func TestRedact(t *testing.T) {
	cases := []struct{ in, want string }{
		{"key gsk_live_SECRET123 bad", "key [key] bad"},
		{"glued xgsk_live_SECRET123", "glued x[key]"},
		{"google AIzaSySECRET", "google [key]"},
		{"https://x/v1beta/models/m:generateContent?key=AIzaSyA1b2C3d4E5f6&alt=sse", "https://x/v1beta/models/m:generateContent?key=[redacted]&alt=sse"},
		{"?api_key=abc123&x=1", "?api_key=[redacted]&x=1"},
		{"openrouter sk-or-v1-0123456789abcdef", "openrouter [key]"},
		{"nvidia nvapi-AbCdEf123456", "nvidia [key]"},
		{"github ghp_abcdEFGH1234 and github_pat_11AAAA_bbbb", "github [key] and [key]"},
		{"cerebras csk-abcd1234", "cerebras [key]"},
		{"a task-based risk-free plan", "a task-based risk-free plan"},
		{"Authorization: Bearer abc.def-ghi", "Authorization: Bearer [redacted]"},
		{"in organization `org_01k9v83k2bf1zr2nc2pzp9y3ad` service", "in organization `[id]` service"},
		{`"user_id":"user_3DwvHydeNrDpCeQHaaFQqY8fBNH"`, `"user_id":"[id]"`},
		{"contact jane.doe+x@example.co.uk now", "contact [email] now"},
		{"account 'Qawmu2vUw3rdcREnubcAVqe1c55nUTb1hCogKQx4BCA'", "account '[redacted]'"},
		{"mistral key abcdEFGHijklMNOP1234qrstUVWX5678", "mistral key [redacted]"},
		{"GenerateRequestsPerDayPerProjectPerModel-FreeTier", "GenerateRequestsPerDayPerProjectPerModel-FreeTier"},
		{"input token count (1196265) reset 1779321600000", "input token count (1196265) reset 1779321600000"},
		{"model `deepseek-r1-distill-llama-70b` and llama-4-scout-17b-16e-instruct", "model `deepseek-r1-distill-llama-70b` and llama-4-scout-17b-16e-instruct"},
		{"limit_rpm/qwen/qwen3-coder-480b-a35b-07-25/a9bbd882-011f-4606-8f60-85f3cb642586", "limit_rpm/qwen/qwen3-coder-480b-a35b-07-25/a9bbd882-011f-4606-8f60-85f3cb642586"},
		{"a user-friendly user_message for project-settings", "a user-friendly user_message for project-settings"},
		{"line one\n* line  two\t", "line one * line two"},
		{"", ""},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			if got := Redact(tc.in); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestLogText(t *testing.T) {
	long := strings.Repeat("please summarise my secret diary ", 3)
	cases := []struct {
		name string
		v    Verdict
		want string
	}{
		{"code and message", Verdict{Class: RateMinute, Code: "rate_limit_exceeded", Message: "Please try again in 2s."}, "rate_limit_exceeded: Please try again in 2s."},
		{"class when empty", Verdict{Class: Timeout}, "timeout"},
		{"code only", Verdict{Class: Auth, Code: "invalid_api_key"}, "invalid_api_key"},
		{"short quotes kept", Verdict{Message: "model `llama-3.1-8b-instant` in `on_demand`"}, "model `llama-3.1-8b-instant` in `on_demand`"},
		{"long double quote elided", Verdict{Message: `Unknown name "` + long + `": Cannot find field.`}, `Unknown name "…": Cannot find field.`},
		{"long backtick elided", Verdict{Message: "bad value `" + long + "` here"}, "bad value `…` here"},
		{"unclosed long quote elided", Verdict{Message: `echo "` + long}, `echo "…`},
		{"apostrophe kept", Verdict{Message: "please upgrade to Cloudflare's Workers Paid plan if you would like to continue usage."},
			"please upgrade to Cloudflare's Workers Paid plan if you would like to continue usage."},
		{"key redacted again", Verdict{Message: "bad gsk_live_SECRET123"}, "bad [key]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.v.LogText(); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
	got := Verdict{Message: strings.Repeat("word ", 100)}.LogText()
	if len(got) > maxLog || !strings.HasSuffix(got, "…") {
		t.Errorf("long text: got %d bytes %q, want <= %d ending in …", len(got), got, maxLog)
	}
}

func TestClip(t *testing.T) {
	s := strings.Repeat("é", 200) // 400 bytes
	got := clip(s, maxMessage)
	if len(got) > maxMessage || !strings.HasSuffix(got, "…") || !strings.HasPrefix(got, "é") {
		t.Errorf("got %d bytes, want <= %d ending in …", len(got), maxMessage)
	}
	if got := clip("short", 10); got != "short" {
		t.Errorf("got %q, want short", got)
	}
}
