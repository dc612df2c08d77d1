package status

import (
	"time"

	"github.com/tollfree/tollfree/config"
	"github.com/tollfree/tollfree/quota"
)

// sayer is a Budget that also tells the limits the providers' headers
// report unlike the plan's (quota.Book.Said, issue 35).
type sayer interface {
	Said(p *config.Plan, now time.Time) []quota.LimitSaid
}

// limitsSaid is Snapshot.LimitsSaid: one line per limit a provider reports
// unlike the configuration ("groq/llama-3.3-70b-versatile: preset rpd
// 1000, provider says 500 since 2026-12-03"); nil when the budget cannot
// tell.
func limitsSaid(b Budget, p *config.Plan, now time.Time) []string {
	s, ok := b.(sayer)
	if !ok {
		return nil
	}
	var out []string
	for _, l := range s.Said(p, now) {
		out = append(out, l.String())
	}
	return out
}
