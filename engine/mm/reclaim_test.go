package mm

// Behaviour tests for direct reclaim: who may enter it, what it may take
// (pinned pages, anon without swap, memory.low), and what it counts.

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/pagesim/pagesim/engine/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lowFreeFileLayout leaves four free pages per pageblock (far below the
// min watermark) and fills the rest with clean page cache, so an order-0
// request misses the freelists and reclaim has plenty to take.
func lowFreeFileLayout(block, off int) role {
	if off < 4 {
		return roleFree
	}
	return roleFile
}

// holesFileLayout frees every odd page and fills every even page with
// clean page cache: half of memory is free, all of it in order-0 holes, so
// every high-order request misses and compaction has work to do.
func holesFileLayout(block, off int) role {
	if off%2 == 1 {
		return roleFree
	}
	return roleFile
}

func TestMasksWithoutDirectReclaimNeverStall(t *testing.T) {
	tests := []struct {
		name   string
		layout func(block, off int) role
		gfp    GFP
		order  Order
		// stall is true for the control rows: the same request with
		// __GFP_DIRECT_RECLAIM does stall, so the setup can.
		stall bool
	}{
		{"GFP_NOWAIT order-0 requests below the min watermark fail without reclaiming", lowFreeFileLayout, GFP_NOWAIT, 0, false},
		{"GFP_ATOMIC order-0 requests below the min watermark fail without reclaiming", lowFreeFileLayout, GFP_ATOMIC, 0, false},
		{"GFP_KERNEL without __GFP_DIRECT_RECLAIM fails without reclaiming", lowFreeFileLayout, GFP_KERNEL &^ __GFP_DIRECT_RECLAIM, 0, false},
		{"GFP_TRANSHUGE_LIGHT order-9 requests on fragmented memory never compact", holesFileLayout, GFP_TRANSHUGE_LIGHT, 9, false},
		{"GFP_NOWAIT order-3 requests on fragmented memory never compact", holesFileLayout, GFP_NOWAIT, 3, false},
		{"control: GFP_KERNEL order-0 requests below the min watermark reclaim", lowFreeFileLayout, GFP_KERNEL, 0, true},
		{"control: GFP_TRANSHUGE order-9 requests on fragmented memory compact", holesFileLayout, GFP_TRANSHUGE, 9, true},
		{"control: GFP_KERNEL order-3 requests on fragmented memory compact", holesFileLayout, GFP_KERNEL, 3, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := newQuietMachine(t, 8192, 1, 2)
			carveZone(t, m, nil, tc.layout)
			tk := m.testTask(0)
			gfp := tc.gfp
			if tc.order > 0 {
				gfp |= __GFP_COMP
			}
			failed := 0
			for i := 0; i < 300 && failed == 0; i++ {
				if m.allocSync(tk, gfp, tc.order, 0, 0) == NilPFN {
					failed++
				}
				mustCheck(t, m, "allocation %d", i)
				if tc.stall && (allocstalls(m) > 0 || m.Event(COMPACTSTALL) > 0) {
					break
				}
			}
			require.Greater(t, m.Slow.Entered, uint64(0), "the requests reached the slow path")
			// kswapd is woken exactly by the masks with __GFP_KSWAPD_RECLAIM
			// (each wakeup decided at its time: run the world there).
			runWorld(t, m, tk.Now)
			wakeups := traceFields(m, "mm_vmscan_wakeup_kswapd")
			if gfp&__GFP_KSWAPD_RECLAIM != 0 {
				assert.NotEmpty(t, wakeups, "__GFP_KSWAPD_RECLAIM wakes kswapd")
			} else {
				assert.Empty(t, wakeups, "no __GFP_KSWAPD_RECLAIM, no kswapd")
				assert.False(t, m.Nodes[0].KswapdRunning())
			}
			var runs uint64
			for _, n := range m.Reclaim.DirectRuns {
				runs += n
			}
			stalls := allocstalls(m) + m.Event(COMPACTSTALL) + m.Event(COMPACTFAIL) + m.Event(COMPACTSUCCESS) +
				m.Event(PGSCAN_DIRECT) + m.Event(PGSTEAL_DIRECT) + runs
			if tc.stall {
				assert.Greater(t, stalls, uint64(0), "the control request stalls")
				return
			}
			assert.Equal(t, 1, failed, "a request failed: the slow path ran to nopage")
			assert.Zero(t, allocstalls(m), "allocstall_*")
			assert.Zero(t, m.Event(COMPACTSTALL), "compact_stall")
			assert.Zero(t, m.Event(COMPACTFAIL)+m.Event(COMPACTSUCCESS), "compact_fail + compact_success")
			assert.Zero(t, m.Event(PGSCAN_DIRECT)+m.Event(PGSTEAL_DIRECT), "pgscan_direct + pgsteal_direct")
			assert.Zero(t, runs, "try_to_free_pages calls")
			assert.Empty(t, traceFields(m, "mm_vmscan_direct_reclaim_begin"))
			assert.Empty(t, traceFields(m, "mm_compaction_try_to_compact_pages"))
			steps := m.slowSteps()
			require.GreaterOrEqual(t, len(steps), 2)
			assert.Equal(t, []stepKind{stepFreelistMin, stepNopage}, steps[len(steps)-2:],
				"the failing request went from the min-watermark attempt straight to nopage")
			assert.NotContains(t, steps, stepDirectReclaim)
			assert.NotContains(t, steps, stepDirectCompact)
		})
	}
}

// pinnedMixLayout gives every pageblock a quarter of pinned anon pages, a
// quarter of unpinned anon, a quarter of clean page cache and a quarter of
// kernel pages, with four free pages (below the min watermark).
func pinnedMixLayout(block, off int) role {
	if off < 4 {
		return roleFree
	}
	return [...]role{roleAnonPinned, roleAnon, roleFile, roleKernel}[off%4]
}

func TestPinnedPagesAreNeverReclaimed(t *testing.T) {
	tests := []struct {
		name   string
		kswapd bool
	}{
		{"direct reclaim swaps unpinned anon and keeps every pinned page", false},
		{"kswapd swaps unpinned anon and keeps every pinned page", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := newQuietMachine(t, 8192, 1, 2)
			require.NoError(t, m.SetSwap(64<<20))
			l := carveZone(t, m, nil, pinnedMixLayout)
			pinned := l.pages[roleAnonPinned]
			nrPinned := uint64(len(pinned))
			require.Equal(t, nrPinned, l.pinned.Pinned)
			anonBefore := l.anon.Resident
			if tc.kswapd {
				// Atomic requests wake kswapd and never reclaim
				// themselves; kswapd runs between them.
				for i := 0; i < 40; i++ {
					spawn(m, "atomic", 1, sim.Time(i)*10*sim.Millisecond, func(t *sim.Task) sim.Time {
						for j := 0; j < 32; j++ {
							m.allocSync(t, GFP_ATOMIC, 0, 0, 0)
						}
						return sim.Exit
					})
				}
				runWorld(t, m, 2*sim.Second)
				assert.Zero(t, allocstalls(m), "only kswapd reclaimed")
				assert.Greater(t, m.Event(PGSTEAL_KSWAPD), uint64(0))
			} else {
				tk := m.testTask(0)
				for i := 0; i < 2000; i++ {
					require.NotEqual(t, NilPFN, m.allocSync(tk, GFP_KERNEL, 0, 0, 0), "allocation %d", i)
					mustCheck(t, m, "allocation %d", i)
				}
				assert.Greater(t, allocstalls(m), uint64(0))
			}
			// Reclaim reached anonymous memory...
			assert.Greater(t, m.Event(PSWPOUT), uint64(0), "pswpout")
			// A written folio stays resident in the swap cache until a
			// later pass frees it: what left memory was swapped first.
			assert.Equal(t, anonBefore-m.Event(PGSTEAL_ANON), l.anon.Resident, "only reclaimed anon left memory")
			assert.LessOrEqual(t, m.Event(PGSTEAL_ANON), m.Event(PSWPOUT), "anon is freed only after its swap-out")
			assert.Equal(t, l.anon.Swapped, m.Event(PSWPOUT), "every swapped page is an unpinned one")
			// ...and never took a pinned page.
			assert.Empty(t, m.movedOrFreed(pinned, l.pinned), "pinned pages stay where they were")
			assert.Equal(t, nrPinned, l.pinned.Resident)
			assert.Equal(t, nrPinned, l.pinned.Pinned)
			assert.Zero(t, l.pinned.Swapped)
			for _, pfn := range pinned {
				require.True(t, m.Folio(pfn).Pinned, "PFN %#x is still pinned", pfn)
			}
		})
	}
}

// anonFileLayout splits every pageblock between unpinned anon and clean
// page cache, with four free pages per block.
func anonFileLayout(block, off int) role {
	if off < 4 {
		return roleFree
	}
	if off%2 == 0 {
		return roleAnon
	}
	return roleFile
}

func anonKernelLayout(block, off int) role {
	if off < 4 {
		return roleFree
	}
	if off%2 == 0 {
		return roleAnon
	}
	return roleKernel
}

func TestAnonIsScannedOnlyWithSwap(t *testing.T) {
	tests := []struct {
		name      string
		layout    func(block, off int) role
		swapBytes uint64
		allocs    int
		wantAnon  bool
	}{
		{"without swap reclaim scans page cache and never anon", anonFileLayout, 0, 2000, false},
		{"without swap and no page cache reclaim scans nothing and the request fails", anonKernelLayout, 0, 10, false},
		{"with swap anonymous memory is scanned and swapped out", anonKernelLayout, 64 << 20, 2000, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := newQuietMachine(t, 8192, 1, 2)
			require.NoError(t, m.SetSwap(tc.swapBytes))
			l := carveZone(t, m, nil, tc.layout)
			anonBefore := l.anon.Resident
			fileBefore := l.file.Resident()
			tk := m.testTask(0)
			got := 0
			for i := 0; i < tc.allocs; i++ {
				if m.allocSync(tk, GFP_KERNEL, 0, 0, 0) != NilPFN {
					got++
				}
				mustCheck(t, m, "allocation %d", i)
			}
			// kswapd was woken on the way; let it run too.
			runWorld(t, m, 2*sim.Second)
			assert.Greater(t, allocstalls(m), uint64(0), "direct reclaim ran")
			if !tc.wantAnon {
				assert.Zero(t, m.Event(PGSCAN_ANON), "pgscan_anon")
				assert.Zero(t, m.Event(PGSTEAL_ANON), "pgsteal_anon")
				assert.Zero(t, m.Event(PSWPOUT), "pswpout")
				assert.Equal(t, anonBefore, l.anon.Resident, "anon is untouched")
				if fileBefore > 0 {
					assert.Equal(t, tc.allocs, got)
					assert.Greater(t, m.Event(PGSCAN_FILE), uint64(0), "pgscan_file")
					assert.Greater(t, m.Event(PGSTEAL_FILE), uint64(0), "pgsteal_file")
					assert.Less(t, l.file.Resident(), fileBefore)
				} else {
					assert.Zero(t, got, "nothing can be reclaimed: every request fails")
					assert.Zero(t, m.Event(PGSCAN_FILE)+m.Event(PGSCAN_DIRECT)+m.Event(PGSCAN_KSWAPD), "nothing was scanned")
				}
				return
			}
			assert.Equal(t, tc.allocs, got)
			assert.Greater(t, m.Event(PGSCAN_ANON), uint64(0), "pgscan_anon")
			assert.Greater(t, m.Event(PSWPOUT), uint64(0), "pswpout")
			// A folio is freed by the pass after its swap-out write
			// completes, so some written ones are still in the swap
			// cache: every anon page reclaimed was swapped out first.
			assert.LessOrEqual(t, m.Event(PGSTEAL_ANON), m.Event(PSWPOUT), "every anon page reclaimed was swapped out")
			assert.Equal(t, m.Event(PSWPOUT), l.anon.Swapped)
			assert.Equal(t, anonBefore-m.Event(PGSTEAL_ANON), l.anon.Resident)
			assert.Equal(t, l.anon.Swapped, m.Swap.UsedPages)
		})
	}
}

func TestMemoryLowProtectsLikeTheKernel(t *testing.T) {
	tests := []struct {
		name string
		// bAnon gives B unreclaimable memory (anon without swap)
		// instead of page cache.
		bAnon  bool
		kswapd bool
		// wantLowReclaim: the protected cgroup is reclaimed and its
		// memory.events low counts it.
		wantLowReclaim bool
	}{
		{"direct reclaim skips a cgroup below memory.low while another has reclaimable memory", false, false, false},
		{"kswapd skips a cgroup below memory.low while another has reclaimable memory", false, true, false},
		{"direct reclaim takes from a cgroup below memory.low when nothing else is reclaimable", true, false, true},
		{"kswapd never reclaims below memory.low, even when nothing else is reclaimable", true, true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := newQuietMachine(t, 8192, 1, 2)
			a := m.NewMemcg("A")
			b := m.NewMemcg("B")
			require.NoError(t, a.SetKnob("memory.low", 32<<20))
			tk := m.testTask(0)
			fa := m.NewFile("a", a)
			require.Equal(t, uint64(2000), m.FileWrite(tk, fa, 0, 2000, GFP_HIGHUSER_MOVABLE))
			m.FileSync(tk, fa)
			const bPages = 5500
			fb := m.NewFile("b", b)
			if tc.bAnon {
				r := m.NewAnonRegion("b", b, bPages)
				r.NoHugepage = true
				for r.Cursor < r.Pages {
					require.True(t, m.FaultAnonNext(tk, r, false).OK)
				}
			} else {
				require.Equal(t, uint64(bPages), m.FileWrite(tk, fb, 0, bPages, GFP_HIGHUSER_MOVABLE))
				m.FileSync(tk, fb)
			}
			mustCheck(t, m, "filling memory")
			require.True(t, a.belowLow(), "A is protected")
			// Take memory with unreclaimable kernel pages until
			// reclaim has to find 1000 pages.
			want := int(m.Nodes[0].Zones[ZONE_NORMAL].Stat[NR_FREE_PAGES]) + 1000
			resetCounters(m)
			if tc.kswapd {
				for i := 0; i < want/32; i++ {
					spawn(m, "atomic", 1, m.World.Now()+sim.Time(i)*sim.Millisecond, func(t *sim.Task) sim.Time {
						for j := 0; j < 32; j++ {
							m.allocSync(t, GFP_ATOMIC, 0, 0, 0)
						}
						return sim.Exit
					})
				}
				runWorld(t, m, m.World.Now()+3*sim.Second)
				assert.Zero(t, allocstalls(m))
				assert.Greater(t, m.Event(PAGEOUTRUN), uint64(0), "kswapd ran")
			} else {
				for i := 0; i < want; i++ {
					m.allocSync(tk, GFP_KERNEL, 0, 0, 0)
					mustCheck(t, m, "allocation %d", i)
				}
				assert.Greater(t, allocstalls(m), uint64(0))
			}
			if !tc.bAnon {
				assert.Less(t, fb.Resident(), uint64(bPages), "B was reclaimed")
			}
			if tc.wantLowReclaim {
				assert.Less(t, fa.Resident(), uint64(2000), "A was reclaimed once nothing else was")
				assert.Greater(t, a.EventsLow, uint64(0), "memory.events low")
				return
			}
			assert.Equal(t, uint64(2000), fa.Resident(), "A keeps every page")
			assert.Zero(t, a.EventsLow, "memory.events low")
		})
	}
}

func TestMemoryMinIsNeverReclaimedEvenWhenNothingElseIs(t *testing.T) {
	m := newQuietMachine(t, 8192, 1, 2)
	a := m.NewMemcg("A")
	require.NoError(t, a.SetKnob("memory.min", 32<<20))
	tk := m.testTask(0)
	fa := m.NewFile("a", a)
	require.Equal(t, uint64(6000), m.FileWrite(tk, fa, 0, 6000, GFP_HIGHUSER_MOVABLE))
	m.FileSync(tk, fa)
	resetCounters(m)
	free := int(m.Nodes[0].Zones[ZONE_NORMAL].Stat[NR_FREE_PAGES])
	failed := 0
	for i := 0; i < free+500 && failed < 5; i++ {
		if m.allocSync(tk, GFP_KERNEL, 0, 0, 0) == NilPFN {
			failed++
		}
		mustCheck(t, m, "allocation %d", i)
	}
	assert.Greater(t, failed, 0, "with only memory.min-protected memory left, requests fail")
	assert.Greater(t, allocstalls(m), uint64(0))
	assert.Equal(t, uint64(6000), fa.Resident(), "A keeps every page")
	assert.Zero(t, m.Event(PGSCAN_FILE), "A is not even scanned")
	assert.Zero(t, a.EventsLow)
}

// shrink_folio_list: if (folio_maybe_dma_pinned(folio)) goto activate_locked;
func TestReclaimActivatesPinnedPageCache(t *testing.T) {
	m := newQuietMachine(t, 8192, 1, 2)
	l := carveZone(t, m, nil, lowFreeFileLayout)
	tk := m.testTask(0)
	for i, pfn := range l.pages[roleFile] {
		if i%4 == 0 {
			require.NoError(t, m.PinFolio(tk, pfn))
		}
	}
	resetCounters(m)
	for i := 0; i < 1500; i++ {
		require.NotEqual(t, NilPFN, m.allocSync(tk, GFP_KERNEL, 0, 0, 0))
	}
	mustCheck(t, m, "pressure")
	assert.Greater(t, m.Event(PGACTIVATE), uint64(0), "pinned page cache found by reclaim is activated")
	assert.Greater(t, m.Nodes[0].Stat[NR_ACTIVE_FILE], int64(0), "and moves to the active file list")
}

// shrink_node_memcgs: direct reclaimers' partial walks resume where the last one stopped.
func TestDirectReclaimersTakeTurnsAcrossCgroups(t *testing.T) {
	m := newQuietMachine(t, 524288, 1, 1)
	a, b := m.NewMemcg("A"), m.NewMemcg("B")
	tk := m.testTask(0)
	fa, fb := m.NewFile("a", a), m.NewFile("b", b)
	m.FileWrite(tk, fa, 0, 250000, GFP_HIGHUSER_MOVABLE)
	m.FileWrite(tk, fb, 0, 250000, GFP_HIGHUSER_MOVABLE)
	m.FileSync(tk, fa)
	m.FileSync(tk, fb)
	mustCheck(t, m, "fill")
	for i := 0; i < 20000; i++ {
		m.allocSync(tk, GFP_KERNEL, 0, 0, 0)
	}
	mustCheck(t, m, "pressure")
	assert.Less(t, fb.Resident(), uint64(250000), "B takes its turn")
	assert.InDelta(t, float64(250000-fa.Resident()), float64(250000-fb.Resident()), 2000, "A and B share the reclaim")
}

// can_age_anon_pages() asks whether swap is present (total_swap_pages),
// not whether it has room: with swap full, reclaim still deactivates anon
// (shrink_lruvec's inactive_is_low check, kswapd_age_node) but swaps
// nothing out; without swap, anon is never aged.
func TestAnonIsAgedWhenSwapIsFullButNotWithoutSwap(t *testing.T) {
	for _, swap := range []bool{false, true} {
		m := newQuietMachine(t, 8192, 1, 2)
		if swap {
			require.NoError(t, m.SetSwap(1<<20))
			m.Swap.UsedPages = m.Swap.TotalPages // full
		}
		l := carveZone(t, m, nil, anonFileLayout)
		for _, pfn := range l.pages[roleAnon] {
			m.lruDel(pfn)
			m.pages[pfn].flags |= pgActive
			m.lruAdd(pfn)
		}
		mustCheck(t, m, "activation")
		active := m.Nodes[0].Stat[NR_ACTIVE_ANON]
		require.Equal(t, int64(len(l.pages[roleAnon])), active)
		tk := m.testTask(0)
		for i := 0; i < 1500; i++ {
			require.NotEqual(t, NilPFN, m.allocSync(tk, GFP_KERNEL, 0, 0, 0))
		}
		runWorld(t, m, sim.Second)
		assert.Zero(t, m.Event(PSWPOUT), "nothing is swapped out")
		if swap {
			assert.Less(t, m.Nodes[0].Stat[NR_ACTIVE_ANON], active, "anon is aged with swap full")
			assert.Greater(t, m.Event(PGDEACTIVATE), uint64(0))
		} else {
			assert.Equal(t, active, m.Nodes[0].Stat[NR_ACTIVE_ANON], "anon is never aged without swap")
		}
	}
}

// folio_check_references: a folio whose PTEs were young once is kept for
// another trip around the inactive list (FOLIOREF_KEEP, counted in
// mm_vmscan_lru_shrink_inactive's nr_ref_keep); young and referenced
// before, it is activated; cold, it is reclaimed.
func TestShrinkInactiveCountsReferenceKeepsAsTheKernelDoes(t *testing.T) {
	m := newQuietMachine(t, 8192, 1, 2)
	l := carveZone(t, m, nil, lowFreeFileLayout)
	files := l.pages[roleFile]
	young, activate := files[:10], files[10:15]
	for _, pfn := range young {
		m.pages[pfn].flags |= pgYoung
	}
	for _, pfn := range activate {
		m.pages[pfn].flags |= pgYoung | pgReferenced
	}
	require.NotEqual(t, NilPFN, m.allocSync(m.testTask(0), GFP_KERNEL, 0, 0, 0))
	mustCheck(t, m, "reclaim")
	var refKeep, activated int
	for _, f := range traceFields(m, "mm_vmscan_lru_shrink_inactive") {
		var nid, scanned, reclaimed, aa, af, keep, unmap, prio int
		_, err := fmt.Sscanf(f, "nid=%d nr_scanned=%d nr_reclaimed=%d nr_dirty=0 nr_writeback=0 nr_congested=0 nr_immediate=0 nr_activate_anon=%d nr_activate_file=%d nr_ref_keep=%d nr_unmap_fail=%d priority=%d",
			&nid, &scanned, &reclaimed, &aa, &af, &keep, &unmap, &prio)
		require.NoError(t, err, f)
		refKeep += keep
		activated += af
	}
	assert.Equal(t, len(young), refKeep, "nr_ref_keep: the once-young folios")
	assert.Equal(t, len(activate), activated, "nr_activate_file: the young and referenced ones")
	for _, pfn := range young {
		assert.NotZero(t, m.pages[pfn].flags&pgReferenced, "kept with PG_referenced set for the next round")
	}
}

// mm_vmscan_lru_isolate and mm_vmscan_lru_shrink_active: every shrink of a
// list is preceded by its isolation, whose nr_scanned is the scan the
// shrink reports (total_scan); an active-list shrink takes what it moves
// and deactivates everything it took (no executable file folios), and the
// counters agree with the lines.
func TestLRUIsolateAndShrinkActiveTracepoints(t *testing.T) {
	m := newQuietMachine(t, 8192, 1, 2)
	require.NoError(t, m.SetSwap(1<<20))
	require.NoError(t, m.Trace.Enable("vmscan", true))
	l := carveZone(t, m, nil, anonFileLayout)
	for _, pfn := range l.pages[roleAnon] {
		m.lruDel(pfn)
		m.pages[pfn].flags |= pgActive
		m.lruAdd(pfn)
	}
	tk := m.testTask(0)
	for i := 0; i < 1500; i++ {
		require.NotEqual(t, NilPFN, m.allocSync(tk, GFP_KERNEL, 0, 0, 0))
	}
	runWorld(t, m, sim.Second)

	var isolate *TraceEvent
	var shrinkActive int
	var deactivated, refill uint64
	events := m.Trace.Events()
	for i := range events {
		e := &events[i]
		f := fieldsOf(e.Fields())
		switch e.Name() {
		case "mm_vmscan_lru_isolate":
			isolate = e
		case "mm_vmscan_lru_shrink_inactive", "mm_vmscan_lru_shrink_active":
			require.NotNil(t, isolate, "%s without an isolation before it", e.Name())
			iso := fieldsOf(isolate.Fields())
			assert.Equal(t, e.PID, isolate.PID, "the same reclaimer isolated")
			if e.Name() == "mm_vmscan_lru_shrink_inactive" {
				assert.Equal(t, iso["nr_scanned"], f["nr_scanned"], "%s after %s", e.Fields(), isolate.Fields())
				assert.Contains(t, []string{"inactive_anon", "inactive_file"}, iso["lru"])
			} else {
				shrinkActive++
				assert.Contains(t, []string{"active_anon", "active_file"}, iso["lru"])
				assert.Equal(t, iso["nr_taken"], f["nr_taken"])
				assert.Equal(t, f["nr_taken"], f["nr_deactivated"], "everything taken is deactivated: %s", e.Fields())
				assert.Equal(t, "0", f["nr_active"])
				assert.Equal(t, "0", f["nr_referenced"])
				deactivated += atou(t, f["nr_deactivated"])
				refill += atou(t, iso["nr_scanned"])
			}
			isolate = nil
		}
	}
	assert.Positive(t, shrinkActive, "active anon was aged")
	assert.Equal(t, m.Event(PGDEACTIVATE), deactivated, "pgdeactivate sums the lines")
	assert.Equal(t, m.Event(PGREFILL), refill, "pgrefill sums the isolations of active lists")
}

// fieldsOf splits a tracepoint's "k=v k=v" fields.
func fieldsOf(s string) map[string]string {
	out := map[string]string{}
	for _, kv := range strings.Fields(s) {
		if k, v, ok := strings.Cut(kv, "="); ok {
			out[k] = v
		}
	}
	return out
}

func atou(t *testing.T, s string) uint64 {
	t.Helper()
	n, err := strconv.ParseUint(s, 10, 64)
	require.NoError(t, err)
	return n
}

// isolate_lru_folios skips folios of zones above the reclaim index: they
// count in pgscan_skip_<zone>, in mm_vmscan_lru_isolate's nr_skipped, and
// in nr_scanned (total_scan), so in pgscan too; and they are spliced to the
// head of the list, so the next batch does not count them again.
func TestReclaimForALowZoneSkipsHigherZonesFolios(t *testing.T) {
	const pages = 16384
	m := dma32NormalMachine(t, pages)
	m.Trace = NewTrace(1 << 16)
	require.NoError(t, m.Trace.Enable("mm_vmscan_lru_isolate", true))
	tk := m.testTask(0)
	f := m.NewFile("f", nil)
	m.FileWrite(tk, f, 0, 2*pages-4096, GFP_HIGHUSER_MOVABLE)
	m.FileSync(tk, f)
	mustCheck(t, m, "fill")
	for i := 0; i < 3000; i++ {
		require.NotEqual(t, NilPFN, m.allocSync(tk, GFP_KERNEL|__GFP_DMA32, 0, 0, 0))
	}
	mustCheck(t, m, "DMA32 pressure")
	skipped := m.Event(PGSCAN_SKIP_NORMAL)
	require.Positive(t, skipped, "Normal-zone page cache was passed over")
	// A skipped folio goes to the head of its list: it is not passed over
	// again until the list has turned once, which 3000 pages of DMA32
	// reclaim do not make it do.
	assert.LessOrEqual(t, skipped, uint64(pages), "each Normal-zone folio is passed over at most once")
	var lines, traced, scanned uint64
	for _, fl := range traceFields(m, "mm_vmscan_lru_isolate") {
		f := fieldsOf(fl)
		assert.Equal(t, strconv.Itoa(int(ZONE_DMA32)), f["classzone"], fl)
		traced += atou(t, f["nr_skipped"])
		scanned += atou(t, f["nr_scanned"])
		assert.GreaterOrEqual(t, atou(t, f["nr_scanned"]), atou(t, f["nr_skipped"])+atou(t, f["nr_taken"]), fl)
		lines++
	}
	require.Positive(t, lines)
	assert.Equal(t, skipped, traced, "nr_skipped sums to pgscan_skip_normal")
	assert.Equal(t, m.Event(PGSCAN_DIRECT)+m.Event(PGSCAN_KSWAPD)+m.Event(PGREFILL), scanned, "pgscan and pgrefill count skipped pages too")
}

// shrink_folio_list counts dirty page cache in nr_dirty whatever its
// reference state (folio_check_dirty_writeback runs first), and sends the
// dirty folios it would reclaim to the flusher (NR_VMSCAN_IMMEDIATE,
// activated): nr_dirty is at least what went that way.
func TestReclaimCountsDirtyPageCache(t *testing.T) {
	m := newQuietMachine(t, 8192, 1, 2)
	require.NoError(t, m.Trace.Enable("mm_vmscan_lru_shrink_inactive", true))
	tk := m.testTask(0)
	f := m.NewFile("dirty", nil)
	m.FileWrite(tk, f, 0, 6000, GFP_HIGHUSER_MOVABLE) // never synced
	mustCheck(t, m, "fill")
	// Until the first direct reclaim (pagesim has no flusher: page cache
	// stays dirty until synced, so more pressure only repeats this).
	for i := 0; i < 5000 && m.Event(PGSCAN_DIRECT) == 0; i++ {
		m.allocSync(tk, GFP_KERNEL, 0, 0, 0)
	}
	require.Positive(t, m.Event(PGSCAN_DIRECT))
	mustCheck(t, m, "pressure")
	require.Less(t, len(m.Trace.Events()), 1<<16, "the ring kept every line")
	var dirty uint64
	lines := traceFields(m, "mm_vmscan_lru_shrink_inactive")
	require.NotEmpty(t, lines)
	for _, l := range lines {
		f := fieldsOf(l)
		assert.LessOrEqual(t, atou(t, f["nr_dirty"]), atou(t, f["nr_scanned"]), l)
		dirty += atou(t, f["nr_dirty"])
	}
	immediate := uint64(m.Nodes[0].Stat[NR_VMSCAN_IMMEDIATE])
	assert.Positive(t, immediate, "dirty folios went to the flusher")
	assert.GreaterOrEqual(t, dirty, immediate)
}

// sc->nr_scanned grows by the folios shrink_folio_list processes: a batch
// that skips higher-zone folios puts them in pgscan but not in the scan
// count that ends kswapd's and direct reclaim's passes.
func TestSkippedFoliosAreNotInTheReclaimersScanCount(t *testing.T) {
	const pages = 8192
	m := dma32NormalMachine(t, pages)
	tk := m.testTask(0)
	f := m.NewFile("f", nil)
	// Normal fills first (the zonelist's first zone), then DMA32: the
	// oldest page cache, at the inactive list's tail, is Normal's.
	m.FileWrite(tk, f, 0, pages+pages/2, GFP_HIGHUSER_MOVABLE)
	m.FileSync(tk, f)
	lv := m.RootMemcg().lruvecs[0]
	require.Equal(t, ZONE_NORMAL, m.ZoneOf(lv.lists[LRU_INACTIVE_FILE].tail).Type)
	sc := &scanControl{gfp: GFP_KERNEL, reclaimIdx: ZONE_DMA32, priority: defPriority, mayUnmap: true}
	before := m.Event(PGSCAN_KSWAPD) + m.Event(PGSCAN_DIRECT)
	m.shrinkInactiveList(tk, SWAP_CLUSTER_MAX, lv, sc, LRU_INACTIVE_FILE)
	skipped := m.Event(PGSCAN_SKIP_NORMAL)
	require.Positive(t, skipped)
	scanned := m.Event(PGSCAN_KSWAPD) + m.Event(PGSCAN_DIRECT) - before
	assert.Equal(t, skipped+SWAP_CLUSTER_MAX, scanned, "pgscan: the batch and what it skipped")
	assert.Equal(t, uint64(SWAP_CLUSTER_MAX), sc.nrScanned, "the reclaimer's count: the batch only")
	mustCheck(t, m, "after the shrink")
}

// dma32NormalMachine boots one node with a DMA32 and a Normal zone of pages
// each, so that reclaim for DMA32 meets Normal-zone folios on the LRU.
func dma32NormalMachine(t *testing.T, pages uint64) *Machine {
	t.Helper()
	cfg := Config{Nodes: []NodeSpec{{CPUs: 1, Zones: []ZoneSpec{
		{Type: ZONE_DMA32, StartPFN: 0x1000, Spanned: pages, Present: pages, Managed: pages - 256},
		{Type: ZONE_NORMAL, StartPFN: 0x1000 + PFN(pages), Spanned: pages, Present: pages, Managed: pages - 256},
	}}}}
	m, err := NewMachine(cfg)
	require.NoError(t, err)
	require.NoError(t, m.SetSysctl("vm.compaction_proactiveness", "0"))
	return m
}

func TestShrinkFolioListReturnsWhatItDidWithTheBatch(t *testing.T) {
	m := newQuietMachine(t, 8192, 1, 2)
	require.NoError(t, m.SetSwap(64<<20))
	l := carveZone(t, m, nil, func(block, off int) role {
		if off < 4 {
			return roleFree
		}
		return [...]role{roleAnon, roleFile, roleAnonPinned, roleKernel}[off%4]
	})
	anon, file, pinned := l.pages[roleAnon], l.pages[roleFile], l.pages[roleAnonPinned]
	young := anon[2]
	batch := []PFN{anon[0], file[0], anon[1], young, file[1], pinned[0]}
	for _, head := range batch {
		m.pages[head].flags &^= pgYoung | pgReferenced // aged: the last scan cleared the accessed bits
	}
	m.pages[young].flags |= pgYoung
	sc := &scanControl{gfp: GFP_KERNEL, mayUnmap: true, maySwap: true, who: reclaimerDirect, priority: defPriority}
	var reclaimed uint64
	var stat reclaimStat
	inWorld(t, m, 0, func(tk *sim.Task) {
		for _, head := range batch {
			m.isolateLRUFolio(head)
		}
		reclaimed, stat = m.shrinkFolioList(tk, batch, sc)
		for _, head := range batch {
			if m.pages[head].flags&pgIsolated != 0 {
				m.putbackLRUFolio(head)
			}
		}
	})
	assert.Equal(t, uint64(2), reclaimed, "two clean page-cache pages freed; the two anon pages swapped out stay under writeback")
	assert.Equal(t, int64(2), m.Nodes[0].Stat[NR_WRITEBACK], "the swap-out writes are in flight")
	assert.Equal(t, reclaimStat{nrPageout: 2, nrRefKeep: 1}, stat,
		"the swap-outs are nr_pageout, the young anon page is FOLIOREF_KEEP, the pinned one is kept")
	assert.Equal(t, uint64(2), m.Event(PSWPOUT))
}

// do_shrink_slab's arithmetic: a shrinker is asked for (freeable >>
// priority) * 4 / seeks objects in batches of SHRINK_BATCH; a caller that
// cannot do the work (SHRINK_STOP, as super_cache_scan without __GFP_FS)
// defers it, and the next caller that can does its share of the deferred
// work (nr_deferred >> priority) besides its own.
func TestShrinkSlabScansItsShareAndDefersWhatAnNOFSCallerCannotDo(t *testing.T) {
	m := newQuietMachine(t, 8192, 1, 1)
	const objects = 1 << 20
	var asked []uint64
	s := &Shrinker{Name: "test", Seeks: DEFAULT_SEEKS, Ops: testShrinker{
		count: func(*ShrinkControl) uint64 { return objects },
		scan: func(_ *sim.Task, sc *ShrinkControl) (uint64, bool) {
			if sc.GFP&__GFP_FS == 0 {
				return 0, true
			}
			asked = append(asked, sc.NrToScan)
			return sc.NrToScan, false
		}}}
	m.RegisterShrinker(s)
	tk := m.testTask(0)
	// GFP_NOFS at priority 10: nothing scanned, (2^20 >> 10) * 4 / 2 =
	// 2048 deferred.
	m.doShrinkSlab(tk, s, &ShrinkControl{GFP: GFP_NOFS}, 10)
	assert.Empty(t, asked)
	assert.Equal(t, uint64(2048), s.nrDeferred)
	// GFP_KERNEL at priority 10: its own 2048 plus 2048 >> 10 = 2 of the
	// deferred, in batches of 128 while at least a batch is left.
	m.doShrinkSlab(tk, s, &ShrinkControl{GFP: GFP_KERNEL}, 10)
	var total uint64
	for _, n := range asked {
		assert.Equal(t, uint64(SHRINK_BATCH), n)
		total += n
	}
	assert.Equal(t, uint64(2048), total, "16 batches of 128; the 2 left over wait")
	assert.Equal(t, uint64(2048), s.nrDeferred, "deferred: 2048 + 2048 - 2048 scanned")
	assert.Equal(t, total, m.Event(SLABS_SCANNED))
}

// testShrinker is a shrinker's callbacks as a test's functions.
type testShrinker struct {
	count func(sc *ShrinkControl) uint64
	scan  func(t *sim.Task, sc *ShrinkControl) (uint64, bool)
}

func (s testShrinker) CountObjects(sc *ShrinkControl) uint64 { return s.count(sc) }
func (s testShrinker) ScanObjects(t *sim.Task, sc *ShrinkControl) (uint64, bool) {
	return s.scan(t, sc)
}

// shrink_active_list calls folio_referenced() on every folio it takes, but
// for a folio no page table maps that returns at once ("if
// (!pra.mapcount) return 0;", mm/rmap.c): only mapped folios cost a
// reverse-map walk. Unmapped page cache (a file system's metadata, a
// written file nobody mmaps) is deactivated for the price of its list
// move.
func TestShrinkActiveListWalksTheRmapOfMappedFoliosOnly(t *testing.T) {
	for _, tc := range []struct {
		name   string
		role   role
		walked bool
	}{
		{"unmapped page cache costs no rmap walk", roleFile, false},
		{"anon pages each cost one", roleAnon, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newQuietMachine(t, 8192, 1, 2)
			require.NoError(t, m.SetSwap(1<<20))
			l := carveZone(t, m, nil, anonFileLayout)
			batch := l.pages[tc.role][:SWAP_CLUSTER_MAX]
			for _, pfn := range batch {
				m.pages[pfn].flags &^= pgYoung | pgReferenced
				m.lruDel(pfn)
				m.pages[pfn].flags |= pgActive
				m.lruAdd(pfn)
			}
			lv := m.memcgs[0].lruvecs[0]
			list := LRU_ACTIVE_FILE
			if tc.role == roleAnon {
				list = LRU_ACTIVE_ANON
			}
			require.Equal(t, uint64(SWAP_CLUSTER_MAX), lv.nrPages[list])
			sc := &scanControl{gfp: GFP_KERNEL, mayUnmap: true, maySwap: true, who: reclaimerDirect, priority: defPriority, reclaimIdx: ZONE_NORMAL}
			var took sim.Time
			inWorld(t, m, 0, func(tk *sim.Task) {
				start := tk.Now
				m.shrinkActiveList(tk, SWAP_CLUSTER_MAX, lv, sc, list)
				took = tk.Now - start
			})
			assert.Zero(t, lv.nrPages[list], "every folio was deactivated")
			want := m.Cost.LRUScanPage * SWAP_CLUSTER_MAX
			if tc.walked {
				want += m.Cost.FolioRefWalk * SWAP_CLUSTER_MAX
			}
			assert.Equal(t, want, took)
		})
	}
}
