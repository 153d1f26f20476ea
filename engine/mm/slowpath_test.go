package mm

// Behaviour tests for __alloc_pages_slowpath: where each kind of request
// stops (the exits of __alloc_pages_slowpath in mm/page_alloc.c @00cb34b0),
// __GFP_THISNODE, and defrag_mode.

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pagesim/pagesim/engine/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stepsString renders the latest slow-path run as a short sentence of
// steps, e.g. "wake(9) min compact(ASYNC) nopage(__GFP_NORETRY)".
func (m *Machine) stepsString() string {
	short := map[CompactPriority]string{COMPACT_PRIO_ASYNC: "ASYNC", COMPACT_PRIO_SYNC_LIGHT: "SYNC_LIGHT", COMPACT_PRIO_SYNC_FULL: "SYNC_FULL"}
	var parts []string
	for _, s := range m.slowTrace.cur.steps {
		switch s.kind {
		case stepCostlyNoretry:
			parts = append(parts, "costly-noretry")
		case stepWakeKswapd:
			parts = append(parts, fmt.Sprintf("wake(%d)", s.a))
		case stepFreelistMin:
			if s.a != 0 {
				parts = append(parts, "min=page")
			} else {
				parts = append(parts, "min")
			}
		case stepDirectReclaim:
			parts = append(parts, fmt.Sprintf("reclaim(%d)", s.b))
		case stepDrainAllPages:
			parts = append(parts, "drain")
		case stepDirectCompact:
			parts = append(parts, fmt.Sprintf("compact(%s)", short[CompactPriority(s.b)]))
		case stepShouldReclaimRetry:
			parts = append(parts, fmt.Sprintf("reclaim-retry=%v", s.a != 0))
		case stepShouldCompactRetry:
			parts = append(parts, fmt.Sprintf("compact-retry=%v", s.a != 0))
		case stepNofragGiveUp:
			parts = append(parts, "nofrag-giveup")
		case stepWouldOOM:
			parts = append(parts, "oom")
		case stepNopage:
			parts = append(parts, "nopage("+nopageReasons[s.a]+")")
		}
	}
	return strings.Join(parts, " ")
}

// pinnedHolesFileLayout is pinnedHolesLayout with clean page cache instead
// of anon: reclaim has work, but no block can ever be freed.
func pinnedHolesFileLayout(block, off int) role {
	switch {
	case off == 0:
		return roleAnonPinned
	case off%2 == 1:
		return roleFree
	}
	return roleFile
}

func TestCostlyNoretryStopsWhereTheKernelStops(t *testing.T) {
	pagecache := GFP_HIGHUSER_MOVABLE | __GFP_COMP | __GFP_NORETRY | __GFP_NOWARN
	thpLocal := GFP_TRANSHUGE | __GFP_THISNODE | __GFP_NORETRY
	tests := []struct {
		name    string
		patched bool
		// noExempt is the v3 review's form (no __GFP_THISNODE exemption).
		noExempt bool
		gfp      GFP
		steps    string
		// allocstall, compact_stall, try_to_free_pages at order 9,
		// mm_vmscan_wakeup_kswapd events
		stalls, compactions, reclaims, wakeups uint64
	}{
		{"baseline: a costly __GFP_NORETRY request compacts, then reclaims and compacts, then gives up", false, false, pagecache,
			"wake(9) min compact(ASYNC) wake(9) min reclaim(9) drain compact(ASYNC) nopage(__GFP_NORETRY)", 1, 2, 1, 1},
		{"seed 000: a costly __GFP_NORETRY request does no direct work but still wakes kswapd", true, false, pagecache,
			"costly-noretry wake(9) min nopage(no __GFP_DIRECT_RECLAIM)", 0, 0, 0, 1},
		{"baseline: the __GFP_THISNODE|__GFP_NORETRY THP attempt gets one compaction only", false, false, thpLocal,
			"min compact(ASYNC) nopage(__GFP_NORETRY|__GFP_THISNODE after compaction)", 0, 1, 0, 0},
		{"seed 000: the __GFP_THISNODE|__GFP_NORETRY THP attempt keeps its one compaction", true, false, thpLocal,
			"min compact(ASYNC) nopage(__GFP_NORETRY|__GFP_THISNODE after compaction)", 0, 1, 0, 0},
		{"v3 review: without the exemption the __GFP_THISNODE|__GFP_NORETRY THP attempt loses its compaction too", true, true, thpLocal,
			"costly-noretry min nopage(no __GFP_DIRECT_RECLAIM)", 0, 0, 0, 0},
		{"v3 review: without the exemption a page-cache folio is treated as in v4", true, true, pagecache,
			"costly-noretry wake(9) min nopage(no __GFP_DIRECT_RECLAIM)", 0, 0, 0, 1},
		{"a costly request without __GFP_NORETRY or __GFP_RETRY_MAYFAIL gets a second, SYNC_LIGHT compaction", false, false, GFP_TRANSHUGE,
			"min compact(ASYNC) min reclaim(9) drain compact(SYNC_LIGHT) nopage(costly order without __GFP_RETRY_MAYFAIL)", 1, 2, 1, 0},
		{"seed 000 leaves a costly request without __GFP_NORETRY alone", true, false, GFP_TRANSHUGE,
			"min compact(ASYNC) min reclaim(9) drain compact(SYNC_LIGHT) nopage(costly order without __GFP_RETRY_MAYFAIL)", 1, 2, 1, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := newQuietMachine(t, 8192, 1, 2)
			m.Patches.CostlyNoretryNoDirectReclaim = tc.patched
			m.Patches.CostlyNoretryNoThisnodeExempt = tc.noExempt
			carveZone(t, m, nil, pinnedHolesFileLayout)
			var got PFN
			tk := inWorld(t, m, 1, func(t *sim.Task) { got = m.allocSync(t, tc.gfp, 9, 0, 0) })
			runWorld(t, m, tk.Now) // the wakeups are decided at their times
			assert.Equal(t, NilPFN, got)
			assert.Equal(t, tc.steps, m.stepsString())
			assert.Equal(t, tc.stalls, allocstalls(m), "allocstall_*")
			assert.Equal(t, tc.compactions, m.Event(COMPACTSTALL), "compact_stall")
			assert.Equal(t, tc.compactions, m.Event(COMPACTFAIL), "compact_fail")
			assert.Equal(t, tc.reclaims, m.Reclaim.DirectRuns[9], "try_to_free_pages(order 9)")
			assert.Len(t, traceFields(m, "mm_compaction_try_to_compact_pages"), int(tc.compactions))
			wake := traceFields(m, "mm_vmscan_wakeup_kswapd")
			assert.Len(t, wake, int(tc.wakeups))
			for _, w := range wake {
				assert.True(t, strings.HasPrefix(w, "nid=0 order=9 gfp_flags="), w)
			}
			if tc.stalls > 0 {
				assert.Equal(t, tc.stalls, m.Event(allocstallEvent(gfpZone(tc.gfp))), "counted in allocstall_%s", gfpZone(tc.gfp))
			}
		})
	}
}

func TestThisnodeNeverLeavesItsNodeThroughTheSlowPath(t *testing.T) {
	tests := []struct {
		name     string
		thisnode bool
	}{
		{"__GFP_THISNODE requests reclaim and compact node 0 and never take node 1's memory", true},
		{"control: the same requests without __GFP_THISNODE spill to node 1", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := newQuietMachine(t, 8192, 2, 1)
			// Node 0: pins, page cache and few free pages; node 1 idle.
			carveZone(t, m, nil, func(block, off int) role {
				switch {
				case off < 4:
					return roleFree
				case off%8 == 0:
					return roleAnonPinned
				}
				return roleFile
			})
			z1 := m.Nodes[1].Zones[ZONE_NORMAL]
			free1 := z1.Stat[NR_FREE_PAGES]
			var extra GFP
			if tc.thisnode {
				extra = __GFP_THISNODE
			}
			var pfns []PFN
			inWorld(t, m, 0, func(t *sim.Task) {
				for i := 0; i < 600; i++ {
					if pfn := m.allocSync(t, GFP_KERNEL|extra, 0, 0, 0); pfn != NilPFN {
						pfns = append(pfns, pfn)
					}
				}
				for i := 0; i < 3; i++ {
					if pfn := m.allocSync(t, GFP_TRANSHUGE|extra, 9, 0, 0); pfn != NilPFN {
						pfns = append(pfns, pfn)
					}
				}
			})
			runWorld(t, m, m.World.Now()+sim.Second)
			onNode1 := 0
			for _, pfn := range pfns {
				if m.ZoneOf(pfn).Node.ID == 1 {
					onNode1++
				}
			}
			if !tc.thisnode {
				assert.Greater(t, onNode1, 0)
				return
			}
			require.NotEmpty(t, pfns)
			assert.Zero(t, onNode1, "every page came from node 0")
			assert.Greater(t, allocstalls(m), uint64(0), "node 0 was reclaimed")
			assert.Greater(t, m.Event(COMPACTSTALL), uint64(0), "node 0 was compacted")
			assert.Equal(t, free1, z1.Stat[NR_FREE_PAGES], "node 1 lent nothing")
			assert.Zero(t, z1.NumaEvents[NUMA_MISS]+z1.NumaEvents[NUMA_HIT])
			for _, w := range traceFields(m, "mm_vmscan_wakeup_kswapd") {
				assert.True(t, strings.HasPrefix(w, "nid=0 "), w)
			}
			for _, b := range traceFields(m, "mm_compaction_begin") {
				assert.True(t, strings.HasPrefix(b, fmt.Sprintf("zone_start=%#x ", m.Nodes[0].Zones[ZONE_NORMAL].StartPFN)), b)
			}
			assert.False(t, m.Nodes[1].KswapdRunning())
		})
	}
}

// sparseAnonLayout leaves 88 free pages per block (in odd holes, too few
// for an unmovable request to claim the block) and fills the rest with
// anon; there is no swap, so nothing is reclaimable.
func sparseAnonLayout(block, off int) role {
	if off%2 == 1 && off < 2*88 {
		return roleFree
	}
	return roleAnon
}

func TestDefragModeFlagsGiveUpAndPromotion(t *testing.T) {
	t.Run("defrag_mode sets ALLOC_NOFRAGMENT on the fast and the slow path", func(t *testing.T) {
		m := newQuietMachine(t, 8192, 2, 2)
		z := m.Nodes[0].Zones[ZONE_NORMAL]
		for _, gfp := range []GFP{GFP_KERNEL, GFP_HIGHUSER_MOVABLE, GFP_NOWAIT} {
			assert.Zero(t, m.allocFlagsNofragment(z, gfp)&ALLOC_NOFRAGMENT, "%s, defrag_mode=0, two nodes without ZONE_DMA32", gfp)
			assert.Zero(t, m.gfpToAllocFlags(gfp, 0)&ALLOC_NOFRAGMENT, "%s, defrag_mode=0", gfp)
		}
		// One node: alloc_flags_nofragment "assume[s] on UMA that if
		// Normal is populated then so is DMA32" and sets the flag for
		// the fast path; the slow path's flags do not have it.
		uma := newQuietMachine(t, 8192, 1, 2)
		for _, gfp := range []GFP{GFP_KERNEL, GFP_HIGHUSER_MOVABLE, GFP_NOWAIT} {
			assert.NotZero(t, uma.allocFlagsNofragment(uma.Nodes[0].Zones[ZONE_NORMAL], gfp)&ALLOC_NOFRAGMENT, "%s, defrag_mode=0, one node", gfp)
			assert.Zero(t, uma.gfpToAllocFlags(gfp, 0)&ALLOC_NOFRAGMENT, "%s, defrag_mode=0, one node", gfp)
		}
		// A kernel before v5.0 (6bb154504f8b) has no such rule: the
		// 2018 base keeps ALLOC_KSWAPD and nothing else.
		uma.Kernel.NoAllocNofragment = true
		for _, gfp := range []GFP{GFP_KERNEL, GFP_HIGHUSER_MOVABLE, GFP_NOWAIT} {
			assert.Equal(t, ALLOC_KSWAPD, uma.allocFlagsNofragment(uma.Nodes[0].Zones[ZONE_NORMAL], gfp), "%s, before v5.0, one node", gfp)
		}
		require.NoError(t, m.SetSysctl("vm.defrag_mode", "1"))
		for _, gfp := range []GFP{GFP_KERNEL, GFP_HIGHUSER_MOVABLE, GFP_NOWAIT} {
			assert.NotZero(t, m.allocFlagsNofragment(z, gfp)&ALLOC_NOFRAGMENT, "%s, defrag_mode=1", gfp)
			assert.NotZero(t, m.gfpToAllocFlags(gfp, 0)&ALLOC_NOFRAGMENT, "%s, defrag_mode=1", gfp)
		}
	})

	tests := []struct {
		name    string
		defrag  bool
		layout  func(block, off int) role
		gfp     GFP
		giveUps uint64
		// reclaimOrder is the order every try_to_free_pages ran at
		// (-1: none ran); runs their exact number (0: any).
		reclaimOrder int
		runs         uint64
		steps        string // "" to skip (the trace keeps 64 steps)
		slow         bool
		wake         string // every mm_vmscan_wakeup_kswapd line
	}{
		{"an unmovable order-0 request reclaims at pageblock order until should_reclaim_retry gives up, then falls back",
			true, sparseAnonLayout, GFP_KERNEL, 1, 9, maxReclaimRetries + 1, "", true, "nid=0 order=9 gfp_flags=GFP_KERNEL"},
		{"a request that cannot reclaim drops ALLOC_NOFRAGMENT at once and falls back",
			true, sparseAnonLayout, GFP_NOWAIT, 1, -1, 0, "wake(0) min nofrag-giveup wake(0) min=page", true, "nid=0 order=9 gfp_flags=GFP_NOWAIT"},
		{"a movable order-0 request reclaims at order 0, though kswapd is woken at pageblock order",
			true, lowFreeFileLayout, GFP_HIGHUSER_MOVABLE, 0, 0, 0, "", true, "nid=0 order=9 gfp_flags=GFP_HIGHUSER_MOVABLE"},
		{"control: without defrag_mode the unmovable request steals on the fast path (and the claim attempt's boost wakes kswapd)",
			false, sparseAnonLayout, GFP_KERNEL, 0, -1, 0, "", false, "nid=0 order=0 gfp_flags=none"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := newQuietMachine(t, 8192, 1, 2)
			carveZone(t, m, nil, tc.layout)
			if tc.defrag {
				require.NoError(t, m.SetSysctl("vm.defrag_mode", "1"))
			}
			var got PFN
			tk := inWorld(t, m, 1, func(t *sim.Task) { got = m.allocSync(t, tc.gfp, 0, 0, 0) })
			runWorld(t, m, tk.Now) // the wakeups are decided at their times
			require.NotEqual(t, NilPFN, got, "the request is served in the end")
			assert.Equal(t, tc.slow, m.Slow.Entered > 0, "slow path entered")
			assert.Equal(t, tc.giveUps, m.Slow.NofragGiveUps, "defrag_mode give-ups")
			var runs uint64
			for o, n := range m.Reclaim.DirectRuns {
				runs += n
				if o != tc.reclaimOrder {
					assert.Zero(t, n, "try_to_free_pages at order %d", o)
				}
			}
			if tc.reclaimOrder < 0 {
				assert.Zero(t, runs)
				assert.Zero(t, allocstalls(m))
			} else {
				assert.Greater(t, runs, uint64(0))
				assert.GreaterOrEqual(t, allocstalls(m), runs, "allocstall_* counts each try_to_free_pages (and its retries)")
				if tc.runs > 0 {
					assert.Equal(t, tc.runs, runs, "try_to_free_pages calls")
					// Too long for the decision trace: it keeps the
					// first steps and says how many more there were.
					trace, ok := m.LastStall()
					require.True(t, ok)
					assert.Regexp(t, `-> \.\.\. \(\d+ more steps\) -> got page pfn=0x[0-9a-f]+$`, trace)
				}
			}
			if tc.steps != "" {
				assert.Equal(t, tc.steps, m.stepsString())
			}
			// Every retry's wakeup finding kswapd back in its nap (or
			// asleep) wakes it again: one wake per traced wakeup.
			wake := traceFields(m, "mm_vmscan_wakeup_kswapd")
			require.NotEmpty(t, wake)
			for _, w := range wake {
				assert.Equal(t, tc.wake, w)
			}
			assert.Equal(t, uint64(len(wake)), m.Nodes[0].kswapd.Wakeups)
			if tc.giveUps > 0 {
				assert.NotEqual(t, m.PageblockMigratetype(got), gfpMigratetype(tc.gfp),
					"after the give-up the page comes from another type's block")
			}
		})
	}
}

// pinnedGroupsFileLayout pins the first page of every 8-page group, frees
// the odd pages and fills the rest with clean page cache: reclaim makes
// progress, but no order-3 chunk can ever be freed or compacted.
func pinnedGroupsFileLayout(block, off int) role {
	switch {
	case off%8 == 0:
		return roleAnonPinned
	case off%2 == 1:
		return roleFree
	}
	return roleFile
}

func TestShouldCompactRetryEscalatesPriorityLikeTheKernel(t *testing.T) {
	tests := []struct {
		name  string
		gfp   GFP
		order Order
		steps string
	}{
		{"a non-costly request escalates from SYNC_LIGHT to SYNC_FULL, then gives up",
			GFP_KERNEL | __GFP_COMP, 3,
			"wake(3) min compact(ASYNC) wake(3) min reclaim(3) drain compact(SYNC_LIGHT) reclaim-retry=false compact-retry=true " +
				"wake(3) min reclaim(3) drain compact(SYNC_FULL) reclaim-retry=false compact-retry=false oom nopage(reclaim and compaction cannot help (would OOM))"},
		{"a costly __GFP_RETRY_MAYFAIL request stops at its SYNC_LIGHT floor",
			GFP_TRANSHUGE | __GFP_RETRY_MAYFAIL, 9,
			"min compact(ASYNC) min reclaim(9) drain compact(SYNC_LIGHT) reclaim-retry=false compact-retry=false nopage(reclaim and compaction cannot help (would OOM))"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := newQuietMachine(t, 8192, 1, 2)
			carveZone(t, m, nil, pinnedGroupsFileLayout)
			var got PFN
			inWorld(t, m, 1, func(t *sim.Task) { got = m.allocSync(t, tc.gfp, tc.order, 0, 0) })
			assert.Equal(t, NilPFN, got)
			assert.Equal(t, tc.steps, m.stepsString())
		})
	}
}

func TestTheFreelistScanSkipsANodeWhoseKswapdIsAwake(t *testing.T) {
	tests := []struct {
		name     string
		awake    bool
		thisnode bool
		wantNode int
	}{
		{"with node 0's kswapd asleep a node-0 request gets node 0's page", false, false, 0},
		{"with node 0's kswapd awake a node-0 request takes node 1's page first", true, false, 1},
		{"with node 0's kswapd awake a __GFP_THISNODE request still gets node 0's page", true, true, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := newQuietMachine(t, 8192, 2, 1)
			tk := m.testTask(0)
			if tc.awake {
				n := m.Nodes[0]
				n.kswapd.waitActive = false
				m.World.Wake(n.kswapd.task, 0)
			}
			gfp := GFP_KERNEL
			if tc.thisnode {
				gfp |= __GFP_THISNODE
			}
			pfn := m.allocSync(tk, gfp, 0, 0, 0)
			require.NotEqual(t, NilPFN, pfn)
			mustCheck(t, m, "allocation")
			assert.Equal(t, tc.wantNode, m.ZoneOf(pfn).Node.ID)
		})
	}
}

func TestHighOrderAtomicRequestsReserveAHighatomicBlock(t *testing.T) {
	tests := []struct {
		name    string
		gfp     GFP
		order   Order
		reserve bool
	}{
		{"a GFP_ATOMIC order-2 request served on the fast path reserves its pageblock", GFP_ATOMIC | __GFP_COMP, 2, true},
		{"a GFP_ATOMIC order-0 request reserves nothing", GFP_ATOMIC, 0, false},
		{"a GFP_KERNEL order-2 request reserves nothing", GFP_KERNEL | __GFP_COMP, 2, false},
		{"a __GFP_NOMEMALLOC atomic request reserves nothing", GFP_ATOMIC | __GFP_NOMEMALLOC | __GFP_COMP, 2, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// reserve_highatomic_pageblock wants 1% of the zone to be
			// at least a pageblock: 256 MiB.
			m := newQuietMachine(t, 65536, 1, 1)
			z := m.Nodes[0].Zones[ZONE_NORMAL]
			pfn := m.allocSync(m.testTask(0), tc.gfp, tc.order, 0, 0)
			require.NotEqual(t, NilPFN, pfn)
			mustCheck(t, m, "allocation")
			assert.Zero(t, m.Slow.Entered, "served on the fast path")
			if !tc.reserve {
				assert.Zero(t, z.NrReservedHighatomic)
				return
			}
			// alloc_flags_nonblocking() & ALLOC_HIGHATOMIC is part of
			// the fast path's flags (__alloc_frozen_pages_noprof).
			assert.Equal(t, uint64(PageblockNrPages), z.NrReservedHighatomic, "nr_reserved_highatomic")
			assert.Equal(t, MIGRATE_HIGHATOMIC, m.PageblockMigratetype(pfn))
		})
	}
}

// The costly __GFP_NORETRY check after the first compaction, by kernel:
// 2018 (seed 003's base) gives up only after COMPACT_DEFERRED, so a THP
// fault with __GFP_THISNODE whose compaction was skipped reclaims the
// local node once; today __GFP_THISNODE gives up there. Fix 1's
// __GFP_ONLY_COMPACT stops the 2018 path right after the deferral check.
func TestCostlyNoretryThisnodeByKernel(t *testing.T) {
	thp := GFP_TRANSHUGE | __GFP_THISNODE | __GFP_NORETRY
	tests := []struct {
		name     string
		legacy   bool
		gfp      GFP
		steps    string
		reclaims uint64
	}{
		{"today: __GFP_THISNODE|__GFP_NORETRY gives up after compaction", false, thp,
			"min compact(ASYNC) nopage(__GFP_NORETRY|__GFP_THISNODE after compaction)", 0},
		{"2018: a compaction that was not deferred is no reason to give up; one round of reclaim and async compaction", true, thp,
			"min compact(ASYNC) min reclaim(9) drain compact(ASYNC) nopage(__GFP_NORETRY)", 1},
		{"2018 with fix 1: __GFP_ONLY_COMPACT never reclaims", true, thp | ___GFP_ONLY_COMPACT,
			"min compact(ASYNC) nopage(__GFP_ONLY_COMPACT after one compaction)", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := newQuietMachine(t, 8192, 1, 2)
			m.Kernel.LegacyCostlyNoretry = tc.legacy
			carveZone(t, m, nil, pinnedHolesFileLayout)
			var got PFN
			inWorld(t, m, 1, func(t *sim.Task) { got = m.allocSync(t, tc.gfp, 9, 0, 0) })
			assert.Equal(t, NilPFN, got)
			assert.Equal(t, tc.steps, m.stepsString())
			assert.Equal(t, tc.reclaims, m.Reclaim.DirectRuns[9], "try_to_free_pages(order 9)")
		})
	}
	t.Run("2018: after COMPACT_DEFERRED a __GFP_NORETRY request gives up without reclaim", func(t *testing.T) {
		m := newQuietMachine(t, 8192, 1, 2)
		m.Kernel.LegacyCostlyNoretry = true
		carveZone(t, m, nil, pinnedHolesFileLayout)
		z := m.Nodes[0].Zones[ZONE_NORMAL]
		// defer_compaction() at order 9: the next attempts are deferred.
		z.compact.considered, z.compact.deferShift, z.compact.orderFailed = 0, compactMaxDeferShift, 9
		var got PFN
		inWorld(t, m, 1, func(t *sim.Task) { got = m.allocSync(t, thp, 9, 0, 0) })
		assert.Equal(t, NilPFN, got)
		assert.Equal(t, "min compact(ASYNC) nopage(__GFP_NORETRY after COMPACT_DEFERRED)", m.stepsString())
		assert.Zero(t, m.Reclaim.DirectRuns[9])
	})
}

// __GFP_NOFAIL does not fail: with nothing to reclaim it loops in the slow
// path (__alloc_pages_cpuset_fallback, cond_resched, retry), ending its
// step at each cond_resched(), so the clock moves on every step and other
// tasks run; once one of them frees memory the allocation succeeds.
func TestANofailAllocationLoopsWithTheClockMovingUntilMemoryIsFreed(t *testing.T) {
	m := newQuietMachine(t, 8192, 1, 2)
	setup := m.testTask(0)
	// Every free page, the reserves too: __alloc_pages_may_oom would
	// otherwise hand the request a page below the min watermark.
	held := takeEveryFreePage(m, setup)
	require.NotEmpty(t, held)
	got, steps := NilPFN, 0
	failed := false
	spawn(m, "nofail", 1, setup.Now, func(tk *sim.Task) sim.Time {
		steps++
		start := tk.Now
		pfn := m.AllocPages(tk, GFP_KERNEL|__GFP_NOFAIL, 0, 0, 0)
		require.Greater(t, tk.Now, start, "a step of the loop moves the task's clock")
		if m.AllocPending(tk) {
			return sim.Resched
		}
		if pfn == NilPFN {
			failed = true
		}
		got = pfn
		return sim.Exit
	})
	freeAt := setup.Now + 5*sim.Millisecond
	spawn(m, "freer", 0, freeAt, func(tk *sim.Task) sim.Time {
		for _, pfn := range held[:len(held)/4] {
			m.FreePages(tk, pfn, 0)
		}
		return sim.Exit
	})
	for target := setup.Now + sim.Millisecond; target < freeAt; target += sim.Millisecond {
		m.World.RunUntil(target, nil)
		require.Equal(t, target, m.World.Now(), "RunUntil returns at its target while the task loops")
		require.Equal(t, NilPFN, got)
		require.True(t, m.AllocPending(m.World.Tasks[len(m.World.Tasks)-2]), "still in the slow path")
	}
	runWorld(t, m, freeAt+sim.Millisecond)
	assert.False(t, failed, "__GFP_NOFAIL never returns NULL")
	assert.NotEqual(t, NilPFN, got, "the allocation succeeded after the free")
	assert.Greater(t, m.Slow.NofailRetries, uint64(10), "it looped")
	assert.Greater(t, steps, 10, "one step per cond_resched")
	assert.Zero(t, m.Slow.Abandoned)
}

// takeEveryFreePage allocates order-0 pages without watermarks
// (ALLOC_NO_WATERMARKS) until the machine has none left, and returns them.
func takeEveryFreePage(m *Machine, t *sim.Task) []PFN {
	ac, _ := m.acFor(GFP_KERNEL, 0, 0)
	var held []PFN
	for {
		pfn := m.getPageFromFreelist(t, GFP_KERNEL, 0, ALLOC_NO_WATERMARKS, &ac)
		if pfn == NilPFN {
			m.drainAllPages(t, nil)
			if pfn = m.getPageFromFreelist(t, GFP_KERNEL, 0, ALLOC_NO_WATERMARKS, &ac); pfn == NilPFN {
				return held
			}
		}
		held = append(held, pfn)
	}
}

// A __GFP_NOFAIL request that reaches __alloc_pages_may_oom with nothing
// to reclaim gets the reserves below the min watermark: with or without an
// OOM victim, the kernel's WARN_ON_ONCE_GFP(__GFP_NOFAIL) path calls
// __alloc_pages_cpuset_fallback() with ALLOC_NO_WATERMARKS (linux-mm
// mm/page_alloc.c @00cb34b0). Other requests, a costly order, and
// __GFP_RETRY_MAYFAIL or __GFP_THISNODE ones skip that block and loop at
// ALLOC_MIN_RESERVE.
func TestANofailAllocationThatWouldOOMTakesTheReserves(t *testing.T) {
	tests := []struct {
		name    string
		gfp     GFP
		order   Order
		reserve bool
	}{
		{"an order-0 GFP_KERNEL|__GFP_NOFAIL request gets a page below the min watermark", GFP_KERNEL | __GFP_NOFAIL, 0, true},
		{"so does an order-3 one (not costly)", GFP_KERNEL | __GFP_NOFAIL, 3, true},
		{"__GFP_RETRY_MAYFAIL keeps it out of the OOM path", GFP_KERNEL | __GFP_NOFAIL | __GFP_RETRY_MAYFAIL, 0, false},
		{"a costly order never reaches the OOM killer's reserves", GFP_KERNEL | __GFP_NOFAIL, 4, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := newQuietMachine(t, 8192, 1, 2)
			setup := m.testTask(0)
			// Down to where GFP_ATOMIC fails: below the min watermark,
			// nothing to reclaim, the rest of the reserves left.
			for m.AllocPages(setup, GFP_ATOMIC, 0, 0, 0) != NilPFN {
			}
			m.drainAllPages(setup, nil)
			z := m.Nodes[0].Zones[ZONE_NORMAL]
			require.Less(t, z.Stat[NR_FREE_PAGES], int64(z.WmarkPages(WMARK_MIN)))
			require.Greater(t, z.Stat[NR_FREE_PAGES], int64(tc.order.Pages()), "reserves left")
			resetCounters(m)
			got, steps := NilPFN, 0
			tk := spawn(m, "nofail", 1, setup.Now, func(tk *sim.Task) sim.Time {
				steps++
				got = m.AllocPages(tk, tc.gfp, tc.order, 0, 0)
				if m.AllocPending(tk) && steps < 200 {
					return sim.Resched
				}
				return sim.Exit
			})
			runWorld(t, m, setup.Now+10*sim.Millisecond)
			if !tc.reserve {
				assert.Equal(t, NilPFN, got, "still looping")
				assert.True(t, m.AllocPending(tk))
				assert.Greater(t, m.Slow.NofailRetries, uint64(10))
				m.abandonAlloc(tk, m.current(tk))
				return
			}
			require.NotEqual(t, NilPFN, got, "the reserves serve it")
			assert.Equal(t, uint64(1), m.Slow.WouldOOM, "on its first pass through __alloc_pages_may_oom")
			assert.Zero(t, m.Slow.NofailRetries, "without looping")
			assert.False(t, m.AllocPending(tk))
			mustCheck(t, m, "the reserves")
		})
	}
}

// out_of_memory() selects a victim only for a request with __GFP_FS: for
// a GFP_NOFS one it returns true at once, "The OOM killer does not
// compensate for IO-less reclaim" (mm/oom_kill.c), and
// __alloc_pages_may_oom sets did_some_progress, so the slow path retries
// with no_progress_loops reset (linux-mm mm/page_alloc.c @00cb34b0,
// "Retry as long as the OOM killer is making progress"). Both reach
// out_of_memory() (WouldOOM); only the first would kill (WouldOOMKill,
// what ends promoted-order's phase) and fails in pagesim, which has no
// OOM killer; the GFP_NOFS one loops, the clock moving, until a task frees
// memory, and then gets its page (review finding F48).
func TestOnlyARequestWithGFPFSWouldMakeTheOOMKillerKillAndANOFSOneRetries(t *testing.T) {
	tests := []struct {
		name  string
		gfp   GFP
		kill  bool
		loops bool
	}{
		{"GFP_KERNEL reaches out_of_memory() with a victim to select, and fails where the kill would be", GFP_KERNEL, true, false},
		{"GFP_NOFS reaches it, kills nothing and retries until memory is freed", GFP_NOFS, false, true},
		{"GFP_NOIO too", GFP_NOIO, false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := newQuietMachine(t, 8192, 1, 2)
			setup := m.testTask(0)
			held := takeEveryFreePage(m, setup)
			require.NotEmpty(t, held)
			resetCounters(m)
			got, done, steps := NilPFN, false, 0
			tk := spawn(m, "oom", 1, setup.Now, func(tk *sim.Task) sim.Time {
				steps++
				start := tk.Now
				got = m.AllocPages(tk, tc.gfp, 0, 0, 0)
				require.Greater(t, tk.Now, start, "a step of the loop moves the task's clock")
				if m.AllocPending(tk) {
					return sim.Resched
				}
				done = true
				return sim.Exit
			})
			freeAt := setup.Now + 5*sim.Millisecond
			spawn(m, "freer", 0, freeAt, func(tk *sim.Task) sim.Time {
				for _, pfn := range held[:len(held)/4] {
					m.FreePages(tk, pfn, 0)
				}
				return sim.Exit
			})
			m.World.RunUntil(freeAt-sim.Microsecond, nil)
			require.NotZero(t, m.Slow.WouldOOM, "the request reached out_of_memory()")
			if tc.kill {
				assert.True(t, done, "pagesim fails it where the kernel would kill")
				assert.Equal(t, NilPFN, got)
				assert.Equal(t, uint64(1), m.Slow.WouldOOM)
				assert.Equal(t, uint64(1), m.Slow.WouldOOMKill)
				assert.Equal(t, uint64(1), m.Slow.Failed)
				assert.Zero(t, m.Slow.OOMRetries)
			} else {
				assert.False(t, done, "still in the slow path before the free")
				assert.True(t, m.AllocPending(tk))
				assert.Greater(t, m.Slow.WouldOOM, uint64(1), "out_of_memory() again after each retry's no_progress_loops")
				assert.Equal(t, m.Slow.WouldOOM, m.Slow.OOMRetries, "each retried")
				assert.Zero(t, m.Slow.WouldOOMKill, "no victim for a request without __GFP_FS")
				assert.Zero(t, m.Slow.Failed)
			}
			runWorld(t, m, freeAt+sim.Millisecond)
			if tc.loops {
				assert.True(t, done)
				assert.NotEqual(t, NilPFN, got, "the allocation succeeded after the free")
				assert.Zero(t, m.Slow.Failed)
				assert.Greater(t, steps, 10, "one step per cond_resched")
			}
			assert.Zero(t, m.Slow.Abandoned)
			mustCheck(t, m, "after the OOM path")
		})
	}
}

// A caller that makes another request instead of repeating a pending one
// abandons the suspended allocation; the invariant check says so.
func TestAnAbandonedAllocationIsReported(t *testing.T) {
	m := newQuietMachine(t, 8192, 1, 2)
	setup := m.testTask(0)
	for m.AllocPages(setup, GFP_ATOMIC, 0, 0, 0) != NilPFN {
	}
	n := 0
	spawn(m, "careless", 1, setup.Now, func(tk *sim.Task) sim.Time {
		n++
		gfp := GFP_KERNEL | __GFP_NOFAIL
		if n == 2 {
			gfp = GFP_NOWAIT // not the call that is pending
		}
		m.AllocPages(tk, gfp, 0, 0, 0)
		if n < 2 {
			return sim.Resched
		}
		return sim.Exit
	})
	m.World.RunUntil(setup.Now+sim.Millisecond, nil)
	assert.Equal(t, uint64(1), m.Slow.Abandoned)
	assert.ErrorContains(t, m.CheckInvariants(), "abandoned")
}

// Seed 002: which order each retry helper judges in the three kernels of
// the seed's table, for an order-0 unmovable request under defrag_mode
// whose reclaim and compaction work at pageblock order (reclaim_order =
// compact_order = 9) in a zone where reclaim frees page cache but no
// pageblock can ever be made whole.
func TestTheRetryHelpersJudgeTheOrderEachSeed002KernelGivesThem(t *testing.T) {
	type kernel struct{ retries, requestedFloor bool }
	rc5, posted, requested := kernel{}, kernel{true, false}, kernel{true, true}
	compact := []struct {
		name        string
		k           kernel
		result      CompactResult
		prio        CompactPriority
		retries     int
		ret         bool
		prioAfter   CompactPriority
		retriesLeft int
	}{
		{"rc5: an order-0 request never retries compaction, whatever it did at order 9", rc5, COMPACT_COMPLETE, COMPACT_PRIO_SYNC_LIGHT, 0, false, COMPACT_PRIO_SYNC_LIGHT, 0},
		{"rc5: not even after a COMPACT_SUCCESS", rc5, COMPACT_SUCCESS, COMPACT_PRIO_SYNC_LIGHT, 0, false, COMPACT_PRIO_SYNC_LIGHT, 0},
		{"posted: a failed order-9 compaction at SYNC_LIGHT is at its costly floor", posted, COMPACT_COMPLETE, COMPACT_PRIO_SYNC_LIGHT, 0, false, COMPACT_PRIO_SYNC_LIGHT, 0},
		{"posted: from ASYNC it escalates once to SYNC_LIGHT", posted, COMPACT_DEFERRED, COMPACT_PRIO_ASYNC, 3, true, COMPACT_PRIO_SYNC_LIGHT, 0},
		{"posted: COMPACT_SUCCESS retries at most MAX_COMPACT_RETRIES/4 times at order 9", posted, COMPACT_SUCCESS, COMPACT_PRIO_SYNC_LIGHT, 4, false, COMPACT_PRIO_SYNC_LIGHT, 5},
		{"posted: COMPACT_SKIPPED retries when reclaim could make room for order-9 compaction", posted, COMPACT_SKIPPED, COMPACT_PRIO_SYNC_LIGHT, 0, true, COMPACT_PRIO_SYNC_LIGHT, 0},
		{"requested: the floor of order 0 lets SYNC_LIGHT escalate to SYNC_FULL", requested, COMPACT_COMPLETE, COMPACT_PRIO_SYNC_LIGHT, 2, true, COMPACT_PRIO_SYNC_FULL, 0},
		{"requested: at SYNC_FULL it gives up", requested, COMPACT_COMPLETE, COMPACT_PRIO_SYNC_FULL, 0, false, COMPACT_PRIO_SYNC_FULL, 0},
		{"requested: COMPACT_SUCCESS retries up to MAX_COMPACT_RETRIES", requested, COMPACT_SUCCESS, COMPACT_PRIO_SYNC_LIGHT, 4, true, COMPACT_PRIO_SYNC_LIGHT, 5},
	}
	setup := func(t *testing.T, k kernel) (*Machine, *sim.Task, allocContext, AllocFlags, *allocFrame) {
		m := newQuietMachine(t, 8192, 1, 2)
		carveZone(t, m, nil, pinnedHolesFileLayout)
		require.NoError(t, m.SetSysctl("vm.defrag_mode", "1"))
		m.Patches.PromotedOrderRetries, m.Patches.PromotedOrderRequestedFloor = k.retries, k.requestedFloor
		ac, flags := m.acFor(GFP_KERNEL, 0, 0)
		require.NotZero(t, flags&ALLOC_NOFRAGMENT)
		f := &allocFrame{order: 0, allocFlags: flags}
		f.reclaimOrder = nofragPromoteOrder(0, flags, ac.migratetype)
		f.compactOrder = f.reclaimOrder
		require.Equal(t, Order(PageblockOrder), f.compactOrder, "the request reclaims and compacts at pageblock order")
		require.Zero(t, freeHighOrder(m.Nodes[0].Zones[ZONE_NORMAL]), "no whole block is free")
		return m, m.testTask(0), ac, flags, f
	}
	for _, tc := range compact {
		t.Run(tc.name, func(t *testing.T) {
			m, tk, ac, flags, f := setup(t, tc.k)
			prio, retries := tc.prio, tc.retries
			var st slowTrace
			got := m.shouldCompactRetry(tk, GFP_KERNEL, &ac, m.retryOrders(f), flags, tc.result, &prio, &retries, &st)
			assert.Equal(t, tc.ret, got, "should_compact_retry")
			assert.Equal(t, tc.prioAfter, prio, "compact_priority after")
			assert.Equal(t, tc.retriesLeft, retries, "compaction_retries after")
		})
	}
	reclaim := []struct {
		name       string
		k          kernel
		progress   bool
		loops      int
		ret        bool
		loopsAfter int
	}{
		{"rc5: progress at order 9 resets no_progress_loops for an order-0 request, and its order-0 watermark holds", rc5, true, 7, true, 0},
		{"rc5: without progress it counts up to MAX_RECLAIM_RETRIES", rc5, false, maxReclaimRetries, false, maxReclaimRetries + 1},
		{"posted: order-9 progress never resets the count (costly), and no order-9 page is in sight", posted, true, 0, false, 1},
		{"requested: the same as posted (the floor is should_compact_retry's)", requested, true, 0, false, 1},
	}
	for _, tc := range reclaim {
		t.Run(tc.name, func(t *testing.T) {
			m, tk, ac, flags, f := setup(t, tc.k)
			loops := tc.loops
			var st slowTrace
			got := m.shouldReclaimRetry(tk, GFP_KERNEL, m.retryOrders(f), &ac, flags, tc.progress, &loops, &st)
			assert.Equal(t, tc.ret, got, "should_reclaim_retry")
			assert.Equal(t, tc.loopsAfter, loops, "no_progress_loops after")
		})
	}
}

// fillToLow fills node 0's Normal zone with unmovable pages down to just
// above its low watermark, so compaction_suitable finds too few free pages
// for an order-9 block and reclaim finds nothing on the LRUs.
func fillToLow(t *testing.T, m *Machine) {
	t.Helper()
	z := m.Nodes[0].Zones[ZONE_NORMAL]
	inWorld(t, m, 0, func(tk *sim.Task) {
		for z.Stat[NR_FREE_PAGES] > int64(z.WmarkPages(WMARK_LOW))+64 {
			require.NotEqual(t, NilPFN, m.allocSync(tk, GFP_KERNEL|__GFP_NOWARN, 0, 0, 0))
		}
	})
	resetCounters(m)
}

// The kernel counts no compact_stall for COMPACT_SKIPPED (the attempt
// returns before it, and before any work): an allocation whose only slow
// work was a skipped compaction is not the latest stalled allocation.
func TestASkippedCompactionIsNotAStall(t *testing.T) {
	m := newQuietMachine(t, 8192, 1, 1)
	fillToLow(t, m)
	inWorld(t, m, 0, func(tk *sim.Task) {
		assert.Equal(t, NilPFN, m.allocSync(tk, GFP_TRANSHUGE|__GFP_NORETRY|__GFP_THISNODE|__GFP_NOWARN, 9, 0, 0))
	})
	require.Equal(t, "min compact(ASYNC) nopage(__GFP_NORETRY|__GFP_THISNODE after compaction)", m.stepsString())
	assert.Zero(t, m.Event(COMPACTSTALL))
	st, stalled := m.LastStall()
	assert.False(t, stalled, "a skipped compaction is not a stall: %s", st)
}

// The page once showed "stalled 0.000000 s" for a direct reclaim that found
// nothing on the LRUs and took 570 ns: a stall (allocstall counts it) too
// short for microseconds, which the trace now prints in the unit it needs.
func TestAStallShorterThanAMicrosecondSaysHowLong(t *testing.T) {
	m := newQuietMachine(t, 8192, 1, 1)
	fillToLow(t, m)
	inWorld(t, m, 0, func(tk *sim.Task) {
		assert.Equal(t, NilPFN, m.allocSync(tk, GFP_TRANSHUGE|__GFP_NORETRY|__GFP_NOWARN, 9, 0, 0))
	})
	require.Contains(t, m.stepsString(), "reclaim(9)")
	st, stalled := m.LastStall()
	require.True(t, stalled)
	assert.Regexp(t, `^\[0\.\d{6}\] worker \(stalled \d{1,3} ns\): `, st)
	assert.NotContains(t, st, "0.000000 s")
	for _, c := range []struct {
		d    sim.Time
		want string
	}{{570, "570 ns"}, {12345, "12.3 us"}, {4567890, "4.567 ms"}, {12274777000, "12.274777 s"}} {
		assert.Equal(t, c.want, stallDuration(c.d))
	}
}
