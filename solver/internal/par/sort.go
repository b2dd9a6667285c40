package par

import (
	"slices"
	"sync"
)

// minSortPart is the smallest part SortFunc sorts on a goroutine of its
// own; below it the goroutine and the merge cost more than they save.
const minSortPart = 1 << 14

// SortFunc sorts s in ascending order as determined by cmp, like
// slices.SortFunc, on up to workers goroutines: parts of s are sorted at
// once and merged through a buffer as long as s. Like slices.SortFunc it
// is not stable, so where cmp orders every pair of distinct elements the
// result does not depend on workers.
func SortFunc[E any](workers int, s []E, cmp func(a, b E) int) {
	if workers <= 1 || len(s) < 2*minSortPart {
		slices.SortFunc(s, cmp)
		return
	}
	sortParts(s, make([]E, len(s)), workers, cmp)
}

// sortParts sorts s on up to workers goroutines, with buf (as long as s)
// as merge space.
func sortParts[E any](s, buf []E, workers int, cmp func(a, b E) int) {
	if workers <= 1 || len(s) < 2*minSortPart {
		slices.SortFunc(s, cmp)
		return
	}
	mid := len(s) / 2
	wl := workers / 2
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		sortParts(s[:mid], buf[:mid], wl, cmp)
	}()
	sortParts(s[mid:], buf[mid:], workers-wl, cmp)
	wg.Wait()
	merge(buf, s[:mid], s[mid:], cmp)
	copy(s, buf)
}

// merge writes the sorted a and b into dst (len(a)+len(b) long), taking
// from a on ties.
func merge[E any](dst, a, b []E, cmp func(a, b E) int) {
	i, j, k := 0, 0, 0
	for i < len(a) && j < len(b) {
		if cmp(b[j], a[i]) < 0 {
			dst[k] = b[j]
			j++
		} else {
			dst[k] = a[i]
			i++
		}
		k++
	}
	k += copy(dst[k:], a[i:])
	copy(dst[k:], b[j:])
}
