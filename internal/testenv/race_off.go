//go:build !race

package testenv

// Race reports whether the race detector is on; Build builds with it too,
// so the binary reuses the packages the test already compiled.
const Race = false
