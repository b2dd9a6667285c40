package transforms

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/util/jsonx"

	"github.com/smoothanon/smoothanon/solver"
)

func TestChunkWorkers(t *testing.T) {
	for _, c := range []struct {
		p    solver.Params
		want int
	}{
		{solver.Params{K: 8}, 0},
		{solver.Params{K: 8, Workers: 3}, 3},
		{solver.Params{K: 8, Start: solver.StartMondrian}, 1},
		{solver.Params{K: 8, Start: solver.StartMondrian, Workers: 2}, 2},
	} {
		if got := chunkWorkers(c.p); got != c.want {
			t.Errorf("chunkWorkers(workers %d, start %v) = %d, want %d", c.p.Workers, c.p.Start, got, c.want)
		}
	}
}

func TestSolveWeight(t *testing.T) {
	for _, c := range []struct {
		workers, procs int
		want           int64
	}{
		{0, 4, 4}, {1, 4, 1}, {3, 4, 3}, {8, 4, 4}, {-1, 2, 2}, {1, 1, 1},
	} {
		if got := solveWeight(c.workers, c.procs); got != c.want {
			t.Errorf("solveWeight(%d, %d) = %d, want %d", c.workers, c.procs, got, c.want)
		}
	}
}

// TestAcquireSolveCountsCores: a solve on every core waits while a
// one-core solve holds its core, whichever ran first in the process, and
// gets the cores once it is released.
func TestAcquireSolveCountsCores(t *testing.T) {
	ctx := context.Background()
	one, err := acquireSolve(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if rel, err := acquireSolve(short, 0); err == nil {
		rel()
		t.Fatal("a solve on every core started while a one-core solve held a core")
	}
	one()
	all, err := acquireSolve(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	all()
	if solveProcs >= 2 {
		a, _ := acquireSolve(ctx, 1)
		soon, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		b, err := acquireSolve(soon, 1)
		if err != nil {
			t.Fatalf("two one-core solves on %d cores: the second waited: %v", solveProcs, err)
		}
		a()
		b()
	}
}

// TestGatherChunk: a chunk's pieces are merged in sort-key order with the
// job's number of chunks; pieces that disagree on it are an error.
func TestGatherChunk(t *testing.T) {
	a := KeyedBlock{Rows: blockOf(testRow{"b", []uint32{1}}), Lead: []uint64{2}}
	b := KeyedBlock{Rows: blockOf(testRow{"a", []uint32{2}}), Lead: []uint64{1}}
	m, chunks, err := gatherChunk(iterOf([]ChunkBlock{{Block: a, Chunks: 3}, {Block: b, Chunks: 3}}))
	if err != nil || chunks != 3 || m.NumRows() != 2 || m.Users[0] != "a" || m.Users[1] != "b" {
		t.Fatalf("gathered %v, %d chunks, %v; want users a, b of 3 chunks", m, chunks, err)
	}
	if _, _, err := gatherChunk(iterOf([]ChunkBlock{{Block: a, Chunks: 3}, {Block: b, Chunks: 2}})); err == nil {
		t.Fatal("pieces stating 3 and 2 chunks gathered without error")
	}
}

// TestSolveFnSerializes: the runner rebuilds solveFn from the JSON in the
// job graph, so every field of solver.Params must survive the round trip
// (and be a type Beam's schema registry takes: no function). Each field is
// set to a distinct value; a field of a kind this test does not know fails
// it, so that a new solver setting is checked here too.
func TestSolveFnSerializes(t *testing.T) {
	var p solver.Params
	v := reflect.ValueOf(&p).Elem()
	for i := range v.NumField() {
		f, name := v.Field(i), v.Type().Field(i).Name
		switch f.Kind() {
		case reflect.Int, reflect.Int64:
			f.SetInt(int64(i + 1))
		case reflect.Slice:
			if f.Type().Elem().Kind() != reflect.Uint32 {
				t.Errorf("solver.Params.%s: slice of %s, teach this test to set it", name, f.Type().Elem())
				continue
			}
			f.Set(reflect.ValueOf([]uint32{uint32(i), uint32(i) + 7, 1 << 31}))
		default:
			t.Errorf("solver.Params.%s: kind %s, teach this test to set it", name, f.Kind())
		}
	}
	fn := solveFn{Solver: p, PoolShare: 0.25}
	data, err := jsonx.Marshal(&fn)
	if err != nil {
		t.Fatal(err)
	}
	var got solveFn
	if err := jsonx.Unmarshal(&got, data); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, fn) {
		t.Errorf("solveFn %s decodes as %+v, want %+v", data, got, fn)
	}
}
