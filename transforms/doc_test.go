package transforms

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/smoothanon/smoothanon/internal/doclist"
)

// TestDocTransforms: the package doc lists every transform, an exported
// function whose first parameter is a beam.Scope, and nothing else.
func TestDocTransforms(t *testing.T) {
	items, err := doclist.Items("doc.go", "Transforms")
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, item := range items {
		name, _, _ := strings.Cut(item, ":")
		listed = append(listed, name)
	}
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var transforms []string
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), e.Name(), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !fn.Name.IsExported() || len(fn.Type.Params.List) == 0 {
				continue
			}
			if sel, ok := fn.Type.Params.List[0].Type.(*ast.SelectorExpr); ok && sel.Sel.Name == "Scope" {
				transforms = append(transforms, fn.Name.Name)
			}
		}
	}
	slices.Sort(transforms)
	sorted := slices.Sorted(slices.Values(listed))
	if !slices.Equal(sorted, transforms) {
		t.Errorf("the doc lists the transforms %v, the package has %v", sorted, transforms)
	}
}
