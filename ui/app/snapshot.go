package app

import (
	"slices"

	"github.com/pagesim/pagesim/engine/sim"
)

// Snapshot is an immutable copy of what the panel shows. The owner
// goroutine builds a new one whenever something changed; readers on other
// goroutines never see it change.
type Snapshot struct {
	// Seq increases with every snapshot published.
	Seq uint64

	Scenarios []ScenarioItem
	Info      Info
	State     State
	// Link is the permalink of State (without '#').
	Link string

	// Message is a refused permalink's explanation ("" = none).
	Message string
	// RunError says why the runs did not start ("" = they did).
	RunError string
	// ParamErrors maps parameter names to the last refused value's error.
	ParamErrors map[string]string

	Playing   bool
	Restoring bool
	Ended     bool
	Progress  float64 // restore progress 0..1
	Now       sim.Time
	Duration  sim.Time // 0 = unbounded
	// ActualSpeed is the simulated seconds per wall second achieved.
	ActualSpeed float64
	StepSize    sim.Time

	// Toggles lists every variant of the scenario with its selection.
	Toggles []VariantToggle
	// Live holds the selected variants' live numbers, in order.
	Live []VariantLive

	Table     Table
	TableText string
}

// ScenarioItem is one entry of the scenario picker.
type ScenarioItem struct{ Name, Title string }

// VariantToggle is one variant checkbox.
type VariantToggle struct {
	Name, Summary string
	Selected      bool
}

// VariantLive is one selected variant's live numbers.
type VariantLive struct {
	Variant string
	Now     sim.Time
	// Status is the run's own account of where it is ("" if it has
	// none; see Statuser).
	Status string
	Vmstat []Counter
	// Trace holds the latest tracepoint lines, oldest first.
	Trace []string
	// TraceWritten counts every event the run's trace recorded.
	TraceWritten uint64
}

// Counter is a named /proc/vmstat value.
type Counter struct {
	Name  string
	Value int64
}

// Snapshot builds a snapshot of the controller's state. seq is stored in
// Seq.
func (c *Controller) Snapshot(seq uint64) *Snapshot {
	s := &Snapshot{
		Seq:         seq,
		Info:        c.info,
		State:       c.State(),
		Link:        c.Fragment(),
		Message:     c.message,
		RunError:    c.runErr,
		Playing:     c.playing,
		Restoring:   c.Restoring(),
		Ended:       c.Ended(),
		Progress:    c.Progress(),
		Now:         c.Now(),
		Duration:    c.duration(),
		ActualSpeed: c.actual,
		StepSize:    c.StepSize(),
		ParamErrors: map[string]string{},
	}
	for k, v := range c.paramErr {
		s.ParamErrors[k] = v
	}
	for _, in := range c.cat.Infos() {
		s.Scenarios = append(s.Scenarios, ScenarioItem{Name: in.Name, Title: in.Title})
	}
	for _, v := range c.info.Variants {
		s.Toggles = append(s.Toggles, VariantToggle{Name: v.Name, Summary: v.Summary, Selected: slices.Contains(c.st.Variants, v.Name)})
	}
	names := c.info.Vmstat
	if names == nil {
		names = DefaultVmstat
	}
	for i, r := range c.runs {
		m := r.Run.Machine()
		live := VariantLive{Variant: r.Variant, Now: r.Run.Now(), TraceWritten: m.Trace.Written}
		if st, ok := r.Run.(Statuser); ok {
			live.Status = st.Status()
		}
		for _, n := range names {
			v, _ := m.VMStatValue(n)
			live.Vmstat = append(live.Vmstat, Counter{Name: n, Value: v})
		}
		tc := &c.traceCache[i]
		if tc.lines == nil || tc.written != m.Trace.Written {
			ev := m.Trace.Events()
			if len(ev) > c.opt.TraceLines {
				ev = ev[len(ev)-c.opt.TraceLines:]
			}
			tc.lines = make([]string, 0, len(ev))
			for j := range ev {
				tc.lines = append(tc.lines, ev[j].String())
			}
			tc.written = m.Trace.Written
		}
		live.Trace = tc.lines
		s.Live = append(s.Live, live)
	}
	if len(c.runs) > 0 {
		if rep, ok := c.scen.(Reporter); ok {
			s.Table = rep.Report(c.runs)
		} else {
			s.Table = metricTable(c.info.Title+" at "+FormatSeconds(s.Now)+" s, seed "+formatUint(c.st.Seed), c.runs)
		}
		s.TableText = s.Table.Text()
	}
	return s
}
