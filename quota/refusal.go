package quota

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/tollfree/tollfree/config"
)

// LearnRefusal learns the limit a 429's body names, as Observe learns the
// limits headers name (issue 31: a probe at the edge that gets a 429
// teaches the limit). Gemini names it in its QuotaFailure detail: the
// quotaId says the window ("GenerateRequestsPerDayPerProjectPerModel-FreeTier"
// is the day's requests), the quotaValue the limit (docs/PROVIDERS.md,
// Gemini's errors). Bodies of other providers, and one that does not
// parse, teach nothing: their headers do (Observe).
func (b *Book) LearnRefusal(r *config.Route, body []byte) {
	if r.Provider == nil || r.Provider.Flavor != "gemini" || len(body) == 0 {
		return
	}
	var e struct {
		Error struct {
			Details []struct {
				Violations []struct {
					QuotaID    string `json:"quotaId"`
					QuotaValue string `json:"quotaValue"`
				} `json:"violations"`
			} `json:"details"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil {
		return
	}
	now := b.clock.Now()
	for _, d := range e.Error.Details {
		for _, v := range d.Violations {
			k, ok := geminiQuotaKind(v.QuotaID)
			n, err := strconv.ParseInt(v.QuotaValue, 10, 64)
			if !ok || err != nil || n <= 0 {
				continue
			}
			b.mu.Lock()
			b.noteLearnedLocked(learnKey{r.ID, k}, n, now)
			b.mu.Unlock()
		}
	}
}

// geminiQuotaKind reads the window a Gemini quotaId names.
func geminiQuotaKind(id string) (kind, bool) {
	tokens := strings.Contains(id, "Tokens")
	switch {
	case strings.Contains(id, "PerMinute"):
		if tokens {
			return tpm, true
		}
		return rpm, true
	case strings.Contains(id, "PerDay"):
		if tokens {
			return tpd, true
		}
		return rpd, true
	}
	return 0, false
}
