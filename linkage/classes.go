package linkage

import (
	"encoding/binary"

	"github.com/smoothanon/smoothanon/matrix"
)

// classIndex numbers the classes of one release: rows with identical
// released feature sets share a class. Class ids count from 0 in order of
// first row; sizes[c] is the users of class c; keys[c] is its feature set
// as bytes (the map key).
type classIndex struct {
	ofRow []int32
	sizes []int64
	keys  []string
	byKey map[string]int32
}

func featureKey(f []uint32) string {
	b := make([]byte, 4*len(f))
	for i, v := range f {
		binary.LittleEndian.PutUint32(b[4*i:], v)
	}
	return string(b)
}

func classify(m *matrix.Matrix) classIndex {
	c := classIndex{ofRow: make([]int32, m.NumRows()), byKey: map[string]int32{}}
	for i := range m.Users {
		key := featureKey(m.Row(i))
		id, ok := c.byKey[key]
		if !ok {
			id = int32(len(c.sizes))
			c.byKey[key] = id
			c.sizes = append(c.sizes, 0)
			c.keys = append(c.keys, key)
		}
		c.ofRow[i] = id
		c.sizes[id]++
	}
	return c
}
