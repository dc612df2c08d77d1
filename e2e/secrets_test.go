package e2e_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tollfree/tollfree/emulator"
)

// Keys of shapes no redaction rule knows, which the emulated providers
// refuse and quote back (issue 10, item 2).
const (
	weirdKey  = "tfk.Zq9-weird+KEY/with=signs" // Groq, from ${ENV}; also the proxy's
	plainKey  = "correcthorsebatterystaple"    // Cerebras, from api_key_file
	maskedKey = "or.Masked~Key~0042~xyz"       // OpenRouter, echoed masked
	geminiKey = "gem.unusual/key=0042"         // Gemini, echoed in a DebugInfo detail
	adminKey  = "adm1n~T0ken~for~echo~test"
)

// echoConfig puts every emulated provider behind a key it refuses, and a
// keyless proxy that quotes the key in a 400 (a caller error, whose reason
// the caller is shown).
const echoConfig = `
admin_token: ${ECHO_ADMIN}
providers:
  groq:       {preset: groq,       base_url: EMU/groq/v1,       api_key: ${WEIRD_KEY}}
  cerebras:   {preset: cerebras,   base_url: EMU/cerebras/v1,   api_key_file: KEYFILE}
  openrouter: {preset: openrouter, base_url: EMU/openrouter/v1, api_key: ${MASKED_KEY}}
  gemini:     {preset: gemini,     base_url: EMU/gemini/v1beta, api_key: ${ECHO_GEMINI_KEY}}
  proxy:      {base_url: EMU/proxy/v1, api_key: ${WEIRD_KEY}, models: {m: {}}}
chains:
  strict: {routes: [proxy/m]}
  answer:
    routes: [groq/llama-3.3-70b-versatile, cerebras/llama3.1-8b, openrouter/openai/gpt-oss-120b:free, gemini/gemini-2.5-flash]
  kind:
    routes: [groq/llama-3.3-70b-versatile, cerebras/llama3.1-8b]
    fallback: {message: "Resting; try again later."}
`

// TestEchoedKeysNeverPublished: keys that providers quote back in their
// auth errors, whatever their shape, appear nowhere tollfree writes: not in
// the answers, the status page or its JSON, the metrics, /healthz, the call
// log, the state files or the log.
func TestEchoedKeysNeverPublished(t *testing.T) {
	checkLeaks(t)
	keyFile := filepath.Join(t.TempDir(), "cerebras.key")
	if err := os.WriteFile(keyFile, []byte(plainKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	dataDir := t.TempDir()
	s := startStackWith(t, stackOptions{
		providers: strings.ReplaceAll(echoConfig, "KEYFILE", keyFile),
		env: map[string]string{"WEIRD_KEY": weirdKey, "MASKED_KEY": maskedKey, "ECHO_GEMINI_KEY": geminiKey,
			"ECHO_ADMIN": adminKey},
		logger:      slog.New(slog.NewTextHandler(logs, nil)),
		dataDir:     dataDir,
		callLogPath: filepath.Join(dataDir, "calls.jsonl"),
	})
	h := harnessOf(t, s)
	for _, p := range []emulator.Provider{
		{Name: "groq", Flavor: emulator.FlavorGroq, Key: testKeys["GROQ_API_KEY"], EchoKey: emulator.EchoFull},
		{Name: "cerebras", Flavor: emulator.FlavorCerebras, Key: testKeys["CEREBRAS_API_KEY"], EchoKey: emulator.EchoFull},
		{Name: "openrouter", Flavor: emulator.FlavorOpenRouter, Key: testKeys["OPENROUTER_API_KEY"], EchoKey: emulator.EchoMasked},
		{Name: "gemini", Flavor: emulator.FlavorGemini, Key: testKeys["GEMINI_API_KEY"], EchoKey: emulator.EchoFull},
		{Name: "proxy", Flavor: emulator.FlavorGeneric},
	} {
		h.emu.AddProvider(p)
	}
	h.emu.AddModel("proxy", emulator.Model{ID: "m"})
	h.emu.Script("proxy", "m", emulator.Step{Kind: emulator.BadRequest, Text: "Invalid API Key: " + weirdKey})

	published := map[string][]byte{} // what callers and visitors were sent
	ask := func(chain string, stream bool, wantStatus int) {
		t.Helper()
		body := `{"model":"` + chain + `","stream":` + map[bool]string{true: "true", false: "false"}[stream] +
			`,"messages":[{"role":"user","content":"What does tollfree do?"}]}`
		r := h.post("/v1/chat/completions", "application/json", []byte(body))
		if r.status != wantStatus {
			t.Errorf("%s (stream %v): status %d, want %d", chain, stream, r.status, wantStatus)
		}
		published[fmt.Sprintf("the answer of %s (stream %v)", chain, stream)] = r.body
	}
	ask("strict", false, http.StatusBadRequest)        // the proxy's reason, shown to the caller
	ask("answer", true, http.StatusServiceUnavailable) // every provider refuses its key
	ask("answer", false, http.StatusServiceUnavailable)
	ask("kind", false, http.StatusOK) // the fallback message
	for _, p := range []string{"groq", "cerebras", "openrouter", "gemini"} {
		if n := behaviours(h.emu, p, "auth"); n == 0 {
			t.Fatalf("%s never refused a key: the test would prove nothing", p)
		}
	}
	for _, path := range []string{"/status.json", "/status", "/status?part=live", "/metrics", "/healthz"} {
		r := h.get(path)
		if r.status != http.StatusOK {
			t.Errorf("GET %s: %d", path, r.status)
		}
		published["GET "+path] = r.body
	}
	if err := s.gw.Close(); err != nil { // flush the call log and the state
		t.Fatal(err)
	}
	files := map[string][]byte{"log": logs.Bytes()}
	filepath.WalkDir(h.plan.DataDir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files[path], _ = os.ReadFile(path)
		}
		return nil
	})
	if len(files[filepath.Join(h.plan.DataDir, "calls.jsonl")]) == 0 || len(files[filepath.Join(h.plan.DataDir, "state", "rests.json")]) == 0 {
		t.Fatalf("no call log or rests on disk, only %v", keysOf(files))
	}
	if !bytes.Contains(published["GET /status.json"], []byte("[secret]")) {
		t.Errorf("/status.json shows no scrubbed reason: did an echo reach it?")
	}
	for name, b := range files {
		published[filepath.Base(name)] = b
	}
	// Failures name the place and the form, never print the text: it
	// holds the keys.
	for _, f := range leakForms(weirdKey, plainKey, maskedKey, geminiKey, adminKey) {
		for where, b := range published {
			if bytes.Contains(b, []byte(f.text)) {
				t.Errorf("%s holds %s", where, f.what)
			}
		}
	}
}

// leak is one form a key could be published in, and how to name it without
// printing it.
type leak struct{ text, what string }

// leakForms returns each key as it is, JSON-escaped, escaped by
// html/template and by URL escaping, its first 10 bytes, and the emulator's
// masked echo of it, each form once.
func leakForms(keys ...string) []leak {
	var out []leak
	seen := map[string]bool{}
	for i, k := range keys {
		j, _ := json.Marshal(k)
		masked := k[:min(8, len(k)/3)] + strings.Repeat("*", len(k)-min(8, len(k)/3)-min(4, len(k)/6)) + k[len(k)-min(4, len(k)/6):]
		for what, text := range map[string]string{
			"as is": k, "as JSON": string(j[1 : len(j)-1]), "as HTML": strings.ReplaceAll(template.HTMLEscapeString(k), "+", "&#43;"),
			"URL-escaped": url.QueryEscape(k), "its first 10 bytes": k[:10], "masked": masked,
		} {
			if !seen[text] {
				seen[text] = true
				out = append(out, leak{text: text, what: "key " + string(rune('A'+i)) + " " + what})
			}
		}
	}
	return out
}

// behaviours counts the emulator's calls of a provider answered by b.
func behaviours(e *emulator.Emulator, provider, b string) int {
	n := 0
	for _, r := range e.Records() {
		if r.Provider == provider && r.Behaviour == b {
			n++
		}
	}
	return n
}

func keysOf(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// syncBuffer is a bytes.Buffer safe for the gateway's concurrent logging.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) Bytes() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return bytes.Clone(s.b.Bytes())
}
