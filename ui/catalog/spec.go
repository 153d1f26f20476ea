package catalog

// spec.go adapts engine/scenario's scenarios (scenario.Spec, the ones
// `pagesim run` and `pagesim scenarios` know) to the page's app.Scenario.
//
// The two interfaces differ in three ways the adapter bridges:
//
//   - scenario.Run.Advance takes a span of simulated time and reports
//     whether the run is finished; app.Run.Advance takes an absolute time
//     and a work bound. The adapter steps the scenario in slices of
//     StepSlice simulated time and counts each slice as StepCost units of
//     the bound, so the page's per-frame budget still holds. The scenario
//     guarantees the slicing does not change the outcome.
//   - A scenario may boot a fresh machine for each step (thp-thisnode
//     boots one per guest size), whose clock starts at 0. The page needs
//     one clock per variant, so the adapter adds the finished machines'
//     times: a variant's time is the simulated time it has run in all.
//   - A scenario's end is known only when it is reached: Duration is 0
//     until then, and the run's total time afterwards.
//
// Parameters are validated by the scenario's own parser (Spec.Parse), so
// the panel, the permalink and `pagesim run --set` accept and refuse the
// same values with the same messages. The result table is made by the
// scenario's own report (Spec.NewResult, Result.AddVariant, Result.Text and
// Result.JSON), so the page prints what `pagesim run` prints.

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/scenario"
	"github.com/pagesim/pagesim/engine/sim"
	"github.com/pagesim/pagesim/ui/app"
)

const (
	// StepSlice is the simulated time one call of scenario.Run.Advance
	// covers.
	StepSlice = 200 * sim.Microsecond
	// StepCost is what one slice counts against app.Run's event bound.
	StepCost = 64
)

// PageScale is the scale the page opens a scenario with when the scenario
// has a "scale" parameter: small enough that three variants' machines boot
// in a moment in a browser tab (docs/PERFORMANCE.md). The permalink spells
// it out, so the link still equals `pagesim run --set scale=...`.
const PageScale = "0.03"

// FromSpec returns the page's view of a scenario.
func FromSpec(s *scenario.Spec) app.Scenario { return specScenario{s} }

type specScenario struct{ s *scenario.Spec }

func (a specScenario) Info() app.Info {
	s := a.s
	in := app.Info{Name: s.ID, Title: s.Title + " (seed " + s.Seed + ")", Summary: s.Summary, Patch: s.Patch}
	for _, p := range s.Params {
		name := p.Name
		help := p.Help
		if p.Min != nil && p.Max != nil {
			help += " [" + fmtNum(*p.Min) + ", " + fmtNum(*p.Max) + "]"
		}
		if len(p.Choices) > 0 {
			help += " {" + strings.Join(p.Choices, ", ") + "}"
		}
		in.Params = append(in.Params, app.Param{Name: name, Default: p.Default, Help: help, Check: func(v string) error {
			_, err := s.Parse([]string{name + "=" + v})
			return err
		}})
	}
	for _, v := range s.Variants {
		in.Variants = append(in.Variants, app.VariantInfo{Name: v.Name, Summary: v.Help, Default: !v.Optional})
	}
	for _, p := range s.Params {
		if p.Name == "scale" && p.Default != PageScale {
			if _, err := s.Parse([]string{"scale=" + PageScale}); err == nil {
				in.PageParams = map[string]string{"scale": PageScale}
			}
		}
	}
	in.CheckKnob = func(name, value string) (string, error) {
		for _, p := range s.Params {
			if p.Name == name {
				return "", fmt.Errorf("%s is a parameter, not a kernel knob", name)
			}
		}
		st, err := s.Parse([]string{name + "=" + value})
		if err != nil {
			return "", err
		}
		if len(st.Knobs) != 1 {
			return "", fmt.Errorf("%s is not a kernel knob", name)
		}
		return st.Knobs[0].Name, nil
	}
	return in
}

func fmtNum(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// settings parses parameters and knobs with the scenario's parser, as
// `pagesim run --set` gives them.
func (a specScenario) settings(params map[string]string, knobs []app.Knob) (scenario.Settings, error) {
	var settings []string
	for _, p := range a.s.Params {
		if v, ok := params[p.Name]; ok {
			settings = append(settings, p.Name+"="+v)
		}
	}
	for _, k := range knobs {
		settings = append(settings, k.Name+"="+k.Value)
	}
	return a.s.Parse(settings)
}

// Report implements app.Reporter: the result `pagesim run` prints for the
// same seed and settings, one run per variant, built from the runs as they
// stand with the scenario's own report.
func (a specScenario) Report(cfg app.ReportConfig, runs []app.NamedRun) (app.Report, error) {
	st, err := a.settings(cfg.Params, cfg.Knobs)
	if err != nil {
		return app.Report{}, err
	}
	res := a.s.NewResult(cfg.Seed, 1, st)
	for _, r := range runs {
		sr, ok := r.Run.(*specRun)
		if !ok {
			return app.Report{}, fmt.Errorf("variant %s is not a run of %s", r.Variant, a.s.ID)
		}
		res.AddVariant(r.Variant, []scenario.Run{sr.r})
	}
	b, err := res.JSON()
	if err != nil {
		return app.Report{}, err
	}
	return app.Report{Text: res.Text(), JSON: string(b) + "\n"}, nil
}

func (a specScenario) NewRun(cfg app.RunConfig) (app.Run, error) {
	s := a.s
	st, err := a.settings(cfg.Params, cfg.Knobs)
	if err != nil {
		return nil, err
	}
	r, err := s.Start(scenario.Config{Variant: cfg.Variant, Params: st.Values, Knobs: append(append([]scenario.Knob(nil), s.Knobs...), st.Knobs...), Seed: cfg.Seed})
	if err != nil {
		return nil, err
	}
	var order []string
	if s.MetricsOf != nil {
		for _, m := range s.MetricsOf(st.Values) {
			order = append(order, m.Name)
		}
	}
	return &specRun{r: r, m: r.Machine(), order: order}, nil
}

type specRun struct {
	r scenario.Run
	// m is the machine the run was on after the last call; offset is
	// the time of the machines it has finished.
	m      *mm.Machine
	offset sim.Time
	done   bool
	order  []string
	// retired sums the vmstat events of the machines the run has
	// finished with; retiredStall is the latest stalled allocation on
	// them.
	retired      [mm.NrVMEventItems]uint64
	retiredStall string
}

func (a *specRun) Machine() *mm.Machine { return a.r.Machine() }

func (a *specRun) Now() sim.Time { return a.offset + a.r.Now() }

func (a *specRun) Duration() sim.Time {
	if a.done {
		return a.Now()
	}
	return 0
}

func (a *specRun) Advance(until sim.Time, maxEvents int) int {
	used := 0
	for !a.done && a.Now() < until && used < maxEvents {
		step := min(until-a.Now(), StepSlice)
		a.done = a.r.Advance(step)
		if m := a.r.Machine(); m != a.m {
			// A new machine started: its clock begins at 0 where
			// the old one stopped.
			a.offset += a.m.World.Now()
			for e := range a.retired {
				a.retired[e] += a.m.Event(mm.VMEventItem(e))
			}
			if st, ok := a.m.LastStall(); ok {
				a.retiredStall = st
			}
			a.m = m
		}
		used += StepCost
	}
	return used
}

// Results lists the metrics in the scenario's order, printed as `pagesim
// run --format json` rounds them.
func (a *specRun) Results() []app.Metric {
	vals := a.r.Metrics()
	var out []app.Metric
	seen := map[string]bool{}
	add := func(name string) {
		v, ok := vals[name]
		if !ok || seen[name] {
			return
		}
		seen[name] = true
		out = append(out, app.Metric{Name: name, Value: v, Text: strconv.FormatFloat(round6(v), 'f', -1, 64)})
	}
	for _, n := range a.order {
		add(n)
	}
	var rest []string
	for n := range vals {
		if !seen[n] {
			rest = append(rest, n)
		}
	}
	sort.Strings(rest)
	for _, n := range rest {
		add(n)
	}
	return out
}

// Event implements app.EventCounter: a vmstat event summed over every
// machine the run has used.
func (a *specRun) Event(e mm.VMEventItem) uint64 {
	return a.retired[e] + a.r.Machine().Event(e)
}

// LastStall implements app.Staller: the latest stalled allocation on the
// current machine, else on the machines before it.
func (a *specRun) LastStall() (string, bool) {
	if st, ok := a.r.Machine().LastStall(); ok {
		return st, true
	}
	return a.retiredStall, a.retiredStall != ""
}

// Status is the scenario's one-line account of where the run is.
func (a *specRun) Status() string { return a.r.Status() }

// round6 is the rounding `pagesim run --format json` applies (six
// decimals), so that the page prints the numbers the command prints.
func round6(x float64) float64 {
	if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	return math.Round(x*1e6) / 1e6
}
