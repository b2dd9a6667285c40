package release

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/smoothanon/smoothanon/pseudonym"
	"github.com/smoothanon/smoothanon/storage"
)

// A drawn key is written where the operator asked only once its release
// is published. From Begin on, the run holds a pending file beside that
// path (".<name>.pending-<token>", mode 0600, flocked by the run for its
// life): it reserves the key path, so no second live run can plan to save
// a key there. Before the claim the key goes into it, with the output it
// belongs to; right after the claim the key file is created (create-
// exclusive, 0600) and the pending file removed. A run that publishes
// nothing removes it. A dead run's pending file is handled by the next run
// with the same key path: if it holds a key whose fingerprint is that of
// the release now published at the output it names, the key is saved
// (the run died between publishing and saving); otherwise it is removed.

// pending is the content of a pending file.
type pending struct {
	// Output is the release the key belongs to, Dir whether it is a
	// directory release.
	Output string `json:"output"`
	Dir    bool   `json:"dir"`
	// Key is the key's text form, set just before the claim.
	Key string `json:"key,omitempty"`
}

// pendingKey is a run's pending file.
type pendingKey struct {
	path, out string
	info      pending
	lock      *storage.Lock
}

// reserveKey creates the run's pending file beside keyOut, refusing when
// another live run holds one there.
func reserveKey(keyOut, token, output string, dir bool) (*pendingKey, error) {
	kdir, _ := filepath.Split(keyOut)
	if kdir == "" {
		kdir = "."
	}
	unlock, err := storage.LockDir(kdir)
	if err != nil {
		return nil, fmt.Errorf("--pseudonym_key_out %s: %w", keyOut, err)
	}
	defer unlock()
	others, err := pendingFiles(keyOut)
	if err != nil {
		return nil, err
	}
	for _, p := range others {
		if live, err := storage.IsLive(p); err == nil && live {
			return nil, fmt.Errorf("--pseudonym_key_out %s: another run that is still running will save its key there", keyOut)
		}
	}
	pk := &pendingKey{path: pendingName(keyOut, token), out: keyOut, info: pending{Output: output, Dir: dir}}
	b, _ := json.Marshal(pk.info)
	if pk.lock, err = storage.LockFile(pk.path, b); err != nil {
		return nil, fmt.Errorf("--pseudonym_key_out %s: %w", keyOut, err)
	}
	return pk, nil
}

// hold puts the key into the pending file, before the claim.
func (pk *pendingKey) hold(k pseudonym.Key) error {
	pk.info.Key = string(k.Text())
	b, _ := json.Marshal(pk.info)
	if err := pk.lock.Rewrite(b); err != nil {
		return fmt.Errorf("--pseudonym_key_out %s: %w", pk.out, err)
	}
	return nil
}

// save writes the held key to its path, which must not exist. The pending
// file stays until the run ends (discard), so a retry of a run killed
// before its report knows the release for its own.
func (pk *pendingKey) save(k pseudonym.Key) error {
	return saveKey(pk.out, k)
}

// discard removes the pending file.
func (pk *pendingKey) discard() {
	if pk == nil || pk.lock == nil {
		return
	}
	os.Remove(pk.path)
	pk.lock.Release()
	pk.lock = nil
}

// saveKey writes k to out, never replacing a file there.
func saveKey(out string, k pseudonym.Key) error {
	if err := pseudonym.WriteKey(out, k); err != nil {
		if errors.Is(err, os.ErrExist) {
			return fmt.Errorf("--pseudonym_key_out %s: exists (a key is never overwritten)", out)
		}
		return err
	}
	return nil
}

// pendingFiles lists the pending files beside keyOut.
func pendingFiles(keyOut string) ([]string, error) {
	dir, base := filepath.Split(keyOut)
	if dir == "" {
		dir = "."
	}
	return filepath.Glob(filepath.Join(dir, globEscape("."+base+pendingInfix)+"*"))
}

// sweepPending handles the pending files that dead runs left beside
// keyOut: a key whose fingerprint is that of the release now published at
// the output the file names is saved at keyOut (if nothing is there);
// every dead pending file is then removed. Live runs' files are left
// alone. savedFor is the output of a release whose key is now at keyOut
// thanks to a dead run's pending file (saved now, or saved by that run
// before it died).
func sweepPending(ctx context.Context, keyOut string) (savedFor string, removed []string, err error) {
	if keyOut == "" {
		return "", nil, nil
	}
	files, err := pendingFiles(keyOut)
	if err != nil {
		return "", nil, err
	}
	for _, p := range files {
		live, err := storage.IsLive(p)
		if err != nil || live {
			continue // live, or not a regular file: not ours to touch
		}
		if k, out, ok := pendingKeyOf(ctx, p); ok {
			_, err := os.Lstat(keyOut)
			switch {
			case errors.Is(err, os.ErrNotExist):
				if err := saveKey(keyOut, k); err != nil {
					return savedFor, removed, err
				}
				savedFor = out
			case sameKey(keyOut, k):
				savedFor = out // saved before its run died
			}
		} else {
			removed = append(removed, p)
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return savedFor, removed, err
		}
	}
	return savedFor, removed, nil
}

// sameKey reports whether the key file path holds k.
func sameKey(path string, k pseudonym.Key) bool {
	text, err := pseudonym.ReadKeyFile(path)
	if err != nil {
		return false
	}
	got, err := pseudonym.ParseKey(path, text)
	return err == nil && got == k
}

// pendingKeyOf returns the key held in the pending file p, and the output
// it names, if it is the key of the release published there.
func pendingKeyOf(ctx context.Context, p string) (pseudonym.Key, string, bool) {
	b, err := storage.ReadFile(ctx, p)
	var info pending
	if err != nil || json.Unmarshal(b, &info) != nil || info.Key == "" || info.Output == "" {
		return pseudonym.Key{}, "", false
	}
	k, err := pseudonym.ParseKey(p, []byte(info.Key))
	if err != nil {
		return pseudonym.Key{}, "", false
	}
	fp := ""
	if info.Dir {
		if m, err := storage.ReadManifest(ctx, info.Output); err == nil {
			fp = m.KeyFingerprint
		}
	} else if st, err := inspectFile(ctx, info.Output); err == nil && st.release {
		fp = st.fingerprint
	}
	return k, info.Output, fp != "" && fp == k.Fingerprint()
}
