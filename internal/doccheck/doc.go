// Package doccheck keeps the documentation and the code's comments in
// step as both change. Its tests, run by make check, fail when a Go
// comment quotes a figure measured on some day (figures belong in a
// decision record under docs/decisions/, which gives the day and commit,
// and in the performance reference under docs/), when a comment or
// document cites a decision record that does not exist or the record
// index misses one, when the performance reference outgrows a reference,
// and when a relative link in a Markdown file points nowhere. The package
// has no code of its own; the rules are in doccheck_test.go.
package doccheck
