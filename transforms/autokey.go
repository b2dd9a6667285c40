package transforms

import (
	"errors"
	"fmt"
	"math/bits"
	"slices"

	"github.com/smoothanon/smoothanon/matrix"
)

// KeyAuto is not a key of its own: ChooseKey picks KeySpectral or KeyHub
// from a sample of the input before the pipeline is built, and Signature
// refuses it.
//
// The spectral coordinate orders rows well when it is spread over them:
// then rows with near values share features. On lists without community
// structure (independent power-law interest lists) its slowest-mixing
// direction sits on a few rows that hold rare features together, and the
// coordinate of every other row is noise; there the hub key gives a higher
// Jaccard, with one pass over the rows instead of eleven.
//
// ChooseKey runs DefaultSpectralIterations spectral rounds (whatever
// --spectral_iterations says: the threshold was measured there) on a
// sample of the rows, in memory, and measures how concentrated the result is: the share of the
// coordinate's variance carried by its top 1% of rows. Above
// autoHubShare, the hub key is chosen.
const (
	// autoSampleRows bounds the sample.
	autoSampleRows = 1 << 16
	// autoSampleSlots is the number of places the sample is read from:
	// evenly spaced files, and evenly spaced row groups within them, so a
	// sorted input is not judged by its first rows only.
	autoSampleSlots = 8
	// autoMinRows is the least sample (rows holding a feature that another
	// sampled row holds too) that may choose the hub key; smaller samples
	// keep the spectral key.
	autoMinRows = 1000
	// autoHubShare is the share of the sampled coordinate's variance on its
	// top 1% of rows above which the hub key is chosen: lists without
	// community structure come out near 1, data with communities far below
	// (see docs/decisions/004-auto-chunk-key.md).
	autoHubShare = 0.9
)

// KeyChoice is the outcome of ChooseKey.
type KeyChoice struct {
	// Key is KeySpectral or KeyHub.
	Key Key
	// SampleRows is the number of sampled rows the statistic used: those
	// holding a feature that another sampled row holds too.
	SampleRows int64
	// TopShare is the share of the sampled spectral coordinate's variance
	// on its top 1% of rows.
	TopShare float64
}

// ChooseKey reads a sample of the rows of files (sorted Parquet paths, as
// the pipeline reads them, of the list-form layout lay) and picks the
// chunk key for them (see KeyAuto). The choice depends only on the files
// and the seed, so every runner builds the same pipeline.
func ChooseKey(files []string, lay matrix.Layout, seed int64) (KeyChoice, error) {
	rows, _, err := sampleRows(files, lay, autoSampleRows, autoSampleSlots)
	if err != nil {
		return KeyChoice{}, fmt.Errorf("chunk key auto: %w", err)
	}
	share, used := topShare(rows, seed, DefaultSpectralIterations)
	return KeyChoice{Key: choose(share, used), SampleRows: int64(used), TopShare: share}, nil
}

// choose is the key for a sample of used rows whose coordinate has share
// of its variance on its top 1% of rows.
func choose(share float64, used int) Key {
	if used >= autoMinRows && share > autoHubShare {
		return KeyHub
	}
	return KeySpectral
}

var errSampleFull = errors.New("sample full")

// sampleRows reads up to maxRows non-empty rows from slots places: up to
// slots evenly spaced files, each cut into up to slots/files equal ranges
// of row groups; every range gives an equal share, read from its first
// row group on until the share is full or the range ends. (A file of one
// row group is one range: its first rows stand for it.) Named features
// get ids from one vocabulary over all the files sampled, so that a name
// in two files is one feature.
func sampleRows(files []string, lay matrix.Layout, maxRows, slots int) ([][]uint32, *matrix.Vocab, error) {
	nf := min(slots, len(files))
	var rows [][]uint32
	var vocab *matrix.Vocab
	if lay.Values.Named() {
		vocab = matrix.NewGrowingVocab(lay.Values)
	}
	for j := 0; j < nf; j++ {
		var err error
		if rows, err = sampleFile(rows, files[j*len(files)/nf], lay, vocab, (slots+nf-1)/nf, maxRows/nf); err != nil {
			return nil, nil, err
		}
	}
	return rows, vocab, nil
}

// sampleFile appends to rows up to quota non-empty rows of path, in equal
// shares from up to ranges equal ranges of its row groups. In long form a
// sampled row is a run of consecutive pairs of one user: the whole user
// where the file keeps a user's pairs together (as exports grouped by
// user do), a part of one where it does not.
func sampleFile(rows [][]uint32, path string, lay matrix.Layout, vocab *matrix.Vocab, ranges, quota int) ([][]uint32, error) {
	f, err := matrix.OpenFileAs(path, lay)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if vocab != nil {
		if err := f.UseVocab(vocab); err != nil {
			return nil, err
		}
	}
	g := f.NumRowGroups()
	ng := min(ranges, g)
	for i := 0; i < ng; i++ {
		share := quota / ng
		for grp := i * g / ng; grp < (i+1)*g/ng && share > 0; grp++ {
			var user string
			var long []uint32 // the pairs of user read last (long form)
			take := func(feats []uint32) error {
				if share == 0 {
					return errSampleFull
				}
				if len(feats) > 0 {
					rows = append(rows, slices.Clone(feats))
					share--
				}
				return nil
			}
			err := f.ReadRowGroup(grp, func(u string, feats []uint32) error {
				if lay.Shape != matrix.ShapeLong {
					return take(feats)
				}
				if u != user && len(long) > 0 {
					slices.Sort(long)
					if err := take(slices.Compact(long)); err != nil {
						return err
					}
					long = long[:0]
				}
				user = u
				long = append(long, feats...)
				return nil
			})
			if err == nil && len(long) > 0 {
				slices.Sort(long)
				err = take(slices.Compact(long))
			}
			if err != nil && !errors.Is(err, errSampleFull) {
				return nil, err
			}
		}
	}
	return rows, nil
}

// topShare runs rounds spectral rounds on rows as the pipeline does
// (spectral.go: rounds feature means, then the rows' means, in integers),
// counting only features that at least two of them hold (a feature seen
// once says nothing about which rows belong together), and returns the share of the final row coordinates'
// squared deviation from their mean carried by the top 1% of rows, and
// the number of rows counted. With fewer than two rows, or no deviation at
// all, the coordinate orders nothing: the share is 1.
func topShare(rows [][]uint32, seed int64, rounds int) (float64, int) {
	deg := map[uint32]int32{}
	for _, r := range rows {
		for _, f := range r {
			deg[f]++
		}
	}
	dense := map[uint32]int32{} // shared feature -> dense id
	var x []int64               // dense id -> coordinate
	var n []int64               // dense id -> holders
	s := spectralSeed(seed)
	var kept [][]int32
	for _, r := range rows {
		var k []int32
		for _, f := range r {
			if deg[f] < 2 {
				continue
			}
			id, ok := dense[f]
			if !ok {
				id = int32(len(x))
				dense[f] = id
				x = append(x, initCoord(s, f))
				n = append(n, int64(deg[f]))
			}
			k = append(k, id)
		}
		if len(k) > 0 {
			kept = append(kept, k)
		}
	}
	if len(kept) < 2 {
		return 1, len(kept)
	}
	y := make([]int64, len(kept))
	sum := make([]int64, len(x))
	for round := 0; ; round++ {
		for i, k := range kept {
			var t int64
			for _, id := range k {
				t += x[id]
			}
			y[i] = t / int64(len(k))
		}
		if round == rounds {
			break
		}
		clear(sum)
		for i, k := range kept {
			for _, id := range k {
				sum[id] += y[i]
			}
		}
		for id := range x {
			x[id] = sum[id] / n[id]
		}
	}
	return concentration(y), len(kept)
}

// concentration is the share of the squared deviations of y from their
// (truncated) mean carried by the largest 1% of them (at least one), or 1
// when they are all zero (a coordinate that converged to one value orders
// nothing). y holds values in [-2^29, 2^29): each square is below 2^60,
// and the squares are summed exactly in 128 bits.
func concentration(y []int64) float64 {
	var t int64
	for _, v := range y {
		t += v
	}
	mean := t / int64(len(y))
	sq := make([]uint64, len(y))
	for i, v := range y {
		d := v - mean
		sq[i] = uint64(d * d)
	}
	slices.Sort(sq)
	all := sum128(sq)
	if all == 0 {
		return 1
	}
	return sum128(sq[len(sq)-max(1, len(sq)/100):]) / all
}

// sum128 is the exact sum of v, as a float64.
func sum128(v []uint64) float64 {
	var hi, lo uint64
	for _, x := range v {
		var c uint64
		lo, c = bits.Add64(lo, x, 0)
		hi += c
	}
	return float64(float64(hi)*0x1p64) + float64(lo)
}
