package matrix

import "fmt"

// Mode is the anonymity notion a release must satisfy (verify.Check
// checks it; the solver and the baselines produce it).
type Mode int

const (
	// Smooth is smooth-k-anonymity: classes of at least k identical rows
	// whose features were each held by at least half the class originally.
	Smooth Mode = iota
	// NonSmooth is k-anonymity by suppression: classes of at least k
	// identical rows and no created entries.
	NonSmooth
)

// String returns "smooth" or "nonsmooth".
func (m Mode) String() string {
	switch m {
	case Smooth:
		return "smooth"
	case NonSmooth:
		return "nonsmooth"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// ParseMode parses "smooth" or "nonsmooth".
func ParseMode(s string) (Mode, error) {
	switch s {
	case "smooth":
		return Smooth, nil
	case "nonsmooth":
		return NonSmooth, nil
	}
	return 0, fmt.Errorf("invalid mode %q (want smooth or nonsmooth)", s)
}
