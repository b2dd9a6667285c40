package linkage

import "github.com/smoothanon/smoothanon/matrix"

// MinJoin is the id overlap below which two releases are taken not to
// join by user id: pseudonyms under different keys share no ids, while
// nightly releases of one population share most.
const MinJoin = 0.01

// Overlap is the fraction of the smaller release's users whose id is also
// in the other release.
func Overlap(a, b *matrix.Matrix) float64 {
	small, large := a, b
	if small.NumRows() > large.NumRows() {
		small, large = large, small
	}
	if small.NumRows() == 0 {
		return 0
	}
	in := make(map[string]struct{}, large.NumRows())
	for _, u := range large.Users {
		in[u] = struct{}{}
	}
	var n int
	for _, u := range small.Users {
		if _, ok := in[u]; ok {
			n++
		}
	}
	return float64(n) / float64(small.NumRows())
}
