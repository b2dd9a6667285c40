package transforms

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
)

// TestRisk counts a hand-checked input spread over blocks: the set
// {1,2} twice, {1,2,3}, {1}, {4}, {5,6} and the empty set once each.
// {1,2,3} is one feature (3) away from {1,2}, {1} and {4} one feature
// away from the empty set.
func TestRisk(t *testing.T) {
	blocks := []any{
		blockOf(testRow{"u1", []uint32{1, 2}}, testRow{"u3", []uint32{1, 2, 3}}),
		blockOf(testRow{"u2", []uint32{1, 2}}, testRow{"u4", []uint32{1}}, testRow{"u6", nil}),
		blockOf(testRow{"u5", []uint32{4}}, testRow{"u7", []uint32{5, 6}}),
	}
	want := RiskCounts{Rows: 7, Entries: 11, Features: 6, Degrees: []int64{1, 2, 4}, Unique: 5,
		Below: []int64{5, 7}, Exposing: []RiskFeature{{Feature: 1, Rows: 1}, {Feature: 3, Rows: 1}, {Feature: 4, Rows: 1}}}
	for _, shards := range []int{0, 1, 3, 64} {
		path := filepath.Join(t.TempDir(), "risk.json")
		p, s, col := ptest.Create(blocks)
		Risk(s, col, RiskParams{Ks: []int{2, 3}, Path: path, Shards: shards})
		if err := ptest.Run(p); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var got RiskCounts
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Risk in %d shards wrote %+v, want %+v", shards, got, want)
		}
	}
}

// TestRiskShards: about sqrt(rows/100), within [1, 4096].
func TestRiskShards(t *testing.T) {
	for rows, want := range map[int64]int{0: 1, 100: 1, 1e5: 32, 1e6: 100, 1e9: 3163, 1e12: 4096} {
		if got := RiskShards(rows); got != want {
			t.Errorf("RiskShards(%d) = %d, want %d", rows, got, want)
		}
	}
}

// TestRiskRefusesBadBatch: a batch that does not decode fails its stage
// with the element named, rather than counting garbage.
func TestRiskRefusesBadBatch(t *testing.T) {
	iterOf := func(bs ...[]byte) func(*[]byte) bool {
		return func(b *[]byte) bool {
			if len(bs) == 0 {
				return false
			}
			*b, bs = bs[0], bs[1:]
			return true
		}
	}
	fn := &setShardFn{Ks: []int{2}, Shards: 1}
	if err := fn.ProcessElement(0, iterOf([]byte{0x05, 'a'}), func(RiskCounts) {}, func(int, []byte) {}, func(int, []byte) {}); err == nil {
		t.Error("setShardFn took a truncated batch of sets")
	}
	if err := (&probeShardFn{}).ProcessElement(0, iterOf(make([]byte, probeLen-1)), func(int, []byte) {}); err == nil {
		t.Error("probeShardFn took a truncated probe")
	}
	if _, err := exposingBlock(0, iterOf([]byte{0x80})); err == nil {
		t.Error("exposingBlock took a truncated count")
	}
}

// TestMergeRisk: counts add, degrees of different lengths pad, and
// Exposing keeps the largest, ties by feature.
func TestMergeRisk(t *testing.T) {
	var a, b RiskCounts
	a.Degrees, b.Degrees = []int64{1}, []int64{0, 2, 3}
	for f := range uint32(TopExposing) {
		a.Exposing = append(a.Exposing, RiskFeature{Feature: f, Rows: 5})
	}
	b.Exposing = []RiskFeature{{Feature: 99, Rows: 7}, {Feature: 50, Rows: 5}}
	got := mergeRisk(a, b)
	if !reflect.DeepEqual(got.Degrees, []int64{1, 2, 3}) || len(got.Exposing) != TopExposing ||
		got.Exposing[0] != (RiskFeature{99, 7}) || got.Exposing[TopExposing-1] != (RiskFeature{8, 5}) {
		t.Errorf("mergeRisk = %+v", got)
	}
}
