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
		return checkMatched(in, out, params, rel)
	}
	if !src.Given() {
		fmt.Fprintf(stderr, "smoothanon verify: %s has pseudonymous user ids and no key was given (--pseudonym_key_file or --pseudonym_key_env): users cannot be matched to the input; checking only row count, repeated ids, class sizes, per-feature support and (with --sensitive) the sensitive classes' sizes; not checked: per-user majority, created entries, jaccard\n", output)
		var note string
		params.Absent, note = absentUnmatched(in, out, rel)
		r, err := verify.CheckUnmatched(in, out, params)
		if err != nil {
			return nil, inputErr(err)
		}
		r.UserIds = pseudonym.Pseudonymize.String()
		return invalidIf(r, note), nil
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
	r, err := checkMatched(in, out, params, rel)
	if err != nil {
		return nil, err
	}
	r.UserIds = pseudonym.Pseudonymize.String()
	return r, nil
}

// checkMatched runs verify.Check on a release whose users match the
// input's. A long-form release is read as the list form it stands for:
// the input's users on none of its rows were released without features
// (verify.FillAbsent), and they must make up the users its manifest
// counts, else a user dropped would pass for one released empty.
func checkMatched(in, out *matrix.Matrix, params verify.Params, rel *matrix.Release) (*smoothanonpb.RunReport, error) {
	var note string
	if rel.Shape == matrix.ShapeLong {
		rows := int64(out.NumRows())
		var absent int64
		out, absent = verify.FillAbsent(in.Users, out)
		if rel.Users > 0 && rows+absent != rel.Users {
			note = fmt.Sprintf("the release counts %d users, but its rows name %d and the input's users on none of them are %d", rel.Users, rows, absent)
		}
	}
	r, err := verify.Check(in, out, params)
	if err != nil {
		return nil, inputErr(err)
	}
	return invalidIf(r, note), nil
}

// invalidIf adds problem, when there is one, to r's problems and marks r
// invalid.
func invalidIf(r *smoothanonpb.RunReport, problem string) *smoothanonpb.RunReport {
	if problem != "" {
		r.Problems = append(r.Problems, problem)
		r.Valid = false
	}
	return r
}

// absentUnmatched is, for a long-form release whose users cannot be
// matched, the users it holds on no row: its manifest's users less its
// rows'. A single long-form file counts no users: every input user
// beyond its rows is taken as released without features. note is a
// problem when the manifest counts fewer users than the rows name.
func absentUnmatched(in, out *matrix.Matrix, rel *matrix.Release) (absent int64, note string) {
	if rel.Shape != matrix.ShapeLong {
		return 0, ""
	}
	rows := int64(out.NumRows())
	if rel.Users == 0 {
		return max(0, int64(in.NumRows())-rows), ""
	}
	if rel.Users < rows {
		return 0, fmt.Sprintf("the release counts %d users, but its rows name %d", rel.Users, rows)
	}
	return rel.Users - rows, ""
}
