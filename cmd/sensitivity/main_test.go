package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunMain measures small generated lists and writes the document;
// bad flags are exit 2.
func TestRunMain(t *testing.T) {
	out := filepath.Join(t.TempDir(), "s.md")
	var stderr strings.Builder
	if code := runMain([]string{"-datasets", "lists", "-rows", "4000", "-seeds", "2", "-k", "4", "-sensitive_k", "4,16", "-out", out}, io.Discard, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, want := range []string{"# Quality: what sensitive features cost", "| lists | 2% of interests | 4 |", "| lists | 2% of interests | 16 |", "seeds 1–2"} {
		if !strings.Contains(doc, want) {
			t.Errorf("document lacks %q:\n%s", want, doc)
		}
	}
	for _, args := range [][]string{{"-sensitive_k", "3"}, {"-seeds", "0"}, {"-bogus"}} {
		if code := runMain(args, io.Discard, io.Discard); code != 2 {
			t.Errorf("%q: exit %d, want 2", args, code)
		}
	}
	if code := runMain([]string{"-datasets", "nope"}, io.Discard, io.Discard); code != 1 {
		t.Errorf("unknown data set: exit %d, want 1", code)
	}
}

func TestGoal(t *testing.T) {
	for _, c := range []struct {
		post, own float64
		want      string
	}{
		{0.02, 0.01, "met"}, {0.02, 0.011, "**not met**"}, {0.005, 0.003, "met"}, {0.005, 0.0031, "**not met**"},
	} {
		if got := goal(c.post, c.own); got != c.want {
			t.Errorf("goal(%v, %v) = %s, want %s", c.post, c.own, got, c.want)
		}
	}
}
