package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/smoothanon/smoothanon/gen"
	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/proto/smoothanonpb"
	"github.com/smoothanon/smoothanon/storage"
)

func TestResolveDate(t *testing.T) {
	// 00:30 UTC on the 1st is still the previous day in New York: the UTC day counts.
	now := time.Date(2026, 3, 1, 0, 30, 0, 0, time.UTC).In(time.FixedZone("EST", -5*3600))
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"today", "2026-03-01"},
		{"yesterday", "2026-02-28"},
		{"2026-11-23", "2026-11-23"},
		{"2024-02-29", "2024-02-29"},
	} {
		if got, err := resolveDate(c.in, now); err != nil || got != c.want {
			t.Errorf("resolveDate(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"2026-13-01", "2026-1-2", "2025-02-29", "23.11.2026", "tomorrow", "2026-11-23T00:00:00Z", " 2026-11-23"} {
		var ee *exitError
		if got, err := resolveDate(bad, now); !errors.As(err, &ee) || ee.code != 2 || !strings.Contains(err.Error(), bad) {
			t.Errorf("resolveDate(%q) = %q, %v; want an exit-2 error naming it", bad, got, err)
		}
	}
}

func TestExpandDate(t *testing.T) {
	for _, c := range []struct{ value, date, want string }{
		{"gs://b/in/dt={date}/*.parquet", "2026-11-23", "gs://b/in/dt=2026-11-23/*.parquet"},
		{"gs://b/rel/dt={date-1}", "2026-03-01", "gs://b/rel/dt=2026-02-28"},
		{"r/{date-7},r/{date}", "2026-01-03", "r/2025-12-27,r/2026-01-03"},
		{"plain/path", "", "plain/path"},
		{"plain/path", "2026-11-23", "plain/path"},
	} {
		if got, err := expandDate("input", c.value, c.date); err != nil || got != c.want {
			t.Errorf("expandDate(%q, %q) = %q, %v; want %q", c.value, c.date, got, err, c.want)
		}
	}
	for _, c := range []struct{ value, date, msg string }{
		{"in/dt={date}", "", "--date is not set"},
		{"in/dt={date+1}", "2026-11-23", "malformed"},
		{"in/dt={dates}", "2026-11-23", "malformed"},
	} {
		var ee *exitError
		if _, err := expandDate("input", c.value, c.date); !errors.As(err, &ee) || ee.code != 2 ||
			!strings.Contains(err.Error(), c.value) || !strings.Contains(err.Error(), c.msg) || strings.Contains(err.Error(), "\n") {
			t.Errorf("expandDate(%q, %q) = %v; want one exit-2 line naming it with %q", c.value, c.date, err, c.msg)
		}
	}
}

// TestNightly runs two nights end to end on prism with date-templated
// paths: each night's report carries the date and its manifest the date as
// run id; a rerun of a published night exits 0 and writes no key, report or
// release; a missing or empty night's input is one exit-2 line naming the
// templated path and leaves no key; linkage takes the same templates.
func TestNightly(t *testing.T) {
	dir := t.TempDir()
	writeNight := func(date string, seed int64) {
		m, err := gen.SBM(gen.SBMParams{N: 200, S: 10, Q: 0.6, P: 0.01, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		d := filepath.Join(dir, "in", "dt="+date)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := matrix.WriteMatrix(filepath.Join(d, "part-0.parquet"), m, matrix.WriterOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{"keys", "reports"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	run := func(date string) (int, string) {
		var stdout, stderr bytes.Buffer
		code := runMain([]string{"run", "--date", date, "--runner", "prism", "--k", "4", "--seed", "1",
			"--input", filepath.Join(dir, "in", "dt={date}", "*.parquet"),
			"--output", filepath.Join(dir, "rel", "dt={date}"),
			"--metrics_out", filepath.Join(dir, "reports", "{date}.json"),
			"--pseudonym_key_out", filepath.Join(dir, "keys", "{date}.key")}, &stdout, &stderr)
		return code, stderr.String()
	}
	for i, date := range []string{"2026-11-22", "2026-11-23"} {
		writeNight(date, int64(i+1))
		if code, msg := run(date); code != 0 {
			t.Fatalf("night %s: exit %d: %s", date, code, msg)
		}
		var rep smoothanonpb.RunReport
		b, err := os.ReadFile(filepath.Join(dir, "reports", date+".json"))
		if err != nil || protojson.Unmarshal(b, &rep) != nil || rep.Date != date || !rep.Valid || rep.Rows != 200 {
			t.Fatalf("night %s report: %v date=%q valid=%v rows=%d", date, err, rep.Date, rep.Valid, rep.Rows)
		}
		m, err := storage.ReadManifest(t.Context(), filepath.Join(dir, "rel", "dt="+date))
		if err != nil || m.RunID != date {
			t.Fatalf("night %s manifest: %v %+v, want run id %s", date, err, m, date)
		}
	}
	// The rerun: exit 0, same key bytes, no new report, the release untouched.
	key := filepath.Join(dir, "keys", "2026-11-23.key")
	keyBefore, _ := os.ReadFile(key)
	success := filepath.Join(dir, "rel", "dt=2026-11-23", storage.SuccessName)
	manBefore, _ := os.ReadFile(success)
	report := filepath.Join(dir, "reports", "2026-11-23.json")
	os.Remove(report)
	if code, msg := run("2026-11-23"); code != 0 || !strings.Contains(msg, "nothing to do") {
		t.Fatalf("rerun: exit %d: %s", code, msg)
	}
	if after, _ := os.ReadFile(key); len(keyBefore) == 0 || !bytes.Equal(after, keyBefore) {
		t.Error("the rerun changed the night's key")
	}
	if after, _ := os.ReadFile(success); !bytes.Equal(after, manBefore) {
		t.Error("the rerun republished the release")
	}
	if _, err := os.Stat(report); err == nil {
		t.Error("the rerun wrote a report")
	}
	// A night without input, and a night with an empty input: one line
	// naming the templated input, exit 2, no key left behind.
	emptyDir := filepath.Join(dir, "in", "dt=2026-11-25")
	if err := os.MkdirAll(emptyDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := matrix.WriteMatrix(filepath.Join(emptyDir, "part-0.parquet"), matrix.New(0, 0), matrix.WriterOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, date := range []string{"2026-11-24", "2026-11-25"} {
		code, msg := run(date)
		if code != 2 || !strings.Contains(msg, "dt="+date) || strings.Count(strings.TrimSpace(msg), "\n") != 0 {
			t.Errorf("night %s: exit %d, %q; want exit 2 and one line naming dt=%s", date, code, msg, date)
		}
		if _, err := os.Stat(filepath.Join(dir, "keys", date+".key")); err == nil {
			t.Errorf("night %s left a key behind", date)
		}
		if _, err := os.Stat(filepath.Join(dir, "rel", "dt="+date, storage.SuccessName)); err == nil {
			t.Errorf("night %s published", date)
		}
	}
	// The linkage check against the previous night, by template.
	var stdout, stderr bytes.Buffer
	code := runMain([]string{"linkage", "--date", "2026-11-23", "--k", "4",
		"--release", filepath.Join(dir, "rel", "dt={date-1}"), "--release", filepath.Join(dir, "rel", "dt={date}")}, &stdout, &stderr)
	var lr struct {
		Releases []struct {
			Name string `json:"name"`
			Rows int64  `json:"rows"`
		} `json:"releases"`
		Mode string `json:"mode"`
	}
	if code != 0 || json.Unmarshal(stdout.Bytes(), &lr) != nil || lr.Mode != "classes" || len(lr.Releases) != 2 {
		t.Fatalf("linkage: exit %d: %s %s", code, stdout.String(), stderr.String())
	}
	for i, date := range []string{"2026-11-22", "2026-11-23"} {
		if r := lr.Releases[i]; r.Name != filepath.Join(dir, "rel", "dt="+date) || r.Rows != 200 {
			t.Errorf("linkage release %d = %+v, want dt=%s with 200 rows", i, r, date)
		}
	}
	// Templates without --date are usage errors, in run and in linkage.
	for _, args := range [][]string{
		{"run", "--k", "4", "--input", filepath.Join(dir, "in", "dt={date}"), "--output", filepath.Join(dir, "x")},
		{"run", "--k", "4", "--date", "2026-02-30", "--input", filepath.Join(dir, "in", "dt={date}"), "--output", filepath.Join(dir, "x")},
		{"linkage", "--k", "4", "--release", "a/{date-1}", "--release", "a/{date}"},
	} {
		stderr.Reset()
		if code := runMain(args, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "date") {
			t.Errorf("%q: exit %d, %s; want 2", args, code, stderr.String())
		}
	}
}
