#!/usr/bin/env bash
# image.sh [VERSION] builds the tollfree image from a release binary with
# podman, pulling nothing (the image is FROM scratch), and checks what
# `podman image inspect` says of it: user 65532, the entrypoint, the
# healthcheck (kept by --format docker) and its size. CI runs it.
#
#   scripts/image.sh v0.1.0          # tags tollfree:v0.1.0
#   TAG=localhost/tf:test scripts/image.sh
set -euo pipefail
cd "$(dirname "$0")/.."
version="${1:-devel}"
tag="${TAG:-tollfree:$version}"
max_mb="${MAX_MB:-25}"

ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT
mkdir -p "$ctx/out/config" "$ctx/out/data"
CGO_ENABLED=0 GOOS=linux GOARCH="$(go env GOARCH)" \
	go build -trimpath -ldflags "-s -w -X main.version=${version}" -o "$ctx/out/tollfree" ./cmd/tollfree
ln -s /config/tollfree.yaml "$ctx/out/data/tollfree.yaml"
cp /etc/ssl/certs/ca-certificates.crt "$ctx/ca-certificates.crt"

podman build --quiet --format docker --pull=never -f deploy/Dockerfile.release -t "$tag" "$ctx" >/dev/null

user=$(podman image inspect "$tag" --format '{{.Config.User}}')
entry=$(podman image inspect "$tag" --format '{{json .Config.Entrypoint}} {{json .Config.Cmd}}')
health=$(podman image inspect "$tag" --format '{{json .Config.Healthcheck.Test}}')
size=$(podman image inspect "$tag" --format '{{.Size}}')
echo "image $tag: user $user, entrypoint $entry, healthcheck $health, $((size / 1000000)) MB"

fail=0
[[ "$user" == "65532:65532" ]] || { echo "want user 65532:65532" >&2; fail=1; }
[[ "$entry" == '["/tollfree"] ["serve","-listen","0.0.0.0:8080"]' ]] || { echo 'want entrypoint ["/tollfree"] and cmd serve -listen 0.0.0.0:8080' >&2; fail=1; }
[[ "$health" == '["CMD","/tollfree","health","http://127.0.0.1:8080/healthz"]' ]] || { echo "want the healthcheck on /healthz (built with --format docker?)" >&2; fail=1; }
(( size <= max_mb * 1000000 )) || { echo "want at most $max_mb MB" >&2; fail=1; }
exit "$fail"
