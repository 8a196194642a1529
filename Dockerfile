# syntax=docker/dockerfile:1
#
# Multi-stage build of clouddb_exporter (the default target, last below) and
# of the API simulator for the docker-compose demo (--target cloudsim):
#
#   docker build --build-arg VERSION=$(cat VERSION) --build-arg REVISION=$(git rev-parse HEAD) \
#     --build-arg DATE=$(date -u -d @$(git log -1 --format=%ct) +%Y-%m-%dT%H:%M:%SZ) -t clouddb_exporter .
#   docker build --target cloudsim -t clouddb-cloudsim .
#   docker buildx build --platform linux/amd64,linux/arm64 -t clouddb_exporter .
#
# The builder runs on the build machine's platform (BUILDPLATFORM) and
# cross-compiles for each target platform (TARGETOS/TARGETARCH, set by
# BuildKit), so a multi-platform build never emulates the Go compiler.
#
# Both binaries are static (CGO_ENABLED=0) and run as a non-root user on a
# distroless base with nothing but CA certificates and tzdata.

# The Go builder is pinned to go.mod's toolchain (a test checks it).
# Distroless has no version tags: pin a digest for releases with
# --build-arg RUNTIME_IMAGE=gcr.io/distroless/static-debian12:nonroot@sha256:…
ARG GO_IMAGE=golang:1.26.8-bookworm
ARG RUNTIME_IMAGE=gcr.io/distroless/static-debian12:nonroot

FROM --platform=${BUILDPLATFORM} ${GO_IMAGE} AS builder
# VERSION defaults to the VERSION file. TARGETOS and TARGETARCH are empty
# with the classic builder, where go builds for the build machine.
ARG TARGETOS
ARG TARGETARCH
ARG VERSION=
ARG REVISION=unknown
ARG BRANCH=unknown
ARG DATE=unknown
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# The same version ldflags as the Makefile, from build arguments instead of
# git (the .git directory is not in the build context).
RUN version="${VERSION:-$(cat VERSION)}" && \
    export CGO_ENABLED=0 GOOS="${TARGETOS}" GOARCH="${TARGETARCH}" && \
    go build -trimpath \
      -ldflags "-s -w \
        -X github.com/prometheus/common/version.Version=${version} \
        -X github.com/prometheus/common/version.Revision=${REVISION} \
        -X github.com/prometheus/common/version.Branch=${BRANCH} \
        -X github.com/prometheus/common/version.BuildUser=docker \
        -X github.com/prometheus/common/version.BuildDate=${DATE}" \
      -o /out/clouddb_exporter . && \
    go build -trimpath -ldflags "-s -w" -o /out/cloudsim ./cmd/cloudsim

# The simulator, for the docker-compose demo only: its /_sim controls take
# no authentication.
FROM ${RUNTIME_IMAGE} AS cloudsim
LABEL org.opencontainers.image.title="cloudsim" \
      org.opencontainers.image.description="Simulator of the cloud database management API, for demos and tests" \
      org.opencontainers.image.source="https://github.com/clouddb/clouddb_exporter"
COPY --from=builder /out/cloudsim /bin/cloudsim
USER 65532:65532
EXPOSE 8090
ENTRYPOINT ["/bin/cloudsim"]

FROM ${RUNTIME_IMAGE} AS exporter
# The release workflow passes the version, the commit and the commit's
# time (RFC 3339) as build arguments; they become the OCI labels.
ARG VERSION=
ARG REVISION=unknown
ARG DATE=unknown
LABEL org.opencontainers.image.title="clouddb_exporter" \
      org.opencontainers.image.description="Prometheus exporter for a managed cloud-database control plane" \
      org.opencontainers.image.source="https://github.com/clouddb/clouddb_exporter" \
      org.opencontainers.image.url="https://github.com/clouddb/clouddb_exporter" \
      org.opencontainers.image.documentation="https://github.com/clouddb/clouddb_exporter/blob/main/README.md" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${DATE}" \
      org.opencontainers.image.licenses="Apache-2.0"
COPY --from=builder /out/clouddb_exporter /bin/clouddb_exporter
USER 65532:65532
EXPOSE 9866
ENTRYPOINT ["/bin/clouddb_exporter"]
