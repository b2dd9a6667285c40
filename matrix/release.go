package matrix

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/smoothanon/smoothanon/storage"
)

// ErrShardMismatch marks a release file that is not what the release's
// _SUCCESS manifest lists: missing, or of another size, row count or
// CRC-32C, or carrying another key fingerprint or user id mode.
var ErrShardMismatch = errors.New("shard does not match " + storage.SuccessName)

// castagnoli is the CRC-32C table, the checksum the manifest and the
// object stores keep.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ReleaseOptions control OpenRelease and ReadRelease.
type ReleaseOptions struct {
	// VerifyChecksums reads once, sequentially, every shard whose manifest
	// entry has a CRC-32C but whose store keeps none (local files, S3
	// objects uploaded without one) and compares the CRC-32C of its bytes.
	// Optional; default false: such shards are checked by size and rows
	// only. Shards whose store keeps a CRC-32C (GCS always) are compared
	// by it either way, without reading their data.
	VerifyChecksums bool
}

// Release is a published release, its files checked against its
// manifest by OpenRelease.
type Release struct {
	// Spec names the release: its directory, or its single file.
	Spec string
	// Manifest is the directory's _SUCCESS; nil for a single-file release.
	Manifest *storage.Manifest
	// Files are the release's files: the shards the manifest lists, in its
	// order, or the single file.
	Files []string
	// Rows is the number of rows of all files, by their footers: in long
	// form, the released pairs.
	Rows int64
	// Shape is how the files lay the users out: ShapeList, a row per
	// user, or ShapeLong, a row per released (user, feature) pair with
	// each user's pairs on consecutive rows, and users released without
	// features on no row (Read gives them no row either).
	Shape Shape
	// Users is the users the release holds, those on no row included:
	// the manifest's (storage.Manifest.ReleasedUsers), or for a single
	// file in list form its rows; 0 when unknown (a single file in long
	// form).
	Users int64
	// KeyFingerprint identifies the pseudonym key the ids were made with
	// (pseudonym.Key.Fingerprint): the manifest's key_fingerprint, or the
	// single file's MetaKeyFingerprint metadata; "" when the release
	// records none (kept ids, or a release older than fingerprints).
	// Releases with one fingerprint join by user id.
	KeyFingerprint string
	// UserIDs is how the release names its users: "pseudonym" or "keep".
	// It is the manifest's user_ids, else the files' MetaUserIDs mark
	// (files without the mark keep their ids).
	UserIDs string
	// Sensitive is the sensitive rule the release records (its files'
	// MetaSensitive value, the same on every shard); "" for a release made
	// without a sensitive list.
	Sensitive string
	// Values is what the release's features are: ValuesIDs, or names
	// (ValuesStrings, ValuesIntegers) that Read maps through Vocab.
	Values Values
	// Vocab is the vocabulary Read reads named features through: set it
	// before Read to read them as another's ids (a growing one gains the
	// names it lacks). When nil, Read makes a growing one, ids in order of
	// first appearance, and leaves it here.
	Vocab *Vocab

	// sizes and rows are what each file must still have when it is read.
	sizes, rows []int64
}

// OpenRelease checks the release spec names and returns it. A release is
// one directory holding _SUCCESS, or one Parquet file (a single-file
// release, with or without the release marker MetaRelease); local or a
// URI. Refused: a glob or a comma list (name the release directory, not
// its shards), a directory without _SUCCESS (an interrupted publish,
// storage.ErrNotRelease), a file in a directory holding _SUCCESS (one
// shard of a release), and a local path that is not a regular file or a
// directory.
//
// Every shard the manifest lists is checked, without reading its data:
// it must exist, have the manifest's size and (by its footer) rows, and,
// when both the manifest (version 2) and the store have one, the same
// CRC-32C; with opts.VerifyChecksums, shards whose store keeps no CRC-32C
// are read to compare theirs. Every file's key fingerprint and user id
// mark, where it has one, must agree with the manifest's (or, without a
// manifest entry, with the other files'). A failed check is an error
// naming the file and both values, matching ErrShardMismatch.
func OpenRelease(spec string, opts ReleaseOptions) (*Release, error) {
	ctx := context.Background()
	if spec == "" {
		return nil, errors.New("no release named")
	}
	if strings.Contains(spec, ",") || storage.HasGlob(spec) {
		return nil, fmt.Errorf("%s: a glob or list is not a release: name the release directory, not its shards", spec)
	}
	isDir, err := releaseKind(ctx, spec)
	if err != nil {
		return nil, err
	}
	if !isDir {
		return openFileRelease(ctx, spec)
	}
	m, err := storage.ReadManifest(ctx, spec)
	if err != nil {
		return nil, err
	}
	r := &Release{Spec: spec, Manifest: m, UserIDs: m.UserIDs, KeyFingerprint: m.KeyFingerprint,
		Shape: ShapeList, Users: m.ReleasedUsers()}
	if m.Shape == storage.ShapeLong {
		r.Shape = ShapeLong
	}
	var total, users int64
	seen := map[string]bool{}
	for _, s := range m.Shards {
		if s.Name == "" || s.Name == "." || s.Name == ".." || strings.ContainsAny(s.Name, `/\`) || seen[s.Name] {
			return nil, &FileError{Path: storage.Join(spec, storage.SuccessName), Row: -1,
				Err: fmt.Errorf("bad manifest: shard %q is not a file of the release directory, or is listed twice", s.Name)}
		}
		seen[s.Name] = true
		total += s.Rows
		users += s.Users
	}
	if total != m.TotalRows {
		return nil, &FileError{Path: storage.Join(spec, storage.SuccessName), Row: -1,
			Err: fmt.Errorf("bad manifest: %d shards with %d rows, total_rows %d", len(m.Shards), total, m.TotalRows)}
	}
	if r.Shape == ShapeLong && users != m.Users {
		return nil, &FileError{Path: storage.Join(spec, storage.SuccessName), Row: -1,
			Err: fmt.Errorf("bad manifest: %d shards with %d users, users %d", len(m.Shards), users, m.Users)}
	}
	marks := markCheck{fingerprint: m.KeyFingerprint, userIDs: m.UserIDs}
	for _, s := range m.Shards {
		path := storage.Join(spec, s.Name)
		if err := r.checkShard(ctx, path, s, opts, &marks); err != nil {
			return nil, err
		}
	}
	r.UserIDs, r.Sensitive = marks.userIDs, marks.sensitive
	return r, nil
}

// releaseKind says whether spec names a directory (or a prefix with
// objects below it) rather than a file.
func releaseKind(ctx context.Context, spec string) (isDir bool, err error) {
	if storage.IsLocal(spec) {
		st, err := os.Stat(spec)
		if err != nil {
			return false, &FileError{Path: spec, Row: -1, Err: errors.Unwrap(err)}
		}
		return st.IsDir(), nil // OpenFile refuses what is not a regular file
	}
	_, err = storage.Stat(ctx, spec)
	if err == nil || !errors.Is(err, storage.ErrNotExist) {
		return false, err
	}
	// No such object: a directory if it holds a manifest or any object
	// (then ReadManifest says that it is not a published release).
	if ok, merr := storage.Exists(ctx, storage.Join(spec, storage.SuccessName)); ok || merr != nil {
		return ok, merr
	}
	if below, lerr := storage.List(ctx, storage.Clean(spec)+"/*"); lerr == nil && len(below) > 0 {
		return true, nil
	}
	return false, err
}

// openFileRelease is OpenRelease of a single file.
func openFileRelease(ctx context.Context, spec string) (*Release, error) {
	dir, _ := storage.Split(spec)
	if rel, err := holdsRelease(ctx, dir); err != nil {
		return nil, err
	} else if rel {
		return nil, fmt.Errorf("%s: is a shard of the release %s (it holds %s): name the release directory, not its shards", spec, dir, storage.SuccessName)
	}
	f, err := OpenFile(spec)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := &Release{Spec: spec, Files: []string{spec}, Rows: f.NumRows(), KeyFingerprint: f.KeyFingerprint(),
		UserIDs: userIDsMark(f), Sensitive: sensitiveMark(f), Shape: f.Layout().Shape, Values: f.Layout().Values, sizes: []int64{f.Size()}, rows: []int64{f.NumRows()}}
	if r.Shape == ShapeList {
		r.Users = r.Rows
	}
	return r, nil
}

// sensitiveMark is f's MetaSensitive value ("" without one).
func sensitiveMark(f *File) string {
	v, _ := f.Metadata(MetaSensitive)
	return v
}

// userIDsMark is f's MetaUserIDs value: files without one keep their ids.
func userIDsMark(f *File) string {
	if v, ok := f.Metadata(MetaUserIDs); ok && v != "" {
		return v
	}
	return "keep"
}

// markCheck holds the key fingerprint and user id mode every file of a
// release must agree with.
type markCheck struct {
	fingerprint string // the manifest's
	userIDs     string
	idsFrom     string // the file that set userIDs; "" for the manifest
	sensitive   string // the first file's MetaSensitive
	files       int    // files checked
}

// mismatch is the error for a file of a release that is not as its
// manifest says.
func mismatch(path, format string, args ...any) error {
	return &FileError{Path: path, Row: -1, Err: &refusal{ErrShardMismatch, fmt.Sprintf(format, args...)}}
}

// checkShard checks the shard s of the manifest, at path, and adds it to r.
func (r *Release) checkShard(ctx context.Context, path string, s storage.Shard, opts ReleaseOptions, marks *markCheck) error {
	a, err := storage.Stat(ctx, path)
	if errors.Is(err, fs.ErrNotExist) {
		return mismatch(path, "shard listed in %s is missing", storage.SuccessName)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return &FileError{Path: path, Row: -1, Err: pe.Err}
	}
	if err != nil {
		return err
	}
	if a.Size != s.Size {
		return mismatch(path, "size %d, %s says %d", a.Size, storage.SuccessName, s.Size)
	}
	f, err := OpenFile(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if f.Size() != s.Size {
		return mismatch(path, "size %d, %s says %d", f.Size(), storage.SuccessName, s.Size)
	}
	if f.NumRows() != s.Rows {
		return mismatch(path, "rows %d, %s says %d", f.NumRows(), storage.SuccessName, s.Rows)
	}
	if got := f.Layout().Shape; got != r.Shape {
		return mismatch(path, "%s form, %s says %s", got, storage.SuccessName, r.Shape)
	}
	if got := f.Layout().Values; r.Values == ValuesAuto {
		r.Values = got
	} else if got != r.Values {
		return mismatch(path, "features are %v, %s's are %v", got, r.Files[0], r.Values)
	}
	if s.CRC32C != nil && (a.HasCRC32C || opts.VerifyChecksums) {
		crc := a.CRC32C
		if !a.HasCRC32C {
			if crc, err = f.crc32c(); err != nil {
				return err
			}
		}
		if crc != *s.CRC32C {
			return mismatch(path, "CRC32C 0x%08x, %s says 0x%08x", crc, storage.SuccessName, *s.CRC32C)
		}
	}
	if err := marks.check(path, f); err != nil {
		return err
	}
	r.Files = append(r.Files, path)
	r.sizes = append(r.sizes, s.Size)
	r.rows = append(r.rows, s.Rows)
	r.Rows += s.Rows
	return nil
}

// check compares f's key fingerprint and user id mark with the release's;
// the first file sets the user id mode when the manifest has none.
func (c *markCheck) check(path string, f *File) error {
	if fp := f.KeyFingerprint(); fp != "" && fp != c.fingerprint {
		return mismatch(path, "key fingerprint %s, %s says %s", fp, storage.SuccessName, orNone(c.fingerprint))
	}
	c.files++
	if s := sensitiveMark(f); c.files == 1 {
		c.sensitive = s
	} else if s != c.sensitive {
		return mismatch(path, "sensitive record %q, the release's first shard has %q", s, c.sensitive)
	}
	ids := userIDsMark(f)
	switch {
	case c.userIDs == "":
		c.userIDs, c.idsFrom = ids, path
	case ids == c.userIDs:
	case c.idsFrom == "":
		return mismatch(path, "user ids %s, %s says %s", ids, storage.SuccessName, c.userIDs)
	default:
		return mismatch(path, "user ids %s, %s has %s", ids, c.idsFrom, c.userIDs)
	}
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// crc32c reads the whole file sequentially and returns its CRC-32C.
func (pf *File) crc32c() (uint32, error) {
	h := crc32.New(castagnoli)
	r := io.NewSectionReader(pf.f, 0, pf.size)
	if _, err := io.CopyBuffer(h, r, make([]byte, 4<<20)); err != nil {
		return 0, &FileError{Path: pf.Path, Row: -1, Err: err}
	}
	return h.Sum32(), nil
}

// Read streams every user of every file of the release to fn, file by
// file in Files order: in list form a call per row, in long form a call
// per run of consecutive rows of one user, with their features (users
// without features have no row, so no call). A user whose rows are not
// consecutive comes twice, as a repeated id would in list form. Each
// file is opened again and must still have the size and rows it was
// checked with.
func (r *Release) Read(fn RowFunc) error {
	for i, path := range r.Files {
		f, err := OpenFile(path)
		if err != nil {
			return err
		}
		if f.Size() != r.sizes[i] || f.NumRows() != r.rows[i] {
			f.Close()
			if r.Manifest != nil {
				if f.Size() != r.sizes[i] {
					return mismatch(path, "size %d, %s says %d", f.Size(), storage.SuccessName, r.sizes[i])
				}
				return mismatch(path, "rows %d, %s says %d", f.NumRows(), storage.SuccessName, r.rows[i])
			}
			return &FileError{Path: path, Row: -1, Err: fmt.Errorf("changed since the release was opened: size %d, rows %d; then %d, %d",
				f.Size(), f.NumRows(), r.sizes[i], r.rows[i])}
		}
		if r.Values.Named() {
			if r.Vocab == nil {
				r.Vocab = NewGrowingVocab(r.Values)
			}
			err = f.UseVocab(r.Vocab)
		}
		if err != nil {
			f.Close()
			return err
		}
		if r.Shape == ShapeLong {
			err = readRuns(f, fn)
		} else {
			err = f.ReadAll(fn)
		}
		f.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// ReadRelease opens the release spec (OpenRelease: every shard checked
// against the manifest) and streams its rows to fn (Release.Read).
func ReadRelease(spec string, opts ReleaseOptions, fn RowFunc) error {
	r, err := OpenRelease(spec, opts)
	if err != nil {
		return err
	}
	return r.Read(fn)
}

// readRuns streams the long-form file f to fn as one row per run of
// consecutive rows of one user, its features sorted and free of repeats.
func readRuns(f *File, fn RowFunc) error {
	var user string
	var feats []uint32
	started := false
	flush := func() error {
		if !started {
			return nil
		}
		if !isStrictlySorted(feats) {
			sortUnique(&feats)
		}
		return fn(user, feats)
	}
	err := f.ReadAll(func(u string, fs []uint32) error {
		if started && u == user {
			feats = append(feats, fs...)
			return nil
		}
		if err := flush(); err != nil {
			return err
		}
		user, feats, started = u, append(feats[:0], fs...), true
		return nil
	})
	if err != nil {
		return err
	}
	return flush()
}
