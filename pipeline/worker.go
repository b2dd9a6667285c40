package pipeline

import (
	"flag"
	"os"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/smoothanon/smoothanon/internal/workerexit"
)

// IsWorker reports whether args (os.Args[1:]) are those a Beam runner's
// container boot loader passes when it starts this binary as an SDK
// harness ("--worker=true --id=... --control_endpoint=...").
func IsWorker(args []string) bool {
	for _, a := range args {
		switch strings.TrimLeft(a, "-") {
		case "worker", "worker=true", "worker=1":
			return strings.HasPrefix(a, "-")
		}
	}
	return false
}

// MaybeRunWorker runs the Beam SDK harness and exits when the process was
// started as a worker (see IsWorker); otherwise it returns at once. Call it
// first thing in main: with Dataflow, or Flink/Spark with DOCKER or PROCESS
// environments, the runner starts the same binary (--worker_binary) with
// worker flags, and beam.Init() then serves bundles instead of returning.
// LOOPBACK and prism need nothing: their workers live in the launching
// process.
//
// The worker exits when the runner closes its control stream, when its
// parent (Beam's boot loader or the runner) dies, or when the harness
// fails, and it unlinks the boot loader's /tmp/bin*/worker copy of the
// binary at start (see internal/workerexit): Beam's harness alone never
// exits and leaves the copy behind.
func MaybeRunWorker() {
	if !IsWorker(os.Args[1:]) {
		return
	}
	flag.Parse()
	os.Exit(workerexit.Run(beam.Init))
}
