package scenario

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// nofragSmall is the tests' machine: a tenth of the seed's VM (700 MiB,
// 134 MiB faulted), so a run takes about a second.
var nofragSmall = []string{"scale=0.1"}

// The seed's directions at a small scale, medians of three runs, with the
// invariants checked during the runs. docs/FIDELITY.md has the default
// scale's medians of five runs and which of the bands they meet.
func TestNofragWatermarkDefragModeStallsAndFallsBackAndTheSeriesRecovers(t *testing.T) {
	s, err := Get("nofrag-watermark")
	require.NoError(t, err)
	// Fifteen runs of a 180,000-page machine: the invariants are
	// checked at every 20,000th event and at each run's end, not at
	// every 500th (the checks were 22 s of the test's 37 s of CPU).
	res, err := s.RunAll(Options{Seed: 1, Runs: 3, Settings: nofragSmall, CheckEvery: 40 * checkEvery})
	require.NoError(t, err)
	med := map[string]map[string]float64{}
	for _, v := range res.Variants {
		med[v.Name] = v.Median
	}
	d0, d1, d1s, d0s, p12 := med["defrag0"], med["defrag1"], med["defrag1-series"], med["defrag0-series"], med["defrag1-patches12"]
	require.NotNil(t, p12)
	for name, m := range med {
		assert.Greater(t, m["mthp_64k_alloc"]+m["mthp_64k_fallback"], 0.0, "%s: the benchmark faulted", name)
	}
	// defrag_mode=1 stalls in compaction more often and gets fewer 64K
	// folios. (The band, at least 6 times the stalls at the
	// default scale, is not held: docs/FIDELITY.md, seed 001.)
	assert.Greater(t, d1["compact_stall"], d0["compact_stall"], "compact_stall defrag1 / defrag0")
	assert.Less(t, d1["mthp_64k_alloc"], 0.9*d0["mthp_64k_alloc"], "64K folios defrag1 / defrag0")
	// It falls back more often, and why: the up-front check answers
	// COMPACT_SUCCESS from the other types' chunks, so compaction never
	// defers, and every fault that falls back has failed two
	// compactions (async, then sync-light after its one direct reclaim)
	// and run one order-4 reclaim (docs/FIDELITY.md, seed 001, sets the
	// seed's own stalls and fallbacks beside it). defrag_mode=0
	// defers after its sync-light failures, so most of its fallbacks
	// come without a compaction. The band (fallbacks at least 5
	// times defrag0's) is for the default scale and is not held here:
	// docs/FIDELITY.md, seed 001, says where it stands.
	assert.Greater(t, d1["mthp_64k_fallback"], d0["mthp_64k_fallback"], "fallbacks defrag1 / defrag0")
	assert.GreaterOrEqual(t, d1["compact_fail"], 2*d1["mthp_64k_fallback"], "defrag1: two failed compactions per fallback")
	assert.GreaterOrEqual(t, d1["order4_reclaims"], d1["mthp_64k_fallback"], "defrag1: an order-4 reclaim per fallback")
	assert.Less(t, d0["compact_fail"], 2*d0["mthp_64k_fallback"], "defrag0: fallbacks without compaction (deferred)")
	// Without the series most of defrag1's stalls are failures: the
	// up-front check's COMPACT_SUCCESS is followed by a failed freelist
	// attempt. defrag0's and the series' compactions run, and most of
	// their stalls succeed.
	failShare := func(m map[string]float64) float64 { return m["compact_fail"] / m["compact_stall"] }
	assert.Greater(t, failShare(d1), 0.5, "most of defrag1's stalls fail")
	assert.Less(t, failShare(d0), 0.5, "most of defrag0's stalls succeed")
	assert.Less(t, failShare(d1s), 0.5, "most of the series' stalls succeed")
	// The series brings the stalls down and the folios back, within the
	// seed's bands: its stalls 0.1-0.5 of defrag1's, its folios at least
	// 0.85 of defrag0's (0.33 and 1.00 here; 0.28 and 1.03 at the
	// default scale, docs/FIDELITY.md, seed 001).
	assert.Less(t, d1s["compact_stall"], 0.5*d1["compact_stall"], "compact_stall series / defrag1")
	assert.Greater(t, d1s["compact_stall"], 0.1*d1["compact_stall"], "compact_stall series / defrag1")
	assert.Greater(t, d1s["mthp_64k_alloc"], d1["mthp_64k_alloc"], "64K folios with the series")
	assert.GreaterOrEqual(t, d1s["mthp_64k_alloc"], 0.85*d0["mthp_64k_alloc"], "64K folios defrag1-series / defrag0")
	assert.Less(t, d1s["mthp_64k_fallback"], d1["mthp_64k_fallback"], "fallbacks with the series")
	// The seed's band: defrag_mode=0's folios with the series within 5%
	// of without. The series' rules apply to ALLOC_NOFRAGMENT requests,
	// and alloc_flags_nofragment makes every ZONE_NORMAL fast-path
	// request one on a one-node machine, so patch 2's
	// zone_watermark_fast acts on defrag0's fast path too; it changes
	// an answer only where other types' blocks hold large free chunks.
	assert.InDelta(t, 1, d0s["mthp_64k_alloc"]/d0["mthp_64k_alloc"], 0.05, "64K folios defrag0-series / defrag0")
	// Patch 3: with patches 1-2 alone, an order-4 direct reclaim frees
	// fewer pages under defrag_mode than without it: compaction_ready()
	// still counts the other types' large free pages and stops reclaim.
	// Patch 3 makes its first test (the allocation can already succeed)
	// count only what the fault can take, so reclaim goes on in a zone
	// whose free pages stay below its second test's mark
	// (compaction_suitable at the high watermark, which counts every free
	// page and which patch 3 leaves alone), and frees more.
	assert.Less(t, p12["reclaim_per_order4"], d0["reclaim_per_order4"], "pages per order-4 reclaim, patches 1-2, defrag1 / defrag0")
	assert.Greater(t, d1s["reclaim_per_order4"], p12["reclaim_per_order4"], "pages per order-4 reclaim, patches 1-3 / 1-2")
}

func TestNofragWatermarkOutputIsDeterministicAndFitsTheCoverLetter(t *testing.T) {
	s, err := Get("nofrag-watermark")
	require.NoError(t, err)
	o := Options{Seed: 3, Runs: 2, Variants: []string{"defrag0", "defrag1-series"}, Settings: []string{"scale=0.05"}, CheckEvery: checkEvery}
	a, err := s.RunAll(o)
	require.NoError(t, err)
	b, err := s.RunAll(o)
	require.NoError(t, err)
	ja, _ := a.JSON()
	jb, _ := b.JSON()
	assert.Equal(t, string(ja), string(jb))
	assert.Equal(t, a.Text(), b.Text())
	assert.Contains(t, a.Text(), "medians of 2 runs")
	for _, line := range splitLines(a.Text()) {
		assert.LessOrEqual(t, len([]rune(line)), 72, "line too wide: %q", line)
	}
	// Another seed boots and runs differently (the hog's reads, the
	// caches' frees, the boot's layout).
	o.Seed = 4
	c, err := s.RunAll(o)
	require.NoError(t, err)
	jc, _ := c.JSON()
	assert.NotEqual(t, string(ja), string(jc))
}

func TestNofragWatermarkRefusesImpossibleParameters(t *testing.T) {
	s, err := Get("nofrag-watermark")
	require.NoError(t, err)
	for _, set := range [][]string{{"fault_mb=32768"}, {"scale=2"}, {"scale=0"}, {"mem_gb=1"}, {"cpus=2"}, {"readers=0"},
		{"pressure=maybe"}, {"vm.defrag_mode=2"}, {"transparent_hugepage.hugepages-64kB.enabled=sometimes"}, {"bogus=1"}} {
		_, err := s.RunAll(Options{Seed: 1, Runs: 1, Settings: set})
		assert.Error(t, err, "%v", set)
	}
}

// Each patch is its own switch. Patch 1 adds the check that knows the
// migratetype and converts no caller, so defrag1-patch1 is defrag1 run
// for run; the optional variants are offered, run only when named, and
// print their columns.
func TestNofragWatermarkPatch1AloneIsDefrag1AndTheOptionalVariantsRun(t *testing.T) {
	s, err := Get("nofrag-watermark")
	require.NoError(t, err)
	var optional []string
	for _, v := range s.Variants {
		if v.Optional {
			optional = append(optional, v.Name)
		}
	}
	assert.Equal(t, []string{"defrag1-patch1", "defrag1-patches13"}, optional)
	res, err := s.RunAll(Options{Seed: 2, Runs: 1, Variants: []string{"defrag1", "defrag1-patch1", "defrag1-patches13"},
		Settings: []string{"scale=0.05"}, CheckEvery: checkEvery})
	require.NoError(t, err)
	require.Len(t, res.Variants, 3)
	assert.Equal(t, res.Variants[0].Median, res.Variants[1].Median, "defrag1-patch1 against defrag1")
	assert.Greater(t, res.Variants[2].Median["mthp_64k_alloc"]+res.Variants[2].Median["mthp_64k_fallback"], 0.0, "defrag1-patches13 faulted")
	assert.Contains(t, res.Text(), "+p1,3")
	def, err := s.RunAll(Options{Seed: 2, Runs: 1, Settings: []string{"scale=0.02"}})
	require.NoError(t, err)
	for _, v := range def.Variants {
		assert.NotContains(t, optional, v.Name, "an optional variant runs only when named")
	}
}

// A vm.min_free_kbytes the kernel takes (its ctl_table has no upper
// bound) can leave the hog's page cache no room: its reads then reach
// __alloc_pages_may_oom(), where the kernel's OOM killer would kill a
// task. The run ends there, says so, and does not read on for ever
// (review finding F53: it never ended).
func TestNofragWatermarkEndsWhereTheKernelsOOMKillerWouldKill(t *testing.T) {
	s, err := Get("nofrag-watermark")
	require.NoError(t, err)
	res, err := s.RunAll(Options{Seed: 1, Runs: 1, Variants: []string{"defrag0"},
		Settings: []string{"scale=0.02", "vm.min_free_kbytes=131072"}, CheckEvery: checkEvery})
	require.NoError(t, err)
	vr := res.Variants[0]
	assert.Equal(t, 1.0, vr.Runs[0]["oom"])
	assert.Equal(t, 0.0, vr.Runs[0]["mthp_64k_alloc"]+vr.Runs[0]["mthp_64k_fallback"], "the benchmark never faulted")
	require.NotEmpty(t, vr.Lines)
	assert.Regexp(t, `^Failed: at 0\.[0-9]{3} s \(filling the page cache: .*\) an allocation reached out_of_memory\(\)`, vr.Lines[0],
		"it ends within the first simulated second, while the fill writes the hog's files")
	assert.Contains(t, res.Text(), "defrag0: 1 of 1 runs ended at out_of_memory()")
	// The default run does not get there.
	def, err := s.RunAll(Options{Seed: 1, Runs: 1, Variants: []string{"defrag0"}, Settings: []string{"scale=0.02"}, CheckEvery: checkEvery})
	require.NoError(t, err)
	assert.Equal(t, 0.0, def.Variants[0].Runs[0]["oom"])
	assert.NotContains(t, def.Text(), "out_of_memory")
}
