package e2e_test

import (
	"bufio"
	"bytes"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tollfree/tollfree/emulator"
)

// benchProviders lifts the limits of the benchmarked route, so that the
// gateway's budgets never skip it.
const benchProviders = `
providers:
  groq:
    preset: groq
    base_url: EMU/groq/v1
    api_key: ${GROQ_API_KEY}
    models:
      llama-3.3-70b-versatile: {rpm: 0, rpd: 0, tpm: 0, tpd: 0}
  gemini:   {preset: gemini,   base_url: EMU/gemini/v1beta, api_key: ${GEMINI_API_KEY}}
  cerebras: {preset: cerebras, base_url: EMU/cerebras/v1,   api_key: ${CEREBRAS_API_KEY}}
  openrouter: {preset: openrouter, base_url: EMU/openrouter/v1, api_key: ${OPENROUTER_API_KEY}}
`

const benchChains = `
chains:
  bench:
    routes: [groq/llama-3.3-70b-versatile]
`

// BenchmarkStream measures what the gateway adds to a streamed answer of
// 400 words (400 chunks) against the emulator called directly: ttft-µs is
// the time from sending the request to reading the first content event,
// and MB/s the answer text streamed per second, over the whole response.
//
//	go test -run '^$' -bench BenchmarkStream -benchtime 2s .
func BenchmarkStream(b *testing.B) {
	s := startStack(b, benchProviders, benchChains)
	answer := strings.TrimSuffix(strings.Repeat("tollfree streams this word ", 100), " ")
	s.emu.AddModel("groq", emulator.Model{ID: "llama-3.3-70b-versatile", Answer: answer})
	direct := `{"model":"llama-3.3-70b-versatile","stream":true,"messages":[{"role":"user","content":"What does tollfree do?"}]}`
	gateway := `{"model":"bench","stream":true,"messages":[{"role":"user","content":"What does tollfree do?"}]}`
	for _, bb := range []struct {
		name, url, body, key string
	}{
		{"direct", s.emu.BaseURL(s.emuURL, "groq") + "/chat/completions", direct, testKeys["GROQ_API_KEY"]},
		{"gateway", s.srv.URL + "/v1/chat/completions", gateway, ""},
	} {
		b.Run(bb.name, func(b *testing.B) {
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
			defer client.CloseIdleConnections()
			b.SetBytes(int64(len(answer)))
			var ttft time.Duration
			for b.Loop() {
				req, _ := http.NewRequest(http.MethodPost, bb.url, strings.NewReader(bb.body))
				req.Header.Set("Content-Type", "application/json")
				if bb.key != "" {
					req.Header.Set("Authorization", "Bearer "+bb.key)
				}
				start := time.Now()
				resp, err := client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				rd := bufio.NewReader(resp.Body)
				first, done := false, false
				for {
					line, err := rd.ReadSlice('\n')
					if !first && bytes.Contains(line, []byte(`"content":"tollfree `)) {
						ttft += time.Since(start)
						first = true
					}
					if bytes.HasPrefix(line, []byte("data: [DONE]")) {
						done = true
					}
					if err != nil {
						break
					}
				}
				resp.Body.Close()
				if !first || !done || resp.StatusCode != 200 {
					b.Fatalf("status %d, first token %v, [DONE] %v", resp.StatusCode, first, done)
				}
			}
			b.ReportMetric(float64(ttft.Microseconds())/float64(b.N), "ttft-µs")
		})
	}
}
