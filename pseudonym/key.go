package pseudonym

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
)

// KeyBytes is the length of a key.
const KeyBytes = 32

// IDBytes is the length of a pseudonym before hex encoding (128 bits).
const IDBytes = 16

// Key is a per-release pseudonym key. Its zero value is not a valid key.
type Key struct{ b [KeyBytes]byte }

// Placeholder stands in for a real key where a job graph is shown rather
// than run (a dry run): every byte 0xff, never drawn by NewKey in practice.
var Placeholder = func() Key {
	var k Key
	for i := range k.b {
		k.b[i] = 0xff
	}
	return k
}()

// NewKey draws a random key from crypto/rand.
func NewKey() (Key, error) {
	var k Key
	if _, err := rand.Read(k.b[:]); err != nil {
		return Key{}, fmt.Errorf("drawing a pseudonym key: %w", err)
	}
	return k, nil
}

// KeyError is a key source that does not hold a valid key. It names the
// source (a file or an environment variable) and what is wrong, never the
// bytes found there.
type KeyError struct {
	Source string // e.g. "--pseudonym_key_file /etc/k" or "$RELEASE_KEY"
	Reason string
}

func (e *KeyError) Error() string { return e.Source + ": " + e.Reason }

// ParseKey reads a key in its text form: 64 hex digits, surrounding
// whitespace ignored. source names where text came from, for errors.
func ParseKey(source string, text []byte) (Key, error) {
	text = bytes.TrimSpace(text)
	if len(text) != 2*KeyBytes {
		return Key{}, &KeyError{Source: source, Reason: fmt.Sprintf("a pseudonym key is %d hex digits, found %d characters", 2*KeyBytes, len(text))}
	}
	var k Key
	if _, err := hex.Decode(k.b[:], text); err != nil {
		return Key{}, &KeyError{Source: source, Reason: "a pseudonym key is hex digits only"}
	}
	if k == (Key{}) {
		return Key{}, &KeyError{Source: source, Reason: "the all-zero pseudonym key is refused"}
	}
	return k, nil
}

// Text is the key's text form (64 hex digits and a newline), as ParseKey
// reads it. Only WriteKey should need it.
func (k Key) Text() []byte {
	return append([]byte(hex.EncodeToString(k.b[:])), '\n')
}

// String hides the key, so a key printed by mistake shows nothing.
func (k Key) String() string { return "pseudonym.Key(redacted)" }

// GoString hides the key from %#v too.
func (k Key) GoString() string { return k.String() }

// Mapper computes pseudonyms under one key. It is not safe for concurrent
// use; give each goroutine its own (NewMapper is cheap).
type Mapper struct {
	mac hash.Hash
	sum []byte
	out []byte
}

// NewMapper returns a Mapper for k.
func NewMapper(k Key) *Mapper {
	return &Mapper{mac: hmac.New(sha256.New, k.b[:]), sum: make([]byte, 0, sha256.Size), out: make([]byte, 2*IDBytes)}
}

// ID returns the pseudonym of user id: the first IDBytes of
// HMAC-SHA256(key, id) in lower-case hex.
func (m *Mapper) ID(id string) string {
	m.mac.Reset()
	m.mac.Write([]byte(id))
	m.sum = m.mac.Sum(m.sum[:0])
	hex.Encode(m.out, m.sum[:IDBytes])
	return string(m.out)
}

// fingerprintDomain separates the fingerprint's hash from every other use
// of the key.
const fingerprintDomain = "smoothanon pseudonym key fingerprint v1\x00"

// Fingerprint identifies k without revealing it: the first 64 bits of
// SHA-256(domain || key) in hex. Releases record it, so that two releases
// made under one key — whose ids join — can be told apart from releases
// under fresh keys (linkage refuses the former). From a fingerprint
// nothing about the key follows but equality.
func (k Key) Fingerprint() string {
	h := sha256.New()
	h.Write([]byte(fingerprintDomain))
	h.Write(k.b[:])
	return hex.EncodeToString(h.Sum(nil)[:8])
}
