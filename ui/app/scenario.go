package app

// scenario.go is the contract between the page and whatever it runs.
//
// The page knows nothing about seeds 000-003, workloads or patches: it lists
// Scenarios, starts one Run per selected variant from the same seed and
// parameters, advances the runs in lockstep, draws their machines and prints
// their results. engine/scenario's scenarios (the ones `pagesim run` knows)
// plug in through ui/catalog; churn.go is a playground built directly on
// engine/mm.

import (
	"fmt"
	"strings"

	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/sim"
)

// Scenario is one experiment the page can run: a machine, a workload and a
// set of variants (kernels with different patch switches or knobs).
// Implementations must be safe to call from any goroutine for Info and
// CheckParam (the panel validates input with them) and deterministic in
// NewRun: the same RunConfig gives byte-identical runs everywhere.
type Scenario interface {
	// Info describes the scenario. It must return the same value every
	// time (the page caches it).
	Info() Info
	// NewRun boots the machine and workload for one variant. cfg.Params
	// holds every parameter Info lists, already validated with
	// Param.Check; cfg.Variant is one of Info().Variants.
	NewRun(cfg RunConfig) (Run, error)
}

// Info describes a scenario to the panel and to permalinks.
type Info struct {
	// Name is the scenario's stable identifier: the permalink's path
	// element and `pagesim run NAME`. Lower case letters, digits, '-'
	// and '_' only.
	Name string
	// Title is a one-line human title.
	Title string
	// Summary is a paragraph on what the patch changes and why it
	// matters (plain text; the page never interprets it as HTML).
	Summary string
	// Patch is the patch text shown one click away (plain text; may be
	// empty).
	Patch string
	// Params are the scenario's parameters, in display order, with the
	// same names, defaults and validation as `pagesim run`.
	Params []Param
	// Variants lists the kernels the scenario compares, in display
	// order; those with Default set are selected when the page opens.
	Variants []VariantInfo
	// Vmstat lists the /proc/vmstat counters the panel shows live for
	// each variant; nil gives DefaultVmstat.
	Vmstat []string
	// PageParams are parameter values the page opens the scenario with
	// where they differ from the defaults (a smaller scale, so that the
	// machines boot quickly in a browser tab). The permalink spells them
	// out, since they differ from the defaults, so the link still equals
	// `pagesim run` with the same --set. Each must pass its Param.Check.
	PageParams map[string]string
	// CheckKnob validates a kernel knob (a sysctl such as
	// vm.defrag_mode, or a THP setting such as
	// transparent_hugepage.defrag) the way `pagesim run --set` does, and
	// returns its canonical name. nil means the scenario takes no knobs.
	// It must be safe to call from any goroutine.
	CheckKnob func(name, value string) (string, error)
}

// Knob is a kernel setting by its path, applied to every variant's
// machine after the scenario's own settings.
type Knob struct{ Name, Value string }

// VariantInfo describes one variant.
type VariantInfo struct {
	Name    string // identifier used in permalinks and `pagesim run --variant`
	Summary string // one line: which switches and knobs differ
	Default bool   // selected when the page opens
}

// Param is one scenario parameter. Values travel as strings (they come
// from a text box, a permalink or a command line) and Check is the single
// place that decides whether one is acceptable.
type Param struct {
	Name    string // as `pagesim run --NAME`; lower case, digits, '_' and '-'
	Default string // must pass Check
	Help    string // one line shown next to the input
	// Check returns nil if v is acceptable, else an error whose text the
	// panel shows as it is ("must be between 1 and 4").
	Check func(v string) error
}

// RunConfig is what a Run is started from.
type RunConfig struct {
	Variant string
	Seed    uint64
	// Params maps every parameter name of Info().Params to its value.
	Params map[string]string
	// Knobs are the user's kernel knobs, each accepted by
	// Info().CheckKnob, in the order given.
	Knobs []Knob
}

// Run is one variant of a scenario in progress. A Run is owned by one
// goroutine (the page's simulation loop) and is never used concurrently.
type Run interface {
	// Machine is the simulated machine the page draws. The page reads
	// it only between calls to Advance, through its read-only views
	// (BlockViews, ZoneViews, PageStates, VMStatValue, Trace).
	Machine() *mm.Machine
	// Advance processes simulated events with time <= until, stopping
	// early after maxEvents events, and returns the number processed.
	// When it returns having processed fewer than maxEvents, Now() ==
	// min(until, Duration()) (or until, for a run without end). The outcome must depend only on the times reached, never
	// on how the page sliced the calls: advancing to T in one call or
	// in a thousand gives the same machine.
	Advance(until sim.Time, maxEvents int) int
	// Now is the simulated time the run has reached.
	Now() sim.Time
	// Duration is the simulated time at which the run is complete; 0
	// means it is not known (yet): the run ends when it says so, or
	// never. Once Now() >= a non-zero Duration() the run is finished.
	Duration() sim.Time
	// Results returns the run's metrics so far, in the order `pagesim
	// run` prints them.
	Results() []Metric
}

// Statuser is implemented by runs that can say where they are in a line
// ("guest 34 GB: 3.1 of 8.5 GiB mapped"); the panel shows it.
type Statuser interface {
	Status() string
}

// Reporter is implemented by scenarios that `pagesim run` runs: Report
// returns exactly what the command prints for the same seed, settings and
// variants (one run each), built from the runs as they stand. Once every
// run is finished, Text is byte for byte `pagesim run --format text` and
// JSON `--format json`; before that the table holds the numbers measured
// so far. Scenarios without it get a metric-per-row table (metricTable).
type Reporter interface {
	Report(cfg ReportConfig, runs []NamedRun) (Report, error)
}

// ReportConfig is what a report is made for.
type ReportConfig struct {
	Seed   uint64
	Params map[string]string
	Knobs  []Knob
}

// Report is a result table in the forms `pagesim run` prints.
type Report struct {
	// Text is the cover-letter form (`--format text`).
	Text string
	// JSON is the JSON object with its final newline (`--format json`).
	JSON string
}

// EventCounter is implemented by runs that boot a new machine for each
// step (thp-thisnode boots one per guest size): Event sums a vmstat event
// over every machine the run has used. Runs without it are read from
// Machine().
type EventCounter interface {
	Event(e mm.VMEventItem) uint64
}

// Staller is implemented by runs that boot a new machine for each step:
// LastStall is the slow-path decision trace of the latest allocation that
// stalled on any of their machines (mm.Machine.LastStall for the others).
type Staller interface {
	LastStall() (string, bool)
}

// runLastStall returns a run's latest stalled allocation.
func runLastStall(r Run) (string, bool) {
	if s, ok := r.(Staller); ok {
		return s.LastStall()
	}
	return r.Machine().LastStall()
}

// NamedRun pairs a run with its variant name.
type NamedRun struct {
	Variant string
	Run     Run
}

// Metric is one result value.
type Metric struct {
	Name  string
	Value float64
	// Text is the value exactly as `pagesim run` prints it; empty means
	// the page formats Value itself.
	Text string
	Unit string
}

// String returns the metric's printed value with its unit.
func (m Metric) String() string {
	s := m.Text
	if s == "" {
		s = formatFloat(m.Value)
	}
	if m.Unit != "" {
		s += " " + m.Unit
	}
	return s
}

// DefaultVmstat is the live counter list when a scenario gives none.
var DefaultVmstat = []string{
	"nr_free_pages", "pgalloc_normal", "pgfree", "allocstall_normal",
	"compact_stall", "compact_success", "compact_fail", "thp_fault_alloc", "thp_fault_fallback",
}

// Table is a result table: a header row and rows of cells, all text.
type Table struct {
	Title  string
	Header []string
	Rows   [][]string
	Notes  []string
}

// Text formats the table as aligned plain text, the form pasted into a
// cover letter: the first column left-aligned, the others right-aligned.
func (t Table) Text() string {
	var b strings.Builder
	if t.Title != "" {
		b.WriteString(t.Title)
		b.WriteByte('\n')
	}
	ncol := len(t.Header)
	for _, r := range t.Rows {
		ncol = max(ncol, len(r))
	}
	width := make([]int, ncol)
	measure := func(r []string) {
		for i, c := range r {
			width[i] = max(width[i], len([]rune(c)))
		}
	}
	measure(t.Header)
	for _, r := range t.Rows {
		measure(r)
	}
	line := func(r []string) {
		var l strings.Builder
		for i := 0; i < ncol; i++ {
			c := ""
			if i < len(r) {
				c = r[i]
			}
			pad := strings.Repeat(" ", width[i]-len([]rune(c)))
			switch {
			case i == 0:
				l.WriteString(c + pad)
			default:
				l.WriteString("  " + pad + c)
			}
		}
		b.WriteString(strings.TrimRight(l.String(), " "))
		b.WriteByte('\n')
	}
	if len(t.Header) > 0 {
		line(t.Header)
		sep := make([]string, ncol)
		for i := range sep {
			sep[i] = strings.Repeat("-", width[i])
		}
		line(sep)
	}
	for _, r := range t.Rows {
		line(r)
	}
	for _, n := range t.Notes {
		b.WriteString(n)
		b.WriteByte('\n')
	}
	return b.String()
}

// metricTable is the default report: one row per metric, one column per
// variant, in the order of the first run's metrics.
func metricTable(title string, runs []NamedRun) Table {
	t := Table{Title: title, Header: []string{"metric"}}
	var names []string
	vals := make([]map[string]Metric, len(runs))
	seen := map[string]bool{}
	for i, r := range runs {
		t.Header = append(t.Header, r.Variant)
		vals[i] = map[string]Metric{}
		for _, m := range r.Run.Results() {
			vals[i][m.Name] = m
			if !seen[m.Name] {
				seen[m.Name] = true
				names = append(names, m.Name)
			}
		}
	}
	for _, n := range names {
		row := []string{n}
		for i := range runs {
			if m, ok := vals[i][n]; ok {
				row = append(row, m.String())
			} else {
				row = append(row, "-")
			}
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

func formatFloat(v float64) string {
	if v == float64(int64(v)) && v < 1e15 && v > -1e15 {
		return fmt.Sprintf("%d", int64(v))
	}
	return fmt.Sprintf("%.3f", v)
}

// validName reports whether s is a usable scenario, variant or parameter
// name: 1-32 characters of a-z, 0-9, '_' and '-'.
func validName(s string) bool {
	if len(s) == 0 || len(s) > 32 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// checkInfo reports the first problem with a scenario's Info (a
// programming error in the scenario, caught when it is registered).
func checkInfo(in Info) error {
	if !validName(in.Name) {
		return fmt.Errorf("scenario name %q is not a valid name", in.Name)
	}
	if len(in.Variants) == 0 {
		return fmt.Errorf("scenario %s has no variants", in.Name)
	}
	seen := map[string]bool{}
	def := false
	for _, v := range in.Variants {
		if !validName(v.Name) || seen[v.Name] {
			return fmt.Errorf("scenario %s: bad or repeated variant name %q", in.Name, v.Name)
		}
		seen[v.Name] = true
		def = def || v.Default
	}
	if !def {
		return fmt.Errorf("scenario %s: no variant is selected by default", in.Name)
	}
	seen = map[string]bool{}
	for _, p := range in.Params {
		if !validName(p.Name) || seen[p.Name] || reservedKeys[p.Name] {
			return fmt.Errorf("scenario %s: bad, repeated or reserved parameter name %q", in.Name, p.Name)
		}
		seen[p.Name] = true
		if p.Check != nil {
			if err := p.Check(p.Default); err != nil {
				return fmt.Errorf("scenario %s: default of %s fails its own check: %v", in.Name, p.Name, err)
			}
		}
	}
	for name, v := range in.PageParams {
		p, ok := findParam(in, name)
		if !ok {
			return fmt.Errorf("scenario %s: the page opens it with an unknown parameter %q", in.Name, name)
		}
		if p.Check != nil {
			if err := p.Check(v); err != nil {
				return fmt.Errorf("scenario %s: the page's %s=%s fails its check: %v", in.Name, name, v, err)
			}
		}
	}
	return nil
}
