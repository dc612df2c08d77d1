package search

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// benchSite opens writeSite's pages.
func benchSite(b *testing.B, pages int) *Index {
	b.Helper()
	ix, err := Open(writeSite(b, pages), Options{})
	if err != nil {
		b.Fatal(err)
	}
	return ix
}

// writeSite writes pages pages of four sections each, in words drawn from a
// Zipf-shaped vocabulary the way real prose is, and returns their folder.
func writeSite(b *testing.B, pages int) string {
	b.Helper()
	dir := b.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	vocab := make([]string, 5000)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("w%dx", i)
	}
	copy(vocab, strings.Fields("password account billing refund export note share invite plan limit key route chain model"))
	zipf := rand.NewZipf(rng, 1.1, 2, uint64(len(vocab)-1))
	para := func(words int) string {
		var sb strings.Builder
		for i := 0; i < words; i++ {
			sb.WriteString(vocab[zipf.Uint64()])
			if i%12 == 11 {
				sb.WriteString(". ")
			} else {
				sb.WriteByte(' ')
			}
		}
		return sb.String()
	}
	for p := 0; p < pages; p++ {
		var sb strings.Builder
		fmt.Fprintf(&sb, "# Page %d %s\n\n%s\n", p, vocab[zipf.Uint64()], para(60))
		for s := 0; s < 3; s++ {
			fmt.Fprintf(&sb, "\n## %s %s\n\n%s\n\n%s\n", vocab[zipf.Uint64()], vocab[zipf.Uint64()], para(80), para(60))
		}
		writeFile(b, dir, fmt.Sprintf("d%d/p%d.md", p%10, p), sb.String())
	}
	return dir
}

var benchQueries = []string{
	"How do I reset my account password?",
	"can I get a refund on my billing plan",
	"export notes and share them with an invite",
	"what is the rate limit of a route in a chain for this model key",
}

// BenchmarkSearch: 300 pages, 1,200 sections; one op is one query.
func BenchmarkSearch(b *testing.B) {
	ix := benchSite(b, 300)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		ix.Search(benchQueries[i%len(benchQueries)], 3)
	}
	b.ReportMetric(float64(ix.Sections()), "sections")
}

// BenchmarkOpen: reading and indexing the 300 pages (about 1.2 MB).
func BenchmarkOpen(b *testing.B) {
	dir := writeSite(b, 300)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Open(dir, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
