package failure

import (
	"regexp"
	"testing"
)

// TestRulesCompile compiles every regular expression of the package, which
// are compiled on first use (lazyRegexp, sync.OnceValue): a pattern that
// does not compile fails here, not in a late call.
func TestRulesCompile(t *testing.T) {
	rules := map[string]func() *regexp.Regexp{
		"refusalRe": refusalRe, "goneRe": goneRe, "authRe": authRe,
		"tooLargeRe": tooLargeRe, "thinkingRe": thinkingRe, "unfitRe": unfitRe,
		"unsupportedRe": unsupportedRe, "reasoningRe": reasoningRe,
		"dayRe": dayRe, "minuteRe": minuteRe,
		"waitDuration": waitDuration, "waitSeconds": waitSeconds,
		"notSupportedName": notSupportedName, "accountID": accountID, "opaque": opaque,
	}
	for name, re := range rules {
		t.Run(name, func(t *testing.T) {
			if got := re(); got == nil || got != re() {
				t.Errorf("%s() = %p, then %p; want one compiled regexp", name, got, re())
			}
		})
	}
	if n := len(paramRes()); n == 0 {
		t.Errorf("paramRes() has no rules")
	}
	if n := len(redactions()); n == 0 {
		t.Errorf("redactions() has no rules")
	}
}
