package release

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/smoothanon/smoothanon/storage"
)

// A run removes what dead runs left at its output before it starts:
// stagings whose lease is gone, shards a dead run copied into the output
// but never published, and temporaries of interrupted atomic writes. It
// removes nothing else: each of these is recognized by its name (it
// carries a token) and by its run being dead (lease.go), never by age
// alone on a local disk.

// sweepDir removes the leftovers of dead runs beside and inside the
// directory release out. It returns the tokens of the live stagings.
func sweepDir(ctx context.Context, out string) (removed []string, err error) {
	// Order matters: the output is listed before the stagings, and the
	// manifest read after both, so a run that publishes meanwhile has
	// either a live staging or its shards in the manifest read.
	st, err := inspectDir(ctx, out)
	if err != nil {
		return nil, err
	}
	stagings, err := listStagings(ctx, out)
	if err != nil {
		return nil, err
	}
	live := map[string]bool{}
	for token, staging := range stagings {
		dead, err := stagingDead(ctx, staging)
		if err != nil {
			return removed, err
		}
		if !dead {
			live[token] = true
			continue
		}
		if err := storage.RemoveAll(ctx, staging); err != nil {
			return removed, err
		}
		removed = append(removed, staging)
	}
	m, err := storage.ReadManifest(ctx, out)
	if err != nil && !errors.Is(err, storage.ErrNotRelease) {
		return removed, err
	}
	now := dirState{manifest: m}
	for _, name := range st.names {
		token, ok := shardToken(name)
		if !ok || live[token] || now.listed(name) {
			continue
		}
		uri := storage.Join(out, name)
		if err := storage.Remove(ctx, uri); err != nil {
			return removed, err
		}
		removed = append(removed, uri)
	}
	if storage.IsLocal(out) {
		more, err := sweepTemps(filepath.Join(out, storage.SuccessName))
		removed = append(removed, more...)
		if err != nil {
			return removed, err
		}
		more, err = sweepCreating(out)
		removed = append(removed, more...)
		return removed, err
	}
	return removed, nil
}

// listStagings returns the stagings beside out, by token: those of every
// output in out's directory, so that a night's run also removes the dead
// staging another night left (its lease decides, never its name).
func listStagings(ctx context.Context, out string) (map[string]string, error) {
	dir, _ := storage.Split(out)
	stagings := map[string]string{}
	if storage.IsLocal(out) {
		entries, err := os.ReadDir(dir)
		if errors.Is(err, os.ErrNotExist) {
			return stagings, nil
		}
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			if token, ok := stagingToken(e.Name()); ok && e.IsDir() {
				stagings[token] = filepath.Join(dir, e.Name())
			}
		}
		return stagings, nil
	}
	// Objects one and two levels below each staging: the lease, the report
	// and the shard list, and the staged shards.
	for _, glob := range []string{"/*", "/*/*"} {
		objs, err := storage.List(ctx, storage.Join(dir, ".*"+stagingInfix+"*")+glob)
		if err != nil {
			return nil, err
		}
		prefix := storage.Clean(dir) + "/"
		for _, o := range objs {
			name, _, _ := strings.Cut(strings.TrimPrefix(o, prefix), "/")
			if token, ok := stagingToken(name); ok {
				stagings[token] = storage.Join(dir, name)
			}
		}
	}
	return stagings, nil
}

// sweepTemps removes the temporaries of atomic writes of the local file
// path that no live process is writing.
func sweepTemps(path string) ([]string, error) {
	matches, err := filepath.Glob(filepath.Join(filepath.Dir(path), globEscape(storage.TempPrefix(path))+"*"))
	if err != nil {
		return nil, err
	}
	return removeDead(matches)
}

// sweepCreating removes, from the local directory dir, files that
// storage.CreateLocked began but never named (its process died in that
// moment): unlocked and older than leaseGrace. A file being created right
// now is younger, or locked.
func sweepCreating(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil
	}
	var removed []string
	for _, e := range entries {
		if !storage.IsCreating(e.Name()) && !strings.HasPrefix(e.Name(), "."+TempDirPrefix+"new-") {
			continue
		}
		p := filepath.Join(dir, e.Name())
		st, err := os.Lstat(p)
		if err != nil || time.Since(st.ModTime()) < leaseGrace {
			continue
		}
		lockPath := p
		if st.IsDir() {
			lockPath = filepath.Join(p, leaseName)
		} else if !st.Mode().IsRegular() {
			continue
		}
		if live, err := storage.IsLive(lockPath); err != nil || live {
			continue
		}
		if err := os.RemoveAll(p); err != nil {
			return removed, err
		}
		removed = append(removed, p)
	}
	return removed, nil
}

// sweepSpools removes upload spools and Beam temp directories of dead
// processes from the temp directory.
func sweepSpools() ([]string, error) {
	removed, _ := sweepCreating(os.TempDir())
	for _, prefix := range []string{storage.SpoolPrefix, TempDirPrefix} {
		matches, err := filepath.Glob(filepath.Join(os.TempDir(), prefix+"*"))
		if err != nil {
			return removed, err
		}
		more, err := removeDead(matches)
		removed = append(removed, more...)
		if err != nil {
			return removed, err
		}
	}
	return removed, nil
}

// removeDead removes the local files, and directories judged by their
// lock file, that no live process holds a flock on. Such files are locked
// from the moment they carry their name (storage.CreateLocked); a
// directory without its lock file is taken for dead only when older than
// leaseGrace (its maker may be about to lock it).
func removeDead(paths []string) ([]string, error) {
	var removed []string
	for _, p := range paths {
		st, err := os.Lstat(p)
		if err != nil {
			continue // gone meanwhile
		}
		lockPath := p
		if st.IsDir() {
			lockPath = filepath.Join(p, leaseName)
			if _, err := os.Stat(lockPath); err != nil && time.Since(st.ModTime()) < leaseGrace {
				continue
			}
		} else if !st.Mode().IsRegular() {
			continue // not a file a run makes: never opened, never removed
		}
		live, err := storage.IsLive(lockPath)
		if err != nil || live {
			continue
		}
		if err := os.RemoveAll(p); err != nil {
			return removed, err
		}
		removed = append(removed, p)
	}
	return removed, nil
}

// globEscape escapes the glob characters of a literal name.
func globEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// sweepNote describes what a sweep removed, for the log.
func sweepNote(removed []string) string {
	if len(removed) == 0 {
		return ""
	}
	return fmt.Sprintf("removed %d leftovers of dead runs (%s%s)", len(removed), removed[0], more(len(removed)-1))
}

// recoverReport writes, for a rerun of a published night, the report of
// the run that published it and died before writing its report: the
// report it held in its (now dead) staging, if its SHA-256 is the one the
// manifest names. A report already at Plan.Report is kept unless the
// plan may replace it (checkReport); what cannot be written is noted.
func (r *Run) recoverReport(ctx context.Context) {
	p := r.plan
	if p.Report == "" || !p.Dir {
		return
	}
	m, err := storage.ReadManifest(ctx, p.Output)
	if err != nil || m.ReportSHA256 == "" {
		return
	}
	stagings, err := listStagings(ctx, p.Output)
	if err != nil {
		return
	}
	for token, staging := range stagings {
		if staging != stagingName(p.Output, p.RunID, token) {
			continue // another output's, or another night's
		}
		if dead, err := stagingDead(ctx, staging); err != nil || !dead {
			continue
		}
		b, err := storage.ReadFile(ctx, storage.Join(staging, heldReport))
		if err != nil {
			continue
		}
		if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != m.ReportSHA256 {
			continue
		}
		if p.Report != "-" {
			if now, err := storage.ReadFile(ctx, p.Report); err == nil && bytes.Equal(now, b) {
				return
			}
			if err := checkReport(ctx, p); err != nil {
				r.note("the report of the run that published %s was not written: %v", p.Output, err)
				return
			}
		}
		if err := writeReport(ctx, p.Report, b, p.Stdout); err != nil {
			r.note("the report of the run that published %s was not written: %v", p.Output, err)
			return
		}
		if p.Report != "-" {
			r.note("wrote %s: the report of the run that published %s, which died before writing it", p.Report, p.Output)
		}
		return
	}
}
