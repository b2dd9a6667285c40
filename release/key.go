package release

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/smoothanon/smoothanon/pseudonym"
	"github.com/smoothanon/smoothanon/storage"
)

// A drawn key is written where the operator asked only once its release
// is published. Until then it waits beside that path as a pending key
// (".<name>.pending-<token>", mode 0600, flocked by its run): written
// before the claim, so that a run that dies between publishing and
// saving leaves it, and moved into place (a hard link, create-exclusive)
// right after. A run that publishes nothing removes it. A dead run's
// pending key is handled by the next run with the same key path: saved
// if its fingerprint is the published release's (the key of that
// release), removed otherwise.

// pendingKey is a drawn key waiting for its release's publish.
type pendingKey struct {
	path, out string
	key       pseudonym.Key
	lock      *storage.Lock
}

// writePending writes k beside out for the run of token.
func writePending(out, token string, k pseudonym.Key) (*pendingKey, error) {
	p := pendingName(out, token)
	lock, err := storage.LockFile(p, k.Text())
	if err != nil {
		return nil, fmt.Errorf("--pseudonym_key_out %s: %w", out, err)
	}
	return &pendingKey{path: p, out: out, key: k, lock: lock}, nil
}

// save moves the pending key to its path; the path must not exist.
func (pk *pendingKey) save() error {
	defer pk.discard()
	return saveKeyFile(pk.path, pk.out, pk.key)
}

// discard removes the pending key.
func (pk *pendingKey) discard() {
	if pk == nil {
		return
	}
	os.Remove(pk.path)
	pk.lock.Release()
}

// saveKeyFile gives the key file at pending the name out, never replacing
// a file there: a hard link, or where links are not supported a new
// create-exclusive file.
func saveKeyFile(pending, out string, k pseudonym.Key) error {
	err := os.Link(pending, out)
	if err == nil || errors.Is(err, os.ErrExist) {
		if err != nil {
			return fmt.Errorf("--pseudonym_key_out %s: exists (a key is never overwritten)", out)
		}
		return nil
	}
	return pseudonym.WriteKey(out, k)
}

// sweepPending handles the pending keys that dead runs left beside out.
// A key whose fingerprint is published's (the fingerprint of the release
// now published at the run's output; "" if none) belongs to that
// release: it is saved at out if out does not exist. Any other is
// removed. Keys of live runs are left alone.
func sweepPending(out, published string) (saved string, removed []string, err error) {
	if out == "" {
		return "", nil, nil
	}
	dir, base := filepath.Split(out)
	if dir == "" {
		dir = "."
	}
	matches, err := filepath.Glob(filepath.Join(dir, globEscape("."+base+pendingInfix)+"*"))
	if err != nil {
		return "", nil, err
	}
	for _, p := range matches {
		live, err := storage.IsLive(p)
		if err != nil {
			return saved, removed, err
		}
		if live {
			continue
		}
		text, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		k, perr := pseudonym.ParseKey(p, text)
		if perr == nil && published != "" && k.Fingerprint() == published {
			if _, err := os.Lstat(out); errors.Is(err, os.ErrNotExist) {
				if err := saveKeyFile(p, out, k); err != nil {
					return saved, removed, err
				}
				saved = out
			}
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return saved, removed, err
		}
		if saved != out {
			removed = append(removed, p)
		}
	}
	return saved, removed, nil
}
