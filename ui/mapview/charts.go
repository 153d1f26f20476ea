package mapview

// charts.go draws each column's time-series charts in a strip between the
// header and the map: one small area chart per series, side by side, each
// labelled with its latest value. A chart's scales are shared by every
// column (time from 0 to the furthest point of any variant, values from 0
// to a round number above the largest of any variant), so the variants'
// charts compare at a glance the way their maps do.
//
// The points come from the runs' samples, taken at fixed simulated times
// (ui/app/series.go): the same run draws the same charts whatever the
// wall clock did.

import (
	"math"
	"strconv"

	"github.com/pagesim/pagesim/engine/sim"
)

// Chart is one time series of a panel.
type Chart struct {
	// Name is the short label drawn before the latest value ("psi10").
	Name string
	// Unit follows the value ("%", "/s").
	Unit  string
	Color RGB
	// Points are in time order; each value holds from the previous
	// point's time (or 0) to its own.
	Points []Point
}

// Point is one value at a simulated time.
type Point struct {
	T sim.Time
	V float64
}

// chartScale is a chart's shared scale: the time axis ends at T, the
// value axis at V.
type chartScale struct {
	T sim.Time
	V float64
}

const (
	chartH      = 14 + chartPlotH + 2 // label row, plot, gap
	chartPlotH  = 34
	chartGap    = 6
	chartLabelH = 14
)

// chartScales computes each chart's shared scale over the columns.
func chartScales(charts [][]Chart, dst []chartScale) []chartScale {
	dst = dst[:0]
	if len(charts) == 0 {
		return dst
	}
	for k := range charts[0] {
		var s chartScale
		for _, cs := range charts {
			if k >= len(cs) {
				continue
			}
			for _, p := range cs[k].Points {
				s.T = max(s.T, p.T)
				s.V = max(s.V, p.V)
			}
		}
		s.T = max(s.T, sim.Second)
		s.V = NiceCeil(s.V)
		dst = append(dst, s)
	}
	return dst
}

// NiceCeil returns the smallest of 1, 2 and 5 times a power of ten that is
// at least v (1 for v <= 0).
func NiceCeil(v float64) float64 {
	if v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v*(1-1e-12) {
			return m * p
		}
	}
	return 10 * p
}

// FormatValue prints a chart value in a few characters: 0, 0.25, 3.5, 42,
// 1.5k, 230k, 1.2M.
func FormatValue(v float64) string {
	a := math.Abs(v)
	switch {
	case a == 0:
		return "0"
	case a < 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case a < 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a < 1000:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a < 10e3:
		return strconv.FormatFloat(v/1e3, 'f', 1, 64) + "k"
	case a < 1e6:
		return strconv.FormatFloat(v/1e3, 'f', 0, 64) + "k"
	case a < 10e6:
		return strconv.FormatFloat(v/1e6, 'f', 1, 64) + "M"
	}
	return strconv.FormatFloat(v/1e6, 'f', 0, 64) + "M"
}

// ChartRect returns the plot area of chart k of column col (empty if the
// last Render drew no such chart).
func (r *Raster) ChartRect(col, k int) Rect {
	n := r.lay.charts
	if k >= n || col >= r.ncols {
		return Rect{}
	}
	x0 := col * (r.colW + colGap)
	w := (r.colW - (n-1)*chartGap) / n
	cx := x0 + k*(w+chartGap)
	y := r.chartsY + chartLabelH
	return Rect{cx, y, cx + w, min(y+chartPlotH, r.headerH)}
}

func (r *Raster) drawCharts(c int) {
	x0 := c * (r.colW + colGap)
	clip := Rect{x0, 0, x0 + r.colW, r.headerH}
	for k, ch := range r.charts[c] {
		if k >= r.lay.charts || k >= len(r.scales) {
			break
		}
		plot := r.ChartRect(c, k)
		if plot.X1-plot.X0 < 8 || plot.Y1 <= plot.Y0 {
			continue
		}
		sc := r.scales[k]
		// The label: name and latest value on the left in the chart's
		// colour, the top of the scale on the right if it fits.
		left := ch.Name
		if n := len(ch.Points); n > 0 {
			left += " " + FormatValue(ch.Points[n-1].V) + ch.Unit
		}
		lclip := Rect{plot.X0, plot.Y0 - chartLabelH, plot.X1, plot.Y0}
		r.labelColor(plot.X0, plot.Y0-chartLabelH-textTop, left, ch.Color, Rect{lclip.X0, 0, lclip.X1, lclip.Y1})
		right := FormatValue(sc.V)
		if rx := plot.X1 - TextWidth(right); rx > plot.X0+TextWidth(left)+CharW {
			r.labelColor(rx, plot.Y0-chartLabelH-textTop, right, Muted, Rect{lclip.X0, 0, lclip.X1, lclip.Y1})
		}
		r.fill(plot.X0, plot.Y0, plot.X1, plot.Y1, ChartTrack.pixel(), clip)
		r.fill(plot.X0, plot.Y0, plot.X1, plot.Y0+1, ChartTopLine.pixel(), clip)
		w, h := plot.X1-plot.X0, plot.Y1-plot.Y0
		var prev sim.Time
		col := ch.Color.pixel()
		for _, p := range ch.Points {
			xa := plot.X0 + int(float64(prev)/float64(sc.T)*float64(w))
			xb := plot.X0 + int(float64(p.T)/float64(sc.T)*float64(w))
			prev = p.T
			if xb == xa {
				xb = xa + 1
			}
			bh := int(math.Ceil(p.V / sc.V * float64(h-1)))
			if p.V > 0 {
				bh = max(bh, 1)
			}
			bh = min(max(bh, 0), h-1)
			r.fill(xa, plot.Y1-bh, xb, plot.Y1, col, plot)
		}
	}
}
