package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/smoothanon/smoothanon/gen"
	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/proto/smoothanonpb"
	"github.com/smoothanon/smoothanon/storage"
)

// releaseRows reads a release as its files give it: one row per user in
// list form, one per run of a user's pairs in long form.
func releaseRows(t *testing.T, spec string) (*matrix.Release, map[string][]uint32) {
	t.Helper()
	rel, err := matrix.OpenRelease(spec, matrix.ReleaseOptions{VerifyChecksums: true})
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string][]uint32{}
	err = rel.Read(func(u string, f []uint32) error {
		if _, ok := rows[u]; ok {
			t.Errorf("%s: user %s on two runs of rows", spec, u)
		}
		rows[u] = slices.Clone(f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return rel, rows
}

// TestRunOutputShapeLong: --output_shape long releases the same pairs as
// list form, one row per pair, each user's rows together; the users
// released without features are on no row and counted by the manifest;
// verify and the rerun contract read it as the list form it stands for;
// a manifest that miscounts its users, or a rerun in the other shape, is
// refused.
func TestRunOutputShapeLong(t *testing.T) {
	dir := t.TempDir()
	m, err := gen.UserListsMatrix(gen.UserListsParams{Rows: 1500, Columns: 400, MeanDegree: 6, Zipf: 1.1, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "in.parquet")
	if err := matrix.WriteMatrix(in, m, matrix.WriterOptions{}); err != nil {
		t.Fatal(err)
	}
	run := func(out string, args ...string) (int, string) {
		var stdout, stderr bytes.Buffer
		code := runMain(append([]string{"run", "--input", in, "--output", out, "--k", "8", "--seed", "5", "--shards", "3",
			"--runner", "prism"}, args...), &stdout, &stderr)
		return code, stderr.String()
	}
	verify := func(out string, args ...string) (int, *smoothanonpb.RunReport, string) {
		var stdout, stderr bytes.Buffer
		code := runMain(append([]string{"verify", "--input", in, "--output", out, "--k", "8"}, args...), &stdout, &stderr)
		var r smoothanonpb.RunReport
		if code != 2 {
			if err := protojson.Unmarshal(stdout.Bytes(), &r); err != nil {
				t.Fatalf("verify %s: exit %d, report %q: %v", out, code, stdout.String(), err)
			}
		}
		return code, &r, stderr.String()
	}
	list, long := filepath.Join(dir, "list"), filepath.Join(dir, "long")
	for _, c := range []struct {
		out  string
		args []string
	}{{list, nil}, {long, []string{"--output_shape", "long"}}} {
		if code, stderr := run(c.out, append([]string{"--user_ids", "keep", "--run_id", "n1"}, c.args...)...); code != 0 {
			t.Fatalf("run %s: exit %d: %s", c.out, code, stderr)
		}
	}

	_, want := releaseRows(t, list)
	rel, got := releaseRows(t, long)
	empty := 0
	for u, f := range want {
		if len(f) == 0 {
			empty++
			if _, ok := got[u]; ok {
				t.Errorf("user %s released without features has rows in long form", u)
			}
		} else if !slices.Equal(got[u], f) {
			t.Errorf("user %s: long form %v, list form %v", u, got[u], f)
		}
	}
	if empty == 0 {
		t.Fatal("no user released without features: the test shows nothing about absent users")
	}
	if len(got) != len(want)-empty {
		t.Errorf("long form names %d users, list form %d of which %d without features", len(got), len(want), empty)
	}
	mf := rel.Manifest
	if rel.Shape != matrix.ShapeLong || mf.Version != storage.ManifestVersion || mf.Shape != storage.ShapeLong ||
		mf.Users != int64(m.NumRows()) || rel.Users != int64(m.NumRows()) || len(mf.Shards) != 3 {
		t.Errorf("manifest version %d shape %q users %d (release %v, %d users) shards %d, want %d long, %d users, 3 shards",
			mf.Version, mf.Shape, mf.Users, rel.Shape, rel.Users, len(mf.Shards), storage.ManifestVersion, m.NumRows())
	}
	var entries int64
	for _, f := range got {
		entries += int64(len(f))
	}
	if mf.TotalRows != entries {
		t.Errorf("manifest total rows %d, want the %d pairs", mf.TotalRows, entries)
	}
	listRel, _ := releaseRows(t, list)
	if listRel.Manifest.Version != storage.ListManifestVersion || listRel.Manifest.Shape != "" || listRel.Manifest.Users != 0 {
		t.Errorf("list manifest version %d shape %q users %d, want version %d as before", listRel.Manifest.Version,
			listRel.Manifest.Shape, listRel.Manifest.Users, storage.ListManifestVersion)
	}

	_, lr, _ := verify(list)
	code, r, stderr := verify(long)
	if code != 0 || !r.Valid || r.Rows != int64(m.NumRows()) || r.Jaccard != lr.Jaccard || r.Classes != lr.Classes || r.MinClass != lr.MinClass {
		t.Errorf("verify long: exit %d valid %v rows %d J %v classes %d min %d; list form J %v classes %d min %d: %s",
			code, r.Valid, r.Rows, r.Jaccard, r.Classes, r.MinClass, lr.Jaccard, lr.Classes, lr.MinClass, stderr)
	}

	// The same night again in the other shape is not taken for done.
	if code, stderr := run(long, "--user_ids", "keep", "--run_id", "n1"); code != 2 || !strings.Contains(stderr, "in long form, but this run writes list form") {
		t.Errorf("rerun in list form over the long release: exit %d: %s", code, stderr)
	}
	if code, stderr := run(list, "--user_ids", "keep", "--run_id", "n1", "--output_shape", "long"); code != 2 || !strings.Contains(stderr, "in list form, but this run writes long form") {
		t.Errorf("rerun in long form over the list release: exit %d: %s", code, stderr)
	}

	// Pseudonyms without the key: the users on no row still form their class.
	key := filepath.Join(dir, "key")
	plong := filepath.Join(dir, "plong")
	if code, stderr := run(plong, "--output_shape", "long", "--pseudonym_key_out", key); code != 0 {
		t.Fatalf("pseudonymized long run: exit %d: %s", code, stderr)
	}
	_, withKey, _ := verify(plong, "--pseudonym_key_file", key)
	code, r, stderr = verify(plong)
	if code != 0 || !r.Valid || !r.UsersUnmatched || r.Classes != withKey.Classes || r.MinClass != withKey.MinClass || !withKey.Valid {
		t.Errorf("verify long without the key: exit %d valid %v classes %d min %d; with it valid %v classes %d min %d: %s",
			code, r.Valid, r.Classes, r.MinClass, withKey.Valid, withKey.Classes, withKey.MinClass, stderr)
	}

	// A manifest counting one user more than the release holds: a user
	// dropped would pass for one released without features.
	tampered := filepath.Join(dir, "tampered")
	if err := os.CopyFS(tampered, os.DirFS(long)); err != nil {
		t.Fatal(err)
	}
	tm, err := storage.ReadManifest(context.Background(), tampered)
	if err != nil {
		t.Fatal(err)
	}
	tm.Users++
	tm.Shards[0].Users++
	b, err := json.Marshal(tm)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tampered, storage.SuccessName), b, 0o644); err != nil {
		t.Fatal(err)
	}
	code, r, _ = verify(tampered)
	if code != 1 || r.Valid || !slices.ContainsFunc(r.Problems, func(p string) bool { return strings.Contains(p, "the release counts 1501 users") }) {
		t.Errorf("verify with one user too many in the manifest: exit %d valid %v problems %v", code, r.Valid, r.Problems)
	}
	tm.Users++ // the shards' users no longer add up to it
	b, _ = json.Marshal(tm)
	if err := os.WriteFile(filepath.Join(tampered, storage.SuccessName), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := verify(tampered); code != 2 || !strings.Contains(stderr, "bad manifest: 3 shards with 1501 users, users 1502") {
		t.Errorf("verify with shard users not adding up: exit %d: %s", code, stderr)
	}
}

// TestOutputShapeFlag: anything but list or long is a usage error.
func TestOutputShapeFlag(t *testing.T) {
	for _, v := range []string{"auto", "wide", ""} {
		var stdout, stderr bytes.Buffer
		code := runMain([]string{"run", "--input", "x.parquet", "--output", t.TempDir(), "--k", "2", "--output_shape", v}, &stdout, &stderr)
		if code != 2 || !strings.Contains(stderr.String(), "want list or long") {
			t.Errorf("--output_shape %q: exit %d: %s", v, code, stderr.String())
		}
	}
}

// TestFillLongReleases: linkage reads a long-form release with the users
// its other releases name on none of its rows as released without
// features, when they are the users its manifest counts; else it refuses.
func TestFillLongReleases(t *testing.T) {
	list := matrix.New(0, 0)
	for _, u := range []string{"a", "b", "c", "d"} {
		list.Append(u, []uint32{1})
	}
	long := matrix.New(0, 0)
	long.Append("a", []uint32{1})
	long.Append("b", []uint32{1})
	for _, c := range []struct {
		users int64
		err   bool
	}{{4, false}, {3, true}, {5, true}, {0, true}} {
		rels := []*matrix.Matrix{list, long}
		opened := []*matrix.Release{{Shape: matrix.ShapeList, Users: 4}, {Spec: "night2", Shape: matrix.ShapeLong, Users: c.users}}
		err := fillLongReleases(opened, rels)
		if c.err {
			var ee *exitError
			if !errors.As(err, &ee) || ee.code != 2 || !strings.Contains(err.Error(), "night2 is in long form") {
				t.Errorf("manifest users %d: %v, want a refusal, exit 2", c.users, err)
			}
			continue
		}
		if err != nil || rels[1].NumRows() != 4 || len(rels[1].Row(2)) != 0 || long.NumRows() != 2 {
			t.Errorf("manifest users %d: %v, rows %v", c.users, err, rels[1].Users)
		}
	}
}
