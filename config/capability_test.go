package config

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// srcDated is what a capability source must hold: a public URL and the
// date it was read.
var srcDated = regexp.MustCompile(`https://\S+.*\[\d{4}-\d{2}-\d{2}\]`)

// TestPresetCapabilities (issue 33): every chat model of every preset says
// whether it takes tools, images and audio, citing a public URL with a
// date; every embedding model says its dimensions, with a cited source.
func TestPresetCapabilities(t *testing.T) {
	embeddings := 0
	for _, p := range Presets() {
		for _, m := range p.Models {
			if m.Embedding {
				embeddings++
				if m.Dimensions <= 0 || !strings.Contains(m.Source, "https://") {
					t.Errorf("%s/%s: embedding model with %d dimensions and source %q", p.Name, m.ID, m.Dimensions, m.Source)
				}
				continue
			}
			if !srcDated.MatchString(m.CapsSource) {
				t.Errorf("%s/%s: capabilities source %q has no public URL and date", p.Name, m.ID, m.CapsSource)
			}
			if m.Tools == CapUnknown && m.Vision == CapUnknown && m.Audio == CapUnknown {
				t.Errorf("%s/%s: no capability stated", p.Name, m.ID)
			}
		}
	}
	if embeddings < 4 {
		t.Errorf("%d embedding models in the presets, want the free ones the providers document", embeddings)
	}
}

func TestCapabilitiesCompiled(t *testing.T) {
	p, err := Parse("caps.yaml", []byte(`
providers:
  gemini: {}
  groq:
    models:
      llama-3.3-70b-versatile: {vision: true}
  ollama:
    models:
      llava: {vision: true, tools: false}
media:
  fetch_hosts: [images.example.com, .cdn.example.org]
chains:
  a:
    routes: [groq/llama-3.3-70b-versatile, groq/meta-llama/llama-4-scout-17b-16e-instruct, gemini/gemini-2.5-flash, ollama/llava]
`), testEnv(nil))
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]string{
		"groq/llama-3.3-70b-versatile":                   "tools vision -audio", // the file's vision wins
		"groq/meta-llama/llama-4-scout-17b-16e-instruct": "tools vision -audio",
		"gemini/gemini-2.5-flash":                        "tools vision audio",
		"ollama/llava":                                   "-tools vision audio?",
	} {
		if got := p.Routes[id].Caps.String(); got != want {
			t.Errorf("%s caps = %q, want %q", id, got, want)
		}
	}
	m := p.Media
	if m.MaxBytes != 5<<20 || m.Timeout != 5*time.Second {
		t.Errorf("media defaults = %d bytes, %s", m.MaxBytes, m.Timeout)
	}
	for host, want := range map[string]bool{
		"images.example.com": true, "IMAGES.example.com.": true, "a.cdn.example.org": true,
		"cdn.example.org": false, "example.com": false, "evil.images.example.com": false, "": false,
	} {
		if got := m.Allows(host); got != want {
			t.Errorf("Allows(%q) = %v, want %v", host, got, want)
		}
	}
}

func TestEmbeddingChains(t *testing.T) {
	for _, tc := range []struct {
		name, chain, err  string
		embed, perRequest bool
	}{
		{name: "one model", chain: `{routes: [gemini/gemini-embedding-001]}`, embed: true},
		{name: "chat and embeddings", chain: `{routes: [gemini/gemini-embedding-001, groq/llama-3.1-8b-instant]}`,
			err: "chains.e.routes[1]: groq/llama-3.1-8b-instant is a chat model, but routes[0] gemini/gemini-embedding-001 is an embedding model"},
		{name: "two models", chain: `{routes: [gemini/gemini-embedding-001, mistral/mistral-embed]}`,
			err: "an embedding chain's routes must be one model"},
		{name: "per request, dimensions differ", chain: `{vectors: per_request, routes: [gemini/gemini-embedding-001, mistral/mistral-embed]}`,
			err: "writes 1024 dimensions, but routes[0] gemini/gemini-embedding-001 writes 3072"},
		{name: "per request", chain: `{vectors: per_request, routes: [mistral/mistral-embed, ollama/mxbai-embed-large]}`, embed: true, perRequest: true},
		{name: "vectors on a chat chain", chain: `{vectors: per_request, routes: [groq/llama-3.1-8b-instant]}`, err: "only a chain of embedding models takes vectors"},
		{name: "unknown vectors", chain: `{vectors: mixed, routes: [gemini/gemini-embedding-001]}`, err: `"mixed" is neither same_model nor per_request`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse("embed.yaml", []byte(`
providers:
  gemini: {}
  mistral: {}
  ollama:
    models:
      mxbai-embed-large: {embedding: true, dimensions: 1024}
chains:
  e: `+tc.chain+`
`), testEnv(nil))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want it to say %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			ch := p.Chains["e"]
			if ch.Embeddings != tc.embed || ch.PerRequestVectors != tc.perRequest {
				t.Errorf("embeddings %v, per request %v; want %v, %v", ch.Embeddings, ch.PerRequestVectors, tc.embed, tc.perRequest)
			}
			if r := ch.Routes[0]; !r.Embedding || r.Dimensions == 0 {
				t.Errorf("route %s: embedding %v, %d dimensions", r.ID, r.Embedding, r.Dimensions)
			}
		})
	}
}

func TestMediaHostsChecked(t *testing.T) {
	_, err := Parse("media.yaml", []byte(`
media:
  fetch_hosts: ["https://images.example.com/", ok.example.com]
chains:
  a: {routes: [groq/llama-3.1-8b-instant]}
`), testEnv(nil))
	if err == nil || !strings.Contains(err.Error(), `media.fetch_hosts[0]: "https://images.example.com/" is not a host name`) {
		t.Fatalf("err = %v", err)
	}
}
