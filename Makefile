# smoothanon — build, test, benchmark. `make help` lists the targets.
SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -ec
GO ?= go
BIN := bin/smoothanon
PROTOC_GEN_GO_VERSION := v1.36.12
BENCHSTAT := golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da
FUZZTIME ?= 10s
BENCHCOUNT ?= 5

.PHONY: help build test vet bench bench-pipeline bench-flink bench-scaling bench-cluster quality proto demo fuzz flink-jobserver flink-cluster-jars

help:
	@echo "make demo    generate data and anonymize it on the embedded runner"
	@echo "make test    vet + all tests"
	@echo "make bench   benchmarks (medians via benchstat)"
	@echo "make bench-pipeline  dblp and 1e6 user lists through the pipeline"
	@echo "make bench-flink  ROWS (default 1e7) user lists through a local Flink"
	@echo "make bench-cluster  CLUSTER_ROWS (default 1e6) on prism, a standalone Flink cluster and the embedded Flink"
	@echo "make bench-scaling  solver ns/row and Jaccard on 1e4..1e6 generated rows, bounded and exact search"
	@echo "make quality the quality table, written into README.md"
	@echo "make fuzz    every fuzz target for FUZZTIME (default 10s)"
	@echo "make proto   regenerate proto/smoothanonpb"
	@echo "make build   bin/smoothanon"

build:
	$(GO) build -o $(BIN) ./cmd/smoothanon

# The Flink integration tests (pipeline/runners_test.go, cluster_test.go) need
# Beam's Flink job server and Flink's own jars; fetching them is a no-op once
# they are in ~/.m2.
test: vet flink-jobserver flink-cluster-jars
	$(GO) test -timeout 30m ./...

flink-jobserver:
	bash deploy/flink/fetch-jobserver.sh >/dev/null

# Flink 1.19.0's runtime for the standalone cluster (deploy/flink/cluster.sh).
flink-cluster-jars:
	bash deploy/flink/cluster.sh classpath >/dev/null

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
		--chunk_size 10000 --chunk_key hub --seed 1 --metrics_out $(DEMO)/report.json
	$(BIN) verify --input $(DEMO)/input.parquet --output $(DEMO)/release --k 8 --mode smooth > $(DEMO)/verify.json
	@echo "release: $(DEMO)/release  report: $(DEMO)/report.json  independent check: $(DEMO)/verify.json (valid)"

# Benchmarks print their figures (ns/op plus custom metrics such as ns/row);
# benchstat reports the median of BENCHCOUNT runs. -p 1: one package's
# benchmarks at a time (in parallel they would share the two cores).
bench:
	@mkdir -p out
	$(GO) test -p 1 -run '^$$' -bench . -benchtime 1x -count $(BENCHCOUNT) -timeout 60m \
		./verify ./gen ./importer ./lsh ./solver ./solver/internal/knn ./solver/internal/prefetch | tee out/bench.txt
	$(GO) run $(BENCHSTAT) out/bench.txt

# Solver time per row on generated user lists of 1e4, 1e5 and 1e6 rows.
# Five rounds of every size, one after the other (not -count 5, which runs
# one size five times, then the next): the machine's speed drifts over
# minutes, and the ratio between sizes should compare runs made together.
bench-scaling:
	@mkdir -p out
	$(GO) test -c -o out/solver.test ./solver
	for i in 1 2 3 4 5; do out/solver.test -test.run '^$$' -test.bench 'UserLists' -test.benchtime 1x -test.timeout 60m -userlists_max 1000000; done | tee out/bench-scaling.txt
	$(GO) run $(BENCHSTAT) out/bench-scaling.txt

# The pipeline on dblp (prism; compared with the whole-data solve) and on 1e6
# generated user lists; shuffle bytes per row for the cost model.
bench-pipeline:
	for seed in 1 2 3; do $(GO) test ./pipeline -run '^$$' -bench DBLP -benchtime 1x -pipeline_whole -pipeline_seed $$seed -timeout 30m -v | grep -v level=INFO; done
	GOMEMLIMIT=4GiB $(GO) test ./pipeline -run '^$$' -bench UserLists -benchtime 1x -timeout 40m -v | grep -v level=INFO
	$(GO) test ./transforms -run '^$$' -bench ShuffleBytes

# ROWS (default 1e7) generated user lists through a local embedded Flink
# (job server from Maven Central, LOOPBACK workers): wall, peak memory of the
# Go and Java processes, peak spill size, Jaccard.
ROWS ?= 10000000
bench-flink:
	bash deploy/flink/bench-local.sh $(ROWS)

# CLUSTER_ROWS (default 1e6) generated user lists on prism, on the standalone
# Flink cluster (deploy/flink/cluster.sh, PROCESS workers) and on the embedded
# Flink: wall, rows/s, peak memory per process (docs/flink-cluster.md).
CLUSTER_ROWS ?= 1000000
bench-cluster:
	bash deploy/flink/bench-cluster.sh $(CLUSTER_ROWS)

# The quality table (k = 8, 10 seeds, every dataset in ../shared/data/raw),
# printed and written into README.md between the quality markers.
quality:
	@mkdir -p out
	$(GO) run ./internal/quality -seeds 10 | tee out/quality.md
	@awk -v f=out/quality.md 'BEGIN { while ((getline l < f) > 0) q = q l "\n" } \
	  /<!-- quality:begin -->/ { print; printf "%s", q; skip = 1; next } \
	  /<!-- quality:end -->/ { skip = 0 } !skip' README.md > README.md.tmp && mv README.md.tmp README.md

FUZZ_TARGETS := importer:FuzzAdult importer:FuzzPlaystore importer:FuzzEdges importer:FuzzPairs \
	matrix:FuzzReadParquet verify:FuzzCheck solver:FuzzSolve
fuzz:
	@for t in $(FUZZ_TARGETS); do pkg=$${t%%:*}; fn=$${t#*:}; \
	  echo "fuzz $$pkg $$fn ($(FUZZTIME))"; \
	  GO=$(GO) bash scripts/fuzz.sh $$pkg $$fn $(FUZZTIME) || exit 1; done

# protoc comes from Debian's protobuf-compiler; protoc-gen-go from the Go module proxy.
proto:
	@command -v protoc >/dev/null || (echo "protoc missing: apt-get install -y protobuf-compiler" >&2; exit 1)
	GOBIN=$(CURDIR)/bin $(GO) install google.golang.org/protobuf/cmd/protoc-gen-go@$(PROTOC_GEN_GO_VERSION)
	PATH=$(CURDIR)/bin:$$PATH protoc --go_out=. --go_opt=module=github.com/smoothanon/smoothanon proto/smoothanon.proto
