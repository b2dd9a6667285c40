# smoothanon — build, test, benchmark. `make help` lists the targets.
SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -ec
GO ?= go
BIN := bin/smoothanon
PROTOC_GEN_GO_VERSION := v1.36.12
BENCHSTAT := golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
FUZZTIME ?= 10s
BENCHCOUNT ?= 5

.PHONY: help build image check test test-hosts vet staticcheck race bench bench-names bench-pipeline bench-flink bench-scale bench-cluster bench-scaling bench-linkage assess-accuracy assess-cost quality quality-sensitive figures figures-learning proto demo fuzz flink-jobserver flink-cluster-jars fake-gcs-server

help:
	@echo "make demo    generate data and anonymize it on the embedded runner"
	@echo "make check   vet + gofmt + go test -short: no JVM, no long data sets"
	@echo "make test    vet + all tests (with the Flink integration test)"
	@echo "make test-hosts  the Flink cluster on hosts that share no disk (namespaces, GCS emulator; root)"
	@echo "make staticcheck  staticcheck (pinned)"
	@echo "make race    go test -race -short on the concurrent packages"
	@echo "make bench   benchmarks (medians via benchstat)"
	@echo "make bench-pipeline  dblp and 1e6 user lists through the pipeline"
	@echo "make bench-names  ROWS (default 1e6) user lists as uint32 lists, string lists and string pairs on prism"
	@echo "make bench-flink  ROWS (default 1e7) user lists through a local Flink (FORM=long-str: string pairs)"
	@echo "make bench-scale  bench-flink at 1e7 (3 runs) and 1e8: CPU per row and peaks side by side"
	@echo "make bench-cluster  CLUSTER_ROWS (default 1e6) on prism, a standalone Flink cluster and the embedded Flink"
	@echo "make bench-cluster NETNS=1  the same on hosts that share no disk (namespaces, GCS emulator; root)"
	@echo "make bench-scaling  solver ns/row and Jaccard on 1e4..1e6 generated rows, bounded and exact search"
	@echo "make bench-linkage  linked-nights table: 1e5 drifting user lists, k=8, ids kept vs pseudonyms"
	@echo "make assess-accuracy  smoothanon assess at k=8 beside the run on adult, dblp, 1e6 lists, playstore"
	@echo "make assess-cost  smoothanon assess at k=8 on ASSESS_ROWS (default 1e6 and 1e7) generated lists: seconds, peak RSS, rows read; EXACT=1 with --exact"
	@echo "make quality docs/quality.md: the quality tables (k = 8, 10 seeds)"
	@echo "make quality-sensitive  what sensitive features cost: Jaccard with none, post-processed, solver (k = 8, 5 seeds)"
	@echo "make figures docs/figures/*.png: the paper's figures (FIGURES_PIPELINE=false skips the dblp pipeline sweep)"
	@echo "make figures-learning  docs/figures/learning-*.png: classifiers and link prediction on anonymized data (tens of minutes)"
	@echo "make fuzz    every fuzz target for FUZZTIME (default 10s)"
	@echo "make proto   regenerate proto/smoothanonpb"
	@echo "make build   bin/smoothanon (static)"
	@echo "make image   the container image IMAGE (default smoothanon:dev) from binaries built here"

# Static and stripped: the same binary serves as --worker_binary for DOCKER
# and EXTERNAL workers, which run in a scratch image with no dynamic loader.
build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags='-s -w' -o $(BIN) ./cmd/smoothanon

# ENGINE picks podman, buildah or docker (default: the first installed);
# GOARCH the image's architecture. See deploy/README.md.
IMAGE ?= smoothanon:dev
image:
	GO=$(GO) ENGINE=$(ENGINE) GOARCH=$(GOARCH) bash deploy/container/build-image.sh $(IMAGE)

# The quick loop: no JVM, no long data sets (tests skip them under -short).
check: vet
	$(GO) test -short ./...

# staticcheck at a pinned version (one that supports the go.mod Go version).
staticcheck:
	$(GO) run $(STATICCHECK) ./...

# The race detector on the packages that run goroutines of their own.
RACE_PKGS := ./solver/... ./verify ./baseline ./release ./storage
race:
	$(GO) test -race -short $(RACE_PKGS)

# The Flink integration tests (pipeline/runners_test.go, cluster_test.go,
# hosts_test.go) need Beam's Flink job server, Flink's own jars and the GCS
# emulator; fetching them is a no-op once they are in ~/.m2 and GOPATH.
test: vet flink-jobserver flink-cluster-jars fake-gcs-server
	$(GO) test -timeout 30m ./...

# The Flink cluster on hosts that share no disk (pipeline/hosts_test.go;
# root) alone; make test runs it too (docs/flink-cluster.md).
test-hosts: flink-jobserver flink-cluster-jars fake-gcs-server
	$(GO) test -timeout 30m -count=1 -run '^TestFlinkHosts$$' -v ./pipeline/

flink-jobserver:
	bash deploy/flink/fetch-jobserver.sh >/dev/null

# Flink 1.19.0's runtime for the standalone cluster (deploy/flink/cluster.sh).
flink-cluster-jars:
	bash deploy/flink/cluster.sh classpath >/dev/null

# The GCS emulator of the cluster on hosts that share no disk
# (deploy/flink/netns-cluster.sh), into $(go env GOPATH)/bin.
FAKE_GCS_VERSION := v1.56.1
fake-gcs-server:
	$(GO) install github.com/fsouza/fake-gcs-server@$(FAKE_GCS_VERSION)

vet:
	$(GO) vet ./...
	@files=$$(gofmt -l $$(git ls-files '*.go' | grep -v '\.pb\.go$$')); \
	  if [ -n "$$files" ]; then echo "gofmt needed: $$files"; exit 1; fi

# The README's main job: generated user lists through the Beam pipeline on the
# embedded prism runner, then an independent check of the release files
# (user ids are pseudonyms; the drawn key is kept so verify can match users).
DEMO := out/demo
demo: build
	@rm -rf $(DEMO) && mkdir -p $(DEMO)
	$(BIN) gen --model userlists --rows 50000 --columns 20000 --seed 1 --output $(DEMO)/input.parquet
	$(BIN) run --input $(DEMO)/input.parquet --output $(DEMO)/release --k 8 --mode smooth \
		--chunk_size 10000 --seed 1 --metrics_out $(DEMO)/report.json --pseudonym_key_out $(DEMO)/pseudonym.key
	$(BIN) verify --input $(DEMO)/input.parquet --output $(DEMO)/release --k 8 --mode smooth \
		--pseudonym_key_file $(DEMO)/pseudonym.key > $(DEMO)/verify.json
	@echo "release: $(DEMO)/release  report: $(DEMO)/report.json  independent check: $(DEMO)/verify.json (valid)"

# Benchmarks print their figures (ns/op plus custom metrics such as ns/row);
# benchstat reports the median of BENCHCOUNT runs. -p 1: one package's
# benchmarks at a time (in parallel they would share the two cores).
bench:
	@mkdir -p out
	$(GO) test -p 1 -run '^$$' -bench . -benchtime 1x -count $(BENCHCOUNT) -timeout 60m \
		./matrix ./verify ./gen ./importer ./lsh ./solver ./solver/internal/knn ./solver/internal/prefetch | tee out/bench.txt
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

# Issue 20's table: 1e5 generated user lists drifting for 7 nights (5% of
# held features dropped, 0.5 new per user), each night solved whole (k = 8,
# smooth), the first 2, 3 and 7 nights linked with ids kept and with
# pseudonyms under a fresh key per night (linkage.Measure).
bench-linkage:
	@mkdir -p out
	$(GO) test ./linkage -run '^$$' -bench NightlyLinkage -benchtime 1x -timeout 60m -v | tee out/bench-linkage.txt

# ROWS (default 1e6) generated user lists, about 10 interests each, on prism
# as list<uint32> ids, list<string> names and long-form string pairs: wall,
# peak RSS and their ratios to the ids, median of 3; the string forms' releases
# must agree.
bench-names:
	scripts/bench-names.sh $(or $(ROWS),1000000) 3

# The pipeline on dblp (prism; compared with the whole-data solve), then 1e6
# generated user lists through the pipeline and solved whole (rows/s of
# both, the pipeline's peak RSS; no GOMEMLIMIT), 3 runs each; shuffle bytes
# per row for the cost model.
bench-pipeline:
	$(GO) test -c -o out/pipeline.test ./pipeline
	for seed in 1 2 3; do out/pipeline.test -test.run '^$$' -test.bench DBLP -test.benchtime 1x -pipeline_whole -pipeline_seed $$seed -test.timeout 30m -test.v | grep -v level=INFO; done
	for run in 1 2 3; do out/pipeline.test -test.run '^$$' -test.bench UserLists -test.benchtime 1x -pipeline_whole -test.timeout 40m -test.v | grep -v level=INFO; done
	$(GO) test ./transforms -run '^$$' -bench ShuffleBytes

# ROWS (default 1e7) generated user lists through a local embedded Flink
# (job server from Maven Central, LOOPBACK workers): wall, peak memory of the
# Go and Java processes, peak spill size, Jaccard.
# smoothanon assess at k = 8 beside the run's result on adult, dblp, 1e6
# generated lists (LISTS) and playstore: predicted, interval, actual.
assess-accuracy: build
	BIN=$(BIN) scripts/assess-accuracy.sh

# What assess costs at 1e6 and 1e7 generated user lists
# (ASSESS_ROWS="..." for others): seconds, peak RSS, rows read and priced.
ASSESS_ROWS ?= 1000000 10000000
assess-cost: build
	BIN=$(BIN) ROWS="$(ASSESS_ROWS)" EXACT="$(EXACT)" scripts/assess-cost.sh

# ROWS (default 1e7) generated lists through the embedded Flink; FORM=long-str
# reads them as long-form string pairs, about 10 per row (bench-local.sh).
bench-flink:
	FORM=$(or $(FORM),ids) bash deploy/flink/bench-local.sh $(or $(ROWS),10000000)

# The scale bench: bench-flink at 1e7 rows three times, then at 1e8 once,
# and CPU seconds per row and peak memory side by side
# (deploy/flink/bench-scale.sh; BASE_ROWS, SCALE_ROWS). Takes hours on 2
# cores and tens of GB of disk.
bench-scale:
	bash deploy/flink/bench-scale.sh

# CLUSTER_ROWS (default 1e6) generated user lists on prism, on the standalone
# Flink cluster (deploy/flink/cluster.sh, PROCESS workers) and on the embedded
# Flink: wall, rows/s, peak memory per process (docs/flink-cluster.md).
# NETNS=1: prism and the cluster on hosts that share no disk, every process
# in namespaces of its own, data in a GCS emulator (deploy/flink/bench-netns.sh;
# needs root).
CLUSTER_ROWS ?= 1000000
NETNS ?=
bench-cluster: $(if $(filter 1,$(NETNS)),fake-gcs-server)
	$(if $(filter 1,$(NETNS)),bash deploy/flink/bench-netns.sh,bash deploy/flink/bench-cluster.sh) $(CLUSTER_ROWS)

# The quality document docs/quality.md (k = 8, 10 seeds, every data set in
# ../shared/data/raw): generated, replaced whole, never edited by hand.
quality:
	$(GO) run ./cmd/quality -seeds 10 -out docs/quality.md

# What the sensitive rule costs (docs/quality-sensitive.md):
# adult (race, sex), dblp (5% of features) and 1e6 generated lists (2% of
# interests), k = 8 at sensitive_k 8 and 32, mean of seeds 1-5.
quality-sensitive:
	$(GO) run ./cmd/sensitivity -seeds 5 -out docs/quality-sensitive.md
	@cat docs/quality-sensitive.md

# The paper's evaluation figures as PNGs under docs/figures (docs/figures.md
# describes them), with the measured values in docs/figures/figures.json.
# FIGURES_PIPELINE=false skips the dblp chunk-size sweep through the
# pipeline, the slowest part, and redraws its last measured values.
FIGURES_PIPELINE ?= true
figures:
	$(GO) run ./cmd/figures -out docs/figures -pipeline=$(FIGURES_PIPELINE)

# The learning experiment (docs/figures.md "Learning from anonymized
# data"): adult's income classifier trained on anonymized rows and a dblp
# link prediction; the paper's model from a pinned scikit-learn, installed
# into bin/learn-venv. Keeps the other figures' values.
LEARN_VENV := bin/learn-venv
figures-learning:
	test -x $(LEARN_VENV)/bin/python || python3 -m venv $(LEARN_VENV)
	$(LEARN_VENV)/bin/pip install -q -r scripts/learn/requirements.txt
	$(GO) run ./cmd/figures -out docs/figures -learning -python $(LEARN_VENV)/bin/python -reuse -datasets= -pipeline=false

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
