package transforms

import (
	"context"
	"fmt"
	"slices"

	"github.com/smoothanon/smoothanon/proto/smoothanonpb"
	"github.com/smoothanon/smoothanon/sensitive"
	"github.com/smoothanon/smoothanon/verify"
)

// SensitiveRule is the sensitive rule Verify checks and Report states
// (verify.Params documents it): a class shows a sensitive feature only if
// every member held it and the class has at least K members; none under
// Drop.
type SensitiveRule struct {
	// Features are the sensitive feature ids, ascending without repeats.
	// Optional; default none (the rule still stands and is reported).
	Features []uint32 `json:"features,omitempty"`
	// K is the least size of a class that shows one. Required unless Drop;
	// at least VerifyParams.K.
	K int64 `json:"k"`
	// Drop forbids sensitive features in the release. Optional.
	Drop bool `json:"drop,omitempty"`
	// Names, for a run of named features, is the list whose ids Features
	// become on the workers (Features is then empty). Optional.
	Names *SensitiveNames `json:"names,omitempty"`
	// Record is the list's sensitive.Record and Listed its entries, for
	// the report. Optional.
	Record string `json:"record,omitempty"`
	Listed int64  `json:"listed,omitempty"`

	resolved  bool // Names resolved into Features
	unmatched int  // entries of Names that name no feature
}

// SensitiveNames are a sensitive list of feature names (sensitive.List's
// entries), which the workers resolve to the run's feature ids through
// the vocabulary BuildVocab writes. The launcher cannot: ids are ranks
// among every name of the input, known once the job has counted them. A
// stage resolves the names at its first row, which Read or GroupPairs
// numbered through that vocabulary, so the file is then complete.
type SensitiveNames struct {
	// Entries are the list's entries. Required.
	Entries []string `json:"entries"`
	// Vocab is the vocabulary's path (VocabParams.Path). Required.
	Vocab string `json:"vocab"`
}

// ids are the ids of n's entries in its vocabulary, and how many entries
// name no feature of it.
func (n *SensitiveNames) ids(ctx context.Context) ([]uint32, int, error) {
	v, err := loadVocab(ctx, n.Vocab)
	if err != nil {
		return nil, 0, markJobError(fmt.Errorf("sensitive list: %w", err))
	}
	ids, err := (&sensitive.List{Entries: n.Entries}).Resolve(v)
	if err != nil {
		return nil, 0, markJobError(err)
	}
	return ids, len(n.Entries) - len(ids), nil
}

// resolve sets Features from Names, once; nothing without Names.
func (r *SensitiveRule) resolve(ctx context.Context) error {
	if r == nil || r.Names == nil || r.resolved {
		return nil
	}
	ids, unmatched, err := r.Names.ids(ctx)
	if err != nil {
		return err
	}
	r.Features, r.unmatched, r.resolved = ids, unmatched, true
	return nil
}

// SensitiveStats count the sensitive entries (Verify).
type SensitiveStats struct {
	Held, Released, Kept, Violations int64
}

func (a *SensitiveStats) merge(b SensitiveStats) {
	a.Held += b.Held
	a.Released += b.Released
	a.Kept += b.Kept
	a.Violations += b.Violations
}

func (r *SensitiveRule) has(f uint32) bool {
	_, ok := slices.BinarySearch(r.Features, f)
	return ok
}

// countRow adds one user's sensitive entries: its input row in and
// release row out (both sorted).
func (r *SensitiveRule) countRow(st *SensitiveStats, in, out []uint32) {
	if r == nil {
		return
	}
	held, released, kept := verify.SensitiveEntries(in, out, r.Features)
	st.Held += held
	st.Released += released
	st.Kept += kept
}

// judge counts the sensitive features of class c that break the rule and
// returns a problem line for them ("" when none).
func (r *SensitiveRule) judge(st *SensitiveStats, c ClassAcc) string {
	if r == nil || len(r.Features) == 0 {
		return ""
	}
	bad, why := 0, ""
	for x, f := range c.Out {
		if !r.has(f) {
			continue
		}
		w := verify.SensitiveBreak(c.Hits[x], c.Rows, r.K, r.Drop)
		if w == "" {
			continue
		}
		if bad == 0 {
			why = w
		}
		bad++
	}
	if bad == 0 {
		return ""
	}
	st.Violations += int64(bad)
	return fmt.Sprintf("class of %d users shows %d sensitive features against the rule, e.g. %s", c.Rows, bad, why)
}

// figures are the report's SensitiveFigures from the job's counts.
func (r *SensitiveRule) figures(st SensitiveStats) *smoothanonpb.SensitiveFigures {
	if r == nil {
		return nil
	}
	f := &smoothanonpb.SensitiveFigures{Features: r.Listed, Unmatched: int64(r.unmatched), SensitiveK: int32(r.K), Policy: "show",
		Held: st.Held, Released: st.Released, Suppressed: st.Held - st.Kept, Created: st.Released - st.Kept, Violations: st.Violations}
	if r.Drop {
		f.Policy = "drop"
	}
	f.ListSha256 = verify.RecordHash(r.Record)
	return f
}

// check reports the first bad field of r for classes of at least k.
func (r *SensitiveRule) check(k int) error {
	if r == nil {
		return nil
	}
	if !r.Drop && r.K < int64(k) {
		return fmt.Errorf("sensitive_k = %d is smaller than k = %d", r.K, k)
	}
	if r.Names != nil && (len(r.Features) > 0 || len(r.Names.Entries) == 0 || r.Names.Vocab == "") {
		return fmt.Errorf("sensitive names %d (vocabulary %q) with %d feature ids: want names and a vocabulary, or ids", len(r.Names.Entries), r.Names.Vocab, len(r.Features))
	}
	for i := 1; i < len(r.Features); i++ {
		if r.Features[i] <= r.Features[i-1] {
			return fmt.Errorf("sensitive feature %d at index %d: the list must ascend without repeats", r.Features[i], i)
		}
	}
	return nil
}
