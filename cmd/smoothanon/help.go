package main

import (
	"flag"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
)

// The flag groups of run, solve and baseline, as their -h shows them.
const (
	groupIO       = "Input and output"
	groupPrivacy  = "Privacy"
	groupSolver   = "Solver"
	groupRR       = "Randomized response"
	groupPipeline = "Runner and pipeline"
	groupBeam     = "Beam runner flags"
)

// groupNotes are printed under a group's heading.
var groupNotes = map[string]string{
	groupBeam: "Apache Beam's own options, read by the runner --runner names: the job service's\n" +
		"(--endpoint, --environment_type), Dataflow's (--project, --region, ...), the worker's.",
}

// groupedFlags is a flag set whose -h lists its flags by group: each flag
// belongs to the group in force when it was defined (in), and the groups
// print in the order they were first entered.
type groupedFlags struct {
	*flag.FlagSet
	current string
	order   []string          // group titles, as first entered
	group   map[string]string // flag name → group title
}

func newGroupedFlags(name string, stderr io.Writer) *groupedFlags {
	g := &groupedFlags{FlagSet: newFlagSet(name, stderr), group: map[string]string{}}
	g.Usage = g.usage
	return g
}

// in makes the flags defined from now on members of group title.
func (g *groupedFlags) in(title string) {
	g.claim()
	if !slices.Contains(g.order, title) {
		g.order = append(g.order, title)
	}
	g.current = title
}

// claim puts the flags defined since the last call in the current group.
func (g *groupedFlags) claim() {
	g.VisitAll(func(f *flag.Flag) {
		if _, ok := g.group[f.Name]; !ok {
			if g.current == "" {
				panic("flag -" + f.Name + " defined before any group") // a programming error: -h would not list it
			}
			g.group[f.Name] = g.current
		}
	})
}

// usage writes the flags by group to the flag set's output.
func (g *groupedFlags) usage() {
	g.claim()
	w := g.Output()
	fmt.Fprintf(w, "Usage of %s:\n", g.Name())
	for _, title := range g.order {
		fmt.Fprintf(w, "\n%s:\n", title)
		if note := groupNotes[title]; note != "" {
			fmt.Fprintf(w, "  %s\n", strings.ReplaceAll(note, "\n", "\n  "))
		}
		g.VisitAll(func(f *flag.Flag) {
			if g.group[f.Name] == title {
				printFlag(w, f)
			}
		})
	}
}

// printFlag writes f as flag.PrintDefaults does; a flag.Value with a
// Type method names its value type.
func printFlag(w io.Writer, f *flag.Flag) {
	var b strings.Builder
	fmt.Fprintf(&b, "  -%s", f.Name)
	name, usage := flag.UnquoteUsage(f)
	if t, ok := f.Value.(interface{ Type() string }); ok && name == "value" {
		name = t.Type()
	}
	if name != "" {
		b.WriteString(" " + name)
	}
	if b.Len() <= 4 { // a one-letter flag name: usage on the same line
		b.WriteString("\t")
	} else {
		b.WriteString("\n    \t")
	}
	b.WriteString(strings.ReplaceAll(usage, "\n", "\n    \t"))
	if !isZeroValue(f) {
		if _, ok := f.Value.(flag.Getter); ok && reflect.TypeOf(f.Value.(flag.Getter).Get()) == reflect.TypeFor[string]() {
			fmt.Fprintf(&b, " (default %q)", f.DefValue)
		} else {
			fmt.Fprintf(&b, " (default %v)", f.DefValue)
		}
	}
	fmt.Fprintln(w, b.String())
}

// isZeroValue reports whether f's default is its type's zero value, which
// -h does not print (as the flag package decides).
func isZeroValue(f *flag.Flag) (zero bool) {
	t := reflect.TypeOf(f.Value)
	var z reflect.Value
	if t.Kind() == reflect.Pointer {
		z = reflect.New(t.Elem())
	} else {
		z = reflect.Zero(t)
	}
	defer func() {
		if recover() != nil {
			zero = false // a String that panics on the zero value
		}
	}()
	return f.DefValue == z.Interface().(flag.Value).String()
}
