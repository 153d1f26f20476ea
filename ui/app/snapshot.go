package app

import (
	"slices"
	"strings"

	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/scenario"
	"github.com/pagesim/pagesim/engine/sim"
)

// Snapshot is an immutable copy of what the panel shows. The owner
// goroutine builds a new one whenever something changed; readers on other
// goroutines never see it change.
type Snapshot struct {
	// Seq increases with every snapshot published.
	Seq uint64

	Scenarios []ScenarioItem
	// Spec is the current scenario (fixed once registered, so safe to
	// share).
	Spec  *scenario.Spec
	State State
	// Link is the permalink of State (without '#'); EmbedLink the same
	// state for an iframe (&embed, no presentation mode) and FullLink the
	// full page's (no embed).
	Link, EmbedLink, FullLink string

	// Message is a refused permalink's explanation ("" = none).
	Message string
	// RunError says why the runs did not start ("" = they did).
	RunError string
	// ParamErrors maps parameter names to the last refused value's error;
	// BadValues to the refused value a link gave them.
	ParamErrors map[string]string
	BadValues   map[string]string
	// History counts the user's changes of what runs: a new value is a
	// new entry of the browser's history.
	History uint64

	Playing   bool
	Restoring bool
	Ended     bool
	Progress  float64 // restore progress 0..1
	Now       sim.Time
	// Shown is the time the page shows (Controller.Shown): with a paused
	// clock, the link's t.
	Shown    sim.Time
	Duration sim.Time // 0 = unbounded
	// ActualSpeed is the simulated seconds per wall second achieved.
	ActualSpeed float64
	StepSize    sim.Time

	// Metrics are the scenario's metrics for the current values, in
	// print order (Spec.MetricsOf), the headline ones marked.
	Metrics []scenario.Metric
	// Charts names the counters charted under each variant (after PSI).
	Charts []string

	// Focus is the variant a narrow screen shows alone (an index into
	// Live).
	Focus int

	// Toggles lists every variant of the scenario with its selection.
	Toggles []VariantToggle
	// Live holds the selected variants' live numbers, in order.
	Live []VariantLive

	// Result is the result table as `pagesim run` prints it.
	Result Report
	// ResultFinal reports whether every run has finished, so Result
	// holds the final numbers.
	ResultFinal bool
	// Command is the `pagesim run` command line that prints Result
	// once the runs are finished.
	Command string
	// ResultError says why the result could not be formatted ("" = it
	// could).
	ResultError string
}

// ScenarioItem is one entry of the scenario picker.
type ScenarioItem struct{ Name, Title string }

// Report is a result table in the forms `pagesim run` prints.
type Report struct {
	// Text is the cover-letter form (`--format text`).
	Text string
	// JSON is the JSON object with its final newline (`--format json`).
	JSON string
}

// Title is a scenario's title as the picker shows it, with its seed.
func Title(s *scenario.Spec) string {
	if s.Seed == "" {
		return s.Title
	}
	return s.Title + " (seed " + s.Seed + ")"
}

// DefaultVmstat is the live counter list of a scenario that names none;
// its first two events are charted (pgalloc summed over the zones).
var DefaultVmstat = []string{
	"compact_stall", "pgalloc_normal", "pgfree", "allocstall_normal",
	"compact_success", "compact_fail", "thp_fault_alloc", "thp_fault_fallback", "nr_free_pages",
}

// VariantToggle is one variant checkbox.
type VariantToggle struct {
	Name, Summary string
	Selected      bool
}

// VariantLive is one selected variant's live numbers.
type VariantLive struct {
	Variant string
	Now     sim.Time
	// Phase names the run's current phase ("2/4: 34 GB"); Status is
	// the run's own account of where it is ("" if it has none).
	Phase, Status string
	// PhaseStart is when the current phase's machine booted; Done
	// whether the run has ended.
	PhaseStart sim.Time
	Done       bool
	// Results are the finished phases' results; Metrics the metrics
	// measured so far (a phase not run yet has none).
	Results []scenario.PhaseResult
	Metrics map[string]float64
	// Vmstat holds the scenario's counters (LiveCounters): events summed
	// over the run's machines, gauges of the current one.
	Vmstat []Counter
	// Trace is the run's tracepoint log (its latest TraceKeep events).
	Trace TraceLog
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
		Spec:        c.spec,
		State:       c.State(),
		Link:        c.Fragment(),
		EmbedLink:   c.linkWith(true),
		FullLink:    c.linkWith(false),
		Message:     c.message,
		RunError:    c.runErr,
		Playing:     c.playing,
		Restoring:   c.Restoring(),
		Ended:       c.Ended(),
		Progress:    c.Progress(),
		Now:         c.Now(),
		Shown:       c.Shown(),
		Duration:    c.duration(),
		ActualSpeed: c.actual,
		StepSize:    c.StepSize(),
		ParamErrors: map[string]string{},
		BadValues:   map[string]string{},
		History:     c.history,
		Focus:       c.Focus(),
	}
	for k, v := range c.paramErr {
		s.ParamErrors[k] = v
	}
	for k, v := range c.badValues {
		s.BadValues[k] = v
	}
	for _, sp := range c.cat.Scenarios() {
		s.Scenarios = append(s.Scenarios, ScenarioItem{Name: sp.ID, Title: Title(sp)})
	}
	for _, v := range c.spec.Variants {
		s.Toggles = append(s.Toggles, VariantToggle{Name: v.Name, Summary: v.Help, Selected: slices.Contains(c.st.Variants, v.Name)})
	}
	refs := counterRefs(LiveCounters(c.spec))
	s.Charts = ChartNames(c.spec)
	if st, err := c.spec.ParseMap(c.st.Params, c.st.Knobs); err == nil {
		s.Metrics = c.spec.MetricsOf(st.Values)
	}
	for i, r := range c.runs {
		v := c.views[i]
		live := VariantLive{Variant: r.Variant(), Now: v.Now(), Phase: v.Phase(), Status: v.Status(),
			PhaseStart: v.PhaseStart(), Done: v.Done(),
			Results: slices.Clone(v.Results()), Metrics: r.Metrics(), TraceWritten: v.TraceWritten()}
		for _, ref := range refs {
			live.Vmstat = append(live.Vmstat, Counter{Name: ref.Label, Value: ref.read(v)})
		}
		c.traces[i].fill(v)
		live.Trace = c.traces[i].log(live.TraceWritten)
		live.PSISome10 = v.PSIAvg(false)[0]
		live.Samples = slices.Clone(c.samplers[i].samples)
		live.LastStall, _ = v.LastStall()
		live.Nodes = v.NodeViews()
		s.Live = append(s.Live, live)
	}
	if len(c.runs) > 0 {
		s.ResultFinal = c.runsEnded()
		r, err := c.report()
		if err != nil {
			s.ResultError = err.Error()
		}
		s.Result = r
		s.Command = c.Command()
	}
	return s
}

// report is what `pagesim run` prints for the same seed and settings, one
// run per variant, made from the runs as they stand by the scenario's own
// report: once every run is done, Text is byte for byte `pagesim run
// --format text` and JSON `--format json`; before that the table holds
// the numbers measured so far.
func (c *Controller) report() (Report, error) {
	st, err := c.spec.ParseMap(c.st.Params, c.st.Knobs)
	if err != nil {
		return Report{}, err
	}
	res := c.spec.NewResult(c.st.Seed, 1, st)
	for _, r := range c.runs {
		res.AddVariant(r.Variant(), []*scenario.Run{r})
	}
	b, err := res.JSON()
	if err != nil {
		return Report{}, err
	}
	text := res.Text()
	if !c.runsEnded() {
		// Only a finished table is the command's; one copied before
		// says so first.
		text = "partial, at t = " + FormatTime(c.Shown()) + " s: the runs have not finished, " +
			scenario.NotYet + " marks what is still to come\n" + text
	}
	return Report{Text: text, JSON: string(b) + "\n"}, nil
}

// Command returns the `pagesim run` command line that prints the result
// of the current state once the runs are finished: the scenario, the seed,
// the variants unless they are the default ones, every parameter that
// differs from its default and every knob. Values are shell-quoted when
// they need it.
func (c *Controller) Command() string {
	args := CommandArgs(c.spec, c.st)
	for i, a := range args {
		args[i] = shellQuote(a)
	}
	return "pagesim " + strings.Join(args, " ")
}

// commandOf is Command for a state other than the current one (a
// refused link's, review finding F44), or "pagesim run" when its
// scenario is unknown.
func (c *Controller) commandOf(st State) string {
	in, ok := c.cat.Lookup(st.Scenario)
	if !ok {
		return "pagesim run"
	}
	args := CommandArgs(in, st)
	for i, a := range args {
		args[i] = shellQuote(a)
	}
	return "pagesim " + strings.Join(args, " ")
}

// CommandArgs returns the arguments of `pagesim` (without the program
// name) that run st: run NAME --seed N [--variant V]... [--set K=V]...
func CommandArgs(in *scenario.Spec, st State) []string {
	args := []string{"run", st.Scenario, "--seed", formatUint(st.Seed)}
	if !slices.Equal(st.Variants, in.DefaultVariants()) {
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
