// Package site is the demo site of `tollfree demo -assistant` (issue 14):
// a sample page carrying the chat widget's script tag (index.html), its
// style sheet, and the content folder of a fictional product, Driftwood
// (content/: seven HTML pages with headings, a contact page, export,
// pricing and privacy), which the demo's assistant answers from. The files
// are embedded so that the demo runs from the binary alone; they are also
// a starting point for a site's own content folder.
package site

import "embed"

// Files holds index.html, style.css and content/*.html.
//
//go:embed index.html style.css content
var Files embed.FS
