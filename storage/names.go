package storage

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// CheckName refuses a name that no store could hold exactly as written:
// invalid UTF-8, control characters (a newline would split a listing or a
// log line), and on a bucket an empty bucket or object name. Every other
// character, '%', '?', '#' and non-ASCII letters included, names the
// object literally: the clients escape it on the wire.
func CheckName(uri string) error {
	if !utf8.ValidString(uri) {
		return &Error{URI: strings.ToValidUTF8(uri, "\uFFFD"), Err: fmt.Errorf("not valid UTF-8")}
	}
	for _, r := range uri {
		if unicode.IsControl(r) {
			return &Error{URI: fmt.Sprintf("%q", uri), Err: fmt.Errorf("control character %U in the name", r)}
		}
	}
	if IsLocal(uri) {
		return nil
	}
	if _, _, err := bucketKey(uri); err != nil {
		return err
	}
	return nil
}

// CheckLiteral refuses a name that would be read as a glob (holding *, ?
// or [), on top of CheckName. Outputs are literal locations: a glob there
// would name whatever happens to match it.
func CheckLiteral(uri string) error {
	if err := CheckName(uri); err != nil {
		return err
	}
	if HasGlob(uri) {
		return &Error{URI: uri, Err: fmt.Errorf("holds a glob character (*, ? or [): an output must name one location literally")}
	}
	return nil
}
