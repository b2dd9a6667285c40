package release

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/smoothanon/smoothanon/storage"
)

// TestStagedShardsUsers: the staged shards' users must add up to the
// report's; a long-form shard with rows names its users, a list-form
// shard names none (its rows are its users).
func TestStagedShardsUsers(t *testing.T) {
	ctx := context.Background()
	staging := t.TempDir()
	if err := os.MkdirAll(StagedShards(staging), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"part-00000-of-00002.parquet", "part-00001-of-00002.parquet"} {
		if err := os.WriteFile(filepath.Join(StagedShards(staging), name), []byte("xy"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	shard := func(i int, rows, users int64) storage.Shard {
		return storage.Shard{Name: []string{"part-00000-of-00002.parquet", "part-00001-of-00002.parquet"}[i], Size: 2, Rows: rows, Users: users}
	}
	for _, c := range []struct {
		name   string
		shards []storage.Shard
		users  int64
		long   bool
		err    string
	}{
		{"list", []storage.Shard{shard(0, 3, 0), shard(1, 4, 0)}, 7, false, ""},
		{"list rows short", []storage.Shard{shard(0, 3, 0), shard(1, 4, 0)}, 8, false, "hold 7 users, the report 8"},
		{"list with users", []storage.Shard{shard(0, 3, 3), shard(1, 4, 0)}, 7, false, "has 3 users in list form"},
		{"long", []storage.Shard{shard(0, 9, 3), shard(1, 0, 2)}, 5, true, ""},
		{"long by rows", []storage.Shard{shard(0, 9, 3), shard(1, 0, 2)}, 9, true, "hold 5 users, the report 9"},
		{"long rows without users", []storage.Shard{shard(0, 9, 0), shard(1, 0, 5)}, 5, true, "has 0 users in long form"},
		{"negative users", []storage.Shard{shard(0, 9, 7), shard(1, 0, -2)}, 5, true, "has -2 users"},
	} {
		b, _ := json.Marshal(c.shards)
		if err := os.WriteFile(StagedShardList(staging), b, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := stagedShards(ctx, staging, c.users, c.long)
		if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%s: %v, want %q", c.name, err, c.err)
		}
	}
}
