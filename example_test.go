package tollfree_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"strings"
	"time"

	"github.com/tollfree/tollfree"
	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/emulator"
)

// Example embeds the gateway in a Go program, without the HTTP server: a
// planner role defined in the environment (seed 002), served by two free
// providers of the same model. Here the providers are the emulator, and the
// first one is out of its minute's quota for 30 s (too long a wait to retry
// it as a blip), so the second answers.
func Example() {
	emu := emulator.New(emulator.Options{})
	emu.AddProvider(emulator.Provider{Name: "groq", Flavor: "groq"})
	emu.AddProvider(emulator.Provider{Name: "cerebras", Flavor: "cerebras"})
	emu.AddModel("groq", emulator.Model{ID: "openai/gpt-oss-120b"})
	emu.AddModel("cerebras", emulator.Model{ID: "gpt-oss-120b", Answer: "Three findings, all supported."})
	emu.Script("groq", "openai/gpt-oss-120b", emulator.Step{Kind: emulator.RateMinute, RetryAfter: 30 * time.Second})
	srv := httptest.NewServer(emu)
	defer srv.Close()

	env := map[string]string{
		"GROQ_API_KEY":     "gsk_example",
		"CEREBRAS_API_KEY": "csk-example",
		"PLANNER_MODEL":    "openai-compatible:groq:openai/gpt-oss-120b | openai-compatible:cerebras:gpt-oss-120b",
	}
	dir, _ := os.MkdirTemp("", "tollfree-example")
	defer os.RemoveAll(dir)
	yaml := "data_dir: " + dir + strings.ReplaceAll(`
call_log: "off"
providers:
  groq:     {preset: groq,     base_url: EMU/groq/v1}
  cerebras: {preset: cerebras, base_url: EMU/cerebras/v1}
`, "EMU", srv.URL)
	plan, err := config.Parse("example.yaml", []byte(yaml), func(k string) string { return env[k] })
	if err != nil {
		fmt.Println(err)
		return
	}
	gw, err := tollfree.New(tollfree.Options{Plan: plan})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer gw.Close()

	ans, err := gw.Chat(context.Background(), "planner", &tollfree.Request{
		Messages: []tollfree.Message{{Role: "user", Content: "Summarise the report."}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(ans.Content)
	fmt.Println("served by", ans.ServedBy, ans.Route)
	// Output:
	// Three findings, all supported.
	// served by route cerebras/gpt-oss-120b
}
