package importer

import (
	"slices"

	"github.com/smoothanon/smoothanon/matrix"
)

// oneHot collects one categorical value per attribute per record and assigns
// feature ids once all values are known: attributes in order, values sorted
// by byte order within each attribute.
type oneHot struct {
	attrs  []string
	index  []map[string]uint32 // per attribute: label -> local code
	labels [][]string          // per attribute: local code -> label
	users  []string
	codes  []uint32 // len(attrs) local codes per record
}

func newOneHot(attrs []string) *oneHot {
	o := &oneHot{attrs: attrs, index: make([]map[string]uint32, len(attrs)), labels: make([][]string, len(attrs))}
	for a := range attrs {
		o.index[a] = make(map[string]uint32)
	}
	return o
}

// value records attribute a's value of the current record; label is copied
// only when it is new.
func (o *oneHot) value(a int, label []byte) {
	c, ok := o.index[a][string(label)]
	if !ok {
		s := string(label)
		c = uint32(len(o.labels[a]))
		o.index[a][s] = c
		o.labels[a] = append(o.labels[a], s)
	}
	o.codes = append(o.codes, c)
}

// record ends the current record, whose values were given in attribute order.
func (o *oneHot) record(user string) { o.users = append(o.users, user) }

// matrix builds the matrix and the feature names ("attribute=value").
func (o *oneHot) matrix() (*matrix.Matrix, []string) {
	na := len(o.attrs)
	remap := make([][]uint32, na) // local code -> feature id
	var names []string
	for a := range o.attrs {
		order := make([]int, len(o.labels[a]))
		for i := range order {
			order[i] = i
		}
		slices.SortFunc(order, func(x, y int) int {
			switch lx, ly := o.labels[a][x], o.labels[a][y]; {
			case lx < ly:
				return -1
			case lx > ly:
				return 1
			}
			return 0
		})
		remap[a] = make([]uint32, len(order))
		for _, code := range order {
			remap[a][code] = uint32(len(names))
			names = append(names, o.attrs[a]+"="+o.labels[a][code])
		}
	}
	m := &matrix.Matrix{
		Users:    o.users,
		Offsets:  make([]int64, len(o.users)+1),
		Features: make([]uint32, len(o.codes)),
	}
	for i, c := range o.codes {
		m.Features[i] = remap[i%na][c]
	}
	for i := range o.users {
		m.Offsets[i+1] = int64((i + 1) * na)
	}
	return m, names
}
