package transforms

import (
	"math"
	"reflect"
	"strings"
	"testing"
)

// TestBoundsRefusedReachEveryReader: with fewer than K users the bounds
// stage does not fail on its own; it emits the refusal, and every reader of
// the bounds (the cut, and sharpen's) fails with it as an input error, so
// the job's error does not depend on which stage a runner runs first.
func TestBoundsRefusedReachEveryReader(t *testing.T) {
	fn := &boundsFn{ChunkSize: 10, K: 4}
	var got []Bounds
	fn.ProcessElement(nil, func(*[]byte) bool { return false }, 3, func(b Bounds) { got = append(got, b) })
	if len(got) != 1 || got[0].Refused == "" {
		t.Fatalf("3 users, k=4: bounds %+v; want one refusal", got)
	}
	if enc, err := encBounds(got[0]); err != nil {
		t.Fatal(err)
	} else if dec, err := decBounds(enc); err != nil || dec.Refused != got[0].Refused {
		t.Fatalf("the refusal through the coder: %+v, %v", dec, err)
	}
	one := func(b Bounds) func(*Bounds) bool {
		read := false
		return func(out *Bounds) bool {
			if read {
				return false
			}
			read, *out = true, b
			return true
		}
	}
	want := "input has 3 users, fewer than k=4"
	var c *cutter
	if err := readCutter(&c, one(got[0])); err == nil || c != nil {
		t.Fatalf("readCutter on a refusal: %v, cutter %v; want an error and no cutter", err, c)
	} else if line, ok := JobInputError(err); !ok || !strings.HasPrefix(line, want) {
		t.Errorf("readCutter: %v; want an input error starting %q", err, want)
	}
	if _, err := readSharpenCutter(&c, one(got[0])); err == nil {
		t.Errorf("sharpen's reader accepted a refusal")
	} else if line, ok := JobInputError(err); !ok || !strings.HasPrefix(line, want) {
		t.Errorf("sharpen's reader: %v; want an input error starting %q", err, want)
	}
	// With K users there are bounds and no refusal.
	got = nil
	fn.ProcessElement(nil, func(*[]byte) bool { return false }, 4, func(b Bounds) { got = append(got, b) })
	if len(got) != 1 || got[0].Refused != "" {
		t.Fatalf("4 users, k=4: bounds %+v; want bounds without a refusal", got)
	}
	if err := readCutter(&c, one(got[0])); err != nil || c == nil {
		t.Errorf("readCutter on bounds: %v", err)
	}
}

func TestSampleThreshold(t *testing.T) {
	if got := sampleThreshold(1000, 100, 128); got != math.MaxUint64 {
		t.Errorf("small input: threshold %x, want all rows", got)
	}
	// 1e7 rows, chunks of 1e5: 100 chunks × 128 = 12800 samples, rate 1.28e-3.
	got := float64(sampleThreshold(1e7, 1e5, 128)) / math.MaxUint64
	if math.Abs(got-1.28e-3) > 1e-9 {
		t.Errorf("rate %g, want 1.28e-3", got)
	}
	if numChunks(50, 100) != 1 || numChunks(250, 100) != 2 {
		t.Error("numChunks must round down and be at least 1")
	}
}

func TestMergeChunks(t *testing.T) {
	cases := []struct {
		name  string
		sizes map[int64]int64
		min   int64
		want  map[int64]int64
		count int64
	}{
		{"all big", map[int64]int64{0: 20, 1: 30}, 16, map[int64]int64{0: 0, 1: 1}, 2},
		{"small middle", map[int64]int64{0: 20, 1: 5, 2: 12, 3: 40}, 16, map[int64]int64{0: 0, 1: 1, 2: 1, 3: 3}, 3},
		{"small last", map[int64]int64{0: 20, 1: 30, 2: 3}, 16, map[int64]int64{0: 0, 1: 1, 2: 1}, 2},
		{"all small", map[int64]int64{0: 3, 2: 4}, 16, map[int64]int64{0: 0, 2: 0}, 1},
		{"gaps", map[int64]int64{3: 16, 7: 16}, 16, map[int64]int64{3: 3, 7: 7}, 2},
		{"one", map[int64]int64{0: 100}, 16, map[int64]int64{0: 0}, 1},
		{"none", map[int64]int64{}, 16, map[int64]int64{}, 0},
	}
	for _, c := range cases {
		if got := mergeChunks(c.sizes, c.min); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
		if got := countMerged(mergeChunks(c.sizes, c.min)); got != c.count {
			t.Errorf("%s: %d chunks, want %d", c.name, got, c.count)
		}
	}
}

func TestSamplesPerChunk(t *testing.T) {
	for _, c := range []struct{ given, minRows, want int64 }{
		{0, 16, DefaultSamplesPerChunk}, // k = 8
		{0, 64, DefaultSamplesPerChunk}, // k = 32
		{0, 100, 200},                   // k = 50: half a chunk of samples still holds 2k
		{40, 100, 40},                   // given
	} {
		if got := samplesPerChunk(ChunkParams{SamplesPerChunk: c.given, MinRows: c.minRows}); got != c.want {
			t.Errorf("given %d, min rows %d: %d samples per chunk, want %d", c.given, c.minRows, got, c.want)
		}
	}
}

// TestMergeSampled: chunks are merged by their sampled rows as
// mergeChunks merges by rows, and a chunk without sampled rows (it may
// hold unsampled ones) joins the group of the next chunk that has some,
// or of the last one.
func TestMergeSampled(t *testing.T) {
	cases := []struct {
		name    string
		sampled []int64
		want    map[int64]int64
	}{
		{"all big", []int64{20, 30}, map[int64]int64{0: 0, 1: 1}},
		{"small middle", []int64{20, 5, 12, 40}, map[int64]int64{0: 0, 1: 1, 2: 1, 3: 3}},
		{"empty first", []int64{0, 20, 30}, map[int64]int64{0: 1, 1: 1, 2: 2}},
		{"empty middle", []int64{20, 0, 30}, map[int64]int64{0: 0, 1: 2, 2: 2}},
		{"empty last", []int64{20, 30, 0, 0}, map[int64]int64{0: 0, 1: 1, 2: 1, 3: 1}},
		{"none sampled", []int64{0, 0}, map[int64]int64{0: 0, 1: 0}},
		{"one", []int64{3}, map[int64]int64{0: 0}},
	}
	for _, c := range cases {
		if got := mergeSampled(c.sampled, 16); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
