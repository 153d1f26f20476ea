package mapview

import (
	"github.com/pagesim/pagesim/engine/sim"
	"github.com/pagesim/pagesim/ui/app"
)

// PanelsOf returns what the page draws for a controller's runs: one column
// per selected variant with its title and simulated time, its machine and
// its charts (PSI some avg10, compact_stall per second, pages allocated
// per second). Only the controller's owner goroutine may call it.
func PanelsOf(ctl *app.Controller) []Panel {
	var ps []Panel
	for i, v := range ctl.Views() {
		now := v.Now()
		ps = append(ps, Panel{
			Title:  v.Variant() + "   t = " + app.FormatSeconds(now-now%sim.Millisecond) + " s",
			Src:    v,
			Charts: ChartsOf(ctl.Samples(i)),
		})
	}
	return ps
}

// ChartsOf turns a run's samples into its three charts: "psi10" (PSI
// memory some avg10, percent), "stall" (compact_stall per simulated
// second) and "alloc" (pages allocated per simulated second).
func ChartsOf(samples []app.Sample) []Chart {
	psi := Chart{Name: "psi10", Unit: "%", Color: ChartPSI, Points: make([]Point, len(samples))}
	stall := Chart{Name: "stall", Unit: "/s", Color: ChartStall, Points: make([]Point, len(samples))}
	alloc := Chart{Name: "alloc", Unit: "/s", Color: ChartAlloc, Points: make([]Point, len(samples))}
	for i, s := range samples {
		psi.Points[i] = Point{s.T, s.PSISome10}
		stall.Points[i] = Point{s.T, s.CompactStallRate}
		alloc.Points[i] = Point{s.T, s.AllocRate}
	}
	return []Chart{psi, stall, alloc}
}
