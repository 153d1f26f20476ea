package mapview

import (
	"strconv"
	"strings"

	"github.com/pagesim/pagesim/engine/scenario"
	"github.com/pagesim/pagesim/ui/app"
)

// PanelsOf returns what the page draws for a controller's runs: one column
// per selected variant with its title, phase and simulated time, the
// finished phases' headline results (or, for a run that reports none, its
// headline metrics once it is done), its machine and its charts (PSI some
// avg10, then the scenario's key counters: their rates, their totals).
// Only the controller's owner goroutine may call it.
func PanelsOf(ctl *app.Controller) []Panel {
	if ctl.ScriptOn() {
		return scriptPanels(ctl)
	}
	var ps []Panel
	names := app.ChartNames(ctl.Spec())
	var metrics []scenario.Metric
	if st, err := ctl.Spec().ParseMap(ctl.State().Params, ctl.State().Knobs); err == nil {
		metrics = ctl.Spec().MetricsOf(st.Values)
	}
	for i, v := range ctl.Views() {
		p := Panel{
			Title: v.Variant(), Src: v, Now: v.Now(), Phase: v.Phase(), PhaseStart: v.PhaseStart(),
			Phases: v.PhaseCount(), Done: v.Done(),
			Charts: ChartsOf(ctl.Samples(i), names),
		}
		if p.Phases <= 1 {
			p.Phase = ""
		}
		for _, res := range v.Results() {
			if res.Headline != "" {
				p.Results = append(p.Results, ASCII(res.Headline))
			}
		}
		if len(p.Results) == 0 && p.Done {
			m := ctl.Runs()[i].Metrics()
			for _, mt := range metrics {
				if val, ok := m[mt.Name]; mt.Headline && ok {
					p.Results = append(p.Results, mt.Name+": "+strconv.FormatFloat(val, 'f', -1, 64))
				}
			}
		}
		ps = append(ps, p)
	}
	return ps
}

// scriptPanels is the Script mode's column: the machine the script is on
// (none before its first machine; the imported machine before a script
// has run on it), titled as LiveView.Title says, its time on the
// script's clock and, once it has booted more than one, which machine it
// is on and when that one booted.
func scriptPanels(ctl *app.Controller) []Panel {
	v := ctl.ScriptLive()
	if v.M == nil {
		return nil
	}
	p := Panel{Title: v.Title(), Src: v.M, Now: v.Now, PhaseStart: v.Offset, Phases: v.Machines, Done: v.Ended}
	if v.Machines > 1 {
		p.Phase = "machine " + strconv.Itoa(v.Machines)
	}
	return []Panel{p}
}

// ASCII replaces what the map's font cannot print ("…" becomes "...").
func ASCII(s string) string {
	s = strings.ReplaceAll(s, "…", "...")
	s = strings.ReplaceAll(s, "±", "+-")
	return s
}

// ChartsOf turns a run's samples into its charts: "psi10" (PSI memory
// some avg10, percent), then one per charted counter (names, in the
// samples' order): its rate per simulated second, its total.
func ChartsOf(samples []app.Sample, names []string) []Chart {
	out := []Chart{{Name: "psi10", Unit: "%", Color: ChartPSI, Points: make([]Point, len(samples))}}
	for k, n := range names {
		col := ChartStall
		if k == 1 {
			col = ChartAlloc
		}
		out = append(out, Chart{Name: n, Unit: "/s", Color: col, Counter: k + 1, Points: make([]Point, len(samples))})
	}
	for i, s := range samples {
		out[0].Points[i] = Point{s.T, s.PSISome10}
		for k := range names {
			if k < len(s.Rates) {
				out[k+1].Points[i] = Point{s.T, s.Rates[k]}
				out[k+1].Total = s.Totals[k]
			}
		}
	}
	return out
}
