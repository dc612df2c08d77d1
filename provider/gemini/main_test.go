package gemini

import (
	"errors"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"go.uber.org/goleak"

	"github.com/tollfree/tollfree/failure"
	"github.com/tollfree/tollfree/llm"
	"github.com/tollfree/tollfree/provider"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// testKey is the API key the test clients send; it is no real key.
const testKey = "test-key-not-secret"

// seen is one request as the fake upstream received it.
type seen struct {
	method, path, query string
	header              http.Header
	body                []byte
}

// fakeUpstream is an httptest server standing in for Gemini. It records
// every request on reqs (buffered, so a handler never blocks on it) and
// answers with h.
func fakeUpstream(t *testing.T, h http.HandlerFunc) (*Client, <-chan seen) {
	t.Helper()
	reqs := make(chan seen, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		select {
		case reqs <- seen{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Clone(), b}:
		default:
		}
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	c := New(Options{
		Name:    "gemini",
		BaseURL: srv.URL + "/v1beta/",
		APIKey:  testKey,
		Headers: map[string]string{"X-Extra": "yes"},
		Client:  srv.Client(),
	})
	return c, reqs
}

// simpleCall is a one-message call of model.
func simpleCall(model string) provider.Call {
	return provider.Call{Model: model, Request: &llm.Request{
		Messages: []llm.Message{{Role: "user", Content: "Hi"}},
	}}
}

// asUpstream returns err as an UpstreamError, failing the test if it is not one.
func asUpstream(t *testing.T, err error) *failure.UpstreamError {
	t.Helper()
	var ue *failure.UpstreamError
	if !errors.As(err, &ue) {
		t.Fatalf("error %v (%T) is not a *failure.UpstreamError", err, err)
	}
	if ue.Provider != "gemini" || ue.Flavor != Flavor {
		t.Errorf("Provider, Flavor = %q, %q; want gemini, %q", ue.Provider, ue.Flavor, Flavor)
	}
	return ue
}
