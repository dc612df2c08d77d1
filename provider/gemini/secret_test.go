package gemini

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tollfree/tollfree/failure"
	"github.com/tollfree/tollfree/secret"
)

// TestKeyEchoScrubbed: Gemini's 400 API_KEY_INVALID quoting the key in a
// DebugInfo detail (google/timesketch#3703) reaches the classifier without
// it, and so does any other configured secret it quotes.
func TestKeyEchoScrubbed(t *testing.T) {
	const other = "correcthorsebatterystaple"
	c, _ := fakeUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		w.WriteHeader(http.StatusBadRequest)
		w.Write([]byte(`{"error": {"code": 400, "message": "API key not valid. Please pass a valid API key. ` + other + `", "status": "INVALID_ARGUMENT",
  "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID", "domain": "googleapis.com"},
    {"@type": "type.googleapis.com/google.rpc.DebugInfo", "detail": "Invalid API key: ` + testKey + `"}]}}`))
	})
	c.secrets = secret.New(testKey, other)
	_, err := c.Chat(context.Background(), simpleCall("gemini-2.5-flash"))
	ue := asUpstream(t, err)
	for _, k := range []string{testKey, other} {
		if strings.Contains(string(ue.Body), k) {
			t.Errorf("body holds a key: %s", ue.Body)
		}
	}
	if v := failure.Classify(err, time.Now()); v.Class != failure.Auth || strings.Contains(v.Message, other) {
		t.Errorf("verdict %v %q", v.Class, v.Message)
	}
}
