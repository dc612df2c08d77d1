package httpapi

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/route"
)

// Everything a caller reads that could name a route goes through here, so
// that a chain's hide_route holds everywhere (issue 10): the response's
// model and X-Tollfree-Route (chat.go servedHeaders, modelName), error
// messages and Retry-After explanations (fail), and the error event
// of a broken stream (brokenMessage).

// hideRoutes returns msg with every route id, model and provider name of
// ch's routes replaced by "[route]", "[model]" or "[provider]", when ch
// hides its routes; otherwise msg as is. A name is replaced only where it
// stands as a word of its own, so that a provider called "up" leaves
// "support" alone.
func hideRoutes(ch *config.Chain, msg string) string {
	if !ch.HideRoute || msg == "" {
		return msg
	}
	type name struct{ s, with string }
	var names []name
	for _, rt := range ch.Routes {
		names = append(names, name{rt.ID, "[route]"}, name{rt.Model, "[model]"})
		if rt.Provider != nil {
			names = append(names, name{rt.Provider.Name, "[provider]"})
		}
	}
	// Longest first: a route id holds its model and provider names.
	slices.SortStableFunc(names, func(a, b name) int { return cmp.Compare(len(b.s), len(a.s)) })
	for _, n := range names {
		msg = replaceWord(msg, n.s, n.with)
	}
	return msg
}

// replaceWord replaces each occurrence of word in s that stands as a name
// of its own (no name character touches it, see joins), ASCII
// case-insensitively.
func replaceWord(s, word, with string) string {
	if word == "" {
		return s
	}
	var b strings.Builder
	lower, lw := asciiLower(s), asciiLower(word)
	i := 0
	for {
		j := strings.Index(lower[i:], lw)
		if j < 0 {
			break
		}
		j += i
		end := j + len(lw)
		if joins(s, j-1, -1) || joins(s, end, +1) {
			b.WriteString(s[i : j+1])
			i = j + 1
			continue
		}
		b.WriteString(s[i:j])
		b.WriteString(with)
		i = end
	}
	if i == 0 {
		return s
	}
	b.WriteString(s[i:])
	return b.String()
}

// joins reports whether the byte at s[i] continues a name on the side dir
// points to: a letter, digit, '-' or '_', or a '.', '/' or ':' with a
// letter or digit beyond it ("gpt-oss-120b:free", but not the full stop
// after "flash.").
func joins(s string, i, dir int) bool {
	if i < 0 || i >= len(s) {
		return false
	}
	switch c := s[i]; {
	case alnum(c) || c == '-' || c == '_':
		return true
	case c == '.' || c == '/' || c == ':':
		k := i + dir
		return k >= 0 && k < len(s) && alnum(s[k])
	}
	return false
}

func alnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// asciiLower lowers ASCII letters only, so that byte offsets stay those
// of s.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// exhaustedMessage is what the caller reads when no route of ch answered:
// each route and why it was skipped, or, when ch hides its routes, only
// when to come back.
func exhaustedMessage(ch *config.Chain, ex *route.ExhaustedError, now time.Time) string {
	if !ch.HideRoute {
		return ex.Error()
	}
	msg := "no route of chain " + quoteName(ch.Name) + " could answer"
	if ex.RetryAt.IsZero() {
		return msg + " now; try again later"
	}
	wait := ex.RetryAt.Sub(now).Round(time.Second)
	if ex.OverWaitCap > 0 {
		return msg + "; the soonest route comes back in " + wait.String() + ", past the chain's wait cap of " + ex.OverWaitCap.String()
	}
	return msg + " now; try again in " + max(wait, time.Second).String()
}

func quoteName(s string) string { return `"` + s + `"` }
