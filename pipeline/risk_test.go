package pipeline

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"testing"

	"github.com/smoothanon/smoothanon/assess"
	"github.com/smoothanon/smoothanon/matrix"
)

// riskMatrix is 3000 users holding 0 to 3 of 12 features: many share
// their set, many are one feature away from another's.
func riskMatrix() *matrix.Matrix {
	rng := rand.New(rand.NewPCG(3, 4))
	m := matrix.New(0, 0)
	for i := range 3000 {
		seen := map[uint32]bool{}
		var row []uint32
		for range rng.IntN(4) {
			if f := uint32(rng.IntN(12)); !seen[f] {
				seen[f] = true
				row = append(row, f)
			}
		}
		slices.Sort(row)
		m.Append("u"+strconv.Itoa(i), row)
	}
	return m
}

// TestRiskMatchesRiskOf: the risk job over every row of an input, in list
// form over three files and in long form with its pairs shuffled and
// repeated, counts what assess.RiskOf counts of the same rows.
func TestRiskMatchesRiskOf(t *testing.T) {
	m := riskMatrix()
	ks := []int{2, 5, 40}
	for _, c := range []struct {
		name  string
		write func(dir string) *matrix.Matrix
	}{
		{"list", func(dir string) *matrix.Matrix {
			for part := range 3 {
				sub := matrix.New(0, 0)
				for i := part; i < m.NumRows(); i += 3 {
					sub.Append(m.Users[i], m.Row(i))
				}
				if err := matrix.WriteMatrix(filepath.Join(dir, "in-"+strconv.Itoa(part)+".parquet"), sub, matrix.WriterOptions{RowGroupRows: 200}); err != nil {
					t.Fatal(err)
				}
			}
			return m
		}},
		{"long", func(dir string) *matrix.Matrix { return writeLongInput(t, dir, m) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			rows := c.write(dir)
			in, err := Inspect(dir, matrix.Layout{})
			if err != nil {
				t.Fatal(err)
			}
			r, err := Risk(context.Background(), RiskParams{Input: dir, Ks: ks, Scratch: t.TempDir()}, in)
			if err != nil {
				t.Fatal(err)
			}
			got, want := assess.FromCounts(r.RiskCounts, ks, r.Names), assess.RiskOf(rows, ks)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Risk = %+v\nRiskOf = %+v", got, want)
			}
			if want.Unique == 0 || len(want.Exposing) == 0 {
				t.Errorf("the input tests little: %+v", want)
			}
		})
	}
}
