// Package doclist reads a list out of a package doc comment, so that a
// test can compare what the doc says with what the code does (the
// pipeline's stages, the transforms package's transforms).
package doclist

import (
	"errors"
	"fmt"
	"go/doc/comment"
	"go/parser"
	"go/token"
	"strings"
)

// Items returns the items of the first list under the heading "# heading"
// of the package doc in the Go file path: the text of each item's first
// paragraph, doc links as their text ("[Read]" as "Read"), spaces
// collapsed.
func Items(path, heading string) ([]string, error) {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		return nil, err
	}
	if f.Doc == nil {
		return nil, fmt.Errorf("%s: no package doc", path)
	}
	p := comment.Parser{ // every [Name] and [pkg.Name] is a doc link
		LookupPackage: func(name string) (string, bool) { return name, true },
		LookupSym:     func(recv, name string) bool { return true },
	}
	under := false
	for _, b := range p.Parse(f.Doc.Text()).Content {
		switch b := b.(type) {
		case *comment.Heading:
			if under {
				return nil, fmt.Errorf("%s: no list under # %s", path, heading)
			}
			under = Text(b.Text) == heading
		case *comment.List:
			if !under {
				continue
			}
			var items []string
			for _, item := range b.Items {
				para, ok := item.Content[0].(*comment.Paragraph)
				if !ok {
					return nil, fmt.Errorf("%s: an item under # %s that does not start with a paragraph", path, heading)
				}
				items = append(items, Text(para.Text))
			}
			return items, nil
		}
	}
	if !under {
		return nil, fmt.Errorf("%s: no heading # %s", path, heading)
	}
	return nil, errors.New(path + ": no list under # " + heading)
}

// Text is the plain text of a doc comment's inline elements, spaces
// collapsed.
func Text(text []comment.Text) string {
	var b strings.Builder
	for _, t := range text {
		switch t := t.(type) {
		case comment.Plain:
			b.WriteString(string(t))
		case comment.Italic:
			b.WriteString(string(t))
		case *comment.Link:
			b.WriteString(Text(t.Text))
		case *comment.DocLink:
			b.WriteString(Text(t.Text))
		}
	}
	return strings.Join(strings.Fields(b.String()), " ")
}
