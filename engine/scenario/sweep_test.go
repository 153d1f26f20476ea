package scenario

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pagesim/pagesim/engine/sim"
)

// smallSweep is thp-thisnode at a fiftieth of the seed's size over two
// guest sizes and two swap sizes, two variants, two runs: 16 runs of a
// few milliseconds each.
func smallSweep() SweepOptions {
	return SweepOptions{
		Options: Options{Seed: 3, Runs: 2, Variants: []string{"upstream", "drop-thisnode"}, Settings: []string{"scale=0.02", "vfio=false"},
			Jobs: 3, Slice: 50 * sim.Millisecond},
		Vary: []string{"guest_gb=30,42", "swap_gb=0,8"},
	}
}

func TestASweepRunsEveryPointVariantAndRunInTheGridsOrder(t *testing.T) {
	s := mustGet(t, "thp-thisnode")
	o := smallSweep()
	res, err := s.Sweep(o)
	require.NoError(t, err)
	require.Len(t, res.Records, 4*2*2)
	assert.Equal(t, 4, res.Points())
	assert.Equal(t, []Axis{{Name: "guest_gb", Values: []string{"30", "42"}, list: true}, {Name: "swap_gb", Values: []string{"0", "8"}}}, res.Vary)
	assert.Equal(t, []string{"scale=0.02", "vfio=false"}, res.Settings)
	assert.NotContains(t, res.Params, "guest_gb", "the varied settings are the records'")
	assert.Equal(t, "0.02", res.Params["scale"])
	assert.Equal(t, "always", res.Params["transparent_hugepage.defrag"], "the scenario's knobs are there")
	type key struct {
		point          int
		guest, swap    string
		variant        string
		run            int
		seed           uint64
		hasRate, named bool
	}
	var got []key
	for k, rec := range res.Records {
		assert.Equal(t, k, rec.Index)
		_, hasRate := rec.Metrics["gb_per_s"]
		_, named := rec.Metrics["gb_per_s_"+rec.Params["guest_gb"]]
		got = append(got, key{rec.Point, rec.Params["guest_gb"], rec.Params["swap_gb"], rec.Variant, rec.Run, rec.Seed, hasRate, named})
	}
	var want []key
	for p, c := range [][2]string{{"30", "0"}, {"30", "8"}, {"42", "0"}, {"42", "8"}} {
		for _, v := range []string{"upstream", "drop-thisnode"} {
			for r := 1; r <= 2; r++ {
				want = append(want, key{p, c[0], c[1], v, r, uint64(3 + r - 1), true, false})
			}
		}
	}
	assert.Equal(t, want, got, "the first --vary slowest, then the variants, then the runs from seed+r; gb_per_s_30 is gb_per_s")
	var names []string
	for _, m := range res.Metrics {
		names = append(names, m.Name)
	}
	assert.Equal(t, []string{"elapsed_s", "gb_per_s", "thp_pct", "node0_pct", "oom", "compact_stall", "allocstall_normal",
		"allocstall_movable", "pgscan_direct", "pswpout", "thp_fault_fallback"}, names)
}

func TestASweepsPointIsTheRunOfItsSettings(t *testing.T) {
	s := mustGet(t, "thp-thisnode")
	o := smallSweep()
	res, err := s.Sweep(o)
	require.NoError(t, err)
	// Point 3: guest_gb=42 swap_gb=8.
	alone, err := s.RunAll(Options{Seed: 3, Runs: 2, Variants: []string{"drop-thisnode"}, Settings: []string{"scale=0.02", "vfio=false", "guest_gb=42", "swap_gb=8"}})
	require.NoError(t, err)
	for r := range 2 {
		rec := res.Records[3*4+2+r]
		require.Equal(t, "drop-thisnode", rec.Variant)
		for k, v := range alone.Variants[0].Runs[r] {
			assert.Equal(t, v, rec.Metrics[strings.TrimSuffix(k, "_42")], "%s of run %d", k, r+1)
		}
	}
}

func TestShardsMergedAreTheWholeSweep(t *testing.T) {
	s := mustGet(t, "thp-thisnode")
	o := smallSweep()
	whole, err := s.Sweep(o)
	require.NoError(t, err)
	wholeJSON, err := whole.JSON()
	require.NoError(t, err)
	var names []string
	var shards []*SweepResult
	for _, i := range []int{2, 0, 1} { // in any order
		o.Shard, o.Shards = i, 3
		sh, err := s.Sweep(o)
		require.NoError(t, err)
		assert.Equal(t, &SweepShard{Index: i, Count: 3}, sh.Shard)
		for _, rec := range sh.Records {
			assert.Equal(t, i, rec.Index%3, "round robin")
		}
		b, err := sh.JSON()
		require.NoError(t, err)
		back, err := ReadSweep(bytes.NewReader(b))
		require.NoError(t, err)
		shards = append(shards, back)
		names = append(names, "shard"+string(rune('0'+i)))
	}
	merged, err := MergeSweeps(names, shards)
	require.NoError(t, err)
	mergedJSON, err := merged.JSON()
	require.NoError(t, err)
	assert.Equal(t, string(wholeJSON), string(mergedJSON))
	assert.Equal(t, whole.CSV(), merged.CSV())
	wt, err := whole.Text(nil)
	require.NoError(t, err)
	mt, err := merged.Text(nil)
	require.NoError(t, err)
	assert.Equal(t, wt, mt)

	// The whole sweep's JSON is a shard of one.
	back, err := ReadSweep(bytes.NewReader(wholeJSON))
	require.NoError(t, err)
	again, err := MergeSweeps([]string{"sweep.json"}, []*SweepResult{back})
	require.NoError(t, err)
	againText, err := again.Text(nil)
	require.NoError(t, err)
	assert.Equal(t, wt, againText)

	// What does not make the sweep is refused.
	edit := func(i int, f func(r *SweepResult)) []*SweepResult {
		out := make([]*SweepResult, len(shards))
		for j, sh := range shards {
			b, err := sh.JSON()
			require.NoError(t, err)
			out[j], err = ReadSweep(bytes.NewReader(b))
			require.NoError(t, err)
		}
		f(out[i])
		return out
	}
	for _, tc := range []struct {
		name   string
		shards []*SweepResult
		want   string
	}{
		{"a shard missing", shards[:2], "shard2 is one of 3 shards; 2 given"},
		{"a shard given twice", []*SweepResult{shards[1], shards[1], shards[2]}, "shard0 and another file are both shard 0 of 3"},
		{"another sweep's shard", edit(1, func(r *SweepResult) { r.Seed = 4 }), "shard0 is not a shard of the sweep of shard2: its seed is 4, not 3"},
		{"another version's shard", edit(0, func(r *SweepResult) { r.Pagesim = "0.0.1" }), "shard2 was written by pagesim 0.0.1; this is pagesim " + Version},
		{"a record out of place", edit(2, func(r *SweepResult) { r.Records[0].Index = 2 }), "shard 1 of 3 has a record out of place (index 2)"},
		{"a record of another run", edit(0, func(r *SweepResult) { r.Records[0].Run = 2 }), "shard 2 of 3: record 2 is not point 0, drop-thisnode run 1"},
		{"a record dropped", edit(0, func(r *SweepResult) { r.Records = r.Records[1:] }), "shard 2 of 3 lacks record 2"},
		{"another scenario", edit(0, func(r *SweepResult) { r.Scenario = "nope" }), `shard2: unknown scenario "nope" (have: ` + strings.Join(ids(), ", ") + ")"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := MergeSweeps(names[:len(tc.shards)], tc.shards)
			assert.EqualError(t, err, tc.want)
		})
	}
}

func TestReadSweepRefusesWhatIsNotASweep(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"not JSON", "hello", "not a sweep's JSON: invalid character"},
		{"a run's JSON", `{"scenario": "thp-thisnode", "seed": 1, "variants": [{"name": "upstream"}]}`, "not a sweep's JSON: json: cannot unmarshal"},
		{"an unknown field", `{"pagesim": "0.1.0", "scenario": "x", "extra": 1}`, `unknown field "extra"`},
		{"two values", `{"pagesim": "0.1.0", "scenario": "x"} {}`, "more than one value"},
		{"no scenario", `{}`, "no pagesim version or scenario"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadSweep(strings.NewReader(tc.in))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestParseAxisTakesWhatSetTakesAValueAtATime(t *testing.T) {
	s := mustGet(t, "thp-thisnode")
	for _, tc := range []struct {
		arg  string
		want Axis
		err  string
	}{
		{arg: "guest_gb=30, 34.0,42", want: Axis{Name: "guest_gb", Values: []string{"30", "34", "42"}, list: true}},
		{arg: "madvise=true,no", want: Axis{Name: "madvise", Values: []string{"true", "false"}}},
		{arg: "/proc/sys/vm/defrag_mode=0,1", want: Axis{Name: "vm.defrag_mode", Values: []string{"0", "1"}}},
		{arg: "transparent_hugepage.defrag=always,madvise,never", want: Axis{Name: "transparent_hugepage.defrag", Values: []string{"always", "madvise", "never"}}},
		{arg: "mempolicy=bind:0,1;interleave:0,1", want: Axis{Name: "mempolicy", Values: []string{"bind:0,1", "interleave:0,1"}}},
		{arg: "guest_gb=30,30", err: "--vary guest_gb: 30 is listed twice"},
		{arg: "guest_gb=30;34,38", err: "--vary guest_gb: \"34,38\" is a list; a point takes one value"},
		{arg: "scale=0.5,2", err: "--vary scale: 2 is above the maximum 1"},
		{arg: "nodes=two", err: `--vary nodes: "two" is not an integer`},
		{arg: "vm.defrag_mode=0,7", err: "vm.defrag_mode"},
		{arg: "bogus=1,2", err: `--vary: unknown parameter or knob "bogus" for scenario thp-thisnode`},
		{arg: "guest_gb", err: `--vary "guest_gb": want NAME=V1,V2,...`},
		{arg: "guest_gb=", err: `want NAME=V1,V2,...`},
	} {
		t.Run(tc.arg, func(t *testing.T) {
			ax, err := s.ParseAxis(tc.arg)
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, ax)
		})
	}
}

func TestASweepRefusesAGridItCannotRun(t *testing.T) {
	s := mustGet(t, "thp-thisnode")
	for _, tc := range []struct {
		name string
		edit func(o *SweepOptions)
		want string
	}{
		{"nothing varied", func(o *SweepOptions) { o.Vary = nil }, "a sweep varies at least one parameter or knob"},
		{"a varied setting also set", func(o *SweepOptions) { o.Settings = append(o.Settings, "swap_gb=2") }, "--vary swap_gb: swap_gb is also fixed by --set or another --vary"},
		{"a knob varied twice by its two names", func(o *SweepOptions) {
			o.Vary = []string{"vm.defrag_mode=0,1", "/proc/sys/vm/defrag_mode=0,1"}
		}, "--vary vm.defrag_mode: vm.defrag_mode is also fixed"},
		{"too many points", func(o *SweepOptions) {
			o.Vary = []string{"nodes=2,3,4,5,6,7,8", "cpus=" + seq(1, 128), "host_gb=" + seq(0, 20)}
		}, "the grid has more than 10000 points"},
		{"too many runs", func(o *SweepOptions) { o.Runs = 100; o.Vary = []string{"cpus=" + seq(1, 128), "nodes=2,3,4,5,6"} }, "the sweep has 128000 runs"},
		{"a point over the budget, before anything runs", func(o *SweepOptions) {
			o.Vary = []string{"guest_gb=30", "node_gb=2,1024"}
			o.Settings = []string{"scale=1"}
		}, "needs 10.5 GiB of memory to simulate, over the limit of 1 GiB"},
		{"a shard past the last", func(o *SweepOptions) { o.Shard, o.Shards = 3, 3 }, "shard 3 of 3: want 0 <= I < N"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := smallSweep()
			tc.edit(&o)
			o.MaxBytes = 1 << 30
			_, err := s.Sweep(o)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// seq is "from,from+1,...,to".
func seq(from, to int) string {
	var parts []string
	for i := from; i <= to; i++ {
		parts = append(parts, strconv.Itoa(i))
	}
	return strings.Join(parts, ",")
}

func TestASweepsTextFitsSeventyTwoColumnsWhereItCan(t *testing.T) {
	s := mustGet(t, "thp-thisnode")
	o := smallSweep()
	o.Variants = nil // all three
	o.Vary = []string{"guest_gb=30,42"}
	res, err := s.Sweep(o)
	require.NoError(t, err)
	text, err := res.Text(nil)
	require.NoError(t, err)
	for i, l := range strings.Split(text, "\n") {
		assert.LessOrEqual(t, utf8.RuneCountInString(l), 72, "line %d: %q", i+1, l)
	}
	assert.Contains(t, text, "\ngb_per_s: GiB mapped per second")
	assert.Regexp(t, `\n  guest_gb +upstream +only-compact +drop-thisnode\n  30 +\d+\.\d\d ± \d+\.\d\d +`, text)
	_, err = res.Text([]string{"gb_per_s_30"})
	assert.EqualError(t, err, "the sweep has no metric \"gb_per_s_30\" (have: elapsed_s, gb_per_s, thp_pct, node0_pct, oom, compact_stall, allocstall_normal, allocstall_movable, pgscan_direct, pswpout, thp_fault_fallback)")
	csv := strings.Split(string(res.CSV()), "\n")
	assert.Equal(t, "guest_gb,variant,run,seed,elapsed_s,gb_per_s,thp_pct,node0_pct,oom,compact_stall,allocstall_normal,allocstall_movable,pgscan_direct,pswpout,thp_fault_fallback", csv[0])
	assert.Regexp(t, `^30,upstream,1,3,[0-9.]+,`, csv[1])
	assert.Len(t, csv, 1+2*3*2+1, "a row per run and the last newline")
}

func ids() []string {
	var out []string
	for _, s := range All() {
		out = append(out, s.ID)
	}
	return out
}

// Every registered scenario, those still to come included, sweeps over
// each of its parameters: a list parameter's metrics lose the value's
// suffix and keep their names from one value to the next, so that a
// metric can be drawn against the parameter.
func TestEveryScenarioSweepsOverEachOfItsParameters(t *testing.T) {
	for _, s := range append(All(), mustGet(t, "playground")) {
		st, err := s.Parse(nil)
		require.NoError(t, err)
		for _, p := range s.Params {
			t.Run(s.ID+"/"+p.Name, func(t *testing.T) {
				values := strings.Split(st.Values.String(p.Name), ",")
				if p.Kind != KindFloatList {
					values = values[:1]
				}
				var names [][]string
				for _, v := range values {
					head, err := s.SweepHeader(SweepOptions{Options: Options{Runs: 1}, Vary: []string{p.Name + "=" + v}})
					require.NoError(t, err)
					var ns []string
					for _, m := range head.Metrics {
						ns = append(ns, m.Name)
						if p.Kind == KindFloatList {
							assert.False(t, strings.HasSuffix(m.Name, "_"+v), "%s keeps the suffix of %s=%s", m.Name, p.Name, v)
						}
					}
					require.NotEmpty(t, ns)
					names = append(names, ns)
				}
				for _, ns := range names[1:] {
					assert.Equal(t, names[0], ns, "the same metrics at every value of %s", p.Name)
				}
			})
		}
	}
}

// FuzzReadSweep feeds ReadSweep and MergeSweeps what a merge reads from a
// file: either refuses it with an error or gives a result whose text and
// CSV print, and never panics or allocates by a number the file states.
func FuzzReadSweep(f *testing.F) {
	s := mustGetF(f, "thp-thisnode")
	res, err := s.Sweep(SweepOptions{Options: Options{Seed: 1, Runs: 2, Variants: []string{"drop-thisnode"}, Settings: []string{"scale=0.02"}},
		Vary: []string{"guest_gb=30,34"}})
	if err != nil {
		f.Fatal(err)
	}
	b, err := res.JSON()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte(`{"pagesim": "` + Version + `", "scenario": "thp-thisnode", "seed": 1, "runs": 1, "settings": [], "vary": [{"name": "guest_gb", "values": ["30"]}], "variants": ["upstream"], "shard": {"index": 0, "count": 1000000000}, "records": []}`))
	f.Add([]byte(`{"pagesim": "` + Version + `", "scenario": "playground", "seed": 1, "runs": 100, "settings": [], "vary": [{"name": "mem", "values": []}], "variants": [], "records": [{"index": -1}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := ReadSweep(bytes.NewReader(data))
		if err != nil {
			return
		}
		merged, err := MergeSweeps([]string{"fuzz.json"}, []*SweepResult{r})
		if err != nil {
			return
		}
		if _, err := merged.Text(nil); err != nil {
			t.Fatalf("a merged sweep's text: %v", err)
		}
		merged.CSV()
	})
}

func mustGetF(f *testing.F, id string) *Spec {
	f.Helper()
	s, err := Get(id)
	if err != nil {
		f.Fatal(err)
	}
	return s
}

func TestStatReadsARunsRecordsInTheirPlaceAndLooksForThemElsewhere(t *testing.T) {
	// Two points x two variants x two runs, in the grid's order.
	whole := func() *SweepResult {
		r := &SweepResult{Runs: 2, Variants: []string{"upstream", "drop-thisnode"}}
		for k := range 8 {
			r.Records = append(r.Records, SweepRecord{Index: k, Point: k / 4, Variant: r.Variants[(k/2)%2], Run: k%2 + 1,
				Metrics: map[string]float64{"oom": float64(k)}})
		}
		return r
	}
	r := whole()
	got := r.runsOf(1, "upstream")
	require.Len(t, got, 2)
	assert.Same(t, &r.Records[4], &got[0], "a whole sweep's runs are read in their place, not copied")
	assert.Equal(t, SweepStat{Mean: 4.5, Stddev: 0.7071067811865476, Min: 4, Max: 5, N: 2}, r.Stat(1, "upstream", "oom"))

	for _, tc := range []struct {
		name  string
		edit  func(r *SweepResult)
		point int
		want  []int // the records' indices
	}{
		{"a shard's runs are looked for", func(r *SweepResult) {
			r.Shard = &SweepShard{Index: 1, Count: 2}
			r.Records = []SweepRecord{r.Records[1], r.Records[3], r.Records[5], r.Records[7]}
		}, 1, []int{5}},
		{"a record out of its place is looked for", func(r *SweepResult) {
			r.Records[4], r.Records[6] = r.Records[6], r.Records[4]
		}, 1, []int{5, 4}},
		{"runs a file says are 0 are looked for, without a panic", func(r *SweepResult) { r.Runs = 0 }, 1, []int{4, 5}},
		{"runs a file says are more than its records are looked for", func(r *SweepResult) { r.Runs = 3 }, 1, []int{4, 5}},
		{"a point before the first finds nothing", func(r *SweepResult) {}, -1, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := whole()
			tc.edit(r)
			var idx []int
			for _, rec := range r.runsOf(tc.point, "upstream") {
				idx = append(idx, rec.Index)
			}
			assert.Equal(t, tc.want, idx)
		})
	}
}
