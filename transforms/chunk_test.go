package transforms

import (
	"strings"
	"testing"
)

// TestBoundsRefusedReachEveryReader: with fewer than K users the bounds
// stage does not fail on its own; it emits the refusal, and every reader of
// the bounds (the cut, and sharpen's) fails with it as an input error, so
// the job's error does not depend on which stage a runner runs first.
func TestBoundsRefusedReachEveryReader(t *testing.T) {
	fn := &boundsFn{ChunkSize: 10, K: 4}
	var got []Bounds
	fn.ProcessElement(nil, func(*[]byte) bool { return false }, 3, func(b Bounds) { got = append(got, b) })
	if len(got) != 1 || got[0].Refused == "" {
		t.Fatalf("3 users, k=4: bounds %+v; want one refusal", got)
	}
	if enc, err := encBounds(got[0]); err != nil {
		t.Fatal(err)
	} else if dec, err := decBounds(enc); err != nil || dec.Refused != got[0].Refused {
		t.Fatalf("the refusal through the coder: %+v, %v", dec, err)
	}
	one := func(b Bounds) func(*Bounds) bool {
		read := false
		return func(out *Bounds) bool {
			if read {
				return false
			}
			read, *out = true, b
			return true
		}
	}
	want := "input has 3 users, fewer than k=4"
	var c *cutter
	if err := readCutter(&c, one(got[0])); err == nil || c != nil {
		t.Fatalf("readCutter on a refusal: %v, cutter %v; want an error and no cutter", err, c)
	} else if line, ok := JobInputError(err); !ok || !strings.HasPrefix(line, want) {
		t.Errorf("readCutter: %v; want an input error starting %q", err, want)
	}
	if _, err := readSharpenCutter(&c, one(got[0])); err == nil {
		t.Errorf("sharpen's reader accepted a refusal")
	} else if line, ok := JobInputError(err); !ok || !strings.HasPrefix(line, want) {
		t.Errorf("sharpen's reader: %v; want an input error starting %q", err, want)
	}
	// With K users there are bounds and no refusal.
	got = nil
	fn.ProcessElement(nil, func(*[]byte) bool { return false }, 4, func(b Bounds) { got = append(got, b) })
	if len(got) != 1 || got[0].Refused != "" {
		t.Fatalf("4 users, k=4: bounds %+v; want bounds without a refusal", got)
	}
	if err := readCutter(&c, one(got[0])); err != nil || c == nil {
		t.Errorf("readCutter on bounds: %v", err)
	}
}
