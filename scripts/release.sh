#!/usr/bin/env bash
# release.sh VERSION builds tollfree's release binaries into dist/ with only
# Go (the version go.mod states), for when goreleaser is not at hand; the
# flags are .goreleaser.yaml's and the Dockerfile's:
#   static (CGO_ENABLED=0), -trimpath, -ldflags "-s -w -X main.version=VERSION"
# for linux, darwin and windows on amd64 and arm64, one archive each
# (tar.gz; zip for windows when zip is installed) and SHA256SUMS.
#
#   scripts/release.sh v0.1.0
#   TARGETS="linux/amd64" DIST=/tmp/out scripts/release.sh v0.1.0-rc1
#
# TARGETS (space-separated os/arch) narrows the build; DIST changes the
# output folder (default dist). Run from anywhere inside the clone.
set -euo pipefail

version="${1:-}"
if [[ -z "$version" || "$version" == -* ]]; then
	echo "usage: scripts/release.sh VERSION   (e.g. v0.1.0)" >&2
	exit 2
fi
cd "$(dirname "$0")/.."
dist="${DIST:-dist}"
targets="${TARGETS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64}"
ldflags="-s -w -X main.version=${version}"

mkdir -p "$dist"
for target in $targets; do
	os="${target%/*}" arch="${target#*/}"
	name="tollfree_${version#v}_${os}_${arch}"
	exe="tollfree"
	[[ "$os" == windows ]] && exe="tollfree.exe"
	rm -rf "${dist:?}/$name"
	mkdir -p "$dist/$name"
	echo "building $name" >&2
	CGO_ENABLED=0 GOOS="$os" GOARCH="$arch" \
		go build -trimpath -ldflags "$ldflags" -o "$dist/$name/$exe" ./cmd/tollfree
	cp README.md "$dist/$name/"
	if [[ "$os" == windows ]] && command -v zip >/dev/null; then
		(cd "$dist" && rm -f "$name.zip" && zip -qr "$name.zip" "$name")
	else
		tar -C "$dist" -czf "$dist/$name.tar.gz" "$name"
	fi
done
(cd "$dist" && sha256sum tollfree_*.tar.gz tollfree_*.zip 2>/dev/null > SHA256SUMS || true)
echo "done: $dist" >&2
