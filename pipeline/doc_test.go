package pipeline

import (
	"slices"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph"

	"github.com/smoothanon/smoothanon/internal/doclist"
	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/pseudonym"
	"github.com/smoothanon/smoothanon/solver"
	"github.com/smoothanon/smoothanon/transforms"
)

// docStage is one item of the stage list in doc.go: "Name: what it does"
// or "Name, when condition: what it does".
type docStage struct{ name, when string }

// docStages parses the list under the "Stages" heading of doc.go.
func docStages(t *testing.T) []docStage {
	t.Helper()
	items, err := doclist.Items("doc.go", "Stages")
	if err != nil {
		t.Fatal(err)
	}
	var stages []docStage
	for _, item := range items {
		head, _, ok := strings.Cut(item, ":")
		if !ok {
			t.Fatalf("doc.go: stage %q has no colon after its name", item)
		}
		name, when, _ := strings.Cut(head, ", when ")
		stages = append(stages, docStage{name: name, when: when})
	}
	return stages
}

// longLayout is a long-form input's resolved layout.
var longLayout = matrix.Layout{Shape: matrix.ShapeLong, User: matrix.ColUserID, Feature: matrix.ColFeature}

// topLevelStages returns the top-level scopes of p's job graph in the
// order their first transform appears, and the transforms outside every
// scope (which the doc's list could not name). The input has p.Layout
// when that names a shape, else the default list form.
func topLevelStages(t *testing.T, p Params) (stages, outside []string) {
	t.Helper()
	in := Input{Files: []string{"in.parquet"}, Rows: 1000, FeatureValues: 5000}
	if p.Layout.Shape != matrix.ShapeAuto {
		in.Layout = p.Layout
	}
	edges, _, err := Build(p, in, "staging").Build()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range edges {
		s := e.Scope()
		if s.Parent == nil {
			outside = append(outside, e.Name())
			continue
		}
		for s.Parent.Parent != nil {
			s = s.Parent
		}
		if !slices.Contains(stages, s.Label) {
			stages = append(stages, s.Label)
		}
	}
	return stages, outside
}

// TestDocStages: the package doc lists the job's stages exactly: for the
// default parameters and with each optional stage switched on and off,
// Build's top-level transforms are the doc's stages whose condition
// holds, in the doc's order, and no transform sits outside them. A
// condition the doc states must be one this test knows how to switch.
func TestDocStages(t *testing.T) {
	conditions := map[string]func(Params) bool{
		"Params.PseudonymKey is set": func(p Params) bool { return p.PseudonymKey != nil },
		"Params.PoolShare > 0":       func(p Params) bool { return p.PoolShare > 0 },
		"the input is list form":     func(p Params) bool { return p.Layout.Shape != matrix.ShapeLong },
		"the input is long form":     func(p Params) bool { return p.Layout.Shape == matrix.ShapeLong },
		"the features are names":     func(p Params) bool { return p.Layout.Values.Named() },
	}
	doc := docStages(t)
	for _, s := range doc {
		if _, ok := conditions[s.when]; s.when != "" && !ok {
			t.Errorf("doc.go: stage %s, when %q: a condition this test does not switch", s.name, s.when)
		}
	}

	base := Params{Input: "in.parquet", Output: "out", RunID: "run", Solver: solver.Params{K: 4}, ChunkSize: 100,
		Key: transforms.KeySpectral, PoolShare: DefaultPoolShare}
	key := pseudonym.Placeholder
	cases := map[string]Params{"defaults": base}
	for name, edit := range map[string]func(*Params){
		"pseudonyms":   func(p *Params) { p.PseudonymKey = &key },
		"no pools":     func(p *Params) { p.PoolShare = 0 },
		"both":         func(p *Params) { p.PseudonymKey, p.PoolShare = &key, 0 },
		"start":        func(p *Params) { p.Solver.Start = solver.StartMondrian },
		"nonsmooth":    func(p *Params) { p.Solver.Mode = matrix.NonSmooth },
		"key hub":      func(p *Params) { p.Key = transforms.KeyHub },
		"key two_hop":  func(p *Params) { p.Key = transforms.KeyTwoHop },
		"key minhash":  func(p *Params) { p.Key = transforms.KeyMinHash },
		"key spectral": func(p *Params) { p.Key = transforms.KeySpectral },
		"long form":    func(p *Params) { p.Layout = longLayout },
		"string names": func(p *Params) { p.Layout = longLayout; p.Layout.Values = matrix.ValuesStrings },
		"long, no pools, pseudonyms": func(p *Params) {
			p.Layout, p.PoolShare, p.PseudonymKey = longLayout, 0, &key
		},
	} {
		p := base
		edit(&p)
		cases[name] = p
	}
	switched := map[string]map[bool]bool{} // condition → values seen
	for name, p := range cases {
		var want []string
		for _, s := range doc {
			if s.when != "" {
				on := conditions[s.when] != nil && conditions[s.when](p)
				if switched[s.when] == nil {
					switched[s.when] = map[bool]bool{}
				}
				switched[s.when][on] = true
				if !on {
					continue
				}
			}
			want = append(want, s.name)
		}
		got, outside := topLevelStages(t, p)
		if !slices.Equal(got, want) {
			t.Errorf("%s: the graph's stages are\n\t%s\nthe doc's\n\t%s", name, strings.Join(got, " → "), strings.Join(want, " → "))
		}
		if len(outside) > 0 {
			t.Errorf("%s: transforms outside every stage: %v", name, outside)
		}
	}
	for when := range conditions {
		if len(switched[when]) != 2 {
			t.Errorf("condition %q was not tested both ways (%v)", when, switched[when])
		}
	}
}

// TestDocStagesNested: the nested scopes the doc names are there: Spectral
// inside Signature and Sharpen inside Chunk under the spectral key.
func TestDocStagesNested(t *testing.T) {
	p := Params{Input: "in.parquet", Output: "out", RunID: "run", Solver: solver.Params{K: 4}, ChunkSize: 100, Key: transforms.KeySpectral}
	edges, _, err := Build(p, Input{Files: []string{"in.parquet"}, Rows: 1000, FeatureValues: 5000}, "staging").Build()
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, e := range edges {
		found[scopePath(e)] = true
	}
	for _, want := range []string{"Signature/Spectral", "Chunk/Sharpen"} {
		if !found[want] {
			t.Errorf("no scope %s in the graph", want)
		}
	}
}

// scopePath is the path of e's scope below the root, "A/B".
func scopePath(e *graph.MultiEdge) string {
	var parts []string
	for s := e.Scope(); s.Parent != nil; s = s.Parent {
		parts = append([]string{s.Label}, parts...)
	}
	return strings.Join(parts, "/")
}
