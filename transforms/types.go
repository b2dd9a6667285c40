package transforms

import (
	"bytes"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"fmt"
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
)

// RowGroup names one row group of one Parquet file: the unit of reading.
type RowGroup struct {
	File  string
	Group int64
}

func init() {
	beam.RegisterCoder(reflect.TypeOf(RowGroup{}), encRowGroup, decRowGroup)
}

// enc is a small append-only binary encoder.
type enc struct{ b []byte }

func (e *enc) uvarint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }
func (e *enc) str(s string)     { e.uvarint(uint64(len(s))); e.b = append(e.b, s...) }
func (e *enc) bytes(p []byte)   { e.uvarint(uint64(len(p))); e.b = append(e.b, p...) }
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

func (d *dec) str() string { return string(d.bytes()) }

// bytes reads what enc.bytes (or enc.str) wrote. The result aliases the
// input, its capacity capped at its length.
func (d *dec) bytes() []byte {
	n := d.uvarint()
	if d.err != nil || uint64(len(d.b)) < n {
		d.err = errShort
		return nil
	}
	p := d.b[:n:n]
	d.b = d.b[n:]
	return p
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
