package failure

import (
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"
)

// maxMessage caps Verdict.Message, maxLog Verdict.LogText, maxQuoted the
// quoted spans LogText keeps.
const (
	maxMessage = 300
	maxLog     = 160
	maxQuoted  = 40
)

// The redaction rules, applied in this order. Distinctive key prefixes match
// anywhere, even glued to other text; short generic ones only at a word
// start, so "task-based" keeps its "sk-".
var redactions = sync.OnceValue(func() []redaction {
	return []redaction{
		// Provider keys with a distinctive prefix: Groq gsk_, Google AIza,
		// NVIDIA nvapi-, GitHub tokens, Hugging Face, Replicate.
		{regexp.MustCompile(`(?:gsk_|AIza|nvapi-|github_pat_|gh[pousr]_|hf_|r8_)[A-Za-z0-9_\-]{4,}`), "[key]"},
		// OpenAI-style and other short prefixes (sk-or-v1-, sk_, pk_, csk-,
		// xai-), at a word start.
		{regexp.MustCompile(`\b(?:sk-|sk_|pk_|rk_|csk-|xai-)[A-Za-z0-9_\-]{4,}`), "[key]"},
		// Authorization headers echoed back.
		{regexp.MustCompile(`(?i)\b(bearer)\s+[^\s"'<>,;]+`), "$1 [redacted]"},
		// Keys in query strings and key=value text.
		{regexp.MustCompile(`(?i)\b(api[_-]?key|key|token|access_token|secret|password)=[^&\s"'<>]+`), "$1=[redacted]"},
		// Email addresses.
		{regexp.MustCompile(`[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}`), "[email]"},
	}
})

// redaction is one rule of Redact: what it finds, what it writes instead.
type redaction struct {
	re   *regexp.Regexp
	repl string
}

// accountID finds organization, user and project ids (Groq org_...,
// OpenRouter user_..., OpenAI proj_...); Redact removes those holding a digit,
// so user_message stays.
var accountID = lazyRegexp(`\b(?:org|user|proj|project|acct|account|sess)_[A-Za-z0-9]{6,}`)

// opaque finds long letter-and-digit runs: keys without a known prefix
// (Mistral's 32 characters, NVIDIA account ids). Runs of letters only
// (GenerateRequestsPerDayPerProjectPerModel) or digits only (token counts,
// epoch times) are kept; '-' splits runs so model names survive.
var opaque = lazyRegexp(`[A-Za-z0-9]{24,}`)

// Redact removes from s what must never be shown or logged: API keys (by
// prefix, and any long letter-and-digit run), bearer tokens, key=value
// secrets, org_/user_ ids and email addresses. It also folds runs of white
// space into one space. It does not shorten s.
func Redact(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	for _, r := range redactions() {
		s = r.re.ReplaceAllString(s, r.repl)
	}
	s = accountID().ReplaceAllStringFunc(s, func(id string) string {
		if strings.ContainsAny(id, "0123456789") {
			return "[id]"
		}
		return id
	})
	return opaque().ReplaceAllStringFunc(s, func(run string) string {
		if strings.ContainsAny(run, "0123456789") && strings.IndexFunc(run, isLetter) >= 0 {
			return "[redacted]"
		}
		return run
	})
}

func isLetter(r rune) bool { return r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' }

// clip cuts s to at most n bytes on a rune boundary, ending it with "…" when
// it was cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const ellipsis = "…"
	cut := n - len(ellipsis)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strings.TrimRight(s[:cut], " ") + ellipsis
}

// elideQuoted replaces the inside of every quoted or backticked span longer
// than maxQuoted runes with "…": a provider may echo part of the prompt
// ("Unknown name \"...\""). An unclosed " or ` span that long is elided too,
// since clipping may have cut its closing quote; an unclosed ' is kept, as it
// is most likely an apostrophe.
func elideQuoted(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		q := s[i]
		if q != '"' && q != '`' && q != '\'' {
			b.WriteByte(q)
			i++
			continue
		}
		end := strings.IndexByte(s[i+1:], q)
		var inner string
		if end < 0 {
			inner = s[i+1:]
		} else {
			inner = s[i+1 : i+1+end]
		}
		long := utf8.RuneCountInString(inner) > maxQuoted
		switch {
		case end < 0 && long && q != '\'':
			b.WriteByte(q)
			b.WriteString("…")
			return b.String()
		case end < 0:
			b.WriteByte(q)
			i++
		case long:
			b.WriteByte(q)
			b.WriteString("…")
			b.WriteByte(q)
			i += end + 2
		default:
			b.WriteString(s[i : i+end+2])
			i += end + 2
		}
	}
	return b.String()
}
