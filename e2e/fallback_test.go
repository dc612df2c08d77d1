package e2e_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tollfree/tollfree"
	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/emulator"
)

const fallbackChains = `
chains:
  polite:
    routes: [groq/llama-3.3-70b-versatile, cerebras/gpt-oss-120b]
    attempt_timeout: 5s
    deadline: 12s
    fallback: {message: "The assistant is resting. Please try again in a minute."}
`

// TestFallbacks: when every route fails, a message fallback answers 200
// marked in a header. (Without a fallback, the router's ExhaustedError
// says when to come back, and the chain's deadline ends the walk: package
// route's TestExhaustedSaysWhenToComeBack and TestChainDeadlineEndsTheWalk;
// the 503 and its Retry-After: httpapi's TestServerOnlyEncodes.)
func TestFallbacks(t *testing.T) {
	checkLeaks(t)
	t.Run("message", func(t *testing.T) {
		h := newHarness(t, fallbackChains)
		h.emu.Script("groq", "llama-3.3-70b-versatile", emulator.Step{Kind: emulator.HighDemand})
		h.emu.Script("cerebras", "gpt-oss-120b", emulator.Step{Kind: emulator.RateMinute, RetryAfter: 40 * time.Second})
		got := h.ask("polite")
		if got.status != 200 || got.header.Get("X-Tollfree-Fallback") != "message" {
			t.Fatalf("status %d fallback header %q: %s", got.status, got.header.Get("X-Tollfree-Fallback"), got.body)
		}
		if c := got.content(t); c != "The assistant is resting. Please try again in a minute." {
			t.Errorf("content = %q", c)
		}
	})
}

// TestNoKeysIsLoud: the built-in defaults with no key set answer a chat
// with 503 no_route_enabled naming the variables to set, whole and
// streamed, and a Go program gets a *config.NoRouteEnabledError, never the
// "resting" message an SDK would show as the model's answer (issue 34). A
// config file that asks for a fallback message explicitly still gets it.
func TestNoKeysIsLoud(t *testing.T) {
	checkLeaks(t)
	plan, err := config.Default(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	plan.DataDir = t.TempDir()
	gw, err := tollfree.New(tollfree.Options{Plan: plan})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gw.Handler())
	t.Cleanup(func() { srv.Close(); gw.Close() })
	for _, stream := range []bool{false, true} {
		body := `{"model":"answer","stream":` + strconv.FormatBool(stream) + `,"messages":[{"role":"user","content":"Say hi"}]}`
		resp, err := http.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var e struct {
			Error struct{ Message, Code string }
		}
		json.Unmarshal(b, &e)
		if resp.StatusCode != 503 || e.Error.Code != "no_route_enabled" || !strings.Contains(e.Error.Message, "GEMINI_API_KEY") || !strings.Contains(e.Error.Message, "GROQ_API_KEY") {
			t.Errorf("stream %v: %d %s; want 503 no_route_enabled naming the keys to set", stream, resp.StatusCode, b)
		}
	}
	_, err = gw.Chat(context.Background(), "answer", &tollfree.Request{Messages: []tollfree.Message{{Role: "user", Content: "Say hi"}}})
	var nre *config.NoRouteEnabledError
	if !errors.As(err, &nre) || nre.Chain != "answer" {
		t.Errorf("a Go program's Chat: %v, want a *config.NoRouteEnabledError for chain answer", err)
	}

	explicit, err := config.Parse("t.yaml", []byte("data_dir: "+t.TempDir()+"\nproviders:\n  groq: {}\nchains:\n  answer:\n    routes: [groq/llama-3.3-70b-versatile]\n    fallback: {message: \"Back soon.\"}\n"), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	gw2, err := tollfree.New(tollfree.Options{Plan: explicit})
	if err != nil {
		t.Fatal(err)
	}
	defer gw2.Close()
	ans, err := gw2.Chat(context.Background(), "answer", &tollfree.Request{Messages: []tollfree.Message{{Role: "user", Content: "Say hi"}}})
	if err != nil || ans.Content != "Back soon." {
		t.Errorf("a file's explicit message with no key set: %v %+v, want the message", err, ans)
	}
}
