package scenario

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/sim"
)

// Version is pagesim's version, printed in reports and by `pagesim
// version`; the command and the page both read it from here, so their
// reports agree byte for byte.
const Version = "0.1.0"

// VariantResult holds one variant's runs and their statistics.
type VariantResult struct {
	Name   string               `json:"name"`
	Mean   map[string]float64   `json:"metrics"`
	Stddev map[string]float64   `json:"stddev"`
	Median map[string]float64   `json:"median"`
	Runs   []map[string]float64 `json:"runs"`
	// Lines are the first run's own output lines (the seed's form).
	Lines []string `json:"-"`
}

// Result is a scenario's outcome over variants and runs.
type Result struct {
	Scenario string            `json:"scenario"`
	Seed     uint64            `json:"seed"`
	Runs     int               `json:"runs"`
	Params   map[string]string `json:"params"`
	Variants []VariantResult   `json:"variants"`
	spec     *Spec
	values   Values
}

// Spec returns the scenario of the result.
func (r *Result) Spec() *Spec { return r.spec }

// Values returns the parameter values of the result.
func (r *Result) Values() Values { return r.values }

// Options control RunAll.
type Options struct {
	Variants []string
	Seed     uint64
	Runs     int
	Settings []string
	// Slice is the simulated time advanced per call of Run.Advance;
	// any value gives the same result (it only changes how often
	// Progress is called).
	Slice sim.Time
	// Progress, if set, is called after every slice.
	Progress func(variant string, run int, r Run)
	// MaxBytes is the memory budget (mm.MachineBytes) of the machines
	// in flight: RunAll runs one at a time and keeps only each run's
	// metrics and lines. 0 means no limit.
	MaxBytes uint64
	// CheckEvery, if > 0, runs the machine's CheckInvariants after every
	// CheckEvery-th simulated event and at the end of every run; a
	// broken invariant stops RunAll with an error (tests set it).
	CheckEvery int
}

// Prepare validates options and returns the settings and variant list.
func (s *Spec) Prepare(o Options) (Settings, []string, error) {
	st, err := s.Parse(o.Settings)
	if err != nil {
		return Settings{}, nil, err
	}
	variants := o.Variants
	if len(variants) == 0 {
		variants = s.DefaultVariants()
	}
	for _, v := range variants {
		if !s.hasVariant(v) {
			var names []string
			for _, sv := range s.Variants {
				names = append(names, sv.Name)
			}
			return Settings{}, nil, fmt.Errorf("scenario %s has no variant %q (have: %s)", s.ID, v, strings.Join(names, ", "))
		}
	}
	if o.Runs < 1 || o.Runs > 100 {
		return Settings{}, nil, fmt.Errorf("runs must be between 1 and 100, got %d", o.Runs)
	}
	return st, variants, nil
}

// RunAll runs every requested variant o.Runs times, each run r from seed
// o.Seed + r, and gathers the metrics.
func (s *Spec) RunAll(o Options) (*Result, error) {
	st, variants, err := s.Prepare(o)
	if err != nil {
		return nil, err
	}
	if err := s.CheckBudget(st.Values, 1, o.MaxBytes); err != nil {
		return nil, err
	}
	if o.Slice <= 0 {
		o.Slice = sim.Second
	}
	res := s.NewResult(o.Seed, o.Runs, st)
	for _, v := range variants {
		// Only what the report needs outlives a run: its metrics, and
		// the first run's lines. The machine goes with the run.
		var metrics []map[string]float64
		var lines []string
		for r := 0; r < o.Runs; r++ {
			run, err := s.Start(Config{Variant: v, Params: st.Values, Knobs: append(append([]Knob(nil), s.Knobs...), st.Knobs...), Seed: o.Seed + uint64(r), MaxBytes: o.MaxBytes})
			if err != nil {
				return nil, err
			}
			var broken error
			check := func(m *mm.Machine, when string) {
				if broken == nil {
					if err := m.CheckInvariants(); err != nil {
						broken = fmt.Errorf("%s run %d, %s at %s s: %w", v, r+1, when, m.World.Now(), err)
					}
				}
			}
			for {
				if m := run.Machine(); o.CheckEvery > 0 && m.World.AfterEvent == nil {
					events := 0
					m.World.AfterEvent = func() {
						if events++; events%o.CheckEvery == 0 {
							check(m, fmt.Sprintf("event %d", events))
						}
					}
				}
				done := run.Advance(o.Slice)
				if broken != nil {
					return nil, broken
				}
				if done {
					break
				}
				if o.Progress != nil {
					o.Progress(v, r, run)
				}
			}
			if o.CheckEvery > 0 {
				if check(run.Machine(), "the end"); broken != nil {
					return nil, broken
				}
			}
			metrics = append(metrics, run.Metrics())
			if r == 0 {
				lines = run.Lines()
			}
		}
		res.addVariant(v, metrics, lines)
	}
	return res, nil
}

// NewResult starts a result for runs made outside RunAll (the browser app
// advances its variants in lockstep): add each variant's finished runs,
// run r from seed+r, with AddVariant in the order they should print.
func (s *Spec) NewResult(seed uint64, runs int, st Settings) *Result {
	return &Result{Scenario: s.ID, Seed: seed, Runs: runs, Params: EffectiveParams(s, st), spec: s, values: st.Values}
}

// AddVariant adds a variant's finished runs and their statistics.
func (r *Result) AddVariant(name string, runs []Run) {
	var metrics []map[string]float64
	var lines []string
	for i, run := range runs {
		metrics = append(metrics, run.Metrics())
		if i == 0 {
			lines = run.Lines()
		}
	}
	r.addVariant(name, metrics, lines)
}

// addVariant adds a variant's runs' metrics, and the first run's lines.
func (r *Result) addVariant(name string, metrics []map[string]float64, lines []string) {
	vr := VariantResult{Name: name, Runs: metrics, Lines: lines}
	vr.Mean, vr.Stddev, vr.Median = stats(vr.Runs)
	r.Variants = append(r.Variants, vr)
}

func stats(runs []map[string]float64) (mean, sd, med map[string]float64) {
	mean, sd, med = map[string]float64{}, map[string]float64{}, map[string]float64{}
	if len(runs) == 0 {
		return
	}
	for k := range runs[0] {
		var xs []float64
		for _, r := range runs {
			xs = append(xs, r[k])
		}
		var sum float64
		for _, x := range xs {
			sum += x
		}
		m := sum / float64(len(xs))
		var ss float64
		for _, x := range xs {
			ss += (x - m) * (x - m)
		}
		s := 0.0
		if len(xs) > 1 {
			s = math.Sqrt(ss / float64(len(xs)-1))
		}
		sort.Float64s(xs)
		md := xs[len(xs)/2]
		if len(xs)%2 == 0 {
			md = (xs[len(xs)/2-1] + xs[len(xs)/2]) / 2
		}
		mean[k], sd[k], med[k] = round6(m), round6(s), round6(md)
	}
	return
}

// round6 keeps six significant decimals so that JSON output is stable and
// short.
func round6(x float64) float64 {
	if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	return math.Round(x*1e6) / 1e6
}

// JSON returns the result as one JSON object (keys sorted).
func (r *Result) JSON() ([]byte, error) {
	return json.MarshalIndent(r, "", "  ")
}

// Header returns the report's header lines, at most 72 columns each.
func (r *Result) Header() []string {
	s := r.spec
	runs := "1 run"
	if r.Runs > 1 {
		runs = fmt.Sprintf("%d runs", r.Runs)
	}
	lines := []string{
		fmt.Sprintf("pagesim %s: %s (seed %s), seed %d, %s", Version, s.ID, s.Seed, r.Seed, runs),
	}
	lines = append(lines, wrap("patch: "+s.Patch, 72)...)
	lines = append(lines, wrap("machine: "+s.Machine(r.values), 72)...)
	lines = append(lines, wrap("seed's machine: "+s.SeedMachine, 72)...)
	return lines
}

// Text returns the report in the patch cover letter's form.
func (r *Result) Text() string {
	var b strings.Builder
	for _, l := range r.Header() {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	b.WriteString(r.spec.Report(r))
	return b.String()
}

func wrap(s string, width int) []string {
	var out []string
	words := strings.Fields(s)
	line := ""
	for _, w := range words {
		if line == "" {
			line = w
			continue
		}
		if len(line)+1+len(w) > width {
			out = append(out, line)
			line = "  " + w
			continue
		}
		line += " " + w
	}
	if line != "" {
		out = append(out, line)
	}
	return out
}

// cell formats a value with its stddev (or median) for multi-run tables.
func (r *Result) cell(v *VariantResult, metric, format string) string {
	if r.Runs > 1 {
		if r.spec.UseMedian {
			return fmt.Sprintf(format, v.Median[metric])
		}
		return fmt.Sprintf(format+" ± "+format, v.Mean[metric], v.Stddev[metric])
	}
	return fmt.Sprintf(format, v.Mean[metric])
}

// table lays out rows as columns padded to fit, right-aligned except the
// first column.
func table(rows [][]string) string {
	widths := map[int]int{}
	for _, r := range rows {
		for i, c := range r {
			if n := len([]rune(c)); n > widths[i] {
				widths[i] = n
			}
		}
	}
	var b strings.Builder
	for _, r := range rows {
		var parts []string
		for i, c := range r {
			pad := widths[i] - len([]rune(c))
			if i == 0 {
				parts = append(parts, c+strings.Repeat(" ", pad))
			} else {
				parts = append(parts, strings.Repeat(" ", pad)+c)
			}
		}
		b.WriteString(strings.TrimRight("  "+strings.Join(parts, "  "), " "))
		b.WriteByte('\n')
	}
	return b.String()
}
