package matrix

import "fmt"

// rowsMatrix builds a matrix of n users <prefix>0.. with one feature each.
func rowsMatrix(prefix string, n int) *Matrix {
	m := New(n, n)
	for i := range n {
		m.Append(fmt.Sprintf("%s%d", prefix, i), []uint32{uint32(i % 3)})
	}
	return m
}
