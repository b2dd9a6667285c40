# smoothanon — build, test, benchmark. `make help` lists the targets.
GO ?= go
BIN := bin/smoothanon
PROTOC_GEN_GO_VERSION := v1.36.12
BENCHSTAT := golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da
FUZZTIME ?= 10s
BENCHCOUNT ?= 5

.PHONY: help build test vet bench proto demo fuzz flink-jobserver

help:
	@echo "make demo    generate data and anonymize it on the embedded runner"
	@echo "make test    vet + all tests"
	@echo "make bench   benchmarks (medians via benchstat)"
	@echo "make fuzz    every fuzz target for FUZZTIME (default 10s)"
	@echo "make proto   regenerate proto/smoothanonpb"
	@echo "make build   bin/smoothanon"

build:
	$(GO) build -o $(BIN) ./cmd/smoothanon

# The Flink integration test (pipeline/runners_test.go) needs Beam's Flink job
# server jar; fetching it is a no-op once it is in ~/.m2.
test: vet flink-jobserver
	$(GO) test -timeout 30m ./...

flink-jobserver:
	bash deploy/flink/fetch-jobserver.sh >/dev/null

vet:
	$(GO) vet ./...
	@files=$$(gofmt -l $$(git ls-files '*.go' | grep -v '\.pb\.go$$')); \
	  if [ -n "$$files" ]; then echo "gofmt needed: $$files"; exit 1; fi

# The README's main job: generated user lists through the Beam pipeline on the
# embedded prism runner, then an independent check of the release files.
DEMO := out/demo
demo: build
	@rm -rf $(DEMO) && mkdir -p $(DEMO)
	$(BIN) gen --model userlists --rows 50000 --columns 20000 --seed 1 --output $(DEMO)/input.parquet
	$(BIN) run --input $(DEMO)/input.parquet --output $(DEMO)/release --k 8 --mode smooth \
		--chunk_size 10000 --seed 1 --metrics_out $(DEMO)/report.json
	$(BIN) verify --input $(DEMO)/input.parquet --output $(DEMO)/release --k 8 --mode smooth > $(DEMO)/verify.json
	@echo "release: $(DEMO)/release  report: $(DEMO)/report.json  independent check: $(DEMO)/verify.json (valid)"

# Benchmarks print their figures (ns/op plus custom metrics such as ns/row);
# benchstat reports the median of BENCHCOUNT runs.
bench:
	@mkdir -p out
	$(GO) test -run '^$$' -bench . -benchtime 1x -count $(BENCHCOUNT) ./verify ./gen ./importer | tee out/bench.txt
	$(GO) run $(BENCHSTAT) out/bench.txt

FUZZ_TARGETS := importer:FuzzAdult importer:FuzzPlaystore importer:FuzzEdges importer:FuzzPairs \
	matrix:FuzzReadParquet verify:FuzzCheck solver:FuzzSolve
fuzz:
	@for t in $(FUZZ_TARGETS); do pkg=$${t%%:*}; fn=$${t#*:}; \
	  echo "fuzz $$pkg $$fn ($(FUZZTIME))"; \
	  $(GO) test -run '^$$' -fuzz "^$$fn$$" -fuzztime $(FUZZTIME) -parallel 1 ./$$pkg || exit 1; done

# protoc comes from Debian's protobuf-compiler; protoc-gen-go from the Go module proxy.
proto:
	@command -v protoc >/dev/null || (echo "protoc missing: apt-get install -y protobuf-compiler" >&2; exit 1)
	GOBIN=$(CURDIR)/bin $(GO) install google.golang.org/protobuf/cmd/protoc-gen-go@$(PROTOC_GEN_GO_VERSION)
	PATH=$(CURDIR)/bin:$$PATH protoc --go_out=. --go_opt=module=github.com/smoothanon/smoothanon proto/smoothanon.proto
