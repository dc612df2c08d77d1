// Command embed is a Go program outside the tollfree module that embeds the
// gateway, with no HTTP server of its own, and still gets the chain's
// fallback answer when every route is down, as an HTTP caller would.
//
// It runs offline: a stand-in provider on a local port answers every call
// with 503 "high demand" (what a free tier says when it is overloaded), so
// both routes of the chain fail, rest, and the chain's fallback message
// answers. A real program points the providers at their real base URLs
// (or leaves the presets' defaults) and loads its plan with config.Load.
//
//	go run .
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/tollfree/tollfree"
	"github.com/tollfree/tollfree/config"
)

// planYAML is the gateway's configuration: two free routes and a fixed
// fallback message. PROVIDER stands for the stand-in provider's URL.
const planYAML = `
call_log: "off"
providers:
  groq:     {preset: groq,     base_url: PROVIDER/groq/v1,     api_key: ${GROQ_API_KEY}}
  cerebras: {preset: cerebras, base_url: PROVIDER/cerebras/v1, api_key: ${CEREBRAS_API_KEY}}
chains:
  answer:
    routes: [groq/llama-3.3-70b-versatile, cerebras/gpt-oss-120b]
    attempt_timeout: 5s
    deadline: 10s
    fallback: {message: "The assistant is resting; please try again in a minute."}
  strict:
    routes: [groq/llama-3.3-70b-versatile]
`

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, out io.Writer) error {
	url, stop, err := downProvider()
	if err != nil {
		return err
	}
	defer stop()
	dir, err := os.MkdirTemp("", "tollfree-embed")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	// Keys come from the environment (a key written in the file is
	// refused); these are the stand-in's.
	env := map[string]string{"GROQ_API_KEY": "gsk_stand_in_0001", "CEREBRAS_API_KEY": "csk-stand-in-0001"}
	yaml := "data_dir: " + dir + "\n" + strings.ReplaceAll(planYAML, "PROVIDER", url)
	plan, err := config.Parse("embed.yaml", []byte(yaml), func(k string) string { return env[k] })
	if err != nil {
		return err
	}
	gw, err := tollfree.New(tollfree.Options{Plan: plan, Clock: wallClock{}})
	if err != nil {
		return err
	}
	defer gw.Close()

	question := &tollfree.Request{Messages: []tollfree.Message{{Role: "user", Content: "What does tollfree do?"}}}

	// Every route fails: the chain's fallback answers, and says so.
	ans, err := gw.Chat(ctx, "answer", question)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "chat: served by %s (request %s): %s\n", ans.ServedBy, ans.RequestID, ans.Content)

	// Streamed, the same flow: both routes now rest, and are skipped
	// without a call.
	s, err := gw.Stream(ctx, "answer", question)
	if err != nil {
		return err
	}
	defer s.Close()
	var text strings.Builder
	for {
		c, err := s.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		text.WriteString(c.Content)
	}
	fmt.Fprintf(out, "stream: served by %s: %s\n", s.ServedBy, text.String())

	// A chain without a fallback ends with the error, saying when a route
	// comes back.
	_, err = gw.Chat(ctx, "strict", question)
	var ex *tollfree.ExhaustedError
	if !errors.As(err, &ex) {
		return fmt.Errorf("strict chain: got %v, want an ExhaustedError", err)
	}
	fmt.Fprintf(out, "strict: no answer; a route comes back in about %s\n", time.Until(ex.RetryAt).Round(10*time.Second))
	return nil
}

// downProvider starts the stand-in provider: every call gets what an
// overloaded OpenAI-compatible free tier sends.
func downProvider() (url string, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, `{"error":{"message":"The model is experiencing high demand. Please try again later.","type":"server_error"}}`)
	})}
	go srv.Serve(ln)
	return "http://" + ln.Addr().String(), func() { srv.Close() }, nil
}
