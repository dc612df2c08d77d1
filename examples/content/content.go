// Package content is the content folder of a sample personal site (a
// developer's portfolio: about, projects, talks and writing, the stack, a
// contact page), the kind of site seed 000's assistant answers for. The
// Markdown pages are what a search fallback or an assistant reads; they
// are embedded so that `tollfree demo` can answer by search from the
// binary alone when every route is down.
package content

import "embed"

// Pages holds the site's Markdown pages.
//
//go:embed *.md
var Pages embed.FS
