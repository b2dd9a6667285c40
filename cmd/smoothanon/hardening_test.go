package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/pseudonym"
	"github.com/smoothanon/smoothanon/storage"
	"github.com/smoothanon/smoothanon/storage/storagetest"
)

// The attacks of issue 39, one test each: every one of them failed before
// its fix.

// releaseUsers reads the user ids of a release (a file or a directory),
// in file order.
func releaseUsers(t *testing.T, spec string) []string {
	t.Helper()
	_, m, err := readRelease(spec, matrix.ReleaseOptions{}, matrix.ValuesIDs, nil)
	if err != nil {
		t.Fatal(err)
	}
	return m.Users
}

// TestRowOrderJoinsNothing: two nights of one input, in the same row
// order, released under fresh keys: a user's row position in one release
// says nothing of its position in the other, and no release keeps the
// input's row order under its pseudonyms (before, row i of a solve release
// was HMAC(input row i), so two nights joined by position).
func TestRowOrderJoinsNothing(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.parquet")
	m := writeSolveInput(t, in, 400)
	for _, command := range [][]string{
		{"solve", "--k", "4"},
		{"baseline", "--method", "mondrian", "--k", "4"},
		{"run", "--k", "4", "--chunk_size", "200"},
	} {
		t.Run(command[0], func(t *testing.T) {
			var pos [2]map[string]int // input row -> release row
			for night := range 2 {
				out := filepath.Join(t.TempDir(), "night")
				if command[0] != "run" {
					out += ".parquet"
				}
				key := filepath.Join(t.TempDir(), "key")
				args := append(slices.Clone(command), "--input", in, "--output", out, "--pseudonym_key_out", key)
				if code, _, stderr := cli(args...); code != 0 {
					t.Fatalf("night %d: exit %d: %s", night, code, stderr)
				}
				text, _ := os.ReadFile(key)
				k, err := pseudonym.ParseKey(key, text)
				if err != nil {
					t.Fatal(err)
				}
				users := releaseUsers(t, out)
				at := map[string]int{}
				for i, u := range users {
					at[u] = i
				}
				mp := pseudonym.NewMapper(k)
				pos[night] = map[string]int{}
				same := 0
				for i, u := range m.Users {
					p, ok := at[mp.ID(u)]
					if !ok {
						t.Fatalf("user %d missing from night %d", i, night)
					}
					pos[night][u] = p
					if p == i {
						same++
					}
				}
				if same > len(m.Users)/20 {
					t.Errorf("night %d: %d of %d rows keep their input position", night, same, len(m.Users))
				}
			}
			same := 0
			for _, u := range m.Users {
				if pos[0][u] == pos[1][u] {
					same++
				}
			}
			if same > len(m.Users)/20 {
				t.Errorf("%d of %d users sit at the same row on both nights: row position joins them", same, len(m.Users))
			}
		})
	}
}

// TestOverwriteNeverDeletesInput: an output that is, holds or lies among
// the input is refused before any work, with or without --overwrite; the
// input and an unrelated file survive.
func TestOverwriteNeverDeletesInput(t *testing.T) {
	d := t.TempDir()
	in := filepath.Join(d, "in.parquet")
	writeSolveInput(t, in, 40)
	other := filepath.Join(d, "notes.txt")
	os.WriteFile(other, []byte("keep me"), 0o644)
	for _, args := range [][]string{
		{"run", "--input", d, "--output", d, "--k", "4", "--overwrite"},
		{"run", "--input", filepath.Join(d, "*.parquet"), "--output", d, "--k", "4", "--overwrite"},
		{"run", "--input", in, "--output", d, "--k", "4", "--overwrite"},
		{"run", "--input", in, "--output", in, "--k", "4", "--overwrite"},
		{"solve", "--input", in, "--output", in, "--k", "4", "--overwrite"},
		{"solve", "--input", d, "--output", filepath.Join(d, "r1.parquet"), "--k", "4"},
		{"baseline", "--input", in, "--output", in, "--k", "4", "--overwrite"},
	} {
		code, _, stderr := cli(args...)
		if code != 2 || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%q: exit %d %q, want 2 and one line", args, code, stderr)
		}
		for _, f := range []string{in, other} {
			if _, err := os.Stat(f); err != nil {
				t.Fatalf("%q deleted %s", args, f)
			}
		}
	}
	if entries, _ := os.ReadDir(d); len(entries) != 2 {
		t.Errorf("the input directory gained files: %v", entries)
	}
}

// TestOutputsChecked: every output is checked before the work — distinct,
// writable, not a glob, not existing — so no run fails after publishing.
func TestOutputsChecked(t *testing.T) {
	d := t.TempDir()
	in := filepath.Join(d, "in.parquet")
	writeSolveInput(t, in, 40)
	file := filepath.Join(d, "afile")
	os.WriteFile(file, nil, 0o644)
	existing := filepath.Join(d, "existing.parquet")
	writeSolveInput(t, existing, 10)
	out := filepath.Join(d, "out")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--output", out, "--metrics_out", out}, "are both"},
		{[]string{"run", "--output", out, "--pseudonym_key_out", out}, "are both"},
		{[]string{"solve", "--output", out + ".parquet", "--metrics_out", out + ".parquet"}, "are both"},
		{[]string{"run", "--output", out, "--metrics_out", filepath.Join(file, "report.json")}, "--metrics_out"},
		{[]string{"solve", "--output", out + ".parquet", "--pseudonym_key_out", filepath.Join(file, "key")}, "--pseudonym_key_out"},
		{[]string{"run", "--output", filepath.Join(d, "g*")}, "glob character"},
		{[]string{"run", "--output", out, "--metrics_out", filepath.Join(d, "r?.json")}, "glob character"},
		{[]string{"run", "--output", file}, "is a file: run writes a release directory"},
		{[]string{"solve", "--output", existing}, "exists (pass --overwrite"},
		{[]string{"solve", "--output", existing, "--overwrite"}, "is not a release"},
		{[]string{"run", "--output", out, "--run_id", "a/../../../escape"}, "--run_id"},
		{[]string{"run", "--output", out, "--run_id", "a\nb"}, "--run_id"},
	} {
		args := append([]string{c.args[0], "--input", in, "--k", "4"}, c.args[1:]...)
		code, _, stderr := cli(args...)
		if code != 2 || !strings.Contains(stderr, c.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%q: exit %d %q, want 2 and one line with %q", c.args, code, stderr, c.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Fatalf("%q wrote %s", c.args, out)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(d, ".*")); len(left) != 0 {
		t.Errorf("refused runs left %q", left)
	}
}

// TestBadInputOneLine: bad input is exit 2 with one line naming the file
// and row, from run (inside the job) as from solve: repeated ids (without
// the id), ids that are not UTF-8, and a FIFO, which used to block.
func TestBadInputOneLine(t *testing.T) {
	d := t.TempDir()
	dup := filepath.Join(d, "dup.parquet")
	m := writeSolveInputMatrix(60)
	m.Append("user007", []uint32{99}) // a repeat with other features: another chunk
	matrix.WriteMatrix(dup, m, matrix.WriterOptions{})
	bad := filepath.Join(d, "bad.parquet")
	b := writeSolveInputMatrix(60)
	b.Users[42] = "user\xff"
	matrix.WriteMatrix(bad, b, matrix.WriterOptions{})
	fifo := filepath.Join(d, "fifo.parquet")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		in, want string
	}{
		{dup, dup + ": row 60: user id repeats row 7 (merge repeats"},
		{bad, bad + ": row 42: column user_id: not valid UTF-8"},
		{fifo, fifo + ": is a named pipe, not a regular file"},
	} {
		for _, command := range []string{"solve", "run"} {
			out := filepath.Join(t.TempDir(), "out")
			done := make(chan struct{})
			var code int
			var stderr string
			go func() {
				defer close(done)
				args := []string{command, "--input", c.in, "--output", out, "--k", "4"}
				if command == "run" {
					args = append(args, "--chunk_size", "40")
				}
				code, _, stderr = cli(args...)
			}()
			select {
			case <-done:
			case <-time.After(60 * time.Second):
				t.Fatalf("%s --input %s did not end", command, c.in)
			}
			last := stderr[strings.LastIndex(strings.TrimSuffix(stderr, "\n"), "\n")+1:]
			if code != 2 || !strings.Contains(last, c.want) || strings.Contains(stderr, "user007") || strings.Contains(stderr, "\xff") {
				t.Errorf("%s --input %s: exit %d, last line %q; want 2 and %q", command, c.in, code, last, c.want)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("%s --input %s published", command, c.in)
			}
		}
	}
}

// TestUserIDWarnings: kept ids and a given key are said on stderr; the
// default pseudonyms need no warning.
func TestUserIDWarnings(t *testing.T) {
	d := t.TempDir()
	in := filepath.Join(d, "in.parquet")
	writeSolveInput(t, in, 40)
	key := filepath.Join(d, "key")
	k, _ := pseudonym.NewKey()
	pseudonym.WriteKey(key, k)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--user_ids", "keep"}, "warning: --user_ids keep"},
		{[]string{"--pseudonym_key_file", key}, "warning: a given pseudonym key (fingerprint " + k.Fingerprint() + ")"},
		{nil, ""},
	} {
		for _, command := range []string{"solve", "baseline"} {
			args := append([]string{command, "--input", in, "--output", filepath.Join(t.TempDir(), "o.parquet"), "--k", "4", "--quiet"}, c.args...)
			code, _, stderr := cli(args...)
			if code != 0 || c.want != "" && !strings.Contains(stderr, c.want) || c.want == "" && strings.Contains(stderr, "warning") {
				t.Errorf("%q: exit %d %q, want %q", args, code, stderr, c.want)
			}
		}
	}
}

// TestBaselinePseudonymizes: baseline releases pseudonyms by default, like
// run and solve, marked and fingerprinted.
func TestBaselinePseudonymizes(t *testing.T) {
	d := t.TempDir()
	in := filepath.Join(d, "in.parquet")
	m := writeSolveInput(t, in, 40)
	for _, method := range [][]string{{"--method", "mondrian", "--k", "4"}, {"--method", "rr_edge", "--epsilon", "1"}} {
		out := filepath.Join(t.TempDir(), "o.parquet")
		if code, _, stderr := cli(append([]string{"baseline", "--input", in, "--output", out}, method...)...); code != 0 {
			t.Fatalf("%q: exit %d %s", method, code, stderr)
		}
		rel, err := matrix.OpenRelease(out, matrix.ReleaseOptions{})
		if err != nil || rel.UserIDs != "pseudonym" || rel.KeyFingerprint == "" {
			t.Errorf("%q: release %+v %v, want pseudonymized and fingerprinted", method, rel, err)
		}
		for _, u := range releaseUsers(t, out) {
			if slices.Contains(m.Users, u) {
				t.Fatalf("%q released the input id %q", method, u)
			}
		}
	}
}

// TestConcurrentRunsOneWinner: two runs of one night racing to publish
// (both held at the staged stage, then let go together) end with one
// release, the winner exit 0 and its key saved, the loser exit 4, one
// line, no key and a report saying it did not publish.
func TestConcurrentRunsOneWinner(t *testing.T) {
	d := t.TempDir()
	in := filepath.Join(d, "in.parquet")
	writeSolveInput(t, in, 80)
	out := filepath.Join(d, "rel")
	gate := filepath.Join(d, "go")
	type result struct {
		code int
		log  string
	}
	results := make(chan result, 2)
	keys, reports := [2]string{}, [2]string{}
	for i := range 2 {
		keys[i], reports[i] = filepath.Join(d, fmt.Sprintf("key%d", i)), filepath.Join(d, fmt.Sprintf("report%d.json", i))
		go func() {
			code, log := runChild(t, t.TempDir(), "staged", "WAIT="+gate, 0, "run", "--input", in, "--output", out, "--k", "4",
				"--chunk_size", "40", "--run_id", "2026-11-27", "--pseudonym_key_out", keys[i], "--metrics_out", reports[i])
			results <- result{code, log}
		}()
	}
	// Both wait at the gate once staged: then let them race.
	deadline := time.Now().Add(60 * time.Second)
	for {
		if n, _ := filepath.Glob(filepath.Join(d, ".rel.staging-*")); len(n) == 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(time.Second)
	os.WriteFile(gate, nil, 0o644)
	var codes []int
	for range 2 {
		r := <-results
		codes = append(codes, r.code)
		if r.code == exitLostRace && (!strings.Contains(r.log, "published "+out+" first; this run published nothing")) {
			t.Errorf("the loser said:\n%s", r.log)
		}
	}
	slices.Sort(codes)
	if !slices.Equal(codes, []int{0, exitLostRace}) {
		t.Fatalf("exit codes %v, want one 0 and one %d", codes, exitLostRace)
	}
	m, err := storage.ReadManifest(context.Background(), out)
	if err != nil {
		t.Fatal(err)
	}
	saved := 0
	for i := range 2 {
		var r map[string]any
		b, _ := os.ReadFile(reports[i])
		json.Unmarshal(b, &r)
		text, err := os.ReadFile(keys[i])
		if err != nil {
			if r["published"] != false {
				t.Errorf("run %d saved no key but its report says published=%v", i, r["published"])
			}
			continue
		}
		saved++
		k, _ := pseudonym.ParseKey(keys[i], text)
		if k.Fingerprint() != m.KeyFingerprint || r["published"] != true {
			t.Errorf("run %d: saved key %s, release key %s, report published=%v", i, k.Fingerprint(), m.KeyFingerprint, r["published"])
		}
	}
	if saved != 1 {
		t.Errorf("%d keys saved, want the winner's only", saved)
	}
}

// TestUnreachableEndpoint: a job endpoint that refuses connections or
// never answers fails the run within --connect_timeout, one line, exit 3
// (before, run hung until killed).
func TestUnreachableEndpoint(t *testing.T) {
	d := t.TempDir()
	in := filepath.Join(d, "in.parquet")
	writeSolveInput(t, in, 40)
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			defer c.Close() // accept, never answer
		}
	}()
	closed, _ := net.Listen("tcp", "127.0.0.1:0")
	closedAddr := closed.Addr().String()
	closed.Close()
	for _, ep := range []string{closedAddr, silent.Addr().String()} {
		start := time.Now()
		code, _, stderr := cli("run", "--input", in, "--output", filepath.Join(t.TempDir(), "o"), "--k", "4",
			"--runner", "flink", "--endpoint", ep, "--connect_timeout", "2s")
		took := time.Since(start)
		t.Logf("endpoint %s: exit %d after %v", ep, code, took.Round(time.Millisecond))
		if code != 3 || took > 20*time.Second || !strings.Contains(stderr, "job endpoint "+ep+" did not answer within 2s") {
			t.Errorf("endpoint %s: exit %d after %v: %q", ep, code, took, stderr)
		}
	}
}

// TestRunLeavesNoTempFiles: a run leaves nothing in the temp directory
// (Beam's loopback runner leaves a file per job in the one it is given).
func TestRunLeavesNoTempFiles(t *testing.T) {
	d := t.TempDir()
	in := filepath.Join(d, "in.parquet")
	writeSolveInput(t, in, 40)
	tmp := filepath.Join(d, "tmp")
	os.Mkdir(tmp, 0o755)
	if code, log := runChild(t, tmp, "", "", 0, "run", "--input", in, "--output", filepath.Join(d, "o"), "--k", "4"); code != 0 {
		t.Fatalf("exit %d: %s", code, log)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("left in TMPDIR: %v", left)
	}
}

// TestUnreachableStore: an object store that refuses connections or never
// answers fails solve and run within the documented bound (3 ×
// --connect_timeout + 10 s), one line naming the URI, exit 2 (before, GCS
// retried for 10.5 minutes and a silent endpoint hung for good).
func TestUnreachableStore(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for timeouts; runs without -short")
	}
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	closed, _ := net.Listen("tcp", "127.0.0.1:0")
	closedAddr := closed.Addr().String()
	closed.Close()
	local := filepath.Join(t.TempDir(), "in.parquet")
	writeSolveInput(t, local, 40)
	for _, host := range []string{closedAddr, silent.Addr().String()} {
		t.Setenv("STORAGE_EMULATOR_HOST", host)
		for _, args := range [][]string{
			{"solve", "--input", "gs://b/in.parquet", "--output", filepath.Join(t.TempDir(), "o.parquet")},
			{"run", "--input", local, "--output", "gs://b/rel"},
		} {
			start := time.Now()
			code, _, stderr := cli(append(args, "--k", "4", "--connect_timeout", "2s")...)
			took := time.Since(start)
			t.Logf("%s with the store at %s: exit %d after %v", args[0], host, code, took.Round(time.Millisecond))
			if code != 2 || took > 3*2*time.Second+10*time.Second || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "gs://b/") {
				t.Errorf("%s with the store at %s: exit %d after %v: %q", args[0], host, code, took, stderr)
			}
		}
	}
}

// TestBucketNames: on GCS and S3 a release is published exactly where
// --output names it, non-ASCII, '%', '#' and spaces included (before, S3
// copies of such names failed, "%41" was decoded and "#" cut the name);
// a glob output is refused before it could list and delete what matches
// (before, --output 'gs://b/*' --overwrite deleted unrelated objects); and
// an output holding the input is refused on a bucket too.
func TestBucketNames(t *testing.T) {
	d := t.TempDir()
	in := filepath.Join(d, "in.parquet")
	writeSolveInput(t, in, 40)
	ctx := context.Background()
	for _, store := range []string{"gs", "s3"} {
		t.Run(store, func(t *testing.T) {
			storagetest.Start(t, store, "b")
			other := store + "://b/raw/keep.txt"
			storage.WriteFile(ctx, other, []byte("not ours"))
			out := store + "://b/nights/über %41 #1"
			if code, _, stderr := cli("run", "--input", in, "--output", out, "--k", "4", "--run_id", "n1"); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if m, err := storage.ReadManifest(ctx, out); err != nil || m.RunID != "n1" {
				t.Fatalf("the release is not at %q: %v", out, err)
			}
			if code, _, stderr := cli("verify", "--input", in, "--output", out, "--k", "4"); code != 0 {
				t.Errorf("verify %q: exit %d %s", out, code, stderr)
			}
			for _, bad := range []string{store + "://b/*", store + "://b/n*"} {
				if code, _, stderr := cli("run", "--input", in, "--output", bad, "--k", "4", "--overwrite"); code != 2 || !strings.Contains(stderr, "glob character") {
					t.Errorf("--output %s: exit %d %q", bad, code, stderr)
				}
			}
			inputs := store + "://b/raw/*.parquet"
			up := store + "://b/raw/in.parquet"
			b, _ := os.ReadFile(in)
			storage.WriteFile(ctx, up, b)
			if code, _, stderr := cli("run", "--input", inputs, "--output", store+"://b/raw", "--k", "4", "--overwrite"); code != 2 || !strings.Contains(stderr, "holds the input file") {
				t.Errorf("output holding the input: exit %d %q", code, stderr)
			}
			for _, f := range []string{other, up} {
				if ok, _ := storage.Exists(ctx, f); !ok {
					t.Errorf("%s was deleted", f)
				}
			}
		})
	}
}
