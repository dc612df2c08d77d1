package config

import (
	"fmt"
	"sort"
	"strings"
)

// Problem is one thing wrong with a configuration.
type Problem struct {
	// File is the config file's name ("tollfree.yaml"), or "environment" for
	// a role variable.
	File string
	// Line is the 1-based line the problem is on; 0 when unknown.
	Line int
	// Field is the dotted path of the field ("chains.answer.routes[1]"), or
	// the environment variable's name.
	Field string
	// Message says what is wrong and what would be valid. It never holds a
	// key.
	Message string
}

// String formats the problem as "file:line: field: message".
func (p Problem) String() string {
	var b strings.Builder
	if p.File != "" {
		b.WriteString(p.File)
		if p.Line > 0 {
			fmt.Fprintf(&b, ":%d", p.Line)
		}
		b.WriteString(": ")
	}
	if p.Field != "" {
		b.WriteString(p.Field)
		b.WriteString(": ")
	}
	b.WriteString(p.Message)
	return b.String()
}

// Error holds every problem found in a configuration. Parse, Load and Default
// return it (as an error; find it with errors.As) when the configuration is
// wrong; a file that cannot be read or parsed at all is reported the same way.
type Error struct {
	Problems []Problem
}

// Error prints one problem per line, in line order.
func (e *Error) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// problems collects Problems for one file. A field reported once is not
// reported again, so a value that failed to decode does not also fail
// validation.
type problems struct {
	file  string
	lines func(path string) int
	list  []Problem
	seen  map[string]bool
}

func newProblems(file string, lines func(string) int) *problems {
	return &problems{file: file, lines: lines, seen: map[string]bool{}}
}

// addf reports a problem with the field at path, on the line recorded for it.
func (p *problems) addf(path, format string, args ...any) {
	line := 0
	if p.lines != nil {
		line = p.lines(path)
	}
	p.addLine(line, path, fmt.Sprintf(format, args...))
}

// addLine reports a problem on an explicit line.
func (p *problems) addLine(line int, path, msg string) {
	if path != "" && p.seen[path] {
		return
	}
	p.seen[path] = true
	p.list = append(p.list, Problem{File: p.file, Line: line, Field: path, Message: msg})
}

// addEnv reports a problem with an environment variable.
func (p *problems) addEnv(name, msg string) {
	key := "env:" + name
	if p.seen[key] {
		return
	}
	p.seen[key] = true
	p.list = append(p.list, Problem{File: "environment", Field: name, Message: msg})
}

// err returns the collected problems as an *Error, or nil when there are none.
func (p *problems) err() error {
	if len(p.list) == 0 {
		return nil
	}
	list := append([]Problem(nil), p.list...)
	sort.SliceStable(list, func(i, j int) bool {
		if list[i].File != list[j].File {
			return list[i].File == p.file // the file's problems before the environment's
		}
		return list[i].Line < list[j].Line
	})
	return &Error{Problems: list}
}

// didYouMean returns ` (did you mean "x"?)` when one of valid is close to
// got, or "" when none is.
func didYouMean(got string, valid []string) string {
	best, ok := closest(got, valid)
	if !ok {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// closest returns the one of valid nearest to got: within an edit
// distance of 2 (1 for a name of up to 4 letters), else the shortest that
// got begins ("llama-3.3-70b" for llama-3.3-70b-versatile, issue 16).
func closest(got string, valid []string) (string, bool) {
	lower := strings.ToLower(got)
	best, bestDist := "", -1
	for _, v := range valid {
		d := editDistance(lower, strings.ToLower(v))
		if i := strings.LastIndexByte(v, '/'); i >= 0 {
			// "gpt-oss-120b" for "openai/gpt-oss-120b": the publisher left out.
			d = min(d, editDistance(lower, strings.ToLower(v[i+1:])))
		}
		if bestDist < 0 || d < bestDist {
			best, bestDist = v, d
		}
	}
	limit := 2
	if len(got) <= 4 {
		limit = 1
	}
	if bestDist >= 0 && bestDist <= limit {
		return best, true
	}
	if len(got) < 4 {
		return "", false
	}
	best = ""
	for _, v := range valid {
		if strings.HasPrefix(strings.ToLower(v), lower) && (best == "" || len(v) < len(best)) {
			best = v
		}
	}
	return best, best != ""
}

// editDistance is the optimal string alignment distance between a and b:
// Levenshtein's, with a swap of two neighbours ("gorq") counting as one.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

// quoteList formats names for a message: "a, b, c".
func quoteList(names []string) string {
	return strings.Join(names, ", ")
}
