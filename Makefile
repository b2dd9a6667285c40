# smoothanon — build, test, benchmark.
GO ?= go
BIN := bin/smoothanon
PROTOC_GEN_GO_VERSION := v1.36.12

.PHONY: build test bench proto demo vet fmt

build:
	$(GO) build -o $(BIN) ./cmd/smoothanon

test:
	$(GO) vet ./...
	$(GO) test ./...

vet:
	$(GO) vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go' | grep -v '\.pb\.go$$'))" || (gofmt -l .; exit 1)

# protoc comes from Debian's protobuf-compiler; protoc-gen-go from the Go module proxy.
proto:
	@command -v protoc >/dev/null || (echo "protoc missing: apt-get install -y protobuf-compiler" >&2; exit 1)
	GOBIN=$(CURDIR)/bin $(GO) install google.golang.org/protobuf/cmd/protoc-gen-go@$(PROTOC_GEN_GO_VERSION)
	PATH=$(CURDIR)/bin:$$PATH protoc --go_out=. --go_opt=module=github.com/smoothanon/smoothanon proto/smoothanon.proto
