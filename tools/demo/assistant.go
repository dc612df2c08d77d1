package demo

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tollfree/tollfree"
	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/emulator"
	"github.com/tollfree/tollfree/httpapi"
)

// AssistantChain is the chain `tollfree demo -assistant` makes an
// assistant: the chain the widget's data-chain names.
const AssistantChain = "site"

// assistantRoutes are the site assistant's example chain: a fast route, a better
// scarce one, a small one.
var assistantRoutes = []string{"groq/llama-3.3-70b-versatile", "gemini/gemini-2.5-flash", "cerebras/llama3.1-8b"}

// AssistantOptions configure `tollfree demo -assistant`. The zero value
// serves the embedded demo site on 127.0.0.1:8080 (or a free port) until
// ctx ends.
type AssistantOptions struct {
	// Listen is where the gateway listens. Default 127.0.0.1:8080; when
	// taken, a free loopback port.
	Listen string
	// Content is the folder the assistant answers from; "" copies the
	// demo's own (package examples/site) into a temporary folder. Its
	// <name>.html pages are served at SitePath+<name>.
	Content string
	// Out receives what to open and the admin token. Default io.Discard.
	Out io.Writer
	// Logger receives the gateway's operational messages. Default: none.
	Logger *slog.Logger
	// Ready, when set, is called once the gateway serves, with its base
	// URL (http://127.0.0.1:PORT) and the admin token.
	Ready func(baseURL, adminToken string)
}

// RunAssistant serves the demo site with the chat widget, and the gateway
// with an assistant chain over the site's content, in front of emulated
// free tiers whose models answer from the content they are given
// (groundedReply). No key, no network. It returns when ctx ends, or an
// error when it could not start.
func RunAssistant(ctx context.Context, o AssistantOptions) error {
	if o.Listen == "" {
		o.Listen = "127.0.0.1:8080"
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	tmp, err := os.MkdirTemp("", "tollfree-demo-assistant-")
	if err != nil {
		return fmt.Errorf("demo: making a directory for its state: %w", err)
	}
	defer os.RemoveAll(tmp)
	if o.Content == "" {
		if o.Content, err = copyContent(tmp); err != nil {
			return fmt.Errorf("demo: writing its content folder: %w", err)
		}
	}
	token, err := newToken()
	if err != nil {
		return err
	}

	emu := assistantEmulator()
	emuLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("demo: listening for the emulator on loopback: %w", err)
	}
	var servers sync.WaitGroup
	emuSrv := &http.Server{Handler: emu, ReadHeaderTimeout: 10 * time.Second}
	servers.Go(func() { emuSrv.Serve(emuLn) })
	defer func() {
		emuSrv.Close()
		servers.Wait()
	}()

	ln, err := listen(o.Listen)
	if err != nil {
		return err
	}
	base := "http://" + ln.Addr().String()
	yaml := assistantYAML("http://"+emuLn.Addr().String(), ln.Addr().String(), tmp, o.Content, base)
	env := map[string]string{"TOLLFREE_ADMIN_TOKEN": token, "CEREBRAS_API_KEY": "demo-cerebras-key"}
	for k, v := range demoKeys {
		env[k] = v
	}
	plan, err := config.Parse("demo", []byte(yaml), func(k string) string { return env[k] })
	if err != nil {
		ln.Close()
		return fmt.Errorf("demo: its built-in assistant config does not compile (a bug): %w", err)
	}
	gw, err := tollfree.New(tollfree.Options{Plan: plan, Logger: o.Logger, Extra: map[string]http.Handler{
		SitePath: siteHandler(o.Content),
		"/{$}":   http.RedirectHandler(SitePath, http.StatusFound),
	}})
	if err != nil {
		ln.Close()
		return fmt.Errorf("demo: starting the gateway: %w", err)
	}
	srv := httpapi.HTTPServer(plan, gw.Handler())
	servers.Go(func() { srv.Serve(ln) })
	defer func() {
		srv.Close()
		gw.Close()
	}()

	assistantIntro(o.Out, base, token, o.Content)
	if o.Ready != nil {
		o.Ready(base, token)
	}
	<-ctx.Done()
	return nil
}

// assistantEmulator returns the free tiers of groq, gemini and cerebras,
// every model answering from its prompt's content.
func assistantEmulator() *emulator.Emulator {
	emu := emulator.New(emulator.Options{})
	for _, p := range emulator.FreeTier() {
		switch p.Provider.Name {
		case "groq", "gemini", "cerebras":
			for i := range p.Models {
				p.Models[i].Reply = groundedReply
				// A visible stream: a word every 30 ms.
				p.Models[i].ChunkDelay = max(p.Models[i].ChunkDelay, 30*time.Millisecond)
			}
			emu.AddPreset(p)
		}
	}
	return emu
}

// newToken makes the demo's admin token: 20 random bytes, hex.
func newToken() (string, error) {
	b := make([]byte, 20)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("demo: making an admin token: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// assistantConfig is the gateway's configuration for the assistant demo.
// EMU is the emulator's URL, BASE the gateway's own, CONTENT the folder.
const assistantConfig = `
listen: LISTEN
data_dir: DATA
call_log: "off"
admin_token: ${TOLLFREE_ADMIN_TOKEN}
callers: {per_hour: 15, per_day: 40, site_day: 3000}
providers:
  groq:     {preset: groq,     base_url: EMU/groq/v1,       api_key: ${GROQ_API_KEY}}
  gemini:   {preset: gemini,   base_url: EMU/gemini/v1beta, api_key: ${GEMINI_API_KEY}}
  cerebras: {preset: cerebras, base_url: EMU/cerebras/v1,   api_key: ${CEREBRAS_API_KEY}}
chains:
  site:
    routes: [ROUTES]
    assistant:
      content: CONTENT
      base_url: BASE/site/
      contact: BASE/site/contact
      origins: [BASE]
`

// assistantYAML returns the assistant demo's config.
func assistantYAML(emuURL, listen, dataDir, content, base string) string {
	return strings.NewReplacer(
		"EMU", emuURL, "LISTEN", listen, "DATA", dataDir, "CONTENT", strconv.Quote(content), "BASE", base,
		"ROUTES", strings.Join(assistantRoutes, ", "),
	).Replace(assistantConfig)
}

// assistantIntro prints what to open.
func assistantIntro(out io.Writer, base, token, content string) {
	fmt.Fprintf(out, "tollfree demo -assistant: emulated free tiers of groq, gemini and cerebras (no keys, no network)\n")
	fmt.Fprintf(out, "chain %q answers from %s (%s)\n", AssistantChain, content, strings.Join(assistantRoutes, ", "))
	fmt.Fprintf(out, "\n  open %s%s and press the \"Ask a question\" button\n\n", base, SitePath)
	fmt.Fprintf(out, "ask API:     curl -N %s/v1/ask -H 'Content-Type: application/json' -d '{\"question\":\"How do I export my data?\",\"stream\":true}'\n", base)
	fmt.Fprintf(out, "status page: %s/status (private: the chain hides its routes; type the admin token there)\n", base)
	fmt.Fprintf(out, "admin token: %s\n", token)
	fmt.Fprintf(out, "pause every route (the widget then answers by search, with links):\n")
	for _, p := range []string{"groq", "gemini", "cerebras"} {
		fmt.Fprintf(out, "  curl -X POST %s/admin/pause -H 'Authorization: Bearer %s' -H 'Content-Type: application/json' -d '{\"provider\":\"%s\"}'\n", base, token, p)
	}
	fmt.Fprintf(out, "resume with /admin/resume and the same bodies. Ctrl-C stops.\n")
}
