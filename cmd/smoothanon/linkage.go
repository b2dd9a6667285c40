package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/smoothanon/smoothanon/linkage"
	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/verify"
)

func init() {
	register(command{
		name:  "linkage",
		short: "link several releases of one population; report each user's linked anonymity set as JSON",
		run:   runLinkage,
	})
}

// releaseList is a repeatable --release flag.
type releaseList []string

func (l *releaseList) String() string { return strings.Join(*l, " ") }
func (l *releaseList) Set(s string) error {
	if s == "" {
		return fmt.Errorf("empty release")
	}
	*l = append(*l, s)
	return nil
}

func runLinkage(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("linkage", stderr)
	var releases releaseList
	fs.Var(&releases, "release", "a release: its directory (holding _SUCCESS) or its single Parquet file; repeat once per release, oldest first (at least 2)")
	k := fs.Int("k", 0, "the releases' k (required, at least 2)")
	date := dateFlag(fs)
	timeout := connectTimeoutFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := checkK(*k); err != nil {
		return err
	}
	setStoreTimeout(*timeout)
	day, err := resolveDate(*date, time.Now())
	if err != nil {
		return err
	}
	for i := range releases {
		if releases[i], err = expandDate("release", releases[i], day); err != nil {
			return err
		}
	}
	switch {
	case len(releases) < 2:
		return usageErr("%d --release given, need at least 2", len(releases))
	case len(releases) > linkage.MaxReleases:
		return usageErr("%d --release given, at most %d", len(releases), linkage.MaxReleases)
	}
	rels := make([]*matrix.Matrix, len(releases))
	opened := make([]*matrix.Release, len(releases))
	fingerprints := make([]string, len(releases))
	// Every release's features are read as the first's are: ids, or
	// names numbered by its vocabulary, grown by the others' names.
	values, vocab := matrix.ValuesAuto, (*matrix.Vocab)(nil)
	for i, spec := range releases {
		rel, m, err := readRelease(spec, matrix.ReleaseOptions{VerifyChecksums: true}, values, vocab)
		if err != nil {
			return err
		}
		rels[i], opened[i], fingerprints[i] = m, rel, rel.KeyFingerprint
		values, vocab = rel.Values, rel.Vocab
	}
	if err := fillLongReleases(opened, rels); err != nil {
		return err
	}
	r, err := linkage.Measure(releases, rels, *k)
	if err != nil {
		return inputErr(err)
	}
	if err := r.CheckKeys(fingerprints); err != nil {
		return err
	}
	// Releases under one key join by id, whatever their overlap says; and
	// a release whose smallest class is below k is not k-anonymous alone.
	var shared error
	for i, ri := range r.Releases {
		if ri.MinSize > 0 && ri.MinSize < int64(*k) && shared == nil {
			shared = &exitError{code: 1, err: fmt.Errorf("release %d (%s) is not %d-anonymous on its own: its smallest class has %d users", i+1, ri.Name, *k, ri.MinSize)}
		}
	}
	if len(r.SharedKeys) > 0 {
		shared = &exitError{code: 1, err: errors.New(r.SharedKeys[0].String())}
		if n := len(r.SharedKeys) - 1; n > 0 {
			shared = &exitError{code: 1, err: fmt.Errorf("%s (and %d more pairs: shared_keys in the report)", r.SharedKeys[0], n)}
		}
	}
	js, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if _, err := stdout.Write(append(js, '\n')); err != nil {
		return err
	}
	if r.Mode == "classes" {
		fmt.Fprintf(stderr, "smoothanon linkage: %s\n", r.Note)
		for _, l := range r.ClassLinks {
			fmt.Fprintf(stderr, "smoothanon linkage: release %d -> %d: %d of %d classes reappear with the same feature set (%d same size, %d grew, %d shrank, %d changed by fewer than k users)\n",
				l.From, l.To, l.Matched, l.ClassesTo, l.SameSize, l.Grew, l.Shrank, l.ChangedBelowK)
		}
		return shared
	}
	u := r.Users
	fmt.Fprintf(stderr, "smoothanon linkage: %d users over %d releases: linked set < k=%d for %d (%.1f%%), < k/2 for %d (%.1f%%), pinned to 1 for %d (%.1f%%), smallest %d\n",
		u.Users, len(rels), *k, u.BelowK, 100*u.BelowKFraction, u.BelowHalfK, 100*u.BelowHalfKFraction, u.Pinned, 100*u.PinnedFraction, u.MinSet)
	if shared != nil {
		return shared
	}
	if u.BelowK > 0 {
		return &exitError{code: 1, err: fmt.Errorf("linked releases are not %d-anonymous: %d users have a linked set below k", *k, u.BelowK)}
	}
	return nil
}

// fillLongReleases reads each long-form release as the list form it
// stands for: the users the other releases name and it has on no row
// were released without features, provided they are exactly the users
// its manifest counts beyond its rows. Otherwise who was released empty
// cannot be told, and linking it is refused.
func fillLongReleases(opened []*matrix.Release, rels []*matrix.Matrix) error {
	for i, rel := range opened {
		if rel.Shape != matrix.ShapeLong {
			continue
		}
		var named []string // the users the other releases name
		for j, m := range rels {
			if j != i {
				named = append(named, m.Users...)
			}
		}
		rows := int64(rels[i].NumRows())
		filled, absent := verify.FillAbsent(named, rels[i])
		if rel.Users == 0 || rows+absent != rel.Users {
			return inputErr(fmt.Errorf("%s is in long form: its users released without features are on no row, and the %d users the other releases name beyond its rows are not the %d its manifest counts: who was released empty cannot be told",
				rel.Spec, absent, rel.Users-rows))
		}
		rels[i] = filled
	}
	return nil
}
