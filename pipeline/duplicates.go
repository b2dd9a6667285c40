package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/pseudonym"
	"github.com/smoothanon/smoothanon/storage"
	"github.com/smoothanon/smoothanon/transforms"
)

// errFound stops the scan of locateDuplicates.
var errFound = errors.New("found")

// locateDuplicates turns the repeated user ids a job found (as it saw
// them: pseudonyms under key, or the ids) into an error naming the input
// file and row of the first one's two occurrences, without the id. It
// reads the input again (its files, of layout lay), on this failure path only.
func locateDuplicates(ctx context.Context, staging string, files []string, lay matrix.Layout, key *pseudonym.Key) error {
	generic := errors.New("the input repeats user ids (merge repeated ids before anonymizing, e.g. with smoothanon import --dedupe union)")
	b, err := storage.ReadFile(ctx, transforms.StagedDuplicates(staging))
	var ids []string
	if err != nil || json.Unmarshal(b, &ids) != nil || len(ids) == 0 {
		return generic
	}
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	var mapper *pseudonym.Mapper
	if key != nil {
		mapper = pseudonym.NewMapper(*key)
	}
	type place struct {
		file string
		row  int64
	}
	seen := map[string]place{}
	var found error
	for _, f := range files {
		pf, err := matrix.OpenFileAs(f, lay)
		if err != nil {
			return generic
		}
		var row int64
		err = pf.ReadAll(func(user string, _ []uint32) error {
			defer func() { row++ }()
			id := user
			if mapper != nil {
				id = mapper.ID(user)
			}
			if !want[id] {
				return nil
			}
			if first, ok := seen[id]; ok {
				where := fmt.Sprintf("%s row %d", first.file, first.row)
				if first.file == f {
					where = fmt.Sprintf("row %d", first.row)
				}
				found = fmt.Errorf("%s: row %d: user id repeats %s (merge repeats before anonymizing, e.g. with smoothanon import --dedupe union)", f, row, where)
				return errFound
			}
			seen[id] = place{f, row}
			return ctx.Err()
		})
		pf.Close()
		if found != nil {
			return found
		}
		if err != nil {
			return generic
		}
	}
	return generic
}
