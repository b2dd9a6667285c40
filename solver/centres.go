package solver

// centreScratch is one worker's scratch space for nearest.
type centreScratch struct {
	cnt     []int32 // cluster -> features of the row in its list
	touched []int32
	top     []distID
}

// nearest writes into out (-1 padded) the clusters whose centre, as
// indexed by cpost (features a new member could keep) and clen (centre
// sizes), is nearest to row, by (distance, cluster); features whose list
// is longer than refineMaxList are not counted.
func (cs *centreScratch) nearest(row []int32, cpost [][]int32, clen []int32, out []int32) {
	cnt, touched, top := cs.cnt, cs.touched[:0], cs.top[:0]
	dp := int32(len(row))
	for _, f := range row {
		if len(cpost[f]) > refineMaxList {
			continue
		}
		for _, c := range cpost[f] {
			if cnt[c] == 0 {
				touched = append(touched, c)
			}
			cnt[c]++
		}
	}
	n := len(out)
	for _, c := range touched {
		x := distID{dp + clen[c] - 2*cnt[c], c}
		cnt[c] = 0
		// Most are rejected: test that here, without the call, as this
		// loop is refine's hottest.
		if len(top) == n && !x.less(top[n-1]) {
			continue
		}
		top = offerTop(top, n, x)
	}
	for i := range out {
		out[i] = -1
		if i < len(top) {
			out[i] = top[i].i
		}
	}
	cs.touched, cs.top = touched, top
}
