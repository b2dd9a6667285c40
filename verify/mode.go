package verify

import "github.com/smoothanon/smoothanon/matrix"

// These aliases keep code written against verify.Mode compiling while
// branches that predate matrix.Mode are merged; new code uses matrix.Mode.
// Once no user is left, this file goes.
type Mode = matrix.Mode

// Smooth and NonSmooth alias matrix.Smooth and matrix.NonSmooth (see Mode).
const (
	Smooth    = matrix.Smooth
	NonSmooth = matrix.NonSmooth
)

// ParseMode is matrix.ParseMode (see Mode).
func ParseMode(s string) (Mode, error) { return matrix.ParseMode(s) }
