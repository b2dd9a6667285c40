package transforms

import (
	"reflect"
	"testing"
)

// TestBundleMins: a bundle keeps the least value of every feature, dense
// and sparse ids alike, in id order, each block under its key.
func TestBundleMins(t *testing.T) {
	m := newBundleMins()
	m.add([]uint32{1, 1 << 30}, 9)
	m.add([]uint32{1}, 3)
	m.add([]uint32{1, 1 << 30, 5}, 7)
	m.add([]uint32{5}, 8)
	got := map[int64]featMin{}
	m.flush(func(k int64, b featMin) { got[k] = b })
	want := map[int64]featMin{
		0:                     {Feats: []uint32{1, 5}, Min: []uint64{3, 7}},
		1 << (30 - blockBits): {Feats: []uint32{1 << 30}, Min: []uint64{7}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("flushed %+v, want %+v", got, want)
	}
	m.flush(func(k int64, b featMin) { t.Errorf("a second flush emitted %d %+v", k, b) })
}
