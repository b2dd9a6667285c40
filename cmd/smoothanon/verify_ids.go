package main

import (
	"fmt"
	"io"

	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/proto/smoothanonpb"
	"github.com/smoothanon/smoothanon/pseudonym"
	"github.com/smoothanon/smoothanon/verify"
)

// checkRelease verifies out, the rows of rel, against in, as the
// release's user id mode (rel.UserIDs: its manifest's, else its files'
// mark) allows: a pseudonymized release is checked in full when the key
// is given (the input's ids are pseudonymized under it first), and without
// the key only by the checks that need no matching of users, said on
// stderr and in the report.
func checkRelease(in, out *matrix.Matrix, params verify.Params, rel *matrix.Release, ids *userIDFlags, stderr io.Writer) (*smoothanonpb.RunReport, error) {
	output := rel.Spec
	pseudo := rel.UserIDs == pseudonym.Pseudonymize.String()
	src := ids.source()
	if !pseudo {
		if src.Given() {
			return nil, usageErr("--pseudonym_key_* given, but %s is not marked as pseudonymized (%s)", output, pseudonym.MetadataKey)
		}
		r, err := verify.Check(in, out, params)
		if err != nil {
			return nil, inputErr(err)
		}
		return r, nil
	}
	if !src.Given() {
		fmt.Fprintf(stderr, "smoothanon verify: %s has pseudonymous user ids and no key was given (--pseudonym_key_file or --pseudonym_key_env): users cannot be matched to the input; checking only row count, repeated ids, class sizes and per-feature support; not checked: per-user majority, created entries, jaccard\n", output)
		r, err := verify.CheckUnmatched(in, out, params)
		if err != nil {
			return nil, inputErr(err)
		}
		r.UserIds = pseudonym.Pseudonymize.String()
		return r, nil
	}
	key, _, err := src.Load()
	if err != nil {
		return nil, usageErr("%v", err)
	}
	if fp := key.Fingerprint(); rel.KeyFingerprint != "" && fp != rel.KeyFingerprint {
		return nil, usageErr("%s was pseudonymized under another key (key fingerprint %s; the key given has %s)", output, rel.KeyFingerprint, fp)
	}
	if in, err = pseudonym.Matrix(in, key); err != nil {
		return nil, inputErr(err)
	}
	r, err := verify.Check(in, out, params)
	if err != nil {
		return nil, inputErr(err)
	}
	r.UserIds = pseudonym.Pseudonymize.String()
	return r, nil
}
