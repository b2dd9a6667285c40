package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestKBelowTwoRefused: every command taking --k refuses k < 2 with one
// line naming the value, exit 2, and writes nothing.
func TestKBelowTwoRefused(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.parquet")
	writeSolveInput(t, in, 40)
	out := filepath.Join(dir, "out.parquet")
	commands := map[string][]string{
		"solve":    {"solve", "--input", in, "--output", out},
		"run":      {"run", "--input", in, "--output", filepath.Join(dir, "rel")},
		"verify":   {"verify", "--input", in, "--output", in},
		"baseline": {"baseline", "--method", "mondrian", "--input", in, "--output", out},
		"linkage":  {"linkage", "--release", in, "--release", in},
	}
	for name, args := range commands {
		for _, k := range []int{1, 0, -3} {
			t.Run(fmt.Sprintf("%s/k=%d", name, k), func(t *testing.T) {
				var stdout, stderr bytes.Buffer
				code := runMain(append(append([]string(nil), args...), "--k", fmt.Sprint(k)), &stdout, &stderr)
				if code != 2 {
					t.Fatalf("exit %d, want 2; stderr %q", code, stderr.String())
				}
				want := fmt.Sprintf("--k = %d, must be at least 2", k)
				if k == 0 {
					want = "missing --k"
				}
				if msg := stderr.String(); !strings.Contains(msg, want) || strings.Count(msg, "\n") != 1 {
					t.Errorf("stderr %q, want one line containing %q", msg, want)
				}
				if _, err := os.Stat(out); err == nil {
					t.Errorf("%s wrote %s", name, out)
				}
			})
		}
	}
}
