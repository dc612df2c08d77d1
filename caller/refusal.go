package caller

import (
	"strconv"
	"time"

	"github.com/tollfree/tollfree/quota"
)

// What a caller refused by a limit is told: the words of the refusal and
// the wait, the same for the HTTP API's 429 and a Go program's error.

// ResetIn is the wait until t as OpenAI and Groq write it: a Go duration
// in whole seconds, at least 1s.
func ResetIn(now, t time.Time) string {
	return max(t.Sub(now).Round(time.Second), time.Second).String()
}

// LimitMessage says which limit refused and when to come back, in words a
// visitor can read. It names no caller, key value or address.
func LimitMessage(le *quota.LimitError, now time.Time) string {
	who := map[string]string{
		quota.ScopeCaller: "you have",
		quota.ScopeChain:  "you have, on this model,",
		quota.ScopeKey:    "this key's users have together",
		quota.ScopeSite:   "this site has",
	}[le.Scope]
	if who == "" {
		who = "you have"
	}
	n := strconv.FormatInt(le.Limit, 10)
	var what string
	switch le.Kind {
	case quota.KindHour:
		what = who + " made " + n + " requests in the last hour, the most allowed"
	case quota.KindDay:
		what = who + " made " + n + " requests in the last 24 hours, the most allowed"
	case quota.KindTokens:
		what = who + " used the " + n + " tokens allowed in 24 hours, or this request would pass them"
	case quota.KindConcurrent:
		what = who + " " + n + " requests in progress, the most allowed at once"
	case quota.KindBurst:
		what = who + " made more than " + n + " requests within " + le.Window.String() + " and must wait"
	default:
		what = "a limit (" + le.Name() + ") was reached"
	}
	return "rate limit reached: " + what + " (" + le.Name() + "); try again in " + ResetIn(now, le.RetryAt)
}
