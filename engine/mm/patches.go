package mm

// Patches holds one switch per seed patch (and per patch of a series). Each
// switch is tested in the engine exactly where the patch's diff changes the
// kernel's code; a scenario variant is a named set of switches and knobs.
// All false is the kernel the seeds measured against.
type Patches struct {
	// CostlyNoretryNoDirectReclaim is seed 000 (Salvatore Dipietro,
	// "mm/page_alloc: avoid direct compaction for costly __GFP_NORETRY
	// allocations", v4): at the top of __alloc_pages_slowpath, a costly
	// __GFP_NORETRY request without __GFP_THISNODE loses
	// __GFP_DIRECT_RECLAIM. Hunk: mm/page_alloc.c __alloc_pages_slowpath.
	CostlyNoretryNoDirectReclaim bool
	// CostlyNoretryNoThisnodeExempt is the same clearing without the
	// __GFP_THISNODE exemption, as Johannes Weiner suggested it in review
	// of v3 and Salvatore Dipietro measured it ("Johannes' approach",
	// lore 20260714120204.542300-1-dipiets@amazon.it): every costly
	// __GFP_NORETRY request loses __GFP_DIRECT_RECLAIM. Only with
	// CostlyNoretryNoDirectReclaim; same hunk.
	CostlyNoretryNoThisnodeExempt bool
	// FilemapClearReclaimAfterFirst is the filemap-level alternative
	// Matthew Wilcox proposed in review of v3 (lore
	// alEz4Chf7Ibyg-ZG@casper.infradead.org, "Matthew's approach" in the
	// reply above): __filemap_get_folio_mpol's order loop asks for the
	// first order with __GFP_NORETRY|__GFP_NOWARN as before, clears
	// __GFP_DIRECT_RECLAIM for every further order, and asks for
	// min_order with the caller's mask unchanged. Hunk: mm/filemap.c
	// __filemap_get_folio_mpol (filemapGetFolio).
	FilemapClearReclaimAfterFirst bool

	// The three patches of seed 001 (Kiryl Shutsemau, "mm: make watermark
	// checks honour ALLOC_NOFRAGMENT" v2). Only the cover letter and the
	// changelog lines its range-diff quotes are in the seed, so where each
	// acts is read from them and from the diffstat (docs/FIDELITY.md,
	// "the series' switches").
	//
	// WatermarkCheckKnowsMigratetype is patch 1 ("mm: page_alloc: add a
	// watermark check that knows the migratetype"): __zone_watermark_ok_mt(),
	// a high-order check given the request's migratetype, which under
	// ALLOC_NOFRAGMENT and below pageblock_order counts only the free lists
	// __rmqueue() may serve that migratetype from (its own, CMA and
	// HighAtomic as before; other types only in whole pageblocks, which
	// __rmqueue_claim() takes). Where the engine tests it: _zoneWatermarkOK,
	// for a caller that passes a migratetype. Patch 1 converts no caller:
	// alone it changes nothing; patches 2 and 3 call it.
	WatermarkCheckKnowsMigratetype bool
	// HighOrderCheckHonoursNofragment is patch 2 ("mm: page_alloc: make
	// the high-order watermark check honour ALLOC_NOFRAGMENT"): the
	// allocator's checks pass the request's migratetype to patch 1's
	// check, zone_watermark_fast() (zoneWatermarkFast) and
	// compaction_suit_allocation_order() (compactionSuitAllocationOrder);
	// and __compact_finished()'s fallback test (_compactFinished), which
	// is its own loop, skips other types' lists below pageblock_order
	// under ALLOC_NOFRAGMENT. should_reclaim_retry() keeps counting every
	// migratetype (v1's changelog said so; v2 changed the changelog, not
	// the code).
	HighOrderCheckHonoursNofragment bool
	// DirectReclaimToldNofragment is patch 3 ("mm: vmscan: tell direct
	// reclaim the allocation is ALLOC_NOFRAGMENT"): direct reclaim's
	// checks of whether the allocation can already succeed,
	// compaction_ready() and should_continue_reclaim(), pass the
	// allocation's ALLOC_NOFRAGMENT and migratetype to patch 1's check
	// (reclaimWatermarkFlags). It acts without patch 2.
	DirectReclaimToldNofragment bool

	// PromotedOrderRetries is seed 002 as posted ("mm: page_alloc: make
	// defrag_mode retries follow the promoted order"): should_reclaim_retry
	// and should_compact_retry judge the promoted (production) order.
	PromotedOrderRetries bool
	// PromotedOrderRequestedFloor is the "requested" variant of seed 002:
	// with PromotedOrderRetries, the compaction priority floor and the
	// COMPACT_SUCCESS retry cap keep using the requested order.
	PromotedOrderRequestedFloor bool

	// PinMigrateMovable is the what-if the end of seed 002's thread
	// proposes (Shutsemau, Weiner): FOLL_LONGTERM pins migrate a page out
	// of a MIGRATE_MOVABLE pageblock first, as they do out of ZONE_MOVABLE
	// (folio_is_longterm_pinnable in include/linux/mm.h, the gup
	// migration path in mm/gup.c; gup.go). Not a posted patch: off is
	// every kernel.
	PinMigrateMovable PinMigrate

	// OnlyCompact is seed 003 fix 1 (Andrea Arcangeli, "mm: thp: fix
	// transparent_hugepage/defrag = madvise || always", 2018): the THP
	// local-node attempt carries __GFP_ONLY_COMPACT and the slow path
	// goes to nopage after the first compaction. Hunks: mm/mempolicy.c
	// alloc_pages_vma, mm/page_alloc.c __alloc_pages_slowpath.
	OnlyCompact bool
	// THPDropThisnode is seed 003 fix 2 (the alternative the same mail
	// describes, merged in 2018 as "mm: thp: relax __GFP_THISNODE for
	// MADV_HUGEPAGE mappings"): no __GFP_THISNODE on THP faults whose
	// mask has __GFP_DIRECT_RECLAIM. Hunk: mm/mempolicy.c alloc_pages_vma.
	THPDropThisnode bool
}

// KernelBase holds behaviours that differ between the kernel versions the
// seeds were measured on. They are not patches under test: every variant
// of a scenario shares them. The default (all false) is today's mm tree.
type KernelBase struct {
	// THPLegacyThisnode selects the 2018 alloc_pages_vma() THP placement
	// (the local node with __GFP_THISNODE and no second attempt) instead
	// of today's alloc_pages_mpol() (a local __GFP_THISNODE|__GFP_NORETRY
	// attempt, then every allowed node). Seed 003's kernels have it.
	THPLegacyThisnode bool
	// NoMemallocPin turns off PF_MEMALLOC_PIN (5.12+): in older kernels
	// the faults a FOLL_LONGTERM pin takes allocate with the VMA's mask,
	// __GFP_MOVABLE included; today they lose __GFP_MOVABLE.
	NoMemallocPin bool
	// LegacyCostlyNoretry selects the 2018 check of a costly
	// __GFP_NORETRY request after its first direct compaction: only
	// COMPACT_DEFERRED gives up; anything else (COMPACT_SKIPPED too) goes
	// on to one round of direct reclaim and async compaction. Today a
	// __GFP_THISNODE request gives up there instead ("THP page faults may
	// attempt local node only first, but are then allowed to only
	// compact, not reclaim"). Seed 003's kernels have it: its fix 1 adds
	// __GFP_ONLY_COMPACT right after this check because "not even
	// COMPACT_SKIPPED" should reach reclaim.
	LegacyCostlyNoretry bool
	// LegacyCompactStall selects the 2018 __alloc_pages_direct_compact
	// (v4.18 mm/page_alloc.c): it returned before counting compact_stall
	// for every result up to COMPACT_INACTIVE, so a COMPACT_DEFERRED
	// attempt counted nothing. 19a4cd3c3a68 ("mm, page_alloc: always use
	// a captured page regardless of compaction result", v5.1) removed
	// the check, and 06dac2f467fe ("mm: compaction: update the
	// COMPACT[STALL|FAIL] events properly", v5.13) brought back one for
	// COMPACT_SKIPPED alone: today a deferred attempt counts
	// compact_stall and compact_fail. Seed 003's kernels have it.
	LegacyCompactStall bool
	// DeferredCompactNoStall selects __alloc_pages_direct_compact() of the
	// v7.3-rc5 mm tree (linux-mm/linux-mm mm/page_alloc.c @00cb34b0): it
	// returns before count_vm_event(COMPACTSTALL) for COMPACT_DEFERRED as
	// well as for COMPACT_SKIPPED, so a deferred attempt counts neither
	// compact_stall nor compact_fail. Kernels from 06dac2f467fe (v5.13)
	// until then return for COMPACT_SKIPPED alone (the default here).
	// Seed 001's v7.4-rc1, into which that tree was merged, has it.
	DeferredCompactNoStall bool
	// LegacyReclaim selects v4.18's direct reclaim (mm/vmscan.c):
	// do_try_to_free_pages retries only for cgroups it skipped under
	// memory.low (memcg_low_skipped). The force_deactivate retry came with
	// b91ac374346b ("mm: vmscan: enforce inactive:active ratio at the
	// reclaim root", v5.5), which also moved the deactivation decision
	// from every shrink_list call (inactive_list_is_low) to one per node
	// (sc->may_deactivate); the full cgroup-walk retry came with
	// 6be5e186fd65 ("mm: vmscan: restore incremental cgroup iteration",
	// v6.10), whose partial walk stops at nr_to_reclaim, which 4.18's
	// global reclaim did not. Seed 003's kernels have it.
	LegacyReclaim bool
	// LegacyPinnedReclaim selects v4.18's shrink_page_list for pinned
	// anonymous folios, which had no folio_maybe_dma_pinned() check (it
	// came with feb889fb40fa, "mm: don't put pinned pages into the swap
	// cache", v5.11): reclaim goes on to try to swap them out. A pinned
	// THP gets no further than can_split_huge_page(), which counts the
	// pin's references, fails, and sends it to activate_locked
	// (pgactivate); the active list's aging brings it back, and the next
	// scan activates it again. (A pinned base page went on to add_to_swap
	// and try_to_unmap and was kept when pageout found the extra
	// reference, is_page_cache_freeable: pagesim keeps it as today, see
	// docs/FIDELITY.md.) Seed 003's kernels have it.
	LegacyPinnedReclaim bool
	// NoAllocNofragment selects a kernel before 6bb154504f8b ("mm,
	// page_alloc: spread allocations across zones before introducing
	// fragmentation", v5.0), which added alloc_flags_nofragment(): the
	// fast path of a ZONE_NORMAL request never sets ALLOC_NOFRAGMENT, so
	// __rmqueue may steal a sub-pageblock chunk from another migratetype's
	// block on the first pass instead of only claiming whole blocks (v4.18
	// mm/page_alloc.c get_page_from_freelist has no such flag). It does
	// not touch vm.defrag_mode (v6.15), which sets the flag on its own
	// when a script turns it on. Seed 003's kernels have it.
	NoAllocNofragment bool
}
