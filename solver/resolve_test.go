package solver

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/smoothanon/smoothanon/matrix"
)

// resolveState is a solver state over rows (user i holds rows[i]), in
// canonical order as given.
func resolveState(rows [][]uint32, k int, md matrix.Mode) *state {
	m := matrix.New(len(rows), 0)
	for i, r := range rows {
		m.Append(fmt.Sprintf("u%02d", i), r)
	}
	return &state{p: withDefaults(Params{K: k, Mode: md, Seed: 1}), ctx: context.Background(), canon: m, pr: newProblem(m, Params{})}
}

// sortedClusters is clusters with members and clusters sorted.
func sortedClusters(clusters [][]int32) [][]int32 {
	out := make([][]int32, len(clusters))
	for i, c := range clusters {
		out[i] = slices.Sorted(slices.Values(c))
	}
	slices.SortFunc(out, func(a, b []int32) int { return slices.Compare(a, b) })
	return out
}

func TestResolveEmpty(t *testing.T) {
	// Users 0-8 are three groups of three identical rows; clustered
	// together, no feature is held by half of them, so the release of all
	// nine is empty. Users 9-11 share {20 21}, a cluster that keeps both.
	rows := [][]uint32{{1, 2}, {1, 2}, {1, 2}, {3, 4}, {3, 4}, {3, 4}, {5, 6}, {5, 6}, {5, 6}, {20, 21}, {20, 21}, {20, 21}}
	for _, md := range allModes {
		t.Run(md.String(), func(t *testing.T) {
			s := resolveState(rows, 3, md)
			in := [][]int32{{0, 3, 6, 1, 4, 7, 2, 5, 8}, {9, 10, 11}}
			total := s.totalCost(in)
			if total != (cost{s: 18}) {
				t.Fatalf("cost before %+v, want 18 suppressed", total)
			}
			out, err := s.resolveEmpty(in, total)
			if err != nil {
				t.Fatal(err)
			}
			want := [][]int32{{0, 1, 2}, {3, 4, 5}, {6, 7, 8}, {9, 10, 11}}
			if got := sortedClusters(out); !slices.EqualFunc(got, want, slices.Equal) {
				t.Errorf("clusters %v, want %v", got, want)
			}
			if c := s.totalCost(out); c != (cost{}) {
				t.Errorf("cost after %+v, want 0", c)
			}
		})
	}
	// Users with nothing in common: the solve of the empty cluster's users
	// finds no better release, and the clusters stay as they were.
	t.Run("nothing better", func(t *testing.T) {
		s := resolveState([][]uint32{{1}, {2}, {3}, {4}, {20, 21}, {20, 21}, {20, 21}}, 3, matrix.Smooth)
		in := [][]int32{{0, 1, 2, 3}, {4, 5, 6}}
		out, err := s.resolveEmpty(in, s.totalCost(in))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.EqualFunc(out, in, slices.Equal) {
			t.Errorf("clusters %v, want them unchanged", out)
		}
	})
	// A pool of every user, or of fewer than 2k, could only give back its
	// clusters: no nested solve runs (none reports progress).
	for name, in := range map[string][][]int32{
		"every user": {{0, 3, 6, 1, 4, 7, 2, 5, 8}},
		"under 2k":   {{0, 3, 6, 1, 4}, {7, 8, 2, 5}, {9, 10, 11}},
	} {
		t.Run(name, func(t *testing.T) {
			s := resolveState(rows[:12], 3, matrix.Smooth)
			if name == "every user" {
				s = resolveState(rows[:9], 3, matrix.Smooth)
			}
			stages := 0
			s.progressTo = func(string, int, int) { stages++ }
			out, err := s.resolveEmpty(in, s.totalCost(in))
			if err != nil || !slices.EqualFunc(out, in, slices.Equal) || stages != 0 {
				t.Errorf("clusters %v (err %v), %d progress calls; want them unchanged, no solve", out, err, stages)
			}
		})
	}
	// The nested solve never resolves again.
	t.Run("nested", func(t *testing.T) {
		s := resolveState(rows, 3, matrix.Smooth)
		s.nested = true
		in := [][]int32{{0, 3, 6, 1, 4, 7, 2, 5, 8}, {9, 10, 11}}
		out, _ := s.resolveEmpty(in, s.totalCost(in))
		if !slices.EqualFunc(out, in, slices.Equal) {
			t.Errorf("nested: clusters %v, want them unchanged", out)
		}
	})
}
