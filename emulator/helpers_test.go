package emulator

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tollfree/tollfree/internal/clock"
)

// start is the fake clock's start: 2026-05-20 12:00 UTC, so that the next
// UTC midnight is 1779321600000 ms, the reset quoted in docs/PROVIDERS.md.
var start = time.Date(2026, 5, 20, 12, 0, 0, 0, time.UTC)

type env struct {
	t   *testing.T
	e   *Emulator
	clk *clock.Fake
	srv *httptest.Server
}

func newEnv(t *testing.T) *env {
	t.Helper()
	return newEnvAt(t, start)
}

// newEnvAt starts the fake clock at now (a Fake never goes backwards).
func newEnvAt(t *testing.T, now time.Time) *env {
	t.Helper()
	clk := clock.NewFake(now)
	e := New(Options{Clock: clk})
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	return &env{t: t, e: e, clk: clk, srv: srv}
}

// add adds a provider of the flavor (named after it) with the models.
func (v *env) add(flavor string, models ...Model) {
	v.addProvider(Provider{Name: flavor, Flavor: flavor}, models...)
}

func (v *env) addProvider(p Provider, models ...Model) {
	v.e.AddProvider(p)
	for _, m := range models {
		v.e.AddModel(p.Name, m)
	}
}

type reply struct {
	status int
	header http.Header
	body   string
	err    error
}

func (v *env) do(ctx context.Context, method, url, body string, header ...string) reply {
	v.t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		v.t.Fatalf("new request: %v", err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := v.srv.Client().Do(req)
	if err != nil {
		return reply{err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return reply{status: resp.StatusCode, header: resp.Header, body: string(b), err: err}
}

// chat sends an OpenAI chat request; extra is spliced into the body.
func (v *env) chat(providerName, model, extra string, header ...string) reply {
	v.t.Helper()
	body := `{"model":"` + model + `","messages":[{"role":"user","content":"Hi"}]` + extra + `}`
	return v.do(context.Background(), http.MethodPost, v.e.BaseURL(v.srv.URL, providerName)+"/chat/completions", body, header...)
}

// gemini sends a generateContent request (stream: SSE).
func (v *env) gemini(providerName, model string, stream bool, body string, header ...string) reply {
	v.t.Helper()
	if body == "" {
		body = `{"contents":[{"role":"user","parts":[{"text":"Hi"}]}]}`
	}
	url := v.e.BaseURL(v.srv.URL, providerName) + "/models/" + model + ":generateContent"
	if stream {
		url = v.e.BaseURL(v.srv.URL, providerName) + "/models/" + model + ":streamGenerateContent?alt=sse"
	}
	return v.do(context.Background(), http.MethodPost, url, body, header...)
}

// call sends the flavor's usual request for a route.
func (v *env) call(flavor, model string, stream bool) reply {
	v.t.Helper()
	if flavor == FlavorGemini {
		return v.gemini(flavor, model, stream, "")
	}
	extra := ""
	if stream {
		extra = `,"stream":true`
	}
	return v.chat(flavor, model, extra)
}
