package main

import (
	"context"
	"fmt"
	"io"

	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/sensitive"
	"github.com/smoothanon/smoothanon/solver"
	"github.com/smoothanon/smoothanon/verify"
)

func init() {
	register(command{
		name:  "verify",
		short: "check a release against its input; print the report as JSON",
		run:   runVerify,
	})
}

func runVerify(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("verify", stderr)
	input := fs.String("input", "", "input Parquet: file, directory, glob or comma list (required)")
	output := fs.String("output", "", "release to check: its directory (holding _SUCCESS) or its single Parquet file; every shard is checked against _SUCCESS, CRC-32C included (required)")
	k := fs.Int("k", 0, "smallest allowed class size (required, at least 2)")
	mode := modeFlag(fs)
	dedupe := dedupeFlag(fs, "repeated user ids in the input: refuse or union (as given to the anonymizer); repeats in the release are always reported")
	ids := addUserIDFlags(fs, false)
	layout := layoutFlags(fs)
	var sp solver.Params
	sens := addSensitiveFlags(fs, &sp)
	timeout := connectTimeoutFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	setStoreTimeout(*timeout)
	switch {
	case *input == "":
		return usageErr("missing --input")
	case *output == "":
		return usageErr("missing --output")
	}
	if err := checkK(*k); err != nil {
		return err
	}
	sp.K = *k
	params := verify.Params{K: *k, Mode: *mode, SensitiveK: sp.SensitiveK}
	if err := verify.CheckParams(params); err != nil {
		return usageErr("%v", err)
	}
	list, err := sens.load(context.Background())
	if err != nil {
		return err
	}

	in, st, err := matrix.ReadMatrix(*input, matrix.ReadOptions{Dedupe: *dedupe, AllowEmpty: true, Layout: *layout})
	if err != nil {
		return inputErr(err)
	}
	rel, out, err := readRelease(*output, matrix.ReleaseOptions{VerifyChecksums: true}, st.Layout.Values, st.Vocab)
	if err != nil {
		return err
	}
	switch {
	case list != nil:
		if err := sens.resolve(st.Vocab); err != nil {
			return err
		}
		if err := sensitive.Match(rel.Sensitive, sens.rec()); err != nil {
			return usageErr("%s: %v", *output, err)
		}
		sens.verifyParams(&params)
	case rel.Sensitive != "":
		return usageErr("%s records a sensitive list (%s): give it with --sensitive (and its --sensitive_k and --sensitive_policy) to check the release", *output, rel.Sensitive)
	}
	r, err := checkRelease(in, out, params, rel, ids, stderr)
	if err != nil {
		return err
	}
	if err := printReport(stdout, r); err != nil {
		return err
	}
	if !r.Valid {
		for _, p := range r.Problems {
			fmt.Fprintf(stderr, "smoothanon verify: problem: %s\n", p)
		}
		return &exitError{code: 1, err: fmt.Errorf("%s is not a %s %d-anonymous release of %s", *output, *mode, *k, *input)}
	}
	if r.UsersUnmatched {
		fmt.Fprintf(stderr, "smoothanon verify: no problem found by the checks that ran (%d rows, %d classes, min %d); per-user checks need the key\n",
			r.Rows, r.Classes, r.MinClass)
		return nil
	}
	fmt.Fprintf(stderr, "smoothanon verify: valid %s %d-anonymous release: %d rows, %d classes (min %d), jaccard %.4f\n",
		*mode, *k, r.Rows, r.Classes, r.MinClass, r.Jaccard)
	return nil
}

// readRelease opens the release spec, every shard checked against its
// manifest (matrix.OpenRelease), and reads every row as it is, keeping
// repeated user ids (verify reports them rather than refusing the
// release). Its features must be want (matrix.ValuesAuto: any), the
// values of the data it is compared with: names against ids, or strings
// against integers, cannot be compared and are a usage error. Named
// features are read as the ids of vocab (the input's, or another
// release's; nil: the release's own), names it lacks given new ids.
func readRelease(spec string, opts matrix.ReleaseOptions, want matrix.Values, vocab *matrix.Vocab) (*matrix.Release, *matrix.Matrix, error) {
	rel, err := matrix.OpenRelease(spec, opts)
	if err != nil {
		return nil, nil, inputErr(err)
	}
	if want != matrix.ValuesAuto && rel.Values != want {
		return nil, nil, usageErr("%s holds features as %v, the data it is compared with as %v: not a release of it", spec, rel.Values, want)
	}
	if vocab != nil {
		rel.Vocab = vocab.Grown()
	}
	m := matrix.New(0, 0)
	err = rel.Read(func(u string, f []uint32) error {
		m.Users = append(m.Users, u)
		m.Features = append(m.Features, f...)
		m.Offsets = append(m.Offsets, int64(len(m.Features)))
		return nil
	})
	if err != nil {
		return nil, nil, inputErr(err)
	}
	return rel, m, nil
}
