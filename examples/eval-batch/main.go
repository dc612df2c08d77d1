// Command eval-batch is an evaluation job that embeds the gateway (seed
// 002): a planner writes, an extractor pulls facts out, a judge scores the
// result as typed JSON. Each role is a same-model chain defined in the
// environment (PLANNER_MODEL, EXTRACTOR_MODEL, JUDGE_MODEL), so a job waits
// for a limited free route instead of dying on a 429, and the answers are
// cached, so that a job run again costs no quota for what it already asked.
//
//	go run . -config tollfree.yaml -cases 3
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"strings"
	"time"

	"github.com/tollfree/tollfree"
	"github.com/tollfree/tollfree/config"
)

// verdictSchema is the judge's typed answer.
var verdictSchema = json.RawMessage(`{"type":"object","properties":{"score":{"type":"integer","minimum":1,"maximum":5},"reason":{"type":"string"}},"required":["score","reason"],"additionalProperties":false}`)

// verdict is what the judge answers.
type verdict struct {
	Score  int    `json:"score"`
	Reason string `json:"reason"`
}

func main() {
	path := flag.String("config", "tollfree.yaml", "the gateway's configuration")
	cases := flag.Int("cases", 3, "how many evaluation cases to run")
	cacheTTL := flag.Duration("cache", 24*time.Hour, "how long each role's answers are cached; 0: no cache")
	flag.Parse()
	if err := run(context.Background(), os.Stdout, *path, *cases, *cacheTTL); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, out io.Writer, path string, cases int, cacheTTL time.Duration) error {
	plan, err := config.Load(path, os.Getenv)
	if err != nil {
		return err
	}
	for _, role := range []string{"planner", "extractor", "judge"} {
		c, ok := plan.Chains[role]
		if !ok {
			return fmt.Errorf("role %s has no chain: set %s_MODEL, e.g. %s_MODEL=\"openai-compatible:groq:openai/gpt-oss-120b\"",
				role, strings.ToUpper(role), strings.ToUpper(role))
		}
		// A role chain comes from the environment, which has no cache_ttl:
		// the job turns the cache on in the compiled plan.
		c.CacheTTL = cacheTTL
	}
	gw, err := tollfree.New(tollfree.Options{Plan: plan})
	if err != nil {
		return err
	}
	defer gw.Close()
	for i := 1; i <= cases; i++ {
		if err := evalCase(ctx, gw, out, i); err != nil {
			return fmt.Errorf("case %d: %w", i, err)
		}
	}
	return nil
}

// evalCase runs one case through the three roles and prints which route
// answered each call and the judge's verdict.
func evalCase(ctx context.Context, gw *tollfree.Gateway, out io.Writer, i int) error {
	topic := fmt.Sprintf("case %d", i)
	plan, err := ask(ctx, gw, "planner", "Investigate "+topic+" and write a short report.", nil)
	if err != nil {
		return err
	}
	facts, err := ask(ctx, gw, "extractor", "List the facts in this report:\n"+plan.Content, nil)
	if err != nil {
		return err
	}
	judged, err := ask(ctx, gw, "judge", "Score this report from 1 to 5 against its facts. Answer in JSON.\n"+plan.Content+"\n"+facts.Content,
		tollfree.JSONSchemaFormat("verdict", verdictSchema, true))
	if err != nil {
		return err
	}
	var v verdict
	if err := json.Unmarshal([]byte(judged.Content), &v); err != nil {
		return fmt.Errorf("the judge's answer is not the verdict's JSON: %w", err)
	}
	fmt.Fprintf(out, "%s: planner %s, extractor %s, judge %s: score %d\n",
		topic, origin(plan), origin(facts), origin(judged), v.Score)
	return nil
}

func ask(ctx context.Context, gw *tollfree.Gateway, role, prompt string, format json.RawMessage) (*tollfree.Answer, error) {
	ans, err := gw.Chat(ctx, role, &tollfree.Request{
		Messages:       []tollfree.Message{{Role: "user", Content: prompt}},
		ResponseFormat: format,
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", role, err)
	}
	return ans, nil
}

// origin says what answered: the route, and whether from the cache.
func origin(a *tollfree.Answer) string {
	if a.ServedBy == tollfree.ServedByCache {
		return a.Route + " (cached)"
	}
	return a.Route
}
