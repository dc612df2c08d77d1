package failure

import (
	"regexp"
	"testing"
)

// TestRulesCompile compiles every message rule and wait sentence, which
// are compiled on first use (lazyRegexp): a pattern that does not compile
// fails here, not in a late call.
func TestRulesCompile(t *testing.T) {
	rules := map[string]func() *regexp.Regexp{
		"refusalRe": refusalRe, "goneRe": goneRe, "authRe": authRe,
		"tooLargeRe": tooLargeRe, "thinkingRe": thinkingRe, "unfitRe": unfitRe,
		"unsupportedRe": unsupportedRe, "reasoningRe": reasoningRe,
		"dayRe": dayRe, "minuteRe": minuteRe,
		"waitDuration": waitDuration, "waitSeconds": waitSeconds,
	}
	for name, re := range rules {
		t.Run(name, func(t *testing.T) {
			if got := re(); got == nil || got != re() {
				t.Errorf("%s() = %p, then %p; want one compiled regexp", name, got, re())
			}
		})
	}
}
