package sim

import (
	"bytes"
	"context"
	"encoding/xml"
	"strings"
	"testing"
	"time"
)

// shortDay is a day that binds, scaled down for CI: 1,200 questions of
// seed-000-like traffic squeezed into three hours (6.7 a minute on
// average, against the default day's 2.1), so that Flash Lite's 500 a day,
// the Flash models' 20 and Groq's daily tokens run out within it and
// Gemma's 15,000 tokens a minute cannot carry the rest.
func shortDay() []Arrival {
	tr := Generate(TraceOptions{PerDay: 1200, Seed: 7})
	for i := range tr {
		tr[i].At /= 8
	}
	return tr
}

// TestDayThatBinds is what `tollfree sim` shows on a day with more demand
// than the free tiers carry, on a virtual clock over the default chain
// (seed 000's routes with a daily cap), the emulator enforcing the limits
// on its side and counting each 429 against the day as seed 000 saw: the
// capacity oracle's count falls short of the questions; tollfree with its
// limits configured causes no 429 and answers nearly what the oracle
// does; the naive chain causes 429s and, because they count, spends Flash
// Lite's day on them; tollfree learning its limits causes a few.
func TestDayThatBinds(t *testing.T) {
	rep, err := Run(context.Background(), Options{Trace: shortDay()})
	if err != nil {
		t.Fatal(err)
	}
	var table bytes.Buffer
	rep.WriteTable(&table)
	table.WriteString("\n")
	rep.WriteRoutes(&table)
	t.Logf("\n%s", table.String())
	tf, learn, naive, capa, opt := rep.Result(PolicyTollfree), rep.Result(PolicyLearning), rep.Result(PolicyNaive), rep.Result(PolicyCapacity), rep.Result(PolicyOptimum)

	// The day binds: the oracle leaves questions to the fallback, with
	// every daily cap of the chain spent.
	if capa.ByFallback == 0 || capa.ByModel >= rep.Requests {
		t.Errorf("capacity: %d of %d answered by a model, want fewer (a day that binds)", capa.ByModel, rep.Requests)
	}
	for id, want := range map[string]int{"gemini/gemini-3.1-flash-lite": 500, "gemini/gemini-3-flash": 20, "gemini/gemini-2.5-flash": 20, "gemini/gemini-2.5-flash-lite": 20} {
		if got := capa.ByRoute[id]; got != want {
			t.Errorf("capacity: %s answered %d, want its day of %d spent", id, got, want)
		}
	}
	if tf.RateLimited != 0 {
		t.Errorf("tollfree with limits configured: got %d 429s, want 0", tf.RateLimited)
	}
	if tf.ByModel*100 < capa.ByModel*95 {
		t.Errorf("tollfree answered %d by a model, want at least 95%% of the capacity, %d", tf.ByModel, capa.ByModel)
	}
	// The naive chain knocks on spent routes, and each 429 counts against
	// the day: Flash Lite's 500 go partly to refusals.
	if naive.RateLimited < rep.Requests/2 {
		t.Errorf("naive chain: %d 429s, want at least one for every other question", naive.RateLimited)
	}
	// Calls wasted: every call that gave no answer used. With no incident
	// in this day, tollfree with its limits wastes none.
	if w := tf.Calls - tf.ByModel; w != 0 {
		t.Errorf("tollfree with limits configured: %d calls wasted, want 0", w)
	}
	if w := naive.Calls - naive.ByModel; w < rep.Requests/2 {
		t.Errorf("naive chain: %d calls wasted, want at least one for every other question", w)
	}
	if got := naive.ByRoute["gemini/gemini-3.1-flash-lite"]; got >= 500 {
		t.Errorf("naive chain: Flash Lite answered %d, want fewer than its 500 (its 429s count against the day)", got)
	}
	for _, r := range rep.Results {
		if r.Stalls != 0 {
			t.Errorf("%s: the driver stalled %d times, want 0: %s", r.Policy, r.Stalls, strings.Join(r.StallWhy, "; "))
		}
		if r.ByModel+r.ByFallback != rep.Requests {
			t.Errorf("%s: %d + %d answers for %d questions", r.Policy, r.ByModel, r.ByFallback, rep.Requests)
		}
		if r.ByModel > opt.ByModel {
			t.Errorf("%s: %d answered by a model, more than the optimum's bound %d", r.Policy, r.ByModel, opt.ByModel)
		}
	}
	// Learning: a few 429s teach it the limits; far fewer than the naive
	// chain's, and nearly as many answers.
	if learn.RateLimited*10 > naive.RateLimited {
		t.Errorf("limits learned: got %d 429s, want under a tenth of the naive chain's %d", learn.RateLimited, naive.RateLimited)
	}
	if learn.ByModel*100 < capa.ByModel*95 {
		t.Errorf("limits learned: answered %d by a model, want at least 95%% of %d", learn.ByModel, capa.ByModel)
	}
}

func TestGenerateIsReproducible(t *testing.T) {
	a, b := Generate(TraceOptions{Seed: 3}), Generate(TraceOptions{Seed: 3})
	if len(a) != 3000 {
		t.Fatalf("got %d arrivals, want 3000", len(a))
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("arrival %d: got %+v and %+v from one seed", i, a[i], b[i])
		}
		if a[i].At < 0 || a[i].At >= 24*time.Hour || a[i].Prompt < 1500 || a[i].Prompt > 4500 {
			t.Fatalf("arrival %d out of range: %+v", i, a[i])
		}
	}
}

func TestReadTrace(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []Arrival
		wantErr string
	}{
		{name: "header and unordered lines", in: "seconds,prompt_tokens\n90.5,3000\n2,1500\n",
			want: []Arrival{{At: 2 * time.Second, Prompt: 1500}, {At: 90500 * time.Millisecond, Prompt: 3000}}},
		{name: "no header", in: "0,10\n", want: []Arrival{{At: 0, Prompt: 10}}},
		{name: "empty", in: "", wantErr: "no arrivals"},
		{name: "one field", in: "1\n", wantErr: "two fields"},
		{name: "not a number", in: "1,2\nx,3\n", wantErr: "line 2"},
		{name: "negative", in: "-1,2\n", wantErr: "within a year"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadTrace(strings.NewReader(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("arrival %d: got %+v, want %+v", i, got[i], tt.want[i])
				}
			}
		})
	}
}

// TestSVGPanels: the plot has a panel per policy, each with its legend
// above its own plot area, and no two panels overlap, so that policies
// whose lines coincide stay apart and no legend covers a line.
func TestSVGPanels(t *testing.T) {
	rep := &Report{Requests: 10}
	for _, p := range []string{PolicyTollfree, PolicyLearning, PolicyNaive, PolicyCapacity} {
		rep.Results = append(rep.Results, &Result{Policy: p, ByModel: 9, ByFallback: 1, RateLimited: 3,
			ByModelBin: make([]int, 24), FallbackBin: make([]int, 24)})
	}
	rep.Results[0].ByModelBin[5] = 9
	var b bytes.Buffer
	if err := rep.WriteSVG(&b); err != nil {
		t.Fatal(err)
	}
	type text struct {
		Class string  `xml:"class,attr"`
		Y     float64 `xml:"y,attr"`
		Body  string  `xml:",innerxml"`
	}
	type rect struct {
		Class string  `xml:"class,attr"`
		Y     float64 `xml:"y,attr"`
		H     float64 `xml:"height,attr"`
	}
	var doc struct {
		Panels []struct {
			Class string `xml:"class,attr"`
			Texts []text `xml:"text"`
			Rects []rect `xml:"rect"`
			Lines []struct {
				Points string `xml:"points,attr"`
			} `xml:"polyline"`
		} `xml:"g"`
	}
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("the SVG does not parse: %v", err)
	}
	panels := doc.Panels[:0]
	pacing := 0
	for _, p := range doc.Panels {
		switch p.Class {
		case "panel":
			panels = append(panels, p)
		case "pacing":
			pacing++
		}
	}
	if len(panels) != 4 || pacing != 1 {
		t.Fatalf("%d panels and %d pacing panels, want one per policy (4) and one", len(panels), pacing)
	}
	prevBottom := 0.0
	for i, p := range panels {
		var plot *rect
		for j := range p.Rects {
			if p.Rects[j].Class == "plot" {
				plot = &p.Rects[j]
			}
		}
		var legend *text
		for j := range p.Texts {
			if p.Texts[j].Class == "legend" {
				legend = &p.Texts[j]
			}
		}
		if plot == nil || legend == nil {
			t.Fatalf("panel %d: no plot area or no legend", i)
		}
		if !strings.Contains(legend.Body, rep.Results[i].Policy) || !strings.Contains(legend.Body, "3 429s") || !strings.Contains(legend.Body, "100.0% of capacity") {
			t.Errorf("panel %d legend %q does not name %s, its share of capacity and its 429s", i, legend.Body, rep.Results[i].Policy)
		}
		if legend.Y >= plot.Y {
			t.Errorf("panel %d: legend at y=%g is inside its plot area (from y=%g)", i, legend.Y, plot.Y)
		}
		if legend.Y-14 < prevBottom+14 {
			t.Errorf("panel %d: legend at y=%g overlaps the panel above (its hours end at y=%g)", i, legend.Y, prevBottom+14)
		}
		prevBottom = plot.Y + plot.H
		if len(p.Lines) != 2 {
			t.Errorf("panel %d: %d lines, want answers and fallbacks", i, len(p.Lines))
		}
	}
}
