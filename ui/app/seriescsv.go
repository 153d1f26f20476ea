package app

// seriescsv.go writes every sampled series of the runs (series.go) as
// CSV, for a spreadsheet, R or pandas: what the page's charts draw, with
// every point they have.

import (
	"encoding/csv"
	"io"
	"strconv"
)

// SeriesName is the name the page gives the series' CSV file.
func (c *Controller) SeriesName() string { return c.st.Scenario + "-series.csv" }

// SeriesHeader is the CSV's header for names, the charted counters:
// variant, t_s (the sample's simulated time in seconds),
// psi_some_avg10 (percent), then for each counter its events per
// simulated second over the interval ending at t_s (NAME_per_s) and its
// total at t_s (NAME).
func SeriesHeader(names []string) []string {
	h := []string{"variant", "t_s", "psi_some_avg10"}
	for _, n := range names {
		h = append(h, n+"_per_s", n)
	}
	return h
}

// WriteSeriesCSV writes the series of every run shown so far: the
// header, then one row per sample, variant by variant in the page's
// order, each in time order. Floats are written in the shortest form
// that reads back to the same value.
func (c *Controller) WriteSeriesCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	names := ChartNames(c.spec)
	if err := cw.Write(SeriesHeader(names)); err != nil {
		return err
	}
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	for i, r := range c.runs {
		for _, s := range c.samplers[i].samples {
			row := []string{r.Variant(), f(s.T.Seconds()), f(s.PSISome10)}
			for k := range names {
				row = append(row, f(s.Rates[k]), strconv.FormatUint(s.Totals[k], 10))
			}
			if err := cw.Write(row); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// MapRequest asks for the map as the canvas shows it: the view that
// draws it calls it, on the owner goroutine, with the PNG of the latest
// frame (or why there is none).
type MapRequest func(png []byte, err error)

// RequestMap queues a MapRequest for the view (TakeMapRequests).
func (c *Controller) RequestMap(f MapRequest) { c.mapRequests = append(c.mapRequests, f) }

// TakeMapRequests returns the queued MapRequests and forgets them; the
// view that draws the map answers them after its next frame.
func (c *Controller) TakeMapRequests() []MapRequest {
	q := c.mapRequests
	c.mapRequests = nil
	return q
}

// MapName is the name the page gives the map's PNG: the scenario's, or
// the script's while the map shows it.
func (c *Controller) MapName() string {
	if c.scriptOn {
		return "script-map.png"
	}
	return c.st.Scenario + "-map.png"
}
