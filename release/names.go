package release

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"

	"github.com/smoothanon/smoothanon/storage"
)

// The names a run gives the files it makes. Every file a run creates
// beside or inside its output carries the run's token (12 random hex
// digits, new for every run), so a sweep can tell whose it is; nothing
// without one of these names is ever deleted by a run.
const (
	// stagingInfix: a directory release's staging is a sibling of the
	// output, "." + base + stagingInfix + runID + "-" + token.
	stagingInfix = ".staging-"
	// leaseName is the staging's lease: a flocked file on a local disk, an
	// object with an expiry on a bucket.
	leaseName = "_LEASE"
	// stagedDir holds the job's shards, part-NNNNN-of-NNNNN.parquet.
	stagedDir = "release"
	// stagedReport is the job's RunReport (protojson).
	stagedReport = "report.json"
	// heldReport is the report as the claim names it (EncodeReport,
	// published true), written into the staging before the claim, so that
	// a rerun can write the report of a run that died after its claim.
	heldReport = "published-report.json"
	// stagedShards lists the staged shards with their rows, sizes and
	// CRC-32Cs (JSON []storage.Shard), as the job wrote them.
	stagedList = "shards.json"
	// stagedVocab is the input's feature vocabulary when its features are
	// names (matrix.Vocab.WriteTo).
	stagedVocab = "vocab.bin"
	// pendingInfix: a drawn key waits beside its --pseudonym_key_out path,
	// "." + base + pendingInfix + token, until the release is published.
	pendingInfix = ".pending-"
	tokenBytes   = 6
)

// StagedShards is the directory of a staging where the job writes the
// release's shards.
func StagedShards(staging string) string { return storage.Join(staging, stagedDir) }

// StagedReport is where the job writes its RunReport.
func StagedReport(staging string) string { return storage.Join(staging, stagedReport) }

// StagedShardList is where the job writes the list of shards it wrote.
func StagedShardList(staging string) string { return storage.Join(staging, stagedList) }

// StagedVocab is where the job writes the vocabulary of the input's
// named features.
func StagedVocab(staging string) string { return storage.Join(staging, stagedVocab) }

// newToken draws a run token.
func newToken() string {
	b := make([]byte, tokenBytes)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on supported systems
	}
	return hex.EncodeToString(b)
}

// runIDPattern is the alphabet of run ids: they become parts of file and
// object names, so nothing that could climb out of a directory, split a
// name or need escaping.
var runIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// CheckRunID refuses a run id outside [A-Za-z0-9._-] (first character a
// letter or digit, at most 128 characters).
func CheckRunID(id string) error {
	if !runIDPattern.MatchString(id) {
		return fmt.Errorf("run id %q: use 1-128 of A-Z a-z 0-9 . _ - starting with a letter or digit", id)
	}
	return nil
}

var (
	// stagedShardPattern matches the job's shard names.
	stagedShardPattern = regexp.MustCompile(`^part-\d{5}-of-\d{5}\.parquet$`)
	// tokenShardPattern matches a published shard; the group is the
	// token of the run that copied it.
	tokenShardPattern = regexp.MustCompile(`^part-\d{5}-of-\d{5}-([0-9a-f]{12})\.parquet$`)
	// stagingPattern matches a staging's base name after "."+output base.
	stagingPattern = regexp.MustCompile(`^(.+)-([0-9a-f]{12})$`)
)

// publishedName is the name a staged shard gets in the output.
func publishedName(staged, token string) string {
	return strings.TrimSuffix(staged, ".parquet") + "-" + token + ".parquet"
}

// shardToken returns the token of a published shard's base name.
func shardToken(base string) (string, bool) {
	m := tokenShardPattern.FindStringSubmatch(base)
	if m == nil {
		return "", false
	}
	return m[1], true
}

// stagingName is the staging of a run of runID with token, beside out.
func stagingName(out, runID, token string) string {
	dir, base := storage.Split(out)
	return storage.Join(dir, "."+base+stagingInfix+runID+"-"+token)
}

// stagingToken returns the token of a staging's base name, of any output
// (".<output base>.staging-<run id>-<token>").
func stagingToken(name string) (string, bool) {
	if !strings.HasPrefix(name, ".") {
		return "", false
	}
	i := strings.LastIndex(name, stagingInfix)
	if i <= 1 {
		return "", false
	}
	m := stagingPattern.FindStringSubmatch(name[i+len(stagingInfix):])
	if m == nil {
		return "", false
	}
	return m[2], true
}

// pendingName is where a drawn key waits for its release's publish.
func pendingName(keyOut, token string) string {
	dir, base := storage.Split(keyOut)
	return storage.Join(dir, "."+base+pendingInfix+token)
}

// StagedName is the job's name of a published shard: its name without
// the run's token (part-00000-of-00002-<token>.parquet →
// part-00000-of-00002.parquet). Releases of equal rows have equal shards
// under equal StagedNames, whichever run published them.
func StagedName(published string) string {
	if token, ok := shardToken(published); ok {
		return strings.TrimSuffix(published, "-"+token+".parquet") + ".parquet"
	}
	return published
}
