package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// version is stamped at build time by the release script and
// .goreleaser.yaml: go build -ldflags "-X main.version=v1.2.3". Empty in
// a plain go build or go install, where the build info says the version
// instead (versionOf). It is the one package-level variable here, since -X
// can set nothing else, and it is only read.
var version string

// printVersion prints the version, the Go version and the platform.
func printVersion(w io.Writer) {
	bi, _ := debug.ReadBuildInfo()
	fmt.Fprintf(w, "tollfree %s (%s %s/%s)\n", versionOf(version, bi), runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// versionOf is the stamped version when there is one; else the module
// version go install recorded (v1.2.3 when installed from a tag), else
// "devel"; followed by the first 12 digits of the commit it was built from
// and "-dirty" when the worktree had changes. It is never empty.
func versionOf(stamped string, bi *debug.BuildInfo) string {
	if stamped != "" {
		return stamped
	}
	if bi == nil {
		return "devel"
	}
	v := bi.Main.Version
	if v == "" || v == "(devel)" {
		v = "devel"
	}
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev == "" {
		return v
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	v += " " + rev
	if modified == "true" {
		v += "-dirty"
	}
	return v
}
