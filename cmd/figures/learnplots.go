package main

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// drawLearningFigures writes the learning experiment's figures into dir.
func drawLearningFigures(l *learning, dir string, stdout io.Writer) error {
	if err := save(drawLearningK(l), filepath.Join(dir, "learning-adult.png"), stdout); err != nil {
		return err
	}
	if err := save(drawLearningDP(l), filepath.Join(dir, "learning-dp.png"), stdout); err != nil {
		return err
	}
	if l.Links != nil {
		return save(drawLinks(l.Links), filepath.Join(dir, "learning-links.png"), stdout)
	}
	return nil
}

// modelCaption names the model in captions (learning.Model in full).
const modelCaption = "MLP, one hidden layer of 10 ReLU units (scikit-learn)"

// accuracyAxis labels the accuracy axes.
const accuracyAxis = "test accuracy (share of original test rows classified right)"

// drawLearningK is the paper's Figure ml-kanon: test accuracy vs k of
// classifiers trained on smooth, non-smooth and Mondrian releases, with the
// majority label, the model trained on the rows as they are and node DP at
// ε = learnEpsilon as lines.
func drawLearningK(l *learning) *figure {
	f := newFigure(fmt.Sprintf("adult: income classifier trained on anonymized rows (%d training, %d test rows)", l.TrainRows, l.TestRows),
		"k (anonymity parameter, log scale)", accuracyAxis,
		fmt.Sprintf("Mean of %d seeds (anonymization and model); bands: 95%% confidence interval of the mean. Model: %s.", l.Seeds, modelCaption))
	setKAxis(f.plot, l.Ks)
	xs := intsF(l.Ks)
	for i, c := range l.Curves {
		addBand(f, xs, c, i)
		addLine(f, c.Method, xs, c.Mean, i, dashes[i], methodGlyphs[i])
	}
	dp := l.DP.Mean[slices.Index(l.Epsilons, learnEpsilon)]
	lo, hi := xs[0]/1.15, xs[len(xs)-1]*1.15
	addLevel(f, fmt.Sprintf("no anonymity (%.3f)", l.Original.Mean[0]), lo, hi, l.Original.Mean[0], 3)
	addLevel(f, fmt.Sprintf("node DP, ε = %d (%.3f)", learnEpsilon, dp), lo, hi, dp, 4)
	addLevel(f, fmt.Sprintf("majority label (%.3f)", l.Majority), lo, hi, l.Majority, 5)
	setAccuracyAxis(f.plot, append(slices.Concat(bandEnds(l.Curves)...), l.Majority, l.Original.Mean[0], dp))
	return f
}

// drawLearningDP is the paper's Figure ml-dp: test accuracy vs ε of
// classifiers trained on ε-node randomized response.
func drawLearningDP(l *learning) *figure {
	f := newFigure("adult: income classifier trained on ε-node DP releases (randomized response)",
		"ε of ε-node differential privacy (log scale)", accuracyAxis,
		fmt.Sprintf("Mean of %d seeds; band: 95%% confidence interval of the mean. Model: %s.", l.Seeds, modelCaption))
	xs := make([]float64, len(l.Epsilons))
	var ticks plot.ConstantTicks
	for i, e := range l.Epsilons {
		xs[i] = math.Log10(e)
		ticks = append(ticks, plot.Tick{Value: xs[i], Label: strconv.FormatFloat(e, 'g', -1, 64)})
	}
	f.plot.X.Tick.Marker = ticks
	lo, hi := xs[0]-0.1, xs[len(xs)-1]+0.1
	f.plot.X.Min, f.plot.X.Max = lo, hi
	addBand(f, xs, l.DP, 0)
	addLine(f, methodNodeDP, xs, l.DP.Mean, 0, nil, methodGlyphs[0])
	addLevel(f, fmt.Sprintf("no anonymity (%.3f)", l.Original.Mean[0]), lo, hi, l.Original.Mean[0], 3)
	addLevel(f, fmt.Sprintf("majority label (%.3f)", l.Majority), lo, hi, l.Majority, 5)
	setAccuracyAxis(f.plot, append(slices.Concat(bandEnds([]learnCurve{l.DP})...), l.Majority, l.Original.Mean[0]))
	return f
}

// drawLinks is the link prediction on dblp: AUC vs k.
func drawLinks(ln *links) *figure {
	f := newFigure(fmt.Sprintf("dblp: co-author link prediction from anonymized rows (%d held-out edges)", ln.HeldOut),
		"k (anonymity parameter, log scale)", "AUC (held-out edge vs non-edge, by Jaccard of released rows)",
		fmt.Sprintf("smooth and non-smooth: mean of %d solver seeds, bands 95%% confidence interval; Mondrian is deterministic.", ln.Seeds))
	setKAxis(f.plot, ln.Ks)
	xs := intsF(ln.Ks)
	for i, c := range ln.Curves {
		addBand(f, xs, c, i)
		addLine(f, c.Method, xs, c.Mean, i, dashes[i], methodGlyphs[i])
	}
	addLevel(f, fmt.Sprintf("no anonymity (%.3f)", ln.Original), xs[0]/1.15, xs[len(xs)-1]*1.15, ln.Original, 3)
	addLevel(f, "random guess (0.5)", xs[0]/1.15, xs[len(xs)-1]*1.15, 0.5, 5)
	setAccuracyAxis(f.plot, append(slices.Concat(bandEnds(ln.Curves)...), ln.Original, 0.5))
	return f
}

// addBand shades c's 95% interval around its mean in the i-th color.
func addBand(f *figure, xs []float64, c learnCurve, i int) {
	var pts plotter.XYs
	for j := range xs {
		pts = append(pts, plotter.XY{X: xs[j], Y: c.Mean[j] + c.CI95[j]})
	}
	for j := len(xs) - 1; j >= 0; j-- {
		pts = append(pts, plotter.XY{X: xs[j], Y: c.Mean[j] - c.CI95[j]})
	}
	poly, err := plotter.NewPolygon(pts)
	if err != nil {
		panic(err) // only for NaN or infinite values, which the measurements never give
	}
	r, g, b, _ := colorOf(i).RGBA()
	poly.Color = color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: 50}
	poly.LineStyle.Width = 0
	f.plot.Add(poly)
}

// addLevel draws a horizontal line at y from x lo to hi in the i-th color.
func addLevel(f *figure, name string, lo, hi, y float64, i int) {
	l, err := plotter.NewLine(plotter.XYs{{X: lo, Y: y}, {X: hi, Y: y}})
	if err != nil {
		panic(err)
	}
	l.Color, l.Width, l.Dashes = colorOf(i), vg.Points(1.2), dashes[1+i%2]
	f.plot.Add(l)
	f.legend.Add(name, l)
}

// bandEnds lists every curve's band ends.
func bandEnds(cs []learnCurve) [][]float64 {
	var out [][]float64
	for _, c := range cs {
		for j := range c.Mean {
			out = append(out, []float64{c.Mean[j] - c.CI95[j], c.Mean[j] + c.CI95[j]})
		}
	}
	return out
}

// setAccuracyAxis fits the y axis (0 to 1 scale) around ys.
func setAccuracyAxis(p *plot.Plot, ys []float64) {
	lo, hi := slices.Min(ys), slices.Max(ys)
	setJaccardAxis(p, math.Max(0, math.Floor((lo-0.01)*50)/50), math.Min(1, math.Ceil((hi+0.01)*50)/50))
}
