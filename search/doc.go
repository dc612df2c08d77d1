// Package search owns the content fallback: when every route of a chain is
// resting or out of budget (docs/DESIGN.md "fallback"), or the site is past its
// daily cap (seed 000: "past which it answers by search alone"), a plain
// keyword search over the site's own pages answers instead, so the feature
// never simply breaks. Seed 003 asks the same of its assistant: answer
// how-to questions from the best-matching page of the guide, and say
// plainly that it cannot act right now.
//
// Open reads a folder of Markdown, plain-text and HTML pages into an
// immutable in-memory index of sections (pages split at their headings;
// HTML read with golang.org/x/net/html's tokenizer). Search ranks sections
// by BM25, with a light English stemmer, stop words, and case and accent
// folding, each hit with its best passage. The reply built from the best
// hits, which says the assistant is resting in the visitor's language, is
// package assistant's (Assistant.Search), for a site assistant and a
// plain chain's search fallback alike. Version hashes
// the content for the response cache, so editing a page retires every
// cached answer. A page that cannot be indexed (not UTF-8, past a size
// cap, unreadable) is skipped and listed by Index.Skipped, never fatal to
// the rest of the folder. An Index never changes: package content reads
// the folder anew when it changes and swaps the Index it serves.
//
// # Why it is hand-written
//
// The job is small: a few hundred pages, read at start and on each change,
// queried with a visitor's question. The Go libraries that do full-text
// search were considered and none fits a library that must stay light:
//
//   - bleve (blevesearch/bleve/v2) indexes any Go value with analyzers,
//     facets and an on-disk scorch segment format; it pulls in dozens of
//     modules (roaring bitmaps, vellum, bbolt, segment codecs) for what is
//     here one map and a few slices, and its in-memory index still goes
//     through that machinery.
//   - bluge (blugelabs/bluge), bleve's successor, scores with BM25 but is
//     built on the same segment stack and has seen little maintenance.
//   - small BM25 packages (covrom/bm25s; the bm25 packages inside
//     plexusone/omniretrieve, deagy/recall, tevfik/gleann) score strings
//     handed to them: none reads a folder, strips HTML or Markdown, splits
//     pages at headings, folds accents, or picks a snippet, which is most of
//     this package; each is a young single-author module, and several sit in
//     larger modules pulled in whole.
//
// Taking one on would add a module to everyone's build for about a fifth of
// the work. This package is about 1,700 lines (without its tests) of the
// standard library and golang.org/x/net/html: the Markdown outline (which
// no kept library gives as sections with anchors and without a tree), the
// tokenizer with its folding and stemmer, BM25 over sections, and snippets;
// HTML is tokenized by x/net/html, the one part a kept library does.
//
// # Limits
//
// Folding covers case everywhere and diacritics of Latin-1 and Latin
// Extended-A letters (and any decomposed accent); stemming is English only.
// Han and kana text is matched character by character. It is a keyword
// search, not an answer: it finds the passage, it does not read it.
package search
