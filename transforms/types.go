// Package transforms holds the composite Beam transforms of smoothanon's
// batch pipeline: Read (Parquet row groups), Signature (MinHash), Chunk
// (deterministic range partition by signature), Solve (the Alg2 solver per
// chunk), Verify (global class and majority checks), Write (sharded Parquet)
// and Publish (atomic rename of the verified release). Each transform is
// `func X(s beam.Scope, col beam.PCollection, params XParams) beam.PCollection`
// and lives in its own file; package pipeline assembles them.
//
// Every element type has a compact binary coder registered here, so rows
// cross shuffles as varint-encoded bytes rather than through reflection.
package transforms

import (
	"bytes"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"fmt"
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/smoothanon/smoothanon/lsh"
)

// Row is one user and its sorted, repeat-free feature ids.
type Row struct {
	User     string
	Features []uint32
}

// RowGroup names one row group of one Parquet file: the unit of reading.
type RowGroup struct {
	File  string
	Group int64
}

// SigRow is a row with its MinHash signature, the leading sort key chosen
// by SignatureParams.Key (0 for KeyMinHash) and a second key (Tie, set by
// ChunkParams.Sharpen: the lead key before sharpening; else 0).
type SigRow struct {
	Lead uint64
	Tie  uint64
	Sig  lsh.Signature
	Row  Row
}

// SortKey is the chunking order of a row: its leading key, second key and signature as
// big-endian bytes, then its user id, so ties between equal signatures
// break deterministically.
func (r SigRow) SortKey() []byte {
	k := make([]byte, 0, 16+lsh.KeyBytes+len(r.Row.User))
	k = binary.BigEndian.AppendUint64(k, r.Lead)
	k = binary.BigEndian.AppendUint64(k, r.Tie)
	k = r.Sig.AppendKey(k)
	return append(k, r.Row.User...)
}

// compareSigRows orders rows by SortKey without building keys.
func compareSigRows(a, b SigRow) int {
	switch {
	case a.Lead < b.Lead:
		return -1
	case a.Lead > b.Lead:
		return 1
	case a.Tie < b.Tie:
		return -1
	case a.Tie > b.Tie:
		return 1
	}
	if c := a.Sig.Compare(b.Sig); c != 0 {
		return c
	}
	switch {
	case a.Row.User < b.Row.User:
		return -1
	case a.Row.User > b.Row.User:
		return 1
	}
	return 0
}

// OutRow is one user's input and released features.
type OutRow struct {
	User string
	In   []uint32
	Out  []uint32
}

func init() {
	beam.RegisterCoder(reflect.TypeOf(Row{}), encRow, decRow)
	beam.RegisterCoder(reflect.TypeOf(RowGroup{}), encRowGroup, decRowGroup)
	beam.RegisterCoder(reflect.TypeOf(SigRow{}), encSigRow, decSigRow)
	beam.RegisterCoder(reflect.TypeOf(OutRow{}), encOutRow, decOutRow)
}

// enc is a small append-only binary encoder.
type enc struct{ b []byte }

func (e *enc) uvarint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }
func (e *enc) str(s string)     { e.uvarint(uint64(len(s))); e.b = append(e.b, s...) }
func (e *enc) u64(v uint64)     { e.b = binary.LittleEndian.AppendUint64(e.b, v) }

// feats writes a sorted list as a count and varint gaps.
func (e *enc) feats(f []uint32) {
	e.uvarint(uint64(len(f)))
	prev := uint64(0)
	for i, v := range f {
		if i == 0 {
			e.uvarint(uint64(v))
		} else {
			e.uvarint(uint64(v) - prev)
		}
		prev = uint64(v)
	}
}

var errShort = errors.New("transforms: truncated element")

type dec struct {
	b   []byte
	err error
}

func (d *dec) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = errShort
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *dec) str() string {
	n := d.uvarint()
	if d.err != nil || uint64(len(d.b)) < n {
		d.err = errShort
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

func (d *dec) u64() uint64 {
	if d.err != nil || len(d.b) < 8 {
		d.err = errShort
		return 0
	}
	v := binary.LittleEndian.Uint64(d.b)
	d.b = d.b[8:]
	return v
}

func (d *dec) feats() []uint32 {
	n := d.uvarint()
	if d.err != nil || n > uint64(len(d.b)) {
		d.err = errShort
		return nil
	}
	f := make([]uint32, n)
	prev := uint64(0)
	for i := range f {
		v := d.uvarint()
		if i > 0 {
			v += prev
		}
		f[i] = uint32(v)
		prev = v
	}
	return f
}

func (d *dec) done(what string) error {
	if d.err == nil && len(d.b) != 0 {
		d.err = fmt.Errorf("transforms: %d trailing bytes", len(d.b))
	}
	if d.err != nil {
		return fmt.Errorf("decoding %s: %w", what, d.err)
	}
	return nil
}

func encRow(r Row) []byte {
	e := enc{b: make([]byte, 0, len(r.User)+2*len(r.Features)+4)}
	e.str(r.User)
	e.feats(r.Features)
	return e.b
}

func decRow(b []byte) (Row, error) {
	d := dec{b: b}
	r := Row{User: d.str(), Features: d.feats()}
	return r, d.done("Row")
}

func encRowGroup(g RowGroup) []byte {
	e := enc{}
	e.str(g.File)
	e.uvarint(uint64(g.Group))
	return e.b
}

func decRowGroup(b []byte) (RowGroup, error) {
	d := dec{b: b}
	g := RowGroup{File: d.str(), Group: int64(d.uvarint())}
	return g, d.done("RowGroup")
}

func encSigRow(r SigRow) []byte {
	e := enc{b: make([]byte, 0, 16+lsh.KeyBytes+len(r.Row.User)+2*len(r.Row.Features)+4)}
	e.u64(r.Lead)
	e.u64(r.Tie)
	for _, v := range r.Sig {
		e.u64(v)
	}
	e.str(r.Row.User)
	e.feats(r.Row.Features)
	return e.b
}

func decSigRow(b []byte) (SigRow, error) {
	d := dec{b: b}
	var r SigRow
	r.Lead = d.u64()
	r.Tie = d.u64()
	for j := range r.Sig {
		r.Sig[j] = d.u64()
	}
	r.Row.User = d.str()
	r.Row.Features = d.feats()
	return r, d.done("SigRow")
}

func encOutRow(r OutRow) []byte {
	e := enc{b: make([]byte, 0, len(r.User)+2*len(r.In)+2*len(r.Out)+6)}
	e.str(r.User)
	e.feats(r.In)
	e.feats(r.Out)
	return e.b
}

func decOutRow(b []byte) (OutRow, error) {
	d := dec{b: b}
	r := OutRow{User: d.str(), In: d.feats(), Out: d.feats()}
	return r, d.done("OutRow")
}

// gobEncode and gobDecode code the small aggregate types (one element per
// class, chunk or job), where convenience beats speed.
func gobEncode(v any) ([]byte, error) {
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func gobDecode(b []byte, v any) error {
	return gob.NewDecoder(bytes.NewReader(b)).Decode(v)
}
