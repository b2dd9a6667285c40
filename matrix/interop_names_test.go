package matrix_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/smoothanon/smoothanon/matrix"
)

// pyarrowNamesScript writes each spec of a JSON list on stdin with
// pyarrow: string interests as spec["type"] (string or large_string), in
// a list (spec["list"]: list or large_list) or one per row (none), the
// Arrow array dictionary-encoded when spec["dict"], written with
// write_table(**spec["write"]).
const pyarrowNamesScript = `
import json, sys
import pyarrow as pa, pyarrow.parquet as pq
for spec in json.load(sys.stdin):
    vt = getattr(pa, spec["type"])()
    if spec["list"] == "none":
        feats = pa.array(spec["feats"], vt)
        if spec["dict"]:
            feats = feats.dictionary_encode()
        name = "interest"
    else:
        make = pa.large_list if spec["list"] == "large_list" else pa.list_
        feats = pa.array(spec["feats"], make(vt))
        name = "interests"
    pq.write_table(pa.table({"user_id": pa.array(spec["users"], pa.string()), name: feats}), spec["path"], **spec["write"])
    print(spec["path"], pq.ParquetFile(spec["path"]).schema, sep="\n")
`

type pyarrowNames struct {
	Type  string         `json:"type"`
	List  string         `json:"list"`
	Dict  bool           `json:"dict"`
	Write map[string]any `json:"write"`
	Users []string       `json:"users"`
	Feats []any          `json:"feats"`
	Path  string         `json:"path"`
}

// TestInteropPyarrowNames reads string interests as pyarrow writes them:
// string and large_string, list and large_list and long form, Parquet
// dictionary pages or plain, Arrow dictionary arrays, the non-compliant
// list layout; every user's names come back as written.
func TestInteropPyarrowNames(t *testing.T) {
	requirePython(t, "pyarrow", "pip install pyarrow==26.0.1")
	want := map[string][]string{}
	for u := range 90 {
		var names []string
		for j := range u%5 + 1 {
			names = append(names, []string{"/sports/football", "/news", "é,\"quoted\"", "", "/a/b/c"}[(u+j)%5])
		}
		want[fmt.Sprintf("u%02d", u)] = names
	}
	users := slices.Sorted(func(yield func(string) bool) {
		for u := range want {
			if !yield(u) {
				return
			}
		}
	})
	small := map[string]any{"row_group_size": 32}
	cases := map[string]pyarrowNames{
		"list<string>":                   {Type: "string", List: "list", Write: small},
		"list<string>/plain":             {Type: "string", List: "list", Write: map[string]any{"row_group_size": 32, "use_dictionary": false}},
		"large_list<large_string>":       {Type: "large_string", List: "large_list", Write: small},
		"list<string>/non-compliant":     {Type: "string", List: "list", Write: map[string]any{"use_compliant_nested_type": false}},
		"long string":                    {Type: "string", List: "none", Write: small},
		"long large_string":              {Type: "large_string", List: "none", Write: small},
		"long dictionary<string>":        {Type: "string", List: "none", Dict: true, Write: small},
		"long string/data page v2 plain": {Type: "string", List: "none", Write: map[string]any{"data_page_version": "2.0", "use_dictionary": false}},
	}
	dir := t.TempDir()
	var specs []pyarrowNames
	var names []string
	for name, c := range cases {
		c.Path = filepath.Join(dir, fmt.Sprintf("n%02d.parquet", len(specs)))
		for _, u := range users {
			if c.List == "none" {
				for _, n := range want[u] {
					c.Users, c.Feats = append(c.Users, u), append(c.Feats, n)
				}
			} else {
				c.Users, c.Feats = append(c.Users, u), append(c.Feats, want[u])
			}
		}
		specs, names = append(specs, c), append(names, name)
	}
	in, err := json.Marshal(specs)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("pyarrow schemas:\n%s", runPython(t, pyarrowNamesScript, in))
	for i, c := range specs {
		t.Run(names[i], func(t *testing.T) {
			col := "interests"
			if c.List == "none" {
				col = "interest"
			}
			m, st, err := matrix.ReadMatrix(c.Path, matrix.ReadOptions{Layout: matrix.Layout{Feature: col}})
			if err != nil {
				t.Fatal(err)
			}
			if st.Layout.Values != matrix.ValuesStrings || st.Vocab.Len() != 5 {
				t.Fatalf("read as %v with %d names", st.Layout, st.Vocab.Len())
			}
			for r, u := range m.Users {
				var got []string
				for _, id := range m.Row(r) {
					got = append(got, st.Vocab.String(id))
				}
				w := slices.Sorted(slices.Values(slices.Compact(slices.Sorted(slices.Values(want[u])))))
				if !slices.Equal(got, w) {
					t.Errorf("user %s: %q, want %q", u, got, w)
				}
			}
			if m.NumRows() != len(want) {
				t.Errorf("%d users, want %d", m.NumRows(), len(want))
			}
		})
	}
}
