package pseudonym

import (
	"errors"
	"fmt"
	"os"
)

// Source says where a release's key comes from. At most one of File and
// Env may be set; with neither, a random key is drawn.
type Source struct {
	// File is a path holding the key's text form. Optional.
	File string
	// Env is the name of an environment variable holding the key's text
	// form. Optional.
	Env string
	// Out is where a drawn key is to be saved once its release is
	// published (release.Plan.KeyOut, which checks it). Optional; default
	// nowhere, so the key of a drawn release is lost and its pseudonyms
	// can never be mapped back. Refused with File or Env (the operator
	// holds that key already).
	Out string
}

// Load returns the key src names, or draws one (Save writes it to
// src.Out). drawn reports whether the key was drawn for this release.
func (src Source) Load() (k Key, drawn bool, err error) {
	switch {
	case src.File != "" && src.Env != "":
		return Key{}, false, errors.New("--pseudonym_key_file and --pseudonym_key_env both set: give one key source")
	case src.Out != "" && (src.File != "" || src.Env != ""):
		return Key{}, false, errors.New("--pseudonym_key_out is for a drawn key; the key of --pseudonym_key_file or --pseudonym_key_env is already the operator's")
	case src.File != "":
		text, err := ReadKeyFile(src.File)
		if err != nil {
			return Key{}, false, err
		}
		k, err = ParseKey("--pseudonym_key_file "+src.File, text)
		return k, false, err
	case src.Env != "":
		text, ok := os.LookupEnv(src.Env)
		if !ok || text == "" {
			return Key{}, false, &KeyError{Source: "--pseudonym_key_env " + src.Env, Reason: "the environment variable is not set or empty"}
		}
		k, err = ParseKey("--pseudonym_key_env "+src.Env, []byte(text))
		return k, false, err
	}
	if k, err = NewKey(); err != nil {
		return Key{}, false, err
	}
	return k, true, nil
}

// Given reports whether src names an existing key (a file or a variable).
func (src Source) Given() bool { return src.File != "" || src.Env != "" }

// ReadKeyFile reads a key file; it must be a regular file (a FIFO would
// block the read forever).
func ReadKeyFile(path string) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, &KeyError{Source: "--pseudonym_key_file " + path, Reason: errReason(err)}
	}
	if !st.Mode().IsRegular() {
		return nil, &KeyError{Source: "--pseudonym_key_file " + path, Reason: "not a regular file"}
	}
	if st.Size() > 4096 {
		return nil, &KeyError{Source: "--pseudonym_key_file " + path, Reason: fmt.Sprintf("%d bytes: a key file holds 64 hex digits", st.Size())}
	}
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, &KeyError{Source: "--pseudonym_key_file " + path, Reason: errReason(err)}
	}
	return text, nil
}

// WriteKey writes k's text form to path, which must not exist yet
// (create-exclusive, mode 0600): a key is never overwritten, and never
// readable by others.
func WriteKey(path string, k Key) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return &KeyError{Source: "--pseudonym_key_out " + path, Reason: errReason(err)}
	}
	_, err = f.Write(k.Text())
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return &KeyError{Source: "--pseudonym_key_out " + path, Reason: errReason(err)}
	}
	return nil
}

// errReason is err's message without the path os errors repeat.
func errReason(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return fmt.Sprintf("%v", pe.Err)
	}
	return err.Error()
}
