package verify

import (
	"fmt"
	"strings"

	"github.com/smoothanon/smoothanon/proto/smoothanonpb"
)

// countSensitive adds to sf the sensitive entries of one user: in its
// input row a and its release row o (both sorted).
func countSensitive(sf *smoothanonpb.SensitiveFigures, a, o []uint32, p Params) {
	held, released, kept := SensitiveEntries(a, o, p.Sensitive)
	sf.Held += held
	sf.Released += released
	sf.Suppressed += held - kept
	sf.Created += released - kept
}

// SensitiveEntries counts one user's entries of the sensitive features
// (ascending): held in its input row in, released in its release row
// out, and of those released, kept (held too). Both rows are sorted.
func SensitiveEntries(in, out, sensitive []uint32) (held, released, kept int64) {
	if len(sensitive) == 0 {
		return 0, 0, 0
	}
	is := SortedSet(sensitive)
	for _, f := range in {
		if is(f) {
			held++
		}
	}
	y := 0
	for _, f := range out {
		if !is(f) {
			continue
		}
		released++
		for y < len(in) && in[y] < f {
			y++
		}
		if y < len(in) && in[y] == f {
			kept++
		}
	}
	return held, released, kept
}

// checkSensitiveClass checks the sensitive features of one class (size
// users, first release row rep, release row row, hits[x] its users that
// held row[x]) against the rule, adding a problem line for the class's
// first bad feature and counting every bad one in sf.
func checkSensitiveClass(sf *smoothanonpb.SensitiveFigures, pr *problems, size, rep int32, row []uint32, hits []int32, p Params) {
	bad, ex, why := 0, uint32(0), ""
	for x, f := range row {
		if !p.isSensitive(f) {
			continue
		}
		w := SensitiveBreak(int64(hits[x]), int64(size), p.sensitiveK(), p.SensitiveDrop)
		if w == "" {
			continue
		}
		if bad == 0 {
			ex, why = f, w
		}
		bad++
	}
	if bad > 0 {
		sf.Violations += int64(bad)
		pr.add("class of %d users (e.g. release row %d) shows %d sensitive features against the rule, e.g. feature %d: %s", size, rep, bad, ex, why)
	}
}

// SensitiveBreak says why a sensitive feature held by hits of a class of
// size users breaks the rule for least class size minSize (or, drop, any
// showing); "" when it does not. Check and the pipeline's Verify share it.
func SensitiveBreak(hits, size, minSize int64, drop bool) string {
	switch {
	case drop:
		return "policy drop releases none"
	case hits < size:
		return fmt.Sprintf("held originally by %d: a sensitive feature is never created", hits)
	case size < minSize:
		return fmt.Sprintf("the class is smaller than sensitive_k = %d", minSize)
	}
	return ""
}

// sensitiveFigures are the report's sensitive figures before counting.
func sensitiveFigures(p Params) *smoothanonpb.SensitiveFigures {
	sf := &smoothanonpb.SensitiveFigures{ListSha256: RecordHash(p.SensitiveRecord), Features: p.SensitiveListed,
		SensitiveK: int32(max(p.K, p.SensitiveK)), Policy: "show"}
	if p.SensitiveDrop {
		sf.Policy = "drop"
	}
	return sf
}

// sensitiveWhy is why a class that shows a sensitive feature breaks the
// rule, where membership is not known (CheckUnmatched).
func sensitiveWhy(p Params) string {
	if p.SensitiveDrop {
		return "policy drop releases none"
	}
	return fmt.Sprintf("the class is smaller than sensitive_k = %d", p.sensitiveK())
}

// RecordHash is the list hash of a sensitive.Record string
// ("sha256=<hex> ..."), "" without one.
func RecordHash(record string) string {
	f := strings.Fields(record)
	if len(f) == 0 {
		return ""
	}
	return strings.TrimPrefix(f[0], "sha256=")
}
