package mm

// kswapd's balance pass stops at shrink_lruvec()'s and
// shrink_node_memcgs()' cond_resched() calls (shrinkFrame), so a task
// woken on kswapd's CPU waits at most one round of batches, not the pass.

import (
	"testing"

	"github.com/pagesim/pagesim/engine/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// kswapdPass is what one balance run of kswapd0 did in preemptWorld.
type kswapdPass struct {
	steal, scan uint64   // pgsteal_kswapd, pgscan_kswapd
	start, end  sim.Time // mm_vmscan_kswapd_wake, the end of its last balance step
	steps       []sim.Time
	// resetStart and resetEnd bound kswapd_try_to_sleep()'s
	// reset_isolation_suitable() walk: on the waitqueue, and the nap's
	// start.
	resetStart, resetEnd sim.Time
	lowQuickly           uint64   // kswapd_low_wmark_hit_quickly
	sleeperRan           sim.Time // when the sleeper ran (sim.Never: no sleeper)
	yields               uint64
}

// preemptWorld wakes kswapd0 (CPU 0) on a node of pages below its low
// watermark and full of clean page cache, and, with sleeper, wakes a task
// bound to CPU 0 at wakeAt. With flush, a compaction's scanners met
// before (compact_blockskip_flush): kswapd_try_to_sleep() walks the
// zone's pageblocks.
func preemptWorld(t *testing.T, pages uint64, flush, sleeper bool, wakeAt sim.Time) kswapdPass {
	m := newQuietMachine(t, pages, 1, 2)
	lowNode(t, m)
	n := m.Nodes[0]
	z := n.Zones[ZONE_NORMAL]
	z.compact.blockskipFlush = flush
	k := n.kswapd.task
	require.Equal(t, 0, k.CPU)
	p := kswapdPass{sleeperRan: sim.Never}
	m.World.OnStep = func(tk *sim.Task, _ *sim.CPU, start, end sim.Time) {
		if tk == k && n.kswapd.state == ksBalance {
			p.steps = append(p.steps, end-start)
			p.end = end
		}
	}
	spawn(m, "waker", 1, 0, func(t *sim.Task) sim.Time {
		m.wakeupKswapd(t, z, GFP_HIGHUSER_MOVABLE, 0, ZONE_NORMAL)
		return sim.Exit
	})
	if sleeper {
		s := spawn(m, "sleeper", 0, wakeAt, func(t *sim.Task) sim.Time {
			p.sleeperRan = t.Now
			return sim.Exit
		})
		s.AllowedCPUs = []int{0}
	}
	runWorld(t, m, sim.Second)
	wake := traceAt(m, "mm_vmscan_kswapd_wake")
	require.Len(t, wake, 1, "one balance run")
	p.start = wake[0]
	p.steal, p.scan = m.Event(PGSTEAL_KSWAPD), m.Event(PGSCAN_KSWAPD)
	p.yields = m.Reclaim.KswapdYields
	p.lowQuickly = m.Event(KSWAPD_LOW_WMARK_HIT_QUICKLY)
	require.True(t, n.kswapd.waitActive, "asleep again")
	p.resetStart, p.resetEnd = n.kswapd.waitSince, n.kswapd.napEnd-100*sim.Millisecond
	assert.False(t, z.compact.blockskipFlush)
	return p
}

func TestATaskWokenOnKswapdsCPUDuringABalancePassRunsWithinOneBatchRound(t *testing.T) {
	alone := preemptWorld(t, 65536, false, false, 0)
	require.NotZero(t, alone.steal)
	// One round of shrink_lruvec()'s loop here: at most SWAP_CLUSTER_MAX
	// folios of each file list (no swap: anon is not scanned), each
	// isolated, its references walked and, clean, freed; then the
	// cond_resched().
	c := DefaultCosts()
	round := 2*SWAP_CLUSTER_MAX*(c.LRUScanPage+c.FolioRefWalk+c.ReclaimCleanPage) + c.CondResched
	pass := alone.end - alone.start
	// The pass is long against a round, and its priority iterations,
	// each one step before kswapd stopped at cond_resched(), are too:
	// a task waiting for one of them would wait many rounds.
	require.Greater(t, maxTime(alone.steps), 20*round, "a priority iteration is many rounds")
	assert.Zero(t, alone.yields, "with nothing else to run, the pass never stops")

	// Woken in the middle of the pass, past kswapd's slice (1.4 ms on 2
	// CPUs), so TIF_NEED_RESCHED is set at kswapd's next cond_resched().
	wakeAt := alone.start + pass/2
	require.Greater(t, wakeAt-alone.start, 2*sim.Millisecond)
	got := preemptWorld(t, 65536, false, true, wakeAt)
	require.NotEqual(t, sim.Never, got.sleeperRan)
	wait := got.sleeperRan - wakeAt
	assert.LessOrEqual(t, wait, round, "the woken task waited %v, a round is at most %v", wait, round)
	assert.NotZero(t, got.yields, "kswapd stopped at a cond_resched()")
	// The pass resumed where it stopped: it reclaimed and scanned what
	// the pass alone did.
	assert.Equal(t, alone.steal, got.steal, "pgsteal_kswapd")
	assert.Equal(t, alone.scan, got.scan, "pgscan_kswapd")
}

func TestATaskWokenOnKswapdsCPUDuringItsResetIsolationWalkRunsWithinOneLoopStep(t *testing.T) {
	// 2 GiB: 1024 pageblocks, 512 steps of the walk's loop.
	const pages = 1 << 19
	alone := preemptWorld(t, pages, true, false, 0)
	walk := alone.resetEnd - alone.resetStart
	// One step of __reset_isolation_suitable()'s loop: two blocks'
	// flags and at most a block's struct pages sampled each
	// (__reset_isolation_pfn() reads one in 8).
	c := DefaultCosts()
	step := 2*c.PageblockFlags + 2*(PageblockNrPages/8)*c.CompactScanPage + c.CondResched
	require.Greater(t, walk, 20*step, "the walk is many loop steps")
	require.Greater(t, alone.resetStart-alone.start, 2*sim.Millisecond, "kswapd's slice is used by then")
	wakeAt := alone.resetStart + walk/2
	got := preemptWorld(t, pages, true, true, wakeAt)
	require.NotEqual(t, sim.Never, got.sleeperRan)
	wait := got.sleeperRan - wakeAt
	assert.LessOrEqual(t, wait, step, "the woken task waited %v of the %v walk; a loop step is at most %v", wait, walk, step)
	assert.Equal(t, alone.steal, got.steal)
	// The walk went on after the sleeper, to the same end; kswapd was
	// on its waitqueue and not woken, so its nap was not cut short.
	assert.Equal(t, alone.resetStart, got.resetStart)
	assert.Zero(t, got.lowQuickly)
}

func maxTime(s []sim.Time) sim.Time {
	var m sim.Time
	for _, v := range s {
		m = max(m, v)
	}
	return m
}
