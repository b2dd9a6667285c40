package transforms

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"maps"
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
	register.DoFn3x1[context.Context, RowGroup, func(int, []byte), error](&readPairsFn{})
	beam.RegisterType(reflect.TypeOf((*readNamedPairsFn)(nil)).Elem())
	register.Emitter2[int, []byte]()
	register.Iter1[[]byte]()
	register.DoFn4x1[context.Context, int, func(*[]byte) bool, func(matrix.Matrix), error](&groupUserFn{})
}

// GroupPairs reads a long-form input, one (user, feature) pair per row,
// into the PCollection<matrix.Matrix> that Read makes of the same users
// in list form: blocks of at most MaxBlockRows rows and MaxBlockEntries
// entries (a row with more entries is a block of its own), one row per
// user, its features sorted and free of repeats. Work is split per
// (file, row group) as in Read; each row group is streamed, and every
// run of consecutive pairs of one user (at most MaxBlockEntries of them)
// is a piece, its features sorted and varint-gap encoded. Pieces cross a
// GroupByKey in batches keyed by a hash of the user into p.Shards
// shards (GroupShards of the pairs), never an element per user: a row
// group sends at most one batch of up to maxPieceBatch bytes at a time
// to each shard. A shard merges its users' pieces from every file and
// row group, drops repeated pairs and emits its rows in user order. A
// worker holds a row group's unsent batches (at most Shards ×
// maxPieceBatch bytes), or one shard's pairs (about pairs / Shards:
// 2.4e6 at 1e10 pairs), plus the block it is filling, which it emits
// when full and at the end of each shard.
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
	if p.Shards < 0 {
		panic(fmt.Sprintf("transforms.GroupPairs: %d shards", p.Shards))
	}
	shards := max(p.Shards, 1)
	groups := beam.ParDo(s, &expandRowGroupsFn{Layout: p.Layout}, beam.CreateList(s, files))
	groups = beam.Reshuffle(s, groups)
	var pieces beam.PCollection
	if p.Vocab.IsValid() {
		pieces = beam.ParDo(s, &readNamedPairsFn{readPairsFn{Layout: p.Layout, Shards: shards}}, groups, beam.SideInput{Input: p.Vocab})
	} else {
		pieces = beam.ParDo(s, &readPairsFn{Layout: p.Layout, Shards: shards}, groups)
	}
	return beam.ParDo(s, &groupUserFn{}, beam.GroupByKey(s, pieces))
}

// maxPieceBatch bounds the bytes of pieces a row group holds for one
// shard before it sends them.
const maxPieceBatch = 1 << 20

// GroupShards is the number of shards GroupPairs groups pairs pairs in:
// about sqrt(pairs/100), so that a row group's batch for a shard and a
// shard's share of the pairs both grow as the square root of the input;
// at least 1, at most 4,096.
func GroupShards(pairs int64) int { return RiskShards(pairs) }

// userShard is the shard of a user id.
func userShard(user string, shards int) int {
	h := fnv.New64a()
	h.Write([]byte(user))
	return int(h.Sum64() % uint64(shards))
}

// GroupParams configure GroupPairs.
type GroupParams struct {
	// Layout is the input's layout as matrix.InspectFiles resolved it:
	// matrix.ShapeLong and both column names. Required.
	Layout matrix.Layout
	// Vocab is BuildVocab's output: the vocabulary named features are
	// read through. Required when Layout.Values are names, else unset.
	Vocab beam.PCollection
	// Shards is how many shards the users are grouped in (GroupShards of
	// the input's pairs). Optional; default 1.
	Shards int
}

// readPairsFn streams one row group's pairs and emits each run of
// consecutive pairs of one user as a piece (user, encoded sorted
// features), in batches by the user's shard.
type readPairsFn struct {
	Layout matrix.Layout
	Shards int
}

func (fn *readPairsFn) ProcessElement(ctx context.Context, g RowGroup, emit func(int, []byte)) error {
	return fn.read(ctx, g, nil, emit)
}

// readNamedPairsFn is readPairsFn for named features, read as their ids
// in the vocabulary of the side input.
type readNamedPairsFn struct{ readPairsFn }

func (fn *readNamedPairsFn) ProcessElement(ctx context.Context, g RowGroup, ref VocabRef, emit func(int, []byte)) error {
	v, err := loadVocab(ctx, ref.Path)
	if err != nil {
		return err
	}
	return fn.read(ctx, g, v, emit)
}

func (fn *readPairsFn) read(ctx context.Context, g RowGroup, v *matrix.Vocab, emit func(int, []byte)) error {
	f, err := openRowGroupFile(g, fn.Layout, v)
	if err != nil {
		return err
	}
	defer f.Close()
	var (
		user            string
		buf             []uint32
		gaps            []byte
		pairs, repeated int64
	)
	shards := max(fn.Shards, 1)
	batches := make([]enc, shards)
	flush := func() {
		if len(buf) == 0 {
			return
		}
		slices.Sort(buf)
		n := len(buf)
		buf = slices.Compact(buf)
		repeated += int64(n - len(buf))
		shard := userShard(user, shards)
		e := &batches[shard]
		gaps = appendGaps(gaps[:0], buf)
		e.str(user)
		e.uvarint(uint64(len(gaps)))
		e.b = append(e.b, gaps...)
		if len(e.b) >= maxPieceBatch {
			emit(shard, e.b)
			e.b = nil
		}
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
	for shard, e := range batches {
		if len(e.b) > 0 {
			emit(shard, e.b)
		}
	}
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

// groupUserFn merges one shard's pieces into a row per user, in user
// order, into blocks emitted when full and when the shard is done.
type groupUserFn struct {
	block matrix.Matrix
}

func (fn *groupUserFn) ProcessElement(ctx context.Context, _ int, batches func(*[]byte) bool, emit func(matrix.Matrix)) error {
	type user struct {
		feats  []uint32
		pieces int
	}
	users := map[string]*user{}
	var b []byte
	for batches(&b) {
		d := dec{b: b}
		for len(d.b) > 0 && d.err == nil {
			id, piece := d.str(), d.str()
			if d.err != nil {
				break
			}
			u := users[id]
			if u == nil {
				u = &user{}
				users[id] = u
			}
			var err error
			if u.feats, err = appendFeatures(u.feats, []byte(piece)); err != nil {
				return err
			}
			u.pieces++
		}
		if err := d.done("a batch of pieces"); err != nil {
			return err
		}
	}
	if fn.block.Offsets == nil {
		fn.block = emptyMatrix()
	}
	var repeated int64
	for _, id := range slices.Sorted(maps.Keys(users)) {
		u := users[id]
		if u.pieces > 1 { // each piece is sorted and free of repeats already
			n := len(u.feats)
			slices.Sort(u.feats)
			u.feats = slices.Compact(u.feats)
			repeated += int64(n - len(u.feats))
		}
		if overflows(&fn.block, len(u.feats)) {
			fn.flush(ctx, emit)
		}
		fn.block.Users = append(fn.block.Users, id)
		fn.block.Features = append(fn.block.Features, u.feats...)
		fn.block.Offsets = append(fn.block.Offsets, int64(len(fn.block.Features)))
		if full(fn.block.NumRows(), len(fn.block.Features)) {
			fn.flush(ctx, emit)
		}
		delete(users, id)
	}
	pairsRepeated.Inc(ctx, repeated)
	fn.flush(ctx, emit)
	return nil
}

func (fn *groupUserFn) FinishBundle(ctx context.Context, emit func(matrix.Matrix)) {
	fn.flush(ctx, emit)
	fn.block = matrix.Matrix{}
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
