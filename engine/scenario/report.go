package scenario

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
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
	// Jobs is how many runs go at once, each on its own goroutine (0 or
	// 1: one after another). RunAll lowers it to what the memory budget
	// allows (FitJobs); the result is the same bytes for any value.
	Jobs int
	// Slice is the simulated time advanced per call of Run.Advance;
	// any value gives the same result (it only changes how often
	// Progress is called).
	Slice sim.Time
	// Progress, if set, is called after every slice of every run, one
	// call at a time (runs on other goroutines wait for it).
	Progress func(variant string, run int, r *Run)
	// RunDone, if set, is called once before the runs start (done 0)
	// and then whenever a run has finished, with how many have and how
	// many there are in all; like Progress, one call at a time.
	RunDone func(done, total int)
	// MaxBytes is the memory budget (mm.MachineBytes) of the machines
	// in flight together: each run holds one, so Jobs drops to what
	// fits. Only each run's metrics and lines outlive it. 0 means no
	// limit.
	MaxBytes uint64
	// CheckEvery, if > 0, runs the machine's CheckInvariants after every
	// CheckEvery-th simulated event and at the end of every run; a
	// broken invariant stops RunAll with an error (tests set it).
	CheckEvery int
	// Record, if set, records every run (NewRecordedRun): each run in
	// flight holds a recording of up to Record.MaxBytes besides its
	// machine, and MaxBytes covers both. Recorded is called with each
	// run when it has ended, on the run's goroutine, possibly while
	// other runs' calls are under way (pagesim run --trace writes each
	// run's files there); an error it returns stops RunAll.
	Record   *mm.RecordConfig
	Recorded func(variant string, run int, r *Run) error
}

// Prepare validates options and returns the settings and variant list.
func (s *Spec) Prepare(o Options) (Settings, []string, error) {
	st, err := s.Parse(o.Settings)
	if err != nil {
		return Settings{}, nil, err
	}
	variants, err := s.checkVariants(o.Variants)
	if err != nil {
		return Settings{}, nil, err
	}
	if o.Runs < 1 || o.Runs > 100 {
		return Settings{}, nil, fmt.Errorf("runs must be between 1 and 100, got %d", o.Runs)
	}
	return st, variants, nil
}

// checkVariants returns the variants asked for, or the default ones.
func (s *Spec) checkVariants(asked []string) ([]string, error) {
	if len(asked) == 0 {
		return s.DefaultVariants(), nil
	}
	for _, v := range asked {
		if !s.HasVariant(v) {
			var names []string
			for _, sv := range s.Variants {
				names = append(names, sv.Name)
			}
			return nil, fmt.Errorf("scenario %s has no variant %q (have: %s)", s.ID, v, strings.Join(names, ", "))
		}
	}
	return asked, nil
}

// RunAll runs every requested variant o.Runs times, each run r from seed
// o.Seed + r, up to o.Jobs of them at once, and gathers the metrics in
// the order of the variants and runs.
func (s *Spec) RunAll(o Options) (*Result, error) {
	st, variants, err := s.Prepare(o)
	if err != nil {
		return nil, err
	}
	jobs := make([]job, 0, len(variants)*o.Runs)
	for _, v := range variants {
		for r := range o.Runs {
			jobs = append(jobs, job{st: st, variant: v, run: r, seed: o.Seed + uint64(r), label: fmt.Sprintf("%s run %d", v, r+1)})
		}
	}
	workers, err := s.FitJobsWith([]Values{st.Values}, o.Jobs, len(jobs), o.MaxBytes, o.recordBytes())
	if err != nil {
		return nil, err
	}
	if o.Slice <= 0 {
		o.Slice = sim.Second
	}
	// Only what the report needs outlives a run: its metrics, and the
	// first run's lines. The machines go with the run.
	done, err := s.runJobs(jobs, o, workers)
	if err != nil {
		return nil, err
	}
	res := s.NewResult(o.Seed, o.Runs, st)
	for i, v := range variants {
		var metrics []map[string]float64
		for _, d := range done[i*o.Runs : (i+1)*o.Runs] {
			metrics = append(metrics, d.metrics)
		}
		res.addVariant(v, metrics, done[i*o.Runs].lines)
	}
	return res, nil
}

// advanceAll runs r to its end in slices of o.Slice, calling progress
// after each slice (if o.Progress is set) and, with o.CheckEvery, checking
// the invariants of every machine it boots every CheckEvery events and at
// the end.
func (r *Run) advanceAll(o Options, progress func()) error {
	var broken error
	check := func(m *mm.Machine, when string) {
		if broken == nil {
			if err := m.CheckInvariants(); err != nil {
				broken = fmt.Errorf("%s at %s s: %w", when, m.World.Now(), err)
			}
		}
	}
	for !r.Done() {
		if m := r.cur.M; o.CheckEvery > 0 && m.World.AfterEvent == nil {
			events := 0
			m.World.AfterEvent = func() {
				if events++; events%o.CheckEvery == 0 {
					check(m, fmt.Sprintf("event %d", events))
				}
			}
		}
		r.Advance(r.Now()+o.Slice, math.MaxInt)
		if broken != nil {
			return broken
		}
		if o.Progress != nil && !r.Done() {
			progress()
		}
	}
	if o.CheckEvery > 0 {
		if check(r.cur.M, "the end"); broken != nil {
			return broken
		}
	}
	return r.Err()
}

// NewResult starts a result for runs made outside RunAll (the browser app
// advances its variants in lockstep): add each variant's finished runs,
// run r from seed+r, with AddVariant in the order they should print.
func (s *Spec) NewResult(seed uint64, runs int, st Settings) *Result {
	return &Result{Scenario: s.ID, Seed: seed, Runs: runs, Params: EffectiveParams(s, st), spec: s, values: st.Values}
}

// AddVariant adds a variant's runs and their statistics: the metrics
// measured so far (all of them once the runs are done).
func (r *Result) AddVariant(name string, runs []*Run) {
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
	id := s.ID
	if s.Seed != "" {
		id += " (seed " + s.Seed + ")"
	}
	lines := []string{
		fmt.Sprintf("pagesim %s: %s, seed %d, %s", Version, id, r.Seed, runs),
	}
	if s.Patch != "" {
		lines = append(lines, wrap("patch: "+s.Patch, 72)...)
	}
	lines = append(lines, wrap("machine: "+s.Machine(r.values), 72)...)
	if s.SeedMachine != "" {
		lines = append(lines, wrap("seed's machine: "+s.SeedMachine, 72)...)
	}
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
	if r.spec.Report != nil {
		b.WriteString(r.spec.Report(r))
	} else {
		b.WriteString(MetricReport(r))
	}
	return b.String()
}

// MetricReport is the report of a scenario without its own: each
// variant's result lines, then one row per metric (in MetricsOf's order)
// and one column per variant.
func MetricReport(r *Result) string {
	var b strings.Builder
	head := []string{"metric"}
	for _, vr := range r.Variants {
		head = append(head, vr.Name)
		if len(vr.Lines) == 0 {
			continue
		}
		fmt.Fprintf(&b, "%s:\n", vr.Name)
		for _, l := range vr.Lines {
			b.WriteString("  " + l + "\n")
		}
		b.WriteByte('\n')
	}
	rows := [][]string{head}
	for _, m := range r.spec.MetricsOf(r.values) {
		row := []string{m.Name}
		for i := range r.Variants {
			vr := &r.Variants[i]
			if _, ok := vr.Mean[m.Name]; !ok {
				row = append(row, "-")
				continue
			}
			row = append(row, r.metricCell(vr, m.Name))
		}
		rows = append(rows, row)
	}
	b.WriteString(table(rows))
	return b.String()
}

// metricCell is cell for MetricReport, with formatMetric's numbers.
func (r *Result) metricCell(v *VariantResult, metric string) string {
	if r.Runs > 1 {
		if r.spec.UseMedian {
			return formatMetric(v.Median[metric])
		}
		return formatMetric(v.Mean[metric]) + " ± " + formatMetric(v.Stddev[metric])
	}
	return formatMetric(v.Mean[metric])
}

// formatMetric prints a metric's value as short as it reads: whole
// numbers without decimals, others with up to three.
func formatMetric(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
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

// NotYet is the cell of a metric a run has not measured yet (the page's
// table of runs still going): never a 0 that reads as a result.
const NotYet = "…"

// cell formats a value with its stddev (or median) for multi-run tables;
// a metric not measured yet is NotYet.
func (r *Result) cell(v *VariantResult, metric, format string) string {
	if _, ok := v.Mean[metric]; !ok {
		return NotYet
	}
	if r.Runs > 1 {
		if r.spec.UseMedian {
			return fmt.Sprintf(format, v.Median[metric])
		}
		return fmt.Sprintf(format, v.Mean[metric]) + " ± " + spread(format, v.Stddev[metric])
	}
	return fmt.Sprintf(format, v.Mean[metric])
}

// spread prints a standard deviation in the cell's format, or, when that
// would round a spread of at least 1e-6 to zero, with two significant
// digits: runs that differ visibly in their own output never print as
// "± 0.00".
func spread(format string, sd float64) string {
	out := fmt.Sprintf(format, sd)
	if sd < 1e-6 || strings.Trim(out, "0.") != "" {
		return out
	}
	decimals := int(math.Ceil(-math.Log10(sd))) + 1
	return strconv.FormatFloat(sd, 'f', decimals, 64)
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
