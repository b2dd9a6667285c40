// Command smoothanon makes sparse user×feature data safe to share under
// smooth-k-anonymity.
//
// Usage:
//
//	smoothanon <command> [flags]
//
// Each command lives in its own file and registers itself in init().
//
// Installed under the name smoothanon-<command> (a copy or a link), the
// binary runs that command with all its arguments as flags: Dataflow's Flex
// Template launcher starts it so, naming no command (deploy/dataflow).
//
// Exit codes:
//
//	0    success, and -h/--help; a rerun of a published --run_id
//	1    a release that failed verification (run, solve, baseline,
//	     verify; nothing is published); linkage: a linked set below k, or
//	     releases that share a key
//	2    bad usage, input or output: unknown command or flag, bad flag
//	     value, missing or unreadable input, bad rows, an output that is
//	     not empty or overlaps the input, a store error or a store that
//	     does not answer
//	3    run only: the runner failed — the job endpoint did not answer,
//	     job submission, the job server or a worker failed
//	4    another run published the output first (run, solve, baseline):
//	     this run published nothing and saved no key
//	5    a valid release that missed its quality gate (--min_jaccard,
//	     --max_suppressed, --max_created, --max_drift): nothing published
//	130  SIGINT, 143 SIGTERM: stopped before publishing; nothing published
//
// Started by a runner as a Beam worker (--worker=true), it exits with the
// Beam harness's status instead.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/smoothanon/smoothanon/internal/memlimit"
	"github.com/smoothanon/smoothanon/pipeline"
)

// command is one subcommand.
type command struct {
	name  string
	short string // one-line description
	// run parses args (without the command name) and runs the command.
	run func(args []string, stdout, stderr io.Writer) error
}

var commands = map[string]command{}

func register(c command) { commands[c.name] = c }

// exitError carries an exit code out of a command.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// usageErr is bad input or usage: exit code 2.
func usageErr(format string, args ...any) error {
	return &exitError{code: 2, err: fmt.Errorf(format, args...)}
}

// inputErr wraps an error about the input: exit code 2.
func inputErr(err error) error { return &exitError{code: 2, err: err} }

// newFlagSet returns a flag set that reports errors instead of exiting.
func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("smoothanon "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// parseFlags parses args and rejects stray positional arguments. A bad
// flag is reported once, by runMain, on one line; the flag list is printed
// only for -h.
func parseFlags(fs *flag.FlagSet, args []string) error {
	out := fs.Output()
	fs.SetOutput(io.Discard) // the flag package would print the error and the whole usage
	err := fs.Parse(args)
	fs.SetOutput(out)
	if errors.Is(err, flag.ErrHelp) {
		fs.Usage() // "Usage of <name>:" and the flags, by group where the command groups them
		return err
	}
	if err != nil {
		return &exitError{code: 2, err: fmt.Errorf("%w (run '%s -h' for its flags)", err, fs.Name())}
	}
	if fs.NArg() > 0 {
		return usageErr("unexpected argument %q", fs.Arg(0))
	}
	return nil
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: smoothanon <command> [flags]\n\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].short)
	}
	fmt.Fprintln(w, "\nRun 'smoothanon <command> -h' for a command's flags.")
}

// runMain runs the CLI and returns the process exit code.
func runMain(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "smoothanon: unknown command %q\n", args[0])
		usage(stderr)
		return 2
	}
	err := c.run(args[1:], stdout, stderr)
	if err == nil {
		return 0
	}
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	fmt.Fprintf(stderr, "smoothanon %s: %v\n", c.name, err)
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return 2
}

func main() {
	// In a container (a Flink or Dataflow worker, a Kubernetes job), keep
	// the Go heap under the container's memory limit (internal/memlimit).
	memlimit.Apply()
	servePprof()
	// Started by a Beam runner as an SDK harness (--worker=true ...): serve
	// bundles and exit. LOOPBACK and prism workers live in this process instead.
	pipeline.MaybeRunWorker()
	os.Exit(runMain(commandArgs(os.Args), os.Stdout, os.Stderr))
}

// commandArgs returns the command line for runMain: os.Args[1:], preceded
// by the command when the binary runs as smoothanon-<command>.
func commandArgs(osArgs []string) []string {
	name := strings.TrimSuffix(filepath.Base(osArgs[0]), ".exe")
	if c, ok := strings.CutPrefix(name, "smoothanon-"); ok {
		if _, known := commands[c]; known {
			return append([]string{c}, osArgs[1:]...)
		}
	}
	return osArgs[1:]
}
