package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/smoothanon/smoothanon/gen"
	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/pipeline"
	"github.com/smoothanon/smoothanon/proto/smoothanonpb"
	"github.com/smoothanon/smoothanon/storage"
)

func TestRunCommand(t *testing.T) {
	dir := t.TempDir()
	m, err := gen.SBM(gen.SBMParams{N: 400, S: 20, Q: 0.6, P: 0.01, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "in.parquet")
	if err := matrix.WriteMatrix(in, m, matrix.WriterOptions{RowGroupRows: 64}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	rep := filepath.Join(dir, "report.json")
	var stdout, stderr bytes.Buffer
	args := []string{"run", "--input", in, "--output", out, "--k", "4", "--chunk_size", "150", "--seed", "3",
		"--metrics_out", rep, "--runner", "prism", "--pseudonym_key_out", filepath.Join(dir, "key")}
	if code := runMain(args, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	// The default pseudonymized release verifies against its input with the drawn key.
	stdout.Reset()
	var vr smoothanonpb.RunReport
	if code := runMain([]string{"verify", "--input", in, "--output", out, "--k", "4", "--pseudonym_key_file", filepath.Join(dir, "key")}, &stdout, &stderr); code != 0 ||
		protojson.Unmarshal(stdout.Bytes(), &vr) != nil || vr.UserIds != "pseudonym" || !vr.Valid || vr.UsersUnmatched {
		t.Fatalf("verify with the key: exit %d: %s %s", code, stdout.String(), stderr.String())
	}
	stdout.Reset()
	var obj map[string]any
	b, err := os.ReadFile(rep)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &obj); err != nil {
		t.Fatal(err)
	}
	if obj["valid"] != true || obj["rows"] != "400" {
		t.Errorf("report valid=%v rows=%v, want true and \"400\"", obj["valid"], obj["rows"])
	}
	// The report is exactly the proto: a strict protojson read accepts it.
	var report smoothanonpb.RunReport
	if err := protojson.Unmarshal(b, &report); err != nil {
		t.Fatalf("report is not a RunReport: %v", err)
	}
	if got := report.GetPipeline().GetCounters()["smoothanon/rows_read"]; got != 400 {
		t.Errorf("pipeline.counters[smoothanon/rows_read] = %d, want 400", got)
	}
	if d := report.GetPipeline().GetDistributions()["smoothanon/chunk_rows"]; d.GetSum() != 400 {
		t.Errorf("pipeline.distributions[smoothanon/chunk_rows] = %v, want sum 400", d)
	}
	if pl, _ := obj["pipeline"].(map[string]any); pl["runner"] != "prism" {
		t.Errorf("pipeline info %v, want runner prism", pl)
	}
	// The default pools ran and are reported.
	if pl := report.GetPipeline().GetPool(); pl.GetShare() != pipeline.DefaultPoolShare || pl.GetPools() < 1 || pl.GetRows() == 0 {
		t.Errorf("pipeline.pool = %v, want the default share and at least one pool", pl)
	}
	// --start mondrian reaches the chunks' solves: the report says so.
	mrep := filepath.Join(dir, "mondrian.json")
	if code := runMain([]string{"run", "--input", in, "--output", filepath.Join(dir, "mondrian"), "--k", "4", "--chunk_size", "150",
		"--start", "mondrian", "--metrics_out", mrep, "--runner", "prism"}, &stdout, &stderr); code != 0 {
		t.Fatalf("--start mondrian: exit %d: %s", code, stderr.String())
	}
	var mr smoothanonpb.RunReport
	if b, err := os.ReadFile(mrep); err != nil || protojson.Unmarshal(b, &mr) != nil || !mr.Valid || mr.Solve.GetStart() != "mondrian" ||
		mr.Solve.GetRestarts() != 0 || mr.Solve.GetFacilityCost() != 0 {
		t.Errorf("--start mondrian: report %v (%v)", &mr, err)
	}
	// A second run into the same output is refused with exit code 2.
	stderr.Reset()
	if code := runMain(args[:len(args)-2], &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "holds the release of run") {
		t.Fatalf("rerun: exit %d, %s", code, stderr.String())
	}
	// Dry run: prints the job graph, writes nothing.
	stdout.Reset()
	dry := []string{"run", "--input", in, "--output", filepath.Join(dir, "dry"), "--k", "4", "--dry_run"}
	if code := runMain(dry, &stdout, &stderr); code != 0 {
		t.Fatalf("dry run exit %d: %s", code, stderr.String())
	}
	// The default --chunk_key auto and --start auto say what they chose
	// (400 rows: too few to leave the spectral key and both starts) and on
	// what evidence.
	if !strings.Contains(stdout.String(), "Solve") || !strings.Contains(stdout.String(), "# dry run: 1 input files, 400 rows, ~1 chunks, chunk key spectral (auto), start both (auto) (sample: ") ||
		!strings.Contains(stdout.String(), ", pools of 0.4 of every chunk,") {
		t.Errorf("dry run output lacks the summary or the Solve transform:\n%.400s", stdout.String())
	}
	flag.CommandLine.Set("dry_run", "false") // Beam's flag lives on the global set
	if _, err := os.Stat(filepath.Join(dir, "dry")); err == nil {
		t.Error("dry run created the output")
	}
	// Bad usage is exit code 2.
	for _, bad := range [][]string{
		{"run", "--input", in, "--output", out + "2", "--k", "1"},
		{"run", "--input", in, "--output", out + "2", "--k", "4", "--mode", "fuzzy"},
		{"run", "--input", in, "--k", "4"},
		{"run", "--input", in, "--output", out + "2", "--k", "4", "--chunk_key", "lsh"},
		{"run", "--input", in, "--output", out + "2", "--k", "4", "--start", "meyerson"},
		{"run", "--input", in, "--output", out + "2", "--k", "4", "--start", "mondrian", "--variant", "paper"},
		{"run", "--input", in, "--output", out + "2", "--k", "4", "--spectral_iterations", "0"},
		{"run", "--input", in, "--output", out + "2", "--k", "4", "--pool_share", "0.7"},
		{"run", "--input", in, "--output", out + "2", "--k", "4", "--pool_share", "0.001"},
	} {
		stderr.Reset()
		if code := runMain(bad, &stdout, &stderr); code != 2 {
			t.Errorf("%q: exit %d, want 2", bad, code)
		}
		if strings.Contains(bad[len(bad)-2], "pool_share") && (strings.Count(stderr.String(), "\n") != 1 || !strings.Contains(stderr.String(), "pool share "+bad[len(bad)-1])) {
			t.Errorf("%q: stderr %q, want one line naming the share", bad, stderr.String())
		}
		if _, err := os.Stat(out + "2"); err == nil {
			t.Errorf("%q left %s behind", bad, out+"2")
		}
	}
}

// TestRunDirectIsPrism: --runner direct (and Beam's alias DirectRunner)
// runs prism, says so in one line on stderr, and publishes the bytes
// --runner prism publishes (shards compared in manifest order: their
// names carry each run's token).
func TestRunDirectIsPrism(t *testing.T) {
	dir := t.TempDir()
	m, err := gen.SBM(gen.SBMParams{N: 200, S: 20, Q: 0.6, P: 0.01, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "in.parquet")
	if err := matrix.WriteMatrix(in, m, matrix.WriterOptions{}); err != nil {
		t.Fatal(err)
	}
	release := func(runner string) [][]byte {
		t.Helper()
		out := filepath.Join(dir, runner)
		var stderr bytes.Buffer
		args := []string{"run", "--input", in, "--output", out, "--k", "4", "--chunk_size", "100", "--seed", "2",
			"--shards", "2", "--user_ids", "keep", "--runner", runner}
		if code := runMain(args, io.Discard, &stderr); code != 0 {
			t.Fatalf("--runner %s: exit %d: %s", runner, code, stderr.String())
		}
		want := 1
		if runner == "prism" {
			want = 0
		}
		if got := strings.Count(stderr.String(), pipeline.DirectNote+"\n"); got != want {
			t.Errorf("--runner %s: stderr has the direct note %d times, want %d:\n%s", runner, got, want, stderr.String())
		}
		if !strings.Contains(stderr.String(), "on prism,") {
			t.Errorf("--runner %s: the summary does not say prism ran:\n%s", runner, stderr.String())
		}
		man, err := storage.ReadManifest(t.Context(), out)
		if err != nil {
			t.Fatal(err)
		}
		var shards [][]byte
		for _, s := range man.Shards {
			b, err := os.ReadFile(filepath.Join(out, s.Name))
			if err != nil {
				t.Fatal(err)
			}
			shards = append(shards, b)
		}
		return shards
	}
	prism := release("prism")
	for _, runner := range []string{"direct", "DirectRunner"} {
		if got := release(runner); !slices.EqualFunc(got, prism, bytes.Equal) || len(got) != 2 {
			t.Errorf("--runner %s: %d shards unlike prism's %d", runner, len(got), len(prism))
		}
	}
}
