package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/smoothanon/smoothanon/storage"
	"github.com/smoothanon/smoothanon/storage/storagetest"
)

func cli(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := runMain(args, &out, &errb)
	return code, out.String(), errb.String()
}

// TestCommandsOnBuckets runs gen, solve, verify, baseline and run with
// every path in a fake GCS or S3 bucket: outputs match the local ones byte
// for byte, reports read back from the bucket, a release without _SUCCESS
// is refused, and a missing bucket is a one-line exit-2 error.
func TestCommandsOnBuckets(t *testing.T) {
	local := t.TempDir()
	mustRun := func(args ...string) string {
		t.Helper()
		code, stdout, stderr := cli(args...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", strings.Join(args, " "), code, stderr)
		}
		return stdout + stderr
	}
	lin := filepath.Join(local, "in.parquet")
	mustRun("gen", "--model", "sbm", "--rows", "256", "--block", "32", "--seed", "2", "--output", lin)
	// One pseudonym key for the local and the bucket solves, so their
	// releases are comparable byte for byte.
	key := filepath.Join(local, "key")
	if err := os.WriteFile(key, []byte(strings.Repeat("5a", 32)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	lsolved := filepath.Join(local, "solved.parquet")
	mustRun("solve", "--input", lin, "--output", lsolved, "--k", "4", "--quiet", "--pseudonym_key_file", key)
	ctx := context.Background()
	for _, store := range []string{"gs", "s3"} {
		t.Run(store, func(t *testing.T) {
			storagetest.Start(t, store, "bkt")
			b := store + "://bkt/"
			same := func(local, remote string) {
				t.Helper()
				want, _ := storage.ReadFile(ctx, local)
				got, err := storage.ReadFile(ctx, remote)
				if err != nil || !bytes.Equal(got, want) {
					t.Fatalf("%s differs from %s (%v)", remote, local, err)
				}
			}
			mustRun("gen", "--model", "sbm", "--rows", "256", "--block", "32", "--seed", "2", "--output", b+"in.parquet")
			same(lin, b+"in.parquet")
			mustRun("solve", "--input", b+"in.parquet", "--output", b+"solved.parquet", "--k", "4", "--quiet", "--metrics_out", b+"solve.json",
				"--pseudonym_key_file", key)
			same(lsolved, b+"solved.parquet")
			if rep := readReport(t, b+"solve.json"); !rep.Valid {
				t.Fatalf("solve report: %v", rep)
			}
			mustRun("verify", "--input", b+"in.parquet", "--output", b+"solved.parquet", "--k", "4", "--pseudonym_key_file", key)
			mustRun("baseline", "--method", "mondrian", "--k", "4", "--input", b+"in.parquet", "--output", b+"mondrian.parquet", "--quiet")
			mustRun("verify", "--input", b+"in.parquet", "--output", b+"mondrian.parquet", "--k", "4", "--mode", "nonsmooth")

			runArgs := []string{"run", "--input", b + "in.parquet", "--output", b + "rel", "--k", "4", "--chunk_size", "100",
				"--seed", "1", "--run_id", "nightly-1", "--metrics_out", b + "run.json"}
			mustRun(runArgs...)
			if rep := readReport(t, b+"run.json"); !rep.Valid {
				t.Fatalf("run report: %v", rep)
			}
			mustRun("verify", "--input", b+"in.parquet", "--output", b+"rel", "--k", "4")
			if out := mustRun(runArgs...); !strings.Contains(out, "already holds the release of run nightly-1") {
				t.Fatalf("retry of the run id printed %q", out)
			}
			// A nightly run on the bucket: {date} paths, run id = date; its
			// rerun exits 0 and keeps the one key; a missing night is exit 2
			// naming the templated input.
			keyOut := filepath.Join(t.TempDir(), "{date}.key")
			night := []string{"run", "--date", "2026-11-23", "--input", b + "in.parquet", "--output", b + "rel/dt={date}", "--k", "4",
				"--chunk_size", "100", "--metrics_out", b + "reports/{date}.json", "--pseudonym_key_out", keyOut}
			mustRun(night...)
			nightKey := strings.ReplaceAll(keyOut, "{date}", "2026-11-23")
			key1, _ := os.ReadFile(nightKey)
			if m, err := storage.ReadManifest(ctx, b+"rel/dt=2026-11-23"); err != nil || m.RunID != "2026-11-23" || len(key1) == 0 {
				t.Fatalf("nightly run: manifest %+v, %v; key %d bytes", m, err, len(key1))
			}
			if rep := readReport(t, b+"reports/2026-11-23.json"); rep.Date != "2026-11-23" {
				t.Fatalf("nightly report has date %q", rep.Date)
			}
			if out := mustRun(night...); !strings.Contains(out, "nothing to do") {
				t.Fatalf("nightly rerun printed %q", out)
			}
			if key2, _ := os.ReadFile(nightKey); !bytes.Equal(key1, key2) {
				t.Fatal("the nightly rerun replaced the key")
			}
			code, _, stderr := cli(append(night[:len(night):len(night)], "--input", b+"in/dt={date}/*.parquet", "--date", "2026-11-24")...)
			if code != 2 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, b+"in/dt=2026-11-24/*.parquet") {
				t.Fatalf("missing night: exit %d %q", code, stderr)
			}
			storage.Remove(ctx, b+"rel/_SUCCESS")
			code, _, stderr = cli("verify", "--input", b+"in.parquet", "--output", b+"rel", "--k", "4")
			if want := "smoothanon verify: " + b + "rel: not a published release: no _SUCCESS\n"; code != 2 || stderr != want {
				t.Fatalf("verify without _SUCCESS: exit %d %q, want 2 %q", code, stderr, want)
			}

			missing := store + "://no-such-bucket/in.parquet"
			code, _, stderr = cli("solve", "--input", missing, "--output", b+"x.parquet", "--k", "4")
			if code != 2 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, missing+": no such bucket") {
				t.Fatalf("missing bucket: exit %d %q", code, stderr)
			}
			if ok, _ := storage.Exists(ctx, b+"x.parquet"); ok {
				t.Fatal("a failed solve left its output")
			}
		})
	}
}
