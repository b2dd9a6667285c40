package main

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/smoothanon/smoothanon/internal/experiment"
)

// jaccardAxis labels the Jaccard axes.
const jaccardAxis = "Jaccard similarity of input and release (0 to 1)"

// epsilonAxis labels the ε axes.
const epsilonAxis = "ε of ε-edge differential privacy (nats)"

// setJaccardAxis makes the y axis a Jaccard axis from lo to hi with a
// labelled tick every 0.1 (every 0.02 on a range of at most 0.3).
func setJaccardAxis(p *plot.Plot, lo, hi float64) {
	p.Y.Min, p.Y.Max = lo, hi
	per, prec := 10.0, 1
	if hi-lo <= 0.3 {
		per, prec = 50, 2
	}
	var ts plot.ConstantTicks
	for i := math.Ceil(lo*per - 1e-9); i <= hi*per+1e-9; i++ {
		v := i / per
		if v == 0 {
			v = 0 // not −0, which prints "-0.0"
		}
		ts = append(ts, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', prec, 64)})
	}
	p.Y.Tick.Marker = ts
}

// setEpsilonAxis makes the y axis an ε axis from 0 to above hi with a
// labelled tick at every integer (every even one above 10).
func setEpsilonAxis(p *plot.Plot, hi float64) {
	step := 1.0
	if hi > 10 {
		step = 2
	}
	top := math.Ceil(hi/step) * step
	p.Y.Min, p.Y.Max = 0, top
	var ts plot.ConstantTicks
	for v := 0.0; v <= top+1e-9; v += step {
		ts = append(ts, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', 0, 64)})
	}
	p.Y.Tick.Marker = ts
}

// powerTicks labels every integer from lo to hi as the power of ten it
// stands for, on an axis of log10 values. (A log axis would do, but gonum's
// plot places a log axis's label box at the arithmetic midpoint of the
// range and shrinks the plot to fit it.)
func powerTicks(lo, hi int) plot.ConstantTicks {
	var ts plot.ConstantTicks
	for e := lo; e <= hi; e++ {
		label := fmt.Sprintf("1e%d", e)
		if e == 0 {
			label = "1"
		}
		ts = append(ts, plot.Tick{Value: float64(e), Label: label})
	}
	return ts
}

// kTicks puts a labelled tick at every k on a log axis.
func kTicks(ks []int) plot.ConstantTicks {
	var ts plot.ConstantTicks
	for _, k := range ks {
		ts = append(ts, plot.Tick{Value: float64(k), Label: strconv.Itoa(k)})
	}
	return ts
}

// setKAxis makes the x axis a log axis over ks (k doubles from point to point).
func setKAxis(p *plot.Plot, ks []int) {
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = kTicks(ks)
	p.X.Min, p.X.Max = float64(ks[0])/1.15, float64(ks[len(ks)-1])*1.15
}

// addLine adds a line with point markers and a legend entry.
func addLine(f *figure, name string, xs, ys []float64, i int, dash []vg.Length, glyph draw.GlyphDrawer) {
	pts := make(plotter.XYs, len(xs))
	for j := range xs {
		pts[j] = plotter.XY{X: xs[j], Y: ys[j]}
	}
	l, s, err := plotter.NewLinePoints(pts)
	if err != nil {
		panic(err) // only for NaN or infinite values, which the measurements never give
	}
	l.Color, l.Dashes, l.Width = colorOf(i), dash, vg.Points(1.5)
	s.Color, s.Shape, s.Radius = colorOf(i), glyph, vg.Points(3)
	f.plot.Add(l, s)
	f.legend.Add(name, l, s)
}

// addPoints adds unconnected markers and, when name is not "", a legend entry.
func addPoints(f *figure, name string, pts plotter.XYs, c int, glyph draw.GlyphDrawer, radius vg.Length) *plotter.Scatter {
	s, err := plotter.NewScatter(pts)
	if err != nil {
		panic(err)
	}
	s.Color, s.Shape, s.Radius = colorOf(c), glyph, radius
	f.plot.Add(s)
	if name != "" {
		f.legend.Add(name, s)
	}
	return s
}

// glyphs of the methods, and hollow ones for the paper's points.
var (
	methodGlyphs = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.TriangleGlyph{}, draw.BoxGlyph{}}
	paperGlyphs  = []draw.GlyphDrawer{draw.RingGlyph{}, hollowTriangle{}, draw.SquareGlyph{}}
	setGlyphs    = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.TriangleGlyph{}, draw.BoxGlyph{}, draw.PyramidGlyph{}, draw.CrossGlyph{}}
)

// hollowTriangle is an outlined triangle.
type hollowTriangle struct{}

func (hollowTriangle) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	c.SetLineStyle(draw.LineStyle{Color: sty.Color, Width: vg.Points(1)})
	r := sty.Radius + (sty.Radius-sty.Radius*vg.Length(math.Sin(math.Pi/6)))/2
	p := make(vg.Path, 0, 4)
	p.Move(vg.Point{X: pt.X, Y: pt.Y + r})
	p.Line(vg.Point{X: pt.X - r*vg.Length(math.Cos(math.Pi/6)), Y: pt.Y - r*vg.Length(math.Sin(math.Pi/6))})
	p.Line(vg.Point{X: pt.X + r*vg.Length(math.Cos(math.Pi/6)), Y: pt.Y - r*vg.Length(math.Sin(math.Pi/6))})
	p.Close()
	c.Stroke(p)
}

// drawJaccardK is the Jaccard-vs-k figure of one data set (the paper's
// Figures 2 and 5) with the paper's k = 8 results as hollow markers.
func drawJaccardK(s setResult) *figure {
	paper := experiment.Paper[s.Name]
	runs := "solver seed 1"
	if !experiment.Fixed(s.Name) {
		runs = fmt.Sprintf("mean of %d draws", s.Draws)
	}
	f := newFigure(fmt.Sprintf("%s: Jaccard vs k (%d rows, %d entries)", s.Name, s.Rows, s.Entries),
		"k (anonymity parameter, log scale)", jaccardAxis,
		fmt.Sprintf("%s; every release passed verify.Check. Hollow markers: the paper's k = 8 results (table %s).", runs, paper.Table))
	setKAxis(f.plot, s.Ks)
	setJaccardAxis(f.plot, 0, 1)
	xs := make([]float64, len(s.Ks))
	for i, k := range s.Ks {
		xs[i] = float64(k)
	}
	paperJ := []float64{paper.Smooth, paper.NonSmooth, paper.Mondrian}
	for i, c := range s.Curves {
		addLine(f, c.Method, xs, c.Mean, i, dashes[i], methodGlyphs[i])
	}
	for i, c := range s.Curves {
		if i == 2 && !paper.HasMondrian {
			continue
		}
		addPoints(f, "paper "+c.Method+", k = 8", plotter.XYs{{X: 8, Y: paperJ[i]}}, i, paperGlyphs[i], vg.Points(6))
	}
	return f
}

// drawKEpsilon is the k ↔ ε figure (the paper's Figure 6): for each data
// set and k, the ε at which randomized response matches the smooth Jaccard.
func drawKEpsilon(sets []setResult) *figure {
	f := newFigure("k-anonymity vs ε-edge DP at equal Jaccard", "k of smooth k-anonymity (log scale)", epsilonAxis,
		fmt.Sprintf("ε found by bisection (to %.3f) of randomized response's measured Jaccard against the smooth release's.", epsTolerance))
	ks := sets[0].Ks
	setKAxis(f.plot, ks)
	hi := 0.0
	for i, s := range sets {
		xs := make([]float64, len(s.Ks))
		for j, k := range s.Ks {
			xs[j] = float64(k)
		}
		addLine(f, fmt.Sprintf("%s (density %.2g)", s.Name, s.Density), xs, s.EpsilonAtK, i, nil, setGlyphs[i%len(setGlyphs)])
		hi = math.Max(hi, slices.Max(s.EpsilonAtK))
	}
	setEpsilonAxis(f.plot, hi)
	return f
}

// drawEpsilonDensity is the paper's Figure 1: the theorem's ε for each
// Jaccard level as a function of density, and the ε measured on our data
// sets at their densities.
func drawEpsilonDensity(sets []setResult) *figure {
	f := newFigure("ε needed for a Jaccard level vs density", "density λ = |E| / (rows × columns) (log scale)", epsilonAxis,
		"Lines: the main term of the paper's randomized-response theorem. Markers: ε measured on our data (bisection).")
	f.plot.X.Tick.Marker = powerTicks(-6, 0)
	lo, hi := 1e-6, 1.0
	for li, j := range jaccardLevels {
		var pts plotter.XYs
		for e := math.Log10(lo); e <= math.Log10(hi)-0.01; e += 0.02 {
			pts = append(pts, plotter.XY{X: e, Y: boundEpsilon(j, math.Pow(10, e))})
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			panic(err)
		}
		l.Color, l.Width = colorOf(li), vg.Points(1.5)
		f.plot.Add(l)
		f.legend.Add(fmt.Sprintf("theorem, Jaccard %.2f", j), l)
	}
	for si, s := range sets {
		for li := range jaccardLevels {
			name := ""
			if li == 0 {
				name = s.Name + " (measured)"
			}
			sc := addPoints(f, "", plotter.XYs{{X: math.Log10(s.Density), Y: s.EpsilonAtJaccard[li]}}, li, setGlyphs[si%len(setGlyphs)], vg.Points(4))
			if name != "" {
				legendGlyph := *sc
				legendGlyph.Color = color.Black
				f.legend.Add(name, &legendGlyph)
			}
		}
	}
	f.plot.X.Min, f.plot.X.Max = math.Log10(lo), math.Log10(hi)
	setEpsilonAxis(f.plot, boundEpsilon(jaccardLevels[len(jaccardLevels)-1], lo))
	return f
}

// drawChunks is the pipeline's Jaccard on dblp vs chunk size against the
// whole-data solve.
func drawChunks(sw *chunkSweep) *figure {
	f := newFigure(fmt.Sprintf("%s through the pipeline: Jaccard vs chunk size (smooth, k = %d)", pipelineSet, pipelineK),
		"chunk size (target rows per chunk, log scale)", jaccardAxis,
		"Prism runner, seed 1; every published release re-read and checked with verify.Check. Labels: number of chunks.")
	// x is log10 of the chunk size (see powerTicks for why not a log axis).
	var ticks plot.ConstantTicks
	xs := make([]float64, len(sw.ChunkSizes))
	for i, cs := range sw.ChunkSizes {
		xs[i] = math.Log10(float64(cs))
		ticks = append(ticks, plot.Tick{Value: xs[i], Label: strconv.Itoa(cs)})
	}
	f.plot.X.Tick.Marker = ticks
	f.plot.X.Min, f.plot.X.Max = xs[0]-0.08, xs[len(xs)-1]+0.08
	addLine(f, "pipeline (chunked)", xs, sw.Jaccard, 0, nil, draw.CircleGlyph{})
	whole, err := plotter.NewLine(plotter.XYs{{X: f.plot.X.Min, Y: sw.Whole}, {X: f.plot.X.Max, Y: sw.Whole}})
	if err != nil {
		panic(err)
	}
	whole.Color, whole.Dashes, whole.Width = colorOf(1), dashes[1], vg.Points(1.5)
	f.plot.Add(whole)
	f.legend.Add(fmt.Sprintf("whole-data solve (%.3f)", sw.Whole), whole)
	var labels plotter.XYLabels
	for i := range xs {
		labels.XYs = append(labels.XYs, plotter.XY{X: xs[i], Y: sw.Jaccard[i]})
		labels.Labels = append(labels.Labels, fmt.Sprintf("%d", sw.Chunks[i]))
	}
	l, err := plotter.NewLabels(labels)
	if err != nil {
		panic(err)
	}
	l.Offset = vg.Point{X: -vg.Points(3), Y: -vg.Points(16)}
	f.plot.Add(l)
	minJ := math.Min(sw.Whole, slices.Min(sw.Jaccard))
	setJaccardAxis(f.plot, math.Max(0, math.Floor((minJ-0.02)*50)/50), math.Min(1, math.Ceil((sw.Whole+0.02)*50)/50))
	return f
}
