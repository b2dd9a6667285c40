package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/pseudonym"
	"github.com/smoothanon/smoothanon/release"
	"github.com/smoothanon/smoothanon/storage"
	"github.com/smoothanon/smoothanon/storage/storagetest"
)

// runChild runs the CLI with args in a child process (this test binary,
// see TestMain), killed by sig ("KILL", "TERM" or "" for none) at stage,
// with TMPDIR tmp; it returns the exit code and output.
func runChild(t *testing.T, tmp, stage, sig string, ttl time.Duration, args ...string) (int, string) {
	t.Helper()
	js, _ := json.Marshal(args)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), faultEnv+"="+stage+":"+sig+":"+ttl.String(), faultArgsEnv+"="+string(js), "TMPDIR="+tmp)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String()
	case errors.As(err, &ee):
		if ee.ExitCode() == -1 {
			return 128 + 9, out.String() // killed
		}
		return ee.ExitCode(), out.String()
	}
	t.Fatal(err)
	return 0, ""
}

// TestKilledAtEveryStage kills `run` with SIGKILL and SIGTERM at each
// stage of its lifecycle (through release.Fault, not timed signals), then
// retries it as a nightly scheduler would: the retry succeeds with no
// manual cleanup, and afterwards the output holds exactly one release,
// the key saved is that release's, and no staging, orphan shard, pending
// key or temp file is left anywhere.
func TestKilledAtEveryStage(t *testing.T) {
	stores := []string{"local"}
	if !testing.Short() {
		stores = append(stores, "gs", "s3")
	}
	stages := []release.Stage{release.StageBegun, release.StageStaged, release.StageCopied, release.StageClaimed, release.StageSaved}
	dir := t.TempDir()
	in := filepath.Join(dir, "in.parquet")
	writeSolveInput(t, in, 60)
	const ttl = 1500 * time.Millisecond
	for _, store := range stores {
		for _, stage := range stages {
			for _, sig := range []string{"KILL", "TERM"} {
				t.Run(fmt.Sprintf("%s/%s/%s", store, stage, sig), func(t *testing.T) {
					root := t.TempDir()
					if store != "local" {
						storagetest.Start(t, store, "b")
						root = store + "://b/x"
					}
					out := storage.Join(root, "rel")
					local := t.TempDir()
					tmp := filepath.Join(local, "tmp")
					os.Mkdir(tmp, 0o755)
					key, report := filepath.Join(local, "night.key"), filepath.Join(local, "report.json")
					args := []string{"run", "--input", in, "--output", out, "--k", "4", "--chunk_size", "40", "--seed", "1",
						"--run_id", "2026-11-27", "--pseudonym_key_out", key, "--metrics_out", report}
					code, log := runChild(t, tmp, string(stage), sig, ttl, args...)
					published := stage == release.StageClaimed || stage == release.StageSaved
					switch {
					case sig == "KILL" && code != 137:
						t.Fatalf("child exit %d, want killed:\n%s", code, log)
					case sig == "TERM" && !published && code != 143:
						t.Fatalf("child exit %d, want 143 (SIGTERM before publishing):\n%s", code, log)
					case sig == "TERM" && published && code != 0:
						t.Fatalf("child exit %d, want 0 (SIGTERM after the claim lets the run finish):\n%s", code, log)
					}
					if sig == "TERM" {
						checkReportSays(t, report, published)
					}
					if store != "local" {
						time.Sleep(ttl + 500*time.Millisecond) // the dead run's lease expires
					}
					code, log = runChild(t, tmp, "", "", ttl, args...)
					if code != 0 {
						t.Fatalf("retry: exit %d:\n%s", code, log)
					}
					if published && !strings.Contains(log, "already holds the release of run 2026-11-27") {
						t.Errorf("retry of a published night did not say so:\n%s", log)
					}
					checkClean(t, out, key, report, tmp)
				})
			}
		}
	}
}

// checkReportSays checks the report of a run stopped by SIGTERM.
func checkReportSays(t *testing.T, path string, published bool) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no report after SIGTERM: %v", err)
	}
	var r map[string]any
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	if r["published"] != published || !published && !strings.Contains(fmt.Sprint(r["not_published"]), "interrupted by terminated") {
		t.Errorf("report published=%v not_published=%q, want published=%v", r["published"], r["not_published"], published)
	}
}

// checkClean: out holds exactly its manifest's shards and _SUCCESS, the
// key at keyPath and the report at reportPath are that release's, and nothing a run makes is left
// beside out, beside the key or in tmp.
func checkClean(t *testing.T, out, keyPath, reportPath, tmp string) {
	t.Helper()
	ctx := context.Background()
	m, err := storage.ReadManifest(ctx, out)
	if err != nil {
		t.Fatalf("no release after the retry: %v", err)
	}
	want := []string{storage.Join(out, storage.SuccessName)}
	for _, s := range m.Shards {
		want = append(want, storage.Join(out, s.Name))
	}
	slices.Sort(want)
	dir, base := storage.Split(out)
	all, _ := storage.ListTree(ctx, dir)
	var got []string
	for _, f := range all {
		if rest := strings.TrimPrefix(f, storage.Clean(dir)+"/"); strings.HasPrefix(rest, base+"/") || strings.HasPrefix(rest, "."+base) {
			got = append(got, f)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("the output and beside it: %q, want exactly the release %q", got, want)
	}
	if report, err := os.ReadFile(reportPath); err != nil {
		t.Errorf("no report of the published release: %v", err)
	} else if sum := sha256.Sum256(report); hex.EncodeToString(sum[:]) != m.ReportSHA256 {
		t.Errorf("the report is not the one the manifest names:\n%s", report)
	}
	text, err := os.ReadFile(keyPath)
	if err != nil {
		t.Fatalf("no key saved for the published release: %v", err)
	}
	k, err := pseudonym.ParseKey(keyPath, text)
	if err != nil || k.Fingerprint() != m.KeyFingerprint {
		t.Errorf("the saved key (fingerprint %s, %v) is not the release's (%s)", k.Fingerprint(), err, m.KeyFingerprint)
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(keyPath), ".*")); len(left) != 0 {
		t.Errorf("pending keys left: %q", left)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		var names []string
		for _, e := range left {
			names = append(names, e.Name())
		}
		t.Errorf("left in TMPDIR: %q", names)
	}
}

// TestSolveKilledAtEveryStage is TestKilledAtEveryStage for a single-file
// release (solve): after a kill before the claim the retry publishes; after
// it, the retry saves the key the dead run left pending and is done (exit
// 0); after a SIGTERM that let the run finish, a retry is refused (the
// file exists). Nothing else is left either way.
func TestSolveKilledAtEveryStage(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.parquet")
	writeSolveInput(t, in, 60)
	for _, stage := range []release.Stage{release.StageBegun, release.StageStaged, release.StageCopied, release.StageClaimed, release.StageSaved} {
		for _, sig := range []string{"KILL", "TERM"} {
			t.Run(fmt.Sprintf("%s/%s", stage, sig), func(t *testing.T) {
				local := t.TempDir()
				tmp := filepath.Join(local, "tmp")
				os.Mkdir(tmp, 0o755)
				out, key := filepath.Join(local, "out", "night.parquet"), filepath.Join(local, "night.key")
				args := []string{"solve", "--input", in, "--output", out, "--k", "4", "--pseudonym_key_out", key, "--quiet"}
				code, log := runChild(t, tmp, string(stage), sig, 0, args...)
				published := stage == release.StageClaimed || stage == release.StageSaved
				if want := map[bool]int{false: 143, true: 0}[published]; sig == "TERM" && code != want || sig == "KILL" && code != 137 {
					t.Fatalf("child exit %d:\n%s", code, log)
				}
				code, log = runChild(t, tmp, "", "", 0, args...)
				if published && sig == "KILL" {
					// The dead run published: its retry saves the key it
					// left pending and is done.
					if code != 0 || !strings.Contains(log, "already holds the release of an earlier run") {
						t.Fatalf("retry of a published file: exit %d:\n%s", code, log)
					}
				} else if published && code != 2 || !published && code != 0 {
					t.Fatalf("retry: exit %d:\n%s", code, log)
				}
				rel, err := matrix.OpenRelease(out, matrix.ReleaseOptions{})
				if err != nil {
					t.Fatal(err)
				}
				text, err := os.ReadFile(key)
				if err != nil {
					t.Fatalf("no key for the published file: %v", err)
				}
				if k, err := pseudonym.ParseKey(key, text); err != nil || k.Fingerprint() != rel.KeyFingerprint {
					t.Errorf("the saved key is not the release's")
				}
				for _, d := range []string{filepath.Dir(out), filepath.Dir(key), tmp} {
					entries, _ := os.ReadDir(d)
					for _, e := range entries {
						if n := e.Name(); n != filepath.Base(out) && n != filepath.Base(key) && n != "out" && n != "tmp" {
							t.Errorf("left in %s: %s", d, n)
						}
					}
				}
			})
		}
	}
}
