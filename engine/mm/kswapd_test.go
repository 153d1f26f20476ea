package mm

// Behaviour tests for kswapd: when an allocation wakes it, how far it
// reclaims, how it goes back to sleep, when it wakes kcompactd, and how it
// gives up on a node it cannot reclaim.

import (
	"slices"
	"testing"

	"github.com/pagesim/pagesim/engine/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// traceAt returns the times of the recorded events called name.
func traceAt(m *Machine, name string) []sim.Time {
	var out []sim.Time
	for _, e := range m.Trace.Events() {
		if e.Name() == name {
			out = append(out, e.Time)
		}
	}
	return out
}

func TestKswapdWokenBelowLowReclaimsToHighAndSleeps(t *testing.T) {
	m := newQuietMachine(t, 8192, 1, 2)
	// 40 free pages per block: a little above the high watermark; the
	// rest clean page cache.
	carveZone(t, m, nil, func(block, off int) role {
		if off < 40 {
			return roleFree
		}
		return roleFile
	})
	z := m.Nodes[0].Zones[ZONE_NORMAL]
	n := m.Nodes[0]
	free0 := uint64(z.Stat[NR_FREE_PAGES])
	require.Greater(t, free0, z.WmarkPages(WMARK_HIGH))
	require.False(t, n.KswapdRunning())
	// Movable requests (no fallback, so no watermark boost) take the zone
	// below its low watermark but stay above min: the fast path misses at
	// low, the slow path wakes kswapd and succeeds at min.
	take := free0 - z.WmarkPages(WMARK_MIN) - 32
	require.Greater(t, free0-take, z.WmarkPages(WMARK_MIN))
	require.Less(t, free0-take, z.WmarkPages(WMARK_LOW))
	spawn(m, "writer", 1, 0, func(t *sim.Task) sim.Time {
		for i := uint64(0); i < take; i++ {
			if m.allocSync(t, GFP_HIGHUSER_MOVABLE, 0, 0, 0) == NilPFN {
				panic("allocation above the min watermark failed")
			}
		}
		return sim.Exit
	})
	runWorld(t, m, 2*sim.Second)

	assert.Zero(t, allocstalls(m), "the allocations never went below min: no direct reclaim")
	assert.Equal(t, []string{"nid=0 order=0 gfp_flags=GFP_HIGHUSER_MOVABLE"}, traceFields(m, "mm_vmscan_wakeup_kswapd"),
		"woken once: later wakeups find kswapd already running")
	assert.Equal(t, []string{"nid=0 order=0"}, traceFields(m, "mm_vmscan_kswapd_wake"))
	assert.Equal(t, []string{"nid=0"}, traceFields(m, "mm_vmscan_kswapd_sleep"))
	assert.Equal(t, uint64(1), m.Event(PAGEOUTRUN), "pageoutrun: one balance_pgdat run")
	assert.Greater(t, m.Event(PGSCAN_KSWAPD), uint64(0))
	assert.Greater(t, m.Event(PGSTEAL_KSWAPD), uint64(0))
	assert.Zero(t, m.Event(PGSCAN_DIRECT))
	assert.Zero(t, m.Event(KSWAPD_LOW_WMARK_HIT_QUICKLY)+m.Event(KSWAPD_HIGH_WMARK_HIT_QUICKLY),
		"the node stayed balanced through the 100 ms nap")
	// Reclaimed to the high watermark, and asleep.
	assert.GreaterOrEqual(t, uint64(z.Stat[NR_FREE_PAGES]), z.WmarkPages(WMARK_HIGH))
	assert.False(t, n.KswapdRunning())
	assert.Equal(t, ksSleep, n.kswapd.state)
	assert.Zero(t, n.KswapdFailures())
	// It dozed HZ/10 before the sleep (kswapd_try_to_sleep's nap).
	wake, sleep := traceAt(m, "mm_vmscan_kswapd_wake"), traceAt(m, "mm_vmscan_kswapd_sleep")
	require.Len(t, wake, 1)
	require.Len(t, sleep, 1)
	assert.GreaterOrEqual(t, sleep[0]-wake[0], 100*sim.Millisecond)
	// The balance run was one memory stall.
	m.PSIUpdate()
	assert.Greater(t, m.PSI.cpus[0].times[psiSome]+m.PSI.cpus[1].times[psiSome], sim.Time(0))
}

func TestKswapdWakesKcompactdForAHighOrderRequest(t *testing.T) {
	m := newQuietMachine(t, 8192, 1, 2)
	// Every block holds a pinned page, so reclaim can never free a whole
	// block: kswapd must hand the order-9 request over to kcompactd.
	carveZone(t, m, nil, pinnedHolesFileLayout)
	// The THP defrag=defer mask: no direct reclaim, wake kswapd.
	gfp := GFP_TRANSHUGE_LIGHT | __GFP_KSWAPD_RECLAIM
	var got PFN
	spawn(m, "faulter", 1, 0, func(t *sim.Task) sim.Time {
		got = m.allocSync(t, gfp, 9, 0, 0)
		return sim.Exit
	})
	runWorld(t, m, 3*sim.Second)
	assert.Equal(t, NilPFN, got)
	assert.Equal(t, []string{"nid=0 order=9 gfp_flags=GFP_TRANSHUGE_LIGHT|__GFP_KSWAPD_RECLAIM"}, traceFields(m, "mm_vmscan_wakeup_kswapd"))
	assert.Equal(t, []string{"nid=0 order=9"}, traceFields(m, "mm_vmscan_kswapd_wake"))
	// (GFP_HIGHUSER_MOVABLE requests have highest_zoneidx ZONE_MOVABLE even
	// where that zone is empty.)
	// kswapd reclaimed compact_gap(9) pages, dropped to order 0 and, going
	// to sleep, woke kcompactd for the order it was asked for.
	assert.GreaterOrEqual(t, m.Event(PGSTEAL_KSWAPD), compactGap(9))
	assert.Equal(t, []string{"nid=0 order=9 classzone_idx=Movable "}, traceFields(m, "mm_compaction_wakeup_kcompactd"))
	// kcompactd() starts kcompactd_highest_zoneidx at pgdat->nr_zones - 1
	// (Normal: the empty Movable zone has no span) and wakeup_kcompactd()
	// only lowers it, so the pass runs to Normal.
	assert.Equal(t, []string{"nid=0 order=9 classzone_idx=Normal  "}, traceFields(m, "mm_compaction_kcompactd_wake"))
	assert.Equal(t, uint64(1), m.Event(KCOMPACTD_WAKE), "compact_daemon_wake")
	assert.Greater(t, m.Event(KCOMPACTD_MIGRATE_SCANNED), uint64(0), "compact_daemon_migrate_scanned")
	assert.Zero(t, m.Event(COMPACTSTALL), "kcompactd's work is not a direct compaction stall")
	assert.Zero(t, allocstalls(m))
	names := traceNames(m)
	assert.Less(t, indexOf(names, "mm_vmscan_kswapd_wake"), indexOf(names, "mm_compaction_wakeup_kcompactd"))
	assert.Less(t, indexOf(names, "mm_compaction_wakeup_kcompactd"), indexOf(names, "mm_vmscan_kswapd_sleep"),
		"kcompactd is woken before kswapd's nap, not after")
}

func indexOf(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

func TestKswapdGivesUpAfterMaxReclaimRetriesOnAnUnreclaimableNode(t *testing.T) {
	m := newQuietMachine(t, 8192, 1, 2)
	// Nothing but kernel pages and a few free pages below min.
	carveZone(t, m, nil, func(block, off int) role {
		if off < 2 {
			return roleFree
		}
		return roleKernel
	})
	n := m.Nodes[0]
	gfp := GFP_NOWAIT | __GFP_MOVABLE
	var got PFN
	spawn(m, "atomic", 1, 0, func(t *sim.Task) sim.Time {
		got = m.allocSync(t, gfp, 0, 0, 0)
		return sim.Exit
	})
	runWorld(t, m, 5*sim.Second)
	assert.Equal(t, NilPFN, got)
	assert.Len(t, traceFields(m, "mm_vmscan_wakeup_kswapd"), 1)
	// One wakeup: kswapd keeps balancing (the node never balances, so it
	// never sleeps) until MAX_RECLAIM_RETRIES runs reclaimed nothing.
	assert.Equal(t, maxReclaimRetries, n.KswapdFailures(), "kswapd_failures")
	assert.True(t, n.kswapd.hopeless())
	assert.Equal(t, uint64(maxReclaimRetries), m.Event(PAGEOUTRUN), "one pageoutrun per balance_pgdat")
	assert.Len(t, traceFields(m, "mm_vmscan_kswapd_wake"), maxReclaimRetries)
	assert.Equal(t, uint64(maxReclaimRetries-1), m.Event(KSWAPD_HIGH_WMARK_HIT_QUICKLY),
		"every run but the last found the node unbalanced when it tried to sleep")
	assert.Zero(t, m.Event(PGSTEAL_KSWAPD))
	// A hopeless kswapd sleeps, and allocations no longer wake it.
	assert.Equal(t, []string{"nid=0"}, traceFields(m, "mm_vmscan_kswapd_sleep"))
	assert.False(t, n.KswapdRunning())
	inWorld(t, m, 1, func(t *sim.Task) {
		m.allocSync(t, gfp, 0, 0, 0)
	})
	runWorld(t, m, m.World.Now()+sim.Second)
	assert.Len(t, traceFields(m, "mm_vmscan_wakeup_kswapd"), 1, "a hopeless node's kswapd is not woken")
	assert.Equal(t, uint64(maxReclaimRetries), m.Event(PAGEOUTRUN))
	assert.False(t, n.KswapdRunning())
}

func TestAWatermarkBoostMakesKswapdReclaimTheBoostAndWakeKcompactd(t *testing.T) {
	// 128 MiB: at DEF_PRIORITY a 16k-page LRU yields 4 pages a pass. (On
	// a machine whose LRU is under 4096 pages, the first boosted pass
	// scans nothing and balance_pgdat gives the boost up at once.)
	m := newQuietMachine(t, 32768, 1, 2)
	// Pins keep reclaim from freeing a whole block, so kcompactd has work.
	l := carveZone(t, m, nil, pinnedHolesFileLayout)
	z := l.zone
	n := m.Nodes[0]
	// Plenty of free memory, all of it in movable blocks: an unmovable
	// request tries to claim a block (boost_watermark), fails, steals a
	// page, and rmqueue wakes kswapd for the boost.
	var got PFN
	tk := inWorld(t, m, 1, func(t *sim.Task) { got = m.allocSync(t, GFP_KERNEL, 0, 0, 0) })
	require.NotEqual(t, NilPFN, got)
	assert.Zero(t, m.Slow.Entered, "served on the fast path")
	boost := z.WatermarkBoost
	require.Equal(t, uint64(PageblockNrPages), boost, "boost_watermark adds a pageblock")
	// The wakeup is decided at the time it was asked, the task's clock.
	runWorld(t, m, tk.Now)
	assert.Equal(t, []string{"nid=0 order=0 gfp_flags=none"}, traceFields(m, "mm_vmscan_wakeup_kswapd"))
	runWorld(t, m, m.World.Now()+2*sim.Second)
	assert.Equal(t, uint64(1), m.Event(PAGEOUTRUN))
	assert.GreaterOrEqual(t, m.Event(PGSTEAL_KSWAPD), boost, "kswapd reclaimed the boost")
	assert.Less(t, m.Event(PGSTEAL_KSWAPD), boost+2*SWAP_CLUSTER_MAX, "and stopped once the boost was reclaimed")
	assert.Zero(t, m.Event(PSWPOUT)+m.Event(PGSCAN_ANON), "boosted reclaim never swaps")
	assert.Zero(t, z.WatermarkBoost, "the boost is paid off")
	assert.Zero(t, n.KswapdFailures())
	assert.Zero(t, allocstalls(m))
	assert.Equal(t, []string{"nid=0 order=9 classzone_idx=Normal  "}, traceFields(m, "mm_compaction_wakeup_kcompactd"),
		"boosted reclaim ends by waking kcompactd at pageblock order")
	assert.Equal(t, uint64(1), m.Event(KCOMPACTD_WAKE))
	assert.False(t, n.KswapdRunning())
}

func TestFreeingAboveHighGivesAHopelessKswapdAnotherChance(t *testing.T) {
	tests := []struct {
		name  string
		nid   int
		clear bool
	}{
		{"on a node with a memory node after it, kswapd_failures is reset", 0, true},
		{"on the last memory node, kswapd_failures stays (next_memory_node is MAX_NUMNODES)", 1, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := newQuietMachine(t, 8192, 2, 1)
			l := carveNodeZone(t, m, tc.nid, nil, func(block, off int) role {
				if off < 2 {
					return roleFree
				}
				return roleKernel
			})
			n := m.Nodes[tc.nid]
			cpu := n.CPUs[0]
			inWorld(t, m, cpu, func(t *sim.Task) { m.allocSync(t, GFP_NOWAIT|__GFP_MOVABLE|__GFP_THISNODE, 0, tc.nid, 0) })
			runWorld(t, m, 5*sim.Second)
			require.Equal(t, maxReclaimRetries, n.KswapdFailures())
			require.NotZero(t, l.zone.flags&ZONE_BELOW_HIGH)
			// Free kernel pages until the zone is back above high: the
			// per-CPU list's bulk free clears ZONE_BELOW_HIGH.
			tk := m.testTask(cpu)
			for _, pfn := range l.pages[roleKernel][:3000] {
				m.FreePages(tk, pfn, 0)
			}
			mustCheck(t, m, "freeing")
			require.Greater(t, uint64(l.zone.Stat[NR_FREE_PAGES]), l.zone.WmarkPages(WMARK_HIGH))
			assert.Zero(t, l.zone.flags&ZONE_BELOW_HIGH)
			if tc.clear {
				assert.Zero(t, n.KswapdFailures(), "free_frozen_page_commit resets kswapd_failures")
			} else {
				assert.Equal(t, maxReclaimRetries, n.KswapdFailures())
			}
		})
	}
}

func TestWakeupKswapdOnAHopelessNodeWakesKcompactdForCallersThatCannotReclaim(t *testing.T) {
	tests := []struct {
		name      string
		gfp       GFP
		kcompactd bool
	}{
		{"GFP_NOWAIT order-3: kcompactd is woken instead of kswapd", GFP_NOWAIT | __GFP_COMP, true},
		{"GFP_KERNEL order-3: neither is woken (the caller reclaims and compacts itself)", GFP_KERNEL | __GFP_COMP, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := newQuietMachine(t, 8192, 1, 2)
			carveZone(t, m, nil, pinnedHolesLayout(true))
			n := m.Nodes[0]
			n.kswapd.failures = maxReclaimRetries
			tk := inWorld(t, m, 1, func(t *sim.Task) { m.allocSync(t, tc.gfp, 3, 0, 0) })
			runWorld(t, m, tk.Now) // to the time the wakeups were asked at
			assert.Empty(t, traceFields(m, "mm_vmscan_wakeup_kswapd"), "a hopeless kswapd is left asleep")
			assert.False(t, n.KswapdRunning())
			if tc.kcompactd {
				assert.Equal(t, []string{"nid=0 order=3 classzone_idx=Normal  "}, traceFields(m, "mm_compaction_wakeup_kcompactd"))
			} else {
				assert.Empty(t, traceFields(m, "mm_compaction_wakeup_kcompactd"))
			}
		})
	}
}

// wakeupAt spawns one task per entry on its own CPU (1, 2, ...) at time
// 0; each charges its entry's delay and then calls wake. Every step
// starts at 0, before any daemon's step, and they run in spawn order, so
// a task with a later clock may wake the daemon before one with an
// earlier clock does.
func wakeupAt(m *Machine, delays []sim.Time, wake func(t *sim.Task, i int)) {
	for i, d := range delays {
		spawn(m, "waker", i+1, 0, func(t *sim.Task) sim.Time {
			t.Charge(d)
			wake(t, i)
			return sim.Exit
		})
	}
}

// lowNode carves the zone so that it is below its low watermark with
// clean page cache to reclaim: kswapd has work.
func lowNode(t *testing.T, m *Machine) {
	t.Helper()
	carveZone(t, m, nil, func(block, off int) role {
		if off < 2 {
			return roleFree
		}
		return roleFile
	})
	z := m.Nodes[0].Zones[ZONE_NORMAL]
	require.Less(t, uint64(z.Stat[NR_FREE_PAGES]), z.WmarkPages(WMARK_LOW))
}

func TestAnEarlierWakeupWakesKswapdAtItsOwnTimeWithItsOwnOrder(t *testing.T) {
	m := newQuietMachine(t, 8192, 1, 3)
	lowNode(t, m)
	z := m.Nodes[0].Zones[ZONE_NORMAL]
	// The task whose clock is at 10 ms wakes kswapd first (in wall
	// order), then the one at 1 ms: at 1 ms kswapd was asleep, and
	// nobody had asked for order 3 yet.
	orders := []Order{3, 2}
	wakeupAt(m, []sim.Time{10 * sim.Millisecond, sim.Millisecond}, func(t *sim.Task, i int) {
		m.wakeupKswapd(t, z, GFP_KERNEL, orders[i], ZONE_NORMAL)
	})
	runWorld(t, m, 50*sim.Millisecond)
	assert.Equal(t, []sim.Time{sim.Millisecond}, traceAt(m, "mm_vmscan_kswapd_wake"),
		"kswapd wakes once, at the earlier wakeup's time")
	assert.Equal(t, []string{"nid=0 order=2"}, traceFields(m, "mm_vmscan_kswapd_wake"),
		"with the order asked at 1 ms, not the one asked at 10 ms")
	assert.Equal(t, uint64(1), m.Nodes[0].kswapd.Wakeups, "one wakeup woke the thread")
}

func TestAWakeupWhileKswapdRunsOnlyRaisesItsOrder(t *testing.T) {
	m := newQuietMachine(t, 8192, 1, 3)
	lowNode(t, m)
	z := m.Nodes[0].Zones[ZONE_NORMAL]
	// The task at 1 ms wakes kswapd first, at order 0; the one at 1 ms
	// and 1 us then finds it woken earlier in simulated time: running,
	// so it only raises pgdat->kswapd_order. kswapd's wake at 1 ms does
	// not see it (it was asked later); kswapd() reads it at its loop's
	// top after balance_pgdat() returns (reclaim_order 0 is not below
	// alloc_order 0): alloc_order = reclaim_order = 4.
	orders := []Order{0, 4}
	wakeupAt(m, []sim.Time{sim.Millisecond, sim.Millisecond + sim.Microsecond}, func(t *sim.Task, i int) {
		m.wakeupKswapd(t, z, GFP_KERNEL, orders[i], ZONE_NORMAL)
	})
	runWorld(t, m, 50*sim.Millisecond)
	assert.Equal(t, []sim.Time{sim.Millisecond}, traceAt(m, "mm_vmscan_wakeup_kswapd"), "the second wakeup is not traced")
	assert.Equal(t, []sim.Time{sim.Millisecond}, traceAt(m, "mm_vmscan_kswapd_wake"))
	assert.Equal(t, []string{"nid=0 order=0"}, traceFields(m, "mm_vmscan_kswapd_wake"), "the wake reads what was asked by 1 ms")
	k := &m.Nodes[0].kswapd
	assert.Equal(t, uint64(1), k.Wakeups)
	assert.Equal(t, Order(4), k.allocOrder, "the loop's top read the raised order")
	assert.Equal(t, Order(4), k.reclaimOrder)
	assert.Empty(t, k.asks)
}

// wakeupInTime is wakeupAt without running ahead: each task starts at
// its entry's delay and calls wake there, so every wakeup is asked at the
// world's clock, in the order of the asked times.
func wakeupInTime(m *Machine, delays []sim.Time, wake func(t *sim.Task, i int)) {
	for i, d := range delays {
		spawn(m, "waker", i+1, d, func(t *sim.Task) sim.Time {
			wake(t, i)
			return sim.Exit
		})
	}
}

// daemonRecord is what a run's kswapd and kcompactd did: their
// tracepoints (name, time, fields) in time order and their counters.
func daemonRecord(m *Machine) []string {
	var out []string
	for _, e := range m.Trace.Events() {
		switch e.Name() {
		case "mm_vmscan_wakeup_kswapd", "mm_vmscan_kswapd_wake", "mm_vmscan_kswapd_sleep",
			"mm_compaction_wakeup_kcompactd", "mm_compaction_kcompactd_wake", "mm_compaction_kcompactd_sleep":
			out = append(out, e.Time.String()+" "+e.Name()+" "+e.Fields())
		}
	}
	slices.Sort(out) // the same width for every time here (under 1 s)
	n := m.Nodes[0]
	return append(out, "Wakeups="+itoa(int(n.kswapd.Wakeups)),
		"kswapd_low_wmark_hit_quickly="+itoa(int(m.Event(KSWAPD_LOW_WMARK_HIT_QUICKLY))),
		"kswapd_high_wmark_hit_quickly="+itoa(int(m.Event(KSWAPD_HIGH_WMARK_HIT_QUICKLY))),
		"compact_daemon_wake="+itoa(int(m.Event(KCOMPACTD_WAKE))))
}

func TestADaemonWakesAtTheEarliestWakeupWhateverOrderTheStepsRanIn(t *testing.T) {
	// The invariant: wakeup_kswapd() and wakeup_kcompactd() decide at
	// the time they are asked: a wakeup finding the daemon on its
	// waitqueue then wakes it (from its nap: a premature wake) if the
	// node needs it, one finding it running only raises what it reads
	// next. So a run whose wakers' steps ran ahead of the daemons (all
	// asked at time 0 in spawn order) does what a run whose wakers ask in
	// time order does: the same wakes at the same times with the same
	// orders, one wake per wakeup the daemon honoured. The first wake is
	// at the earliest asked time with the largest order asked then.
	rng := sim.NewRand(7)
	for round := 0; round < 20; round++ {
		delays := make([]sim.Time, 6)
		orders := make([]Order, len(delays))
		earliest, largest := sim.Time(sim.Never), Order(0)
		for i := range delays {
			delays[i] = sim.Time(1+rng.Intn(10_000)) * sim.Microsecond
			orders[i] = Order(1 + rng.Intn(8))
			if earliest == sim.Never || delays[i] < earliest {
				earliest = delays[i]
			}
		}
		later := false
		for i := range delays {
			if delays[i] == earliest {
				largest = max(largest, orders[i])
			} else {
				later = true
			}
		}
		require.True(t, later, "round %d asks at more than one time", round)
		t.Run("kswapd", func(t *testing.T) {
			var records [2][]string
			for run, ask := range []func(*Machine, []sim.Time, func(*sim.Task, int)){wakeupAt, wakeupInTime} {
				m := newQuietMachine(t, 8192, 1, len(delays)+1)
				lowNode(t, m)
				z := m.Nodes[0].Zones[ZONE_NORMAL]
				ask(m, delays, func(t *sim.Task, i int) {
					m.wakeupKswapd(t, z, GFP_KERNEL, orders[i], ZONE_NORMAL)
				})
				runWorld(t, m, 300*sim.Millisecond)
				records[run] = daemonRecord(m)
				require.NotEmpty(t, traceAt(m, "mm_vmscan_kswapd_wake"))
				assert.Equal(t, earliest, traceAt(m, "mm_vmscan_kswapd_wake")[0], "delays %v", delays)
				assert.Equal(t, "nid=0 order="+itoa(int(largest)), traceFields(m, "mm_vmscan_kswapd_wake")[0])
				assert.Equal(t, uint64(len(traceAt(m, "mm_vmscan_wakeup_kswapd"))), m.Nodes[0].kswapd.Wakeups,
					"one wake per wakeup honoured")
			}
			assert.Equal(t, records[1], records[0], "round %d: delays %v orders %v", round, delays, orders)
		})
		t.Run("kcompactd", func(t *testing.T) {
			var records [2][]string
			for run, ask := range []func(*Machine, []sim.Time, func(*sim.Task, int)){wakeupAt, wakeupInTime} {
				m := newQuietMachine(t, 8192, 1, len(delays)+1)
				// Half of every block free, in single pages:
				// compaction is suitable for every order asked.
				carveZone(t, m, nil, func(block, off int) role {
					if off%2 == 1 {
						return roleFree
					}
					return roleFile
				})
				n := m.Nodes[0]
				ask(m, delays, func(t *sim.Task, i int) {
					m.wakeupKcompactd(t, n, orders[i], ZONE_NORMAL)
				})
				runWorld(t, m, 300*sim.Millisecond)
				records[run] = daemonRecord(m)
				require.NotEmpty(t, traceAt(m, "mm_compaction_kcompactd_wake"))
				assert.Equal(t, earliest, traceAt(m, "mm_compaction_kcompactd_wake")[0], "delays %v", delays)
				wakes := traceFields(m, "mm_compaction_kcompactd_wake")
				assert.Contains(t, wakes[0], "order="+itoa(int(largest))+" ")
				assert.Equal(t, uint64(len(wakes)), m.Event(KCOMPACTD_WAKE))
			}
			assert.Equal(t, records[1], records[0], "round %d: delays %v orders %v", round, delays, orders)
		})
	}
}

// TestARanAheadWakersEqualWakeupsTakeOneEntryAndAreDecidedEachAtItsTime:
// a fault loop whose step runs ahead of the daemons below the low
// watermark asks on every slow-path entry, the same order, zone index and
// mask each time (review finding F22: 260,000 asks in noretry-compaction's
// boot). They take one entry of the ask list (a run) until decided, split
// where another waker asks between them, and each is still decided and
// read at its own time: the daemons do what they do for the same wakeups
// asked in time order, record by record.
func TestARanAheadWakersEqualWakeupsTakeOneEntryAndAreDecidedEachAtItsTime(t *testing.T) {
	var loop []sim.Time
	for i := 0; i < 400; i++ {
		loop = append(loop, sim.Millisecond+sim.Time(i)*600*sim.Microsecond)
	}
	other := []sim.Time{3*sim.Millisecond + 100*sim.Microsecond, 40 * sim.Millisecond}
	// Every block holds a pinned page: neither reclaim nor compaction
	// ever makes an order-9 chunk, so the node stays unbalanced and
	// compaction suitable at order 9, and the daemons are woken again
	// and again.
	pinned := func(t *testing.T, m *Machine) {
		carveZone(t, m, nil, pinnedHolesFileLayout)
	}
	for _, tc := range []struct {
		name string
		ask  func(m *Machine, tk *sim.Task, order Order)
		wait func(m *Machine) *daemonWait
		wake string
	}{
		{"kswapd", func(m *Machine, tk *sim.Task, order Order) {
			m.wakeupKswapd(tk, m.Nodes[0].Zones[ZONE_NORMAL], GFP_KERNEL, order, ZONE_NORMAL)
		}, func(m *Machine) *daemonWait { return &m.Nodes[0].kswapd.daemonWait }, "mm_vmscan_kswapd_wake"},
		{"kcompactd", func(m *Machine, tk *sim.Task, order Order) {
			m.wakeupKcompactd(tk, m.Nodes[0], order, ZONE_NORMAL)
		}, func(m *Machine) *daemonWait { return &m.Nodes[0].kcompactd.daemonWait }, "mm_compaction_kcompactd_wake"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var records [2][]string
			for run, ahead := range []bool{true, false} {
				// Two CPUs beyond the wakers': the ran-ahead loop holds
				// its CPU for its whole step, and the daemons need one
				// each to run when they would in time order.
				m := newQuietMachine(t, 8192, 1, 5)
				m.Sysctl.CompactionProactiveness = 0
				pinned(t, m)
				for i, times := range [][]sim.Time{loop, other} {
					order := Order(9 - 5*i)
					if ahead {
						spawn(m, "waker", i+1, 0, func(tk *sim.Task) sim.Time {
							for _, at := range times {
								tk.Charge(at - tk.Now)
								tc.ask(m, tk, order)
							}
							return sim.Exit
						})
						continue
					}
					next := 0
					spawn(m, "waker", i+1, times[0], func(tk *sim.Task) sim.Time {
						tc.ask(m, tk, order)
						if next++; next == len(times) {
							return sim.Exit
						}
						return times[next]
					})
				}
				if ahead {
					runWorld(t, m, 0)
					assert.LessOrEqual(t, len(tc.wait(m).asks), 5,
						"400 equal asks in one run, split by the other waker's two")
				}
				runWorld(t, m, 300*sim.Millisecond)
				records[run] = daemonRecord(m)
				assert.Greater(t, len(traceAt(m, tc.wake)), 1)
			}
			assert.Equal(t, records[1], records[0])
		})
	}
}

// TestAWakeupAskedAfterKswapdWentBackToItsWaitqueueWakesIt: a wakeup whose
// step ran ahead of kswapd is decided at its own time, when kswapd has
// gone back to its nap or to sleep (mm/vmscan.c wakeup_kswapd(),
// kswapd_try_to_sleep()): it wakes kswapd for its order, prematurely from
// the nap.
func TestAWakeupAskedAfterKswapdWentBackToItsWaitqueueWakesIt(t *testing.T) {
	tests := []struct {
		name      string
		second    sim.Time
		premature uint64
	}{
		{"an order-9 wakeup during the nap ends it early", 50 * sim.Millisecond, 1},
		{"an order-9 wakeup after kswapd went to sleep wakes it", 300 * sim.Millisecond, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := newQuietMachine(t, 8192, 1, 3)
			lowNode(t, m)
			z := m.Nodes[0].Zones[ZONE_NORMAL]
			orders := []Order{0, 9}
			// Both steps run at time 0, before kswapd's first.
			wakeupAt(m, []sim.Time{sim.Millisecond, tc.second}, func(t *sim.Task, i int) {
				m.wakeupKswapd(t, z, GFP_KERNEL, orders[i], ZONE_NORMAL)
			})
			runWorld(t, m, tc.second-sim.Microsecond)
			k := &m.Nodes[0].kswapd
			require.True(t, k.waitActive, "kswapd balanced at order 0 and went back to its waitqueue")
			require.False(t, m.pgdatBalanced(m.Nodes[0], 9, ZONE_NORMAL), "the node is not balanced at order 9")
			runWorld(t, m, tc.second+400*sim.Millisecond)
			assert.Equal(t, []sim.Time{sim.Millisecond, tc.second}, traceAt(m, "mm_vmscan_kswapd_wake"))
			assert.Equal(t, []string{"nid=0 order=0", "nid=0 order=9"}, traceFields(m, "mm_vmscan_kswapd_wake"))
			assert.Equal(t, []sim.Time{sim.Millisecond, tc.second}, traceAt(m, "mm_vmscan_wakeup_kswapd"))
			assert.Equal(t, uint64(2), k.Wakeups)
			assert.Equal(t, tc.premature, m.Event(KSWAPD_LOW_WMARK_HIT_QUICKLY))
		})
	}
}

// TestAWakeupAskedAfterKcompactdWentBackToSleepWakesIt: the same for
// kcompactd (mm/compaction.c wakeup_kcompactd(): wq_has_sleeper(), then
// kcompactd_node_suitable() at the time asked), with
// vm.compaction_proactiveness=0, where no timeout would ever wake it.
func TestAWakeupAskedAfterKcompactdWentBackToSleepWakesIt(t *testing.T) {
	m := newQuietMachine(t, 8192, 1, 3)
	carveZone(t, m, nil, func(block, off int) role {
		if off%2 == 1 {
			return roleFree
		}
		return roleFile
	})
	n := m.Nodes[0]
	orders := []Order{2, 9}
	wakeupAt(m, []sim.Time{sim.Millisecond, 300 * sim.Millisecond}, func(t *sim.Task, i int) {
		m.wakeupKcompactd(t, n, orders[i], ZONE_NORMAL)
	})
	runWorld(t, m, 299*sim.Millisecond)
	require.True(t, n.kcompactd.waitActive, "kcompactd passed at order 2 and went back to sleep")
	runWorld(t, m, 400*sim.Millisecond)
	assert.Equal(t, []sim.Time{sim.Millisecond, 300 * sim.Millisecond}, traceAt(m, "mm_compaction_kcompactd_wake"))
	wakes := traceFields(m, "mm_compaction_kcompactd_wake")
	require.Len(t, wakes, 2)
	assert.Contains(t, wakes[0], "order=2 ")
	assert.Contains(t, wakes[1], "order=9 ")
	assert.Equal(t, uint64(2), m.Event(KCOMPACTD_WAKE))
}

// TestTwoWakeupsOfOneOrderAreReadTwiceWhenKswapdReadsBetweenThem: kswapd()
// resets pgdat->kswapd_order after reading it, so a wakeup after the read
// raises it again for the next read, even when an earlier one asked the
// same order (mm/vmscan.c kswapd(), wakeup_kswapd()).
func TestTwoWakeupsOfOneOrderAreReadTwiceWhenKswapdReadsBetweenThem(t *testing.T) {
	m := newQuietMachine(t, 8192, 1, 3)
	lowNode(t, m)
	n := m.Nodes[0]
	z := n.Zones[ZONE_NORMAL]
	// Both asked at time 0 in the world's order, at 1 and 60 ms of the
	// wakers' clocks: kswapd reads the first at 1 ms and resets.
	wakeupAt(m, []sim.Time{sim.Millisecond, 60 * sim.Millisecond}, func(t *sim.Task, i int) {
		m.wakeupKswapd(t, z, GFP_KERNEL, 4, ZONE_NORMAL)
	})
	runWorld(t, m, 60*sim.Millisecond-sim.Microsecond)
	assert.Equal(t, []string{"nid=0 order=4"}, traceFields(m, "mm_vmscan_kswapd_wake"))
	assert.Zero(t, m.NodeViews()[0].KswapdOrder, "kswapd read and reset the order at 1 ms")
	runWorld(t, m, 300*sim.Millisecond)
	// At 60 ms kswapd naps on a node balanced at order 4: the wakeup
	// does not wake it, and kswapd_order holds 4 for its next wake.
	assert.Equal(t, []string{"nid=0 order=4"}, traceFields(m, "mm_vmscan_kswapd_wake"))
	assert.Equal(t, "sleeping", m.NodeViews()[0].Kswapd)
	assert.Equal(t, Order(4), m.NodeViews()[0].KswapdOrder, "the 60 ms wakeup raised it again")
}

// TestKcompactdPassesAgainAtOnceWhenAWakeupDuringItsPassRaisedTheOrder:
// kcompactd() tests kcompactd_work_requested() before it sleeps
// (wait_event_freezable_timeout, linux-mm mm/compaction.c @04e60ad1), so an
// order raised above the pass's by a wakeup during the pass is worked at
// once, not at the next timeout (never, with proactiveness 0).
func TestKcompactdPassesAgainAtOnceWhenAWakeupDuringItsPassRaisedTheOrder(t *testing.T) {
	m := newQuietMachine(t, 8192, 1, 3)
	m.Sysctl.CompactionProactiveness = 0
	carveZone(t, m, nil, func(block, off int) role {
		if off%2 == 1 {
			return roleFree
		}
		return roleFile
	})
	n := m.Nodes[0]
	delays := []sim.Time{sim.Millisecond, sim.Millisecond + sim.Microsecond}
	orders := []Order{2, 9}
	wakeupAt(m, delays, func(t *sim.Task, i int) {
		m.wakeupKcompactd(t, n, orders[i], ZONE_NORMAL)
	})
	runWorld(t, m, 100*sim.Millisecond)
	wakes := traceFields(m, "mm_compaction_kcompactd_wake")
	require.Len(t, wakes, 2, "a pass at order 2, then one at the order 9 asked during it")
	assert.Equal(t, "nid=0 order=2 classzone_idx=Normal  ", wakes[0])
	// The first pass's end found kcompactd_highest_zoneidx (Normal, as the
	// order-9 wakeup asked) no lower than the pass's and reset it to
	// pgdat->nr_zones - 1 (kcompactd_do_work(), linux-mm mm/compaction.c
	// @04e60ad1): the node's highest zone with pages, Normal, not
	// MAX_NR_ZONES - 1 (Device).
	assert.Equal(t, "nid=0 order=9 classzone_idx=Normal  ", wakes[1])
	assert.Equal(t, ZONE_NORMAL, n.kcompactd.highestZoneidx, "the second pass's end reset it again")
	sleeps := traceAt(m, "mm_compaction_kcompactd_sleep")
	require.NotEmpty(t, sleeps)
	assert.Equal(t, sleeps[0], traceAt(m, "mm_compaction_kcompactd_wake")[1], "the second pass starts where the first one ended")
	assert.Equal(t, uint64(2), m.Event(KCOMPACTD_WAKE))
}

// TestANodeViewShowsTheOrdersAskedByItsTime: pgdat->kswapd_order and
// kcompactd_max_order hold what wakeup_kswapd() and wakeup_kcompactd()
// raised them to by the view's time, whether or not the daemon woke and
// read them: on a node with free memory at every order neither daemon is
// woken, and both orders stay raised.
func TestANodeViewShowsTheOrdersAskedByItsTime(t *testing.T) {
	m := newQuietMachine(t, 8192, 1, 3)
	n := m.Nodes[0]
	z := n.Zones[ZONE_NORMAL]
	require.True(t, m.pgdatBalanced(n, 9, ZONE_NORMAL))
	// The waker's step runs at time 0 and asks at 1 ms of its clock.
	wakeupAt(m, []sim.Time{sim.Millisecond}, func(t *sim.Task, i int) {
		m.wakeupKswapd(t, z, GFP_NOWAIT, 9, ZONE_NORMAL)
	})
	runWorld(t, m, sim.Millisecond-sim.Microsecond)
	v := m.NodeViews()[0]
	assert.Zero(t, v.KswapdOrder, "not asked yet at the view's time")
	assert.Zero(t, v.KcompactdOrder)
	runWorld(t, m, 2*sim.Millisecond)
	v = m.NodeViews()[0]
	assert.Empty(t, traceFields(m, "mm_vmscan_wakeup_kswapd"), "balanced: kswapd is not woken")
	assert.Empty(t, traceFields(m, "mm_compaction_wakeup_kcompactd"), "nothing to compact: kcompactd is not woken")
	assert.Equal(t, "sleeping", v.Kswapd)
	assert.Equal(t, "sleeping", v.Kcompactd)
	assert.Equal(t, Order(9), v.KswapdOrder)
	assert.Equal(t, Order(9), v.KcompactdOrder, "GFP_NOWAIT cannot reclaim: wakeup_kswapd() asked kcompactd")
}

// TestAWakeInTheNapsLastJiffyIsNotPremature: kswapd's nap is
// schedule_timeout(HZ/10), which sets expire = jiffies + 25 and returns
// expire - jiffies, clamped at 0, when woken (kernel/time/sleep_timeout.c);
// its timer fires a jiffy after expire (the wheel's level-0 bucket). A
// wakeup after jiffies reached expire (napEnd + 1 us here), before the timer
// fires, makes it return 0: kswapd_try_to_sleep() (linux-mm mm/vmscan.c
// @000fc868) counts nothing, prepare_kswapd_sleep() holds at the reclaim
// order and kswapd goes to sleep with kswapd_order raised to the wakeup's 9
// for its next wake. A wakeup 10 ms before napEnd is premature (remaining
// != 0): KSWAPD_LOW_WMARK_HIT_QUICKLY and a run at order 9.
func TestAWakeInTheNapsLastJiffyIsNotPremature(t *testing.T) {
	for _, tc := range []struct {
		name      string
		at        sim.Time // after napEnd
		wakes     []string
		premature uint64
		sleeps    int
		state     string
		order     Order
	}{
		{"a wake after jiffies reached expire sends kswapd to sleep with the order raised", sim.Microsecond,
			[]string{"nid=0 order=0"}, 0, 1, "sleeping", 9},
		{"a wake 10 ms before napEnd is premature", -10 * sim.Millisecond,
			[]string{"nid=0 order=0", "nid=0 order=9"}, 1, 0, "napping", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newQuietMachine(t, 8192, 1, 3)
			m.World.Sched = sim.DefaultSched()
			lowNode(t, m)
			n := m.Nodes[0]
			z := n.Zones[ZONE_NORMAL]
			wakeupInTime(m, []sim.Time{sim.Millisecond}, func(t *sim.Task, i int) {
				m.wakeupKswapd(t, z, GFP_KERNEL, 0, ZONE_NORMAL)
			})
			runWorld(t, m, 50*sim.Millisecond)
			k := &n.kswapd
			require.Equal(t, ksNap, k.state)
			require.LessOrEqual(t, k.napExpire, k.napEnd)
			require.Greater(t, k.napExpire, k.napEnd-4*sim.Millisecond, "expire is within a jiffy of napEnd")
			at := k.napEnd + tc.at
			require.False(t, m.pgdatBalanced(n, 9, ZONE_NORMAL))
			spawn(m, "waker", 1, at, func(t *sim.Task) sim.Time {
				m.wakeupKswapd(t, z, GFP_KERNEL, 9, ZONE_NORMAL)
				return sim.Exit
			})
			runWorld(t, m, at)
			require.Equal(t, ksNap, k.state, "the nap's timer has not fired yet")
			runWorld(t, m, at+20*sim.Millisecond)
			assert.Len(t, traceFields(m, "mm_vmscan_wakeup_kswapd"), 2, "both wakeups woke kswapd")
			assert.Equal(t, tc.wakes, traceFields(m, "mm_vmscan_kswapd_wake"))
			assert.Equal(t, tc.premature, m.Event(KSWAPD_LOW_WMARK_HIT_QUICKLY))
			assert.Len(t, traceAt(m, "mm_vmscan_kswapd_sleep"), tc.sleeps)
			v := m.NodeViews()[0]
			assert.Equal(t, tc.state, v.Kswapd)
			assert.Equal(t, tc.order, v.KswapdOrder)
		})
	}
}
