# smoothanon as a Beam Go SDK harness container (for Dataflow, or Flink/Spark
# with --environment_type=DOCKER) that also works as a launcher.
#
#   docker build -t smoothanon:dev .
#   # launcher:
#   docker run --rm -v $PWD/data:/data --entrypoint /bin/smoothanon smoothanon:dev \
#       run --input /data/in --output /data/out --k 8
#   # worker container for a portable runner:
#   smoothanon run ... --runner flink --endpoint HOST:8099 \
#       --environment_type DOCKER --environment_config smoothanon:dev
#
# The base image's ENTRYPOINT (/opt/apache/beam/boot) stays: a runner starts
# the container, boot fetches the staged worker binary (the launcher itself
# or --worker_binary) and runs it with --worker=true; main() must then call
# pipeline.MaybeRunWorker() first (see deploy/README.md).
# Keep both versions in step with go.mod.
ARG GO_VERSION=1.26
ARG BEAM_VERSION=2.77.0

FROM golang:${GO_VERSION} AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go build -trimpath -o /out/smoothanon ./cmd/smoothanon

FROM apache/beam_go_sdk:${BEAM_VERSION}
COPY --from=build /out/smoothanon /bin/smoothanon
