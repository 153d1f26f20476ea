// Package scenario holds the patch scenarios: for each seed, the machine,
// the knobs, the workload, the variants (named sets of the engine's patch
// switches) and the metrics read from the engine's counters, plus the
// cover-letter text and JSON reports.
//
// A scenario never writes a metric: every number it reports is read from a
// counter the simulation maintains (vmstat, the engine's slow-path and
// fragmentation tallies, a workload's own clock). A variant only flips
// switches on the machine before the workload starts.
package scenario

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/sim"
)

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

func (k ParamKind) String() string { return kindNames[k] }

// Param describes one scenario parameter.
type Param struct {
	Name    string   `json:"name"`
	Help    string   `json:"help"`
	Kind    string   `json:"kind"`
	Default string   `json:"default"`
	Min     *float64 `json:"min,omitempty"`
	Max     *float64 `json:"max,omitempty"`
	Choices []string `json:"choices,omitempty"`
	kind    ParamKind
}

func rangeParam(name, help string, kind ParamKind, def string, min, max float64) Param {
	return Param{Name: name, Help: help, Kind: kind.String(), Default: def, Min: &min, Max: &max, kind: kind}
}

func boolParam(name, help, def string) Param {
	return Param{Name: name, Help: help, Kind: KindBool.String(), Default: def, kind: KindBool}
}

func choiceParam(name, help, def string, choices ...string) Param {
	return Param{Name: name, Help: help, Kind: KindChoice.String(), Default: def, Choices: choices, kind: KindChoice}
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
}

// Knob is a sysctl or THP sysfs setting by its kernel path.
type Knob struct {
	Name, Value string
}

// Config is what one run needs.
type Config struct {
	Variant string
	Params  Values
	Knobs   []Knob
	Seed    uint64
	// MaxBytes is the memory budget of one machine (mm.MachineBytes);
	// 0 means none. Callers check the whole budget first (CheckBudget);
	// this is the boot's own guard.
	MaxBytes uint64
}

// Run is one variant's simulation in progress.
type Run interface {
	// Machine is the machine being simulated now (scenarios that boot a
	// machine per step, such as one per guest size, switch it).
	Machine() *mm.Machine
	// Advance runs simulated time forward by at most budget and reports
	// whether the run is finished.
	Advance(budget sim.Time) bool
	// Now is the current machine's simulated time.
	Now() sim.Time
	// Metrics returns the metrics measured so far (all of them once done).
	Metrics() map[string]float64
	// Status is a one-line description of where the run is.
	Status() string
	// Lines returns the run's own output lines, in the seed's form.
	Lines() []string
}

// Spec describes a scenario.
type Spec struct {
	ID        string                  `json:"id"`
	Title     string                  `json:"title"`
	Seed      string                  `json:"seed"`
	Patch     string                  `json:"patch"`
	Summary   string                  `json:"summary"`
	Params    []Param                 `json:"params"`
	Variants  []Variant               `json:"variants"`
	MetricsOf func(v Values) []Metric `json:"-"`
	// SeedMachine describes the machine of the seed's measurement.
	SeedMachine string `json:"seed_machine"`
	// Machine describes the simulated machine for the given parameters.
	Machine func(v Values) string `json:"-"`
	// Layout returns the machine a run boots for the given parameters
	// (a run that boots several one after another boots this one each
	// time): the memory budget is checked against it before a run starts.
	Layout func(v Values) (mm.Config, error) `json:"-"`
	// Start begins one run.
	Start func(cfg Config) (Run, error) `json:"-"`
	// Report formats the result table in the cover letter's form.
	Report func(r *Result) string `json:"-"`
	// Knobs are the scenario's default knob settings (applied before
	// the user's).
	Knobs []Knob `json:"knobs"`
	// UseMedian says the seed reported medians.
	UseMedian bool `json:"use_median,omitempty"`
	// MaxScale1Seconds is a documentation hint, not enforced.
}

var registry []*Spec

func register(s *Spec) { registry = append(registry, s) }

// All returns every scenario, sorted by seed.
func All() []*Spec {
	out := append([]*Spec(nil), registry...)
	sort.Slice(out, func(i, j int) bool { return out[i].Seed < out[j].Seed })
	return out
}

// Get returns a scenario by ID.
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

func (s *Spec) hasVariant(name string) bool {
	for _, v := range s.Variants {
		if v.Name == name {
			return true
		}
	}
	return false
}

// Values holds a scenario's parameter values, validated.
type Values struct {
	spec []Param
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
	Knobs  []Knob
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
			return Settings{}, fmt.Errorf("setting %q: want NAME=VALUE", set)
		}
		if p := s.param(name); p != nil {
			norm, err := p.validate(value)
			if err != nil {
				return Settings{}, err
			}
			vals[name] = norm
			continue
		}
		switch {
		case mm.IsSysctl(name):
			if err := mm.ValidateSysctl(name, value); err != nil {
				return Settings{}, err
			}
			knobs = append(knobs, Knob{normKnob(name), strings.TrimSpace(value)})
		case mm.IsBlockKnob(name):
			if err := mm.ValidateBlockKnob(name, value); err != nil {
				return Settings{}, err
			}
			knobs = append(knobs, Knob{normKnob(name), strings.TrimSpace(value)})
		case mm.IsTHPKnob(name):
			var t mm.THPSettings
			t = mm.DefaultTHPSettings()
			if err := t.SetKnob(name, value); err != nil {
				return Settings{}, err
			}
			knobs = append(knobs, Knob{normKnob(name), strings.TrimSpace(value)})
		default:
			return Settings{}, fmt.Errorf("unknown parameter or knob %q for scenario %s (see 'pagesim scenarios')", name, s.ID)
		}
	}
	v := Values{spec: s.Params, vals: vals}
	return Settings{Values: v, Knobs: knobs}, nil
}

func normKnob(name string) string {
	name = strings.TrimSpace(name)
	name = strings.TrimPrefix(name, "/proc/sys/")
	name = strings.TrimPrefix(name, "/sys/kernel/mm/")
	name = strings.TrimPrefix(name, "/sys/")
	return strings.ReplaceAll(name, "/", ".")
}

func (s *Spec) param(name string) *Param {
	for i := range s.Params {
		if s.Params[i].Name == name {
			return &s.Params[i]
		}
	}
	return nil
}

func (p *Param) validate(value string) (string, error) {
	value = strings.TrimSpace(value)
	checkRange := func(f float64) error {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("%s: %q is not a number", p.Name, value)
		}
		if p.Min != nil && f < *p.Min {
			return fmt.Errorf("%s: %s is below the minimum %g", p.Name, value, *p.Min)
		}
		if p.Max != nil && f > *p.Max {
			return fmt.Errorf("%s: %s is above the maximum %g", p.Name, value, *p.Max)
		}
		return nil
	}
	switch p.kind {
	case KindInt:
		n, err := strconv.Atoi(value)
		if err != nil {
			return "", fmt.Errorf("%s: %q is not an integer", p.Name, value)
		}
		return strconv.Itoa(n), checkRange(float64(n))
	case KindFloat:
		f, err := strconv.ParseFloat(value, 64)
		if err != nil {
			return "", fmt.Errorf("%s: %q is not a number", p.Name, value)
		}
		return strconv.FormatFloat(f, 'g', -1, 64), checkRange(f)
	case KindBool:
		switch strings.ToLower(value) {
		case "true", "1", "yes", "on":
			return "true", nil
		case "false", "0", "no", "off":
			return "false", nil
		}
		return "", fmt.Errorf("%s: %q is not true or false", p.Name, value)
	case KindChoice:
		for _, c := range p.Choices {
			if c == value {
				return value, nil
			}
		}
		return "", fmt.Errorf("%s: %q is not one of %s", p.Name, value, strings.Join(p.Choices, ", "))
	case KindFloatList:
		parts := strings.Split(value, ",")
		if len(parts) == 0 || len(parts) > 16 || value == "" {
			return "", fmt.Errorf("%s: want a comma list of 1 to 16 numbers, got %q", p.Name, value)
		}
		var norm []string
		for _, part := range parts {
			f, err := strconv.ParseFloat(strings.TrimSpace(part), 64)
			if err != nil {
				return "", fmt.Errorf("%s: %q is not a number", p.Name, part)
			}
			if err := checkRange(f); err != nil {
				return "", err
			}
			n := strconv.FormatFloat(f, 'g', -1, 64)
			for _, prev := range norm {
				if prev == n {
					// Each value names its own metrics (elapsed_s_30).
					return "", fmt.Errorf("%s: %s is listed twice", p.Name, n)
				}
			}
			norm = append(norm, n)
		}
		return strings.Join(norm, ","), nil
	case KindMempolicy:
		if _, err := mm.ParseMempolicy(value, 64); err != nil {
			return "", err // names the policy already
		}
		return value, nil
	}
	return value, nil
}

// CheckBudget returns an *mm.BudgetError when machines runs of the
// scenario with values v, simulated at once, would cost more than limit
// bytes (0 means no limit), and the layout's error when v gives no machine.
func (s *Spec) CheckBudget(v Values, machines int, limit uint64) error {
	if s.Layout == nil {
		return fmt.Errorf("scenario %s has no layout to check its memory budget against (a pagesim bug)", s.ID)
	}
	cfg, err := s.Layout(v)
	if err != nil {
		return err
	}
	return mm.CheckBudget(cfg, machines, limit)
}

// applyKnobs writes the scenario's and the user's knobs to a machine.
func applyKnobs(m *mm.Machine, knobs []Knob) error {
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
