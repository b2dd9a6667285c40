package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/sensitive"
	"github.com/smoothanon/smoothanon/solver"
	"github.com/smoothanon/smoothanon/verify"
)

// sensitiveFlags are --sensitive, --sensitive_k and --sensitive_policy.
// The last two fill p's fields (the one type of the setting, from flag to
// solver); the list fills p.Sensitive once the input's vocabulary is known
// (resolve).
type sensitiveFlags struct {
	fs     *flag.FlagSet
	stderr io.Writer // for the note on entries that match no feature
	path   *string
	p      *solver.Params
	list   *sensitive.List
}

func addSensitiveFlags(fs *flag.FlagSet, p *solver.Params) *sensitiveFlags {
	s := &sensitiveFlags{fs: fs, p: p, stderr: fs.Output()}
	s.path = fs.String("sensitive", "", "file (or object) of sensitive features, one a line: ids, or names where the features are names; "+
		"a class shows one only if every member held it (never created, whatever --mode) and the class has --sensitive_k members; the release records the list's hash")
	fs.IntVar(&p.SensitiveK, "sensitive_k", 0, "least size of a class that shows a sensitive feature (default --k; at least --k)")
	choiceVar(fs, &p.SensitivePolicy, "sensitive_policy", "show", solver.ParseSensitivePolicy,
		"show (sensitive features shown under the rule above: a shown one is true of every member of its class) or drop (never released)")
	return s
}

// load reads the list; nil without --sensitive, where --sensitive_k and
// --sensitive_policy are usage errors. A list that cannot be read or
// parsed is exit 2.
func (s *sensitiveFlags) load(ctx context.Context) (*sensitive.List, error) {
	if *s.path == "" {
		for _, name := range []string{"sensitive_k", "sensitive_policy"} {
			if flagSet(s.fs, name) {
				return nil, usageErr("--%s without --sensitive", name)
			}
		}
		return nil, nil
	}
	l, err := sensitive.Load(ctx, *s.path)
	if err != nil {
		return nil, inputErr(err)
	}
	s.list = l
	return l, nil
}

// resolve sets p.Sensitive to the list's ids among features read through
// vocab (nil: the features are ids), the list itself to the form its
// entries are compared and hashed in (sensitive.List.Canonical). Nothing
// without a list.
func (s *sensitiveFlags) resolve(vocab *matrix.Vocab) error {
	if s.list == nil {
		return nil
	}
	values := matrix.ValuesIDs
	if vocab != nil {
		values = vocab.Values()
	}
	l, err := s.list.Canonical(values)
	if err != nil {
		return usageErr("--sensitive %s: %v", *s.path, err)
	}
	ids, err := l.Resolve(vocab)
	if err != nil {
		return usageErr("--sensitive %s: %v", *s.path, err)
	}
	s.list, s.p.Sensitive = l, ids
	s.noteUnmatched(int64(l.Unmatched(vocab)), int64(len(l.Entries)))
	return nil
}

// noteUnmatched notes on stderr the n of the list's entries that name no
// feature of the input.
func (s *sensitiveFlags) noteUnmatched(n, of int64) {
	if n > 0 && s.stderr != nil {
		fmt.Fprintf(s.stderr, "smoothanon: note: %d of the %d entries of --sensitive %s name no feature of the input (held by no one, or misspelt)\n", n, of, *s.path)
	}
}

// rec is the release's sensitive record; resolve must have run.
func (s *sensitiveFlags) rec() sensitive.Record { return sensitive.NewRecord(s.list, *s.p) }

// record is rec as the release's files carry it; "" without a list.
func (s *sensitiveFlags) record() string {
	if s.list == nil {
		return ""
	}
	return s.rec().String()
}

// verifyParams adds the rule to vp; resolve must have run.
func (s *sensitiveFlags) verifyParams(vp *verify.Params) {
	if s.list == nil {
		return
	}
	vp.Sensitive, vp.SensitiveK = s.p.Sensitive, s.p.SensitiveK
	vp.SensitiveDrop = s.p.SensitivePolicy == solver.SensitiveDrop
	vp.SensitiveRecord, vp.SensitiveListed = s.record(), int64(len(s.list.Entries))
}
