package storage_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/smoothanon/smoothanon/storage"
)

// TestPutConditions: IfAbsent creates once; IfVersion replaces only the
// version read; a refused write changes nothing; the CRC-32C the writer
// computed is what the store keeps (where it keeps one).
func TestPutConditions(t *testing.T) {
	ctx := context.Background()
	forEachStore(t, func(t *testing.T, root string) {
		uri := storage.Join(root, "_SUCCESS")
		if err := storage.Put(ctx, uri, []byte("one"), storage.Cond{IfAbsent: true}); err != nil {
			t.Fatal(err)
		}
		err := storage.Put(ctx, uri, []byte("two"), storage.Cond{IfAbsent: true})
		if !errors.Is(err, storage.ErrConflict) {
			t.Fatalf("second IfAbsent: %v, want ErrConflict", err)
		}
		b, a, err := storage.ReadVersioned(ctx, uri)
		if err != nil || string(b) != "one" || a.Version == "" {
			t.Fatalf("read back %q %+v %v", b, a, err)
		}
		if err := storage.Put(ctx, uri, []byte("three"), storage.Cond{IfVersion: a.Version}); err != nil {
			t.Fatalf("IfVersion of the version read: %v", err)
		}
		if err := storage.Put(ctx, uri, []byte("four"), storage.Cond{IfVersion: a.Version}); !errors.Is(err, storage.ErrConflict) {
			t.Fatalf("IfVersion of a replaced version: %v, want ErrConflict", err)
		}
		b, a2, err := storage.ReadVersioned(ctx, uri)
		if err != nil || string(b) != "three" || a2.Version == a.Version {
			t.Fatalf("after the swap: %q %+v %v", b, a2, err)
		}
		st, err := storage.Stat(ctx, uri)
		if err != nil || st.Size != 5 || st.Version != a2.Version {
			t.Fatalf("Stat = %+v %v, want size 5 version %s", st, err, a2.Version)
		}
		w, err := storage.Create(ctx, storage.Join(root, "crc"))
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte("123456789"))
		if w.CRC32C() != 0xe3069283 || w.Size() != 9 {
			t.Fatalf("writer CRC %08x size %d", w.CRC32C(), w.Size())
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if st, err := storage.Stat(ctx, storage.Join(root, "crc")); err != nil || st.HasCRC32C && st.CRC32C != 0xe3069283 {
			t.Fatalf("stored CRC %+v %v", st, err)
		}
	})
}

// TestPutIfAbsentRace: of many concurrent IfAbsent writers exactly one wins.
func TestPutIfAbsentRace(t *testing.T) {
	ctx := context.Background()
	for _, store := range []string{"local", "gs", "s3"} {
		t.Run(store, func(t *testing.T) {
			uri := storage.Join(roots(t)[store](t), "claim")
			var wg sync.WaitGroup
			wins := make(chan int, 16)
			for i := range 16 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if err := storage.Put(ctx, uri, []byte{byte(i)}, storage.Cond{IfAbsent: true}); err == nil {
						wins <- i
					} else if !errors.Is(err, storage.ErrConflict) {
						t.Error(err)
					}
				}()
			}
			wg.Wait()
			close(wins)
			if n := len(wins); n != 1 {
				t.Fatalf("%d writers won, want 1", n)
			}
		})
	}
}
