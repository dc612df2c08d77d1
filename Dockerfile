# syntax=docker/dockerfile:1
# tollfree in a small static image (issue 17): a Go build stage, then FROM
# scratch with the binary, CA certificates and nothing else: no shell, no
# package manager. Zone data is inside the binary (config links
# time/tzdata), so /usr/share/zoneinfo is not copied.
#
#   docker build --build-arg VERSION=v0.1.0 -t tollfree .
#   podman build --format docker --build-arg VERSION=v0.1.0 -t tollfree .
#   docker run -p 8080:8080 -e GROQ_API_KEY -v "$PWD/tollfree.yaml:/config/tollfree.yaml:ro" tollfree
#
# The gateway listens on 0.0.0.0:8080 inside (CMD's -listen, which overrides
# the config's listen: 127.0.0.1 would not be reachable from outside the
# container). Config: /config/tollfree.yaml when mounted, else the built-in
# presets with the keys in the environment. State, call log and cache:
# /data (the working directory). Keys come from the environment (or api_key_file on a mounted
# secret), never from the image.
#
# Base images are named in full (docker.io/library/...): podman resolves
# no short name without a registries.conf alias. Podman writes OCI images
# by default, and the OCI format has no HEALTHCHECK: build with
# --format docker to keep it. The final stage is the same as
# deploy/Dockerfile.release's, which packs a release binary
# (scripts/image.sh; CI builds it with podman and inspects it).

FROM docker.io/library/golang:1.26.8 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
ARG VERSION=devel
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/tollfree ./cmd/tollfree \
 && mkdir -p /out/config /out/data \
 && ln -s /config/tollfree.yaml /out/data/tollfree.yaml

FROM scratch
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /out/tollfree /tollfree
COPY --from=build --chown=65532:65532 /out/config /config
COPY --from=build --chown=65532:65532 /out/data /data
USER 65532:65532
# serve reads ./tollfree.yaml when it exists: /data/tollfree.yaml links to
# /config/tollfree.yaml, so a mounted config is found and, without one, the
# built-in presets are used; the default data_dir ./.tollfree lands in /data.
WORKDIR /data
VOLUME ["/config", "/data"]
EXPOSE 8080
# Liveness: /healthz is 200 while the process serves, even with no key set
# (degraded, not down). Readiness (/readyz) is for a load balancer.
HEALTHCHECK --interval=15s --timeout=5s --start-period=5s --retries=3 \
    CMD ["/tollfree", "health", "http://127.0.0.1:8080/healthz"]
ENTRYPOINT ["/tollfree"]
CMD ["serve", "-listen", "0.0.0.0:8080"]
