package search

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

const site = "testdata/site"

func openSite(t testing.TB, o Options) *Index {
	t.Helper()
	ix, err := Open(site, o)
	if err != nil {
		t.Fatalf("Open(%s) = %v", site, err)
	}
	return ix
}

// TestSearchRanking asks the sample site questions in a visitor's words,
// not the page's, and checks the right section wins.
func TestSearchRanking(t *testing.T) {
	ix := openSite(t, Options{})
	tests := []struct {
		name, query      string
		wantPath, anchor string
	}{
		{"forgot password", "I forgot my password, how can I get back in?", "account.md", "resetting-your-password"},
		{"update email", "How can I update the email address I sign in with?", "account.md", "changing-your-email-address"},
		{"money back", "can I get my money back?", "billing.md", "refunds"},
		{"price", "what does the pro plan cost per month", "billing.md", "upgrading-to-pro"},
		{"spreadsheet", "download my notes as a spreadsheet", "guides/export.md", "export-to-csv"},
		{"printable", "print a note as a document", "guides/export.md", "export-to-pdf"},
		{"letter paper", "US letter paper size for exports", "guides/export.md", "page-size"},
		{"invite", "invite a teammate to edit a note with me", "guides/sharing.html", "invite"},
		{"revoke", "how do I revoke a public link", "guides/sharing.html", "public-links"},
		{"offline", "does it work without internet?", "offline.md", ""},
		{"conflict", "I edited a note on two devices, which version wins?", "offline.md", "conflicts"},
		{"desktop", "is there an app for Linux", "faq.txt", ""},
		{"2fa", "enable two factor authentication", "account.md", "two-factor-authentication"},
		{"plural and ing", "deleting accounts", "account.md", "deleting-your-account"},
		{"past tense", "my account was deleted", "account.md", "deleting-your-account"},
		{"accent folded", "cafe zurich opening hours", "lieux/café-zürich.md", ""},
		{"upper case", "CAFÉ ZÜRICH", "lieux/café-zürich.md", ""},
		{"decomposed accents", "Cafe\u0301 Zu\u0308rich", "lieux/café-zürich.md", ""},
		{"accent added", "crème brulée", "lieux/café-zürich.md", ""},
		{"kana and han", "ノート 作成", "ja/はじめに.md", ""},
		{"opening section", "can I take my notes with me", "guides/export.md", ""},
		{"html entity text", "folders shared", "guides/sharing.html", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hits := ix.Search(tt.query, 3)
			if len(hits) == 0 {
				t.Fatalf("Search(%q) = no hits, want %s#%s", tt.query, tt.wantPath, tt.anchor)
			}
			if got := hits[0]; got.Path != tt.wantPath || got.Anchor != tt.anchor {
				t.Errorf("Search(%q)[0] = %s#%s (%.2f), want %s#%s; all: %s", tt.query, got.Path, got.Anchor, got.Score, tt.wantPath, tt.anchor, describe(hits))
			}
			for i := 1; i < len(hits); i++ {
				if hits[i].Score > hits[i-1].Score {
					t.Errorf("hits not sorted: %s", describe(hits))
				}
			}
		})
	}
}

func describe(hits []Hit) string {
	var b strings.Builder
	for _, h := range hits {
		b.WriteString(h.Path + "#" + h.Anchor + " ")
	}
	return b.String()
}

func TestNoMatch(t *testing.T) {
	ix := openSite(t, Options{})
	tests := []struct{ name, query string }{
		{"empty", ""},
		{"blank", " \n\t "},
		{"stop words only", "How do I ... what is it, and can you tell me?"},
		{"punctuation", "?!?? ... --- ***"},
		{"unknown word", "xyzzy plugh"},
		{"hidden folder", "zanzibar"},
		{"script text", "refundPolicy track"},
		{"comment text", "comment nobody"},
		{"invalid utf-8", "\xff\xfe\xc3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if hits := ix.Search(tt.query, 5); hits != nil {
				t.Errorf("Search(%q) = %s, want none", tt.query, describe(hits))
			}
		})
	}
	if hits := ix.Search("password", 0); hits != nil {
		t.Errorf("Search(n=0) = %d hits, want nil", len(hits))
	}
}

func TestSkipsFiles(t *testing.T) {
	ix := openSite(t, Options{})
	if got, want := ix.Pages(), 9; got != want {
		t.Errorf("Pages() = %d, want %d (.json and dot-folders skipped)", got, want)
	}
	for _, q := range []string{"password", "draft secret launch", "body title"} {
		for _, h := range ix.Search(q, 50) {
			if strings.HasSuffix(h.Path, ".json") || strings.Contains(h.Path, ".drafts") {
				t.Errorf("Search(%q) found %s, which Open must skip", q, h.Path)
			}
		}
	}
}

// TestHTML checks that tags, scripts, styles, comments, nav and footer are
// stripped and entities decoded.
func TestHTML(t *testing.T) {
	ix := openSite(t, Options{})
	for _, q := range []string{"refund", "refunds terms privacy", "color display none"} {
		for _, h := range ix.Search(q, 50) {
			if h.Path == "guides/sharing.html" {
				t.Errorf("Search(%q) found sharing.html#%s: %q; its match is only in stripped markup", q, h.Anchor, h.Snippet)
			}
		}
	}
	hits := ix.Search("notes folders shared anyone", 1)
	if len(hits) == 0 || hits[0].Path != "guides/sharing.html" {
		t.Fatalf("Search for the html page's text = %s", describe(hits))
	}
	if got, want := hits[0].Snippet, "Notes & folders can be shared with anyone who has an Orbit account."; got != want {
		t.Errorf("snippet = %q, want %q", got, want)
	}
	if got, want := hits[0].Title, "Sharing notes"; got != want {
		t.Errorf("title = %q, want %q", got, want)
	}
	for q, want := range map[string]string{"press share teammate": "teammate’s email", "cursor": "other's cursor"} {
		if hits = ix.Search(q, 1); len(hits) == 0 || !strings.Contains(hits[0].Snippet, want) {
			t.Errorf("Search(%q) = %+v, want a snippet with %q (entity decoded)", q, hits, want)
		}
	}
	for _, q := range []string{"share", "public link", "invite"} {
		for _, h := range ix.Search(q, 50) {
			if strings.ContainsAny(h.Snippet, "<>") {
				t.Errorf("Search(%q) snippet %q keeps markup", q, h.Snippet)
			}
		}
	}
}

// TestSections checks pages are split at headings and each hit quotes its
// own section only.
func TestSections(t *testing.T) {
	ix := openSite(t, Options{})
	tests := []struct {
		query, heading, anchor, has, hasNot string
	}{
		{"two-factor authentication", "Two-factor authentication", "two-factor-authentication", "authenticator app", "Danger zone"},
		{"danger zone", "Deleting your account", "deleting-your-account", "Danger zone", "authenticator"},
		{"merge conflict", "Conflicts", "conflicts", "merge them", "internet"},                          // setext heading
		{"force sync", "Conflicts", "conflicts", "orbit sync --force", ""},                              // fenced code stays text
		{"letter A4", "Page size", "page-size", "A4 by default", "printable"},                           // level 3
		{"receipts payment", "Invoices", "invoices", "Receipts; Sent by email after each payment", "|"}, // table
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			hits := ix.Search(tt.query, 1)
			if len(hits) == 0 {
				t.Fatalf("Search(%q) = none", tt.query)
			}
			h := hits[0]
			if h.Heading != tt.heading || h.Anchor != tt.anchor {
				t.Errorf("Search(%q) heading = %q #%s, want %q #%s", tt.query, h.Heading, h.Anchor, tt.heading, tt.anchor)
			}
			if !strings.Contains(h.Snippet, tt.has) {
				t.Errorf("snippet %q lacks %q", h.Snippet, tt.has)
			}
			if tt.hasNot != "" && strings.Contains(h.Snippet, tt.hasNot) {
				t.Errorf("snippet %q has %q from another section", h.Snippet, tt.hasNot)
			}
		})
	}
	for _, h := range ix.Search("this line is code heading", 50) {
		if strings.Contains(h.Heading, "code") {
			t.Errorf("a # line inside a code fence became heading %q", h.Heading)
		}
	}
}

// TestSnippetBound checks the cap on a hit's snippet in long, multi-byte
// sections (the answer built from them: assistant's TestSearchAnswerBound).
func TestSnippetBound(t *testing.T) {
	dir := t.TempDir()
	long := strings.Repeat("Le café crème coûte 3 € à Zürich, très très cher — ", 200)
	unbroken := strings.Repeat("é", 3000)
	writeFile(t, dir, "a.md", "# Café\n\n"+long+"\n\n## Prix\n\n"+long)
	writeFile(t, dir, "b.md", "# Zürich "+strings.Repeat("ü", 300)+"\n\ncafé "+unbroken)
	writeFile(t, dir, "c.txt", "café "+long)
	ix, err := Open(dir, Options{BaseURL: "https://example.com/" + strings.Repeat("x", 150)})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"café", "café zürich prix", "cher"} {
		hits := ix.Search(q, 3)
		if len(hits) == 0 {
			t.Fatalf("Search(%q) found nothing", q)
		}
		for _, h := range hits {
			if n := utf8.RuneCountInString(h.Snippet); n > snippetRunes || !utf8.ValidString(h.Snippet) {
				t.Errorf("snippet of %d characters (valid %v), want at most %d", n, utf8.ValidString(h.Snippet), snippetRunes)
			}
		}
	}
}

func TestConcurrent(t *testing.T) {
	ix := openSite(t, Options{})
	queries := []string{"password reset", "money back", "export csv", "cafe", "ノート", "", "offline sync"}
	want := make([]string, len(queries))
	for i, q := range queries {
		want[i] = describe(ix.Search(q, 3))
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8*len(queries))
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i, q := range queries {
				if got := describe(ix.Search(q, 3)); got != want[i] {
					errs <- q
				}
				ix.Search(q, 5)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for q := range errs {
		t.Errorf("concurrent Answer(%q) differs from the serial one", q)
	}
}

// TestSearchAllocs keeps the hot path lean: the ranking allocates nothing;
// Search allocates its result, Answer its text. Under the race detector the
// pool sometimes drops the scratch, which costs a few more.
func TestSearchAllocs(t *testing.T) {
	ix := openSite(t, Options{})
	slack := 0.0
	if raceEnabled {
		slack = 6
	}
	q := "I forgot my password, how can I get back in?"
	ix.Search(q, 3) // warm the pool
	if got, want := testing.AllocsPerRun(200, func() { ix.Search(q, 3) }), 2+slack; got > want {
		t.Errorf("Search allocates %.1f times, want at most %.0f", got, want)
	}
	if got, want := testing.AllocsPerRun(200, func() { ix.Search("xyzzy", 3) }), slack; got > want {
		t.Errorf("a Search with no match allocates %.1f times, want at most %.0f", got, want)
	}
}

// TestAllAndText: All gives every section with its whole text, and a
// search hit carries its section's whole text beside the snippet.
func TestAllAndText(t *testing.T) {
	dir := t.TempDir()
	page := "# Guide\n\nIntro text here.\n\n## Export\n\nExport your data as CSV from the settings page. It takes a minute.\n"
	if err := os.WriteFile(filepath.Join(dir, "guide.md"), []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	ix, err := Open(dir, Options{BaseURL: "https://example.com/"})
	if err != nil {
		t.Fatal(err)
	}
	all := ix.All()
	if len(all) != 2 || all[1].Heading != "Export" || !strings.Contains(all[1].Text, "It takes a minute.") || all[1].URL != "https://example.com/guide#export" {
		t.Fatalf("All() = %+v, want the opening section and Export, with their text and links", all)
	}
	hits := ix.Search("export csv", 1)
	if len(hits) != 1 || hits[0].Text != all[1].Text {
		t.Fatalf("Search hit %+v, want the Export section with its whole text", hits)
	}
}
