package admin

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/state/memstore"
)

// TestCheck: /admin/check says whether a token is the admin token, and
// does nothing else (the status page acknowledges a token as it is typed).
func TestCheck(t *testing.T) {
	env := map[string]string{"ADMIN_TOKEN": "adm_check_token_0123456789", "GROQ_API_KEY": "gsk_check"}
	plan, err := config.Parse("t.yaml", []byte(fuzzPlan), func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	store, err := memstore.Open(memstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	h := New(Options{Plan: plan, Store: store, Prober: fakeProber{}, Token: env["ADMIN_TOKEN"]})
	for _, tc := range []struct {
		token string
		want  int
	}{{env["ADMIN_TOKEN"], 200}, {"wrong", 401}, {"", 401}} {
		req := httptest.NewRequest(http.MethodPost, "/admin/check", strings.NewReader("{}"))
		if tc.token != "" {
			req.Header.Set("Authorization", "Bearer "+tc.token)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != tc.want || tc.want == 200 && !strings.Contains(w.Body.String(), `"ok":true`) {
			t.Errorf("token %q: %d %s, want %d", tc.token, w.Code, w.Body, tc.want)
		}
	}
}
