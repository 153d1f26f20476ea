package scenario

import (
	"testing"

	"github.com/pagesim/pagesim/engine/sim"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The seed's directions at a small scale (15.4 GiB, 96 CPUs, 1024
// clients, 0.2 s measured), on the means of seeds 1-3. The gain's size
// depends on the scale and the seed (docs/FIDELITY.md), the directions
// do not, but a run this short shows them only where the baseline meets
// enough of the slow path in 0.2 s, which one seed's may not: seed 2's,
// which the test ran alone until December 2026, stopped doing so with
// decay_pcp_high() and the dropped pick-time push (review finding F32),
// so the test holds the directions on a mean of seeds, as the default
// run's test does (F23). The patched run's drains, from its order-0
// page-table faults and its non-costly folios, are held below the
// baseline's only.
func TestNoretryCompactionPatchStopsTheDirectWorkAndCommitsMore(t *testing.T) {
	s, err := Get("noretry-compaction")
	require.NoError(t, err)
	// A check walks all of this machine's 3.9M pages, so this run checks
	// the invariants at every 20,000th event instead of every 500th.
	res, err := s.RunAll(Options{Seed: 1, Runs: 3, Jobs: 2, Settings: []string{"scale=0.04", "duration_s=0.2"}, CheckEvery: 40 * checkEvery})
	require.NoError(t, err)
	byName := map[string]map[string]float64{}
	for _, v := range res.Variants {
		byName[v.Name] = v.Mean
	}
	base, patched := byName["baseline"], byName["patched"]
	require.NotNil(t, base)
	require.NotNil(t, patched)
	t.Logf("baseline %v", base)
	t.Logf("patched %v", patched)
	assert.Greater(t, patched["tps"], base["tps"], "the patch commits more")
	assert.Less(t, patched["write_latency_us"], base["write_latency_us"]/5, "WAL writes no longer wait in the slow path")
	assert.Greater(t, base["compact_stall"], 0.0, "the baseline compacts directly")
	assert.Greater(t, base["drain_all_pages_calls"], 0.0)
	assert.LessOrEqual(t, patched["compact_stall"], 0.1*base["compact_stall"])
	assert.Less(t, patched["drain_all_pages_calls"], base["drain_all_pages_calls"])
	assert.Greater(t, patched["pageoutrun"], 0.0, "kswapd still runs")
	assert.Greater(t, patched["compact_daemon_wake"], 0.0, "kcompactd still runs")
	var large float64
	for _, o := range []string{"4", "5", "6"} {
		large += patched["folios_order_"+o]
	}
	assert.Greater(t, large, 0.0, "the WAL still gets costly-order folios")
	for name, v := range map[string]map[string]float64{"baseline": base, "patched": patched} {
		assert.Greater(t, v["data_writes"], 0.0, "%s: the data files take 8 KiB writes", name)
		assert.Greater(t, v["folios_order_1"], 0.0, "%s: 8 KiB writes ask for order-1 folios", name)
	}
	assert.Greater(t, base["direct_compact_ms"], 0.0, "the baseline's stalls take time")
	assert.Zero(t, patched["direct_compact_ms"])
}

func TestNoretryCompactionOutputIsDeterministicAndFits72Columns(t *testing.T) {
	s, err := Get("noretry-compaction")
	require.NoError(t, err)
	o := Options{Seed: 3, Runs: 2, Variants: []string{"baseline", "patched"}, Settings: []string{"scale=0.01", "cpus=16", "clients=128", "duration_s=0.05"}}
	a, err := s.RunAll(o)
	require.NoError(t, err)
	b, err := s.RunAll(o)
	require.NoError(t, err)
	assert.Equal(t, a.Text(), b.Text())
	for _, line := range splitLines(a.Text()) {
		assert.LessOrEqual(t, len([]rune(line)), 72, "line too wide: %q", line)
	}
}

func TestNoretryCompactionRefusesImpossibleParameters(t *testing.T) {
	s, err := Get("noretry-compaction")
	require.NoError(t, err)
	for _, set := range [][]string{{"scale=2"}, {"mem_gb=1", "scale=0.1"}, {"cpus=0"}, {"clients=0"}, {"fragmented=maybe"}, {"max_write_kb=4"}, {"duration_s=0"}, {"bogus=1"}} {
		_, err := s.RunAll(Options{Seed: 1, Runs: 1, Settings: set})
		assert.Error(t, err, "%v", set)
	}
}

// The mechanism and the band at the default parameters (24 GiB,
// 96 CPUs, 1024 clients, 0.4 s measured) on the mean of three runs
// (seeds 1-3), as the seed's table is the average of three runs, without
// invariant checks (a run takes about 2 s of CPU): the patch commits
// 1.8-3.5 times the baseline's TPS, its sessions are CPU-bound (at least
// 90% of cpus / txn_us transactions a second: the WAL's folios no
// longer wait in the slow path), its compact_stall and
// drain_all_pages() calls are at most a tenth of the baseline's, and
// kswapd and kcompactd are still woken. The band is held on the mean,
// not on one seed: over a 0.4 s window one baseline's TPS depends on
// when its WAL stops logging full-page images and on how far the CPUs'
// pcp->high grew in the warm-up (what each drain_all_pages() costs the
// group-commit leader), so one seed's ratio spreads wider than the band
// (1.56-3.89 over seeds 1-6 in docs/FIDELITY.md; review finding F23).
func TestNoretryCompactionPatchMakesTheDefaultRunCPUBound(t *testing.T) {
	s, err := Get("noretry-compaction")
	require.NoError(t, err)
	res, err := s.RunAll(Options{Seed: 1, Runs: 3, Jobs: 2})
	require.NoError(t, err)
	byName := map[string]map[string]float64{}
	for _, v := range res.Variants {
		byName[v.Name] = v.Mean
	}
	base, patched := byName["baseline"], byName["patched"]
	require.NotNil(t, base)
	require.NotNil(t, patched)
	t.Logf("baseline %.0f TPS, patched %.0f TPS (%.2fx)", base["tps"], patched["tps"], patched["tps"]/base["tps"])
	assert.GreaterOrEqual(t, patched["tps"]/base["tps"], 1.8, "the issue's band: patched / baseline TPS 1.8-3.5")
	assert.LessOrEqual(t, patched["tps"]/base["tps"], 3.5, "the issue's band: patched / baseline TPS 1.8-3.5")
	// cpus / txn_us: every CPU running transactions.
	cpuBound := float64(res.values.Int("cpus")) / (res.values.Float("txn_us") * float64(sim.Microsecond) / float64(sim.Second))
	assert.Greater(t, patched["tps"], base["tps"], "the patch commits more")
	assert.GreaterOrEqual(t, patched["tps"], 0.9*cpuBound, "the patched sessions are CPU-bound")
	assert.Greater(t, base["compact_stall"], 0.0)
	assert.LessOrEqual(t, patched["compact_stall"], 0.1*base["compact_stall"])
	assert.LessOrEqual(t, patched["drain_all_pages_calls"], 0.1*base["drain_all_pages_calls"])
	assert.Greater(t, patched["pageoutrun"], 0.0, "kswapd still runs")
	assert.Greater(t, patched["compact_daemon_wake"], 0.0, "kcompactd still runs")
}
