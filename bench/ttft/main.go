// Command ttft measures the time to the first token of a streamed answer:
// from sending the request to reading the first chunk whose delta has
// content, over N sequential requests on one kept-alive connection per
// target, the targets taken in turn so that they share the machine's
// noise. A request that fails is counted, not measured (more than 10 %
// ends the run). It
// prints p50 and p90 per target, and what each target adds to the first
// one's (the fixed upstream called directly, when listed first).
//
//	go run ./bench/ttft -n 500 \
//	    direct=http://127.0.0.1:18080/v1/chat/completions \
//	    proxy=http://127.0.0.1:18085/v1/chat/completions \
//	    gateway=http://127.0.0.1:18090/v1/chat/completions
//
// The request is the one bench/chat.lua sends (a system prompt and a user
// question, about 1.6 KB of JSON), with "stream": true.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"
)

const system = "You are the help desk of Harbor Lines, a ferry operator serving six islands. " +
	"Answer questions about timetables, tickets, vehicles on board, pets, refunds and delays. " +
	"Keep answers short: a few sentences, or numbered steps when the customer must do something. " +
	"Never promise a refund or a seat; say which form or desk handles it and what to bring. " +
	"If the question needs a booking reference you do not have, ask for it once and explain where it " +
	"is printed (top right of the e-ticket, six letters and digits). Quote times in 24-hour format " +
	"and say which port they are for. Today is a Tuesday in the summer timetable; the 07:40 and " +
	"19:15 crossings run daily, the 12:30 only on weekdays, and the night boat on Fridays only."

const user = "Hello, we are a family of four with a small camper van (5.9 m long, 2.7 m high) and a dog. " +
	"We booked the 07:40 from the mainland to the north island next Saturday, but our flight home was " +
	"moved, so we now need to come back on the Friday night boat instead of the Sunday one. " +
	"Can we change only the return leg online, or do we have to call? Is there a fee for the change, " +
	"and is the camper still fine on the night boat, which I read is smaller? The dog travels in the " +
	"van on the day crossings, but I am not sure that is allowed at night. If it is not, are there " +
	"kennels on board, and do we need to reserve one? Last thing: our booking reference is on the " +
	"e-ticket but my partner has it, so can you tell me what I need to have ready before calling? " +
	"Thank you very much for your help, we are really looking forward to the trip. Best, Tomasz."

type target struct {
	name, url string
	c         *http.Client
	took      []time.Duration
	failed    int
}

func main() {
	n := flag.Int("n", 300, "requests per target")
	warm := flag.Int("warmup", 20, "requests per target first, not counted")
	model := flag.String("model", "gpt-4o-mini", "the model (chain) to name")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: ttft [-n N] [-warmup N] [-model M] name=URL...")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	body, _ := json.Marshal(map[string]any{
		"model": *model, "temperature": 0.3, "max_tokens": 400, "user": "bench-visitor-7", "stream": true,
		"messages": []map[string]string{{"role": "system", "content": system}, {"role": "user", "content": user}},
	})
	var ts []*target
	for _, a := range flag.Args() {
		name, url, ok := strings.Cut(a, "=")
		if !ok || url == "" {
			fmt.Fprintf(os.Stderr, "ttft: %q is not name=URL\n", a)
			os.Exit(2)
		}
		tr := &http.Transport{MaxIdleConnsPerHost: 1, DisableCompression: true}
		ts = append(ts, &target{name: name, url: url, c: &http.Client{Transport: tr, Timeout: 30 * time.Second}})
	}
	for i := 0; i < *warm+*n; i++ {
		for _, t := range ts {
			d, err := firstToken(t.c, t.url, body)
			if err != nil {
				// Counted and shown, not measured; many mean the target is
				// not answering as it should.
				t.failed++
				if t.failed > 1+(*warm+*n)/10 {
					fmt.Fprintf(os.Stderr, "ttft: %s: %d requests failed, the last: %v\n", t.name, t.failed, err)
					os.Exit(1)
				}
				continue
			}
			if i >= *warm {
				t.took = append(t.took, d)
			}
		}
	}
	base := ts[0]
	fmt.Printf("%-14s %6s %6s %10s %10s %12s %12s\n", "target", "n", "failed", "p50_ms", "p90_ms", "+p50_ms", "+p90_ms")
	for _, t := range ts {
		if len(t.took) == 0 || len(base.took) == 0 {
			fmt.Printf("%-14s %6d %6d (nothing measured)\n", t.name, len(t.took), t.failed)
			continue
		}
		slices.Sort(t.took)
		fmt.Printf("%-14s %6d %6d %10.3f %10.3f %12.3f %12.3f\n", t.name, len(t.took), t.failed, ms(pct(t.took, 50)), ms(pct(t.took, 90)),
			ms(pct(t.took, 50)-pct(base.took, 50)), ms(pct(t.took, 90)-pct(base.took, 90)))
	}
	fmt.Printf("(+: added to %s's)\n", base.name)
}

// firstToken sends one streamed request and returns how long its first
// content chunk took; it reads the rest, so that the connection is reused.
func firstToken(c *http.Client, url string, body []byte) (time.Duration, error) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	start := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("status %s", resp.Status)
	}
	var took time.Duration
	rd := bufio.NewReader(resp.Body)
	for took == 0 {
		line, err := rd.ReadSlice('\n')
		if err != nil {
			return 0, fmt.Errorf("the stream ended before any content: %v", err)
		}
		data, ok := bytes.CutPrefix(bytes.TrimSpace(line), []byte("data:"))
		if !ok || bytes.Equal(bytes.TrimSpace(data), []byte("[DONE]")) {
			continue
		}
		var ch struct {
			Choices []struct {
				Delta struct {
					Content string `json:"content"`
				} `json:"delta"`
			} `json:"choices"`
		}
		if json.Unmarshal(data, &ch) == nil && len(ch.Choices) > 0 && ch.Choices[0].Delta.Content != "" {
			took = time.Since(start)
		}
	}
	_, err = io.Copy(io.Discard, rd)
	return took, err
}

func pct(d []time.Duration, p int) time.Duration { return d[(len(d)-1)*p/100] }

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
