package importer

import (
	"io"
	"slices"
	"strconv"

	"github.com/smoothanon/smoothanon/matrix"
)

// Edges reads a SNAP-style edge list from r (see the package doc).
func Edges(r io.Reader, name string, opts Options) (*matrix.Matrix, Stats, error) {
	st := Stats{Format: FormatEdges}
	lr := newLineReader(r, name)
	var keys []uint64 // src<<32 | dst
	for {
		line, ok := lr.next()
		if !ok {
			break
		}
		if isSkippable(line) {
			st.Skipped++
			continue
		}
		a, rest := nextField(line)
		b, rest := nextField(rest)
		if extra, _ := nextField(rest); len(extra) > 0 {
			return nil, st, lr.errorf("field 3", "unexpected third field %s (want \"src dst\")", quote(extra))
		}
		if len(b) == 0 {
			return nil, st, lr.errorf("", "want two node ids \"src dst\", got %s", quote(line))
		}
		src, err := parseUint32(a)
		if err != nil {
			return nil, st, lr.errorf("field 1 (src)", "%v", err)
		}
		dst, err := parseUint32(b)
		if err != nil {
			return nil, st, lr.errorf("field 2 (dst)", "%v", err)
		}
		st.Records++
		if src == dst {
			st.SelfLoops++
		}
		keys = append(keys, uint64(src)<<32|uint64(dst))
		if opts.Undirected && src != dst {
			keys = append(keys, uint64(dst)<<32|uint64(src))
		}
	}
	st.Lines = lr.line
	if err := lr.failure(); err != nil {
		return nil, st, err
	}
	n := len(keys)
	sortKeys(keys)
	keys = slices.Compact(keys)
	st.RepeatedEntries = int64(n - len(keys))

	// Nodes: every source and every target, ascending.
	var nodes []uint32
	if opts.Undirected {
		nodes = make([]uint32, 0, len(keys)/4+1)
		for _, k := range keys {
			if s := uint32(k >> 32); len(nodes) == 0 || nodes[len(nodes)-1] != s {
				nodes = append(nodes, s)
			}
		}
		// A self-loop's node is a source too, so sources are all nodes.
	} else {
		all := make([]uint64, 0, 2*len(keys))
		for _, k := range keys {
			all = append(all, k>>32, k&0xffffffff)
		}
		sortKeys(all)
		all = slices.Compact(all)
		nodes = make([]uint32, len(all))
		for i, v := range all {
			nodes[i] = uint32(v)
		}
	}

	m := &matrix.Matrix{
		Users:    make([]string, len(nodes)),
		Offsets:  make([]int64, len(nodes)+1),
		Features: make([]uint32, len(keys)),
	}
	// One backing string for all user ids keeps allocations to a few.
	var idBuf []byte
	ends := make([]int, len(nodes))
	for i, v := range nodes {
		idBuf = strconv.AppendUint(idBuf, uint64(v), 10)
		ends[i] = len(idBuf)
	}
	ids := string(idBuf)
	start := 0
	for i := range nodes {
		m.Users[i] = ids[start:ends[i]]
		start = ends[i]
	}
	k := 0
	for i, v := range nodes {
		for k < len(keys) && uint32(keys[k]>>32) == v {
			m.Features[k] = uint32(keys[k])
			k++
		}
		m.Offsets[i+1] = int64(k)
	}
	return finish(m, &st, name, opts, true) // node ids are distinct
}

// nextField returns the first space- or tab-separated field of b and the rest.
func nextField(b []byte) (field, rest []byte) {
	i := 0
	for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
		i++
	}
	j := i
	for j < len(b) && b[j] != ' ' && b[j] != '\t' {
		j++
	}
	return b[i:j], b[j:]
}

// sortKeys sorts ascending: an LSD radix sort on 16-bit digits for large
// inputs, skipping digits that are constant.
func sortKeys(a []uint64) {
	if len(a) < 1<<12 {
		slices.Sort(a)
		return
	}
	var or, and uint64 = 0, ^uint64(0)
	for _, v := range a {
		or |= v
		and &= v
	}
	diff := or ^ and // bits that vary
	buf := make([]uint64, len(a))
	src, dst := a, buf
	var count [1 << 16]int
	for shift := uint(0); shift < 64; shift += 16 {
		if (diff>>shift)&0xffff == 0 {
			continue
		}
		clear(count[:])
		for _, v := range src {
			count[(v>>shift)&0xffff]++
		}
		pos := 0
		for i, c := range count {
			count[i] = pos
			pos += c
		}
		for _, v := range src {
			d := (v >> shift) & 0xffff
			dst[count[d]] = v
			count[d]++
		}
		src, dst = dst, src
	}
	if &src[0] != &a[0] {
		copy(a, src)
	}
}
