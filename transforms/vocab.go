package transforms

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"hash/maphash"
	"reflect"
	"slices"
	"sync"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/storage"
)

var vocabNames = beam.NewCounter("smoothanon", "vocab_names")

func init() {
	// The DoFns here run once per row group, per batch of names or per
	// run, so they take reflection: each generic registration grows this
	// package's compile, already the largest of the build
	// (docs/decisions/026-feature-dictionary.md).
	beam.RegisterType(reflect.TypeOf((*readNamesFn)(nil)).Elem())
	register.Combiner3[vocabAcc, []byte, []byte](&vocabCombineFn{})
	beam.RegisterType(reflect.TypeOf((*writeVocabFn)(nil)).Elem())
}

// DefaultVocabShards is VocabParams.Shards's default.
const DefaultVocabShards = 64

// maxBundleNames is the most distinct names readNamesFn holds before it
// sends them on.
const maxBundleNames = 1 << 20

// VocabParams configure BuildVocab.
type VocabParams struct {
	// Layout is the input's layout as matrix.InspectFiles resolved it,
	// its Values names (matrix.ValuesStrings or ValuesIntegers). Required.
	Layout matrix.Layout
	// Path is where the vocabulary is written (the run's staging,
	// release.StagedVocab), local or a URI. Required.
	Path string
	// Shards is the number of keys the distinct names are merged under
	// before one merge of all of them (a name's shard is a hash of its
	// bytes); what a runner that gathers a key's values holds for a key
	// is about the distinct names of all bundles over Shards. Optional;
	// default DefaultVocabShards.
	Shards int
}

// VocabRef names the vocabulary BuildVocab wrote.
type VocabRef struct {
	Path  string
	Names int64
}

// BuildVocab counts the distinct feature names of the input's files and
// writes them, sorted, as a matrix.Vocab to p.Path: a feature's id is its
// name's rank, so ids are a pure function of the set of names, whatever
// the order of files and rows. It returns a PCollection<VocabRef> of one
// element, which Read, GroupPairs and Write take as a side input: they
// map names to ids and back through the file it names.
//
// A bundle's distinct names (at most maxBundleNames at a time) leave it
// as one sorted batch per shard of the names' hash; a combine per shard
// merges its batches, and one global combine merges the shards. The
// bundle does the pre-combining itself because not every runner lifts a
// combine before its shuffle (Flink's batch runner gathers a key's
// values in its own heap): the shuffle carries each name once per bundle
// that holds it, never once per row group. A bundle's set and the final
// vocabulary hold each name once (its bytes plus a slice header while
// combining; its bytes plus 16 to 24 bytes once loaded, see
// matrix.Vocab); a shard's combine holds its names once per bundle that
// sent them, which p.Shards divides (the pipeline scales it with the
// input, GroupShards). A row with a null name, or a string that is not
// UTF-8, fails the job with a one-line input error naming file, row and
// column (JobInputError).
func BuildVocab(s beam.Scope, files []string, p VocabParams) beam.PCollection {
	s = s.Scope("BuildVocab")
	if !p.Layout.Values.Named() || p.Path == "" || p.Shards < 0 {
		panic(fmt.Sprintf("transforms.BuildVocab: layout %v, path %q, %d shards: want named features, a path and shards >= 0", p.Layout, p.Path, p.Shards))
	}
	groups := beam.ParDo(s, &expandRowGroupsFn{Layout: p.Layout}, beam.CreateList(s, files))
	groups = beam.Reshuffle(s, groups)
	batches := beam.ParDo(s, &readNamesFn{Layout: p.Layout, Shards: cmp.Or(p.Shards, DefaultVocabShards)}, groups)
	shards := beam.DropKey(s, beam.CombinePerKey(s, &vocabCombineFn{}, batches))
	all := beam.Combine(s, &vocabCombineFn{}, shards)
	return beam.ParDo(s, &writeVocabFn{Layout: p.Layout, Path: p.Path}, all)
}

// readNamesFn gathers the distinct names (matrix.Vocab keys) of a
// bundle's row groups and emits them as (shard, batch) pairs: a batch is
// a shard's names, sorted and encoded by encodeNames.
type readNamesFn struct {
	Layout matrix.Layout
	Shards int
	names  *matrix.Vocab
}

func (fn *readNamesFn) ProcessElement(ctx context.Context, g RowGroup, emit func(int, []byte)) error {
	f, err := matrix.OpenFileAs(g.File, fn.Layout)
	if err != nil {
		return markJobError(err)
	}
	defer f.Close()
	if fn.names == nil {
		fn.names = matrix.NewGrowingVocab(f.Layout().Values)
	}
	if err := f.UseVocab(fn.names); err != nil {
		return markJobError(err)
	}
	if err := f.ReadRowGroup(int(g.Group), func(string, []uint32) error { return nil }); err != nil {
		return markJobError(err)
	}
	rowGroupsRead.Inc(ctx, 1)
	if fn.names.Len() >= maxBundleNames {
		fn.flush(emit)
	}
	return nil
}

func (fn *readNamesFn) FinishBundle(emit func(int, []byte)) { fn.flush(emit) }

func (fn *readNamesFn) flush(emit func(int, []byte)) {
	if fn.names == nil {
		return
	}
	shards := make([][][]byte, fn.Shards)
	for id := range fn.names.Len() {
		key := fn.names.Key(uint32(id))
		shard := maphash.Bytes(vocabSeed, key) % uint64(fn.Shards)
		shards[shard] = append(shards[shard], key)
	}
	for i, keys := range shards {
		if len(keys) > 0 {
			slices.SortFunc(keys, bytes.Compare)
			emit(i, encodeNames(keys))
		}
	}
	fn.names = nil
}

// vocabSeed hashes names to shards. A shard only groups names to merge,
// so the seed need not agree between processes.
var vocabSeed = maphash.MakeSeed()

// encodeNames encodes keys as a batch: each key's length as a uvarint,
// then its bytes.
func encodeNames(keys [][]byte) []byte {
	var e enc
	for _, k := range keys {
		e.bytes(k)
	}
	return e.b
}

// decodeNames appends the keys of a batch to keys; they alias b. A batch
// is the pipeline's own data, so a malformed one is a bug and panics.
func decodeNames(keys [][]byte, b []byte) [][]byte {
	d := dec{b: b}
	for len(d.b) > 0 {
		at := len(d.b)
		k := d.bytes()
		if d.err != nil {
			panic(fmt.Sprintf("transforms: malformed batch of names at %d bytes before its end", at))
		}
		keys = append(keys, k)
	}
	return keys
}

// vocabAcc is a set of names being combined: Keys, of which the first
// Sorted are sorted and distinct.
type vocabAcc struct {
	Keys   [][]byte
	Sorted int
}

// compact sorts a's keys and drops repeats.
func (a *vocabAcc) compact() {
	slices.SortFunc(a.Keys, bytes.Compare)
	a.Keys = slices.CompactFunc(a.Keys, bytes.Equal)
	a.Sorted = len(a.Keys)
}

// grown compacts a whenever its keys have doubled since it last was, so
// that it never holds more than about twice the distinct names it has
// seen.
func (a vocabAcc) grown() vocabAcc {
	if len(a.Keys) > 2*a.Sorted+1024 {
		a.compact()
	}
	return a
}

// vocabCombineFn merges batches of names into one batch of the distinct
// names, sorted.
type vocabCombineFn struct{}

func (*vocabCombineFn) CreateAccumulator() vocabAcc { return vocabAcc{} }

func (*vocabCombineFn) AddInput(a vocabAcc, batch []byte) vocabAcc {
	a.Keys = decodeNames(a.Keys, batch)
	return a.grown()
}

func (*vocabCombineFn) MergeAccumulators(a, b vocabAcc) vocabAcc {
	a.Keys = append(a.Keys, b.Keys...)
	return a.grown()
}

func (*vocabCombineFn) ExtractOutput(a vocabAcc) []byte {
	a.compact()
	return encodeNames(a.Keys)
}

// writeVocabFn writes the sorted names as the vocabulary file.
type writeVocabFn struct {
	Layout matrix.Layout
	Path   string
}

func (fn *writeVocabFn) ProcessElement(ctx context.Context, batch []byte, emit func(VocabRef)) error {
	keys := decodeNames(nil, batch)
	if len(keys) >= 1<<32 {
		return fmt.Errorf("%d distinct features, more than 2^32-1", len(keys))
	}
	v, err := matrix.NewVocab(fn.Layout.Values, keys)
	if err != nil {
		return err
	}
	w, err := storage.Create(ctx, fn.Path)
	if err != nil {
		return markJobError(err)
	}
	if _, err := v.WriteTo(w); err != nil {
		w.Abort()
		return markJobError(err)
	}
	if err := w.Close(); err != nil {
		return markJobError(err)
	}
	vocabNames.Inc(ctx, int64(v.Len()))
	emit(VocabRef{Path: fn.Path, Names: int64(v.Len())})
	return nil
}

// vocabCache keeps the vocabulary a worker process loaded last, so that
// its bundles and DoFns share one copy.
var vocabCache struct {
	sync.Mutex
	path, version string
	v             *matrix.Vocab
}

// loadVocab reads the vocabulary at path, once per worker process while
// the file is unchanged.
func loadVocab(ctx context.Context, path string) (*matrix.Vocab, error) {
	a, err := storage.Stat(ctx, path)
	if err != nil {
		return nil, err
	}
	vocabCache.Lock()
	defer vocabCache.Unlock()
	if vocabCache.v != nil && vocabCache.path == path && vocabCache.version == a.Version {
		return vocabCache.v, nil
	}
	v, err := matrix.ReadVocabFile(ctx, path)
	if err != nil {
		return nil, err
	}
	vocabCache.path, vocabCache.version, vocabCache.v = path, a.Version, v
	return v, nil
}
