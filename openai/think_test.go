package openai

import (
	"strings"
	"testing"
)

func TestThinkFilter(t *testing.T) {
	tests := []struct {
		name          string
		pieces        []string
		wantContent   string
		wantReasoning string
	}{
		{"no tags", []string{"Hello ", "world", " a<b"}, "Hello world a<b", ""},
		{"whole block", []string{"<think>plan</think>\n\nAnswer"}, "Answer", "plan"},
		{"split open tag", []string{"<th", "ink>pl", "an</thi", "nk>", "\n", "Ans", "wer"}, "Answer", "plan"},
		{"byte by byte", strings.Split("<think>a<b</think> ok", ""), "ok", "a<b"},
		{"text before the block", []string{"Sure. <think>x</think>Done"}, "Sure. Done", "x"},
		{"looks like a tag but is not", []string{"a <thin", "g> b"}, "a <thing> b", ""},
		{"unfinished block", []string{"<think>still thinking"}, "", "still thinking"},
		{"pending tail flushed", []string{"value <th"}, "value <th", ""},
		{"pending close tail flushed", []string{"<think>x </th"}, "", "x </th"},
		{"two blocks", []string{"<think>a</think>b<think>c</think> d"}, "bd", "ac"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var f ThinkFilter
			var c, r strings.Builder
			for _, p := range tt.pieces {
				pc, pr := f.Push(p)
				c.WriteString(pc)
				r.WriteString(pr)
			}
			pc, pr := f.Flush()
			c.WriteString(pc)
			r.WriteString(pr)
			if c.String() != tt.wantContent || r.String() != tt.wantReasoning {
				t.Errorf("got content %q reasoning %q, want %q and %q", c.String(), r.String(), tt.wantContent, tt.wantReasoning)
			}
		})
	}
}

func TestThinkFilterFastPathDoesNotAllocate(t *testing.T) {
	var f ThinkFilter
	allocs := testing.AllocsPerRun(100, func() { f.Push("plain text without tags") })
	if allocs != 0 {
		t.Errorf("Push allocated %v times, want 0", allocs)
	}
}
