package release

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"syscall"

	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/storage"
)

// The publish protocol, the same on a local disk and on a bucket:
//
//  1. The staged shards are moved (renamed on a disk, copied server-side
//     on a bucket) into the output under names carrying the run's token,
//     so two runs' shards never share a name.
//  2. The manifest listing exactly those shards is written with a
//     precondition: absent (no release there yet) or the version read of
//     the release it replaces (--overwrite). This is the claim: of runs
//     racing for one output, exactly one succeeds. Readers know a release
//     only through its manifest, so the output holds either the old
//     release or the new one, whole.
//  3. The loser removes the shards it moved in; the winner removes the
//     shards of the release it replaced (those its manifest listed).
//
// A single-file release is written beside its name (or spooled) and given
// the name under the same precondition (storage.Writer.Commit).

// stagedShards reads the job's list of staged shards and checks it
// against the store and the report's row count.
func stagedShards(ctx context.Context, staging string, users int64, long bool) ([]storage.Shard, error) {
	b, err := storage.ReadFile(ctx, StagedShardList(staging))
	if err != nil {
		return nil, fmt.Errorf("the job left no shard list: %w", err)
	}
	var shards []storage.Shard
	if err := json.Unmarshal(b, &shards); err != nil {
		return nil, fmt.Errorf("%s: %w", StagedShardList(staging), err)
	}
	if len(shards) == 0 {
		return nil, fmt.Errorf("%s: no shards", StagedShardList(staging))
	}
	var total int64
	for _, s := range shards {
		if s.Users < 0 || !long && s.Users != 0 || long && s.Rows > 0 && s.Users == 0 {
			return nil, fmt.Errorf("%s: shard %q has %d users in %s form", StagedShardList(staging), s.Name, s.Users, shapeOf(long))
		}
		if !stagedShardPattern.MatchString(s.Name) {
			return nil, fmt.Errorf("%s: bad shard name %q", StagedShardList(staging), s.Name)
		}
		uri := storage.Join(StagedShards(staging), s.Name)
		a, err := storage.Stat(ctx, uri)
		if err != nil {
			return nil, err
		}
		if err := checkShard(uri, s, a); err != nil {
			return nil, err
		}
		total += shardUsers(s, long)
	}
	if total != users {
		return nil, fmt.Errorf("the staged shards hold %d users, the report %d", total, users)
	}
	return shards, nil
}

// shardUsers is the users of shard s: its Users in long form, else its
// rows.
func shardUsers(s storage.Shard, long bool) int64 {
	if long {
		return s.Users
	}
	return s.Rows
}

// checkShard compares a shard's stored attributes with what was recorded
// of it.
func checkShard(uri string, want storage.Shard, got storage.Attrs) error {
	if got.Size != want.Size {
		return &storage.Error{URI: uri, Err: fmt.Errorf("size %d, the job wrote %d", got.Size, want.Size)}
	}
	if want.CRC32C != nil && got.HasCRC32C && got.CRC32C != *want.CRC32C {
		return &storage.Error{URI: uri, Err: fmt.Errorf("CRC32C %#08x, the job wrote %#08x", got.CRC32C, *want.CRC32C)}
	}
	return nil
}

// publishDir publishes the staged shards at the output. reportSHA is the
// SHA-256 of the report the manifest vouches for.
func (r *Run) publishDir(ctx context.Context, shards []storage.Shard, reportSHA string) (*storage.Manifest, error) {
	out := r.plan.Output
	st, err := inspectDir(ctx, out)
	if err != nil {
		return nil, err
	}
	if st.exists && !st.isDir {
		return nil, &LostRaceError{Output: out} // a file took the name meanwhile
	}
	if name, bad := st.badListing(); bad {
		return nil, fmt.Errorf("--output %s: its _SUCCESS now lists %q, which is not a shard's name; nothing published", out, name)
	}
	cond := storage.Cond{IfAbsent: true}
	if st.manifest != nil {
		if st.manifest.RunID == r.plan.RunID || !r.plan.Overwrite {
			return nil, &LostRaceError{Output: out, Winner: st.manifest.RunID}
		}
		cond = storage.Cond{IfVersion: st.version}
	}
	if f := st.foreign(); len(f) > 0 {
		return nil, fmt.Errorf("--output %s gained files that are not a release's while the run ran (%s%s); nothing published", out, f[0], more(len(f)-1))
	}
	if err := storage.MkdirAll(out); err != nil {
		return nil, err
	}
	m := &storage.Manifest{Version: storage.ListManifestVersion, RunID: r.plan.RunID, ReportSHA256: reportSHA,
		InputRows: r.plan.InputRows, UserIDs: r.userIDs(), KeyFingerprint: r.fingerprint()}
	if r.plan.long() {
		m.Version, m.Shape = storage.ManifestVersion, storage.ShapeLong
	}
	var moved []string
	undo := func() {
		for _, uri := range moved {
			if r.storeDead() || storage.Remove(context.WithoutCancel(ctx), uri) != nil {
				return // what is left is the next run's to sweep
			}
		}
	}
	for _, s := range shards {
		if err := ctx.Err(); err != nil {
			undo()
			return nil, r.stopped(err)
		}
		src := storage.Join(StagedShards(r.staging), s.Name)
		s.Name = publishedName(s.Name, r.token)
		dst := storage.Join(out, s.Name)
		if err := move(ctx, src, dst); err != nil {
			r.noteStore(err)
			undo()
			return nil, err
		}
		moved = append(moved, dst)
		a, err := storage.Stat(ctx, dst)
		if err == nil {
			err = checkShard(dst, s, a)
		}
		if err != nil {
			undo()
			return nil, err
		}
		m.Shards = append(m.Shards, s)
		m.TotalRows += s.Rows
		if r.plan.long() {
			m.Users += s.Users
		}
	}
	r.fault(StageCopied)
	b, err := json.MarshalIndent(m, "", "  ")
	if err == nil {
		err = ctx.Err() // a signal before the claim stops the publish
	}
	if err != nil {
		undo()
		return nil, r.stopped(err)
	}
	// The claim is not interrupted half-way: a write cancelled in flight
	// may still have reached the store.
	err = storage.Put(context.WithoutCancel(ctx), storage.Join(out, storage.SuccessName), append(b, '\n'), cond)
	if errors.Is(err, storage.ErrConflict) {
		undo()
		winner := ""
		if now, err := storage.ReadManifest(context.WithoutCancel(ctx), out); err == nil {
			winner = now.RunID
		}
		return nil, &LostRaceError{Output: out, Winner: winner}
	}
	if err != nil {
		r.noteStore(err)
		undo()
		return nil, err
	}
	if st.manifest != nil {
		for _, old := range st.manifest.Shards {
			if !st.listed(old.Name) {
				continue // never a name that is not a shard's (dirState.listed)
			}
			if !slices.ContainsFunc(m.Shards, func(s storage.Shard) bool { return s.Name == old.Name }) {
				if err := storage.Remove(context.WithoutCancel(ctx), storage.Join(out, old.Name)); err != nil {
					r.note("the replaced release's shard %s could not be removed: %v", old.Name, err)
				}
			}
		}
	}
	return m, nil
}

// move gives the staged file src the name dst in the output: a rename on
// a local disk (a copy across file systems), a server-side copy on a
// bucket (the staged object goes with the staging).
func move(ctx context.Context, src, dst string) error {
	if !storage.IsLocal(src) {
		return storage.Copy(ctx, src, dst)
	}
	err := os.Rename(src, dst)
	if errors.Is(err, syscall.EXDEV) {
		b, rerr := os.ReadFile(src)
		if rerr != nil {
			return rerr
		}
		return storage.Put(ctx, dst, b, storage.Cond{IfAbsent: true})
	}
	return err
}

// publishFile writes the single-file release rel at the output, its rows
// ordered by user id, its features named by v (nil: ids), with md as its
// Parquet key/value metadata.
func (r *Run) publishFile(ctx context.Context, rel *matrix.Matrix, v *matrix.Vocab, md map[string]string) error {
	out := r.plan.Output
	st, err := inspectFile(ctx, out)
	if err != nil {
		return err
	}
	cond := storage.Cond{IfAbsent: true}
	if st.exists {
		if !r.plan.Overwrite || !st.release {
			return &LostRaceError{Output: out}
		}
		cond = storage.Cond{IfVersion: st.version}
	}
	if storage.IsLocal(out) {
		if err := storage.MkdirAll(dirOf(out)); err != nil {
			return err
		}
	}
	w, err := matrix.Create(out, matrix.WriterOptions{Metadata: md, Vocab: v})
	if err != nil {
		return err
	}
	sorted := rel.SortedByUser()
	for i, u := range sorted.Users {
		if err := w.Write(u, sorted.Row(i)); err != nil {
			w.Abort()
			return err
		}
		if i%4096 == 0 && ctx.Err() != nil {
			w.Abort()
			return r.stopped(ctx.Err())
		}
	}
	r.fault(StageCopied)
	if err := ctx.Err(); err != nil {
		w.Abort()
		return r.stopped(err)
	}
	err = w.Commit(cond)
	if errors.Is(err, storage.ErrConflict) {
		return &LostRaceError{Output: out}
	}
	return err
}

func dirOf(path string) string {
	d, _ := storage.Split(path)
	return d
}
