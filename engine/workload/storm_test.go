package workload

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// seed002Small is seed 002's reproducer (see seed002Machine) scaled down
// to one 1 GiB Normal zone and 4 CPUs, with 24 MiB above the high
// watermark so that the build workers reach the storm within seconds.
// The margin was chosen with the outcome in view: 24 MiB when the test
// was written; a665d12 cut it to 8 so that rc5 still stormed within the
// span after fdatasync's log commit cut the workers' operations; since
// the btrfs inode brings its delayed node, extent map and xarray node
// and each fdatasync copies the log leaves (build.go) the 24 MiB storm
// again, and the span was cut to 2.1 s for the test's cost (the storm is
// millions of steps).
func seed002Small(t *testing.T, fixed bool) (*mm.Machine, []*BuildWorker) {
	t.Helper()
	cfg, err := mm.SimpleLayout(1<<30/mm.PAGE_SIZE, 1, 4)
	require.NoError(t, err)
	m, err := mm.NewMachine(cfg)
	require.NoError(t, err)
	m.Patches.PromotedOrderRetries = fixed
	cg := m.NewMemcg("build")
	tk := m.World.NewTask("setup", 0, nil, sim.Never)
	fill := &PinnedFill{Cg: cg, Margin: 24 << 20 / mm.PAGE_SIZE, Protect: 32 << 20, PinFraction: 0.98, FreeEvery: 8}
	require.NoError(t, fill.Run(m, tk))
	fs := NewBuildFS(m, FSBtrfs, cg, 0, tk.Now, 0)
	var ws []*BuildWorker
	for c := 0; c < 4; c++ {
		w := &BuildWorker{FS: fs, Rng: m.World.Stream(fmt.Sprintf("workload/build#%d", c))}
		ws = append(ws, w)
		m.World.NewTask("build", c, w, tk.Now)
	}
	m.World.RunUntil(tk.Now, nil)
	return m, ws
}

// Seed 002 on v7.3-rc5: under vm.defrag_mode the build workers' unmovable
// order-0 requests reclaim at pageblock order, compaction_ready() calls it
// progress, and should_reclaim_retry() resets no_progress_loops for ever.
// The storm must happen, and the world must go on around it: the clock
// reaches each target, PSI records the stall, the engine's memory stays
// flat. The posted fix (PromotedOrderRetries) gives up after
// MAX_RECLAIM_RETRIES and does not storm.
func TestSeed002StormsOnRC5WhileTheClockAdvances(t *testing.T) {
	const span = 2100 * sim.Millisecond // past the first PSI average (2.002 s)
	type result struct {
		runs    uint64
		giveups uint64
		some    float64
		grew    int64
		steps   uint64
	}
	run := func(fixed bool) result {
		m, _ := seed002Small(t, fixed)
		start := m.World.Now()
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		for s := sim.Time(1); s <= 3; s++ {
			target := start + s*span/3
			m.World.RunUntil(target, nil)
			require.Equal(t, target, m.World.Now(), "RunUntil returns at its target")
			require.NoError(t, m.CheckInvariants())
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		return result{
			runs:    m.Reclaim.DirectRuns[mm.PageblockOrder],
			giveups: m.Slow.NofragGiveUps,
			some:    m.PSIAvg(false)[0],
			grew:    int64(after.HeapAlloc) - int64(before.HeapAlloc),
			steps:   m.World.Steps,
		}
	}
	rc5, fix := run(false), run(true)
	t.Logf("rc5 %+v fixed %+v", rc5, fix)
	assert.Greater(t, rc5.runs, 10*fix.runs, "rc5 storms in order-9 reclaim; the fix does not")
	// rc5 never drops ALLOC_NOFRAGMENT (should_reclaim_retry keeps
	// saying retry); the fix judges the promoted order, runs out of
	// MAX_RECLAIM_RETRIES and falls back.
	assert.Zero(t, rc5.giveups, "rc5 gives up nothing")
	assert.Greater(t, fix.giveups, uint64(0), "the fix gives up and falls back")
	// The storm rule of docs/FIDELITY.md: at least 10,000 order-9
	// reclaim runs a simulated second.
	assert.Greater(t, rc5.runs, uint64(10000*span/sim.Second))
	// The storm keeps the looping workers in memory stalls (direct
	// reclaim and direct compaction, each inside psi_memstall_enter), so
	// some avg10 ends above the fixed kernel's (seed 002: 42% against 22%
	// over 180 s). The factor 1.5 was chosen with the runs in view
	// (a665d12); avg10 has at most the first two-second update of the
	// storm here.
	assert.Greater(t, rc5.some, 1.5*fix.some, "some avg10 rises above the fixed kernel's")
	assert.Less(t, rc5.grew, int64(64<<20), "the engine's heap stays bounded during the storm")
}
