package transforms

import (
	"context"
	"fmt"
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/smoothanon/smoothanon/matrix"
)

var (
	rowsRead      = beam.NewCounter("smoothanon", "rows_read")
	rowGroupsRead = beam.NewCounter("smoothanon", "row_groups_read")
)

func init() {
	register.DoFn2x1[string, func(RowGroup), error](&expandRowGroupsFn{})
	register.Emitter1[RowGroup]()
	register.DoFn3x1[context.Context, RowGroup, func(matrix.Matrix), error](&readRowGroupFn{})
	beam.RegisterType(reflect.TypeOf((*readNamedRowGroupFn)(nil)).Elem())
	register.Emitter1[matrix.Matrix]()
}

// Read reads the rows of Parquet files (local paths or gs://, s3://
// URIs, as matrix.OpenFile opens them) into a PCollection<matrix.Matrix>
// of blocks of rows: each row group cut into blocks of at most
// MaxBlockRows rows and MaxBlockEntries entries (a row of more entries is
// a block of its own). Work is split per (file, row group): each file's
// footer is read to list its row groups, the groups are reshuffled across
// workers, and each is streamed with matrix.File.ReadRowGroup, so no file
// is ever held in memory whole.
// Beam's parquetio is not used: it reads whole files. A file that cannot
// be read fails the job with a one-line input error (JobInputError).
//
// Every file is opened with ReadParams.Layout, which must be list form:
// a long-form input's rows are pairs, not users. Named features are read
// as their ids in ReadParams.Vocab.
func Read(s beam.Scope, files []string, p ReadParams) beam.PCollection {
	s = s.Scope("Read")
	if p.Layout.Shape != matrix.ShapeList {
		panic(fmt.Sprintf("transforms.Read: layout %v, want list form", p.Layout))
	}
	checkVocabParam("Read", p.Layout, p.Vocab)
	groups := beam.ParDo(s, &expandRowGroupsFn{Layout: p.Layout}, beam.CreateList(s, files))
	groups = beam.Reshuffle(s, groups)
	if p.Vocab.IsValid() {
		return beam.ParDo(s, &readNamedRowGroupFn{readRowGroupFn{Layout: p.Layout}}, groups, beam.SideInput{Input: p.Vocab})
	}
	return beam.ParDo(s, &readRowGroupFn{Layout: p.Layout}, groups)
}

// ReadParams configure Read.
type ReadParams struct {
	// Layout is the input's layout as matrix.InspectFiles resolved it:
	// its shape (not matrix.ShapeAuto) and both column names. Required.
	Layout matrix.Layout
	// Vocab is BuildVocab's output: the vocabulary named features are
	// read through. Required when Layout.Values are names, else unset.
	Vocab beam.PCollection
}

// checkVocabParam panics unless a vocabulary is given exactly when the
// layout's features are names.
func checkVocabParam(stage string, l matrix.Layout, vocab beam.PCollection) {
	if l.Values.Named() != vocab.IsValid() {
		panic(fmt.Sprintf("transforms.%s: layout %v, vocabulary given %v", stage, l, vocab.IsValid()))
	}
}

// expandRowGroupsFn emits one RowGroup per row group of a file.
type expandRowGroupsFn struct{ Layout matrix.Layout }

func (fn *expandRowGroupsFn) ProcessElement(file string, emit func(RowGroup)) error {
	f, err := matrix.OpenFileAs(file, fn.Layout)
	if err != nil {
		return markJobError(err)
	}
	defer f.Close()
	for g := 0; g < f.NumRowGroups(); g++ {
		emit(RowGroup{File: file, Group: int64(g)})
	}
	return nil
}

type readRowGroupFn struct{ Layout matrix.Layout }

func (fn *readRowGroupFn) ProcessElement(ctx context.Context, g RowGroup, emit func(matrix.Matrix)) error {
	return fn.read(ctx, g, nil, emit)
}

// readNamedRowGroupFn is readRowGroupFn for named features, read as their
// ids in the vocabulary of the side input.
type readNamedRowGroupFn struct{ readRowGroupFn }

func (fn *readNamedRowGroupFn) ProcessElement(ctx context.Context, g RowGroup, ref VocabRef, emit func(matrix.Matrix)) error {
	v, err := loadVocab(ctx, ref.Path)
	if err != nil {
		return err
	}
	return fn.read(ctx, g, v, emit)
}

// openRowGroupFile opens g's file as l, its named features read through
// v (nil for ids).
func openRowGroupFile(g RowGroup, l matrix.Layout, v *matrix.Vocab) (*matrix.File, error) {
	f, err := matrix.OpenFileAs(g.File, l)
	if err == nil && v != nil {
		if err = f.UseVocab(v); err != nil {
			f.Close()
		}
	}
	if err != nil {
		return nil, markJobError(err)
	}
	return f, nil
}

func (fn *readRowGroupFn) read(ctx context.Context, g RowGroup, v *matrix.Vocab, emit func(matrix.Matrix)) error {
	f, err := openRowGroupFile(g, fn.Layout, v)
	if err != nil {
		return err
	}
	defer f.Close()
	b := emptyMatrix()
	flush := func() {
		if b.NumRows() > 0 {
			rowsRead.Inc(ctx, int64(b.NumRows()))
			emit(b)
			b = emptyMatrix()
		}
	}
	err = f.ReadRowGroup(int(g.Group), func(user string, features []uint32) error {
		if overflows(&b, len(features)) {
			flush()
		}
		b.Users = append(b.Users, user)
		b.Features = append(b.Features, features...)
		b.Offsets = append(b.Offsets, int64(len(b.Features)))
		if full(b.NumRows(), len(b.Features)) {
			flush()
		}
		return nil
	})
	if err != nil {
		return markJobError(err)
	}
	flush()
	rowGroupsRead.Inc(ctx, 1)
	return nil
}
