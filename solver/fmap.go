package solver

// fmap is a small open-addressing hash map from a dense feature id (≥ 0) to
// a positive count, for the per-cluster counts of refine, which Go maps
// made slow (see docs/decisions/020-solver-inner-loops.md). Linear
// probing, deletion by backward shift, load at most 1/2.
type fmap struct {
	keys []int32 // -1 = empty
	vals []int32
	n    int
	mask uint32
}

func fhash(f int32) uint32 { return uint32(f) * 0x9E3779B1 }

func (m *fmap) slot(f int32) uint32 {
	i := fhash(f) & m.mask
	for m.keys[i] != f && m.keys[i] != -1 {
		i = (i + 1) & m.mask
	}
	return i
}

// get returns the count of f (0 when absent).
func (m *fmap) get(f int32) int32 {
	if m.n == 0 {
		return 0
	}
	i := m.slot(f)
	if m.keys[i] == f {
		return m.vals[i]
	}
	return 0
}

// set stores v (> 0) for f, or deletes f when v == 0.
func (m *fmap) set(f, v int32) {
	if v == 0 {
		m.del(f)
		return
	}
	if 2*(m.n+1) > len(m.keys) {
		m.grow()
	}
	i := m.slot(f)
	if m.keys[i] == -1 {
		m.keys[i] = f
		m.n++
	}
	m.vals[i] = v
}

func (m *fmap) del(f int32) {
	if m.n == 0 {
		return
	}
	i := m.slot(f)
	if m.keys[i] != f {
		return
	}
	m.n--
	// Backward shift: move later entries of the probe run into the hole.
	for {
		m.keys[i] = -1
		j := i
		for {
			j = (j + 1) & m.mask
			if m.keys[j] == -1 {
				return
			}
			h := fhash(m.keys[j]) & m.mask
			// Entry j may move to i if its home h is not in (i, j].
			if (i <= j && (h <= i || h > j)) || (i > j && h <= i && h > j) {
				m.keys[i], m.vals[i] = m.keys[j], m.vals[j]
				i = j
				break
			}
		}
	}
}

// reset empties m and makes room for n entries without growing.
func (m *fmap) reset(n int) {
	size := 8
	for size < 2*n {
		size *= 2
	}
	if len(m.keys) != size {
		m.keys = make([]int32, size)
		m.vals = make([]int32, size)
		m.mask = uint32(size - 1)
	}
	for i := range m.keys {
		m.keys[i] = -1
	}
	m.n = 0
}

// grow doubles the table (at least 8 slots).
func (m *fmap) grow() {
	old, oldV, n := m.keys, m.vals, m.n
	m.reset(len(old))
	m.n = n
	for i, k := range old {
		if k != -1 {
			j := fhash(k) & m.mask
			for m.keys[j] != -1 {
				j = (j + 1) & m.mask
			}
			m.keys[j], m.vals[j] = k, oldV[i]
		}
	}
}

// each calls fn for every entry, in slot order.
func (m *fmap) each(fn func(f, v int32)) {
	for i, k := range m.keys {
		if k != -1 {
			fn(k, m.vals[i])
		}
	}
}
