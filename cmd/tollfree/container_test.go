package main

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
)

// repoFile reads a file at the root of the repository.
func repoFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// dockerInstructions returns the Dockerfile's instructions, one per
// element, continuation lines joined and comments dropped.
func dockerInstructions(src string) []string {
	var out []string
	cur := ""
	for _, line := range strings.Split(src, "\n") {
		l := strings.TrimSpace(line)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		cur += " " + strings.TrimSuffix(l, "\\")
		if !strings.HasSuffix(l, "\\") {
			out = append(out, strings.TrimSpace(cur))
			cur = ""
		}
	}
	return out
}

// pinnedImage is a base image named in full (a registry host with a dot,
// which podman needs without a registries.conf alias) and pinned to a
// version tag.
var pinnedImage = regexp.MustCompile(`^[a-z0-9-]+(\.[a-z0-9-]+)+/[a-z0-9./-]+:[0-9][0-9A-Za-z.-]*(@sha256:[0-9a-f]{64})?$`)

// TestDockerfileLint checks the hadolint-style rules the image keeps
// (issue 17): pinned base images, never latest; COPY, not ADD; a numeric
// non-root USER before ENTRYPOINT and CMD; a HEALTHCHECK in exec form that
// needs no shell; exec-form ENTRYPOINT and CMD; no key or secret in ENV or
// ARG; the final stage FROM scratch; the static build flags the release
// script uses; port 8080 on 0.0.0.0.
func TestDockerfileLint(t *testing.T) {
	lintDockerfile(t, dockerInstructions(repoFile(t, "Dockerfile")))
}

func lintDockerfile(t *testing.T, ins []string) {
	t.Helper()
	var user, last string
	var health, scratch, static bool
	for _, in := range ins {
		op, arg, _ := strings.Cut(in, " ")
		switch strings.ToUpper(op) {
		case "FROM":
			img := strings.Fields(arg)[0]
			scratch = img == "scratch"
			if !scratch && !pinnedImage.MatchString(img) {
				t.Errorf("FROM %s: name the base image in full (docker.io/library/...) and pin it to a version tag (not latest, not bare)", img)
			}
			user = ""
		case "ADD":
			t.Errorf("%s: use COPY (ADD fetches URLs and unpacks archives)", in)
		case "USER":
			if id, _, _ := strings.Cut(arg, ":"); id == "0" || id == "root" || !regexp.MustCompile(`^[0-9]+$`).MatchString(id) {
				t.Errorf("USER %s: want a numeric non-root user (a scratch image has no /etc/passwd)", arg)
			}
			user = arg
		case "ENTRYPOINT", "CMD":
			if user == "" {
				t.Errorf("%s before any USER in its stage: the process would run as root", op)
			}
			if !strings.HasPrefix(arg, "[") {
				t.Errorf("%s %s: use the exec form [...]: there is no shell", op, arg)
			}
		case "HEALTHCHECK":
			health = true
			if _, cmd, ok := strings.Cut(arg, "CMD "); !ok || !strings.HasPrefix(strings.TrimSpace(cmd), `["/tollfree", "health"`) || !strings.Contains(cmd, "/healthz") {
				t.Errorf("HEALTHCHECK %s: want the binary's own health command on /healthz (liveness: a keyless gateway is alive, not ready), exec form", arg)
			}
		case "ENV", "ARG":
			if regexp.MustCompile(`(?i)key|token|secret|password`).MatchString(arg) {
				t.Errorf("%s %s: keys come from the environment at run time, never the image", op, arg)
			}
		case "RUN":
			if strings.Contains(arg, "go build") {
				static = strings.Contains(arg, "CGO_ENABLED=0") && strings.Contains(arg, "-trimpath") && strings.Contains(arg, "-X main.version=")
			}
		}
		last = in
	}
	if !scratch {
		t.Error("the final stage is not FROM scratch")
	}
	if !health {
		t.Error("no HEALTHCHECK")
	}
	if !static {
		t.Error("the go build is not static with the version stamped (CGO_ENABLED=0, -trimpath, -X main.version=)")
	}
	if last != `CMD ["serve", "-listen", "0.0.0.0:8080"]` {
		t.Errorf("last instruction %q, want the gateway on 0.0.0.0:8080", last)
	}
	for _, want := range []string{"EXPOSE 8080", `VOLUME ["/config", "/data"]`} {
		if !slicesContains(ins, want) {
			t.Errorf("no %s", want)
		}
	}
}

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// TestReleaseImageIsTheDockerfiles: deploy/Dockerfile.release, which
// CI builds from a release binary with podman (scripts/image.sh), packs
// the same final stage as the Dockerfile, instruction for instruction, and
// passes the same lint.
func TestReleaseImageIsTheDockerfiles(t *testing.T) {
	final := func(ins []string) []string {
		for i := len(ins) - 1; i >= 0; i-- {
			if strings.HasPrefix(ins[i], "FROM ") {
				return ins[i:]
			}
		}
		return nil
	}
	docker := final(dockerInstructions(repoFile(t, "Dockerfile")))
	release := dockerInstructions(repoFile(t, "deploy/Dockerfile.release"))
	if got := final(release); strings.Join(got, "\n") != strings.Join(docker, "\n") || len(docker) < 5 {
		t.Errorf("deploy/Dockerfile.release's final stage:\n%s\nwant the Dockerfile's:\n%s", strings.Join(got, "\n"), strings.Join(docker, "\n"))
	}
	if !strings.Contains(repoFile(t, "scripts/image.sh"), "--format docker") {
		t.Error("scripts/image.sh does not build with --format docker: the OCI format drops the HEALTHCHECK")
	}
}

// TestKeylessHealthcheck: the image's healthcheck, run against a gateway
// with no key set (no route enabled), reports it alive: /healthz answers
// 200 (degraded), so the container is healthy, while /readyz keeps a load
// balancer away with 503 (issue 34: a keyless container was reported
// unhealthy when the healthcheck probed /readyz).
func TestKeylessHealthcheck(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "tollfree.yaml")
	src := "listen: 127.0.0.1:0\ndata_dir: " + dir + "\ncall_log: \"off\"\n" +
		"providers:\n  groq: {api_key: \"${TOLLFREE_TEST_UNSET_KEY:-}\"}\n" +
		"chains:\n  answer: {routes: [groq/llama-3.3-70b-versatile]}\n"
	if err := os.WriteFile(cfg, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	out, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- serve(ctx, []string{"-config", cfg}, outW, io.Discard)
		outW.Close()
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	}()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("serve printed no address: %v", err)
	}
	go io.Copy(io.Discard, out)
	addr, _, _ := strings.Cut(strings.TrimPrefix(line, "tollfree listening on http://"), " ")
	health := healthcheckURL(t)
	if code := run([]string{"health", strings.Replace(health, "127.0.0.1:8080", addr, 1)}, io.Discard, io.Discard); code != 0 {
		t.Errorf("the image's healthcheck (%s) on a keyless gateway: exit %d, want 0", health, code)
	}
	if code := run([]string{"health", "http://" + addr + "/readyz"}, io.Discard, io.Discard); code != 1 {
		t.Errorf("/readyz on a gateway with no route enabled: exit %d, want 1 (not ready)", code)
	}
}

// healthcheckURL is the URL the Dockerfile's HEALTHCHECK probes.
func healthcheckURL(t *testing.T) string {
	for _, in := range dockerInstructions(repoFile(t, "Dockerfile")) {
		if strings.HasPrefix(in, "HEALTHCHECK ") {
			if m := regexp.MustCompile(`"(http://[^"]+)"`).FindStringSubmatch(in); m != nil {
				return m[1]
			}
		}
	}
	t.Fatal("no HEALTHCHECK with a URL in the Dockerfile")
	return ""
}

// TestDockerfileLintCatches: the lint fails on what it forbids (a test
// that cannot fail is a defect).
func TestDockerfileLintCatches(t *testing.T) {
	bad := []string{
		"FROM golang:latest AS build", "FROM golang:1.26.8 AS build", `HEALTHCHECK CMD ["/tollfree", "health", "http://127.0.0.1:8080/readyz"]`, `RUN go build -o /out/tollfree ./cmd/tollfree`,
		"FROM alpine", "ADD . /src", "ENV GROQ_API_KEY=x", "ENTRYPOINT /tollfree", "USER root", `CMD ["serve"]`,
	}
	ft := &testing.T{}
	done := make(chan struct{})
	go func() { defer close(done); lintDockerfile(ft, bad) }()
	<-done
	if !ft.Failed() {
		t.Error("lintDockerfile passed a Dockerfile breaking every rule")
	}
}

// TestComposeFile: compose.yaml's two gateways use the one Redis service,
// read the same config, sit behind one published port, and pin their
// images; the emulator is their upstream so it runs with no keys.
func TestComposeFile(t *testing.T) {
	var c struct {
		Services map[string]struct {
			Image       string            `yaml:"image"`
			Command     []string          `yaml:"command"`
			Environment map[string]string `yaml:"environment"`
			Volumes     []string          `yaml:"volumes"`
			Ports       []string          `yaml:"ports"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal([]byte(repoFile(t, "compose.yaml")), &c); err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	var published []string
	for name, s := range c.Services {
		if s.Image != "localhost/tollfree:local" && !pinnedImage.MatchString(s.Image) {
			t.Errorf("service %s: image %q is not named in full and pinned to a version", name, s.Image)
		}
		for _, p := range s.Ports {
			published = append(published, name+" "+p)
		}
	}
	if len(published) != 1 || published[0] != "proxy 8080:8080" {
		t.Errorf("published ports %v, want only the proxy's 8080", published)
	}
	for _, name := range []string{"tollfree-a", "tollfree-b"} {
		s, ok := c.Services[name]
		if !ok {
			t.Fatalf("no service %s", name)
		}
		if got := s.Environment["REDIS_URL"]; got != "redis://redis:6379/0" {
			t.Errorf("%s: REDIS_URL %q, want the redis service's", name, got)
		}
		if strings.Join(s.Command, " ") != "serve -listen 0.0.0.0:8080 /config/tollfree.yaml" {
			t.Errorf("%s: command %q", name, s.Command)
		}
		if !slicesContains(s.Volumes, "./deploy/compose/tollfree.yaml:/config/tollfree.yaml:ro") {
			t.Errorf("%s: volumes %v, want the shared config", name, s.Volumes)
		}
	}
	if _, ok := c.Services["redis"]; !ok {
		t.Error("no redis service")
	}
	if s := c.Services["emulator"]; strings.Join(s.Command, " ") != "emulator -listen 0.0.0.0:9000" {
		t.Errorf("emulator: command %q", s.Command)
	}
	conf := repoFile(t, "deploy/compose/nginx.conf")
	for _, want := range []string{"server tollfree-a:8080", "server tollfree-b:8080", "proxy_buffering off"} {
		if !strings.Contains(conf, want) {
			t.Errorf("nginx.conf lacks %q", want)
		}
	}
}

// TestComposeConfig: the config both instances read is valid, enables
// every route with the compose file's placeholder keys, uses Redis, and
// listens on 0.0.0.0.
func TestComposeConfig(t *testing.T) {
	env := map[string]string{"REDIS_URL": "redis://redis:6379/0", "GROQ_API_KEY": "emulator-takes-any-key",
		"GEMINI_API_KEY": "emulator-takes-any-key", "CEREBRAS_API_KEY": "emulator-takes-any-key"}
	for k, v := range env {
		t.Setenv(k, v)
	}
	plan, err := loadServable(filepath.Join("..", "..", "deploy", "compose", "tollfree.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if plan.Listen != "0.0.0.0:8080" || plan.Redis != env["REDIS_URL"] {
		t.Errorf("listen %q redis %q", plan.Listen, plan.Redis)
	}
	for _, r := range plan.Readiness() {
		if r.Enabled != r.Total {
			t.Errorf("%s", r)
		}
	}
}

// TestReleaseScript builds linux/amd64 with scripts/release.sh and checks
// the binary is static, trimmed and says the stamped version. It compiles
// the whole program, so -short skips it.
func TestReleaseScript(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the program")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	dist := t.TempDir()
	cmd := exec.Command("bash", filepath.Join("..", "..", "scripts", "release.sh"), "v0.0.0-shiptest")
	cmd.Env = append(os.Environ(), "TARGETS=linux/amd64", "DIST="+dist)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("release.sh: %v\n%s", err, out)
	}
	bin := filepath.Join(dist, "tollfree_0.0.0-shiptest_linux_amd64", "tollfree")
	if _, err := os.Stat(filepath.Join(dist, "tollfree_0.0.0-shiptest_linux_amd64.tar.gz")); err != nil {
		t.Errorf("no archive: %v", err)
	}
	info, err := exec.Command("go", "version", "-m", bin).Output()
	if err != nil {
		t.Fatalf("go version -m: %v", err)
	}
	for _, want := range []string{"CGO_ENABLED=0", "-trimpath=true", "GOOS=linux", "GOARCH=amd64"} {
		if !strings.Contains(string(info), want) {
			t.Errorf("go version -m lacks %s:\n%s", want, info)
		}
	}
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		return
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil || !strings.HasPrefix(string(out), "tollfree v0.0.0-shiptest ") {
		t.Errorf("tollfree version: %q %v, want the stamped version", out, err)
	}
}

// TestGoreleaserMatchesScript: .goreleaser.yaml is v2 and builds the same
// six targets with the script's flags.
func TestGoreleaserMatchesScript(t *testing.T) {
	var g struct {
		Version int `yaml:"version"`
		Builds  []struct {
			Main    string   `yaml:"main"`
			Env     []string `yaml:"env"`
			Flags   []string `yaml:"flags"`
			Ldflags []string `yaml:"ldflags"`
			Goos    []string `yaml:"goos"`
			Goarch  []string `yaml:"goarch"`
		} `yaml:"builds"`
	}
	if err := yaml.Unmarshal([]byte(repoFile(t, ".goreleaser.yaml")), &g); err != nil {
		t.Fatal(err)
	}
	if g.Version != 2 || len(g.Builds) != 1 {
		t.Fatalf("version %d, %d builds; want version: 2 and one build", g.Version, len(g.Builds))
	}
	b := g.Builds[0]
	got := strings.Join([]string{b.Main, strings.Join(b.Env, " "), strings.Join(b.Flags, " "), strings.Join(b.Goos, ","), strings.Join(b.Goarch, ",")}, " | ")
	if want := "./cmd/tollfree | CGO_ENABLED=0 | -trimpath | linux,darwin,windows | amd64,arm64"; got != want {
		t.Errorf("goreleaser build:\n got %s\nwant %s", got, want)
	}
	script := repoFile(t, "scripts/release.sh")
	if len(b.Ldflags) != 1 || !strings.Contains(b.Ldflags[0], "-s -w -X main.version=") || !strings.Contains(script, `ldflags="-s -w -X main.version=${version}"`) {
		t.Errorf("ldflags differ: goreleaser %v; the script's line is not the same flags", b.Ldflags)
	}
	for _, target := range []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64", "windows/amd64", "windows/arm64"} {
		if !strings.Contains(script, target) {
			t.Errorf("release.sh does not build %s by default", target)
		}
	}
}

// TestInstallDocsMatchGoMod: the README's Install section and the
// Dockerfile's build stage name the Go version go.mod states, so the
// documented install works on a fresh machine.
func TestInstallDocsMatchGoMod(t *testing.T) {
	m := regexp.MustCompile(`(?m)^go ([0-9.]+)$`).FindStringSubmatch(repoFile(t, "go.mod"))
	if m == nil {
		t.Fatal("go.mod has no go line")
	}
	readme := repoFile(t, "README.md")
	for _, want := range []string{"## Install", "Go " + m[1] + " or later", "go install ./cmd/tollfree", "0.0.0.0:8080", "MB"} {
		if !strings.Contains(readme, want) {
			t.Errorf("README lacks %q", want)
		}
	}
	if !strings.Contains(repoFile(t, "Dockerfile"), "FROM docker.io/library/golang:"+m[1]+" AS build") {
		t.Errorf("the Dockerfile's build stage is not golang:%s", m[1])
	}
}
