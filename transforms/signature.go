package transforms

import (
	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/smoothanon/smoothanon/lsh"
)

func init() {
	register.DoFn2x0[Row, func(SigRow)](&signFn{})
	register.Emitter1[SigRow]()
}

// SignatureParams configure Signature.
type SignatureParams struct {
	// Seed derives the MinHash functions. Optional; default 0.
	Seed int64
}

// Signature turns a PCollection<Row> into a PCollection<SigRow> carrying
// each row's lsh.NumHashes MinHash values.
func Signature(s beam.Scope, rows beam.PCollection, params SignatureParams) beam.PCollection {
	s = s.Scope("Signature")
	return beam.ParDo(s, &signFn{Seed: params.Seed}, rows)
}

type signFn struct {
	Seed int64 `json:"seed"`
	h    *lsh.Hasher
}

func (fn *signFn) ProcessElement(r Row, emit func(SigRow)) {
	if fn.h == nil {
		fn.h = lsh.New(fn.Seed)
	}
	emit(SigRow{Sig: fn.h.Sign(r.Features), Row: r})
}
