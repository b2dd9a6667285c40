package importer

import (
	"errors"
	"strings"
	"testing"
)

// fuzzImport checks the invariants of any import: it never panics, an error
// is a one-line *Error naming the input, and an accepted matrix is valid,
// non-empty, and consistent with its Stats.
func fuzzImport(t *testing.T, format string, data []byte, opts Options) {
	m, st, err := read(format, data, opts)
	if err != nil {
		var ie *Error
		if !errors.As(err, &ie) || ie.Path != "in" {
			t.Fatalf("error %q (%T) is not an *Error naming the input", err, err)
		}
		if strings.Contains(err.Error(), "\n") {
			t.Fatalf("error spans lines: %q", err)
		}
		return
	}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	if m.NumRows() == 0 {
		t.Fatal("accepted an input with no rows")
	}
	if st.Columns != m.NumColumns() {
		t.Fatalf("Stats.Columns %d, matrix has %d", st.Columns, m.NumColumns())
	}
	seen := make(map[string]bool, m.NumRows())
	for _, u := range m.Users {
		if seen[u] {
			t.Fatalf("user %q on two rows", u)
		}
		seen[u] = true
	}
	if st.FeatureNames != nil {
		for _, f := range m.Features {
			if int(f) >= len(st.FeatureNames) {
				t.Fatalf("feature %d has no name (%d names)", f, len(st.FeatureNames))
			}
		}
	}
}

func FuzzAdult(f *testing.F) {
	f.Add([]byte(adultSample))
	f.Add(gz(f, []byte(adultSample)))
	f.Add([]byte("1,a,2,b,3,c,d,e,f,g,4,5,6,h,i\r\n"))
	f.Add([]byte("1,?,2,?,3,?,?,?,?,?,4,5,6,?,\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzImport(t, "adult", data, Options{}) })
}

func FuzzPlaystore(f *testing.F) {
	f.Add([]byte(playstoreSample))
	f.Add(gz(f, []byte(playstoreSample)))
	hdr, _, _ := strings.Cut(playstoreSample, "\r\n")
	f.Add([]byte(hdr + "\n\"x\",C,1,2,3M,4,5,6,7,\"a;b\",9,10,11\nq,C,1,0,Varies with device,4,5,6,7,8,9,10,11\n"))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzImport(t, "playstore", data, Options{}) })
}

func FuzzEdges(f *testing.F) {
	f.Add([]byte("# c\n0 1\n0\t2\n\n3\t0\r\n"), false)
	f.Add([]byte("1 2\n2 1\n5 5\n"), true)
	f.Add([]byte("4294967295 0\n"), true)
	f.Add(gz(f, []byte("0 1\n1 2\n")), false)
	f.Fuzz(func(t *testing.T, data []byte, undirected bool) {
		fuzzImport(t, "edges", data, Options{Undirected: undirected})
	})
}

func FuzzPairs(f *testing.F) {
	f.Add([]byte("u1\t5\nu0\t3\n# c\nu1\t2\nu1\t5\n"))
	f.Add([]byte("alice smith\t1\r\n 7\t4294967295\n"))
	f.Add(gz(f, []byte("a\t1\n")))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzImport(t, "pairs", data, Options{}) })
}
