# smoothanon as a Beam Go SDK worker image that also holds the launcher.
#
#   docker build -t smoothanon:dev .                       # this machine's arch
#   docker buildx build --platform linux/amd64,linux/arm64 -t REPO/smoothanon:TAG --push .
#
# Without a registry or a Go base image, `make image` packages binaries built
# on the host instead (deploy/container/Dockerfile.prebuilt, same layout).
#
# What is in it (deploy/container/rootfs.sh lays it out):
#   /opt/apache/beam/boot          Beam's Go boot loader (ENTRYPOINT), static
#   /opt/smoothanon/bin/smoothanon the launcher and worker binary, static
#   /etc/passwd, /etc/group        user beam (65532), which the image runs as
#   /etc/ssl/certs                 CA certificates (GCS, Dataflow APIs)
#   /tmp                           writable WORKDIR (boot writes pipeline_options.json there)
#
# boot does not run /opt/smoothanon/bin/smoothanon: it fetches the worker
# binary the launcher staged and runs that, so every run with DOCKER or
# EXTERNAL workers needs --worker_binary naming a static linux binary for
# the workers' architecture (in this image: /opt/smoothanon/bin/smoothanon).
# See deploy/README.md.
#
# GO_VERSION must be go.mod's Go version; the build stops if it is not.
ARG GO_VERSION=1.26.8

FROM --platform=$BUILDPLATFORM golang:${GO_VERSION} AS build
ARG TARGETOS=linux
ARG TARGETARCH
ENV CGO_ENABLED=0 GOTOOLCHAIN=local
WORKDIR /src
COPY go.mod go.sum ./
RUN want="go$(sed -n 's/^go //p' go.mod)"; have="$(go env GOVERSION)"; \
    if [ "$have" != "$want" ]; then \
      echo "Go is $have, go.mod needs $want: build with --build-arg GO_VERSION=${want#go}" >&2; exit 1; \
    fi
RUN go mod download
COPY . .
# boot comes from the Beam module go.mod pins, so it matches the SDK.
RUN GOOS=$TARGETOS GOARCH=$TARGETARCH go build -trimpath -ldflags='-s -w' -o /out/smoothanon ./cmd/smoothanon && \
    GOOS=$TARGETOS GOARCH=$TARGETARCH go build -trimpath -ldflags='-s -w' -o /out/boot github.com/apache/beam/sdks/v2/go/container && \
    deploy/container/rootfs.sh /rootfs /out/boot /out/smoothanon /etc/ssl/certs/ca-certificates.crt

FROM scratch
COPY --from=build /rootfs/ /
USER 65532:65532
WORKDIR /tmp
ENTRYPOINT ["/opt/apache/beam/boot"]
