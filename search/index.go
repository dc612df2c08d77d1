package search

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Defaults of Options.
const (
	DefaultMaxFileBytes  = 1 << 20  // 1 MiB
	DefaultMaxTotalBytes = 64 << 20 // 64 MiB
)

// Conditions Open and Index.Skipped report; test with errors.Is.
var (
	// ErrTooLarge: a file, or all of them together, is past a size cap.
	ErrTooLarge = errors.New("content too large")
	// ErrNoContent: the path holds no page with text to search.
	ErrNoContent = errors.New("no content to search")
)

// Options tunes Open. The zero value works.
type Options struct {
	// MaxFileBytes caps one file, in bytes. Default 1 MiB; zero means the
	// default. A larger file in a folder is skipped (Index.Skipped, an
	// error wrapping ErrTooLarge); a larger single file fails Open.
	MaxFileBytes int64
	// MaxTotalBytes caps all files together, in bytes. Default 64 MiB; zero
	// means the default. A file that would pass it is skipped (Index.Skipped,
	// ErrTooLarge), so the first pages in lexical order are kept.
	MaxTotalBytes int64
	// BaseURL, when set, makes Answer link each section it quotes: BaseURL
	// joined with the page's path (extension dropped, index pages as their
	// folder) and the section's anchor, e.g. https://example.com/docs/ and
	// guides/export.md#csv give https://example.com/docs/guides/export#csv.
	// Default "": no links.
	BaseURL string
}

// Index is an immutable in-memory index of a folder of pages, split into
// sections at their headings. Its methods are safe for concurrent use.
type Index struct {
	pages     []page
	sections  []section
	units     []unit
	unitTerms []uint32 // term ids of every unit, in order; a unit owns [t0, t1)
	terms     map[string]uint32
	postStart []uint32 // term id → its postings are posts[postStart[id]:postStart[id+1]]
	posts     []posting
	idf       []float32 // by term id
	norm      []float32 // by section: k1·(1 − b + b·length/average), kept apart for locality
	version   string
	skipped   []Problem // files Open could not index
	scratch   sync.Pool // *scratch
}

type page struct {
	path  string // slash-separated, relative to the content root
	title string
	url   string // BaseURL joined with the page's path; "" without BaseURL
}

type section struct {
	page    uint32
	heading string // "" for a page's opening section
	anchor  string
	text    string // the units, joined by spaces
	u0, u1  uint32 // its units: ix.units[u0:u1]
}

// unit is a sentence, list item, table row or code line of a section.
type unit struct {
	start, end uint32 // bytes of section.text
	t0, t1     uint32 // its terms: ix.unitTerms[t0:t1]
}

type posting struct {
	sec uint32
	tf  float32 // weighted: heading words count double
}

// BM25 parameters, the usual ones; and the weights of a word in a section's
// own heading and in its page title or enclosing headings.
const (
	bm25K1        = 1.2
	bm25B         = 0.75
	headingWeight = 2
	trailWeight   = 1
)

// Open reads the pages under root (a folder, walked recursively in lexical
// order, or one file) and builds their index. Pages are .md and .markdown
// (Markdown), .txt (plain text) and .html and .htm (tags stripped); other
// files, and files and folders whose names start with a dot, are skipped.
// A link to a file is read; a link to a folder is not followed. Every page
// must be UTF-8 (a leading byte-order mark is dropped). A page of a folder
// that cannot be indexed (not UTF-8, past a size cap, unreadable) is
// skipped and listed by Index.Skipped, never fatal; Open fails only when
// root cannot be read, is a single file that cannot be indexed, or holds
// no page with text (ErrNoContent). Errors name the file. Open reads the
// disk only here: the Index never touches it again,
// so an edit takes effect when the caller opens the content anew.
func Open(root string, o Options) (*Index, error) {
	if o.MaxFileBytes <= 0 {
		o.MaxFileBytes = DefaultMaxFileBytes
	}
	if o.MaxTotalBytes <= 0 {
		o.MaxTotalBytes = DefaultMaxTotalBytes
	}
	files, skipped, err := collect(root, o)
	if err != nil {
		return nil, err
	}
	bd := builder{ix: &Index{terms: map[string]uint32{}, skipped: skipped}, tf: map[uint32]float32{}}
	h := sha256.New()
	for _, f := range files {
		var n [8]byte
		binary.LittleEndian.PutUint64(n[:], uint64(len(f.data)))
		io.WriteString(h, f.rel)
		h.Write([]byte{0}) // no path holds a NUL
		h.Write(n[:])
		h.Write(f.data)
		bd.addPage(f, o.BaseURL)
	}
	if len(bd.ix.sections) == 0 {
		return nil, fmt.Errorf("search: open %s: every page is empty%s: %w", root, skippedNote(skipped), ErrNoContent)
	}
	ix := bd.finish()
	ix.version = hex.EncodeToString(h.Sum(nil)[:12])
	return ix, nil
}

// Version is a hash of every file's path and bytes: it changes when any
// page is added, removed, renamed or edited, so a cache keyed by it retires
// every answer when the content changes (seed 000).
func (ix *Index) Version() string { return ix.version }

// Pages is the number of pages indexed.
func (ix *Index) Pages() int { return len(ix.pages) }

// Sections is the number of sections indexed.
func (ix *Index) Sections() int { return len(ix.sections) }

// Skipped lists the files Open could not index, in the order it met them,
// each naming the file and what to fix; nil when every page was read. The
// caller logs them: the rest of the content is indexed all the same.
func (ix *Index) Skipped() []Problem { return ix.skipped }

func skippedNote(skipped []Problem) string {
	if len(skipped) == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d skipped; the first: %v)", len(skipped), skipped[0].Err)
}

type file struct {
	rel  string // slash-separated, relative to the root
	data []byte
}

// kind names the parser of a file by its extension; "" when Open skips it.
func kind(name string) string {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".md", ".markdown":
		return "md"
	case ".txt":
		return "txt"
	case ".html", ".htm":
		return "html"
	}
	return ""
}

// Problem is a file Open skipped, and why: it is not UTF-8, it is past a
// size cap, or it could not be read. Err names the file and says what to
// do; Path is the file, slash-separated, relative to the content's root.
type Problem struct {
	Path string
	Err  error
}

func (p Problem) String() string { return p.Err.Error() }

// collect lists and reads the pages under root. A file that cannot be
// indexed is skipped and reported, never fatal (issue 14: "a broken file
// is reported and skipped"); only a root that cannot be read, a single
// file that is not a page, or a folder with no page fails.
func collect(root string, o Options) ([]file, []Problem, error) {
	st, err := os.Stat(root)
	if err != nil {
		return nil, nil, fmt.Errorf("search: open content: %w", err)
	}
	c := collector{root: root, o: o}
	if !st.IsDir() {
		if kind(root) == "" {
			return nil, nil, fmt.Errorf("search: %s: not a page; use a .md, .txt or .html file or a folder of them", root)
		}
		if err := c.add(root, filepath.Base(root), st.Size()); err != nil {
			return nil, nil, err
		}
		return c.files, nil, nil
	}
	err = filepath.WalkDir(root, c.visit)
	if err != nil {
		return nil, nil, err
	}
	if len(c.files) == 0 {
		if len(c.skipped) > 0 {
			return nil, c.skipped, fmt.Errorf("search: no page under %s could be read (%d skipped; the first: %v): %w", root, len(c.skipped), c.skipped[0].Err, ErrNoContent)
		}
		return nil, nil, fmt.Errorf("search: no .md, .txt or .html files under %s: %w", root, ErrNoContent)
	}
	return c.files, c.skipped, nil
}

// collector gathers the pages of a folder and the files it skipped.
type collector struct {
	root    string
	o       Options
	files   []file
	skipped []Problem
	total   int64
}

// visit is the WalkDir callback: it skips hidden names and files that are
// not pages, and reports what it cannot read below the root.
func (c *collector) visit(p string, d fs.DirEntry, err error) error {
	if err != nil {
		if p == c.root {
			return fmt.Errorf("search: read content: %w", err)
		}
		c.skip(p, fmt.Errorf("search: cannot read %s (%w); fix its permissions or remove it", p, err))
		if d != nil && d.IsDir() {
			return filepath.SkipDir
		}
		return nil
	}
	if p != c.root && strings.HasPrefix(d.Name(), ".") {
		if d.IsDir() {
			return filepath.SkipDir
		}
		return nil
	}
	if d.IsDir() || kind(p) == "" {
		return nil
	}
	info, err := os.Stat(p) // follows a link to a page
	if err != nil {
		c.skip(p, fmt.Errorf("search: cannot read %s (%w); fix it or remove it", p, err))
		return nil
	}
	if !info.Mode().IsRegular() {
		return nil
	}
	if err := c.add(p, c.rel(p), info.Size()); err != nil {
		c.skip(p, err)
	}
	return nil
}

func (c *collector) rel(p string) string {
	rel, err := filepath.Rel(c.root, p)
	if err != nil {
		return filepath.ToSlash(p)
	}
	return filepath.ToSlash(rel)
}

func (c *collector) skip(p string, err error) {
	c.skipped = append(c.skipped, Problem{Path: c.rel(p), Err: err})
}

// add reads one page, or says why it cannot be indexed.
func (c *collector) add(p, rel string, size int64) error {
	o := c.o
	if size > o.MaxFileBytes {
		return fmt.Errorf("search: %s is %d bytes, past the %d-byte cap per file (Options.MaxFileBytes); split it or raise the cap: %w", p, size, o.MaxFileBytes, ErrTooLarge)
	}
	if c.total+size > o.MaxTotalBytes {
		return fmt.Errorf("search: content under %s passes %d bytes at %s, the cap on all files (Options.MaxTotalBytes); trim it or raise the cap: %w", c.root, o.MaxTotalBytes, p, ErrTooLarge)
	}
	data, err := readCapped(p, o.MaxFileBytes)
	if err != nil {
		return err
	}
	if !utf8.Valid(data) {
		return fmt.Errorf("search: %s is not valid UTF-8; save it as UTF-8", p)
	}
	c.total += int64(len(data))
	c.files = append(c.files, file{rel: rel, data: data})
	return nil
}

// readCapped reads p, failing if it has grown past max since it was listed.
func readCapped(p string, max int64) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, fmt.Errorf("search: read content: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("search: read %s: %w", p, err)
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("search: %s is past the %d-byte cap per file (Options.MaxFileBytes); split it or raise the cap: %w", p, max, ErrTooLarge)
	}
	return data, nil
}

// builder accumulates sections and postings while Open reads the pages.
type builder struct {
	ix       *Index
	postings [][]posting // by term id
	dl       []float32   // weighted length of each section
	tf       map[uint32]float32
	sc       scanner
}

func (bd *builder) addPage(f file, baseURL string) {
	src := strings.TrimPrefix(string(f.data), "\ufeff")
	var o *outline
	switch kind(f.rel) {
	case "md":
		o = parseMarkdown(src)
	case "html":
		o = parseHTML(src)
	default:
		o = parseText(src)
	}
	title := o.title
	if title == "" {
		title = o.h1
	}
	if title == "" {
		title = titleFromPath(f.rel)
	}
	pi := uint32(len(bd.ix.pages))
	bd.ix.pages = append(bd.ix.pages, page{path: f.rel, title: title, url: pageURL(baseURL, f.rel)})
	names := []string{title}
	if o.h1 != "" && o.h1 != title {
		names = append(names, o.h1) // front matter named the page; its h1 counts too
	}
	for _, rs := range o.secs {
		if len(rs.units) > 0 {
			bd.addSection(pi, names, rs)
		}
	}
}

// addSection indexes one section. Its words count once; its heading's
// words count double; the page's names and the enclosing headings count
// once more, so a question naming the page finds each of its sections.
func (bd *builder) addSection(pi uint32, names []string, rs rawSection) {
	ix := bd.ix
	si := uint32(len(ix.sections))
	clear(bd.tf)
	var dl float32
	count := func(s string, w float32, unitTerms bool) {
		bd.sc = scanner{s: s, tok: bd.sc.tok}
		for bd.sc.next() {
			t := term(bd.sc.tok)
			if t == nil {
				continue
			}
			id, ok := ix.terms[string(t)]
			if !ok {
				id = uint32(len(ix.terms))
				ix.terms[string(t)] = id
				bd.postings = append(bd.postings, nil)
			}
			bd.tf[id] += w
			dl++
			if unitTerms {
				ix.unitTerms = append(ix.unitTerms, id)
			}
		}
	}
	for _, t := range names {
		count(t, trailWeight, false)
	}
	for _, t := range rs.trail {
		count(t, trailWeight, false)
	}
	count(rs.heading, headingWeight, false)
	var text strings.Builder
	u0 := uint32(len(ix.units))
	for _, u := range rs.units {
		if text.Len() > 0 {
			text.WriteByte(' ')
		}
		start := uint32(text.Len())
		text.WriteString(u)
		t0 := uint32(len(ix.unitTerms))
		count(u, 1, true)
		ix.units = append(ix.units, unit{start: start, end: uint32(text.Len()), t0: t0, t1: uint32(len(ix.unitTerms))})
	}
	for id, tf := range bd.tf {
		bd.postings[id] = append(bd.postings[id], posting{sec: si, tf: tf})
	}
	bd.dl = append(bd.dl, dl)
	ix.sections = append(ix.sections, section{
		page: pi, heading: rs.heading, anchor: rs.anchor, text: text.String(),
		u0: u0, u1: uint32(len(ix.units)),
	})
}

// finish flattens the postings and works out each section's length norm
// and each term's idf.
func (bd *builder) finish() *Index {
	ix := bd.ix
	var sum float64
	for _, d := range bd.dl {
		sum += float64(d)
	}
	avg := sum / float64(len(bd.dl))
	if avg == 0 {
		avg = 1
	}
	ix.norm = make([]float32, len(bd.dl))
	for i, d := range bd.dl {
		ix.norm[i] = float32(bm25K1 * (1 - bm25B + bm25B*float64(d)/avg))
	}
	n := float64(len(ix.sections))
	ix.postStart = make([]uint32, len(bd.postings)+1)
	ix.idf = make([]float32, len(bd.postings))
	for id, ps := range bd.postings {
		ix.postStart[id] = uint32(len(ix.posts))
		// Sections were added in order, so each list is in section order.
		ix.posts = append(ix.posts, ps...)
		df := float64(len(ps))
		ix.idf[id] = float32(math.Log(1 + (n-df+0.5)/(df+0.5)))
	}
	ix.postStart[len(bd.postings)] = uint32(len(ix.posts))
	ix.scratch.New = func() any {
		return &scratch{scores: make([]float32, len(ix.sections))}
	}
	return ix
}

// titleFromPath names a page without a title after its file: "getting-
// started.md" is "Getting started"; an index or readme page takes its
// folder's name, or "Home" at the root.
func titleFromPath(rel string) string {
	base := path.Base(rel)
	name := strings.TrimSuffix(base, path.Ext(base))
	if l := strings.ToLower(name); l == "index" || l == "readme" {
		dir := path.Dir(rel)
		if dir == "." {
			return "Home"
		}
		name = path.Base(dir)
	}
	name = strings.TrimSpace(strings.NewReplacer("-", " ", "_", " ").Replace(name))
	r, size := utf8.DecodeRuneInString(name)
	if size == 0 {
		return "Home"
	}
	return string(unicode.ToUpper(r)) + name[size:]
}

// parseText outlines a plain-text page: paragraphs split at blank lines; a
// first paragraph of one short line with no sentence end is the title.
func parseText(src string) *outline {
	o := &outline{}
	paras := strings.Split(strings.ReplaceAll(src, "\r\n", "\n"), "\n\n")
	if first := strings.TrimSpace(paras[0]); first != "" && !strings.ContainsAny(first, "\n.!?") && utf8.RuneCountInString(first) <= 80 {
		o.title = first
		paras = paras[1:]
	}
	for _, para := range paras {
		o.text(para)
		o.flush()
	}
	return o
}

// pageURL joins base with a page's path, dropping the extension and an
// index file's name, and escaping each segment.
func pageURL(base, rel string) string {
	if base == "" {
		return ""
	}
	p := strings.TrimSuffix(rel, path.Ext(rel))
	if l := strings.ToLower(path.Base(p)); l == "index" || l == "readme" {
		p = strings.TrimSuffix(p, path.Base(p))
	}
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.TrimSuffix(base, "/") + "/" + strings.Join(segs, "/")
}
