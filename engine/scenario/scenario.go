// Package scenario holds the scenarios pagesim replays, and the one model
// of a scenario that the command line and the page share.
//
// # The model
//
// A Spec describes a scenario: the patch and its lore thread, the
// parameters (Param) with their checks, the variants (named sets of the
// engine's patch switches), the metrics it reports (the headline ones
// marked), the vmstat counters that matter for it, the table the seed
// published, and the machine. Its Start returns the run's Phases: each
// phase boots a machine and its tasks, says when it is done, and reads
// its results from the counters when it ends. Run drives the phases on
// one clock, in slices bounded by simulated time and by events, and is
// what both `pagesim run` (RunAll) and the page advance; the page draws a
// run only through View, a read-only interface of plain data.
//
// A scenario never writes a metric: every number it reports is read from a
// counter the simulation maintains (vmstat, the engine's slow-path and
// fragmentation tallies, a workload's own clock). A variant only flips
// switches on the machine before the workload starts.
package scenario

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/pagesim/pagesim/engine/internal/enum"
	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/sim"
)

// Spec describes a scenario. Every field is fixed once the scenario is
// registered; the functions must be deterministic and safe to call from
// any goroutine.
type Spec struct {
	// ID names the scenario in `pagesim run ID` and in permalinks:
	// 1-32 characters of a-z, 0-9, '-' and '_'.
	ID    string `json:"id"`
	Title string `json:"title"`
	// Seed is the seed's number ("003"); "" for a scenario that is not
	// a seed's (the playground).
	Seed string `json:"seed,omitempty"`
	// Patch is the patch's subject and author ("" for none).
	Patch   string `json:"patch,omitempty"`
	Summary string `json:"summary"`
	// Lore links the patch's posting first, then messages of its thread
	// (a report, a reply, a later version); the page labels them so.
	Lore []string `json:"lore,omitempty"`
	// SeedMachine describes the machine of the seed's measurement.
	SeedMachine string `json:"seed_machine,omitempty"`
	// Params are the scenario's parameters, in display order.
	Params []Param `json:"params"`
	// Variants are the kernels compared, in display order; the ones not
	// Optional run by default.
	Variants []Variant `json:"variants"`
	// Knobs are the scenario's kernel settings, applied before the
	// user's.
	Knobs []Knob `json:"knobs"`
	// PageParams are the parameter values the page opens the scenario
	// with where they differ from the defaults (a smaller scale, so the
	// machines boot quickly in a browser tab). Each must pass its check.
	PageParams map[string]string `json:"page_params,omitempty"`
	// MetricsOf lists the metrics a run reports for the given values, in
	// the order they print.
	MetricsOf func(v Values) []Metric `json:"-"`
	// Counters are the /proc/vmstat counters that matter for the
	// scenario, in the order the page shows them live; nil leaves the
	// page's default list.
	Counters []string `json:"counters,omitempty"`
	// SeedResults are the tables the seed published, for the page to put
	// beside the run's numbers.
	SeedResults []SeedTable `json:"seed_results,omitempty"`
	// Machine describes the simulated machine for the given values.
	Machine func(v Values) string `json:"-"`
	// Layout returns the machine a run boots for the given values (a
	// run that boots one per phase boots this one each time): the memory
	// budget is checked against it before a run starts (CheckBudget).
	Layout func(v Values) (mm.Config, error) `json:"-"`
	// Start begins one variant's run: it boots nothing yet, but returns
	// the phases (Run boots them one after the other).
	Start func(cfg Config) (Phases, error) `json:"-"`
	// Report formats the result table in the cover letter's form; nil
	// prints one row per metric (MetricReport).
	Report func(r *Result) string `json:"-"`
	// UseMedian says the seed reported medians.
	UseMedian bool `json:"use_median,omitempty"`
	// Unlisted scenarios are left out of All (and so of `pagesim
	// scenarios`); Get still finds them.
	Unlisted bool `json:"-"`
	// NotOpening scenarios are listed, but the page does not open on
	// them: its catalog puts them after the others (ui/app
	// DefaultCatalog), so a scenario whose page run is slow is not the
	// first thing a visitor waits for.
	NotOpening bool `json:"-"`
}

// Variant is a named kernel: a set of patch switches.
type Variant struct {
	Name string `json:"name"`
	Help string `json:"help"`
	// Optional variants run only when asked for by name.
	Optional bool `json:"optional,omitempty"`
}

// Metric describes one reported number.
type Metric struct {
	Name string `json:"name"`
	Help string `json:"help"`
	// Headline marks the numbers the patch is about (thp-thisnode's GB/s
	// per guest): the page shows them first and large.
	Headline bool `json:"headline,omitempty"`
}

// Knob is a sysctl or THP sysfs setting by its kernel path
// (vm.defrag_mode, transparent_hugepage.defrag).
type Knob struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// SeedTable is a table of numbers the seed published, laid out for the
// page's "seed vs pagesim": a column per variant (by pagesim's names for
// the seed's kernels) and a row per pagesim metric.
type SeedTable struct {
	// Title says what the numbers are and how the seed measured them.
	Title    string    `json:"title"`
	Variants []string  `json:"variants"`
	Rows     []SeedRow `json:"rows"`
	// Scale says in one sentence what a run smaller than the seed's
	// machine (the page's, the command's default) does to these numbers,
	// as docs/FIDELITY.md measured it; "" when the size changes nothing.
	Scale string `json:"scale,omitempty"`
}

// SeedRow is one row of a SeedTable.
type SeedRow struct {
	// Label names the row as the seed did ("34 GB").
	Label string `json:"label"`
	// Metric is the metric of pagesim's run the row compares with
	// ("gb_per_s_34").
	Metric string `json:"metric"`
	// Values are the seed's numbers as it printed them, one per variant
	// ("2.77 / 3.17" for two runs).
	Values []string `json:"values"`
}

// Config is what one run needs.
type Config struct {
	Variant string
	Params  Values
	// Knobs are the scenario's knobs, then the user's.
	Knobs []Knob
	Seed  uint64
	// MaxBytes is the memory budget of one machine (mm.MachineBytes),
	// for the boot's own guard (mm.Config.MaxBytes); 0 means none.
	// Callers check the whole budget first (CheckBudget).
	MaxBytes uint64
	// Recorder, if set, records every machine the run boots
	// (newMachine attaches it).
	Recorder *mm.Recorder
}

var registry []*Spec

// register adds a scenario; a scenario that breaks the model's rules is a
// programming error and panics at init, with the rule it broke.
func register(s *Spec) {
	if err := s.Check(); err != nil {
		panic("scenario: " + err.Error())
	}
	for _, o := range registry {
		if o.ID == s.ID {
			panic("scenario: " + s.ID + " registered twice")
		}
	}
	registry = append(registry, s)
}

// All returns every listed scenario, sorted by seed.
func All() []*Spec {
	var out []*Spec
	for _, s := range registry {
		if !s.Unlisted {
			out = append(out, s)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Seed < out[j].Seed })
	return out
}

// Get returns a scenario by ID, listed or not.
func Get(id string) (*Spec, error) {
	for _, s := range registry {
		if s.ID == id {
			return s, nil
		}
	}
	var ids []string
	for _, s := range All() {
		ids = append(ids, s.ID)
	}
	return nil, fmt.Errorf("unknown scenario %q (have: %s)", id, strings.Join(ids, ", "))
}

// DefaultVariants lists the variants run when none is named.
func (s *Spec) DefaultVariants() []string {
	var out []string
	for _, v := range s.Variants {
		if !v.Optional {
			out = append(out, v.Name)
		}
	}
	return out
}

// HasVariant reports whether the scenario has a variant of that name.
func (s *Spec) HasVariant(name string) bool {
	return slices.ContainsFunc(s.Variants, func(v Variant) bool { return v.Name == name })
}

// Param returns the parameter of that name.
func (s *Spec) Param(name string) (*Param, bool) {
	for i := range s.Params {
		if s.Params[i].Name == name {
			return &s.Params[i], true
		}
	}
	return nil, false
}

// ValidName reports whether s is a usable scenario, variant or parameter
// name: 1-32 characters of a-z, 0-9, '_' and '-'.
func ValidName(s string) bool {
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

// Check reports the first rule of the model the scenario breaks (register
// panics with it; the page checks the scenarios it is given).
func (s *Spec) Check() error {
	if !ValidName(s.ID) {
		return fmt.Errorf("scenario name %q is not a valid name", s.ID)
	}
	if s.Start == nil || s.Machine == nil || s.MetricsOf == nil || s.Layout == nil {
		return fmt.Errorf("scenario %s lacks Start, Machine, MetricsOf or Layout", s.ID)
	}
	if len(s.DefaultVariants()) == 0 {
		return fmt.Errorf("scenario %s has no variant that runs by default", s.ID)
	}
	seen := map[string]bool{}
	for _, v := range s.Variants {
		if !ValidName(v.Name) || seen[v.Name] {
			return fmt.Errorf("scenario %s: bad or repeated variant name %q", s.ID, v.Name)
		}
		seen[v.Name] = true
	}
	seen = map[string]bool{}
	for i := range s.Params {
		p := &s.Params[i]
		if !ValidName(p.Name) || seen[p.Name] {
			return fmt.Errorf("scenario %s: bad or repeated parameter name %q", s.ID, p.Name)
		}
		seen[p.Name] = true
		if _, err := p.Check(p.Default); err != nil {
			return fmt.Errorf("scenario %s: the default of %s fails its own check: %v", s.ID, p.Name, err)
		}
	}
	for name, v := range s.PageParams {
		p, ok := s.Param(name)
		if !ok {
			return fmt.Errorf("scenario %s: the page opens it with an unknown parameter %q", s.ID, name)
		}
		if _, err := p.Check(v); err != nil {
			return fmt.Errorf("scenario %s: the page's %s=%s fails its check: %v", s.ID, name, v, err)
		}
	}
	for _, k := range s.Knobs {
		if _, err := CheckKnob(k.Name, k.Value); err != nil {
			return fmt.Errorf("scenario %s: its knob %s: %v", s.ID, k.Name, err)
		}
	}
	for _, n := range s.Counters {
		if !isVMStatName(n) {
			return fmt.Errorf("scenario %s: %q is not a /proc/vmstat counter", s.ID, n)
		}
	}
	for _, t := range s.SeedResults {
		for _, v := range t.Variants {
			if !s.HasVariant(v) {
				return fmt.Errorf("scenario %s: the seed's table %q names no variant %q", s.ID, t.Title, v)
			}
		}
		for _, r := range t.Rows {
			if len(r.Values) != len(t.Variants) {
				return fmt.Errorf("scenario %s: the seed's row %q has %d values for %d variants", s.ID, r.Label, len(r.Values), len(t.Variants))
			}
		}
	}
	return nil
}

// ParamKind is a parameter's type.
type ParamKind int

const (
	KindInt ParamKind = iota
	KindFloat
	KindBool
	KindChoice
	KindFloatList
	// KindMempolicy is a NUMA policy as the kernel's mpol= option spells
	// it, MODE[:NODELIST] (mm.ParseMempolicy); the nodes are checked
	// against the machine when a run starts.
	KindMempolicy
)

var kindNames = []string{"int", "float", "bool", "choice", "list", "mempolicy"}

// String returns the kind's name ("int").
func (k ParamKind) String() string { return enum.Name(kindNames, k) }

// MarshalText writes the kind's name ("int") in JSON.
func (k ParamKind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// Param describes one scenario parameter. Values travel as text (from a
// command line, a permalink or a text box) and Check is the one place that
// decides whether a value is acceptable.
type Param struct {
	Name    string    `json:"name"`
	Help    string    `json:"help"`
	Kind    ParamKind `json:"kind"`
	Default string    `json:"default"`
	// Min and Max bound a number (each element of a list).
	Min *float64 `json:"min,omitempty"`
	Max *float64 `json:"max,omitempty"`
	// Choices are the values a KindChoice parameter takes.
	Choices []string `json:"choices,omitempty"`
}

func rangeParam(name, help string, kind ParamKind, def string, min, max float64) Param {
	return Param{Name: name, Help: help, Kind: kind, Default: def, Min: &min, Max: &max}
}

func boolParam(name, help, def string) Param {
	return Param{Name: name, Help: help, Kind: KindBool, Default: def}
}

func choiceParam(name, help, def string, choices ...string) Param {
	return Param{Name: name, Help: help, Kind: KindChoice, Default: def, Choices: choices}
}

// Range describes the values the parameter takes, as `pagesim scenarios`
// and the page print it: " [1, 4096]", " {default, bind}", or "".
func (p *Param) Range() string {
	switch {
	case p.Min != nil && p.Max != nil:
		return " [" + fmtNum(*p.Min) + ", " + fmtNum(*p.Max) + "]"
	case len(p.Choices) > 0:
		return " {" + strings.Join(p.Choices, ", ") + "}"
	}
	return ""
}

func fmtNum(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// Check returns the value in its normal form, or an error that says why it
// is refused (without the parameter's name: "5 is above the maximum 1").
func (p *Param) Check(value string) (string, error) {
	value = strings.TrimSpace(value)
	checkRange := func(f float64) error {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("%q is not a number", ClipValue(value))
		}
		if p.Min != nil && f < *p.Min {
			return fmt.Errorf("%s is below the minimum %g", value, *p.Min)
		}
		if p.Max != nil && f > *p.Max {
			return fmt.Errorf("%s is above the maximum %g", value, *p.Max)
		}
		return nil
	}
	switch p.Kind {
	case KindInt:
		n, err := strconv.Atoi(value)
		if err != nil {
			return "", fmt.Errorf("%q is not an integer", ClipValue(value))
		}
		return strconv.Itoa(n), checkRange(float64(n))
	case KindFloat:
		f, err := strconv.ParseFloat(value, 64)
		if err != nil {
			return "", fmt.Errorf("%q is not a number", ClipValue(value))
		}
		return strconv.FormatFloat(f, 'g', -1, 64), checkRange(f)
	case KindBool:
		switch strings.ToLower(value) {
		case "true", "1", "yes", "on":
			return "true", nil
		case "false", "0", "no", "off":
			return "false", nil
		}
		return "", fmt.Errorf("%q is not true or false", ClipValue(value))
	case KindChoice:
		if slices.Contains(p.Choices, value) {
			return value, nil
		}
		return "", fmt.Errorf("%q is not one of %s", ClipValue(value), strings.Join(p.Choices, ", "))
	case KindFloatList:
		parts := strings.Split(value, ",")
		if len(parts) > 16 || value == "" {
			return "", fmt.Errorf("want a comma list of 1 to 16 numbers, got %q", ClipValue(value))
		}
		var norm []string
		for _, part := range parts {
			f, err := strconv.ParseFloat(strings.TrimSpace(part), 64)
			if err != nil {
				return "", fmt.Errorf("%q is not a number", ClipValue(part))
			}
			if err := checkRange(f); err != nil {
				return "", err
			}
			n := strconv.FormatFloat(f, 'g', -1, 64)
			if slices.Contains(norm, n) {
				// Each value names its own metrics (elapsed_s_30).
				return "", fmt.Errorf("%s is listed twice", n)
			}
			norm = append(norm, n)
		}
		return strings.Join(norm, ","), nil
	case KindMempolicy:
		if _, err := mm.ParseMempolicy(value, 64); err != nil {
			return "", err
		}
		return value, nil
	}
	return value, nil
}

// Values holds a scenario's parameter values, validated.
type Values struct {
	vals map[string]string
}

func (v Values) get(name string) string {
	if s, ok := v.vals[name]; ok {
		return s
	}
	panic("scenario: unknown parameter " + name)
}

// Int returns an int parameter.
func (v Values) Int(name string) int { n, _ := strconv.Atoi(v.get(name)); return n }

// Float returns a float parameter.
func (v Values) Float(name string) float64 {
	f, _ := strconv.ParseFloat(v.get(name), 64)
	return f
}

// Bool returns a bool parameter.
func (v Values) Bool(name string) bool { return v.get(name) == "true" }

// String returns a parameter's text.
func (v Values) String(name string) string { return v.get(name) }

// FloatList returns a comma-list parameter.
func (v Values) FloatList(name string) []float64 {
	var out []float64
	for _, p := range strings.Split(v.get(name), ",") {
		f, _ := strconv.ParseFloat(strings.TrimSpace(p), 64)
		out = append(out, f)
	}
	return out
}

// Map returns every value by name.
func (v Values) Map() map[string]string {
	out := map[string]string{}
	for k, s := range v.vals {
		out[k] = s
	}
	return out
}

// Settings is the result of parsing NAME=VALUE settings.
type Settings struct {
	Values Values
	// Knobs are the user's, in the order given.
	Knobs []Knob
}

// Parse validates settings ("guest_gb=30,34", "vm.defrag_mode=1",
// "transparent_hugepage.defrag=madvise") against the scenario's
// parameters and the kernel's knobs, and fills in defaults.
func (s *Spec) Parse(settings []string) (Settings, error) {
	vals := map[string]string{}
	for _, p := range s.Params {
		vals[p.Name] = p.Default
	}
	var knobs []Knob
	for _, set := range settings {
		name, value, ok := strings.Cut(set, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return Settings{}, fmt.Errorf("setting %q: want NAME=VALUE", ClipValue(set))
		}
		if p, ok := s.Param(name); ok {
			norm, err := p.Check(value)
			if err != nil && p.Kind == KindMempolicy {
				return Settings{}, clipQuoted(err, value) // mm's message names the policy
			}
			if err != nil {
				return Settings{}, fmt.Errorf("%s: %v", name, err)
			}
			vals[name] = norm
			continue
		}
		if !mm.IsSysctl(name) && !mm.IsBlockKnob(name) && !mm.IsTHPKnob(name) {
			return Settings{}, fmt.Errorf("unknown parameter or knob %q for scenario %s (see 'pagesim scenarios')", ClipValue(name), s.ID)
		}
		k, err := CheckKnob(name, value)
		if err != nil {
			return Settings{}, clipQuoted(err, value)
		}
		knobs = append(knobs, k)
	}
	return Settings{Values: Values{vals: vals}, Knobs: knobs}, nil
}

// ParseMap is Parse for values kept by name (the page's): the parameters
// in the scenario's order, then the knobs in theirs.
func (s *Spec) ParseMap(params map[string]string, knobs []Knob) (Settings, error) {
	var settings []string
	for _, p := range s.Params {
		if v, ok := params[p.Name]; ok {
			settings = append(settings, p.Name+"="+v)
		}
	}
	for _, k := range knobs {
		settings = append(settings, k.Name+"="+k.Value)
	}
	return s.Parse(settings)
}

// CheckKnob validates a sysctl (vm.defrag_mode, /proc/sys/vm/...), a block
// queue attribute (block.DEV.queue.nr_requests, /sys/block/...) or a THP
// setting (transparent_hugepage.defrag, /sys/kernel/mm/...) and returns it
// by its canonical name, with the value trimmed.
func CheckKnob(name, value string) (Knob, error) {
	name = strings.TrimSpace(name)
	value = strings.TrimSpace(value)
	switch {
	case mm.IsSysctl(name):
		if err := mm.ValidateSysctl(name, value); err != nil {
			return Knob{}, err
		}
	case mm.IsBlockKnob(name):
		if err := mm.ValidateBlockKnob(name, value); err != nil {
			return Knob{}, err
		}
	case mm.IsTHPKnob(name):
		t := mm.DefaultTHPSettings()
		if err := t.SetKnob(name, value); err != nil {
			return Knob{}, err
		}
	default:
		return Knob{}, fmt.Errorf("no such sysctl, block queue attribute or transparent_hugepage setting")
	}
	return Knob{Name: normKnob(name), Value: value}, nil
}

// isVMStatName reports whether /proc/vmstat has a line of that name.
func isVMStatName(name string) bool {
	for _, names := range [][]string{mm.ZoneStatNames[:], mm.NumaEventNames[:], mm.NodeStatNames[:], mm.VMEventNames[:]} {
		if slices.Contains(names, name) {
			return true
		}
	}
	return false
}

func normKnob(name string) string {
	name = strings.TrimPrefix(name, "/proc/sys/")
	name = strings.TrimPrefix(name, "/sys/kernel/mm/")
	name = strings.TrimPrefix(name, "/sys/")
	return strings.ReplaceAll(name, "/", ".")
}

// CheckBudget returns an *mm.BudgetError when machines runs of the
// scenario with values v, simulated at once, would cost more than limit
// bytes (0 means no limit), and the layout's error when v gives no machine.
func (s *Spec) CheckBudget(v Values, machines int, limit uint64) error {
	cfg, err := s.Layout(v)
	if err != nil {
		return err
	}
	return mm.CheckBudget(cfg, machines, limit)
}

// newMachine boots a scenario's machine from lay. Every scenario boots
// through it, so that its runs vary with the seed through the causes the
// engine models, and only through them (docs/FIDELITY.md, "Run-to-run
// variation"): where boot leaves memory free (KASLR and deferred struct
// page init, engine/mm/mm_init.go) and when tasks run (idle-state exits,
// timer expiry and fork placement, engine/sim/sched.go). preV57 says the
// kernel base predates v5.7, whose deferred init is multithreaded. The
// run's seed and memory budget come from cfg.
func newMachine(lay mm.Config, cfg Config, preV57 bool) (*mm.Machine, error) {
	lay.Seed, lay.MaxBytes = cfg.Seed, cfg.MaxBytes
	lay.Boot = mm.BootConfig{KASLR: true, DeferredInitMultithreaded: !preV57}
	lay.Sched = sim.DefaultSched()
	lay.Recorder = cfg.Recorder
	return mm.NewMachine(lay)
}

// ApplyKnobs writes knobs to a machine, in order.
func ApplyKnobs(m *mm.Machine, knobs []Knob) error {
	for _, k := range knobs {
		var err error
		switch {
		case mm.IsSysctl(k.Name):
			err = m.SetSysctl(k.Name, k.Value)
		case mm.IsBlockKnob(k.Name):
			err = m.SetBlockKnob(k.Name, k.Value)
		default:
			err = m.SetTHPKnob(k.Name, k.Value)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// EffectiveParams returns every parameter and knob with its value, for the
// JSON report: parameters, then the scenario's knobs, then the user's.
func EffectiveParams(s *Spec, st Settings) map[string]string {
	out := st.Values.Map()
	for _, k := range s.Knobs {
		out[k.Name] = k.Value
	}
	for _, k := range st.Knobs {
		out[k.Name] = k.Value
	}
	return out
}

// ClipValue shortens a value the user gave for an error message that
// quotes it, so that a pasted blob still makes a one-line error a person
// reads. ui/app's link decoder uses it too.
func ClipValue(s string) string {
	r := []rune(s)
	if len(r) > 40 {
		return string(r[:40]) + "..."
	}
	return s
}

// clipQuoted is err with every quotation of a long value clipped
// (ClipValue), for the messages of mm's knob and policy parsers.
func clipQuoted(err error, value string) error {
	v := strings.TrimSpace(value)
	if len([]rune(v)) <= 40 || !strings.Contains(err.Error(), v) {
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), v, ClipValue(v)))
}
