package main

// plot.go draws a sweep's metric against its first axis as an SVG, with
// gonum.org/v1/plot: a line per variant (and per combination of the other
// axes' values) through the mean over the runs, a band from the runs'
// minimum to their maximum, and a legend in the corner the data leave
// emptiest. The same result gives the same bytes (the SVG embeds no font
// and no date).

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/pagesim/pagesim/engine/scenario"
)

// plotLine is one line of the plot: a variant at one combination of the
// other axes' values, and its points in the first axis's order.
type plotLine struct {
	label           string
	x, mean, lo, hi []float64
}

// plotSweep returns the SVG of metric against res's first axis.
func plotSweep(res *scenario.SweepResult, metric string) ([]byte, error) {
	m, _ := res.Metric(metric)
	xAxis := res.Vary[0]
	// A numeric axis is drawn to scale; any other (a bool, a choice, a
	// policy) at evenly spaced positions named by its values.
	numeric := true
	xs := make([]float64, len(xAxis.Values))
	for i, v := range xAxis.Values {
		f, err := strconv.ParseFloat(v, 64)
		numeric = numeric && err == nil
		xs[i] = f
	}
	if !numeric {
		for i := range xs {
			xs[i] = float64(i)
		}
	}
	// Lines: a variant x a combination of the other axes, in the
	// order the text table lists them.
	var lines []*plotLine
	byKey := map[string]*plotLine{}
	for p := range res.Points() {
		combo := res.Combo(p)
		xi := p / (res.Points() / len(xAxis.Values))
		var rest []string
		for a := 1; a < len(res.Vary); a++ {
			rest = append(rest, res.Vary[a].Name+"="+combo[a])
		}
		for _, v := range res.Variants {
			label := strings.Join(append([]string{v}, rest...), ", ")
			l := byKey[label]
			if l == nil {
				l = &plotLine{label: label}
				byKey[label] = l
				lines = append(lines, l)
			}
			st := res.Stat(p, v, metric)
			if st.N == 0 {
				continue
			}
			l.x = append(l.x, xs[xi])
			l.mean = append(l.mean, st.Mean)
			l.lo = append(l.lo, st.Min)
			l.hi = append(l.hi, st.Max)
		}
	}

	p := plot.New()
	sans := font.Font{Typeface: "Liberation", Variant: "Sans"}
	p.Title.TextStyle.Font = font.From(sans, 12)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = font.From(sans, 11)
		a.Tick.Label.Font = font.From(sans, 10)
	}
	p.Legend.TextStyle.Font = font.From(sans, 10)
	id := res.Scenario
	if s := res.Spec(); s.Seed != "" {
		id += " (seed " + s.Seed + ")"
	}
	runs := "1 run"
	if res.Runs > 1 {
		runs = fmt.Sprintf("%d runs: line at the mean, band from min to max", res.Runs)
	}
	p.Title.Text = fmt.Sprintf("%s: %s\n%s, seed %d, %s", id, m.Help, metric, res.Seed, runs)
	p.X.Label.Text = xAxis.Name
	p.Y.Label.Text = metric
	p.Add(plotter.NewGrid())
	if !numeric || len(xs) <= 12 {
		// A tick at every value swept, named as --vary gave it.
		var ticks []plot.Tick
		for i, v := range xAxis.Values {
			ticks = append(ticks, plot.Tick{Value: xs[i], Label: v})
		}
		p.X.Tick.Marker = plot.ConstantTicks(ticks)
	}
	if !numeric {
		p.X.Min, p.X.Max = -0.5, float64(len(xs))-0.5
	}
	for i, l := range lines {
		if len(l.x) == 0 {
			continue
		}
		c := plotutil.Color(i)
		if res.Runs > 1 {
			var band plotter.XYs
			for j := range l.x {
				band = append(band, plotter.XY{X: l.x[j], Y: l.lo[j]})
			}
			for j := len(l.x) - 1; j >= 0; j-- {
				band = append(band, plotter.XY{X: l.x[j], Y: l.hi[j]})
			}
			poly, err := plotter.NewPolygon(band)
			if err != nil {
				return nil, err
			}
			r, g, b, _ := c.RGBA()
			poly.Color = color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: 0x40}
			poly.LineStyle.Width = 0
			p.Add(poly)
		}
		var pts plotter.XYs
		for j := range l.x {
			pts = append(pts, plotter.XY{X: l.x[j], Y: l.mean[j]})
		}
		line, marks, err := plotter.NewLinePoints(pts)
		if err != nil {
			return nil, err
		}
		line.Color, marks.Color = c, c
		line.Width = vg.Points(1.5)
		marks.Shape = plotutil.Shape(i)
		p.Add(line, marks)
		p.Legend.Add(l.label, line, marks)
	}
	if lo, hi, ok := yRange(lines); ok {
		p.Y.Min, p.Y.Max = lo, hi
	}
	placeLegend(p, lines)
	c := vgsvg.New(20*vg.Centimeter, 12*vg.Centimeter)
	p.Draw(draw.New(c))
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// yRange returns the Y axis's range for lines: from zero when no value
// is below it (a rate or a count starts from zero), else from the lowest
// band; to a twentieth of the range above the highest band, so that no
// band touches the frame under the title; one unit tall when every value
// is the same (no OOM at any point). ok is false when the lines have no
// point.
func yRange(lines []*plotLine) (lo, hi float64, ok bool) {
	lowest, highest := math.Inf(1), math.Inf(-1)
	for _, l := range lines {
		for j := range l.x {
			lowest, highest = min(lowest, l.lo[j]), max(highest, l.hi[j])
		}
	}
	if math.IsInf(lowest, 1) {
		return 0, 0, false
	}
	lo = min(lowest, 0)
	if !(highest > lo) {
		return lo, lo + 1, true
	}
	return lo, highest + (highest-lo)/20, true
}

// placeLegend puts the legend in the corner of the plot that the lines'
// points and bands leave emptiest (top right on a tie).
func placeLegend(p *plot.Plot, lines []*plotLine) {
	xmin, xmax, ymin, ymax := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, l := range lines {
		for j := range l.x {
			xmin, xmax = min(xmin, l.x[j]), max(xmax, l.x[j])
			ymin, ymax = min(ymin, l.lo[j]), max(ymax, l.hi[j])
		}
	}
	if p.Y.Min == 0 {
		ymin = min(ymin, 0)
	}
	if !(xmax > xmin) || !(ymax > ymin) {
		p.Legend.Top = true
		return
	}
	type corner struct{ top, left bool }
	count := map[corner]int{}
	for _, l := range lines {
		for j := range l.x {
			x := (l.x[j] - xmin) / (xmax - xmin)
			for _, y := range []float64{l.lo[j], l.mean[j], l.hi[j]} {
				y = (y - ymin) / (ymax - ymin)
				if (x < 0.4 || x > 0.6) && (y < 0.4 || y > 0.6) {
					count[corner{top: y > 0.6, left: x < 0.4}]++
				}
			}
		}
	}
	best := corner{top: true}
	for _, c := range []corner{{true, true}, {false, false}, {false, true}} {
		if count[c] < count[best] {
			best = c
		}
	}
	p.Legend.Top, p.Legend.Left = best.top, best.left
	p.Legend.XOffs, p.Legend.YOffs = -vg.Millimeter*3, -vg.Millimeter*3
	if best.left {
		p.Legend.XOffs = vg.Millimeter * 3
	}
	if !best.top {
		p.Legend.YOffs = vg.Millimeter * 3
	}
}
