package transforms

import (
	"context"
	"encoding/binary"
	"fmt"
	"reflect"
	"slices"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/smoothanon/smoothanon/matrix"
)

var (
	pairsRead     = beam.NewCounter("smoothanon", "pairs_read")
	pairsRepeated = beam.NewCounter("smoothanon", "pairs_repeated")
)

func init() {
	register.DoFn3x1[context.Context, RowGroup, func(string, []byte), error](&readPairsFn{})
	beam.RegisterType(reflect.TypeOf((*readNamedPairsFn)(nil)).Elem())
	register.Emitter2[string, []byte]()
	register.Iter1[[]byte]()
	register.DoFn4x1[context.Context, string, func(*[]byte) bool, func(matrix.Matrix), error](&groupUserFn{})
}

// GroupPairs reads a long-form input, one (user, feature) pair per row,
// into the PCollection<matrix.Matrix> that Read makes of the same users
// in list form: blocks of at most MaxBlockRows rows and MaxBlockEntries
// entries (a row with more entries is a block of its own), one row per
// user, its features sorted and free of repeats. Work is split per
// (file, row group) as in Read; each row group is streamed, and every
// run of consecutive pairs of one user (at most MaxBlockEntries of them)
// crosses a GroupByKey keyed by the user id as one element, its features
// sorted and varint-gap encoded. The grouping merges a user's pieces
// from every file and row group and drops repeated pairs. A worker holds
// one user's features at a time, plus the block it is filling, which it
// emits when full and at the end of each bundle.
//
// A user without features has no row in long form, so no such user
// reaches the output. A file that cannot be read, or a row with a null
// feature or a missing column, fails the job with a one-line input error
// naming file, row and column (JobInputError).
//
// The output rows are a pure function of the set of input pairs: the
// order of files, row groups and rows, the bundling and the runner's
// retries change only which block a row lands in, and the order of rows
// within and across blocks.
func GroupPairs(s beam.Scope, files []string, p GroupParams) beam.PCollection {
	s = s.Scope("GroupPairs")
	if p.Layout.Shape != matrix.ShapeLong {
		panic(fmt.Sprintf("transforms.GroupPairs: layout %v, want long form", p.Layout))
	}
	checkVocabParam("GroupPairs", p.Layout, p.Vocab)
	groups := beam.ParDo(s, &expandRowGroupsFn{Layout: p.Layout}, beam.CreateList(s, files))
	groups = beam.Reshuffle(s, groups)
	var pieces beam.PCollection
	if p.Vocab.IsValid() {
		pieces = beam.ParDo(s, &readNamedPairsFn{readPairsFn{Layout: p.Layout}}, groups, beam.SideInput{Input: p.Vocab})
	} else {
		pieces = beam.ParDo(s, &readPairsFn{Layout: p.Layout}, groups)
	}
	return beam.ParDo(s, &groupUserFn{}, beam.GroupByKey(s, pieces))
}

// GroupParams configure GroupPairs.
type GroupParams struct {
	// Layout is the input's layout as matrix.InspectFiles resolved it:
	// matrix.ShapeLong and both column names. Required.
	Layout matrix.Layout
	// Vocab is BuildVocab's output: the vocabulary named features are
	// read through. Required when Layout.Values are names, else unset.
	Vocab beam.PCollection
}

// readPairsFn streams one row group's pairs and emits each run of
// consecutive pairs of one user as (user, encoded sorted features).
type readPairsFn struct{ Layout matrix.Layout }

func (fn *readPairsFn) ProcessElement(ctx context.Context, g RowGroup, emit func(string, []byte)) error {
	return fn.read(ctx, g, nil, emit)
}

// readNamedPairsFn is readPairsFn for named features, read as their ids
// in the vocabulary of the side input.
type readNamedPairsFn struct{ readPairsFn }

func (fn *readNamedPairsFn) ProcessElement(ctx context.Context, g RowGroup, ref VocabRef, emit func(string, []byte)) error {
	v, err := loadVocab(ctx, ref.Path)
	if err != nil {
		return err
	}
	return fn.read(ctx, g, v, emit)
}

func (fn *readPairsFn) read(ctx context.Context, g RowGroup, v *matrix.Vocab, emit func(string, []byte)) error {
	f, err := openRowGroupFile(g, fn.Layout, v)
	if err != nil {
		return err
	}
	defer f.Close()
	var (
		user            string
		buf             []uint32
		pairs, repeated int64
	)
	flush := func() {
		if len(buf) == 0 {
			return
		}
		slices.Sort(buf)
		n := len(buf)
		buf = slices.Compact(buf)
		repeated += int64(n - len(buf))
		emit(user, appendGaps(nil, buf))
		buf = buf[:0]
	}
	err = f.ReadRowGroup(int(g.Group), func(u string, feats []uint32) error {
		if u != user || len(buf) >= MaxBlockEntries {
			flush()
			user = u
		}
		buf = append(buf, feats...)
		pairs += int64(len(feats))
		return nil
	})
	if err != nil {
		return markJobError(err)
	}
	flush()
	pairsRead.Inc(ctx, pairs)
	pairsRepeated.Inc(ctx, repeated) // within a run; groupUserFn counts those across runs
	rowGroupsRead.Inc(ctx, 1)
	return nil
}

// appendGaps appends the sorted features f to b as varint gaps (the first
// as itself).
func appendGaps(b []byte, f []uint32) []byte {
	prev := uint32(0)
	for _, v := range f {
		b = binary.AppendUvarint(b, uint64(v-prev))
		prev = v
	}
	return b
}

// appendFeatures appends the features appendGaps encoded in b to f.
func appendFeatures(f []uint32, b []byte) ([]uint32, error) {
	prev := uint64(0)
	for len(b) > 0 {
		v, n := binary.Uvarint(b)
		if n <= 0 || prev+v > 1<<32-1 {
			return f, fmt.Errorf("decoding a user's features: %w", errShort)
		}
		prev += v
		f = append(f, uint32(prev))
		b = b[n:]
	}
	return f, nil
}

// groupUserFn merges one user's pieces into a row and adds it to the
// bundle's block, emitted when full and when the bundle finishes.
type groupUserFn struct {
	block matrix.Matrix
	buf   []uint32
}

func (fn *groupUserFn) ProcessElement(ctx context.Context, user string, pieces func(*[]byte) bool, emit func(matrix.Matrix)) error {
	fn.buf = fn.buf[:0]
	var piece []byte
	var err error
	n := 0
	for ; pieces(&piece); n++ {
		if fn.buf, err = appendFeatures(fn.buf, piece); err != nil {
			return err
		}
	}
	seen := len(fn.buf)
	if n > 1 { // each piece is sorted and free of repeats already
		slices.Sort(fn.buf)
		fn.buf = slices.Compact(fn.buf)
	}
	pairsRepeated.Inc(ctx, int64(seen-len(fn.buf)))
	if fn.block.Offsets == nil {
		fn.block = emptyMatrix()
	}
	if fn.block.NumRows() > 0 && len(fn.block.Features)+len(fn.buf) > MaxBlockEntries {
		fn.flush(ctx, emit)
	}
	fn.block.Users = append(fn.block.Users, user)
	fn.block.Features = append(fn.block.Features, fn.buf...)
	fn.block.Offsets = append(fn.block.Offsets, int64(len(fn.block.Features)))
	if full(fn.block.NumRows(), len(fn.block.Features)) {
		fn.flush(ctx, emit)
	}
	return nil
}

func (fn *groupUserFn) FinishBundle(ctx context.Context, emit func(matrix.Matrix)) {
	fn.flush(ctx, emit)
	fn.block, fn.buf = matrix.Matrix{}, nil
}

// flush emits the block being filled, if it holds rows, and starts a new
// one (a fresh one: the emitted block's slices belong to the runner now).
func (fn *groupUserFn) flush(ctx context.Context, emit func(matrix.Matrix)) {
	if fn.block.NumRows() > 0 {
		rowsRead.Inc(ctx, int64(fn.block.NumRows()))
		emit(fn.block)
	}
	fn.block = emptyMatrix()
}
