package main

import (
	"bytes"
	"fmt"
	"image/color"
	"io"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/smoothanon/smoothanon/internal/experiment"
)

// Image size of every figure.
const (
	figWidth  = 9 * vg.Inch
	figHeight = 5 * vg.Inch
	figDPI    = 110
)

// figure is a plot whose legend is drawn in a panel right of the data, so
// it never covers a point, and a caption line under it.
type figure struct {
	plot    *plot.Plot
	legend  plot.Legend
	caption string
}

// newFigure returns a figure with title and axis labels set.
func newFigure(title, x, y, caption string) *figure {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Add(gridLines())
	l := plot.NewLegend()
	l.Top, l.Left = true, true
	l.Padding = vg.Points(3)
	return &figure{plot: p, legend: l, caption: caption}
}

// gridLines is a light grid behind the data.
func gridLines() plot.Plotter {
	g := plotter.NewGrid()
	g.Vertical.Color = color.Gray{Y: 225}
	g.Horizontal.Color = color.Gray{Y: 225}
	return g
}

// color returns the i-th color of a palette readable on white.
func colorOf(i int) color.Color { return plotutil.Color(i) }

// dashes are the line styles of the methods: solid, dashed, dotted (the
// paper's convention for smooth, non-smooth and Mondrian).
var dashes = [][]vg.Length{nil, {vg.Points(6), vg.Points(4)}, {vg.Points(1.5), vg.Points(3)}}

// save renders f as PNG into path (replaced whole) and names it on stdout.
func save(f *figure, path string, stdout io.Writer) error {
	img := vgimg.NewWith(vgimg.UseWH(figWidth, figHeight), vgimg.UseDPI(figDPI))
	c := draw.New(img)
	captionH := vg.Length(0)
	if f.caption != "" {
		sty := f.plot.X.Label.TextStyle
		sty.Font.Size = vg.Points(9)
		sty.XAlign, sty.YAlign = draw.XLeft, draw.YBottom
		captionH = sty.Rectangle(f.caption).Size().Y + vg.Points(8)
		c.FillText(sty, vg.Point{X: c.Min.X + vg.Points(6), Y: c.Min.Y + vg.Points(5)}, f.caption)
	}
	legendW := f.legend.Rectangle(c).Size().X + vg.Points(16)
	f.plot.Draw(draw.Crop(c, vg.Points(4), -legendW, captionH, -vg.Points(6)))
	f.legend.Draw(draw.Crop(c, figWidth-legendW+vg.Points(8), 0, captionH, -vg.Points(28)))
	var buf bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(&buf); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := experiment.WriteFile(path, buf.Bytes()); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "wrote", path)
	return nil
}
