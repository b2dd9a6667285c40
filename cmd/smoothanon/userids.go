package main

import (
	"flag"
	"os"

	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/proto/smoothanonpb"
	"github.com/smoothanon/smoothanon/pseudonym"
)

// keepWarning is the run report's linkage warning for --user_ids keep.
const keepWarning = "user ids kept: releases of the same population can be joined by id and a user's classes intersected, " +
	"so a series of releases is not protected (see docs/privacy.md); use --user_ids pseudonym"

// userIDFlags are --user_ids and the pseudonym key flags.
type userIDFlags struct {
	mode                 *pseudonym.Mode // nil for verify, which reads the mode from the release
	keyFile, keyEnv, out *string
}

// addUserIDFlags defines the flags; withMode adds --user_ids and
// --pseudonym_key_out (the commands that make releases).
func addUserIDFlags(fs *flag.FlagSet, withMode bool) *userIDFlags {
	u := &userIDFlags{
		keyFile: fs.String("pseudonym_key_file", "", "file holding the pseudonym key (64 hex digits)"),
		keyEnv:  fs.String("pseudonym_key_env", "", "environment variable holding the pseudonym key (64 hex digits)"),
		out:     new(string),
	}
	if withMode {
		u.mode = choiceFlag(fs, "user_ids", "pseudonym", pseudonym.ParseMode,
			"pseudonym (each user id replaced by HMAC-SHA256 under a per-release key) or keep (the input's ids: releases can be linked by id)")
		u.out = fs.String("pseudonym_key_out", "", "write a drawn pseudonym key here (must not exist; mode 0600); without it the key is lost")
	}
	return u
}

func (u *userIDFlags) source() pseudonym.Source {
	return pseudonym.Source{File: *u.keyFile, Env: *u.keyEnv, Out: *u.out}
}

// resolve checks the flags and loads or draws the key; ok is false for
// --user_ids keep.
func (u *userIDFlags) resolve() (k pseudonym.Key, ok bool, err error) {
	src := u.source()
	if *u.mode == pseudonym.Keep {
		if src.Given() || src.Out != "" {
			return k, false, usageErr("--pseudonym_key_* flags are for --user_ids pseudonym, not keep")
		}
		return k, false, nil
	}
	k, _, err = src.Load()
	if err != nil {
		return k, false, usageErr("%v", err)
	}
	return k, true, nil
}

// pseudonymize replaces in's user ids when ok (resolve's result).
func pseudonymize(in *matrix.Matrix, k pseudonym.Key, ok bool) (*matrix.Matrix, error) {
	if !ok {
		return in, nil
	}
	return pseudonym.Matrix(in, k)
}

// annotate records the user id mode in r.
func annotate(r *smoothanonpb.RunReport, mode pseudonym.Mode) {
	r.UserIds = mode.String()
	if mode == pseudonym.Keep {
		r.LinkageWarning = keepWarning
	}
}

// releaseMetadata marks a pseudonymized release's files; kept ids add no
// metadata, so those releases keep their bytes.
func releaseMetadata(mode pseudonym.Mode) map[string]string {
	if mode == pseudonym.Keep {
		return nil
	}
	return map[string]string{pseudonym.MetadataKey: mode.String()}
}

// saveKey writes a drawn key where the operator asked, just before the
// release is published; the returned function removes it again if
// publishing fails.
func (u *userIDFlags) saveKey(k pseudonym.Key, ok bool) (undo func(), err error) {
	if !ok || *u.out == "" {
		return func() {}, nil
	}
	if err := u.source().Save(k); err != nil {
		return nil, inputErr(err)
	}
	return func() { os.Remove(*u.out) }, nil
}
