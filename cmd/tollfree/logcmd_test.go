package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tollfree/tollfree/calllog"
	"github.com/tollfree/tollfree/failure"
	"github.com/tollfree/tollfree/route"
	"github.com/tollfree/tollfree/status/logstats"
)

// writeCallLog writes a small call log at path.
func writeCallLog(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := calllog.New(f)
	at := time.Date(2026, 6, 15, 12, 0, 0, 0, time.UTC)
	for i, outcome := range []string{"ok", "ok", "ok", "rate_minute"} {
		w.Write(&calllog.Record{Time: at.Add(time.Duration(i) * time.Minute), Route: "groq/llama-3.3-70b-versatile", Provider: "groq",
			Outcome: outcome, LatencyMS: 300, TokensIn: 50, TokensOut: 5})
	}
	if _, err := f.WriteString("garbage\n"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestLogStatsCommand(t *testing.T) {
	dir := t.TempDir()
	writeCallLog(t, filepath.Join(dir, "data", "calls.jsonl"))
	other := filepath.Join(dir, "other.jsonl")
	writeCallLog(t, other)
	cfg := "data_dir: " + filepath.Join(dir, "data") + "\nproviders:\n  groq: {preset: groq}\nchains:\n  answer: {routes: [groq/llama-3.3-70b-versatile]}\n"
	path := writeFile(t, "tollfree.yaml", cfg)
	off := writeFile(t, "off.yaml", cfg+"call_log: \"off\"\n")

	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantOut  []string
		wantErr  []string
	}{
		{
			name: "default file from data_dir", args: []string{"stats", "-config", path},
			wantOut: []string{
				"2026-06-15  groq/llama-3.3-70b-versatile  4      3   25.0%",
				"4/1000", "ok 75% rate_minute 25%",
				"4 records from " + filepath.Join(dir, "data", "calls.jsonl") + "; 1 bad lines skipped (the first is line 5)",
			},
		},
		{name: "file flag", args: []string{"stats", "-config", path, "-file", other}, wantOut: []string{"4 records from " + other}},
		{name: "tz", args: []string{"stats", "-config", path, "-tz", "Asia/Tokyo"}, wantOut: []string{"DAY (Asia/Tokyo)", "2026-06-15"}},
		{name: "bad tz", args: []string{"stats", "-config", path, "-tz", "Mars/Olympus"}, wantCode: 1, wantErr: []string{`-tz "Mars/Olympus"`}},
		{name: "missing file", args: []string{"stats", "-config", path, "-file", filepath.Join(dir, "nope.jsonl")}, wantCode: 1, wantErr: []string{"opening the call log"}},
		{name: "log off", args: []string{"stats", "-config", off}, wantCode: 1, wantErr: []string{"turns the call log off"}},
		{name: "no subcommand", args: nil, wantCode: 2, wantErr: []string{"tollfree log stats"}},
		{name: "unknown subcommand", args: []string{"tail"}, wantCode: 2, wantErr: []string{`unknown subcommand "tail"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(append([]string{"log"}, tt.args...), &stdout, &stderr)
			if code != tt.wantCode {
				t.Errorf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.wantCode, stdout.String(), stderr.String())
			}
			for _, w := range tt.wantOut {
				if !strings.Contains(stdout.String(), w) {
					t.Errorf("stdout lacks %q:\n%s", w, stdout.String())
				}
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(stderr.String(), w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr.String())
				}
			}
		})
	}
}

// TestLogStatsBrokenConfigHere: a log named with -file is summed in a
// folder whose tollfree.yaml does not load (a variable unset), without the
// routes' daily limits, saying so; -config naming that file still fails.
func TestLogStatsBrokenConfigHere(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "calls.jsonl")
	writeCallLog(t, log)
	t.Chdir(dir)
	if err := os.WriteFile("tollfree.yaml", []byte("providers:\n  groq: {}\nchains:\n  answer: {routes: [groq/llama-3.3-70b-versatile], deadline: ${UNSET_IN_THIS_TEST}}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"log", "stats", "-file", log}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d, want 0\n%s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "4 records from "+log) || !strings.Contains(stderr.String(), "without the routes' daily limits") {
		t.Errorf("stdout:\n%s\nstderr:\n%s\nwant the log summed and a line saying the limits are left out", stdout.String(), stderr.String())
	}
	stdout.Reset()
	stderr.Reset()
	if code := run([]string{"log", "stats", "-config", "tollfree.yaml", "-file", log}, &stdout, &stderr); code != 1 {
		t.Errorf("-config naming a config that does not load: exit %d, want 1", code)
	}
}

func TestLogStatsJSON(t *testing.T) {
	dir := t.TempDir()
	logPath := filepath.Join(dir, "calls.jsonl")
	writeCallLog(t, logPath)
	cfg := writeFile(t, "c.yaml", "call_log: "+logPath+"\nproviders:\n  groq: {preset: groq}\nchains:\n  answer: {routes: [groq/llama-3.3-70b-versatile]}\n")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"log", "stats", "-config", cfg, "-json"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit code %d: %s", code, stderr.String())
	}
	var got logstats.Summary
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, stdout.String())
	}
	if got.Records != 4 || got.BadLines != 1 || len(got.Rows) != 1 {
		t.Fatalf("records %d, bad %d, rows %d; want 4, 1, 1", got.Records, got.BadLines, len(got.Rows))
	}
	r := got.Rows[0]
	if r.Calls != 4 || r.OK != 3 || r.FailoverRate != 0.25 || r.RPDLimit != 1000 || r.TPDLimit != 100000 || r.LatencyP50 != 300 {
		t.Errorf("row %+v: want 4 calls, 3 ok, failover 0.25, limits 1000/100000, p50 300", r)
	}
}

// TestLogStatsRescues runs `tollfree log stats` on a call log holding the
// lines the router writes when it rescues a broken stream and retries a
// blip politely (issue 13): the table is followed by the streams rescued
// and the polite retries per route, and their total, as text and as JSON.
func TestLogStatsRescues(t *testing.T) {
	dir := t.TempDir()
	logPath := filepath.Join(dir, "calls.jsonl")
	f, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	w := calllog.New(f)
	at := time.Date(2026, 6, 15, 12, 0, 0, 0, time.UTC)
	const groq, cere = "groq/llama-3.3-70b-versatile", "cerebras/gpt-oss-120b"
	for _, a := range []route.Attempt{
		{RequestID: "s1", Route: groq, Provider: "groq", Class: failure.Overloaded, Stream: true},
		{RequestID: "s1", Route: cere, Provider: "cerebras", Class: failure.OK, Stream: true, Part: 1, Method: "instruct"},
		{RequestID: "s2", Route: groq, Provider: "groq", Class: failure.Timeout, Stream: true},
		{RequestID: "s2", Route: cere, Provider: "cerebras", Class: failure.OK, Stream: true, Part: 1, Method: "instruct"},
		{RequestID: "r1", Route: groq, Provider: "groq", Class: failure.Overloaded},
		{RequestID: "r1", Route: groq, Provider: "groq", Class: failure.OK, Retry: true},
	} {
		a.Chain, a.Start = "answer", at
		w.Write(calllog.FromAttempt(&a))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	cfg := writeFile(t, "c.yaml", "providers:\n  groq: {preset: groq}\n  cerebras: {preset: cerebras}\nchains:\n  answer: {routes: ["+groq+", "+cere+"]}\n")

	var stdout, stderr bytes.Buffer
	if code := run([]string{"log", "stats", "-config", cfg, "-file", logPath}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit code %d: %s", code, stderr.String())
	}
	for _, want := range []string{
		"DAY (UTC)   ROUTE                         STREAMS RESCUED  POLITE RETRIES\n",
		"2026-06-15  groq/llama-3.3-70b-versatile  -                1 (1 answered)\n",
		"2026-06-15  cerebras/gpt-oss-120b         2 (instruct 2)   -\n",
		"total                                     2 (instruct 2)   1 (1 answered)\n",
		"streams rescued: streams that broke after their first token",
	} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout.String())
		}
	}

	stdout.Reset()
	if code := run([]string{"log", "stats", "-config", cfg, "-file", logPath, "-json"}, &stdout, &stderr); code != 0 {
		t.Fatalf("-json: exit code %d: %s", code, stderr.String())
	}
	var got struct {
		StreamsRescued        int            `json:"streams_rescued"`
		RescuedBy             map[string]int `json:"rescued_by"`
		PoliteRetries         int            `json:"polite_retries"`
		PoliteRetriesAnswered int            `json:"polite_retries_answered"`
		Rows                  []map[string]any
	}
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, stdout.String())
	}
	if got.StreamsRescued != 2 || got.RescuedBy["instruct"] != 2 || got.PoliteRetries != 1 || got.PoliteRetriesAnswered != 1 {
		t.Errorf("JSON totals: %d streams rescued %v, %d polite retries (%d answered); want 2 {instruct: 2}, 1 (1 answered)\n%s",
			got.StreamsRescued, got.RescuedBy, got.PoliteRetries, got.PoliteRetriesAnswered, stdout.String())
	}
	if len(got.Rows) != 2 || got.Rows[0]["polite_retries"] != 1.0 || got.Rows[1]["streams_rescued"] != 2.0 || got.Rows[0]["streams_rescued"] != nil {
		t.Errorf("JSON rows %v: want groq with 1 polite retry and no rescue field, cerebras with 2 streams rescued", got.Rows)
	}
}
