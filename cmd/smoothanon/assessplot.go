package main

import (
	"bytes"
	"fmt"
	"image/color"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/smoothanon/smoothanon/proto/smoothanonpb"
)

// plotPrice draws rep's predicted Jaccard against k, a line per mode
// with its interval shaded, as a PNG (assess --plot).
func plotPrice(rep *smoothanonpb.Assessment) ([]byte, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Price of k: predicted Jaccard of `run` on %s (%d users)", rep.Input, rep.Users)
	p.X.Label.Text = "k (log scale)"
	p.Y.Label.Text = "Jaccard of input and release (95% interval shaded)"
	p.Legend.Top = true
	var ks []int32
	for _, pt := range rep.Price {
		if !slices.Contains(ks, pt.K) {
			ks = append(ks, pt.K)
		}
	}
	slices.Sort(ks)
	p.X.Scale = plot.LogScale{}
	var ticks plot.ConstantTicks
	for _, k := range ks {
		ticks = append(ticks, plot.Tick{Value: float64(k), Label: strconv.Itoa(int(k))})
	}
	p.X.Tick.Marker = ticks
	p.X.Min, p.X.Max = float64(ks[0])/1.3, float64(ks[len(ks)-1])*1.3
	p.Y.Min, p.Y.Max = 0, 1
	var modes []string
	for _, pt := range rep.Price {
		if !slices.Contains(modes, pt.Mode) {
			modes = append(modes, pt.Mode)
		}
	}
	for i, mode := range modes {
		var line, band, upper plotter.XYs
		for _, pt := range rep.Price {
			if pt.Mode != mode {
				continue
			}
			x := float64(pt.K)
			line = append(line, plotter.XY{X: x, Y: pt.Predicted.Jaccard})
			band = append(band, plotter.XY{X: x, Y: pt.Low.Jaccard})
			upper = append(upper, plotter.XY{X: x, Y: pt.High.Jaccard})
		}
		slices.Reverse(upper)
		c := plotutil.Color(i)
		poly, err := plotter.NewPolygon(append(band, upper...))
		if err != nil {
			return nil, err
		}
		r, g, b, _ := c.RGBA()
		poly.Color = color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: 60}
		poly.LineStyle.Width = 0
		l, s, err := plotter.NewLinePoints(line)
		if err != nil {
			return nil, err
		}
		l.Color, l.Width = c, vg.Points(1.5)
		s.Color, s.Shape = c, draw.CircleGlyph{}
		p.Add(poly, l, s)
		p.Legend.Add(mode, l, s)
	}
	img := vgimg.NewWith(vgimg.UseWH(8*vg.Inch, 5*vg.Inch), vgimg.UseDPI(100))
	p.Draw(draw.New(img))
	var buf bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
