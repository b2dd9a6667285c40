package matrix

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"slices"
	"strconv"

	"github.com/smoothanon/smoothanon/storage"
)

// Values is what an input's feature values are: ids the solver uses as
// they are, or names (strings, or integers of any magnitude) that a
// Vocab maps to dense ids and the release carries back as they were.
type Values int

const (
	// ValuesAuto takes the values from each file's feature column: a
	// string column holds names, an integer column ids. A release
	// marked MetaFeatureValues holds names whatever its column.
	ValuesAuto Values = iota
	// ValuesIDs is integer feature ids in [0, 2^32), used as they are.
	ValuesIDs
	// ValuesNames maps the values of a string or integer column through
	// a Vocab; it resolves to ValuesStrings or ValuesIntegers.
	ValuesNames
	// ValuesStrings is UTF-8 string names (Parquet BYTE_ARRAY, plain or
	// dictionary-encoded).
	ValuesStrings
	// ValuesIntegers is INT32 or INT64 names, any value of an INT64.
	ValuesIntegers
)

func (v Values) String() string {
	switch v {
	case ValuesIDs:
		return "ids"
	case ValuesNames:
		return "names"
	case ValuesStrings:
		return "string names"
	case ValuesIntegers:
		return "integer names"
	}
	return "auto"
}

// Named says the values are names, mapped through a Vocab.
func (v Values) Named() bool {
	return v == ValuesNames || v == ValuesStrings || v == ValuesIntegers
}

// ParseValues parses the --feature_values flag: auto, ids or names.
func ParseValues(s string) (Values, error) {
	switch s {
	case "", "auto":
		return ValuesAuto, nil
	case "ids":
		return ValuesIDs, nil
	case "names":
		return ValuesNames, nil
	}
	return 0, fmt.Errorf("invalid feature values %q (want auto, ids or names)", s)
}

// MetaFeatureValues is the key/value metadata key a release of named
// features carries ("names"): its features are names, whatever their
// column's type, and are read back through a Vocab.
const MetaFeatureValues = "smoothanon.feature_values"

// A Vocab maps feature names to dense ids and back: id i is the i-th
// value. A name is held as its key: a string's UTF-8 bytes, an
// integer's 8 bytes big-endian with the sign bit flipped, so that byte
// order is numeric order. BuildVocab's vocabularies are sorted, so ids
// are the names' ranks, a pure function of the set of names. A Vocab
// holds each name's bytes plus 16 to 24 bytes (its end offset and two to
// four index slots: the index is a power of two at most half full);
// lookups hash the key. A Vocab is safe for concurrent lookups;
// Add is not.
type Vocab struct {
	values Values // ValuesStrings or ValuesIntegers
	grow   bool   // a miss adds the name instead of failing
	data   []byte
	ends   []int64
	index  []uint32 // open addressing: id+1, 0 empty
	seed   maphash.Seed
}

// ErrNotInVocab marks a feature name that a vocabulary that does not
// grow has no id for.
var ErrNotInVocab = errors.New("feature not in the vocabulary")

// NewVocab is the vocabulary of keys, in their order (id i is keys[i]),
// which must be distinct; values is ValuesStrings or ValuesIntegers. It
// does not grow.
func NewVocab(values Values, keys [][]byte) (*Vocab, error) {
	v := newVocab(values, false)
	for _, k := range keys {
		if _, added := v.add(k); !added {
			return nil, errors.New("vocabulary: a name twice")
		}
	}
	return v, nil
}

// NewGrowingVocab is an empty vocabulary that gives a name it has not
// seen the next id: ids in order of first lookup.
func NewGrowingVocab(values Values) *Vocab { return newVocab(values, true) }

func newVocab(values Values, grow bool) *Vocab {
	if values != ValuesStrings && values != ValuesIntegers {
		panic(fmt.Sprintf("matrix: vocabulary of %v", values))
	}
	return &Vocab{values: values, grow: grow, seed: maphash.MakeSeed(), index: make([]uint32, 16)}
}

// SortedVocab is the vocabulary of the distinct keys, sorted: ids are
// ranks. keys is sorted in place.
func SortedVocab(values Values, keys [][]byte) (*Vocab, error) {
	slices.SortFunc(keys, bytes.Compare)
	keys = slices.CompactFunc(keys, bytes.Equal)
	return NewVocab(values, keys)
}

// Grown is a copy of v that grows: names it lacks get the next ids.
func (v *Vocab) Grown() *Vocab {
	c := *v
	c.grow = true
	c.data, c.ends, c.index = slices.Clone(v.data), slices.Clone(v.ends), slices.Clone(v.index)
	return &c
}

// Values is ValuesStrings or ValuesIntegers.
func (v *Vocab) Values() Values { return v.values }

// Len is the number of names.
func (v *Vocab) Len() int { return len(v.ends) }

// Key is the key of id, which must be < Len. The slice is the Vocab's.
func (v *Vocab) Key(id uint32) []byte {
	start := int64(0)
	if id > 0 {
		start = v.ends[id-1]
	}
	return v.data[start:v.ends[id]]
}

// String is the name of id as a string.
func (v *Vocab) String(id uint32) string { return string(v.Key(id)) }

// Name is the name of id as text: a string as it is, an integer in
// decimal.
func (v *Vocab) Name(id uint32) string {
	if v.values == ValuesIntegers {
		return strconv.FormatInt(v.Int64(id), 10)
	}
	return v.String(id)
}

// Int64 is the name of id as an integer (ValuesIntegers).
func (v *Vocab) Int64(id uint32) int64 { return DecodeIntName(v.Key(id)) }

// ID is key's id. A miss adds key to a growing vocabulary, else is an
// error matching ErrNotInVocab.
func (v *Vocab) ID(key []byte) (uint32, error) {
	if id, ok := v.lookup(key); ok {
		return id, nil
	}
	if !v.grow {
		// The name stays out of the message: it is input data.
		return 0, fmt.Errorf("%w (did the input change during the run?)", ErrNotInVocab)
	}
	if v.Len() >= 1<<32-1 {
		return 0, errors.New("more than 2^32-1 distinct features")
	}
	id, _ := v.add(key)
	return id, nil
}

// Lookup is key's id, if it has one; it never adds.
func (v *Vocab) Lookup(key []byte) (uint32, bool) { return v.lookup(key) }

func (v *Vocab) lookup(key []byte) (uint32, bool) {
	mask := uint64(len(v.index) - 1)
	for i := maphash.Bytes(v.seed, key) & mask; ; i = (i + 1) & mask {
		e := v.index[i]
		if e == 0 {
			return 0, false
		}
		if bytes.Equal(v.Key(e-1), key) {
			return e - 1, true
		}
	}
}

// add appends key unless it is there, and returns its id.
func (v *Vocab) add(key []byte) (uint32, bool) {
	if id, ok := v.lookup(key); ok {
		return id, false
	}
	id := uint32(v.Len())
	v.data = append(v.data, key...)
	v.ends = append(v.ends, int64(len(v.data)))
	if 2*(v.Len()) > len(v.index) {
		v.rehash()
	} else {
		v.place(id)
	}
	return id, true
}

func (v *Vocab) rehash() {
	v.index = make([]uint32, 2*len(v.index))
	for id := range v.Len() {
		v.place(uint32(id))
	}
}

func (v *Vocab) place(id uint32) {
	mask := uint64(len(v.index) - 1)
	i := maphash.Bytes(v.seed, v.Key(id)) & mask
	for v.index[i] != 0 {
		i = (i + 1) & mask
	}
	v.index[i] = id + 1
}

// IntNameKey is the key of the integer name x: byte order is numeric.
func IntNameKey(b []byte, x int64) []byte {
	return binary.BigEndian.AppendUint64(b, uint64(x)^1<<63)
}

// DecodeIntName is the integer whose key IntNameKey made.
func DecodeIntName(key []byte) int64 {
	return int64(binary.BigEndian.Uint64(key) ^ 1<<63)
}

// vocabMagic starts a vocabulary file (WriteTo).
const vocabMagic = "smoothanon-vocab-1\n"

// WriteTo writes v: a header, the kind of its values, the number of
// names, and each key as a uvarint length and its bytes. ReadVocab reads
// it back.
func (v *Vocab) WriteTo(w io.Writer) (int64, error) {
	bw := bufio.NewWriterSize(w, 1<<20)
	var n int64
	put := func(b []byte) {
		if _, err := bw.Write(b); err == nil {
			n += int64(len(b))
		}
	}
	put([]byte(vocabMagic))
	put(binary.AppendUvarint([]byte{byte(v.values)}, uint64(v.Len())))
	var lb []byte
	for id := range v.Len() {
		k := v.Key(uint32(id))
		lb = binary.AppendUvarint(lb[:0], uint64(len(k)))
		put(lb)
		put(k)
	}
	return n, bw.Flush()
}

// ReadVocab reads a vocabulary WriteTo wrote; it does not grow.
func ReadVocab(r io.Reader) (*Vocab, error) {
	br := bufio.NewReaderSize(r, 1<<20)
	head := make([]byte, len(vocabMagic)+1)
	if _, err := io.ReadFull(br, head); err != nil || string(head[:len(vocabMagic)]) != vocabMagic {
		return nil, errors.New("not a vocabulary file")
	}
	values := Values(head[len(vocabMagic)])
	if values != ValuesStrings && values != ValuesIntegers {
		return nil, fmt.Errorf("vocabulary of unknown values %d", values)
	}
	n, err := binary.ReadUvarint(br)
	if err != nil || n >= 1<<32 {
		return nil, errors.New("vocabulary: bad length")
	}
	v := newVocab(values, false)
	v.ends = make([]int64, 0, n)
	for range n {
		l, err := binary.ReadUvarint(br)
		if err != nil || l > 1<<30 {
			return nil, errors.New("vocabulary: truncated")
		}
		start := len(v.data)
		v.data = append(v.data, make([]byte, l)...)
		if _, err := io.ReadFull(br, v.data[start:]); err != nil {
			return nil, errors.New("vocabulary: truncated")
		}
		v.ends = append(v.ends, int64(len(v.data)))
	}
	size := 16
	for size < 2*len(v.ends) {
		size *= 2
	}
	v.index = make([]uint32, size)
	for id := range v.Len() {
		if _, dup := v.lookup(v.Key(uint32(id))); dup {
			return nil, errors.New("vocabulary: a name twice")
		}
		v.place(uint32(id))
	}
	if _, err := br.ReadByte(); err != io.EOF {
		return nil, errors.New("vocabulary: trailing bytes")
	}
	return v, nil
}

// ReadVocabFile reads the vocabulary file at uri, local or in a bucket.
func ReadVocabFile(ctx context.Context, uri string) (*Vocab, error) {
	f, err := storage.Open(ctx, uri)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	v, err := ReadVocab(io.NewSectionReader(f, 0, f.Size()))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", uri, err)
	}
	return v, nil
}

// Fingerprint is the SHA-256 of v's file form, in hex: two vocabularies
// with one fingerprint map every name alike.
func (v *Vocab) Fingerprint() string {
	h := sha256.New()
	v.WriteTo(h)
	return hex.EncodeToString(h.Sum(nil))
}
