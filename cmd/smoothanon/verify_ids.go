package main

import (
	"fmt"
	"io"

	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/proto/smoothanonpb"
	"github.com/smoothanon/smoothanon/pseudonym"
	"github.com/smoothanon/smoothanon/verify"
)

// checkRelease verifies out against in, as the release's user id mode
// allows: a release marked pseudonymized is checked in full when the key
// is given (the input's ids are pseudonymized under it first), and without
// the key only by the checks that need no matching of users, said on
// stderr and in the report.
func checkRelease(in, out *matrix.Matrix, params verify.Params, output string, ids *userIDFlags, stderr io.Writer) (*smoothanonpb.RunReport, error) {
	marks, err := matrix.FilesMetadata(output, pseudonym.MetadataKey)
	if err != nil {
		return nil, inputErr(err)
	}
	pseudo := len(marks[pseudonym.Pseudonymize.String()]) > 0
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
