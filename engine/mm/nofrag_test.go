package mm

// Behaviour tests for seed 001's switches (Kiryl Shutsemau, "mm: make
// watermark checks honour ALLOC_NOFRAGMENT" v2): the high-order watermark
// check that knows the migratetype (patch 1,
// Patches.WatermarkCheckKnowsMigratetype), the allocator's checks and
// __compact_finished() that use it under ALLOC_NOFRAGMENT (patch 2,
// Patches.HighOrderCheckHonoursNofragment), direct reclaim's "allocation
// can already succeed" checks that use it (patch 3,
// Patches.DirectReclaimToldNofragment), and what each changes for a 64K
// mTHP fault (order 4, GFP_TRANSHUGE) under vm.defrag_mode=1.
//
// Every layout has one UNMOVABLE pageblock (block 0) whose only free
// memory is a 64 KiB chunk: an order-4 page a movable ALLOC_NOFRAGMENT
// request cannot take, because __rmqueue_claim() takes other types' pages
// only in whole pageblocks. The movable blocks hold clean page cache with
// free order-0 pages between.

import (
	"testing"

	"github.com/pagesim/pagesim/engine/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// nofragLayout returns a carveZone placement: block 0 is left to
// foreignChunk; in the other blocks every freeEvery-th page is free (so no
// free chunk is larger than order 0), the second page of every 16 is pinned
// anon when pinned (so no order-4 chunk can be compacted), and the rest is
// clean page cache.
func nofragLayout(freeEvery int, pinned bool) func(block, off int) role {
	return func(block, off int) role {
		switch {
		case block == 0:
			return roleKernel
		case pinned && off%16 == 1:
			return roleAnonPinned
		case off%freeEvery == 0:
			return roleFree
		}
		return roleFile
	}
}

// foreignChunk makes block 0 of z (all kernel pages after nofragLayout) an
// UNMOVABLE pageblock and frees its first 16 pages, which merge into one
// order-4 chunk on the UNMOVABLE list; with whole, it frees the whole block
// instead (one order-9 chunk).
func foreignChunk(t *testing.T, m *Machine, z *Zone, whole bool) {
	t.Helper()
	tk := m.testTask(0)
	start := z.StartPFN
	m.setPageblockMigratetype(start, MIGRATE_UNMOVABLE)
	n := PFN(16)
	if whole {
		n = PageblockNrPages
	}
	for pfn := start; pfn < start+n; pfn++ {
		m.FreePages(tk, pfn, 0)
	}
	m.DrainLocalPages(tk)
	mustCheck(t, m, "freeing block 0's chunk")
	if whole {
		require.Equal(t, uint64(1), z.freeArea[PageblockOrder].list[MIGRATE_UNMOVABLE].n)
	} else {
		require.Equal(t, uint64(1), z.freeArea[4].list[MIGRATE_UNMOVABLE].n, "one unmovable order-4 chunk")
	}
	for o := Order(4); o < NR_PAGE_ORDERS; o++ {
		require.Zero(t, z.freeArea[o].list[MIGRATE_MOVABLE].n, "no movable chunk of order %d", o)
	}
	resetCounters(m)
}

// series is which of seed 001's three patches a machine has.
type series struct{ p1, p2, p3 bool }

func (sr series) apply(m *Machine) {
	m.Patches.WatermarkCheckKnowsMigratetype = sr.p1
	m.Patches.HighOrderCheckHonoursNofragment = sr.p2
	m.Patches.DirectReclaimToldNofragment = sr.p3
}

var (
	noSeries  = series{}
	patch1    = series{p1: true}
	patch2    = series{p2: true}
	patch3    = series{p3: true}
	patches12 = series{p1: true, p2: true}
	patches13 = series{p1: true, p3: true}
	patches23 = series{p2: true, p3: true}
	patches   = series{true, true, true}
)

func TestTheHighOrderCheckSkipsOtherTypesListsWithSeed001Patch1AndTheAllocatorAsksItWithPatch2(t *testing.T) {
	nofrag := ALLOC_NOFRAGMENT | ALLOC_WMARK_MIN
	tests := []struct {
		name    string
		patches series
		whole   bool
		flags   AllocFlags
		mt      MigrateType
		// mtCheck: __zone_watermark_ok_mt()'s answer (the check given
		// the migratetype); fast: zone_watermark_fast()'s.
		mtCheck, fast bool
	}{
		{"without the series a movable ALLOC_NOFRAGMENT request counts an unmovable block's order-4 chunk",
			noSeries, false, nofrag, MIGRATE_MOVABLE, true, true},
		{"patch 1's check given the migratetype does not: __rmqueue_claim could not take the chunk; the allocator does not ask it yet",
			patch1, false, nofrag, MIGRATE_MOVABLE, false, true},
		{"patch 2 without patch 1's check leaves zone_watermark_fast counting the chunk",
			patch2, false, nofrag, MIGRATE_MOVABLE, true, true},
		{"with patches 1-2 zone_watermark_fast does not count it",
			patches12, false, nofrag, MIGRATE_MOVABLE, false, false},
		{"with patches 1-2 a request without ALLOC_NOFRAGMENT still counts it: it may steal",
			patches12, false, ALLOC_WMARK_MIN, MIGRATE_MOVABLE, true, true},
		{"with patches 1-2 an unmovable request counts its own type's chunk",
			patches12, false, nofrag, MIGRATE_UNMOVABLE, true, true},
		{"with patches 1-2 a whole free unmovable pageblock counts: __rmqueue_claim takes whole blocks",
			patches12, true, nofrag, MIGRATE_MOVABLE, true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := newQuietMachine(t, 8192, 1, 2)
			l := carveZone(t, m, nil, nofragLayout(8, false))
			foreignChunk(t, m, l.zone, tc.whole)
			tc.patches.apply(m)
			z := l.zone
			got := m._zoneWatermarkOK(z, 4, z.WmarkPages(WMARK_MIN), ZONE_NORMAL, tc.flags, z.Stat[NR_FREE_PAGES], tc.mt)
			assert.Equal(t, tc.mtCheck, got, "__zone_watermark_ok_mt(order 4)")
			assert.True(t, m._zoneWatermarkOK(z, 4, z.WmarkPages(WMARK_MIN), ZONE_NORMAL, tc.flags, z.Stat[NR_FREE_PAGES], MIGRATE_TYPES),
				"plain __zone_watermark_ok(order 4) counts every type")
			assert.Equal(t, tc.fast, m.zoneWatermarkFast(z, 4, z.WmarkPages(WMARK_MIN), ZONE_NORMAL, tc.flags, tc.mt), "zone_watermark_fast(order 4)")
			// The order-0 part is the same for every request.
			assert.True(t, m._zoneWatermarkOK(z, 0, z.WmarkPages(WMARK_MIN), ZONE_NORMAL, tc.flags, z.Stat[NR_FREE_PAGES], tc.mt))
		})
	}
}

func TestCompactFinishedStopsOnlyOnAPageTheRequestCanTakeWithSeed001Patch2(t *testing.T) {
	tests := []struct {
		name    string
		patches series
		whole   bool
		want    CompactResult
	}{
		{"without the series a movable ALLOC_NOFRAGMENT compaction stops on the unmovable block's order-4 chunk", noSeries, false, COMPACT_SUCCESS},
		{"patch 1 alone leaves the fallback test as it was", patch1, false, COMPACT_SUCCESS},
		{"with patch 2 it goes on: the chunk is not the request's to take (its own loop, without patch 1's check)", patch2, false, COMPACT_NO_SUITABLE_PAGE},
		{"with patches 1-2 likewise", patches12, false, COMPACT_NO_SUITABLE_PAGE},
		{"with patches 1-2 a whole free unmovable pageblock still ends it", patches12, true, COMPACT_SUCCESS},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := newQuietMachine(t, 8192, 1, 2)
			l := carveZone(t, m, nil, nofragLayout(8, false))
			foreignChunk(t, m, l.zone, tc.whole)
			tc.patches.apply(m)
			z := l.zone
			cc := &compactControl{zone: z, order: 4, gfp: GFP_TRANSHUGE, migratetype: MIGRATE_MOVABLE,
				allocFlags: ALLOC_NOFRAGMENT | ALLOC_WMARK_MIN | ALLOC_CMA, highestZoneidx: ZONE_NORMAL,
				directCompaction: true, migratePFN: z.StartPFN + 2*PageblockNrPages, freePFN: z.StartPFN + 10*PageblockNrPages}
			assert.Equal(t, tc.want.Name(), m._compactFinished(nil, cc).Name())
		})
	}
}

// The fault of Dev Jain's benchmark: a 64K mTHP fault in a MADV_HUGEPAGE
// region, THP defrag=madvise (GFP_TRANSHUGE, order 4, costly), with
// vm.defrag_mode=1.
func TestA64KFaultUnderDefragModeBySeed001Patch(t *testing.T) {
	tests := []struct {
		name    string
		patches series
		pinned  bool
		steps   string
		got     bool
		// compact_stall, compact_fail, compact_success, compaction
		// runs that scanned (mm_compaction_begin)
		stall, fail, success, scanned uint64
		defer_                        bool // the zone's compaction is deferred afterwards
	}{
		{"without the series the up-front check answers COMPACT_SUCCESS twice without compacting, and the fault falls back",
			noSeries, false, "min compact(ASYNC) min reclaim(4) drain compact(SYNC_LIGHT) nopage(costly order without __GFP_RETRY_MAYFAIL)",
			false, 2, 2, 0, 0, false},
		{"patch 1 alone changes nothing: no allocator check asks it",
			patch1, false, "min compact(ASYNC) min reclaim(4) drain compact(SYNC_LIGHT) nopage(costly order without __GFP_RETRY_MAYFAIL)",
			false, 2, 2, 0, 0, false},
		{"patch 2 without patch 1's check: the up-front check still answers COMPACT_SUCCESS",
			patch2, false, "min compact(ASYNC) min reclaim(4) drain compact(SYNC_LIGHT) nopage(costly order without __GFP_RETRY_MAYFAIL)",
			false, 2, 2, 0, 0, false},
		{"with patches 1-2 async compaction runs and its capture serves the fault",
			patches12, false, "min compact(ASYNC)", true, 1, 0, 1, 1, false},
		{"without the series compaction that could never succeed is not deferred either",
			noSeries, true, "min compact(ASYNC) min reclaim(4) drain compact(SYNC_LIGHT) nopage(costly order without __GFP_RETRY_MAYFAIL)",
			false, 2, 2, 0, 0, false},
		{"with patches 1-2 futile SYNC_LIGHT compaction defers the zone",
			patches12, true, "min compact(ASYNC) min reclaim(4) drain compact(SYNC_LIGHT) nopage(costly order without __GFP_RETRY_MAYFAIL)",
			false, 2, 2, 0, 2, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := newQuietMachine(t, 8192, 1, 2)
			l := carveZone(t, m, nil, nofragLayout(8, tc.pinned))
			foreignChunk(t, m, l.zone, false)
			require.NoError(t, m.SetSysctl("vm.defrag_mode", "1"))
			tc.patches.apply(m)
			var got PFN
			inWorld(t, m, 1, func(t *sim.Task) { got = m.allocSync(t, GFP_TRANSHUGE|__GFP_COMP, 4, 0, 0) })
			assert.Equal(t, tc.got, got != NilPFN, "the fault got its 64K folio")
			if got != NilPFN {
				assert.Equal(t, MIGRATE_MOVABLE, m.PageblockMigratetype(got))
			}
			assert.Equal(t, tc.steps, m.stepsString())
			assert.Equal(t, tc.stall, m.Event(COMPACTSTALL), "compact_stall")
			assert.Equal(t, tc.fail, m.Event(COMPACTFAIL), "compact_fail")
			assert.Equal(t, tc.success, m.Event(COMPACTSUCCESS), "compact_success")
			assert.Len(t, traceFields(m, "mm_compaction_begin"), int(tc.scanned), "compaction runs that scanned")
			_, shift, _ := l.zone.DeferState()
			assert.Equal(t, tc.defer_, shift > 0, "compaction deferred (compact_defer_shift %d)", shift)
			assert.Zero(t, m.Slow.NofragGiveUps, "a costly request gives up before defrag_mode's fallback retry")
		})
	}
}

func TestDirectReclaimForA64KFaultStopsEarlyUnlessSeed001Patch3(t *testing.T) {
	tests := []struct {
		name    string
		patches series
		// ready: compaction_ready() stopped reclaim before it freed
		// anything (try_to_free_pages returned 1).
		ready bool
	}{
		{"defrag_mode without the series: compaction_ready counts the unmovable chunk and reclaim frees nothing", noSeries, true},
		{"patches 1-2 leave direct reclaim's check as it was", patches12, true},
		{"patch 3 without patch 1's check changes nothing", patch3, true},
		{"patches 2-3 without patch 1's check change nothing either", patches23, true},
		{"patches 1 and 3: reclaim frees pages for compaction, without patch 2", patches13, false},
		{"patches 1-3: reclaim frees pages for compaction", patches, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := newQuietMachine(t, 8192, 1, 2)
			// Free memory between min and compaction_ready()'s high
			// + compact_gap(4) + (low - min): reclaim has work to do.
			l := carveZone(t, m, nil, nofragLayout(16, false))
			foreignChunk(t, m, l.zone, false)
			z := l.zone
			require.Less(t, z.Stat[NR_FREE_PAGES], int64(z.WmarkPages(WMARK_HIGH)+compactGap(4)+z.WmarkPages(WMARK_LOW)-z.WmarkPages(WMARK_MIN)))
			require.NoError(t, m.SetSysctl("vm.defrag_mode", "1"))
			tc.patches.apply(m)
			gfp := GFP_TRANSHUGE | __GFP_COMP
			ac, flags := m.acFor(gfp, 4, 0)
			require.NotZero(t, flags&ALLOC_NOFRAGMENT)
			var progress uint64
			inWorld(t, m, 1, func(t *sim.Task) {
				progress = m.tryToFreePages(t, ac.zonelist, 4, gfp, 0, flags, ac.migratetype)
			})
			assert.Equal(t, uint64(1), m.Reclaim.DirectRuns[4])
			assert.Equal(t, m.Event(PGSTEAL_DIRECT), m.Reclaim.DirectReclaimed[4], "pages reclaimed by order-4 direct reclaim")
			if tc.ready {
				assert.Equal(t, uint64(1), progress, "stopped for compaction")
				assert.Zero(t, m.Event(PGSTEAL_DIRECT), "pgsteal_direct")
			} else {
				assert.Greater(t, progress, uint64(1))
				assert.Equal(t, progress, m.Event(PGSTEAL_DIRECT), "pgsteal_direct")
			}
		})
	}
}

func TestShouldContinueReclaimAsksTheSameQuestionWithSeed001Patch3(t *testing.T) {
	tests := []struct {
		name    string
		patches series
		want    bool
	}{
		{"with patches 1-2 should_continue_reclaim stops: the allocation can already succeed, it believes", patches12, false},
		{"with patches 1-3 it goes on until compaction has room", patches, true},
		{"with patches 1 and 3 too: patch 2 plays no part", patches13, true},
		{"patch 3 without patch 1's check: stops, as without the series", patch3, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := newQuietMachine(t, 8192, 1, 2)
			l := carveZone(t, m, nil, nofragLayout(16, false))
			foreignChunk(t, m, l.zone, false)
			require.NoError(t, m.SetSysctl("vm.defrag_mode", "1"))
			tc.patches.apply(m)
			_, flags := m.acFor(GFP_TRANSHUGE, 4, 0)
			sc := &scanControl{gfp: GFP_TRANSHUGE, order: 4, reclaimIdx: ZONE_NORMAL, priority: defPriority,
				who: reclaimerDirect, allocFlags: flags, migratetype: MIGRATE_MOVABLE}
			assert.Equal(t, tc.want, m.shouldContinueReclaim(m.Nodes[0], SWAP_CLUSTER_MAX, sc))
		})
	}
}

// defrag_mode's kswapd/kcompactd watermarks (a211c6550efc): at an order
// above 0 kswapd's pgdat_balanced() and kcompactd's
// compaction_suit_allocation_order() count only free memory in whole
// pageblocks (NR_FREE_PAGES_BLOCKS), against the high watermark for
// kcompactd. Block 0 is one free order-9 chunk; every other block has
// half its pages free in order-0 pieces, far above the high watermark.
func TestDefragModeMakesKswapdAndKcompactdCountWholeFreeBlocks(t *testing.T) {
	tests := []struct {
		name   string
		defrag bool
		// balanced at order 9, at order 0; kcompactd suitable at
		// order 9 (it would compact)
		balanced9, balanced0, kcompactd bool
	}{
		{"defrag_mode=0: one free order-9 chunk and free memory above high balance the node at order 9; kcompactd has nothing to do",
			false, true, true, false},
		{"defrag_mode=1: 512 pages in whole blocks are below the high watermark; kcompactd would compact",
			true, false, true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := newQuietMachine(t, 8192, 1, 2)
			l := carveZone(t, m, nil, func(block, off int) role {
				if block == 0 || off%2 == 0 {
					return roleFree
				}
				return roleFile
			})
			z := l.zone
			require.Equal(t, int64(PageblockNrPages), z.Stat[NR_FREE_PAGES_BLOCKS], "nr_free_pages_blocks")
			require.Greater(t, z.Stat[NR_FREE_PAGES], int64(4*z.WmarkPages(WMARK_HIGH)))
			if tc.defrag {
				require.NoError(t, m.SetSysctl("vm.defrag_mode", "1"))
			}
			n := m.Nodes[0]
			assert.Equal(t, tc.balanced9, m.pgdatBalanced(n, PageblockOrder, ZONE_NORMAL), "pgdat_balanced(order 9)")
			assert.Equal(t, tc.balanced0, m.pgdatBalanced(n, 0, ZONE_NORMAL), "pgdat_balanced(order 0)")
			assert.Equal(t, tc.kcompactd, m.kcompactdNodeSuitable(n, PageblockOrder, ZONE_NORMAL), "kcompactd_node_suitable(order 9)")
		})
	}
}

// With patches 1-2 a futile 64K fault defers compaction; the next fault's
// compactions are COMPACT_DEFERRED. Whether those count compact_stall and
// compact_fail depends on the kernel: since v5.13 they do; the v7.3-rc5 mm
// tree, and so seed 001's v7.4-rc1, returns before counting.
func TestADeferredCompactionCountsAStallOnlyBeforeTheV74Tree(t *testing.T) {
	for _, noStall := range []bool{false, true} {
		name := "v5.13 to v7.3: each deferred attempt counts compact_stall and compact_fail"
		if noStall {
			name = "v7.4 (the v7.3-rc5 mm tree): a deferred attempt counts nothing"
		}
		t.Run(name, func(t *testing.T) {
			m := newQuietMachine(t, 8192, 1, 2)
			l := carveZone(t, m, nil, nofragLayout(8, true))
			foreignChunk(t, m, l.zone, false)
			require.NoError(t, m.SetSysctl("vm.defrag_mode", "1"))
			patches12.apply(m)
			m.Kernel.DeferredCompactNoStall = noStall
			fault := func() {
				var got PFN
				inWorld(t, m, 1, func(tk *sim.Task) { got = m.allocSync(tk, GFP_TRANSHUGE|__GFP_COMP, 4, 0, 0) })
				assert.Equal(t, NilPFN, got)
			}
			fault()
			require.Equal(t, uint64(2), m.Event(COMPACTSTALL), "the first fault compacts twice")
			_, shift, _ := l.zone.DeferState()
			require.Equal(t, uint(1), shift, "and defers")
			resetCounters(m)
			fault()
			assert.Equal(t, "min compact(ASYNC) min reclaim(4) drain compact(SYNC_LIGHT) nopage(costly order without __GFP_RETRY_MAYFAIL)", m.stepsString())
			assert.Len(t, traceFields(m, "mm_compaction_deferred"), 1, "one of the second fault's two compactions is deferred")
			want := uint64(1)
			if !noStall {
				want = 2
			}
			assert.Equal(t, want, m.Event(COMPACTSTALL), "compact_stall")
			assert.Equal(t, want, m.Event(COMPACTFAIL), "compact_fail")
		})
	}
}

// TestSeed001Patch3LeavesCompactionReadysSecondTestCountingEveryType: seed
// 001's patch 3 gives compaction_ready()'s first test, "the allocation can
// already succeed", the allocation's ALLOC_NOFRAGMENT and migratetype. Its
// second test, compaction_suitable() at the high
// watermark, counts free pages of every type at order 0, and the series
// does not change it (the cover letter speaks of the high-order check;
// compaction_suitable is declared in include/linux/compaction.h, which the
// diffstat does not touch). So where the zone's free pages sit in another
// type's blocks, above high + compact_gap(4) + (low - min), reclaim stops
// before freeing anything even with patch 3, though the movable fault can
// take none of those pages: what nofrag-watermark's default run meets in
// its order-4 reclaims (docs/FIDELITY-HISTORY.md, "Seed 001's earlier
// measurements": "Why the fault's reclaim gives the series' compactions
// no targets", says how often).
func TestSeed001Patch3LeavesCompactionReadysSecondTestCountingEveryType(t *testing.T) {
	tests := []struct {
		name string
		// foreign is how many pageblocks after block 0 are unmovable
		// blocks with every page free but their first (so no chunk of
		// pageblock_order, which a movable request could claim).
		foreign int
		ready   bool
	}{
		{"below the mark, patch 3 lets reclaim go on", 0, false},
		{"above it by other types' free pages, reclaim stops with patch 3 too", 3, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := newQuietMachine(t, 8192, 1, 2)
			l := carveZone(t, m, nil, func(block, off int) role {
				switch {
				case block <= tc.foreign:
					return roleKernel
				case off%16 == 0:
					return roleFree
				}
				return roleFile
			})
			z := l.zone
			foreignChunk(t, m, z, false)
			tk := m.testTask(0)
			for b := 1; b <= tc.foreign; b++ {
				start := z.StartPFN + PFN(b)*PageblockNrPages
				m.setPageblockMigratetype(start, MIGRATE_UNMOVABLE)
				for pfn := start + 1; pfn < start+PageblockNrPages; pfn++ {
					m.FreePages(tk, pfn, 0)
				}
			}
			m.DrainLocalPages(tk)
			mustCheck(t, m, "freeing the unmovable blocks")
			require.NoError(t, m.SetSysctl("vm.defrag_mode", "1"))
			patches.apply(m)
			gfp := GFP_TRANSHUGE | __GFP_COMP
			ac, flags := m.acFor(gfp, 4, 0)
			require.NotZero(t, flags&ALLOC_NOFRAGMENT)
			mark := int64(z.WmarkPages(WMARK_HIGH) + compactGap(4) + z.WmarkPages(WMARK_LOW) - z.WmarkPages(WMARK_MIN) + uint64(z.LowmemReserve[ac.highestZoneidx]))
			var movableFree int64
			for pfn := z.StartPFN; pfn < z.EndPFN(); pfn += PageblockNrPages {
				if b := &m.blocks[pfn>>PageblockOrder]; b.mt == MIGRATE_MOVABLE {
					movableFree += int64(b.nrFree)
				}
			}
			require.Less(t, movableFree, mark, "the movable blocks' free pages alone are below the mark")
			if tc.ready {
				require.Greater(t, z.Stat[NR_FREE_PAGES], mark, "with the unmovable blocks' free pages the zone is above it")
			} else {
				require.Less(t, z.Stat[NR_FREE_PAGES], mark)
			}
			sc := &scanControl{gfp: gfp, order: 4, reclaimIdx: ac.highestZoneidx, priority: defPriority,
				who: reclaimerDirect, allocFlags: flags, migratetype: MIGRATE_MOVABLE}
			assert.Equal(t, tc.ready, m.compactionReady(z, sc), "compaction_ready")
			var progress uint64
			inWorld(t, m, 1, func(t *sim.Task) {
				progress = m.tryToFreePages(t, ac.zonelist, 4, gfp, 0, flags, ac.migratetype)
			})
			if tc.ready {
				assert.Equal(t, uint64(1), progress, "stopped for compaction")
				assert.Zero(t, m.Event(PGSTEAL_DIRECT), "pgsteal_direct")
			} else {
				assert.Greater(t, progress, uint64(1))
			}
		})
	}
}
