package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/smoothanon/smoothanon/matrix"
	"github.com/smoothanon/smoothanon/proto/smoothanonpb"
	"github.com/smoothanon/smoothanon/release"
	"github.com/smoothanon/smoothanon/solver"
	"github.com/smoothanon/smoothanon/verify"
)

func init() {
	register(command{
		name:  "solve",
		short: "anonymize a whole input in one process with the Alg2 solver",
		run:   runSolve,
	})
}

func runSolve(args []string, stdout, stderr io.Writer) error {
	fs := newGroupedFlags("solve", stderr)
	fs.in(groupIO)
	f := addFileFlags(fs, "no progress or summary on stderr")
	sp, _ := solverFlags(fs, "solve")
	fs.in(groupPrivacy)
	sens := addSensitiveFlags(fs.FlagSet, sp)
	f.addIDFlags(fs)
	f.gate = addGateFlags(fs)
	if err := parseFlags(fs.FlagSet, args); err != nil {
		return err
	}
	if err := f.missing(); err != nil {
		return err
	}
	if err := checkK(sp.K); err != nil {
		return err
	}
	if err := solver.CheckParams(*sp, sp.K); err != nil { // rows checked after reading
		return usageErr("%v", err)
	}
	setStoreTimeout(*f.timeout) // the list may be in a bucket
	if _, err := sens.load(context.Background()); err != nil {
		return err
	}
	var p solver.Params
	start := time.Now()
	var info *smoothanonpb.SolveInfo
	r, err := f.release("solve", stdout, stderr, func(ctx context.Context, in *matrix.Matrix) (o release.Outcome, err error) {
		if err := sens.resolve(f.vocab); err != nil {
			return o, err
		}
		p = *sp
		if err := solver.CheckParams(p, in.NumRows()); err != nil {
			return o, inputErr(fmt.Errorf("%s: %w", *f.input, err))
		}
		var progress solver.Progress
		if !*f.quiet && isTerminal(stderr) {
			progress = progressPrinter(stderr)
		}
		res, err := solver.SolveProgress(ctx, in, p, progress)
		if progress != nil {
			fmt.Fprint(stderr, "\r\033[K")
		}
		if err != nil {
			return o, inputErr(err)
		}
		vp := verify.Params{K: p.K, Mode: p.Mode}
		sens.verifyParams(&vp)
		if o.Report, err = verify.Check(in, res.Release, vp); err != nil {
			return o, err
		}
		o.Sensitive = sens.record()
		o.Report.Solve, info = res.Info, res.Info
		o.Release = res.Release
		return o, accountFeatures(&o, in, res.Release, *f.featureReport != "", f.vocab, sens)
	})
	if err != nil || r == nil {
		return err // nil r: an earlier run's release, whose pending key was saved
	}
	if !*f.quiet {
		fmt.Fprintf(stderr, "smoothanon solve: %s %s k=%d: %d rows, %d clusters (mean %.1f, max %d), jaccard %.4f, suppressed %.4f, created %.4f, %.1fs -> %s\n",
			p.Variant, p.Mode, p.K, r.Rows, info.GetClusters(), info.GetClusterSize().GetMean(), info.GetClusterSize().GetMax(),
			r.Jaccard, r.SuppressedFraction, r.CreatedFraction, since(start), *f.output)
	}
	return nil
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// progressPrinter returns a solver.Progress that rewrites one status
// line on w at most every 200 ms, and whenever a stage completes. The limit
// is not per stage: improve's candidates report under their own stage
// names at the same time, and a per-stage limit would print every call.
func progressPrinter(w io.Writer) solver.Progress {
	return newProgressPrinter(w, time.Now)
}

func newProgressPrinter(w io.Writer, now func() time.Time) func(stage string, done, total int) {
	var last time.Time
	return func(stage string, done, total int) {
		t := now()
		if t.Sub(last) < 200*time.Millisecond && done < total {
			return
		}
		last = t
		fmt.Fprintf(w, "\r\033[Ksolve: %s %d/%d", stage, done, total)
	}
}
