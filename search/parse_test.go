package search

import (
	"strings"
	"testing"
)

// flat renders an outline as "title || heading#anchor: unit | unit || ...".
func flat(o *outline) string {
	var b strings.Builder
	b.WriteString(o.title + "/" + o.h1)
	for _, s := range o.secs {
		b.WriteString(" || " + s.heading + "#" + s.anchor + "<" + strings.Join(s.trail, ">") + ">: " + strings.Join(s.units, " | "))
	}
	return b.String()
}

func TestParseMarkdown(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"title heading and sections",
			"# Guide\n\nIntro text.\n\n## Setup\n\nStep one.\n\n### Keys\n\nA key.\n\n## Setup\n\nAgain.",
			"/Guide || #<>: Intro text. || Setup#setup<>: Step one. || Keys#keys<Setup>: A key. || Setup#setup-1<>: Again."},
		{"front matter title",
			"---\ntitle: \"Plans\"\nlayout: x\n---\n# Pricing\n\nText.",
			"Plans/Pricing || #<>: Text."},
		{"unclosed front matter is text",
			"---\ntitle: x\n\nBody.",
			"/ || #<>: title: x | Body."},
		{"inline markup",
			"Click **Save** and _then_ `run`, see [the docs](https://x.y/z) or ![a logo](l.png), <b>bold</b> &amp; snake_case ~~old~~ \\*star\\*.",
			"/ || #<>: Click Save and then run, see the docs or a logo, bold & snake_case old *star*."},
		{"autolink and reference link",
			"Mail <mailto:a@b.c> or <https://x.y>. See [guide][g].\n\n[g]: https://x.y/guide",
			"/ || #<>: Mail a@b.c or https://x.y. See guide."},
		{"lists quotes rules",
			"- one\n- two\n  continued\n1. three\n\n> quoted\n> more\n\n---\n\n* [ ] todo",
			"/ || #<>: one | two continued | three | quoted more | todo"},
		{"setext headings",
			"Title\n=====\n\nText.\n\nPart\n----\n\nMore.\n\nTwo\nlines\n---\n\nEnd.",
			"/Title || #<>: Text. || Part#part<>: More. | Two lines | End."},
		{"code fence keeps lines",
			"```sh\n# not a heading\nrun --it\n```\n## Real",
			"/ || #<>: # not a heading | run --it || Real#real<>: "},
		{"table",
			"| a | b |\n|---|:-:|\n| 1 | **2** |",
			"/ || #<>: a; b | 1; 2"},
		{"headings with markup and closing hashes",
			"## The `tollfree` *CLI* ##\n\nx",
			"/ || The tollfree CLI#the-tollfree-cli<>: x"},
		{"crlf", "# T\r\n\r\nA.\r\nB.", "/T || #<>: A. B."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := flat(parseMarkdown(tt.in)); got != tt.want {
				t.Errorf("parseMarkdown(%q)\n got %s\nwant %s", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseHTML(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"title, headings, ids",
			`<html><head><title>My &amp; Page</title></head><body><h1>Top</h1><p>Intro</p><h2 class="x" id='sec-1'>One</h2><p>A<br>B</p><h3>Sub <em>part</em></h3><p>C</p></body></html>`,
			"My & Page/Top || #<>: Intro || One#sec-1<>: A | B || Sub part#sub-part<One>: C"},
		{"skipped elements",
			`<nav>menu</nav><p>keep</p><script>if (a<b) x()</script><style>p{}</style><!-- note --><footer>foot</footer><SCRIPT type="t">y</SCRIPT><p>end</p>`,
			"/ || #<>: keep | end"},
		// A stray '<' is text, as a browser shows it (the hand-written
		// scanner dropped it); a tag cut off by the end is dropped.
		{"broken markup", `a < b and <p unclosed`, "/ || #<>: a < b and"},
		{"quoted > in attribute", `<a title="x>y" href=/z>link</a> text`, "/ || #<>: link text"},
		{"table cells", `<table><tr><td>a</td><td>b</td></tr><tr><td>c</td></tr></table>`, "/ || #<>: a b | c"},
		{"data-id is not id", `<h2 data-id="no" id=yes>H</h2><p>x</p>`, "/ || H#yes<>: x"},
		{"unclosed heading", `<h2>Tail`, "/ || Tail#tail<>: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := flat(parseHTML(tt.in)); got != tt.want {
				t.Errorf("parseHTML(%q)\n got %s\nwant %s", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseText(t *testing.T) {
	if got, want := flat(parseText("Shipping\n\nWe ship daily. Orders before 2 p.m. leave today.\n\nReturns are free.")), "Shipping/ || #<>: We ship daily. | Orders before 2 p.m. leave today. | Returns are free."; got != want {
		t.Errorf("parseText\n got %s\nwant %s", got, want)
	}
	if got, want := flat(parseText("Not a title.\n\nBody")), "/ || #<>: Not a title. | Body"; got != want {
		t.Errorf("parseText\n got %s\nwant %s", got, want)
	}
}

func TestSentences(t *testing.T) {
	tests := []struct{ in, want string }{
		{"One. Two! Three? Four", "One.|Two!|Three?|Four"},
		{"Use e.g. this. Then J. Smith came. Ok.", "Use e.g. this.|Then J. Smith came.|Ok."},
		{"Version 1.5 is out. it stays", "Version 1.5 is out. it stays"},
		{"日本語です。次の文。", "日本語です。|次の文。"},
		{strings.Repeat("word ", 100), strings.TrimSpace(strings.Repeat("word ", 81)) + "|" + strings.TrimSpace(strings.Repeat("word ", 19))},
	}
	for _, tt := range tests {
		if got := strings.Join(sentences(tt.in), "|"); got != tt.want {
			t.Errorf("sentences(%q)\n got %q\nwant %q", tt.in, got, tt.want)
		}
	}
}

func TestTitleAndURL(t *testing.T) {
	for rel, want := range map[string]string{
		"getting-started.md": "Getting started", "index.md": "Home", "guides/README.md": "Guides",
		"a/b_c.txt": "B c", "ünter.md": "Ünter",
	} {
		if got := titleFromPath(rel); got != want {
			t.Errorf("titleFromPath(%q) = %q, want %q", rel, got, want)
		}
	}
	for rel, want := range map[string]string{
		"a.md": "https://x.y/docs/a", "guides/index.html": "https://x.y/docs/guides/", "a b/ç.md": "https://x.y/docs/a%20b/%C3%A7",
	} {
		if got := pageURL("https://x.y/docs/", rel); got != want {
			t.Errorf("pageURL(%q) = %q, want %q", rel, got, want)
		}
	}
}
