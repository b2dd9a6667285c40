package lsh

import (
	"bytes"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestSignDeterministicAndOrderFree(t *testing.T) {
	h1, h2 := New(42), New(42)
	row := []uint32{5, 1, 99, 1 << 31, 7}
	a := h1.Sign(row)
	rev := slices.Clone(row)
	slices.Reverse(rev)
	if b := h2.Sign(rev); a != b {
		t.Fatalf("same seed, same set: %v != %v", a, b)
	}
	if b := h1.Sign(append(row, 5, 5)); a != b {
		t.Fatalf("repeats changed the signature")
	}
	if c := New(43).Sign(row); c == a {
		t.Fatalf("different seeds gave the same signature %v", c)
	}
	if New(7).Sign(nil) != Empty || New(7).Sign([]uint32{}) != Empty {
		t.Fatal("empty row must get the Empty signature")
	}
}

func TestSignGolden(t *testing.T) {
	got := New(1).Sign([]uint32{3, 10, 12345})
	want := Signature{}
	for j := range want {
		want[j] = math.MaxUint64
		for _, f := range []uint32{3, 10, 12345} {
			want[j] = min(want[j], New(1).Hash(j, f))
		}
	}
	if got != want {
		t.Fatalf("Sign %v, per-hash minimum %v", got, want)
	}
	// Fixed value: changing the hash family changes every release's chunks.
	if got[0] != 0x1f5030b347bb7544 {
		t.Errorf("golden Sign(seed 1)[0] = %#x", got[0])
	}
}

func TestAgreementEstimatesJaccard(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, j := range []float64{0, 0.2, 0.5, 0.8, 1} {
		// Two sets of 200 ids sharing a fraction so that Jaccard = j.
		// |A∩B| = c, |A|=|B|=n: J = c/(2n-c) -> c = 2nJ/(1+J).
		n := 200
		c := int(math.Round(2 * float64(n) * j / (1 + j)))
		var sum float64
		trials := 300
		for tr := 0; tr < trials; tr++ {
			perm := r.Perm(10000)
			a := make([]uint32, 0, n)
			b := make([]uint32, 0, n)
			for i := 0; i < c; i++ {
				a = append(a, uint32(perm[i]))
				b = append(b, uint32(perm[i]))
			}
			for i := c; i < n; i++ {
				a = append(a, uint32(perm[i]))
				b = append(b, uint32(perm[i+n]))
			}
			trueJ := float64(c) / float64(2*n-c)
			h := New(int64(tr))
			sum += Agreement(h.Sign(a), h.Sign(b)) - trueJ
		}
		if bias := sum / float64(trials); math.Abs(bias) > 0.03 {
			t.Errorf("J=%.1f: mean estimate error %.3f, want |.| <= 0.03", j, bias)
		}
	}
}

func TestKeyOrderMatchesCompare(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 1000; i++ {
		var a, b Signature
		for j := range a {
			a[j] = r.Uint64() % 4
			b[j] = r.Uint64() % 4
		}
		if got, want := bytes.Compare(a.AppendKey(nil), b.AppendKey(nil)), a.Compare(b); got != want {
			t.Fatalf("%v vs %v: key order %d, Compare %d", a, b, got, want)
		}
	}
	if len(Empty.AppendKey(nil)) != KeyBytes {
		t.Fatal("key length")
	}
}

func BenchmarkSign(b *testing.B) {
	h := New(1)
	row := make([]uint32, 20)
	for i := range row {
		row[i] = uint32(i * 7919)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		h.Sign(row)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds()/1e6, "Mrows/s")
}
