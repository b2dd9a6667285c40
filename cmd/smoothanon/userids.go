package main

import (
	"flag"

	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/pseudonym"
)

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
		u.out = fs.String("pseudonym_key_out", "", "save a drawn pseudonym key to this local file once the release is published (must not exist; mode 0600); without it the key is lost")
	}
	return u
}

func (u *userIDFlags) source() pseudonym.Source {
	return pseudonym.Source{File: *u.keyFile, Env: *u.keyEnv, Out: *u.out}
}

// resolve checks the flags and loads or draws the key; key is nil for
// --user_ids keep.
func (u *userIDFlags) resolve() (*pseudonym.Key, error) {
	src := u.source()
	if *u.mode == pseudonym.Keep {
		if src.Given() || src.Out != "" {
			return nil, usageErr("--pseudonym_key_* flags are for --user_ids pseudonym, not keep")
		}
		return nil, nil
	}
	k, _, err := src.Load()
	if err != nil {
		return nil, usageErr("%v", err)
	}
	return &k, nil
}

// pseudonymize replaces in's user ids under key; nil keeps them.
func pseudonymize(in *matrix.Matrix, key *pseudonym.Key) (*matrix.Matrix, error) {
	if key == nil {
		return in, nil
	}
	return pseudonym.Matrix(in, *key)
}
