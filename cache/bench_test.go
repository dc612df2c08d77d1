package cache

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tollfree/tollfree/internal/clock"
	"github.com/tollfree/tollfree/llm"
)

// benchRequest is the request of the load harness's chat.lua as it stood
// on 2026-11-29 (1,642 bytes of JSON as sent; docs/BENCHMARKS.md, "How it
// is measured"), so that figures compare with that day's runs; bench/chat.lua
// now sends a request of its own.
func benchRequest() *llm.Request {
	system := "You are Atlas, the support assistant for Northwind Cloud, a hosting company. " +
		"Answer questions about billing, deployments, DNS, TLS certificates and the status of services. " +
		"Be concise and precise: prefer short paragraphs and numbered steps. If a question needs account " +
		"access you do not have, say so and explain how the customer can open a ticket from the dashboard " +
		"under Help > Support. Never invent prices, limits or dates; if unsure, say that you are unsure. " +
		"When you show commands, use fenced code blocks and explain each flag. Today's date is 2025-03-10. " +
		"The customer is on the Team plan (5 seats, 3 regions: eu-west-1, us-east-2, ap-south-1)."
	user := "Hi! We moved our main app from eu-west-1 to us-east-2 last night and since then about " +
		"one request in fifty fails with a 502 from the load balancer. The health checks are green and the " +
		"pods report no restarts. We use the managed Postgres add-on (still in eu-west-1 for now, the " +
		"migration is planned for Friday) and a Redis cache in us-east-2. Our deploy uses the default " +
		"keep-alive settings and we did not touch the ingress config. Could the cross-region database " +
		"latency explain the 502s, and what should we check first? Please give me a short checklist I can " +
		"go through with the on-call engineer, and tell me which metrics in the dashboard would confirm or " +
		"rule out each cause. Also, is there a way to pin the app to the old region until Friday without " +
		"changing DNS again? Thanks a lot, Priya (platform team)."
	return &llm.Request{
		Messages: []llm.Message{
			{Role: "system", Content: system},
			{Role: "user", Content: user},
		},
		Temperature: ptr(0.2),
		MaxTokens:   512,
		TopP:        ptr(1.0),
		User:        "bench-user-42",
	}
}

func BenchmarkKeyFor(b *testing.B) {
	r := benchRequest()
	b.SetBytes(int64(r.TextLen()))
	b.ReportAllocs()
	for b.Loop() {
		KeyFor("gpt-4o-mini", r, "v1")
	}
}

func BenchmarkMemoryGetHit(b *testing.B) {
	m := NewMemory(0, clock.Real{})
	ctx := context.Background()
	k := KeyFor("gpt-4o-mini", benchRequest(), "")
	e := &Entry{Route: "groq/llama-3.3-70b-versatile", Content: strings.Repeat("answer ", 80), FinishReason: "stop"}
	v, _ := e.MarshalBinary()
	if err := m.Set(ctx, k, v, time.Hour); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, ok, _ := m.Get(ctx, k); !ok {
			b.Fatal("miss")
		}
	}
}

func BenchmarkCacheGetHit(b *testing.B) {
	c := New(Options{})
	ctx := context.Background()
	r := benchRequest()
	k := KeyFor("gpt-4o-mini", r, "")
	c.store(ctx, k, &Entry{Route: "groq/llama-3.3-70b-versatile", Content: strings.Repeat("answer ", 80), FinishReason: "stop"}, time.Hour)
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := c.Get(ctx, KeyFor("gpt-4o-mini", r, "")); !ok {
			b.Fatal("miss")
		}
	}
}
