package route

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if a goroutine outlives them: every
// attempt, drain and idle timer must be wound down.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
