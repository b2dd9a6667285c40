// Package solver computes smooth-k-anonymous (or, as a heuristic, k-anonymous
// by suppression) releases of a sparse user×feature matrix with the paper's
// Alg2: users are points of {0,1}^m under Hamming distance, Meyerson's online
// facility location clusters them (facility cost from the βk nearest
// neighbours, found exactly or by a bounded search: Params.Search), small clusters are closed until every cluster holds at least k
// users, and each cluster is released as its centre (majority features in
// smooth mode, features held by all in nonsmooth mode).
//
// Two variants exist. Paper reproduces the procedure of the paper's appendix
// "Implementation details" exactly. Improved (the default) adds two steps
// that lower the number of changed entries: split (clusters of at least 2k
// users are partitioned into groups of k..2k−1 mutually close users, kept
// only where this lowers the cluster's cost) and refine (local moves of users
// to the cluster whose centre is nearest, when the move lowers the cost and
// leaves the source cluster with at least k users; clusters are also
// dissolved whole into others). The decisions maximise the release's
// Jaccard similarity: moves and cuts minimise s + λ·c (suppressed plus λ
// times created entries) at λ = the current Jaccard, Dinkelbach's method
// for the ratio (see objective.go), and the best candidate is chosen by
// its Jaccard. The release rule stays the mode's.
//
// Solve is deterministic: the result depends only on the set of input rows
// and the Params (not on the input row order nor on Params.Workers).
package solver

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/proto/smoothanonpb"
	"github.com/smoothanon/smoothanon/solver/internal/knn"
	"github.com/smoothanon/smoothanon/solver/internal/par"
	"github.com/smoothanon/smoothanon/verify"
)

// Variant selects the algorithm.
type Variant int

const (
	// Improved is Alg2 followed by split and refine (the default).
	Improved Variant = iota
	// Paper is Alg2 exactly as in the paper's implementation details.
	Paper
)

// String returns "improved" or "paper".
func (v Variant) String() string {
	switch v {
	case Improved:
		return "improved"
	case Paper:
		return "paper"
	}
	return fmt.Sprintf("Variant(%d)", int(v))
}

// ParseVariant parses "improved" or "paper".
func ParseVariant(s string) (Variant, error) {
	switch s {
	case "improved":
		return Improved, nil
	case "paper":
		return Paper, nil
	}
	return 0, fmt.Errorf("invalid variant %q (want improved or paper)", s)
}

// Search selects exact or bounded nearest-neighbour searches.
type Search int

const (
	// Bounded caps the work of each neighbour query (the βk nearest
	// users of the facility costs) at neighbourMaxScan index entries and
	// of each nearest-open-facility query of Meyerson's restarts at
	// facilityMaxScan, keeping the best users found (the default). On
	// dense power-law data the exact work per query grows with the rows;
	// bounded, it does not. Where the bound is never reached the release
	// is the exact one; where it binds, on generated user lists, the
	// Jaccard stays close to the exact search's (see
	// docs/decisions/015-bounded-search.md).
	Bounded Search = iota
	// Exact finds the true nearest users and facilities.
	Exact
)

// Start selects the clusterings the improved variant starts from.
type Start int

const (
	// StartBoth starts from Meyerson's clusters and from the Mondrian
	// partition and keeps the better release (the default; see improve).
	StartBoth Start = iota
	// StartMondrian starts from the Mondrian partition only: Meyerson's
	// restarts and the candidates built on their clusters are skipped
	// (the neighbour search still runs: refine tries the clusters of each
	// point's nearest points). Where the Mondrian candidate would have won
	// anyway, as on the chunks of generated power-law user lists, the
	// release is as good as StartBoth's (not the same bytes: the two
	// starts' bounded neighbour searches differ) without the work of the
	// skipped steps (see docs/decisions/005-mondrian-start.md). On data with
	// communities (dblp, playstore) Meyerson's candidate wins and
	// StartMondrian's release is worse; transforms.ChooseKey's statistic
	// tells the two kinds apart (pipeline.Params.AutoStart). Improved
	// variant only.
	StartMondrian
)

// String returns "both" or "mondrian".
func (s Start) String() string {
	switch s {
	case StartBoth:
		return "both"
	case StartMondrian:
		return "mondrian"
	}
	return fmt.Sprintf("Start(%d)", int(s))
}

// ParseStart parses "both" or "mondrian".
func ParseStart(s string) (Start, error) {
	switch s {
	case "both":
		return StartBoth, nil
	case "mondrian":
		return StartMondrian, nil
	}
	return 0, fmt.Errorf("invalid start %q (want both or mondrian)", s)
}

// The bounds of Bounded, in index entries per query, chosen on generated
// user lists (see docs/decisions/015-bounded-search.md): the neighbour
// bound keeps the work per row nearly flat as the rows grow while the
// distance sums stay close to the exact ones; the open-facility queries
// start from the best open neighbour, so a small bound suffices. Neither
// costs a release much Jaccard there or on the quality data sets.
// (Variables only so that tests can shrink them.)
var (
	neighbourMaxScan = 128
	facilityMaxScan  = 16
)

// String returns "bounded" or "exact".
func (s Search) String() string {
	switch s {
	case Bounded:
		return "bounded"
	case Exact:
		return "exact"
	}
	return fmt.Sprintf("Search(%d)", int(s))
}

// ParseSearch parses "bounded" or "exact".
func ParseSearch(s string) (Search, error) {
	switch s {
	case "bounded":
		return Bounded, nil
	case "exact":
		return Exact, nil
	}
	return 0, fmt.Errorf("invalid search %q (want bounded or exact)", s)
}

// Default parameter values.
const (
	DefaultBeta     = 2
	DefaultRestarts = 10
)

// Params configure Solve. They are plain values: the pipeline carries them
// whole into its job graph (transforms.SolveParams), as JSON under the
// field tags below, so a new field needs a tag and a type that JSON and
// Beam's schemas carry (no function: see Progress).
type Params struct {
	// K is the smallest cluster size. Required; at least 1 and at most the
	// number of rows.
	K int `json:"k"`
	// Mode is the anonymity notion. Optional; default matrix.Smooth.
	Mode matrix.Mode `json:"mode"`
	// Beta sets the neighbourhood of the facility cost (βk nearest users)
	// and α = 1/β. Optional; default 2 (0 means default); at least 1.
	// Beta = 1 makes α = 1 and the opening cost factor 2α/(1−α) infinite:
	// only facilities of cost 0 (users with k identical copies) can open
	// after the first.
	Beta int `json:"beta"`
	// Restarts is the number of random orders of Meyerson's algorithm; the
	// cheapest is kept. Optional; default 10 (0 means default); at least 1.
	Restarts int `json:"restarts"`
	// Seed seeds every random choice. Optional; default 0.
	Seed int64 `json:"seed"`
	// Variant selects the algorithm. Optional; default Improved.
	Variant Variant `json:"variant"`
	// Search selects bounded or exact neighbour searches. Optional;
	// default Bounded.
	Search Search `json:"search"`
	// Start selects the clusterings improve starts from. Optional; default
	// StartBoth. StartMondrian needs Variant Improved.
	Start Start `json:"start"`
	// Workers is the number of goroutines of the parallel loops; the
	// candidates of the improvement step (see Progress) run at
	// the same time unless it is 1. Optional; default 0 = GOMAXPROCS.
	// The result does not depend on it.
	Workers int `json:"workers"`
	// Sensitive lists the input feature ids that follow the sensitive
	// rule (see SensitivePolicy): shown in a cluster only if every member
	// held it and the cluster has at least SensitiveK members. Optional;
	// default none; ascending, without repeats.
	Sensitive []uint32 `json:"sensitive,omitempty"`
	// SensitiveK is the least size of a cluster that shows a sensitive
	// feature. Optional; default 0, meaning K; at least K.
	SensitiveK int `json:"sensitive_k,omitempty"`
	// SensitivePolicy says whether sensitive features may be shown at all.
	// Optional; default SensitiveShow.
	SensitivePolicy SensitivePolicy `json:"sensitive_policy,omitempty"`
}

// Progress receives the progress of a solve (SolveProgress): a stage name
// and how far it is: "neighbours", "restarts", "close" (not under
// StartMondrian), then (Improved) "split (candidate i/4)" and "refine
// (candidate i/4)" for improve's candidates (i/5 where the input holds
// sensitive features, i = 5 their strata; i = 4 only where no row has
// more than 16 features; only i = 3, 4 and 5 under StartMondrian), which run
// at the same time, so their calls alternate, then the same stages
// prefixed "resolve: " for the solve of the users whose release is empty
// (see resolveEmpty; that solve starts from both, so its "resolve:
// restarts" and "resolve: close" appear under StartMondrian too). Calls
// never overlap but may come from different goroutines.
type Progress func(stage string, done, total int)

// CheckParams reports the first bad parameter for an input of rows rows.
func CheckParams(p Params, rows int) error {
	if p.K < 1 {
		return fmt.Errorf("k = %d, must be at least 1", p.K)
	}
	if p.K > 1<<30 {
		return fmt.Errorf("k = %d is too large", p.K)
	}
	if p.Mode != matrix.Smooth && p.Mode != matrix.NonSmooth {
		return fmt.Errorf("invalid mode %d (want smooth or nonsmooth)", int(p.Mode))
	}
	if p.Beta < 0 {
		return fmt.Errorf("beta = %d, must be at least 1 (0 means the default %d)", p.Beta, DefaultBeta)
	}
	if p.Beta > 1<<20 {
		return fmt.Errorf("beta = %d is too large", p.Beta)
	}
	if p.Restarts < 0 {
		return fmt.Errorf("restarts = %d, must be at least 1 (0 means the default %d)", p.Restarts, DefaultRestarts)
	}
	if p.Restarts > 1<<20 {
		return fmt.Errorf("restarts = %d is too large", p.Restarts)
	}
	if p.Variant != Improved && p.Variant != Paper {
		return fmt.Errorf("invalid variant %d (want improved or paper)", int(p.Variant))
	}
	if p.Search != Bounded && p.Search != Exact {
		return fmt.Errorf("invalid search %d (want bounded or exact)", int(p.Search))
	}
	if p.Start != StartBoth && p.Start != StartMondrian {
		return fmt.Errorf("invalid start %d (want both or mondrian)", int(p.Start))
	}
	if p.Start == StartMondrian && p.Variant != Improved {
		return fmt.Errorf("start mondrian needs variant improved (the paper's procedure starts from Meyerson)")
	}
	if p.Workers < 0 {
		return fmt.Errorf("workers = %d, must be at least 0 (0 means GOMAXPROCS)", p.Workers)
	}
	if err := checkSensitive(p); err != nil {
		return err
	}
	if rows < 0 || rows > 1<<31-2 {
		return fmt.Errorf("%d rows: unsupported input size", rows)
	}
	if p.K > rows {
		return fmt.Errorf("k = %d is larger than the number of rows (%d)", p.K, rows)
	}
	return nil
}

// Result is a solved release.
type Result struct {
	// Release holds the same users as the input, in the same row order.
	Release *matrix.Matrix
	// Cluster is the cluster of each row (input order). Clusters are
	// numbered by their first user in user-id order.
	Cluster []int32
	// Info describes the run.
	Info *smoothanonpb.SolveInfo
}

// Solve clusters the rows of m and returns the release. m is not modified.
// Repeated user ids are an error.
func Solve(ctx context.Context, m *matrix.Matrix, p Params) (*Result, error) {
	return solve(ctx, m, p, nil, false)
}

// SolveProgress is Solve, reporting its progress to progress (nil: none).
func SolveProgress(ctx context.Context, m *matrix.Matrix, p Params, progress Progress) (*Result, error) {
	return solve(ctx, m, p, progress, false)
}

// solve is Solve; nested marks the solve of resolveEmpty's users, which
// does not resolve its own.
func solve(ctx context.Context, m *matrix.Matrix, p Params, progress Progress, nested bool) (*Result, error) {
	start := time.Now()
	if err := CheckParams(p, m.NumRows()); err != nil {
		return nil, err
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	p = withDefaults(p)
	n := m.NumRows()

	// Canonical order: by user id, then rearranged by content for memory
	// locality (see localityOrder); both ignore the input row order.
	byID, err := matrix.UserOrder(m)
	if err != nil {
		return nil, err
	}
	order := localityOrder(m, byID, par.Workers(p.Workers))

	s := &state{p: p, ctx: ctx, progressTo: progress, nested: nested}
	perm := make([]int, n)
	for i, r := range order {
		perm[i] = int(r)
	}
	s.canon = m.Permute(perm)
	s.pr = newProblem(s.canon, p)
	if err := s.run(); err != nil {
		return nil, err
	}

	res, sizes := s.release(m, byID, order)
	res.Info = &smoothanonpb.SolveInfo{
		Variant:         p.Variant.String(),
		Seed:            p.Seed,
		Beta:            int32(p.Beta),
		Restarts:        int32(RanRestarts(p)),
		Clusters:        int64(len(sizes)),
		ClusterSize:     verify.Summarize(sizes),
		FacilityCost:    s.facilityCost,
		Seconds:         time.Since(start).Seconds(),
		NeighbourSearch: s.search,
		Start:           p.Start.String(),
	}
	return res, nil
}

// release builds the result of a finished run: clusters numbered by their
// first user in user-id order (byID lists m's rows so), every input row
// given its cluster's centre (order maps canonical users to m's rows), and
// the cluster sizes.
func (s *state) release(m *matrix.Matrix, byID, order []int32) (*Result, []int64) {
	p, n := s.p, len(order)
	rowOf := make([]int32, n) // input row -> canonical user
	for u, r := range order {
		rowOf[r] = int32(u)
	}
	// Number clusters by their first user in user-id order.
	nAssign := int32(0)
	for _, c := range s.assign {
		nAssign = max(nAssign, c+1)
	}
	remap := make([]int32, nAssign) // run's cluster -> released cluster, -1 unseen
	for i := range remap {
		remap[i] = -1
	}
	nc := 0
	canon := make([]int32, n)
	for _, r := range byID {
		u := rowOf[r]
		c := s.assign[u]
		if remap[c] < 0 {
			remap[c] = int32(nc)
			nc++
		}
		canon[u] = remap[c]
	}
	// Members of every cluster, in canonical user order, in one array.
	mOff := make([]int32, nc+1)
	for _, c := range canon {
		mOff[c+1]++
	}
	for c := 0; c < nc; c++ {
		mOff[c+1] += mOff[c]
	}
	fill := slices.Clone(mOff[:nc])
	mList := make([]int32, n)
	for u, c := range canon {
		mList[fill[c]] = int32(u)
		fill[c]++
	}
	members := func(c int32) []int32 { return mList[mOff[c]:mOff[c+1]] }
	centres := make([][]uint32, nc)
	workers := par.Workers(p.Workers)
	type counts struct{ cnt, touched []int32 } // centre's scratch
	scratch := make([]counts, workers)
	par.For(workers, nc, 1024, func(w, lo, hi int) {
		sc := &scratch[w]
		if sc.cnt == nil {
			sc.cnt = make([]int32, s.pr.nf)
		}
		for c := lo; c < hi; c++ {
			centres[c] = s.pr.centre(members(int32(c)), p.Mode, sc.cnt, &sc.touched)
		}
	})

	res := &Result{Cluster: make([]int32, n)}
	total := 0
	for r := 0; r < n; r++ {
		total += len(centres[canon[rowOf[r]]])
	}
	rel := matrix.New(n, total)
	for r := 0; r < n; r++ {
		c := canon[rowOf[r]]
		res.Cluster[r] = c
		rel.Users = append(rel.Users, m.Users[r])
		rel.Features = append(rel.Features, centres[c]...)
		rel.Offsets = append(rel.Offsets, int64(len(rel.Features)))
	}
	res.Release = rel
	sizes := make([]int64, nc)
	for c := range sizes {
		sizes[c] = int64(mOff[c+1] - mOff[c])
	}
	return res, sizes
}

// maxScan is the knn.Options.MaxScan of a search with the given bound:
// the bound under Bounded, 0 (none) under Exact.
func (s *state) maxScan(bound int) int {
	if s.p.Search == Exact {
		return 0
	}
	return bound
}

// knnFacilitiesLoad is the postings load (see problem.postingsLoad) above
// which Meyerson runs on knn.Facilities (both give the same release; see
// docs/decisions/016-meyerson-facility-sets.md for where they cost the
// same).
// facSet wins on inputs with a low load such as dblp; its bounded search
// (degree buckets, rarest features first) does not scale to large
// power-law inputs, where the bound stays loose on the popular features'
// lists and the search scans them in full.
const knnFacilitiesLoad = 1e4

func withDefaults(p Params) Params {
	if p.Beta == 0 {
		p.Beta = DefaultBeta
	}
	if p.Restarts == 0 {
		p.Restarts = DefaultRestarts
	}
	return p
}

// openingFactor is 2α/(1−α) with α = 1/β, i.e. 2/(β−1).
func openingFactor(beta int) float64 {
	if beta <= 1 {
		return math.Inf(1)
	}
	return 2 / float64(beta-1)
}

// state is one Solve call.
type state struct {
	p            Params
	ctx          context.Context
	pr           *problem
	canon        *matrix.Matrix // the input in canonical order
	assign       []int32        // canonical user -> cluster (arbitrary ids)
	facilityCost float64
	search       string // neighbour search used
	// progressTo receives the progress (SolveProgress); progressMu
	// serialises its calls.
	progressTo Progress
	progressMu sync.Mutex
	// nested: this solves resolveEmpty's users (see solve).
	nested bool
}

// progress reports to progressTo; the lock keeps calls from concurrent
// stages (the two refinements) from overlapping.
func (s *state) progress(stage string, done, total int) {
	if s.progressTo != nil {
		s.progressMu.Lock()
		defer s.progressMu.Unlock()
		s.progressTo(stage, done, total)
	}
}

func (s *state) run() error {
	clusters, err := s.start()
	if err != nil {
		return err
	}
	if err := s.ctx.Err(); err != nil {
		return err
	}
	if s.p.Variant == Improved {
		clusters, err = s.improve(clusters)
		if err != nil {
			return err
		}
	}
	pr := s.pr
	s.assign = make([]int32, pr.n)
	for c, mem := range clusters {
		for _, u := range mem {
			s.assign[u] = int32(c)
		}
	}
	return nil
}

// start finds every point's nearest points and, under StartBoth, runs
// Meyerson's restarts and closes the small facilities: the clusters the
// improvement starts from (nil under StartMondrian). The knn index and
// the neighbour graph, which grow with the input, live only in here; the
// improvement reads the nearest points the search recorded.
func (s *state) start() ([][]int32, error) {
	pr := s.pr
	s.progress("neighbours", 0, pr.np)
	w := par.Workers(s.p.Workers)
	ix, err := knn.NewIndex(s.canon, w)
	if err != nil {
		return nil, err
	}
	// Meyerson needs the facility costs (βk nearest rows); the Mondrian
	// start needs only the nearest points refine reads, a search for
	// nbrPoints rather than βk.
	if s.p.Start != StartBoth {
		s.search, err = pr.nearestPoints(ix, s.p.K*s.p.Beta, w, s.maxScan(neighbourMaxScan))
		if err == nil {
			s.progress("neighbours", pr.np, pr.np)
		}
		return nil, err
	}
	m := &restarts{s: s, ix: ix, knn: pr.bits == nil && pr.postingsLoad() > knnFacilitiesLoad}
	m.cost, m.graph, s.search, err = pr.facilityCostsKNN(ix, s.p.K*s.p.Beta, openingFactor(s.p.Beta), w, s.maxScan(neighbourMaxScan))
	if err != nil {
		return nil, err
	}
	if err := s.ctx.Err(); err != nil {
		return nil, err
	}
	s.progress("neighbours", pr.np, pr.np)
	best, err := m.best()
	if err != nil {
		return nil, err
	}
	s.facilityCost = best.cost
	return s.closeSmall(best), nil
}

// RanRestarts is the number of Meyerson restarts a solve with p runs (the
// SolveInfo.restarts of its report): none under StartMondrian, which
// starts from the Mondrian partition only, else Restarts or its default.
func RanRestarts(p Params) int {
	if p.Start == StartMondrian {
		return 0
	}
	return withDefaults(p).Restarts
}
