package gen

import (
	"math"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/smoothanon/smoothanon/matrix"
)

func TestUserID(t *testing.T) {
	for _, tc := range []struct {
		i    int64
		want string
	}{{0, "u0000000000"}, {1234, "u0000001234"}, {9999999999, "u9999999999"}, {12345678901, "u12345678901"}} {
		if got := UserID(tc.i); got != tc.want {
			t.Errorf("UserID(%d) = %q, want %q", tc.i, got, tc.want)
		}
	}
}

func TestCheckSBMParams(t *testing.T) {
	ok := PaperSBM(1)
	tests := []struct {
		name    string
		mod     func(*SBMParams)
		wantErr string
	}{
		{"paper", func(*SBMParams) {}, ""},
		{"one block", func(p *SBMParams) { p.S = p.N }, ""},
		{"zero probabilities", func(p *SBMParams) { p.P, p.Q = 0, 0 }, ""},
		{"N zero", func(p *SBMParams) { p.N = 0 }, "N = 0"},
		{"S zero", func(p *SBMParams) { p.S = 0 }, "S = 0"},
		{"S too big", func(p *SBMParams) { p.S = 2048 }, "S = 2048"},
		{"S not dividing", func(p *SBMParams) { p.S = 100 }, "S = 100 does not divide N = 1024"},
		{"Q above 1", func(p *SBMParams) { p.Q = 1.5 }, "Q = 1.5"},
		{"P negative", func(p *SBMParams) { p.P = -0.1 }, "P = -0.1"},
		{"P NaN", func(p *SBMParams) { p.P = math.NaN() }, "P = NaN"},
	}
	for _, tc := range tests {
		p := ok
		tc.mod(&p)
		err := CheckSBMParams(p)
		if tc.wantErr == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%s: err %v, want %q", tc.name, err, tc.wantErr)
		}
		if _, err := SBM(p); err == nil {
			t.Errorf("%s: SBM accepted bad params", tc.name)
		}
	}
}

func TestCheckUserListsParams(t *testing.T) {
	ok := UserListsParams{Rows: 10, Columns: 100, MeanDegree: 10, Zipf: 1.1}
	tests := []struct {
		name    string
		mod     func(*UserListsParams)
		wantErr string
	}{
		{"ok", func(*UserListsParams) {}, ""},
		{"degree one", func(p *UserListsParams) { p.MeanDegree = 1 }, ""},
		{"rows zero", func(p *UserListsParams) { p.Rows = 0 }, "rows = 0"},
		{"columns zero", func(p *UserListsParams) { p.Columns = 0 }, "columns = 0"},
		{"columns huge", func(p *UserListsParams) { p.Columns = 1<<32 + 1 }, "columns = 4294967297"},
		{"degree below 1", func(p *UserListsParams) { p.MeanDegree = 0.5 }, "mean degree = 0.5"},
		{"degree NaN", func(p *UserListsParams) { p.MeanDegree = math.NaN() }, "mean degree = NaN"},
		{"degree Inf", func(p *UserListsParams) { p.MeanDegree = math.Inf(1) }, "mean degree = +Inf"},
		{"zipf 1", func(p *UserListsParams) { p.Zipf = 1 }, "zipf exponent = 1"},
	}
	for _, tc := range tests {
		p := ok
		tc.mod(&p)
		err := CheckUserListsParams(p)
		if tc.wantErr == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%s: err %v, want %q", tc.name, err, tc.wantErr)
		}
		if _, err := UserListsMatrix(p); err == nil {
			t.Errorf("%s: UserListsMatrix accepted bad params", tc.name)
		}
	}
}

func TestSampleRange(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	// Exact cases.
	if got := sampleRange(r, nil, 5, 4, 1); !slices.Equal(got, []uint32{5, 6, 7, 8}) {
		t.Errorf("prob 1: %v", got)
	}
	if got := sampleRange(r, nil, 5, 4, 0); len(got) != 0 {
		t.Errorf("prob 0: %v", got)
	}
	// Counts are Binomial(n, p): within 5 standard deviations, and the
	// positions are ascending, in range and spread evenly.
	for _, tc := range []struct {
		n    uint64
		prob float64
	}{{1_000_000, 0.001}, {10_000, 0.5}, {1000, 0.99}, {1 << 33, 1e-7}} {
		got := sampleRange(r, nil, 0, tc.n, tc.prob)
		mean := float64(tc.n) * tc.prob
		sd := math.Sqrt(mean * (1 - tc.prob))
		if math.Abs(float64(len(got))-mean) > 5*sd {
			t.Errorf("n %d p %v: %d chosen, want %.0f ± %.0f", tc.n, tc.prob, len(got), mean, 5*sd)
		}
		if tc.n > 1<<32 {
			continue // positions wrap in uint32
		}
		low := 0
		for i, x := range got {
			if uint64(x) >= tc.n || (i > 0 && x <= got[i-1]) {
				t.Fatalf("n %d p %v: bad position %d at %d", tc.n, tc.prob, x, i)
			}
			if uint64(x) < tc.n/2 {
				low++
			}
		}
		if math.Abs(float64(low)-mean/2) > 5*sd {
			t.Errorf("n %d p %v: %d of %d in the lower half", tc.n, tc.prob, low, len(got))
		}
	}
}

func TestSBMPaperSize(t *testing.T) {
	want := SBMExpectedEntries(PaperSBM(0))
	if math.Abs(want-62259.2) > 1e-6 {
		t.Fatalf("expected entries %v, want 62259.2", want)
	}
	for seed := int64(1); seed <= 3; seed++ {
		m, err := SBM(PaperSBM(seed))
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Validate(); err != nil {
			t.Fatal(err)
		}
		got := float64(m.NumEntries())
		if math.Abs(got-want)/want > 0.02 {
			t.Errorf("seed %d: %v entries, want %v within 2%%", seed, got, want)
		}
		// Entries inside the user's block: expected N·Q·S = 52428.8.
		inside := 0
		for i := 0; i < m.NumRows(); i++ {
			for _, f := range m.Row(i) {
				if int(f)/64 == i/64 {
					inside++
				}
			}
		}
		if math.Abs(float64(inside)-52428.8)/52428.8 > 0.02 {
			t.Errorf("seed %d: %d entries inside blocks, want about 52429", seed, inside)
		}
		if m.NumRows() != 1024 || m.Users[1023] != "u0000001023" || !sort.StringsAreSorted(m.Users) {
			t.Errorf("seed %d: users %d, last %q", seed, m.NumRows(), m.Users[m.NumRows()-1])
		}
	}
}

func TestSBMDeterministic(t *testing.T) {
	a, _ := SBM(PaperSBM(7))
	b, _ := SBM(PaperSBM(7))
	c, _ := SBM(PaperSBM(8))
	if !a.Equal(b) {
		t.Error("same seed, different matrices")
	}
	if a.Equal(c) {
		t.Error("different seeds, same matrix")
	}
	// Golden sample: a change in the generator must be deliberate.
	g, err := SBM(SBMParams{N: 6, S: 3, Q: 0.6, P: 0.2, Seed: 42})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]uint32{{1, 2, 3}, {}, {0}, {0, 1, 3}, {3, 4, 5}, {1, 3, 4, 5}}
	for i := range want {
		if !slices.Equal(g.Row(i), want[i]) {
			t.Errorf("golden row %d = %v, want %v", i, g.Row(i), want[i])
		}
	}
}

func TestSBMExtremes(t *testing.T) {
	m, _ := SBM(SBMParams{N: 12, S: 4, Q: 1, P: 0})
	for i := 0; i < 12; i++ {
		b := uint32(i / 4 * 4)
		if !slices.Equal(m.Row(i), []uint32{b, b + 1, b + 2, b + 3}) {
			t.Errorf("Q=1 P=0 row %d = %v", i, m.Row(i))
		}
	}
	m, _ = SBM(SBMParams{N: 12, S: 4, Q: 1, P: 1})
	if m.NumEntries() != 144 {
		t.Errorf("Q=P=1: %d entries, want 144", m.NumEntries())
	}
	m, _ = SBM(SBMParams{N: 12, S: 12, Q: 0, P: 1})
	if m.NumEntries() != 0 || m.NumRows() != 12 {
		t.Errorf("Q=0 one block: %d entries", m.NumEntries())
	}
}

func TestUserListsShape(t *testing.T) {
	p := UserListsParams{Rows: 50000, Columns: 100000, MeanDegree: 10, Zipf: 1.1, Seed: 5}
	m, err := UserListsMatrix(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	if !sort.StringsAreSorted(m.Users) || m.Users[49999] != "u0000049999" {
		t.Errorf("user ids not in row order")
	}
	mean := float64(m.NumEntries()) / float64(m.NumRows())
	if mean < 8 || mean > 10.1 {
		t.Errorf("mean distinct degree %.2f, want a little under 10", mean)
	}
	count := make(map[uint32]int)
	minDeg := 1 << 30
	for i := 0; i < m.NumRows(); i++ {
		minDeg = min(minDeg, len(m.Row(i)))
		for _, f := range m.Row(i) {
			if f >= 100000 {
				t.Fatalf("feature %d out of range", f)
			}
			count[f]++
		}
	}
	if minDeg < 1 {
		t.Errorf("a row has %d features, want at least 1", minDeg)
	}
	// Zipf with v=1: P(f) ∝ (1+f)^-s, so holders of feature 9 vs 39 is
	// about 4^1.1 ≈ 4.6 (a little less, as repeats of the more popular one
	// merge within rows).
	ratio := float64(count[9]) / float64(count[39])
	t.Logf("mean distinct degree %.2f, holders ratio %.2f, %d distinct features", mean, ratio, len(count))
	if ratio < 3.9 || ratio > 4.8 {
		t.Errorf("holders of feature 9 / feature 39 = %.2f, want about 4.4", ratio)
	}
	if len(count) < 10000 {
		t.Errorf("only %d distinct features used; want a long tail", len(count))
	}
}

func TestUserListsDegree(t *testing.T) {
	g, err := NewUserLists(UserListsParams{Rows: 1, Columns: 1 << 20, MeanDegree: 10, Zipf: 1.5})
	if err != nil {
		t.Fatal(err)
	}
	g.src.Seed(1, 2)
	sum, n := 0, 200000
	for i := 0; i < n; i++ {
		d := g.degree()
		if d < 1 {
			t.Fatalf("degree %d", d)
		}
		sum += d
	}
	// Geometric with mean 10: sd sqrt(90) ≈ 9.5, so the mean of 200000 is within 0.1.
	if mean := float64(sum) / float64(n); math.Abs(mean-10) > 0.1 {
		t.Errorf("mean degree %.3f, want 10", mean)
	}
	g, _ = NewUserLists(UserListsParams{Rows: 1, Columns: 5, MeanDegree: 1, Zipf: 2})
	for i := int64(0); i < 100; i++ {
		if _, f := g.Row(i); len(f) != 1 {
			t.Fatalf("mean degree 1: row %d has %v", i, f)
		}
	}
}

func TestUserListsDeterministicAndChunkFree(t *testing.T) {
	p := UserListsParams{Rows: 2000, Columns: 5000, MeanDegree: 6, Zipf: 1.3, Seed: 9}
	a, _ := UserListsMatrix(p)
	b, _ := UserListsMatrix(p)
	if !a.Equal(b) {
		t.Fatal("same seed, different data")
	}
	p2 := p
	p2.Seed = 10
	if c, _ := UserListsMatrix(p2); a.Equal(c) {
		t.Fatal("different seeds, same data")
	}
	// Golden sample: a change in the generator must be deliberate.
	gold, _ := UserListsMatrix(UserListsParams{Rows: 5, Columns: 50, MeanDegree: 3, Zipf: 1.3, Seed: 7})
	for i, want := range [][]uint32{{36}, {0, 2, 6, 9, 12}, {0}, {0, 20}, {0, 1}} {
		if !slices.Equal(gold.Row(i), want) {
			t.Errorf("golden row %d = %v, want %v", i, gold.Row(i), want)
		}
	}
	// Rows drawn out of order by a fresh generator are the same rows.
	g, _ := NewUserLists(p)
	for _, i := range []int64{1999, 0, 1234, 1, 1234} {
		u, f := g.Row(i)
		if u != a.Users[i] || !slices.Equal(f, a.Row(int(i))) {
			t.Errorf("row %d out of order = %v, want %v", i, f, a.Row(int(i)))
		}
	}
	// More rows extend the data set without changing its prefix.
	p3 := p
	p3.Rows = 3000
	d, _ := UserListsMatrix(p3)
	if !slices.Equal(d.Features[:d.Offsets[2000]], a.Features) {
		t.Error("prefix changed with more rows")
	}
}

func TestUserListsStream(t *testing.T) {
	// Several chunks, drawn by several workers, arrive in row order.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	p := UserListsParams{Rows: 5*userListsChunk + 17, Columns: 1000, MeanDegree: 3, Zipf: 1.2, Seed: 1}
	path := filepath.Join(t.TempDir(), "ul.parquet")
	w, err := matrix.Create(path, matrix.WriterOptions{RowGroupRows: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if err := UserLists(w, p); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, _, err := matrix.ReadMatrix(path, matrix.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := UserListsMatrix(p)
	if !got.Equal(want) {
		t.Error("streamed file differs from UserListsMatrix")
	}
}
