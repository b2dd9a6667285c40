package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/smoothanon/smoothanon/linkage"
	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/pseudonym"
	"github.com/smoothanon/smoothanon/storage"
)

// writeReleaseDir publishes shards as a directory release in dir, as run
// does: shards named with a run token and carrying md, then a version 2
// _SUCCESS with their sizes, rows and CRC-32Cs, and the key fingerprint
// and user id mode of md.
func writeReleaseDir(t *testing.T, dir string, md map[string]string, shards ...*matrix.Matrix) *storage.Manifest {
	t.Helper()
	ctx := context.Background()
	if err := storage.MkdirAll(dir); err != nil {
		t.Fatal(err)
	}
	m := &storage.Manifest{Version: storage.ManifestVersion, RunID: "r", UserIDs: md[matrix.MetaUserIDs], KeyFingerprint: md[matrix.MetaKeyFingerprint]}
	if m.UserIDs == "" {
		m.UserIDs = pseudonym.Keep.String()
	}
	for i, sm := range shards {
		name := fmt.Sprintf("part-%05d-of-%05d-00000000beef.parquet", i, len(shards))
		uri := storage.Join(dir, name)
		if err := matrix.WriteMatrix(uri, sm, matrix.WriterOptions{Metadata: md}); err != nil {
			t.Fatal(err)
		}
		b, err := storage.ReadFile(ctx, uri)
		if err != nil {
			t.Fatal(err)
		}
		crc := crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli))
		m.Shards = append(m.Shards, storage.Shard{Name: name, Size: int64(len(b)), Rows: int64(sm.NumRows()), CRC32C: &crc})
		m.TotalRows += int64(sm.NumRows())
	}
	if err := storage.WriteManifest(ctx, dir, m); err != nil {
		t.Fatal(err)
	}
	return m
}

// releaseMD is the metadata of a release's files; fp "" for kept ids.
func releaseMD(fp string) map[string]string {
	md := map[string]string{matrix.MetaRelease: matrix.ReleaseFormat, "x.note": "tamper-me-0"}
	if fp != "" {
		md[matrix.MetaKeyFingerprint] = fp
		md[matrix.MetaUserIDs] = pseudonym.Pseudonymize.String()
	}
	return md
}

func usersMatrix(rows map[string][]uint32) *matrix.Matrix {
	m := matrix.New(0, 0)
	for _, u := range []string{"a", "b", "c", "d", "e", "x", "y", "z", "w"} {
		if f, ok := rows[u]; ok {
			m.Append(u, f)
		}
	}
	return m
}

// TestLinkageSharedKey: releases pseudonymized under one key exit 1 with
// one line naming the pair and the fingerprint, and are listed in the
// report, even when their ids would not join (or join safely); releases
// under different keys link as before.
func TestLinkageSharedKey(t *testing.T) {
	dir := t.TempDir()
	const f, g = "f00df00df00df00d", "0123456789abcdef"
	one := usersMatrix(map[string][]uint32{"a": {1}, "b": {1}, "c": {2}, "d": {2}})
	other := usersMatrix(map[string][]uint32{"x": {1}, "y": {1}, "z": {2}, "w": {2}})
	file := func(name string, m *matrix.Matrix, fp string) string {
		p := filepath.Join(dir, name)
		if err := matrix.WriteMatrix(p, m, matrix.WriterOptions{Metadata: releaseMD(fp)}); err != nil {
			t.Fatal(err)
		}
		return p
	}
	r1F, r2F, r3G := file("r1.parquet", one, f), file("r2.parquet", other, f), file("r3.parquet", other, g)
	dirF := filepath.Join(dir, "d")
	writeReleaseDir(t, dirF, releaseMD(f), other)
	noKey := file("keep.parquet", one, "")

	line := func(a, b int) string {
		return fmt.Sprintf("smoothanon linkage: releases %d and %d share a pseudonym key (fingerprint %s): their user ids join, so the series is not protected\n", a, b, f)
	}
	for _, c := range []struct {
		name     string
		releases []string
		code     int
		last     string // the last line of stderr
		shared   []linkage.KeyShare
	}{
		{"disjoint ids, one key", []string{r1F, r2F}, 1, line(1, 2), []linkage.KeyShare{{A: 1, B: 2, Fingerprint: f}}},
		{"a directory and a file, one key", []string{r1F, dirF}, 1, line(1, 2), []linkage.KeyShare{{A: 1, B: 2, Fingerprint: f}}},
		{"same release twice", []string{r1F, r1F}, 1, line(1, 2), []linkage.KeyShare{{A: 1, B: 2, Fingerprint: f}}},
		{"first and third", []string{r1F, r3G, dirF}, 1, line(1, 3), []linkage.KeyShare{{A: 1, B: 3, Fingerprint: f}}},
		{"different keys", []string{r1F, r3G}, 0, "", nil},
		{"no key recorded", []string{noKey, noKey}, 0, "", nil},
	} {
		args := []string{"linkage", "--k", "2"}
		for _, r := range c.releases {
			args = append(args, "--release", r)
		}
		code, stdout, stderr := genCLI(args...)
		var r linkage.Report
		if err := json.Unmarshal([]byte(stdout), &r); err != nil {
			t.Fatalf("%s: %v: %s", c.name, err, stdout)
		}
		lines := strings.SplitAfter(stderr, "\n")
		last := lines[len(lines)-2]
		if code != c.code || (c.last != "" && last != c.last) || fmt.Sprint(r.SharedKeys) != fmt.Sprint(c.shared) {
			t.Errorf("%s: exit %d, shared %v, stderr %q; want %d, %v, last line %q", c.name, code, r.SharedKeys, stderr, c.code, c.shared, c.last)
		}
		if c.name == "different keys" && (r.Releases[0].KeyFingerprint != f || r.Releases[1].KeyFingerprint != g) {
			t.Errorf("fingerprints not reported: %+v", r.Releases)
		}
	}
}

// TestReleaseReaders: verify --output and linkage --release take a release
// directory or file only, check every shard against _SUCCESS (verify its
// CRC-32C too, by reading local shards), and refuse anything else with
// one line and exit 2.
func TestReleaseReaders(t *testing.T) {
	dir := t.TempDir()
	in := writeVerifyFile(t, filepath.Join(dir, "in.parquet"),
		verifyRow{"a", []uint32{1, 2}}, verifyRow{"b", []uint32{1, 2}}, verifyRow{"c", []uint32{5}}, verifyRow{"d", []uint32{5}})
	shards := []*matrix.Matrix{
		usersMatrix(map[string][]uint32{"a": {1, 2}, "b": {1, 2}}),
		usersMatrix(map[string][]uint32{"c": {5}, "d": {5}}),
	}
	fresh := func(name string) (string, string) {
		rel := filepath.Join(dir, name)
		m := writeReleaseDir(t, rel, releaseMD(""), shards...)
		return rel, filepath.Join(rel, m.Shards[1].Name)
	}
	good, goodShard := fresh("good")
	for _, args := range [][]string{
		{"verify", "--input", in, "--k", "2", "--output", good},
		{"linkage", "--k", "2", "--release", good, "--release", good},
	} {
		if code, _, stderr := genCLI(args...); code != 0 {
			t.Fatalf("%q: exit %d: %s", args, code, stderr)
		}
	}

	// The same size and rows, other bytes: only the CRC-32C tells.
	tampered, tShard := fresh("tampered")
	b, _ := os.ReadFile(tShard)
	os.WriteFile(tShard, bytes.Replace(b, []byte("tamper-me-0"), []byte("tamper-me-1"), 1), 0o644)
	missing, mShard := fresh("missing")
	os.Remove(mShard)
	partial, _ := fresh("partial")
	os.Remove(filepath.Join(partial, storage.SuccessName))
	fifo := filepath.Join(dir, "pipe.parquet")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	m, _ := storage.ReadManifest(context.Background(), tampered)
	crcs := fmt.Sprintf("CRC32C 0x%08x, _SUCCESS says 0x%08x", crc32.Checksum(bytes.Replace(b, []byte("tamper-me-0"), []byte("tamper-me-1"), 1), crc32.MakeTable(crc32.Castagnoli)), *m.Shards[1].CRC32C)
	for _, c := range []struct {
		release, want string
		linkage       bool // linkage refuses it too (it does not read data for CRCs)
	}{
		{tampered, tShard + ": " + crcs, false},
		{missing, mShard + ": shard listed in _SUCCESS is missing", true},
		{partial, partial + ": not a published release: no _SUCCESS", true},
		{filepath.Join(good, "*.parquet"), filepath.Join(good, "*.parquet") + ": a glob or list is not a release: name the release directory, not its shards", true},
		{goodShard, goodShard + ": is a shard of the release " + good + " (it holds _SUCCESS): name the release directory, not its shards", true},
		{fifo, fifo + ": is a named pipe, not a regular file", true},
	} {
		runs := map[string][]string{"verify": {"verify", "--input", in, "--k", "2", "--output", c.release}}
		if c.linkage {
			runs["linkage"] = []string{"linkage", "--k", "2", "--release", good, "--release", c.release}
		}
		for name, args := range runs {
			done := make(chan struct{})
			var code int
			var stderr string
			go func() { code, _, stderr = genCLI(args...); close(done) }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatalf("%s %s: blocked", name, c.release)
			}
			if want := "smoothanon " + name + ": " + c.want + "\n"; code != 2 || stderr != want {
				t.Errorf("%s %s: exit %d, stderr %q; want 2, %q", name, c.release, code, stderr, want)
			}
		}
	}
}

// TestVerifyKeyFingerprint: a key that is not the release's is refused
// before any check, instead of reporting every user missing.
func TestVerifyKeyFingerprint(t *testing.T) {
	dir := t.TempDir()
	in := writeVerifyFile(t, filepath.Join(dir, "in.parquet"), verifyRow{"a", []uint32{1}}, verifyRow{"b", []uint32{1}})
	key, other := mustKey(t), mustKey(t)
	keyFile := filepath.Join(dir, "key")
	if err := pseudonym.WriteKey(keyFile, other); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.parquet")
	pm, err := pseudonym.Matrix(usersMatrix(map[string][]uint32{"a": {1}, "b": {1}}), key)
	if err != nil {
		t.Fatal(err)
	}
	if err := matrix.WriteMatrix(out, pm, matrix.WriterOptions{Metadata: releaseMD(key.Fingerprint())}); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := genCLI("verify", "--input", in, "--output", out, "--k", "2", "--pseudonym_key_file", keyFile)
	want := fmt.Sprintf("smoothanon verify: %s was pseudonymized under another key (key fingerprint %s; the key given has %s)\n", out, key.Fingerprint(), other.Fingerprint())
	if code != 2 || stderr != want {
		t.Errorf("exit %d, stderr %q; want 2, %q", code, stderr, want)
	}
	if err := pseudonym.WriteKey(filepath.Join(dir, "right"), key); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := genCLI("verify", "--input", in, "--output", out, "--k", "2", "--pseudonym_key_file", filepath.Join(dir, "right")); code != 0 {
		t.Errorf("the release's key: exit %d: %s", code, stderr)
	}
}
