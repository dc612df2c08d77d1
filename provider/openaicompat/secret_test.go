package openaicompat

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tollfree/tollfree/failure"
)

// TestKeyEchoScrubbed: a 401 that quotes the key (OpenAI's "Incorrect API
// key provided: ...") reaches the classifier without it, whether the call
// was whole or streamed.
func TestKeyEchoScrubbed(t *testing.T) {
	_, c := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte(`{"error":{"message":"Incorrect API key provided: ` + testKey + `. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`))
	})
	call := testCall()
	_, errChat := c.Chat(context.Background(), call)
	_, errStream := c.Stream(context.Background(), call)
	for name, err := range map[string]error{"chat": errChat, "stream": errStream} {
		var ue *failure.UpstreamError
		if !errors.As(err, &ue) {
			t.Fatalf("%s: %v is not an UpstreamError", name, err)
		}
		if strings.Contains(string(ue.Body), testKey) || !strings.Contains(string(ue.Body), "[secret]") {
			t.Errorf("%s: body %s", name, ue.Body)
		}
		if v := failure.Classify(err, time.Now()); v.Class != failure.Auth || strings.Contains(v.Message, testKey) {
			t.Errorf("%s: verdict %v %q", name, v.Class, v.Message)
		}
	}
}
