package transforms

import (
	"bytes"
	"context"
	"fmt"
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
	// Per name: generic invokers. The DoFns called once per row group,
	// or once per run, take reflection: each generic registration grows
	// this package's compile, already the largest of the build
	// (docs/decisions/026-feature-dictionary.md).
	register.DoFn3x1[context.Context, RowGroup, func([]byte), error](&readNamesFn{})
	register.Emitter1[[]byte]()
	register.Combiner3[vocabAcc, []byte, vocabAcc](&vocabCombineFn{})
	beam.RegisterType(reflect.TypeOf((*writeVocabFn)(nil)).Elem())
}

// VocabParams configure BuildVocab.
type VocabParams struct {
	// Layout is the input's layout as matrix.InspectFiles resolved it,
	// its Values names (matrix.ValuesStrings or ValuesIntegers). Required.
	Layout matrix.Layout
	// Path is where the vocabulary is written (the run's staging,
	// release.StagedVocab), local or a URI. Required.
	Path string
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
// Each row group's distinct names are emitted once; a global combine,
// lifted before the shuffle, sorts and merges them. What a worker holds
// is bounded by the number of distinct names, not by rows: the combine's
// accumulator and the final vocabulary hold each name once (its bytes
// plus a slice header while combining; its bytes plus 16 to 24 bytes
// once loaded, see matrix.Vocab). A row with a null name, or a string that is
// not UTF-8, fails the job with a one-line input error naming file, row
// and column (JobInputError).
func BuildVocab(s beam.Scope, files []string, p VocabParams) beam.PCollection {
	s = s.Scope("BuildVocab")
	if !p.Layout.Values.Named() || p.Path == "" {
		panic(fmt.Sprintf("transforms.BuildVocab: layout %v, path %q: want named features and a path", p.Layout, p.Path))
	}
	groups := beam.ParDo(s, &expandRowGroupsFn{Layout: p.Layout}, beam.CreateList(s, files))
	groups = beam.Reshuffle(s, groups)
	names := beam.ParDo(s, &readNamesFn{Layout: p.Layout}, groups)
	all := beam.Combine(s, &vocabCombineFn{}, names)
	return beam.ParDo(s, &writeVocabFn{Layout: p.Layout, Path: p.Path}, all)
}

// readNamesFn emits each distinct name of a row group once, as its key
// (matrix.Vocab).
type readNamesFn struct{ Layout matrix.Layout }

func (fn *readNamesFn) ProcessElement(ctx context.Context, g RowGroup, emit func([]byte)) error {
	f, err := matrix.OpenFileAs(g.File, fn.Layout)
	if err != nil {
		return markJobError(err)
	}
	defer f.Close()
	v := matrix.NewGrowingVocab(f.Layout().Values)
	if err := f.UseVocab(v); err != nil {
		return markJobError(err)
	}
	if err := f.ReadRowGroup(int(g.Group), func(string, []uint32) error { return nil }); err != nil {
		return markJobError(err)
	}
	for id := range v.Len() {
		emit(bytes.Clone(v.Key(uint32(id))))
	}
	rowGroupsRead.Inc(ctx, 1)
	return nil
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

// vocabCombineFn gathers the distinct names, compacting the set whenever
// it has doubled since it last was, so that it never holds more than
// about twice the distinct names it has seen.
type vocabCombineFn struct{}

func (*vocabCombineFn) CreateAccumulator() vocabAcc { return vocabAcc{} }

func (*vocabCombineFn) AddInput(a vocabAcc, key []byte) vocabAcc {
	a.Keys = append(a.Keys, key)
	if len(a.Keys) > 2*a.Sorted+1024 {
		a.compact()
	}
	return a
}

func (*vocabCombineFn) MergeAccumulators(a, b vocabAcc) vocabAcc {
	a.Keys = append(a.Keys, b.Keys...)
	if len(a.Keys) > 2*a.Sorted+1024 {
		a.compact()
	}
	return a
}

func (*vocabCombineFn) ExtractOutput(a vocabAcc) vocabAcc {
	a.compact()
	return a
}

// writeVocabFn writes the sorted names as the vocabulary file.
type writeVocabFn struct {
	Layout matrix.Layout
	Path   string
}

func (fn *writeVocabFn) ProcessElement(ctx context.Context, a vocabAcc, emit func(VocabRef)) error {
	a.compact()
	if len(a.Keys) >= 1<<32 {
		return fmt.Errorf("%d distinct features, more than 2^32-1", len(a.Keys))
	}
	v, err := matrix.NewVocab(fn.Layout.Values, a.Keys)
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
