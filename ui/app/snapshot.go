package app

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/pagesim/pagesim/engine/mm"
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

	// Result is the result table as `pagesim run` prints it (for
	// scenarios it runs) or one row per metric (the playground).
	Result Report
	// ResultFinal reports whether every run has finished, so Result
	// holds the final numbers.
	ResultFinal bool
	// Command is the `pagesim run` command line that prints Result
	// once the runs are finished ("" for scenarios the command does
	// not know).
	Command string
	// ResultError says why the result could not be formatted ("" = it
	// could).
	ResultError string
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
	// PSISome10 is /proc/pressure/memory "some" avg10 now (percent).
	PSISome10 float64
	// Samples is the run's time series (see series.go).
	Samples []Sample
	// LastStall is the slow-path decision trace of the latest
	// allocation that stalled in direct reclaim or compaction ("" if
	// none has).
	LastStall string
	// Nodes are the run's kswapd and kcompactd states, per node.
	Nodes []mm.NodeView
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
		live.PSISome10 = m.PSIAvg(false)[0]
		live.Samples = slices.Clone(c.samplers[i].samples)
		live.LastStall, _ = runLastStall(r.Run)
		live.Nodes = m.NodeViews()
		s.Live = append(s.Live, live)
	}
	if len(c.runs) > 0 {
		s.ResultFinal = c.Ended()
		cfg := ReportConfig{Seed: c.st.Seed, Params: copyParams(c.st.Params), Knobs: slices.Clone(c.st.Knobs)}
		if rep, ok := c.scen.(Reporter); ok {
			r, err := rep.Report(cfg, c.runs)
			if err != nil {
				s.ResultError = err.Error()
			}
			s.Result = r
			s.Command = c.Command()
		} else {
			t := metricTable(c.info.Title+" at "+FormatSeconds(s.Now)+" s, seed "+formatUint(c.st.Seed), c.runs)
			s.Result = Report{Text: t.Text(), JSON: metricJSON(c.info.Name, cfg, c.runs)}
		}
	}
	return s
}

// Command returns the `pagesim run` command line that prints the result
// of the current state once the runs are finished: the scenario, the seed,
// the variants unless they are the default ones, every parameter that
// differs from its default and every knob. Values are shell-quoted when
// they need it.
func (c *Controller) Command() string {
	args := CommandArgs(c.info, c.st)
	for i, a := range args {
		args[i] = shellQuote(a)
	}
	return "pagesim " + strings.Join(args, " ")
}

// CommandArgs returns the arguments of `pagesim` (without the program
// name) that run st: run NAME --seed N [--variant V]... [--set K=V]...
func CommandArgs(in Info, st State) []string {
	args := []string{"run", st.Scenario, "--seed", formatUint(st.Seed)}
	if !slices.Equal(st.Variants, defaultVariants(in)) {
		for _, v := range st.Variants {
			args = append(args, "--variant", v)
		}
	}
	for _, p := range in.Params {
		if v, ok := st.Params[p.Name]; ok && v != p.Default {
			args = append(args, "--set", p.Name+"="+v)
		}
	}
	for _, k := range st.Knobs {
		args = append(args, "--set", k.Name+"="+k.Value)
	}
	return args
}

// shellQuote quotes s for a POSIX shell if it needs quoting.
func shellQuote(s string) string {
	safe := s != ""
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.,=/:+@%", r)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// metricJSON is the playground's result as JSON: the scenario, seed,
// parameters and knobs, and each variant's metrics (keys sorted).
func metricJSON(name string, cfg ReportConfig, runs []NamedRun) string {
	type variant struct {
		Name    string             `json:"name"`
		Metrics map[string]float64 `json:"metrics"`
	}
	out := struct {
		Scenario string            `json:"scenario"`
		Seed     uint64            `json:"seed"`
		Params   map[string]string `json:"params"`
		Variants []variant         `json:"variants"`
	}{Scenario: name, Seed: cfg.Seed, Params: cfg.Params}
	for _, k := range cfg.Knobs {
		out.Params[k.Name] = k.Value
	}
	for _, r := range runs {
		v := variant{Name: r.Variant, Metrics: map[string]float64{}}
		for _, m := range r.Run.Results() {
			v.Metrics[m.Name] = m.Value
		}
		out.Variants = append(out.Variants, v)
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return ""
	}
	return string(b) + "\n"
}
