package transforms

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"reflect"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/smoothanon/smoothanon/lsh"
	"github.com/smoothanon/smoothanon/matrix"
)

// Rows cross every stage of the pipeline in blocks: a matrix.Matrix of up
// to MaxBlockRows rows and MaxBlockEntries entries is one element, encoded
// as one buffer. A runner's
// costs per element (bundling, encoding, watermarks, garbage) are then paid
// per block, not per row; the transforms' logic stays per row inside a
// block.
//
// Element types:
//   - matrix.Matrix: rows (Read, Pseudonymize; Write's pieces);
//   - KeyedBlock: rows with their chunking sort keys (Signature, Chunk);
//   - OutBlock: rows with their input and released features (Solve).

// MaxBlockRows and MaxBlockEntries bound a block (a row with more entries
// is a block of its own): Read cuts row groups into blocks, and Solve its
// chunks' releases. An element should sit well inside a runner's buffers
// (Flink's batch sort buffers refuse records above a few MB, see
// docs/flink-cluster.md; the Flink runner's inbound queue holds messages of
// up to 4 MB): a block of 131,072 entries encodes to well under 1 MB.
// Per-element costs are already negligible at 8,192 rows, and smaller
// blocks hold less at once (see docs/decisions/002-blocks.md).
const (
	MaxBlockRows    = 1 << 13
	MaxBlockEntries = 1 << 17
)

// full reports whether a block of rows rows and entries entries is full.
func full(rows, entries int) bool { return rows >= MaxBlockRows || entries >= MaxBlockEntries }

// overflows reports whether a row of n entries would take block b, which
// holds rows, past MaxBlockEntries: b is then emitted first, and the row
// starts a block of its own.
func overflows(b *matrix.Matrix, n int) bool {
	return b.NumRows() > 0 && len(b.Features)+n > MaxBlockEntries
}

// KeyedBlock is a block of rows with, per row, the leading sort key chosen
// by SignatureParams.Key (0 for KeyMinHash) and a second key (the lead key
// before sharpening, see ChunkParams.Sharpen; else 0). A row's full sort
// key continues with its MinHash signature under Seed and its user id; the
// signature is recomputed where it is needed (it is 64 bytes, more than the
// row) rather than carried.
type KeyedBlock struct {
	Rows matrix.Matrix
	Lead []uint64 // len Rows.NumRows(); nil means all 0
	Tie  []uint64 // len Rows.NumRows(); nil means all 0
	Seed int64
}

// lead and tie are row i's keys.
func (b *KeyedBlock) lead(i int) uint64 {
	if b.Lead == nil {
		return 0
	}
	return b.Lead[i]
}

func (b *KeyedBlock) tie(i int) uint64 {
	if b.Tie == nil {
		return 0
	}
	return b.Tie[i]
}

// ChunkBlock is a piece of one chunk's rows, as Chunk emits it keyed by
// chunk id, with the job's number of chunks (Solve sets nothing aside when
// there is one). The count rides with the rows rather than reaching Solve
// as a side input: prism reschedules a stage that reads a side input in a
// busy loop for as long as one of its bundles runs, and a chunk's solve
// holds its bundle for as long as it runs, on every core it is given
// (docs/pipeline.md, "Side inputs on prism").
type ChunkBlock struct {
	Block  KeyedBlock
	Chunks int64
}

// OutBlock is a block of released rows: In holds the users and their input
// features, Out the same users (the same slice) and their released ones.
type OutBlock struct {
	In, Out matrix.Matrix
}

func init() {
	beam.RegisterCoder(reflect.TypeOf(matrix.Matrix{}), encMatrix, decMatrix)
	beam.RegisterCoder(reflect.TypeOf(KeyedBlock{}), encKeyedBlock, decKeyedBlock)
	beam.RegisterCoder(reflect.TypeOf(ChunkBlock{}), encChunkBlock, decChunkBlock)
	beam.RegisterCoder(reflect.TypeOf(OutBlock{}), encOutBlock, decOutBlock)
}

// appendRow appends row i of src to dst.
func appendRow(dst *matrix.Matrix, src *matrix.Matrix, i int) {
	if len(dst.Offsets) == 0 {
		dst.Offsets = append(dst.Offsets, 0)
	}
	dst.Users = append(dst.Users, src.Users[i])
	dst.Features = append(dst.Features, src.Row(i)...)
	dst.Offsets = append(dst.Offsets, int64(len(dst.Features)))
}

// emptyMatrix is a matrix of no rows in the canonical form.
func emptyMatrix() matrix.Matrix { return matrix.Matrix{Offsets: []int64{0}} }

// users writes the user ids: their count, then their lengths, then their
// bytes, so decoding makes one string that every id shares.
func (e *enc) users(us []string) {
	e.uvarint(uint64(len(us)))
	for _, u := range us {
		e.uvarint(uint64(len(u)))
	}
	for _, u := range us {
		e.b = append(e.b, u...)
	}
}

func (d *dec) users() []string {
	n := d.uvarint()
	if d.err != nil || n > uint64(len(d.b)) {
		d.err = errShort
		return nil
	}
	lens := make([]uint64, n)
	var total uint64
	for i := range lens {
		lens[i] = d.uvarint()
		total += lens[i]
	}
	if d.err != nil || total > uint64(len(d.b)) {
		d.err = errShort
		return nil
	}
	all := string(d.b[:total])
	d.b = d.b[total:]
	us := make([]string, n)
	var at uint64
	for i, l := range lens {
		us[i] = all[at : at+l]
		at += l
	}
	return us
}

// rows writes the feature lists of m's rows (not the users, which may be
// absent): the entry count, then each row as a length and varint gaps.
func (e *enc) rows(m *matrix.Matrix) {
	e.uvarint(uint64(len(m.Features)))
	for i := range len(m.Offsets) - 1 {
		e.feats(m.Row(i))
	}
}

// rows reads n rows written by enc.rows into one features array.
func (d *dec) rows(n int) (offsets []int64, features []uint32) {
	total := d.uvarint()
	if d.err != nil || total > uint64(len(d.b)) {
		d.err = errShort
		return []int64{0}, nil
	}
	offsets = make([]int64, 1, n+1)
	features = make([]uint32, 0, total)
	for i := 0; i < n && d.err == nil; i++ {
		k := d.uvarint()
		if d.err != nil || k > uint64(len(d.b)) || uint64(len(features))+k > total {
			d.err = errShort
			break
		}
		prev := uint64(0)
		for j := uint64(0); j < k; j++ {
			v := d.uvarint()
			if j > 0 {
				v += prev
			}
			features = append(features, uint32(v))
			prev = v
		}
		offsets = append(offsets, int64(len(features)))
	}
	if d.err == nil && uint64(len(features)) != total {
		d.err = fmt.Errorf("transforms: %d entries, header says %d", len(features), total)
	}
	return offsets, features
}

func encMatrix(m matrix.Matrix) []byte {
	e := enc{b: make([]byte, 0, 8*len(m.Users)+2*len(m.Features)+16)}
	e.users(m.Users)
	e.rows(&m)
	return e.b
}

func decMatrix(b []byte) (matrix.Matrix, error) {
	d := dec{b: b}
	m := matrix.Matrix{Users: d.users()}
	m.Offsets, m.Features = d.rows(len(m.Users))
	return m, d.done("block of rows")
}

// u64s writes a key column: a presence byte, then 8 bytes per row.
func (e *enc) u64s(v []uint64) {
	if v == nil {
		e.b = append(e.b, 0)
		return
	}
	e.b = append(e.b, 1)
	for _, x := range v {
		e.u64(x)
	}
}

func (d *dec) u64s(n int) []uint64 {
	if d.err != nil || len(d.b) < 1 {
		d.err = errShort
		return nil
	}
	has := d.b[0]
	d.b = d.b[1:]
	if has == 0 {
		return nil
	}
	if len(d.b) < 8*n {
		d.err = errShort
		return nil
	}
	v := make([]uint64, n)
	for i := range v {
		v[i] = d.u64()
	}
	return v
}

func encKeyedBlock(k KeyedBlock) []byte {
	e := enc{b: make([]byte, 0, keyedBlockSize(&k))}
	e.keyedBlock(&k)
	return e.b
}

func decKeyedBlock(b []byte) (KeyedBlock, error) {
	d := dec{b: b}
	k := d.keyedBlock()
	return k, d.done("keyed block")
}

func encChunkBlock(c ChunkBlock) []byte {
	e := enc{b: make([]byte, 0, keyedBlockSize(&c.Block)+binary.MaxVarintLen64)}
	e.uvarint(uint64(c.Chunks))
	e.keyedBlock(&c.Block)
	return e.b
}

func decChunkBlock(b []byte) (ChunkBlock, error) {
	d := dec{b: b}
	c := ChunkBlock{Chunks: int64(d.uvarint())}
	c.Block = d.keyedBlock()
	return c, d.done("chunk block")
}

// keyedBlockSize is about the encoded size of k, to size the buffer.
func keyedBlockSize(k *KeyedBlock) int { return 24*len(k.Rows.Users) + 2*len(k.Rows.Features) + 32 }

func (e *enc) keyedBlock(k *KeyedBlock) {
	e.u64(uint64(k.Seed))
	e.users(k.Rows.Users)
	e.rows(&k.Rows)
	e.u64s(k.Lead)
	e.u64s(k.Tie)
}

func (d *dec) keyedBlock() KeyedBlock {
	k := KeyedBlock{Seed: int64(d.u64())}
	k.Rows.Users = d.users()
	k.Rows.Offsets, k.Rows.Features = d.rows(len(k.Rows.Users))
	k.Lead = d.u64s(len(k.Rows.Users))
	k.Tie = d.u64s(len(k.Rows.Users))
	return k
}

func encOutBlock(o OutBlock) []byte {
	e := enc{b: make([]byte, 0, 8*len(o.In.Users)+2*len(o.In.Features)+2*len(o.Out.Features)+16)}
	e.users(o.In.Users)
	e.rows(&o.In)
	e.rows(&o.Out)
	return e.b
}

func decOutBlock(b []byte) (OutBlock, error) {
	d := dec{b: b}
	var o OutBlock
	o.In.Users = d.users()
	o.In.Offsets, o.In.Features = d.rows(len(o.In.Users))
	o.Out.Users = o.In.Users
	o.Out.Offsets, o.Out.Features = d.rows(len(o.In.Users))
	return o, d.done("released block")
}

// rowKey is one row's position in the chunking order: (lead, tie,
// signature, user), the signature computed on first use.
type rowKey struct {
	lead, tie uint64
	user      string
	features  []uint32
	h         *lsh.Hasher
	sig       lsh.Signature
	signed    bool
}

func (k *rowKey) signature() lsh.Signature {
	if !k.signed {
		k.sig, k.signed = k.h.Sign(k.features), true
	}
	return k.sig
}

// bytes is the row's full sort key as big-endian bytes (SortKey).
func (k *rowKey) bytes() []byte {
	return sortKey(k.lead, k.tie, k.signature(), k.user)
}

// sortKey is the chunking order of a row as bytes: its leading key, second
// key and signature big-endian, then its user id, so ties between equal
// signatures break deterministically.
func sortKey(lead, tie uint64, sig lsh.Signature, user string) []byte {
	k := make([]byte, 0, 16+lsh.KeyBytes+len(user))
	k = binary.BigEndian.AppendUint64(k, lead)
	k = binary.BigEndian.AppendUint64(k, tie)
	k = sig.AppendKey(k)
	return append(k, user...)
}

// pick returns the rows of m numbered rows, in that order.
func pick(m *matrix.Matrix, rows []int) matrix.Matrix {
	n := 0
	for _, i := range rows {
		n += int(m.Offsets[i+1] - m.Offsets[i])
	}
	out := matrix.Matrix{Users: make([]string, 0, len(rows)), Offsets: make([]int64, 1, len(rows)+1), Features: make([]uint32, 0, n)}
	for _, i := range rows {
		appendRow(&out, m, i)
	}
	return out
}

// pickU64 returns v's values at rows (nil for nil).
func pickU64(v []uint64, rows []int) []uint64 {
	if v == nil {
		return nil
	}
	out := make([]uint64, len(rows))
	for j, i := range rows {
		out[j] = v[i]
	}
	return out
}

// subset returns the rows of b numbered rows, in that order; b itself when
// that is all of them in order.
func (b *KeyedBlock) subset(rows []int) KeyedBlock {
	if len(rows) == b.Rows.NumRows() && (len(rows) == 0 || rows[len(rows)-1] == len(rows)-1) {
		return *b
	}
	return KeyedBlock{Rows: pick(&b.Rows, rows), Lead: pickU64(b.Lead, rows), Tie: pickU64(b.Tie, rows), Seed: b.Seed}
}

// compareKeys orders rows by their sort keys without building the bytes.
func compareKeys(a, b *rowKey) int {
	if c := cmp.Compare(a.lead, b.lead); c != 0 {
		return c
	}
	if c := cmp.Compare(a.tie, b.tie); c != 0 {
		return c
	}
	if c := a.signature().Compare(b.signature()); c != 0 {
		return c
	}
	return strings.Compare(a.user, b.user)
}
