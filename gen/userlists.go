package gen

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"

	"github.com/smoothanon/smoothanon/matrix"
)

// UserListsParams describe power-law user-interest lists: each user draws a
// degree d ≥ 1 from a geometric distribution with mean MeanDegree, then d
// features from a Zipf distribution over the columns (feature f, counted
// from 0, has weight (1+f)^−Zipf), and keeps the distinct ones. So users
// have few, mostly popular, features, and a long tail of rare ones.
type UserListsParams struct {
	// Rows is the number of users. Required; at least 1.
	Rows int64
	// Columns is the number of feature ids, 0..Columns−1. Required; in [1, 2^32].
	Columns int
	// MeanDegree is the mean number of draws per user (the mean number of
	// distinct features is a little lower, as repeated draws merge).
	// Required; at least 1.
	MeanDegree float64
	// Zipf is the exponent of the feature popularity law. Required; > 1.
	Zipf float64
	// Seed selects the sample. Optional; default 0.
	Seed int64
}

// CheckUserListsParams reports the first bad parameter.
func CheckUserListsParams(p UserListsParams) error {
	switch {
	case p.Rows < 1:
		return fmt.Errorf("userlists: rows = %d, must be at least 1", p.Rows)
	case p.Columns < 1 || uint64(p.Columns) > 1<<32:
		return fmt.Errorf("userlists: columns = %d, must be in [1, 2^32]", p.Columns)
	case !(p.MeanDegree >= 1) || math.IsInf(p.MeanDegree, 0):
		return fmt.Errorf("userlists: mean degree = %v, must be a number at least 1", p.MeanDegree)
	case !(p.Zipf > 1) || math.IsInf(p.Zipf, 0):
		return fmt.Errorf("userlists: zipf exponent = %v, must be a number greater than 1", p.Zipf)
	}
	return nil
}

// UserListsGenerator draws the rows of a UserLists data set, each row on its
// own seeded stream: Row(i) is the same whatever rows were drawn before, so
// several generators can split the rows between them. A generator is not
// safe for concurrent use; give each goroutine its own.
type UserListsGenerator struct {
	p    UserListsParams
	src  *rand.PCG
	r    *rand.Rand
	zipf *rand.Zipf
	inv  float64 // 1/log(1-1/MeanDegree), 0 when MeanDegree is 1
	maxD int
	buf  []uint32
}

// NewUserLists returns a generator for p.
func NewUserLists(p UserListsParams) (*UserListsGenerator, error) {
	if err := CheckUserListsParams(p); err != nil {
		return nil, err
	}
	g := &UserListsGenerator{p: p, src: &rand.PCG{}}
	g.r = rand.New(g.src)
	g.zipf = rand.NewZipf(g.r, p.Zipf, 1, uint64(p.Columns-1))
	if p.MeanDegree > 1 {
		g.inv = 1 / math.Log1p(-1/p.MeanDegree)
	}
	// More draws than this would only repeat features.
	g.maxD = min(p.Columns*4, 1<<24)
	return g, nil
}

// Row returns the user id and the sorted distinct features of row i. The
// slice is reused by the next call.
func (g *UserListsGenerator) Row(i int64) (string, []uint32) {
	seedRow(g.src, g.p.Seed, streamUserLists, i)
	d := g.degree()
	b := g.buf[:0]
	for ; d > 0; d-- {
		b = append(b, uint32(g.zipf.Uint64()))
	}
	slices.Sort(b)
	b = slices.Compact(b)
	g.buf = b
	return UserID(i), b
}

// degree draws 1 + Geometric: P(d) = (1−p)^(d−1)·p with p = 1/MeanDegree.
func (g *UserListsGenerator) degree() int {
	if g.inv == 0 {
		return 1
	}
	x := math.Floor(math.Log(1-g.r.Float64()) * g.inv)
	if x >= float64(g.maxD-1) {
		return g.maxD
	}
	return 1 + int(x)
}

// UserLists streams a UserLists data set of p.Rows rows to w in row order,
// in constant memory. Rows are drawn by up to GOMAXPROCS goroutines, a chunk
// of rows each, while this goroutine writes. It does not close w.
func UserLists(w *matrix.Writer, p UserListsParams) error {
	if err := CheckUserListsParams(p); err != nil {
		return err
	}
	workers := min(runtime.GOMAXPROCS(0), 8)
	nChunks := (p.Rows + userListsChunk - 1) / userListsChunk
	workers = int(min(int64(workers), nChunks))
	done := make(chan struct{})
	defer close(done)
	// Worker j draws chunks j, j+workers, ...; two buffers each, recycled.
	full := make([]chan *rowChunk, workers)
	free := make([]chan *rowChunk, workers)
	for j := range full {
		full[j] = make(chan *rowChunk, 2)
		free[j] = make(chan *rowChunk, 2)
		free[j] <- &rowChunk{}
		free[j] <- &rowChunk{}
		g, _ := NewUserLists(p)
		go func(j int) {
			for c := int64(j); c < nChunks; c += int64(workers) {
				var ch *rowChunk
				select {
				case ch = <-free[j]:
				case <-done:
					return
				}
				ch.fill(g, c*userListsChunk, min((c+1)*userListsChunk, p.Rows))
				select {
				case full[j] <- ch:
				case <-done:
					return
				}
			}
		}(j)
	}
	for c := int64(0); c < nChunks; c++ {
		j := int(c % int64(workers))
		ch := <-full[j]
		for r := range ch.users {
			if err := w.Write(ch.users[r], ch.feats[ch.offsets[r]:ch.offsets[r+1]]); err != nil {
				return err
			}
		}
		free[j] <- ch
	}
	return nil
}

// userListsChunk is the number of rows a worker draws at a time.
const userListsChunk = 4096

// rowChunk is a run of consecutive rows in CSR form.
type rowChunk struct {
	users   []string
	offsets []int
	feats   []uint32
}

func (ch *rowChunk) fill(g *UserListsGenerator, lo, hi int64) {
	ch.users = ch.users[:0]
	ch.offsets = append(ch.offsets[:0], 0)
	ch.feats = ch.feats[:0]
	for i := lo; i < hi; i++ {
		u, f := g.Row(i)
		ch.users = append(ch.users, u)
		ch.feats = append(ch.feats, f...)
		ch.offsets = append(ch.offsets, len(ch.feats))
	}
}

// UserListsMatrix returns a UserLists data set in memory, row i being
// UserID(i).
func UserListsMatrix(p UserListsParams) (*matrix.Matrix, error) {
	g, err := NewUserLists(p)
	if err != nil {
		return nil, err
	}
	if p.Rows > math.MaxInt32 {
		return nil, fmt.Errorf("userlists: rows = %d, too many to hold in memory", p.Rows)
	}
	m := matrix.New(int(p.Rows), int(float64(p.Rows)*p.MeanDegree))
	for i := int64(0); i < p.Rows; i++ {
		u, f := g.Row(i)
		m.Users = append(m.Users, u)
		m.Features = append(m.Features, f...)
		m.Offsets = append(m.Offsets, int64(len(m.Features)))
	}
	return m, nil
}
