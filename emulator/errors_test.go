package emulator

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// googlePretty turns a compact body quoted in docs/PROVIDERS.md into what Google
// sends: two-space indentation and a trailing newline.
func googlePretty(t *testing.T, compactBody string) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Indent(&b, []byte(compactBody), "", "  "); err != nil {
		t.Fatalf("indent: %v", err)
	}
	return b.String() + "\n"
}

// TestVerbatimBodies checks the bodies docs/PROVIDERS.md quotes, byte for byte
// (account ids replaced by the emulator's made-up ones).
func TestVerbatimBodies(t *testing.T) {
	bigPrompt := strings.Repeat("x", 14368*4)
	tests := []struct {
		name    string
		flavor  string
		model   Model
		key     string // provider key; the request sends none
		step    Step
		request string // OpenAI body, when not the default
		status  int
		body    string
		header  map[string]string
	}{
		{
			name: "groq rpm", flavor: FlavorGroq, model: Model{ID: "llama-3.1-8b-instant", Limits: Limits{RPM: 30}},
			step: Step{Kind: RateMinute}, status: 429,
			body:   "{\"error\":{\"message\":\"Rate limit reached for model `llama-3.1-8b-instant` in organization `" + groqOrg + "` service tier `on_demand` on requests per minute (RPM): Limit 30, Used 30, Requested 1. Please try again in 2s. Need more tokens? Upgrade to Dev Tier today at https://console.groq.com/settings/billing\",\"type\":\"requests\",\"code\":\"rate_limit_exceeded\"}}",
			header: map[string]string{"Retry-After": "2"},
		},
		{
			name: "groq 413", flavor: FlavorGroq, model: Model{ID: "llama-3.1-70b-versatile"},
			step:    Step{Kind: TooLarge},
			request: `{"model":"llama-3.1-70b-versatile","messages":[{"role":"user","content":"` + bigPrompt + `"}]}`,
			status:  413,
			body:    "{\"error\":{\"message\":\"Request too large for model `llama-3.1-70b-versatile` in organization `" + groqOrg + "` on tokens per minute (TPM): Limit 6000, Requested 14368, please reduce your message size and try again. Visit https://console.groq.com/docs/rate-limits for more information.\",\"type\":\"tokens\",\"code\":\"rate_limit_exceeded\"}}",
		},
		{
			name: "groq 404", flavor: FlavorGroq, model: Model{ID: "llama-3.3-70b-versatile"}, step: Step{Kind: NotFound}, status: 404,
			body: "{\"error\":{\"message\":\"The model `llama-3.3-70b-versatile` does not exist or you do not have access to it.\",\"type\":\"invalid_request_error\",\"code\":\"model_not_found\"}}",
		},
		{
			name: "groq 401", flavor: FlavorGroq, model: Model{ID: "m"}, key: "gsk_good", status: 401,
			body: `{"error":{"message":"Invalid API Key","type":"invalid_request_error","code":"invalid_api_key"}}`,
		},
		{
			name: "groq context", flavor: FlavorGroq, model: Model{ID: "m"}, step: Step{Kind: ContextLength}, status: 400,
			body: `{"error":{"message":"Please reduce the length of the messages or completion.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`,
		},
		{
			name: "groq decommissioned", flavor: FlavorGroq, model: Model{ID: "deepseek-r1-distill-llama-70b", Gone: true}, status: 400,
			body: "{\"request_id\":\"req_01emulator000000000000001\",\"created_at\":\"2026-05-20T12:00:00.000Z\",\"error\":{\"message\":\"The model `deepseek-r1-distill-llama-70b` has been decommissioned and is no longer supported. Please refer to https://console.groq.com/docs/deprecations for a recommendation on which model to use instead.\",\"type\":\"invalid_request_error\",\"param\":\"\",\"code\":\"model_decommissioned\"}}",
		},
		{
			name: "cerebras rpm", flavor: FlavorCerebras, model: Model{ID: "llama3.1-8b"}, step: Step{Kind: RateMinute}, status: 429,
			body: `{"message":"Requests per minute limit exceeded - too many requests sent.","type":"too_many_requests_error","param":"quota","code":"request_quota_exceeded"}`,
		},
		{
			name: "openrouter rpd", flavor: FlavorOpenRouter, model: Model{ID: "qwen/qwen3-coder:free"}, step: Step{Kind: RateDay}, status: 429,
			body: `{"error":{"message":"Rate limit exceeded: free-models-per-day. Add 10 credits to unlock 1000 free model requests per day","code":429,"metadata":{"headers":{"X-RateLimit-Limit":"50","X-RateLimit-Remaining":"0","X-RateLimit-Reset":"1779321600000"},"provider_name":null}},"user_id":"` + openRouterUID + `"}`,
		},
		{
			name: "openrouter 401", flavor: FlavorOpenRouter, model: Model{ID: "m:free"}, key: "sk-or-v1-good", status: 401,
			body: `{"error":{"message":"No auth credentials found","code":401}}`,
		},
		{
			name: "nvidia 429", flavor: FlavorNVIDIA, model: Model{ID: "moonshotai/kimi-k2"}, step: Step{Kind: RateMinute}, status: 429,
			body: `{"status":429,"title":"Too Many Requests"}`,
		},
		{
			name: "nvidia 403", flavor: FlavorNVIDIA, model: Model{ID: "m"}, step: Step{Kind: Forbidden}, status: 403,
			body: `{"status":403,"title":"Forbidden","detail":"Authorization failed"}`,
		},
		{
			name: "nvidia 404", flavor: FlavorNVIDIA, model: Model{ID: "m"}, step: Step{Kind: NotFound}, status: 404,
			body: `{"status":404,"title":"Not Found","detail":"Function '` + uuidOf("m") + `': Not found for account '` + nvidiaAccount + `'"}`,
		},
		{
			name: "mistral 429", flavor: FlavorMistral, model: Model{ID: "mistral-small-latest"}, step: Step{Kind: RateMinute}, status: 429,
			body: `{"object":"error","message":"Rate limit exceeded","type":"rate_limited","param":null,"code":"1300"}`,
		},
		{
			name: "github rpd", flavor: FlavorGitHub, model: Model{ID: "openai/gpt-4o-mini", Limits: Limits{RPD: 50}},
			step: Step{Kind: RateDay, RetryAfter: 5631 * time.Second}, status: 429,
			body:   `{"error":{"code":"RateLimitReached","message":"Rate limit of 50 per 86400s exceeded for UserByModelByDay. Please wait 5631 seconds before retrying.","details":"Rate limit of 50 per 86400s exceeded for UserByModelByDay. Please wait 5631 seconds before retrying."}}`,
			header: map[string]string{"Retry-After": "5631"},
		},
		{
			name: "github 413", flavor: FlavorGitHub, model: Model{ID: "openai/gpt-4o"}, step: Step{Kind: TooLarge}, status: 413,
			body: `{"error":{"code":"tokens_limit_reached","message":"Request body too large for gpt-4o model. Max size: 8000 tokens."}}`,
		},
		{
			name: "ollama 404", flavor: FlavorOllama, model: Model{ID: "gemma3:12b"}, step: Step{Kind: NotFound}, status: 404,
			body: `{"error":{"message":"model \"gemma3:12b\" not found, try pulling it first","type":"not_found_error","param":null,"code":null}}`,
		},
		{
			name: "gemini bad key", flavor: FlavorGemini, model: Model{ID: "gemini-2.5-flash"}, key: "AIza-good", status: 400,
			body: googlePretty(t, `{"error": {"code": 400, "message": "API key not valid. Please pass a valid API key.", "status": "INVALID_ARGUMENT", "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID", "domain": "googleapis.com", "metadata": {"service": "generativelanguage.googleapis.com"}}, {"@type": "type.googleapis.com/google.rpc.LocalizedMessage", "locale": "en-US", "message": "API key not valid. Please pass a valid API key."}]}}`),
		},
		{
			name: "gemini high demand", flavor: FlavorGemini, model: Model{ID: "gemini-3-flash"}, step: Step{Kind: HighDemand}, status: 503,
			body: googlePretty(t, `{"error": {"code": 503, "message": "This model is currently experiencing high demand. Spikes in demand are usually temporary. Please try again later.", "status": "UNAVAILABLE"}}`),
		},
		{
			name: "gemini internal", flavor: FlavorGemini, model: Model{ID: "gemini-2.5-flash"}, step: Step{Kind: ServerError}, status: 500,
			body: googlePretty(t, `{"error": {"code": 500, "message": "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting", "status": "INTERNAL"}}`),
		},
		{
			name: "openrouter 502", flavor: FlavorOpenRouter, model: Model{ID: "openai/gpt-oss-120b:free"}, step: Step{Kind: ServerError}, status: 502,
			body: `{"error":{"message":"Network connection lost.","code":502,"metadata":{"error_type":"provider_unavailable"}}}`,
		},
		{
			name: "groq 500", flavor: FlavorGroq, model: Model{ID: "llama-3.1-8b-instant"}, step: Step{Kind: ServerError}, status: 500,
			body: `{"error":{"message":"The server had an error processing your request. Sorry about that! You can retry your request, or contact us through our help center at help.openai.com if you keep seeing this error.","type":"server_error","param":null,"code":null}}`,
		},
		{
			// github.com/kaitranntt/ccs/issues/536 [2026-02] (testdata/free/README.md).
			name: "zai rpm", flavor: FlavorZai, model: Model{ID: "glm-4.7-flash"}, step: Step{Kind: RateMinute}, status: 429,
			body: `{"error":{"code":"1302","message":"Rate limit reached for requests"},"request_id":"` + start.UTC().Format("20060102150405") + `579f5b8f457f4e06"}`,
		},
		{
			// github.com/kaitranntt/ccs/issues/402 [2026-01]: the concurrency throttle is a 429 too.
			name: "zai concurrency", flavor: FlavorZai, model: Model{ID: "glm-4.7-flash"}, step: Step{Kind: HighDemand}, status: 429,
			body: `{"error":{"code":"1302","message":"High concurrency usage of this API, please reduce concurrency or contact customer service to increase limits"},"request_id":"` + start.UTC().Format("20060102150405") + `579f5b8f457f4e06"}`,
		},
		{
			name: "gemini not found", flavor: FlavorGemini, model: Model{ID: "gemini-pro"}, step: Step{Kind: NotFound}, status: 404,
			body: googlePretty(t, `{"error": {"code": 404, "message": "models/gemini-pro is not found for API version v1beta, or is not supported for generateContent. Call ListModels to see the list of available models and their supported methods.", "status": "NOT_FOUND"}}`),
		},
		{
			name: "gemini bad thinking", flavor: FlavorGemini, model: Model{ID: "gemini-2.5-flash"}, step: Step{Kind: BadThinking}, status: 400,
			body: googlePretty(t, `{"error": {"code": 400, "message": "Thinking level is not supported for this model.", "status": "INVALID_ARGUMENT"}}`),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := newEnv(t)
			v.addProvider(Provider{Name: tt.flavor, Flavor: tt.flavor, Key: tt.key}, tt.model)
			if tt.step.Kind != "" {
				v.e.Script(tt.flavor, tt.model.ID, tt.step)
			}
			var r reply
			switch {
			case tt.flavor == FlavorGemini:
				r = v.gemini(tt.flavor, tt.model.ID, false, "")
			case tt.request != "":
				r = v.do(t.Context(), "POST", v.e.BaseURL(v.srv.URL, tt.flavor)+"/chat/completions", tt.request)
			default:
				r = v.chat(tt.flavor, tt.model.ID, "")
			}
			if r.err != nil {
				t.Fatalf("request: %v", r.err)
			}
			if r.status != tt.status {
				t.Errorf("status = %d, want %d", r.status, tt.status)
			}
			if r.body != tt.body {
				t.Errorf("body:\n got %s\nwant %s", r.body, tt.body)
			}
			for k, want := range tt.header {
				if got := r.header.Get(k); got != want {
					t.Errorf("header %s = %q, want %q", k, got, want)
				}
			}
		})
	}
}

// wantStatus is the status each flavor answers for each error kind.
func wantStatus(flavor string, k Kind) int {
	switch k {
	case RateMinute, RateDay:
		return 429
	case HighDemand:
		if flavor == FlavorZai {
			return 429
		}
		return 503
	case ServerError:
		if flavor == FlavorOpenRouter {
			return 502
		}
		return 500
	case Unauthorized:
		if flavor == FlavorGemini {
			return 400
		}
		return 401
	case Forbidden:
		return 403
	case NotFound:
		if flavor == FlavorMistral {
			return 400
		}
		return 404
	case Decommissioned:
		switch flavor {
		case FlavorGroq, FlavorMistral:
			return 400
		case FlavorNVIDIA:
			return 410
		}
		return 404
	case TooLarge:
		switch flavor {
		case FlavorGemini, FlavorCerebras, FlavorMistral:
			return 400
		}
		return 413
	case Refused:
		switch flavor {
		case FlavorGemini:
			return 200
		case FlavorOpenRouter:
			return 403
		}
		return 400
	}
	return 400 // ContextLength, BadThinking, BadRequest
}

// TestEveryErrorKind runs every error kind on every flavor: the status is
// the flavor's, and the body is JSON in the flavor's layout (Google pretty
// with a trailing newline, the others compact).
func TestEveryErrorKind(t *testing.T) {
	kinds := []Kind{RateMinute, RateDay, HighDemand, ServerError, Unauthorized, Forbidden, NotFound, Decommissioned,
		TooLarge, ContextLength, BadThinking, BadRequest, Refused}
	flavors := []string{FlavorGroq, FlavorGemini, FlavorOpenRouter, FlavorCerebras, FlavorNVIDIA,
		FlavorMistral, FlavorGitHub, FlavorOllama, FlavorZai, FlavorGeneric}
	for _, f := range flavors {
		for _, k := range kinds {
			t.Run(f+"/"+string(k), func(t *testing.T) {
				v := newEnv(t)
				v.add(f, Model{ID: "model-a"})
				v.e.Script(f, "model-a", Step{Kind: k})
				r := v.call(f, "model-a", false)
				if r.err != nil {
					t.Fatalf("request: %v", r.err)
				}
				if want := wantStatus(f, k); r.status != want {
					t.Errorf("status = %d, want %d", r.status, want)
				}
				if !json.Valid([]byte(r.body)) {
					t.Fatalf("body is not JSON: %s", r.body)
				}
				var b bytes.Buffer
				if f == FlavorGemini {
					json.Indent(&b, bytes.TrimSuffix([]byte(r.body), []byte("\n")), "", "  ")
					b.WriteString("\n")
				} else {
					json.Compact(&b, []byte(r.body))
				}
				if b.String() != r.body {
					t.Errorf("body layout is not the flavor's:\n%s", r.body)
				}
				recs := v.e.Records()
				if len(recs) != 1 || recs[0].Behaviour != string(k) || recs[0].Status != r.status {
					t.Errorf("records = %+v, want one %s with status %d", recs, k, r.status)
				}
			})
		}
	}
}

func TestGeminiRateBodies(t *testing.T) {
	tests := []struct {
		name, quotaID, delay string
		step                 Step
	}{
		{"minute", "GenerateRequestsPerMinutePerProjectPerModel-FreeTier", "26s", Step{Kind: RateMinute, RetryAfter: 26 * time.Second}},
		// The clock stands at 12:00:00: the next minute is 60s away; a day
		// 429 still names that short delay.
		{"day", "GenerateRequestsPerDayPerProjectPerModel-FreeTier", "60s", Step{Kind: RateDay}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := newEnv(t)
			v.add(FlavorGemini, Model{ID: "gemini-2.5-flash", Limits: Limits{RPM: 5, RPD: 20}})
			v.e.Script(FlavorGemini, "gemini-2.5-flash", tt.step)
			r := v.gemini(FlavorGemini, "gemini-2.5-flash", false, "")
			limit := "5"
			if tt.name == "day" {
				limit = "20"
			}
			want := `{
  "error": {
    "code": 429,
    "message": "You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits. To monitor your current usage, head to: https://ai.dev/rate-limit. \n* Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_requests, limit: ` + limit + `, model: gemini-2.5-flash\nPlease retry in ` + tt.delay + `.",
    "status": "RESOURCE_EXHAUSTED",
    "details": [
      {
        "@type": "type.googleapis.com/google.rpc.QuotaFailure",
        "violations": [
          {
            "quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests",
            "quotaId": "` + tt.quotaID + `",
            "quotaDimensions": {
              "location": "global",
              "model": "gemini-2.5-flash"
            },
            "quotaValue": "` + limit + `"
          }
        ]
      },
      {
        "@type": "type.googleapis.com/google.rpc.Help",
        "links": [
          {
            "description": "Learn more about Gemini API quotas",
            "url": "https://ai.google.dev/gemini-api/docs/rate-limits"
          }
        ]
      },
      {
        "@type": "type.googleapis.com/google.rpc.RetryInfo",
        "retryDelay": "` + tt.delay + `"
      }
    ]
  }
}
`
			if r.status != 429 || r.body != want {
				t.Errorf("got %d\n%s\nwant 429\n%s", r.status, r.body, want)
			}
		})
	}
}
