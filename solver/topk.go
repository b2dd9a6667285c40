package solver

// distID is a candidate (a user, a cluster) at distance d, ordered by
// (d, i).
type distID struct{ d, i int32 }

func (a distID) less(b distID) bool { return a.d < b.d || a.d == b.d && a.i < b.i }

// offerTop adds x to top, the n smallest distinct candidates offered so
// far in ascending order, and returns it.
func offerTop(top []distID, n int, x distID) []distID {
	m := len(top)
	if m == n && (n == 0 || !x.less(top[m-1])) {
		return top
	}
	if m < n {
		top = append(top, x)
	} else {
		m--
	}
	for m > 0 && x.less(top[m-1]) {
		top[m] = top[m-1]
		m--
	}
	top[m] = x
	return top
}
