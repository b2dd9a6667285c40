package pseudonym

import (
	"fmt"

	"github.com/smoothanon/smoothanon/matrix"
)

// Mode says how a release names its users.
type Mode int

const (
	// Pseudonymize replaces every id by its keyed pseudonym (the default
	// of the commands).
	Pseudonymize Mode = iota
	// Keep releases the input's ids as they are: releases of the same
	// population can then be joined by id (see docs/privacy.md).
	Keep
)

// String returns "pseudonym" or "keep".
func (m Mode) String() string {
	switch m {
	case Pseudonymize:
		return "pseudonym"
	case Keep:
		return "keep"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// ParseMode parses "pseudonym" or "keep".
func ParseMode(s string) (Mode, error) {
	switch s {
	case "pseudonym":
		return Pseudonymize, nil
	case "keep":
		return Keep, nil
	}
	return 0, fmt.Errorf("invalid user id mode %q (want pseudonym or keep)", s)
}

// MetadataKey is the Parquet key/value metadata key that marks a release's
// user id mode; its value is Mode.String(). Releases with kept ids carry no
// mark, so their bytes stay as they were before pseudonyms existed.
const MetadataKey = matrix.MetaUserIDs
