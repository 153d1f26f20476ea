package tracefmt

import (
	"bytes"
	"encoding/json"
	"math"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/script"
	"github.com/pagesim/pagesim/engine/sim"
)

// pressure is a small run with every kind of thing a recording keeps:
// page-cache reclaim by kswapd and by a direct reclaimer, direct
// compaction of a fragmented heap, kcompactd, two CPUs, and an allocator
// task whose allocations come and go.
const pressure = `machine mem=64M layout=simple cpus=2
swap 16M
file write cache size=40M sync=on
region heap size=20M madvise=nohugepage
task hog fault region=heap cpu=1
run until=hog-done
fragment heap every=2
alloc huge gfp=GFP_TRANSHUGE_LIGHT|__GFP_DIRECT_RECLAIM order=9 count=4
task churn alloc gfp=GFP_KERNEL order=2 count=200 hold=5ms interval=1ms cpu=1
run 3s
print compact_stall allocstall_movable pgscan_direct pgscan_kswapd slowpath.entered
`

// recordScript runs src with a recorder and returns the recording, the
// interpreter (its last machine) and what the script printed.
func recordScript(t *testing.T, src string, cfg mm.RecordConfig) (*mm.Recording, *script.Interp, string) {
	t.Helper()
	rec := mm.NewRecorder(cfg)
	in := script.New(script.Options{Recorder: rec, CheckEveryCommand: true})
	var out bytes.Buffer
	require.NoError(t, in.Exec(&out, "test.txt", 1, []byte(src)))
	return rec.Recording(), in, out.String()
}

func chromeBytes(t *testing.T, rec *mm.Recording) []byte {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, WriteChrome(&b, rec, Meta{Title: "test", Command: "pagesim script test.txt"}))
	return b.Bytes()
}

// traceEvent is an event of the JSON trace event format as a reader sees
// it.
type traceEvent struct {
	Ph   string                     `json:"ph"`
	Name string                     `json:"name"`
	Cat  string                     `json:"cat"`
	Pid  *uint64                    `json:"pid"`
	Tid  *uint64                    `json:"tid"`
	Ts   *float64                   `json:"ts"`
	Dur  *float64                   `json:"dur"`
	S    string                     `json:"s"`
	Args map[string]json.RawMessage `json:"args"`
}

type traceFile struct {
	DisplayTimeUnit string            `json:"displayTimeUnit"`
	OtherData       map[string]string `json:"otherData"`
	TraceEvents     []traceEvent      `json:"traceEvents"`
}

// checkTraceEventFormat reads data back and checks it against the rules
// of the Trace Event Format (JSON Object Format) that Perfetto's and
// chrome://tracing's importers rely on, and the file's own promises:
// metadata first, then every event in time order; thread IDs unique over
// processes (Perfetto keys threads by tid); complete events of a thread
// nested, never overlapping partly.
func checkTraceEventFormat(t *testing.T, data []byte) traceFile {
	t.Helper()
	require.True(t, json.Valid(data), "the file is valid JSON")
	var f traceFile
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&f))
	require.Contains(t, []string{"ms", "ns"}, f.DisplayTimeUnit)
	require.NotEmpty(t, f.TraceEvents)

	metaDone := false
	last := math.Inf(-1)
	owner := map[uint64]uint64{} // tid -> pid
	type slice struct{ ts, end float64 }
	slices := map[[2]uint64][]slice{}
	for i, e := range f.TraceEvents {
		require.NotNil(t, e.Pid, "event %d has a pid", i)
		require.NotNil(t, e.Tid, "event %d has a tid", i)
		require.NotNil(t, e.Ts, "event %d has a ts", i)
		require.NotEmpty(t, e.Name, "event %d has a name", i)
		require.GreaterOrEqual(t, *e.Ts, 0.0)
		if pid, ok := owner[*e.Tid]; ok {
			require.Equal(t, pid, *e.Pid, "tid %d belongs to one process", *e.Tid)
		}
		owner[*e.Tid] = *e.Pid
		if e.Ph == "M" {
			require.False(t, metaDone, "metadata event %d comes before the others", i)
			switch e.Name {
			case "process_name", "thread_name":
				var name string
				require.NoError(t, json.Unmarshal(e.Args["name"], &name))
				require.NotEmpty(t, name)
			case "process_sort_index", "thread_sort_index":
				var n int
				require.NoError(t, json.Unmarshal(e.Args["sort_index"], &n))
			default:
				t.Fatalf("unknown metadata event %q", e.Name)
			}
			continue
		}
		metaDone = true
		require.GreaterOrEqual(t, *e.Ts, last, "event %d (%s) is in time order", i, e.Name)
		last = *e.Ts
		switch e.Ph {
		case "X":
			require.NotNil(t, e.Dur, "complete event %d has a dur", i)
			require.GreaterOrEqual(t, *e.Dur, 0.0)
			k := [2]uint64{*e.Pid, *e.Tid}
			slices[k] = append(slices[k], slice{*e.Ts, *e.Ts + *e.Dur})
		case "i":
			require.Contains(t, []string{"g", "p", "t"}, e.S, "instant event %d has a scope", i)
			require.Nil(t, e.Dur)
		case "C":
			require.NotEmpty(t, e.Args, "counter %d has values", i)
			for k, v := range e.Args {
				var x float64
				require.NoError(t, json.Unmarshal(v, &x), "counter %s's %s is a number", e.Name, k)
			}
		default:
			t.Fatalf("event %d has phase %q, which pagesim does not write", i, e.Ph)
		}
	}
	for k, ss := range slices {
		// In file order (ts, then longer first), every slice either
		// lies inside the one open before it or starts after it ends.
		var open []slice
		for _, s := range ss {
			// ts+dur of microseconds with three decimals can come out a
			// rounding error past the next slice's ts: both sides get
			// the same 1e-9.
			for len(open) > 0 && open[len(open)-1].end <= s.ts+1e-9 {
				open = open[:len(open)-1]
			}
			if len(open) > 0 {
				require.LessOrEqual(t, s.end, open[len(open)-1].end+1e-9, "slices of thread %v nest", k)
			}
			open = append(open, s)
		}
	}
	return f
}

func TestAChromeTraceFollowsTheTraceEventFormat(t *testing.T) {
	rec, _, _ := recordScript(t, pressure, mm.RecordConfig{})
	f := checkTraceEventFormat(t, chromeBytes(t, rec))
	assert.Equal(t, "complete", f.OtherData["recording"])
	assert.Equal(t, "pagesim script test.txt", f.OtherData["command"])
}

func TestAChromeTraceCarriesEveryTracepointEventOfTheRun(t *testing.T) {
	rec, in, _ := recordScript(t, pressure, mm.RecordConfig{})
	m := in.Machine()
	f := checkTraceEventFormat(t, chromeBytes(t, rec))
	require.Len(t, rec.Machines, 1)
	rm := rec.Machines[0]
	require.EqualValues(t, m.Trace.Written, len(rm.Events), "the recording kept every event the ring saw")

	type ev struct {
		ts     float64
		name   string
		tid    uint64
		fields string
	}
	var got []ev
	for _, e := range f.TraceEvents {
		if e.Ph != "i" || e.S != "t" {
			continue
		}
		var fields []string
		keys := make([]string, 0, len(e.Args))
		for k := range e.Args {
			if k != "cpu" {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			v := string(e.Args[k])
			var s string
			if json.Unmarshal(e.Args[k], &s) == nil {
				v = s
			}
			fields = append(fields, k+"="+v)
		}
		got = append(got, ev{*e.Ts, e.Name, *e.Tid, strings.Join(fields, " ")})
	}
	var want []ev
	for i := range rm.Events {
		e := &rm.Events[i]
		var fields []string
		fs := Fields(e.Fields())
		sort.Slice(fs, func(a, b int) bool { return fs[a].Name < fs[b].Name })
		for _, fl := range fs {
			fields = append(fields, fl.Name+"="+fl.Value)
		}
		want = append(want, ev{float64(e.Time) / 1000, e.Name(), uint64(e.PID), strings.Join(fields, " ")})
	}
	sort.SliceStable(want, func(a, b int) bool { return want[a].ts < want[b].ts })
	require.Equal(t, len(want), len(got))
	for i := range want {
		assert.InDelta(t, want[i].ts, got[i].ts, 0.0005, "event %d's time", i)
		want[i].ts = got[i].ts
	}
	assert.Equal(t, want, got)
}

func TestTheSlicesAreTheSlowPathsReclaimsAndCompactionsTheKernelCounted(t *testing.T) {
	rec, in, _ := recordScript(t, pressure, mm.RecordConfig{})
	m := in.Machine()
	f := checkTraceEventFormat(t, chromeBytes(t, rec))
	n := map[string]int{}
	gfps := map[string]int{}
	for _, e := range f.TraceEvents {
		if e.Ph == "X" && e.Cat == "mm" {
			n[e.Name]++
			var g string
			require.NoError(t, json.Unmarshal(e.Args["gfp_mask"], &g))
			_, err := mm.ParseGFP(g)
			require.NoError(t, err, "gfp_mask %q is a mask as %%pGg prints it", g)
			gfps[g]++
			var order int
			require.NoError(t, json.Unmarshal(e.Args["order"], &order))
		}
	}
	require.Positive(t, n["__alloc_pages_direct_compact"], "the run compacted")
	require.Positive(t, n["__alloc_pages_direct_reclaim"], "the run reclaimed")
	assert.EqualValues(t, m.Slow.Entered, n["__alloc_pages_slowpath"])
	assert.EqualValues(t, m.Trace.Hits[mm.TraceMmVmscanDirectReclaimBegin], n["__alloc_pages_direct_reclaim"])
	assert.EqualValues(t, m.Trace.Hits[mm.TraceMmCompactionTryToCompactPages], n["__alloc_pages_direct_compact"])
	assert.Contains(t, gfps, "GFP_TRANSHUGE", "the script's GFP_TRANSHUGE_LIGHT|__GFP_DIRECT_RECLAIM, as %pGg names it")
}

func TestTheCPUTracksAddUpToEachCPUsBusyTime(t *testing.T) {
	rec, in, _ := recordScript(t, pressure, mm.RecordConfig{})
	m := in.Machine()
	rm := rec.Machines[0]
	busy := make([]sim.Time, len(m.World.CPUs))
	for _, r := range rm.Runs {
		busy[r.CPU] += r.End - r.Start
	}
	for i, c := range m.World.CPUs {
		assert.Equal(t, c.Busy, busy[i], "CPU %d", i)
	}
	assert.Positive(t, busy[1])
}

func TestTheCountersEndAtTheMachinesStateAndTheRatesAddUpToTheCounts(t *testing.T) {
	rec, in, _ := recordScript(t, pressure, mm.RecordConfig{})
	m := in.Machine()
	f := checkTraceEventFormat(t, chromeBytes(t, rec))
	lastValue := map[string]float64{}
	type point struct{ ts, v float64 }
	rates := map[string][]point{}
	for _, e := range f.TraceEvents {
		if e.Ph != "C" {
			continue
		}
		for k, raw := range e.Args {
			var v float64
			require.NoError(t, json.Unmarshal(raw, &v))
			lastValue[e.Name+" "+k] = v
			if k == "pages/s" {
				rates[e.Name] = append(rates[e.Name], point{*e.Ts, v})
			}
		}
	}
	for _, z := range m.ZoneViews() {
		p := "Node " + strconv.Itoa(z.Node) + " " + z.Type.String() + " "
		assert.EqualValues(t, z.Free, lastValue[p+"free pages"], p+"free")
		assert.EqualValues(t, z.Min, lastValue[p+"wmark min pages"], p+"min")
		assert.EqualValues(t, z.High, lastValue[p+"wmark high pages"], p+"high")
	}
	// The rates cover the run from the first sample (the machine as it
	// booted, before any event) to its end: over time they add up to
	// what the counters counted meanwhile.
	rm := rec.Machines[0]
	first := rm.Samples[0]
	end := float64(rm.End) / 1000
	var alloc uint64
	for e := mm.PGALLOC_DMA; e <= mm.PGALLOC_MOVABLE; e++ {
		alloc += m.Event(e)
	}
	for name, count := range map[string]uint64{
		"pgalloc":                 alloc - first.PgAlloc,
		"pgscan_kswapd":           m.Event(mm.PGSCAN_KSWAPD) - first.PgScanKswapd,
		"pgscan_direct":           m.Event(mm.PGSCAN_DIRECT) - first.PgScanDirect,
		"compact_migrate_scanned": m.Event(mm.COMPACTMIGRATE_SCANNED) - first.CompactMigrateScanned,
		"compact_free_scanned":    m.Event(mm.COMPACTFREE_SCANNED) - first.CompactFreeScanned,
	} {
		require.Positive(t, count, name)
		ps := rates[name]
		total := 0.0
		for i, p := range ps {
			next := end
			if i+1 < len(ps) {
				next = ps[i+1].ts
			}
			total += p.v * (next - p.ts) / 1e6
		}
		assert.InDelta(t, float64(count), total, 1e-6*float64(count), "%s: the rate over time adds up to the count", name)
	}
}

func TestRecordingChangesNothingTheScriptPrints(t *testing.T) {
	_, _, recorded := recordScript(t, pressure, mm.RecordConfig{})
	var plain bytes.Buffer
	require.NoError(t, script.New(script.Options{}).Exec(&plain, "test.txt", 1, []byte(pressure)))
	assert.Equal(t, plain.String(), recorded)
}

func TestTheSameScriptGivesTheSameTraceBytes(t *testing.T) {
	a, _, _ := recordScript(t, pressure, mm.RecordConfig{})
	b, _, _ := recordScript(t, pressure, mm.RecordConfig{})
	assert.Equal(t, chromeBytes(t, a), chromeBytes(t, b))
	var ra, rb bytes.Buffer
	require.NoError(t, WriteReport(&ra, a))
	require.NoError(t, WriteReport(&rb, b))
	assert.Equal(t, ra.String(), rb.String())
}

func TestARecordingPastItsBudgetStopsAndSaysSo(t *testing.T) {
	rec, in, _ := recordScript(t, pressure, mm.RecordConfig{MaxBytes: 64 << 10})
	require.True(t, rec.Stopped)
	f := checkTraceEventFormat(t, chromeBytes(t, rec))
	assert.Contains(t, f.OtherData["recording"], "budget of 0 MiB was reached")
	rm := rec.Machines[0]
	var dropped uint64
	for _, n := range rm.Dropped {
		dropped += n
	}
	require.Positive(t, dropped)
	assert.EqualValues(t, in.Machine().Trace.Written, uint64(len(rm.Events))+dropped, "kept and dropped add up to every event")
	var r bytes.Buffer
	require.NoError(t, WriteReport(&r, rec))
	assert.Regexp(t, `(?m)^CPU:\d+ \[\d+ EVENTS DROPPED\]$`, r.String())
	stopped := false
	for _, e := range f.TraceEvents {
		stopped = stopped || strings.HasPrefix(e.Name, "recording stopped")
	}
	assert.True(t, stopped, "a global instant marks where the recording stopped")
}

func TestTwoMachinesOfAScriptAreTwoSetsOfProcesses(t *testing.T) {
	src := "machine mem=32M layout=simple cpus=1\nalloc a gfp=GFP_KERNEL count=10\nrun 1s\n" +
		"machine mem=32M layout=simple cpus=2\nalloc a gfp=GFP_KERNEL order=3 count=10\nrun 2s\n"
	rec, _, _ := recordScript(t, src, mm.RecordConfig{})
	require.Len(t, rec.Machines, 2)
	assert.Equal(t, sim.Time(0), rec.Machines[1].Offset, "a script's machines each start at 0")
	f := checkTraceEventFormat(t, chromeBytes(t, rec))
	var names []string
	for _, e := range f.TraceEvents {
		if e.Name == "process_name" {
			var n string
			require.NoError(t, json.Unmarshal(e.Args["name"], &n))
			names = append(names, n)
		}
	}
	assert.Equal(t, []string{"memory (machine1)", "tasks (machine1)", "CPUs (machine1)", "memory (machine2)", "tasks (machine2)", "CPUs (machine2)"}, names)
}

func TestEveryTracepointsLineSplitsIntoNamedFields(t *testing.T) {
	for id := mm.TraceID(0); id < mm.NrTraceIDs; id++ {
		e := mm.TraceEvent{ID: id, Args: [8]int64{0, 1, 1, 1, 1, 1, 1, 1}}
		fs := Fields(e.Fields())
		require.NotEmpty(t, fs, e.Name())
		for _, f := range fs {
			assert.NotEmpty(t, f.Name, "%s: %q has a name", e.Name(), f.Value)
			assert.NotContains(t, f.Value, "=", "%s: %s", e.Name(), f.Name)
			assert.False(t, strings.HasSuffix(f.Value, ","), "%s: %s", e.Name(), f.Name)
		}
	}
	assert.Equal(t, []Field{{"range", "(0x200 ~ 0x400)"}, {"nr_scanned", "7"}}, Fields("range=(0x200 ~ 0x400) nr_scanned=7"))
	assert.Equal(t, []Field{{"zone_end", "0x10"}, {"mode", "sync"}}, Fields("zone_end=0x10, mode=sync"))
}

func TestAnEnclosingSliceComesBeforeTheSlicesItHolds(t *testing.T) {
	// A slow path and the direct compaction inside it that start at the
	// same nanosecond: the slow path, longer, comes first, so a reader
	// that nests slices in file order nests them right.
	rec := &mm.Recording{Machines: []mm.RecordedMachine{{
		CPUNode: []int{0}, Tasks: []string{"qemu"}, End: 10 * sim.Microsecond,
		Spans: []mm.Span{
			{Kind: mm.SpanDirectCompact, Task: 0, Order: 9, WorkOrder: 9, GFP: mm.GFP_TRANSHUGE, Start: 5000, End: 7000, Result: int64(mm.COMPACT_SKIPPED)},
			{Kind: mm.SpanSlowpath, Task: 0, Order: 9, WorkOrder: 9, GFP: mm.GFP_TRANSHUGE, Start: 5000, End: 9000, Result: int64(mm.NilPFN)},
		},
	}}}
	f := checkTraceEventFormat(t, chromeBytes(t, rec))
	var names []string
	for _, e := range f.TraceEvents {
		if e.Ph == "X" {
			names = append(names, e.Name)
		}
	}
	assert.Equal(t, []string{"__alloc_pages_slowpath", "__alloc_pages_direct_compact"}, names)
}
