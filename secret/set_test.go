package secret

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"log/slog"
	"net/url"
	"strings"
	"testing"
)

const (
	weird = "tfk.Zq9-weird+KEY/with=signs"
	plain = "correcthorsebatterystaple"
)

func TestScrub(t *testing.T) {
	set := New(weird, plain, "ab12c", "x9")
	jsonOf := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	var page bytes.Buffer
	template.Must(template.New("").Parse(`<code>{{.}}</code>`)).Execute(&page, "key "+weird)
	cases := []struct{ name, in, want string }{
		{"whole", "Invalid API Key: " + weird, "Invalid API Key: [secret]"},
		{"glued", "key=" + weird + "&x=1", "key=[secret]&x=1"},
		{"twice", plain + " and " + plain, "[secret] and [secret]"},
		{"json escaped", jsonOf(`bad "` + weird + `"`), `"bad \"[secret]\""`},
		{"json slash escaped", `"key: tfk.Zq9-weird+KEY\/with=signs"`, `"key: [secret]"`},
		{"url escaped", "?key=" + url.QueryEscape(weird), "?key=[secret]"},
		{"html template", page.String(), "<code>key [secret]</code>"},
		{"clipped echo", "provided: " + weird[:14] + "… more", "provided: [secret] more"},
		{"tail fragment", "(" + plain[10:] + ")", "([secret])"},
		{"short fragment", "provided: " + weird[:7] + ".", "provided: " + weird[:7] + "."},
		{"openai mask", "Incorrect API key provided: corr*****************aple. You can", "Incorrect API key provided: [secret]. You can"},
		{"litellm mask", "Received API Key = tfk...igns, Key Hash", "Received API Key = [secret], Key Hash"},
		{"xai mask", "provided: co***le.", "provided: [secret]."},
		{"mask of nothing", "wait... then ** bold **", "wait... then ** bold **"},
		{"short as a word", "token ab12c refused", "token [secret] refused"},
		{"short inside a word", "xab12cx", "xab12cx"},
		{"too short", "x9 stays", "x9 stays"},
		{"unrelated", "rate limit reached", "rate limit reached"},
		{"near miss", "tfk.Zq9", "tfk.Zq9"},
		{"empty", "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := set.Scrub(tc.in); got != tc.want {
				t.Errorf("Scrub(%q) = %q, want %q", tc.in, got, tc.want)
			}
			if got := string(set.ScrubBytes([]byte(tc.in))); got != tc.want {
				t.Errorf("ScrubBytes(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// TestScrubOverlapping: secrets sharing text are scrubbed as one run,
// leaving no piece of either.
func TestScrubOverlapping(t *testing.T) {
	a, b := "abcdefgh12345678", "12345678ijklmnop"
	set := New(a, b, "abcdefgh")
	cases := []struct{ in, want string }{
		{"x abcdefgh12345678ijklmnop y", "x [secret] y"},
		{"x abcdefgh y", "x [secret] y"},
		{a + b, "[secret]"},
		{b + a, "[secret]"},
	}
	for _, tc := range cases {
		if got := set.Scrub(tc.in); got != tc.want {
			t.Errorf("Scrub(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestEmptySet(t *testing.T) {
	for _, set := range []*Set{nil, New(), New("", "")} {
		in := "nothing " + weird
		if got := set.Scrub(in); got != in {
			t.Errorf("%v: Scrub changed %q to %q", set, in, got)
		}
		b := []byte(in)
		if got := set.ScrubBytes(b); &got[0] != &b[0] {
			t.Errorf("%v: ScrubBytes copied", set)
		}
		err := errors.New(in)
		if got := set.Err(err); got != err {
			t.Errorf("%v: Err wrapped", set)
		}
		if set.Len() != 0 {
			t.Errorf("%v: Len = %d", set, set.Len())
		}
	}
	if got := New("a", "bb", "", "cccc").Skipped(); got != 2 {
		t.Errorf("Skipped = %d, want 2", got)
	}
}

// TestNoAllocWhenClean: text without a secret costs no allocation.
func TestNoAllocWhenClean(t *testing.T) {
	set := New(weird, plain)
	text := strings.Repeat("the upstream said no; ", 20)
	if n := testing.AllocsPerRun(100, func() { _ = set.Scrub(text) }); n != 0 {
		t.Errorf("Scrub of clean text: %v allocations", n)
	}
}

func TestErr(t *testing.T) {
	set := New(weird)
	base := io.ErrUnexpectedEOF
	err := set.Err(fmt.Errorf("dial with %s: %w", weird, base))
	if strings.Contains(err.Error(), weird) || !strings.Contains(err.Error(), Mask) {
		t.Errorf("Err text %q", err)
	}
	if !errors.Is(err, base) {
		t.Error("Err broke the chain")
	}
}

func TestStringHidesValues(t *testing.T) {
	set := New(weird, plain)
	for _, s := range []string{set.String(), fmt.Sprintf("%v %+v %#v %s", set, set, set, set)} {
		if strings.Contains(s, "tfk") || strings.Contains(s, "horse") {
			t.Errorf("printed %q", s)
		}
	}
}

func TestHandler(t *testing.T) {
	var buf bytes.Buffer
	set := New(weird)
	log := slog.New(NewHandler(slog.NewJSONHandler(&buf, nil), set)).With("key", weird)
	log.WithGroup("g").Error("refused "+weird, "reason", "echo "+weird,
		"err", fmt.Errorf("wrapped %s", weird), "n", 3, slog.Group("sub", "v", weird), "list", []string{weird})
	out := buf.String()
	if strings.Contains(out, "tfk.Zq9") {
		t.Errorf("secret logged: %s", out)
	}
	if !strings.Contains(out, `"n":3`) {
		t.Errorf("plain attribute lost: %s", out)
	}
	if got := NewHandler(slog.DiscardHandler, nil); got != slog.DiscardHandler {
		t.Error("an empty set should not wrap the handler")
	}
}

func TestWriter(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf, nil)
	fmt.Fprintf(w, "before %s\n", weird)
	w.Use(New(weird))
	n, err := fmt.Fprintf(w, "after %s\n", weird)
	if err != nil || n != len("after \n")+len(weird) {
		t.Errorf("Write = %d, %v", n, err)
	}
	if got, want := buf.String(), "before "+weird+"\nafter [secret]\n"; got != want {
		t.Errorf("wrote %q, want %q", got, want)
	}
}

// FuzzScrub: whatever surrounds a long secret, it does not survive; Scrub
// never panics, and an empty set changes nothing.
func FuzzScrub(f *testing.F) {
	f.Add("Invalid API Key: ", ".", weird)
	f.Add("**", "...", "abcd")
	f.Add("\"", "\\", "sk-…xy")
	f.Fuzz(func(t *testing.T, before, after, value string) {
		text := before + value + after
		got := New(value).Scrub(text)
		if len(value) >= AnywhereLen && strings.Contains(got, value) {
			t.Errorf("Scrub(%q) = %q still holds the value", text, got)
		}
		if got := New().Scrub(text); got != text {
			t.Errorf("an empty set changed %q to %q", text, got)
		}
	})
}
