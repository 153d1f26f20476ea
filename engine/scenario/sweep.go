package scenario

// sweep.go runs a scenario over a grid of settings: `pagesim sweep
// SCENARIO --vary NAME=V1,V2,...`, every combination of the varied values
// x the variants x the runs, the runs of each point from the same seeds
// (run r from seed+r at every point, so that two points differ by their
// settings and not by their draws).
//
// # The grid
//
// An Axis is one varied parameter or knob and its values, in the order
// given; the first axis varies slowest. Every value passes the check
// `--set` applies. A list parameter (thp-thisnode's guest_gb, whose every
// value is a phase with its own metrics: gb_per_s_30, gb_per_s_34, ...)
// takes one value per point, and its metrics lose the value's suffix
// (gb_per_s), so that a metric names the same quantity at every point and
// can be drawn against the axis.
//
// # Records, shards and merging
//
// A sweep's result is a header (scenario, seed, runs, settings, axes,
// variants, metrics, pagesim's version) and one record per run, in the
// grid's order: point, variant, run. Record k belongs to shard k mod N of
// N: round robin, so the expensive end of an axis spreads over the shards.
// A shard's JSON is the header with the shard's number and its records;
// MergeSweeps checks that shards are of one sweep and complete, and
// returns exactly the result the unsharded sweep gives, so that every
// output (JSON, CSV, text, plot) made from it is the same bytes. The
// unsharded JSON is itself a shard (0 of 1): merging it alone prints any
// other format of the same sweep.

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/sim"
)

// Grid limits: refused before anything runs.
const (
	// MaxSweepPoints is the most grid points (combinations of values).
	MaxSweepPoints = 10000
	// MaxSweepRuns is the most runs in a sweep (points x variants x
	// runs); each keeps its metrics (a few KiB) until the sweep ends.
	MaxSweepRuns = 100000
)

// Axis is one varied setting: a parameter or a knob by its canonical name,
// and its values in normal form, in the order given.
type Axis struct {
	Name   string   `json:"name"`
	Values []string `json:"values"`
	// list says the parameter is a list (each point takes one value,
	// and the metrics lose its suffix).
	list bool
}

// ParseAxis parses NAME=V1,V2,... for the scenario. Values are separated
// by commas, or by semicolons when the text holds one (a value that is
// itself a comma list: mempolicy=bind:0,1;interleave:0,1).
func (s *Spec) ParseAxis(arg string) (Axis, error) {
	name, list, ok := strings.Cut(arg, "=")
	if !ok || strings.TrimSpace(name) == "" || strings.TrimSpace(list) == "" {
		return Axis{}, fmt.Errorf("--vary %q: want NAME=V1,V2,...", arg)
	}
	sep := ","
	if strings.Contains(list, ";") {
		sep = ";"
	}
	return s.checkAxis(name, strings.Split(list, sep))
}

// checkAxis checks an axis's values as --set would, one by one, and
// returns the axis with its name and values in normal form.
func (s *Spec) checkAxis(name string, values []string) (Axis, error) {
	name = strings.TrimSpace(name)
	p, isParam := s.Param(name)
	if !isParam && !mm.IsSysctl(name) && !mm.IsBlockKnob(name) && !mm.IsTHPKnob(name) {
		return Axis{}, fmt.Errorf("--vary: unknown parameter or knob %q for scenario %s (see 'pagesim scenarios')", name, s.ID)
	}
	ax := Axis{Name: canonicalName(name), list: isParam && p.Kind == KindFloatList}
	if len(values) == 0 {
		return Axis{}, fmt.Errorf("--vary %s: no value", name)
	}
	for _, v := range values {
		var norm string
		var err error
		if isParam {
			norm, err = p.Check(v)
			if err == nil && ax.list && strings.Contains(norm, ",") {
				err = fmt.Errorf("%q is a list; a point takes one value", v)
			}
		} else {
			var k Knob
			k, err = CheckKnob(name, v)
			norm = k.Value
		}
		if err != nil {
			return Axis{}, fmt.Errorf("--vary %s: %v", name, err)
		}
		if slices.Contains(ax.Values, norm) {
			return Axis{}, fmt.Errorf("--vary %s: %s is listed twice", name, norm)
		}
		ax.Values = append(ax.Values, norm)
	}
	return ax, nil
}

// SweepOptions control Sweep: the run's options (Settings are the fixed
// ones) and the axes.
type SweepOptions struct {
	Options
	// Vary are the axes, NAME=V1,V2,... each (ParseAxis).
	Vary []string
	// Shard and Shards make this run the Shard-th (from 0) of Shards
	// slices of the grid's runs; Shards 0 or 1 is the whole grid.
	Shard, Shards int
}

// SweepShard names a shard: Index of Count, from 0.
type SweepShard struct {
	Index int `json:"index"`
	Count int `json:"count"`
}

// SweepRecord is one run of a sweep.
type SweepRecord struct {
	// Index is the run's place in the grid's order (point, variant,
	// run).
	Index int `json:"index"`
	Point int `json:"point"`
	// Params are the varied settings' values at the point.
	Params  map[string]string  `json:"params"`
	Variant string             `json:"variant"`
	Run     int                `json:"run"` // from 1
	Seed    uint64             `json:"seed"`
	Metrics map[string]float64 `json:"metrics"`
}

// SweepResult is a sweep's (or a shard's) outcome: its header and its
// runs in the grid's order.
type SweepResult struct {
	Pagesim  string `json:"pagesim"`
	Scenario string `json:"scenario"`
	Seed     uint64 `json:"seed"`
	Runs     int    `json:"runs"`
	// Settings are the fixed settings (--set) in normal form.
	Settings []string `json:"settings"`
	// Params are the fixed parameters and knobs with their values (the
	// varied ones are the records').
	Params   map[string]string `json:"params"`
	Vary     []Axis            `json:"vary"`
	Variants []string          `json:"variants"`
	// Metrics are the metrics of a point, as records name them, in
	// report order.
	Metrics []Metric      `json:"metrics"`
	Shard   *SweepShard   `json:"shard,omitempty"`
	Records []SweepRecord `json:"records"`
	spec    *Spec
	// machines describes each point's machine.
	machines []string
}

// sweepGrid is a sweep's grid, parsed and checked.
type sweepGrid struct {
	fixed    []string // the fixed settings, normal form
	axes     []Axis
	variants []string
	points   []Settings
	combos   [][]string // each point's values, one per axis
}

// combinations returns every combination of the axes' values, the first axis
// slowest.
func combinations(axes []Axis) [][]string {
	out := [][]string{nil}
	for _, ax := range axes {
		var next [][]string
		for _, c := range out {
			for _, v := range ax.Values {
				next = append(next, append(slices.Clip(c), v))
			}
		}
		out = next
	}
	return out
}

// parseAxes parses o.Vary.
func (s *Spec) parseAxes(o SweepOptions) ([]Axis, error) {
	var axes []Axis
	for _, arg := range o.Vary {
		ax, err := s.ParseAxis(arg)
		if err != nil {
			return nil, err
		}
		axes = append(axes, ax)
	}
	return axes, nil
}

// prepareSweep checks a sweep's options and axes and builds its grid.
func (s *Spec) prepareSweep(o SweepOptions, axes []Axis) (*sweepGrid, error) {
	if len(axes) == 0 {
		return nil, fmt.Errorf("a sweep varies at least one parameter or knob (--vary NAME=V1,V2,...)")
	}
	if o.Shards < 0 || o.Shards > MaxSweepRuns || o.Shard < 0 || (o.Shards > 0 && o.Shard >= o.Shards) {
		return nil, fmt.Errorf("shard %d of %d: want 0 <= I < N", o.Shard, o.Shards)
	}
	base, variants, err := s.Prepare(o.Options)
	if err != nil {
		return nil, err
	}
	g := &sweepGrid{variants: variants}
	seen := map[string]bool{}
	for _, set := range o.Settings {
		name, _, _ := strings.Cut(set, "=")
		seen[canonicalName(name)] = true
	}
	points := 1
	for _, ax := range axes {
		if seen[ax.Name] {
			return nil, fmt.Errorf("--vary %s: %s is also fixed by --set or another --vary; give it once", ax.Name, ax.Name)
		}
		seen[ax.Name] = true
		points *= len(ax.Values)
		if points > MaxSweepPoints {
			return nil, fmt.Errorf("the grid has more than %d points", MaxSweepPoints)
		}
		g.axes = append(g.axes, ax)
	}
	if n := points * len(variants) * o.Runs; n > MaxSweepRuns {
		return nil, fmt.Errorf("the sweep has %d runs (%d points x %d variants x %d runs); at most %d", n, points, len(variants), o.Runs, MaxSweepRuns)
	}
	// The fixed settings in normal form: the parameters given, then the
	// knobs.
	for _, set := range o.Settings {
		name, _, _ := strings.Cut(set, "=")
		name = strings.TrimSpace(name)
		if _, ok := s.Param(name); ok {
			g.fixed = append(g.fixed, name+"="+base.Values.String(name))
		}
	}
	for _, k := range base.Knobs {
		g.fixed = append(g.fixed, k.Name+"="+k.Value)
	}
	for _, c := range combinations(g.axes) {
		sets := slices.Clone(g.fixed)
		for i, ax := range g.axes {
			sets = append(sets, ax.Name+"="+c[i])
		}
		st, err := s.Parse(sets)
		if err != nil {
			return nil, err
		}
		// A machine the point cannot build is refused before anything
		// runs.
		if _, err := s.Layout(st.Values); err != nil {
			return nil, fmt.Errorf("at %s: %v", pointName(g.axes, c), err)
		}
		g.points = append(g.points, st)
		g.combos = append(g.combos, c)
	}
	return g, nil
}

// canonicalName is a setting's name as Parse keys it: a parameter's, or
// a knob's without its /proc/sys or sysfs prefix.
func canonicalName(name string) string { return normKnob(strings.TrimSpace(name)) }

func pointName(axes []Axis, combo []string) string {
	var parts []string
	for i, ax := range axes {
		parts = append(parts, ax.Name+"="+combo[i])
	}
	return strings.Join(parts, " ")
}

// renameMetric is a metric's name in a sweep: a list axis's value's
// suffix dropped ("gb_per_s_34" at guest_gb=34 is "gb_per_s").
func (g *sweepGrid) renameMetric(point int, name string) string {
	for i, ax := range g.axes {
		if ax.list {
			name = strings.TrimSuffix(name, "_"+g.combos[point][i])
		}
	}
	return name
}

// SweepValues returns the parameter values of every point of o's grid
// and the number of runs o makes (its shard's), for FitJobs.
func (s *Spec) SweepValues(o SweepOptions) ([]Values, int, error) {
	axes, err := s.parseAxes(o)
	if err != nil {
		return nil, 0, err
	}
	g, err := s.prepareSweep(o, axes)
	if err != nil {
		return nil, 0, err
	}
	var values []Values
	for _, st := range g.points {
		values = append(values, st.Values)
	}
	n := len(g.points) * len(g.variants) * o.Runs
	if o.Shards > 1 {
		// Runs k with k mod Shards == Shard.
		rest := 0
		if o.Shard < n%o.Shards {
			rest = 1
		}
		n = n/o.Shards + rest
	}
	return values, n, nil
}

// SweepHeader returns o's result before anything runs: its header, with
// the metrics a point reports, and no record.
func (s *Spec) SweepHeader(o SweepOptions) (*SweepResult, error) {
	axes, err := s.parseAxes(o)
	if err != nil {
		return nil, err
	}
	g, err := s.prepareSweep(o, axes)
	if err != nil {
		return nil, err
	}
	return s.newSweepResult(g, o), nil
}

// Sweep runs the grid (or o's shard of it), up to o.Jobs runs at once,
// and returns its records in the grid's order.
func (s *Spec) Sweep(o SweepOptions) (*SweepResult, error) {
	axes, err := s.parseAxes(o)
	if err != nil {
		return nil, err
	}
	g, err := s.prepareSweep(o, axes)
	if err != nil {
		return nil, err
	}
	var values []Values
	for _, st := range g.points {
		values = append(values, st.Values)
	}
	res := s.newSweepResult(g, o)
	var jobs []job
	var records []SweepRecord
	runs := len(g.variants) * o.Runs
	for p, st := range g.points {
		params := map[string]string{}
		for i, ax := range g.axes {
			params[ax.Name] = g.combos[p][i]
		}
		for vi, v := range g.variants {
			for r := range o.Runs {
				k := p*runs + vi*o.Runs + r
				if o.Shards > 1 && k%o.Shards != o.Shard {
					continue
				}
				seed := o.Seed + uint64(r)
				jobs = append(jobs, job{st: st, variant: v, run: r, seed: seed,
					label: fmt.Sprintf("%s: %s run %d", pointName(g.axes, g.combos[p]), v, r+1)})
				records = append(records, SweepRecord{Index: k, Point: p, Params: params, Variant: v, Run: r + 1, Seed: seed})
			}
		}
	}
	workers, err := s.FitJobs(values, o.Jobs, len(jobs), o.MaxBytes)
	if err != nil {
		return nil, err
	}
	if o.Slice <= 0 {
		o.Slice = sim.Second
	}
	done, err := s.runJobs(jobs, o.Options, workers)
	if err != nil {
		return nil, err
	}
	for i := range records {
		m := map[string]float64{}
		for k, v := range done[i].metrics {
			m[g.renameMetric(records[i].Point, k)] = v
		}
		records[i].Metrics = m
	}
	res.Records = records
	return res, nil
}

// newSweepResult is the header of a sweep's result.
func (s *Spec) newSweepResult(g *sweepGrid, o SweepOptions) *SweepResult {
	res := &SweepResult{Pagesim: Version, Scenario: s.ID, Seed: o.Seed, Runs: o.Runs, Settings: g.fixed,
		Vary: g.axes, Variants: g.variants, spec: s}
	if res.Settings == nil {
		res.Settings = []string{}
	}
	res.Params = EffectiveParams(s, g.points[0])
	for _, ax := range g.axes {
		delete(res.Params, ax.Name)
	}
	seen := map[string]bool{}
	for p, st := range g.points {
		for _, m := range s.MetricsOf(st.Values) {
			m.Name = g.renameMetric(p, m.Name)
			if !seen[m.Name] {
				seen[m.Name] = true
				res.Metrics = append(res.Metrics, m)
			}
		}
		res.machines = append(res.machines, s.Machine(st.Values))
	}
	if o.Shards > 1 {
		res.Shard = &SweepShard{Index: o.Shard, Count: o.Shards}
	}
	return res
}

// Spec returns the sweep's scenario.
func (r *SweepResult) Spec() *Spec { return r.spec }

// Points is the number of grid points.
func (r *SweepResult) Points() int {
	n := 1
	for _, ax := range r.Vary {
		n *= len(ax.Values)
	}
	return n
}

// JSON returns the result as one JSON object.
func (r *SweepResult) JSON() ([]byte, error) {
	return json.MarshalIndent(r, "", "  ")
}

// MaxSweepFileBytes is the largest sweep or shard JSON MergeSweeps reads.
const MaxSweepFileBytes = 256 << 20

// ReadSweep reads a sweep's or a shard's JSON, as Sweep wrote it.
func ReadSweep(rd io.Reader) (*SweepResult, error) {
	b, err := io.ReadAll(io.LimitReader(rd, MaxSweepFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxSweepFileBytes {
		return nil, fmt.Errorf("larger than %d bytes", MaxSweepFileBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var r SweepResult
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("not a sweep's JSON: %v", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("not a sweep's JSON: more than one value")
	}
	if r.Pagesim == "" || r.Scenario == "" {
		return nil, fmt.Errorf("not a sweep's JSON: no pagesim version or scenario")
	}
	return &r, nil
}

// MergeSweeps joins the shards of one sweep (each read by ReadSweep, in
// any order) into the result the unsharded sweep gives, or says why they
// do not make one: another version of pagesim, another sweep, a shard
// missing or given twice, a record out of its place.
func MergeSweeps(names []string, shards []*SweepResult) (*SweepResult, error) {
	if len(shards) == 0 {
		return nil, fmt.Errorf("no shard to merge")
	}
	first := shards[0]
	if first.Pagesim != Version {
		return nil, fmt.Errorf("%s was written by pagesim %s; this is pagesim %s", names[0], first.Pagesim, Version)
	}
	s, err := Get(first.Scenario)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", names[0], err)
	}
	count := 1
	if first.Shard != nil {
		count = first.Shard.Count
	}
	if len(shards) != count {
		return nil, fmt.Errorf("%s is one of %d shards; %d given", names[0], count, len(shards))
	}
	head := func(r *SweepResult) map[string]string {
		out := map[string]string{}
		for name, v := range map[string]any{"pagesim": r.Pagesim, "scenario": r.Scenario, "seed": r.Seed, "runs": r.Runs,
			"settings": r.Settings, "params": r.Params, "vary": r.Vary, "variants": r.Variants, "metrics": r.Metrics} {
			b, _ := json.Marshal(v)
			out[name] = string(b)
		}
		return out
	}
	want := head(first)
	byIndex := make([]*SweepResult, count)
	for i, sh := range shards {
		got := head(sh)
		for _, field := range []string{"pagesim", "scenario", "seed", "runs", "settings", "params", "vary", "variants", "metrics"} {
			if got[field] != want[field] {
				return nil, fmt.Errorf("%s is not a shard of the sweep of %s: its %s is %s, not %s", names[i], names[0], field, got[field], want[field])
			}
		}
		idx, n := 0, 1
		if sh.Shard != nil {
			idx, n = sh.Shard.Index, sh.Shard.Count
		}
		if n != count || idx < 0 || idx >= count {
			return nil, fmt.Errorf("%s is shard %d of %d; %s is one of %d", names[i], idx, n, names[0], count)
		}
		if byIndex[idx] != nil {
			return nil, fmt.Errorf("%s and another file are both shard %d of %d", names[i], idx, count)
		}
		byIndex[idx] = sh
	}
	// Rebuild the grid from the header and check every record against
	// its place.
	var axes []Axis
	for _, ax := range first.Vary {
		a, err := s.checkAxis(ax.Name, ax.Values)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", names[0], err)
		}
		axes = append(axes, a)
	}
	o := SweepOptions{Options: Options{Variants: first.Variants, Seed: first.Seed, Runs: first.Runs, Settings: first.Settings}}
	g, err := s.prepareSweep(o, axes)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", names[0], err)
	}
	res := s.newSweepResult(g, o)
	if head(res)["metrics"] != want["metrics"] || head(res)["params"] != want["params"] {
		return nil, fmt.Errorf("%s: its header does not match its own grid", names[0])
	}
	total := len(g.points) * len(g.variants) * o.Runs
	res.Records = make([]SweepRecord, total)
	filled := make([]bool, total)
	for i, sh := range byIndex {
		for _, rec := range sh.Records {
			k := rec.Index
			if k < 0 || k >= total || k%count != i || filled[k] {
				return nil, fmt.Errorf("shard %d of %d has a record out of place (index %d)", i, count, k)
			}
			p, v, r := k/(len(g.variants)*o.Runs), (k/o.Runs)%len(g.variants), k%o.Runs
			if rec.Point != p || rec.Variant != g.variants[v] || rec.Run != r+1 || rec.Seed != o.Seed+uint64(r) {
				return nil, fmt.Errorf("shard %d of %d: record %d is not point %d, %s run %d", i, count, k, p, g.variants[v], r+1)
			}
			filled[k] = true
			rec.Params = map[string]string{}
			for a, ax := range g.axes {
				rec.Params[ax.Name] = g.combos[p][a]
			}
			res.Records[k] = rec
		}
	}
	for k, ok := range filled {
		if !ok {
			return nil, fmt.Errorf("shard %d of %d lacks record %d", k%count, count, k)
		}
	}
	return res, nil
}

// SweepStat is a metric's spread over one point's runs of one variant.
type SweepStat struct {
	Mean, Stddev, Min, Max float64
	// N is the runs that report the metric.
	N int
}

// Stat returns metric's statistics over the runs of variant at point.
func (r *SweepResult) Stat(point int, variant, metric string) SweepStat {
	var xs []float64
	for _, rec := range r.runsOf(point, variant) {
		if x, ok := rec.Metrics[metric]; ok {
			xs = append(xs, x)
		}
	}
	st := SweepStat{N: len(xs)}
	if len(xs) == 0 {
		return st
	}
	st.Min, st.Max = slices.Min(xs), slices.Max(xs)
	var sum float64
	for _, x := range xs {
		sum += x
	}
	st.Mean = sum / float64(len(xs))
	if len(xs) > 1 {
		var ss float64
		for _, x := range xs {
			ss += (x - st.Mean) * (x - st.Mean)
		}
		st.Stddev = math.Sqrt(ss / float64(len(xs)-1))
	}
	return st
}

// runsOf returns the records of variant's runs at point. In a whole
// sweep (Sweep's or MergeSweeps' result) they are the Runs records from
// index (point x variants + variant) x Runs, and Stat over every point
// reads each record once; in a shard, or where a record is not in its
// place, they are looked for.
func (r *SweepResult) runsOf(point int, variant string) []SweepRecord {
	v := slices.Index(r.Variants, variant)
	if v >= 0 && r.Shard == nil && r.Runs > 0 && point >= 0 {
		k := (point*len(r.Variants) + v) * r.Runs
		if k+r.Runs <= len(r.Records) {
			in := r.Records[k : k+r.Runs]
			if !slices.ContainsFunc(in, func(rec SweepRecord) bool { return rec.Point != point || rec.Variant != variant }) {
				return in
			}
		}
	}
	var out []SweepRecord
	for _, rec := range r.Records {
		if rec.Point == point && rec.Variant == variant {
			out = append(out, rec)
		}
	}
	return out
}

// Combo returns the axes' values at a point.
func (r *SweepResult) Combo(point int) []string {
	out := make([]string, len(r.Vary))
	for i := len(r.Vary) - 1; i >= 0; i-- {
		n := len(r.Vary[i].Values)
		out[i] = r.Vary[i].Values[point%n]
		point /= n
	}
	return out
}

// Metric returns the metric of that name.
func (r *SweepResult) Metric(name string) (Metric, bool) {
	for _, m := range r.Metrics {
		if m.Name == name {
			return m, true
		}
	}
	return Metric{}, false
}

// CheckMetric returns an error naming the metrics when r has no metric of
// that name.
func (r *SweepResult) CheckMetric(name string) error {
	if _, ok := r.Metric(name); ok {
		return nil
	}
	var names []string
	for _, m := range r.Metrics {
		names = append(names, m.Name)
	}
	return fmt.Errorf("the sweep has no metric %q (have: %s)", name, strings.Join(names, ", "))
}

// CSV returns one row per run: the axes' values, the variant, the run and
// its seed, then every metric (empty where the run did not report it).
func (r *SweepResult) CSV() []byte {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	head := []string{}
	for _, ax := range r.Vary {
		head = append(head, ax.Name)
	}
	head = append(head, "variant", "run", "seed")
	for _, m := range r.Metrics {
		head = append(head, m.Name)
	}
	w.Write(head)
	for _, rec := range r.Records {
		row := r.Combo(rec.Point)
		row = append(row, rec.Variant, strconv.Itoa(rec.Run), strconv.FormatUint(rec.Seed, 10))
		for _, m := range r.Metrics {
			if x, ok := rec.Metrics[m.Name]; ok {
				row = append(row, strconv.FormatFloat(x, 'f', -1, 64))
			} else {
				row = append(row, "")
			}
		}
		w.Write(row)
	}
	w.Flush()
	return b.Bytes()
}

// Text returns the sweep's tables: for each of the metrics (the headline
// ones when none is named), a row per point and a column per variant,
// mean ± stddev over the runs (a spread the column's decimals would round
// to zero keeps two significant digits, as the run report's cells do). A table is at most 72 columns where its
// numbers fit, wider where they do not.
func (r *SweepResult) Text(metrics []string) (string, error) {
	if len(metrics) == 0 {
		for _, m := range r.Metrics {
			if m.Headline {
				metrics = append(metrics, m.Name)
			}
		}
		if len(metrics) == 0 && len(r.Metrics) > 0 {
			metrics = []string{r.Metrics[0].Name}
		}
	}
	for _, m := range metrics {
		if err := r.CheckMetric(m); err != nil {
			return "", err
		}
	}
	var b strings.Builder
	for _, l := range r.Header() {
		b.WriteString(l + "\n")
	}
	for _, name := range metrics {
		m, _ := r.Metric(name)
		b.WriteByte('\n')
		title := m.Name + ": " + m.Help
		if r.Runs > 1 {
			title += fmt.Sprintf(" (mean ± stddev of %d runs)", r.Runs)
		}
		for _, l := range wrap(title, 72) {
			b.WriteString(l + "\n")
		}
		b.WriteByte('\n')
		b.WriteString(r.table(name))
	}
	return b.String(), nil
}

// Header returns the sweep report's header lines.
func (r *SweepResult) Header() []string {
	s := r.spec
	id := s.ID
	if s.Seed != "" {
		id += " (seed " + s.Seed + ")"
	}
	runs := "1 run"
	if r.Runs > 1 {
		runs = fmt.Sprintf("%d runs", r.Runs)
	}
	lines := []string{fmt.Sprintf("pagesim %s: sweep of %s, seed %d, %s a point", Version, id, r.Seed, runs)}
	for _, ax := range r.Vary {
		lines = append(lines, wrap("vary: "+ax.Name+" = "+strings.Join(ax.Values, ", "), 72)...)
	}
	if len(r.Settings) > 0 {
		lines = append(lines, wrap("set: "+strings.Join(r.Settings, " "), 72)...)
	}
	lines = append(lines, fmt.Sprintf("%d points x %d variants x %s = %d runs", r.Points(), len(r.Variants), runs, r.Points()*len(r.Variants)*r.Runs))
	if s.Patch != "" {
		lines = append(lines, wrap("patch: "+s.Patch, 72)...)
	}
	machine := "machine: "
	if slices.ContainsFunc(r.machines, func(m string) bool { return m != r.machines[0] }) {
		machine += "(at the first point) "
	}
	return append(lines, wrap(machine+r.machines[0], 72)...)
}

// table is one metric's table: the axes' values, then a column per
// variant.
func (r *SweepResult) table(metric string) string {
	stats := make([][]SweepStat, r.Points())
	integers, largest := true, 0.0
	for p := range stats {
		for _, v := range r.Variants {
			st := r.Stat(p, v, metric)
			stats[p] = append(stats[p], st)
			for _, x := range []float64{st.Mean, st.Stddev} {
				integers = integers && x == math.Trunc(x)
				largest = max(largest, math.Abs(x))
			}
		}
	}
	decimals := 0
	switch {
	case integers:
	case largest >= 1000:
		decimals = 0
	case largest >= 100:
		decimals = 1
	case largest >= 1:
		decimals = 2
	default:
		decimals = 3
	}
	num := func(x float64) string { return strconv.FormatFloat(x, 'f', decimals, 64) }
	var head []string
	for _, ax := range r.Vary {
		head = append(head, ax.Name)
	}
	head = append(head, r.Variants...)
	rows := [][]string{head}
	for p := range stats {
		row := r.Combo(p)
		for _, st := range stats[p] {
			switch {
			case st.N == 0:
				row = append(row, "-")
			case r.Runs > 1:
				row = append(row, num(st.Mean)+" ± "+spread("%."+strconv.Itoa(decimals)+"f", st.Stddev))
			default:
				row = append(row, num(st.Mean))
			}
		}
		rows = append(rows, row)
	}
	return labelledTable(rows, len(r.Vary))
}

// labelledTable lays out rows as columns padded to fit, the first labels
// columns left-aligned and the others right-aligned.
func labelledTable(rows [][]string, labels int) string {
	widths := map[int]int{}
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], len([]rune(c)))
		}
	}
	var b strings.Builder
	for _, r := range rows {
		var parts []string
		for i, c := range r {
			pad := strings.Repeat(" ", widths[i]-len([]rune(c)))
			if i < labels {
				parts = append(parts, c+pad)
			} else {
				parts = append(parts, pad+c)
			}
		}
		b.WriteString(strings.TrimRight("  "+strings.Join(parts, "  "), " "))
		b.WriteByte('\n')
	}
	return b.String()
}
