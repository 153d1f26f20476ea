package mapview

// charts.go draws each column's time-series charts at the bottom of its
// header: one small area chart per series, as many side by side as their
// labels allow (in rows on a narrow column), each labelled with its
// latest value or, for a counter, its total so far: the number the result
// table counts. A chart's scales are shared by every
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
	"strings"

	"github.com/pagesim/pagesim/engine/sim"
)

// Chart is one time series of a panel.
type Chart struct {
	// Name is the short label drawn before the latest value ("psi10",
	// "allocstall_movable").
	Name string
	// Unit follows the value ("%", "/s").
	Unit string
	// Color is the chart's colour in the Dark scheme; the raster uses
	// its scheme's (ChartPSI, or Charts[Counter-1]).
	Color RGB
	// Counter is 0 for PSI, k for the scheme's k-th counter colour: a
	// counter's chart plots its rate and its label says its Total.
	Counter int
	Total   uint64
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

// Chart geometry in header units (a sixteenth of the text line): a row
// of charts is its label's lines, the plot and a gap.
const (
	chartPlotU  = 34
	chartGap    = 6
	chartLabelU = 16
)

// chartRowCSS is the height of a row of charts, in CSS px.
func (r *Raster) chartRowCSS() float64 {
	return float64(r.lay.chartLines*chartLabelU+r.lay.plotU+4) * r.u()
}

// chartLabelTemplate is the widest a chart's label gets: its name and
// nine digits of total, or a PSI percentage.
func chartLabelTemplate(ch Chart) string {
	if ch.Counter > 0 {
		return ch.Name + " 000000000"
	}
	return ch.Name + " 100.00%"
}

// chartLabel is the chart's label now.
func chartLabel(ch Chart) string {
	if ch.Counter > 0 {
		return ch.Name + " " + strconv.FormatUint(ch.Total, 10)
	}
	if n := len(ch.Points); n > 0 {
		return ch.Name + " " + FormatValue(ch.Points[n-1].V) + ch.Unit
	}
	return ch.Name
}

// chartColor is the chart's colour in the raster's scheme.
func (r *Raster) chartColor(ch Chart) RGB {
	if ch.Counter > 0 && ch.Counter <= len(r.sc.Charts) {
		return r.sc.Charts[ch.Counter-1]
	}
	if ch.Counter == 0 {
		return r.sc.ChartPSI
	}
	return ch.Color
}

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
	n, per := r.lay.charts, r.lay.chartsPer
	if k >= n || col >= r.ncols || per == 0 {
		return Rect{}
	}
	u := r.u()
	x0, _ := r.colX(col)
	w := (r.lay.colWCSS - 4*u - float64(per-1)*chartGap*u) / float64(per)
	row, i := k/per, k%per
	cx := float64(x0)/r.Scale + 2*u + float64(i)*(w+chartGap*u)
	y := r.lay.chartsCSS + float64(row)*r.chartRowCSS() + float64(r.lay.chartLines*chartLabelU)*u
	return Rect{r.d(cx), r.d(y), r.d(cx + w), min(r.d(y+float64(r.lay.plotU)*u), r.headerH)}
}

func (r *Raster) drawCharts(c int) {
	x0, x1 := r.colX(c)
	clip := Rect{x0, 0, x1, r.headerH}
	txt := r.style(r.textCSS())
	u := r.u()
	for k, ch := range r.charts[c] {
		if k >= r.lay.charts || k >= len(r.scales) {
			break
		}
		plot := r.ChartRect(c, k)
		if plot.X1-plot.X0 < r.d(8) || plot.Y1 <= plot.Y0 {
			r.Clipped = append(r.Clipped, ch.Name)
			continue
		}
		sc := r.scales[k]
		col := r.chartColor(ch)
		// The label: name and total (or latest value) on the left in the
		// chart's colour (the total on a line of its own on narrow
		// columns), the top of the scale on the right if it fits.
		left := chartLabel(ch)
		ly := plot.Y0 - r.d(float64(r.lay.chartLines*chartLabelU)*u)
		lclip := Rect{plot.X0, 0, plot.X1, plot.Y0}
		var end int
		ry := ly
		if r.lay.chartLines == 2 {
			name, rest, _ := strings.Cut(left, " ")
			r.text(plot.X0, ly, name, txt, col, lclip, true)
			ry = ly + r.d(chartLabelU*u)
			end = r.text(plot.X0, ry, rest, txt, col, lclip, true)
		} else {
			end = r.text(plot.X0, ly, left, txt, col, lclip, true)
		}
		right := FormatValue(sc.V)
		if ch.Counter > 0 {
			right += "/s"
		}
		if rx := plot.X1 - r.textW(right, txt); rx > end+r.d(txt.advCSS) {
			r.text(rx, ry, right, txt, r.sc.Muted, lclip, false)
		}
		r.fill(plot.X0, plot.Y0, plot.X1, plot.Y1, r.sc.ChartTrack.pixel(), clip)
		r.fill(plot.X0, plot.Y0, plot.X1, plot.Y0+max(1, r.d(u)), r.sc.ChartTopLine.pixel(), clip)
		w, h := plot.X1-plot.X0, plot.Y1-plot.Y0
		var prev sim.Time
		px := col.pixel()
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
			r.fill(xa, plot.Y1-bh, xb, plot.Y1, px, plot)
		}
	}
	_ = x1
}
