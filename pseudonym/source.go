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
	// Out is where Save writes a drawn key (WriteKey: create-exclusive,
	// 0600); Load refuses an Out that exists. Optional; default nowhere, so the key of a drawn release is
	// lost and its pseudonyms can never be mapped back. Refused with File
	// or Env (the operator holds that key already).
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
	if src.Out != "" {
		// Fail before any work if the key could not be written later.
		if _, err := os.Lstat(src.Out); err == nil {
			return Key{}, false, &KeyError{Source: "--pseudonym_key_out " + src.Out, Reason: "file exists (a key is never overwritten)"}
		}
	}
	if k, err = NewKey(); err != nil {
		return Key{}, false, err
	}
	return k, true, nil
}

// Save writes a drawn key to src.Out (WriteKey) if it is set. Callers save
// the key just before publishing the release it belongs to, and remove it
// (os.Remove(src.Out)) if publishing fails, so no key outlives a failed run.
func (src Source) Save(k Key) error {
	if src.Out == "" {
		return nil
	}
	return WriteKey(src.Out, k)
}

// Given reports whether src names an existing key (a file or a variable).
func (src Source) Given() bool { return src.File != "" || src.Env != "" }

// ReadKeyFile reads a key file. With WriteKey it is the only place a key
// touches the file system, so both can later be pointed at bucket paths.
func ReadKeyFile(path string) ([]byte, error) {
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
