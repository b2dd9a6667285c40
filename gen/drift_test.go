package gen

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/smoothanon/smoothanon/matrix"
)

func driftInput(t *testing.T, rows int64) *matrix.Matrix {
	t.Helper()
	m, err := UserListsMatrix(UserListsParams{Rows: rows, Columns: 5000, MeanDegree: 10, Zipf: 1.1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func rowsByUser(m *matrix.Matrix) map[string]string {
	r := map[string]string{}
	for i, u := range m.Users {
		r[u] = fmt.Sprint(m.Row(i))
	}
	return r
}

// TestDriftRates: about DropProb of the held features go, about
// NewPerUser draws arrive per user, rows stay sorted and repeat-free.
func TestDriftRates(t *testing.T) {
	m := driftInput(t, 20000)
	p := DriftParams{Columns: 5000, Zipf: 1.1, DropProb: 0.05, NewPerUser: 0.5, Seed: 3, Night: 1}
	d, err := Drift(m, p)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}
	var kept, added int64
	for i := range m.Users {
		old := map[uint32]bool{}
		for _, f := range m.Row(i) {
			old[f] = true
		}
		for _, f := range d.Row(i) {
			if old[f] {
				kept++
			} else {
				added++
			}
		}
	}
	dropped := float64(m.NumEntries()-kept) / float64(m.NumEntries())
	perUser := float64(added) / float64(m.NumRows())
	// New draws can repeat a held feature (popular ones often), so fewer
	// than 0.5 per user show as new.
	if math.Abs(dropped-0.05) > 0.005 || perUser < 0.3 || perUser > 0.5 {
		t.Errorf("dropped %.4f of entries (want ≈0.05), %.3f new per user (want 0.3..0.5)", dropped, perUser)
	}
}

// TestDriftDeterministic: same params, same rows; another night or seed,
// other rows; a user's drift does not depend on row order; zero drift is
// the identity.
func TestDriftDeterministic(t *testing.T) {
	m := driftInput(t, 2000)
	p := DriftParams{Columns: 5000, Zipf: 1.1, DropProb: 0.05, NewPerUser: 0.5, Seed: 3, Night: 2}
	a, _ := Drift(m, p)
	b, _ := Drift(m, p)
	if fmt.Sprint(rowsByUser(a)) != fmt.Sprint(rowsByUser(b)) {
		t.Error("same params, different drift")
	}
	for _, q := range []DriftParams{{Night: 3, Seed: 3}, {Night: 2, Seed: 4}} {
		q.Columns, q.Zipf, q.DropProb, q.NewPerUser = p.Columns, p.Zipf, p.DropProb, p.NewPerUser
		c, _ := Drift(m, q)
		if fmt.Sprint(rowsByUser(c)) == fmt.Sprint(rowsByUser(a)) {
			t.Errorf("%+v drifts like %+v", q, p)
		}
	}
	rev := matrix.New(m.NumRows(), 0)
	for i := m.NumRows() - 1; i >= 0; i-- {
		rev.Append(m.Users[i], m.Row(i))
	}
	r, _ := Drift(rev, p)
	if fmt.Sprint(rowsByUser(r)) != fmt.Sprint(rowsByUser(a)) {
		t.Error("drift depends on row order")
	}
	id, _ := Drift(m, DriftParams{Columns: 5000, Zipf: 1.1})
	if fmt.Sprint(rowsByUser(id)) != fmt.Sprint(rowsByUser(m)) {
		t.Error("zero drift changed rows")
	}
}

func TestCheckDriftParams(t *testing.T) {
	ok := DriftParams{Columns: 10, Zipf: 1.1, DropProb: 0.05, NewPerUser: 0.5}
	for _, c := range []struct {
		mod func(*DriftParams)
		err string
	}{
		{func(p *DriftParams) {}, ""},
		{func(p *DriftParams) { p.Columns = 0 }, "columns = 0"},
		{func(p *DriftParams) { p.Zipf = 1 }, "zipf exponent = 1"},
		{func(p *DriftParams) { p.DropProb = 1.5 }, "drop probability = 1.5"},
		{func(p *DriftParams) { p.DropProb = math.NaN() }, "drop probability = NaN"},
		{func(p *DriftParams) { p.NewPerUser = -1 }, "new features per user = -1"},
	} {
		p := ok
		c.mod(&p)
		err := CheckDriftParams(p)
		if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%+v: %v, want %q", p, err, c.err)
		}
	}
}
