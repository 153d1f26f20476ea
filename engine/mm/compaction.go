package mm

// compaction.go models mm/compaction.c (linux-mm/linux-mm @04e60ad1, the
// tree that pairs with page_alloc.c @00cb34b0): the migrate and free
// scanners, pageblock skip bits and cached scanner positions, suitability
// and the fragmentation index, the finish rules, deferral, capture, direct
// compaction (try_to_compact_pages, compact_zone_order) and kcompactd with
// proactive compaction.
//
// # The scanners, and the free-list searches that steer them
//
// The migrate scanner walks pageblocks upward from the zone start (or the
// cached position), the free scanner downward from the zone end; a run ends
// when they meet. Before either takes its next block, a fast search looks
// at the buddy free lists instead of the memory map, as the kernel has
// since 5.1 (Mel Gorman's series "Increase success rates and reduce
// latency of compaction"):
//
//   - fast_isolate_freepages, for any cc->order > 0, walks the
//     MIGRATE_MOVABLE lists of the orders below cc->order (from
//     cc->search_order, round-robin down) from their tails, at most
//     freelist_scan_limit/2 entries (pageblock_nr_pages/2 on a fresh
//     start), for a chunk in the top quarter of the space between the
//     scanners, else the highest one in its top half. It takes one chunk;
//     outside async direct compaction, fast_isolate_around then scans that
//     chunk's pageblock for more. A fresh start that finds nothing moves
//     the free scanner to the highest block seen or, for direct
//     compaction, to the top half's lower mark. Lists are rotated
//     (move_freelist_head) so the next search starts where this one
//     stopped, and cc->fast_search_fail halves the limit per failure.
//   - fast_find_migrateblock, for costly orders (and not for
//     sub-pageblock unmovable direct requests, SYNC_FULL's ignored skip
//     hints, a pageblock being finished or a mid-block restart), walks the
//     MIGRATE_MOVABLE lists of orders cc->order-1 down to
//     PAGE_ALLOC_COSTLY_ORDER from their heads for a chunk low in the zone
//     whose block is not marked skipped, and sends the migrate scanner
//     there: that block already has free pages. When it fails, the linear
//     scan restarts once from the lowest block it had found
//     (cc->fast_start_pfn).
//
// Every list entry visited counts in compact_free_scanned or
// compact_migrate_scanned, as in the kernel. The searches matter most to
// async compaction, whose free scanner samples one PFN in
// COMPACT_CLUSTER_MAX per block and so misses every free page of a block
// whose holes fall between its samples; the sync free scanner samples too
// once it has met full blocks (its stride doubles per empty block).
//
// The skip bit is the searches' memory: the migrate scanner sets it on a
// block as it first isolates from it (test_and_set_skip) or when it leaves
// one with nothing isolated, the free scanner on a block it scanned to the
// end, so that searches and scans pass those blocks by until
// __reset_isolation_suitable.
//
// Per pageblock the kernel walks 512 struct pages. pagesim does too when
// the walk can change something; when the block's counters say a sync
// migrate scan must come up empty (no unpinned LRU pages) it charges the
// pages the kernel would have visited and sets the skip bit as the kernel
// would, in O(1).
//
// The skip bits are not free either. A run whose cached positions were
// reset (its predecessor's scanners met) starts at the zone start and
// passes every block marked skipped up to the free scanner, and
// __reset_isolation_suitable walks every block of the zone, reading a
// sample of its struct pages (every 8th) until one is on an LRU list or
// free: pagesim charges each block passed on its flags (PageblockFlags)
// and each struct page sampled (CompactScanPage), so these walks grow
// with the zone as the kernel's do. (The reset decides by the block's
// counters, not by the kernel's sample of every 8th page: a block whose LRU
// pages no sample would read has its skip bit cleared here and kept by the
// kernel. Sampling was tried: it changed synthetic scripts whose pinned
// pages sit at every other PFN, in step with the sample, and was not kept
// for want of time to rewrite them.)
//
// # Lock contention
//
// Async compaction backs off from contended locks, by today's rule (Mel
// Gorman's "mm, compaction: Finish pageblock scanning on contention",
// v5.1): compact_lock_irqsave() first tries zone->lock (the free
// scanner, isolate_freepages_block) or the lruvec's lru_lock (the migrate
// scanner, compact_folio_lruvec_lock_irqsave); if another task holds it,
// it records cc->contended and then takes the lock anyway. From then on
// the migrate scanner isolates to the end of its block ("isolate quickly
// to potentially remove one source of contention"), and
// __compact_finished() returns COMPACT_CONTENDED at its out label: after
// the scanners-met check, the "finish a pageblock" rule and the search
// for a suitable page, so a contended run still completes the block it is
// in and still succeeds if a page of the order is free. Sync runs
// (kcompactd, SYNC_LIGHT and SYNC_FULL direct compaction, compact_memory)
// just take the lock. fast_isolate_freepages and fast_find_migrateblock
// take zone->lock with a plain spin_lock_irqsave: they wait, and never
// mark a run contended. The callers do nothing special with the result:
// try_to_compact_pages defers only after a run at a priority other than
// COMPACT_PRIO_ASYNC, and a costly __GFP_NORETRY request's slow path is
// the same whatever its compaction returned (COMPACT_CONTENDED is neither
// COMPACT_SKIPPED nor, in the 2018 check, COMPACT_DEFERRED).
//
// The trylock reads the lock's timeline (sim.Lock) at the compacting
// task's time: it fails if a hold recorded there covers that time, or a
// hold asked for by then is still queued. A step runs to completion, so
// the timeline holds only what the steps run so far recorded: a task
// whose step runs later but at an earlier or equal simulated time is not
// seen, and a trylock can succeed where a machine's would have failed (the
// out-of-order caveat the block device and the lock waits share; see
// docs/FIDELITY.md). pagesim takes the free scanner's zone->lock once per
// block and the lru_lock once per isolated folio, where the kernel drops
// and takes them again at every COMPACT_CLUSTER_MAX PFNs and keeps the
// lru_lock across a run of isolations (isolate_migratepages_block retakes
// it only when lruvec != locked). The trylock is tried at those takes, so
// pagesim's migrate scanner tries it up to 32 times as often as the
// kernel's in a block dense with LRU folios (an async run meets contention
// more readily), and its free scanner less often (once a block against
// once per COMPACT_CLUSTER_MAX PFNs after each drop).
//
// # Simplifications
//
//   - No too_many_isolated() and no need_resched(): an async run is not
//     marked contended when its task should reschedule, and
//     try_to_compact_pages does not stop before the next zone for it (the
//     kernel's `prio == COMPACT_PRIO_ASYNC && need_resched()`); the
//     engine's tasks are not preempted inside a step.
//   - Seed 003's 2018 kernels ran the older rule, which pagesim does not
//     have (it runs today's for every seed): before the two v5.1 patches
//     ("Finish pageblock scanning on contention" and "Do not consider a
//     need to reschedule as contention") a failed trylock returned
//     without the lock and abandoned the block, need_resched() in an
//     async run counted as contention, compaction_alloc isolated no more
//     targets once contended, and __compact_finished() returned
//     COMPACT_CONTENDED before any other check. The first half needs
//     need_resched(), which the engine lacks.
//   - Non-LRU movable pages (zsmalloc, balloon) do not exist.
//   - compact_gap(order) is 2 << order, the mainline form (some trees cap
//     it at COMPACT_CLUSTER_MAX).
//   - compaction_alloc takes the most recently isolated target first; the
//     kernel takes the first isolated (cc->freepages are FIFO lists).

import (
	"github.com/pagesim/pagesim/engine/sim"
)

// CompactResult is enum compact_result, in its order (callers use max()).
type CompactResult int

const (
	COMPACT_NOT_SUITABLE_ZONE CompactResult = iota
	COMPACT_SKIPPED
	COMPACT_DEFERRED
	COMPACT_NO_SUITABLE_PAGE
	COMPACT_CONTINUE
	COMPACT_COMPLETE
	COMPACT_PARTIAL_SKIPPED
	COMPACT_CONTENDED
	COMPACT_SUCCESS
)

var compactResultNames = [...]string{"COMPACT_NOT_SUITABLE_ZONE", "COMPACT_SKIPPED", "COMPACT_DEFERRED", "COMPACT_NO_SUITABLE_PAGE",
	"COMPACT_CONTINUE", "COMPACT_COMPLETE", "COMPACT_PARTIAL_SKIPPED", "COMPACT_CONTENDED", "COMPACT_SUCCESS"}

// Name returns the enum's kernel name.
func (r CompactResult) Name() string {
	if r >= 0 && int(r) < len(compactResultNames) {
		return compactResultNames[r]
	}
	return "?"
}

// traceStatus maps a result to the COMPACTION_STATUS index of trace.go.
func (r CompactResult) traceStatus() int64 { return int64(r) }

const (
	compactMaxDeferShift       = 6
	compactClusterMax          = SWAP_CLUSTER_MAX
	hpageFragCheckIntervalMsec = 500
	compactionHPageOrder       = HPAGE_PMD_ORDER
)

// compactGap is compact_gap(): room for the pages being migrated and their
// copies.
func compactGap(order Order) uint64 { return 2 << order }

type migrateMode uint8

const (
	migrateAsync migrateMode = iota
	migrateSyncLight
	migrateSync
)

// compactState is the compaction part of struct zone.
type compactState struct {
	considered    uint64
	deferShift    uint
	orderFailed   int
	cachedFreePFN PFN
	cachedMigPFN  [2]PFN
	// initMigratePFN and initFreePFN are compact_init_migrate_pfn and
	// compact_init_free_pfn: 0 from boot until __reset_isolation_suitable
	// first sets them to the lowest block with LRU pages and the highest
	// MIGRATE_MOVABLE block with free pages. Until then no run counts as
	// a whole-zone scan unless asked to be (compact_zone), and every
	// fast_isolate_freepages search is a fresh start.
	initMigratePFN PFN
	initFreePFN    PFN
	blockskipFlush bool
	// last records where the latest compact_zone() run on the zone left
	// its scanners (for the map; the kernel shows them only in the
	// mm_compaction_end tracepoint).
	last LastCompaction
}

func (c *compactState) init(z *Zone) {
	c.orderFailed = 0
	if z.SpannedPages == 0 {
		return
	}
	c.cachedFreePFN = (z.EndPFN() - 1) &^ (PageblockNrPages - 1)
	c.cachedMigPFN = [2]PFN{z.StartPFN, z.StartPFN}
	c.initMigratePFN, c.initFreePFN = 0, 0
}

// captureControl is struct capture_control (owned by the allocator).
type captureControl struct {
	zone        *Zone
	migratetype MigrateType
	order       Order
	page        PFN
}

// compactControl is struct compact_control.
type compactControl struct {
	zone                *Zone
	order               int // -1 for compact_memory and proactive compaction
	gfp                 GFP
	migratetype         MigrateType
	allocFlags          AllocFlags
	highestZoneidx      ZoneType
	mode                migrateMode
	ignoreSkipHint      bool
	ignoreBlockSuitable bool
	directCompaction    bool
	proactive           bool
	wholeZone           bool
	finishPageblock     bool
	// contended is cc->contended: set by compactLockIrqsave when an async
	// run finds zone->lock or an lru_lock held (once set, later takes
	// do not try again); from then on the migrate scanner isolates to the
	// end of its block, and _compactFinished ends the run with
	// COMPACT_CONTENDED at the next block boundary where no suitable page
	// is free. Never set in a sync run.
	contended  bool
	freePFN    PFN
	migratePFN PFN
	// fastStartPFN is cc->fast_start_pfn: 0 until fast_find_migrateblock
	// finds a block, then the lowest free PFN it found there;
	// fastStartPFNUsed (the kernel's ULONG_MAX) once reinit_migrate_pfn
	// has restarted the linear scan from it. compact_zone() zeroes it.
	fastStartPFN PFN
	// searchOrder is cc->search_order: the order fast_isolate_freepages
	// searches first, in [0, order) once a search has run. It and
	// fastSearchFail live as long as the compact_control: one zone for
	// direct compaction, every zone of a kcompactd_do_work() pass.
	searchOrder int
	// fastSearchFail is cc->fast_search_fail: fast searches that found
	// nothing since the last one that did; each halves the lists' scan
	// limit (freelist_scan_limit).
	fastSearchFail      uint
	totalMigrateScanned uint64
	totalFreeScanned    uint64
	migratepages        []PFN // isolated source folio heads
	nrMigratepages      uint64
	freepages           [NR_PAGE_ORDERS][]PFN // isolated free chunks by order
	nrFreepages         uint64
	// lastMigrated and updateCached are compact_zone()'s locals
	// last_migrated_pfn and update_cached, kept here so that a run that
	// yields (below) goes on where it stopped.
	lastMigrated PFN
	updateCached bool
	// yields is set for a run that ends its task's step whenever the
	// task's clock is ahead of the world's at the top of the loop
	// (compactZone's essay): its caller gets compactYield and calls
	// compactZoneResume in the task's next step.
	yields bool
}

// ---------------------------------------------------------------------------
// Fragmentation index (mm/vmstat.c)

type contigPageInfo struct {
	freePages, freeBlocksTotal, freeBlocksSuitable uint64
}

func fillContigPageInfo(z *Zone, suitable Order) contigPageInfo {
	var info contigPageInfo
	for o := Order(0); o < NR_PAGE_ORDERS; o++ {
		blocks := z.freeArea[o].nrFree
		info.freeBlocksTotal += blocks
		info.freePages += blocks << o
		if o >= suitable {
			info.freeBlocksSuitable += blocks << (o - suitable)
		}
	}
	return info
}

// fragmentationIndex is fragmentation_index(): -1000 if a free block of the
// order exists, else 0..1000 (0: failure from lack of memory, 1000: from
// fragmentation).
func fragmentationIndex(z *Zone, order Order) int {
	info := fillContigPageInfo(z, order)
	if info.freeBlocksTotal == 0 {
		return 0
	}
	if info.freeBlocksSuitable > 0 {
		return -1000
	}
	requested := order.Pages()
	return 1000 - int((1000+info.freePages*1000/requested)/info.freeBlocksTotal)
}

// extfragForOrder is extfrag_for_order(): percent of free memory in blocks
// smaller than order.
func extfragForOrder(z *Zone, order Order) uint64 {
	info := fillContigPageInfo(z, order)
	if info.freePages == 0 {
		return 0
	}
	return (info.freePages - (info.freeBlocksSuitable << order)) * 100 / info.freePages
}

// ---------------------------------------------------------------------------
// Deferral

// deferCompaction is defer_compaction().
func (m *Machine) deferCompaction(t *sim.Task, z *Zone, order Order) {
	c := &z.compact
	c.considered = 0
	c.deferShift++
	if int(order) < c.orderFailed {
		c.orderFailed = int(order)
	}
	if c.deferShift > compactMaxDeferShift {
		c.deferShift = compactMaxDeferShift
	}
	m.traceDefer(t, TraceMmCompactionDeferCompaction, z, order)
}

// compactionDeferred is compaction_deferred(): true means skip this time.
func (m *Machine) compactionDeferred(t *sim.Task, z *Zone, order Order) bool {
	c := &z.compact
	limit := uint64(1) << c.deferShift
	if int(order) < c.orderFailed {
		return false
	}
	c.considered++
	if c.considered >= limit {
		c.considered = limit
		return false
	}
	m.traceDefer(t, TraceMmCompactionDeferred, z, order)
	return true
}

// compactionDeferReset is compaction_defer_reset().
func (m *Machine) compactionDeferReset(t *sim.Task, z *Zone, order Order, allocSuccess bool) {
	c := &z.compact
	if allocSuccess {
		c.considered = 0
		c.deferShift = 0
	}
	if int(order) >= c.orderFailed {
		c.orderFailed = int(order) + 1
	}
	m.traceDefer(t, TraceMmCompactionDeferReset, z, order)
}

// compactionRestarting is compaction_restarting().
func compactionRestarting(z *Zone, order Order) bool {
	c := &z.compact
	if int(order) < c.orderFailed {
		return false
	}
	return c.deferShift == compactMaxDeferShift && c.considered >= uint64(1)<<c.deferShift
}

func (m *Machine) traceDefer(t *sim.Task, id TraceID, z *Zone, order Order) {
	c := &z.compact
	m.Trace.Emit(t, id, int64(z.Node.ID), int64(z.Type), int64(order), int64(c.orderFailed), int64(c.considered), int64(1)<<c.deferShift)
}

// DeferState returns a zone's deferral state (compact_considered,
// compact_defer_shift, compact_order_failed).
func (z *Zone) DeferState() (considered uint64, shift uint, orderFailed int) {
	return z.compact.considered, z.compact.deferShift, z.compact.orderFailed
}

// ---------------------------------------------------------------------------
// Skip bits and cached positions

// resetCachedPositions is reset_cached_positions().
func resetCachedPositions(z *Zone) {
	z.compact.cachedMigPFN = [2]PFN{z.StartPFN, z.StartPFN}
	z.compact.cachedFreePFN = (z.EndPFN() - 1) &^ (PageblockNrPages - 1)
}

// _resetIsolationPFN is __reset_isolation_pfn(): clear the block's skip bit
// if it holds an LRU page (source side) or a free page (target side). The
// kernel samples every 8th struct page (1 << PAGE_ALLOC_COSTLY_ORDER) from
// the block's first until one is on an LRU list or a free chunk's head;
// pagesim reads the block's counters instead, and returns the struct pages
// the kernel's sample reads, which the caller charges: the first when the
// block has what is looked for (in a block full of page cache the first
// sample finds it), all 64 when it has not.
func (m *Machine) _resetIsolationPFN(z *Zone, pfn PFN, checkSource, checkTarget bool) (bool, uint64) {
	if !z.SpansPFN(pfn) {
		return false, 0
	}
	b := m.pageblockOf(pfn)
	p := &m.pages[pfn&^(PageblockNrPages-1)]
	if p.flags&pgHead != 0 && p.order >= PageblockOrder {
		return false, 1 // pageblock_skip_persistent
	}
	if checkSource && checkTarget && !b.skip {
		return true, 1
	}
	if !checkSource && checkTarget && b.mt != MIGRATE_MOVABLE {
		return false, 1
	}
	if (checkSource && b.nrLRU > 0) || (checkTarget && b.nrFree > 0) {
		b.skip = false
		return true, 1
	}
	start := max(pageblockStartPFN(pfn), z.StartPFN)
	end := min(pageblockEndPFN(pfn), z.EndPFN())
	return false, uint64(end-start+(1<<PAGE_ALLOC_COSTLY_ORDER)-1) >> PAGE_ALLOC_COSTLY_ORDER
}

// _resetIsolationSuitable is __reset_isolation_suitable(): after a direct
// compaction's scanners met (compact_blockskip_flush), walk the zone from
// both ends to the middle, clearing the skip bits of blocks that may be a
// migration source (the lower half) or target (the upper half), and set
// the scanners' restart points. t, the task that runs it (kswapd going to
// sleep, or a compaction restarting after deferral), is charged the walk:
// a PageblockFlags per block, a CompactScanPage per struct page sampled.
func (m *Machine) _resetIsolationSuitable(t *sim.Task, z *Zone) {
	var w resetWalk
	m.resetIsolationWalk(t, z, &w)
}

// resetWalk is a reset_isolation_suitable() walk's locals that live
// across the cond_resched() at the top of each step of
// __reset_isolation_suitable()'s loop (linux-mm mm/compaction.c
// @04e60ad1). kswapd's walk, in kswapd_try_to_sleep(), stops there
// (stops; resetResched); the others run to the end.
type resetWalk struct {
	stops bool
	// zone is the index of the zone reset_isolation_suitable() is at;
	// inZone says its walk has begun; stopped says it stopped at the
	// cond_resched() of the loop step it is at.
	zone            int
	inZone, stopped bool
	// __reset_isolation_suitable()'s locals.
	migratePFN, freePFN     PFN
	resetMigrate, resetFree PFN
	sourceSet, freeSet      bool
}

// resetResched is the cond_resched() of __reset_isolation_suitable()'s
// loop in kswapd's walk (w.stops): it charges the call and reports
// whether the step ends there (sim.Task.NeedResched).
func (m *Machine) resetResched(t *sim.Task, w *resetWalk) bool {
	if !w.stops || t == nil || !m.kswapdCondResched(t) {
		return false
	}
	w.stopped = true
	return true
}

// resetIsolationWalk runs or resumes __reset_isolation_suitable() on z
// with w. It returns false when the walk stopped at its cond_resched().
func (m *Machine) resetIsolationWalk(t *sim.Task, z *Zone, w *resetWalk) bool {
	c := &z.compact
	if !w.inZone {
		if !c.blockskipFlush || z.SpannedPages == 0 {
			return true
		}
		c.blockskipFlush = false
		w.inZone = true
		w.migratePFN = z.StartPFN
		w.freePFN = z.EndPFN() - 1
		w.resetMigrate, w.resetFree = w.freePFN, w.migratePFN
		w.sourceSet, w.freeSet = false, false
	}
	for ; w.migratePFN < w.freePFN; w.migratePFN, w.freePFN = w.migratePFN+PageblockNrPages, w.freePFN-PageblockNrPages {
		if w.stopped {
			w.stopped = false // resumed after the cond_resched()
		} else if m.resetResched(t, w) {
			return false
		}
		ok, n1 := m._resetIsolationPFN(z, w.migratePFN, true, w.sourceSet)
		if ok && w.migratePFN < w.resetMigrate {
			w.sourceSet = true
			w.resetMigrate = w.migratePFN
			c.initMigratePFN = w.resetMigrate
			c.cachedMigPFN = [2]PFN{w.resetMigrate, w.resetMigrate}
		}
		ok, n2 := m._resetIsolationPFN(z, w.freePFN, w.freeSet, true)
		if ok && w.freePFN > w.resetFree {
			w.freeSet = true
			w.resetFree = w.freePFN
			c.initFreePFN = w.resetFree
			c.cachedFreePFN = w.resetFree
		}
		if t != nil {
			t.Charge(2*m.Cost.PageblockFlags + m.Cost.CompactScanPage*sim.Time(n1+n2))
		}
		if w.freePFN < PageblockNrPages {
			break
		}
	}
	if w.resetMigrate >= w.resetFree {
		c.cachedMigPFN = [2]PFN{w.migratePFN, w.migratePFN}
		c.cachedFreePFN = w.freePFN
	}
	w.inZone = false
	return true
}

// resetIsolationSuitablePgdat is reset_isolation_suitable(pgdat).
func (m *Machine) resetIsolationSuitablePgdat(t *sim.Task, n *Node) {
	var w resetWalk
	m.resetIsolationSuitablePgdatFrom(t, n, &w)
}

// resetIsolationSuitablePgdatFrom is reset_isolation_suitable(pgdat) run
// or resumed with w. It returns false when the walk stopped at a
// cond_resched().
func (m *Machine) resetIsolationSuitablePgdatFrom(t *sim.Task, n *Node, w *resetWalk) bool {
	for ; w.zone < len(n.Zones); w.zone++ {
		if z := n.Zones[w.zone]; z.Populated() && !m.resetIsolationWalk(t, z, w) {
			return false
		}
	}
	return true
}

func (cc *compactControl) isolationSuitable(b *pageblock) bool {
	return cc.ignoreSkipHint || !b.skip
}

// updateCachedMigrate is update_cached_migrate(): raise the cached migrate
// scanner positions to pageblock_end_pfn(pfn). Its callers pass the end of
// the block just scanned or passed (isolate_migratepages:
// update_cached_migrate(cc, block_end_pfn); isolate_migratepages_block:
// update_cached_migrate(cc, low_pfn) with low_pfn == end_pfn; linux-mm
// mm/compaction.c @04e60ad1), and pageblock_end_pfn() is
// ALIGN(pfn + 1, pageblock_nr_pages) (include/linux/pageblock-flags.h): for
// an aligned end that is one block further, so the next run starts one
// block past the one just finished and never scans the block right after
// it. pagesim keeps that quirk.
func (cc *compactControl) updateCachedMigrate(pfn PFN) {
	pfn = alignUp(pfn+1, PageblockNrPages)
	c := &cc.zone.compact
	if pfn > c.cachedMigPFN[0] {
		c.cachedMigPFN[0] = pfn
	}
	if cc.mode != migrateAsync && pfn > c.cachedMigPFN[1] {
		c.cachedMigPFN[1] = pfn
	}
}

// updatePageblockSkip is update_pageblock_skip(): mark the block at
// blockPFN skipped and pull the cached free scanner position down to pfn.
func (m *Machine) updatePageblockSkip(cc *compactControl, blockPFN, pfn PFN) {
	m.pageblockOf(blockPFN).skip = true
	if pfn < cc.zone.compact.cachedFreePFN {
		cc.zone.compact.cachedFreePFN = pfn
	}
}

// testAndSetSkip is test_and_set_skip(): mark the block skipped as the
// migrate scanner first isolates from it, and report whether it already
// was (another scan got there first). Runs that ignore the hint neither
// read nor set it.
func (cc *compactControl) testAndSetSkip(b *pageblock) bool {
	if cc.ignoreSkipHint {
		return false
	}
	skip := b.skip
	b.skip = true
	return skip
}

// ---------------------------------------------------------------------------
// Suitability

// _compactionSuitable is __compaction_suitable().
func (m *Machine) _compactionSuitable(z *Zone, order Order, watermark uint64, highest ZoneType, free int64) bool {
	watermark += compactGap(order)
	if order > PAGE_ALLOC_COSTLY_ORDER {
		watermark += z.WmarkPages(WMARK_LOW) - z.WmarkPages(WMARK_MIN)
	}
	return m._zoneWatermarkOK(z, 0, watermark, highest, ALLOC_CMA, free, MIGRATE_MOVABLE)
}

func (m *Machine) compactionSuitable(t *sim.Task, z *Zone, order Order, watermark uint64, highest ZoneType) bool {
	suitable := m._compactionSuitable(z, order, watermark, highest, z.Stat[NR_FREE_PAGES])
	r := COMPACT_SKIPPED
	if suitable {
		r = COMPACT_CONTINUE
		if order > PAGE_ALLOC_COSTLY_ORDER {
			fi := fragmentationIndex(z, order)
			if fi >= 0 && fi <= m.Sysctl.ExtfragThreshold {
				suitable = false
				r = COMPACT_NOT_SUITABLE_ZONE
			}
		}
	}
	if t != nil {
		m.Trace.Emit(t, TraceMmCompactionSuitable, int64(z.Node.ID), int64(z.Type), int64(order), r.traceStatus())
	}
	return suitable
}

// compactionSuitAllocationOrder is compaction_suit_allocation_order().
func (m *Machine) compactionSuitAllocationOrder(t *sim.Task, z *Zone, order Order, highest ZoneType, allocFlags AllocFlags, async, kcompactd bool, mt MigrateType) CompactResult {
	free := z.Stat[NR_FREE_PAGES]
	if kcompactd && m.Sysctl.DefragMode != 0 {
		free = z.Stat[NR_FREE_PAGES_BLOCKS]
	}
	watermark := z.WmarkPages(Watermark(allocFlags & ALLOC_WMARK_MASK))
	// Seed 001 patch 2 makes the up-front check __zone_watermark_ok_mt().
	checkMT := MIGRATE_TYPES
	if m.Patches.HighOrderCheckHonoursNofragment {
		checkMT = mt
	}
	if m._zoneWatermarkOK(z, order, watermark, highest, allocFlags, free, checkMT) {
		return COMPACT_SUCCESS
	}
	if order > PAGE_ALLOC_COSTLY_ORDER && async && allocFlags&ALLOC_CMA == 0 {
		if !m._zoneWatermarkOK(z, 0, watermark+compactGap(order), highest, 0, z.Stat[NR_FREE_PAGES], MIGRATE_TYPES) {
			return COMPACT_SKIPPED
		}
	}
	if !m.compactionSuitable(t, z, order, watermark, highest) {
		return COMPACT_SKIPPED
	}
	return COMPACT_CONTINUE
}

// compactionZonelistSuitable is compaction_zonelist_suitable().
func (m *Machine) compactionZonelistSuitable(ac *allocContext, order Order, allocFlags AllocFlags) bool {
	for _, z := range ac.zonelist {
		if z.Type > ac.highestZoneidx || !ac.nodemask.Has(z.Node.ID) {
			continue
		}
		available := int64(m.zoneReclaimablePages(z)/uint64(max(order, 1))) + z.Stat[NR_FREE_PAGES]
		if m._compactionSuitable(z, order, z.WmarkPages(WMARK_MIN), ac.highestZoneidx, available) {
			return true
		}
	}
	return false
}

// ---------------------------------------------------------------------------
// Finish rules

func (cc *compactControl) scannersMet() bool {
	return cc.freePFN>>PageblockOrder <= cc.migratePFN>>PageblockOrder
}

// compactFinished is compact_finished() / __compact_finished().
func (m *Machine) compactFinished(t *sim.Task, cc *compactControl) CompactResult {
	ret := m._compactFinished(t, cc)
	if cc.order >= 0 {
		m.Trace.Emit(t, TraceMmCompactionFinished, int64(cc.zone.Node.ID), int64(cc.zone.Type), int64(cc.order), ret.traceStatus())
	}
	if ret == COMPACT_NO_SUITABLE_PAGE {
		ret = COMPACT_CONTINUE
	}
	return ret
}

func (m *Machine) _compactFinished(t *sim.Task, cc *compactControl) CompactResult {
	z := cc.zone
	if cc.scannersMet() {
		resetCachedPositions(z)
		if cc.directCompaction {
			z.compact.blockskipFlush = true
		}
		if cc.wholeZone {
			return COMPACT_COMPLETE
		}
		return COMPACT_PARTIAL_SKIPPED
	}
	if cc.proactive {
		if m.kswapdIsRunning(z.Node, t.Now) {
			return COMPACT_PARTIAL_SKIPPED
		}
		ret := COMPACT_SUCCESS
		if extfragForOrder(z, compactionHPageOrder) > uint64(m.fragmentationScoreWmark(true)) {
			ret = COMPACT_CONTINUE
		}
		return cc.compactFinishedOut(ret)
	}
	if cc.order < 0 {
		return COMPACT_CONTINUE
	}
	if cc.migratePFN&(PageblockNrPages-1) != 0 {
		return COMPACT_CONTINUE
	}
	order := Order(cc.order)
	if m.Sysctl.DefragMode != 0 && !cc.directCompaction {
		if m._zoneWatermarkOK(z, order, z.WmarkPages(WMARK_HIGH), cc.highestZoneidx, cc.allocFlags, z.Stat[NR_FREE_PAGES_BLOCKS], MIGRATE_TYPES) {
			return COMPACT_SUCCESS
		}
		return COMPACT_CONTINUE
	}
	// Seed 001 patch 2: under ALLOC_NOFRAGMENT, a sub-pageblock request
	// cannot take another type's page below pageblock_order.
	nofrag := m.Patches.HighOrderCheckHonoursNofragment && cc.allocFlags&ALLOC_NOFRAGMENT != 0
	for o := order; o < NR_PAGE_ORDERS; o++ {
		area := &z.freeArea[o]
		if area.list[cc.migratetype].n > 0 {
			return COMPACT_SUCCESS
		}
		if cc.migratetype == MIGRATE_MOVABLE && area.list[MIGRATE_CMA].n > 0 {
			return COMPACT_SUCCESS
		}
		if nofrag && o < PageblockOrder {
			continue
		}
		if cc.migratetype < MIGRATE_PCPTYPES {
			if res, _ := findSuitableFallback(area, o, cc.migratetype, true); res == fallbackFound {
				return COMPACT_SUCCESS
			}
		}
	}
	return cc.compactFinishedOut(COMPACT_NO_SUITABLE_PAGE)
}

// compactFinishedOut is __compact_finished()'s out label: a run that met a
// contended lock ends with COMPACT_CONTENDED (fatal signals are not
// modelled). Only the proactive check and the search for a suitable page
// get there: a run whose scanners met, or that is still inside a
// pageblock, or that found a page, returns before it.
func (cc *compactControl) compactFinishedOut(ret CompactResult) CompactResult {
	if cc.contended {
		return COMPACT_CONTENDED
	}
	return ret
}

// ---------------------------------------------------------------------------
// Free scanner

// _isolateFreePage is __isolate_free_page(): take a free chunk off its list
// for compaction, if the zone stays above its min watermark.
func (m *Machine) _isolateFreePage(z *Zone, pfn PFN, order Order) bool {
	mt := m.getPageblockMigratetype(pfn)
	if mt != MIGRATE_ISOLATE {
		wm := z.watermark[WMARK_MIN] + order.Pages()
		if !m._zoneWatermarkOK(z, 0, wm, 0, ALLOC_CMA, z.Stat[NR_FREE_PAGES], MIGRATE_MOVABLE) {
			return false
		}
		m.accountFreepages(z, -int64(order.Pages()), mt)
	}
	m._delPageFromFreeList(z, pfn, order, mt)
	if order >= PageblockOrder-1 {
		// "Set the pageblock if the isolated page is at least half of
		// a pageblock": move_freepages_block() retypes each block and
		// moves the block's other free chunks to the MOVABLE lists with
		// it (mm/page_alloc.c __isolate_free_page, linux-mm @04e60ad1;
		// since 6.10's "mm: page_alloc: close migratetype race between
		// freeing and stealing"). Retyping alone left them on the old
		// type's lists inside a MOVABLE block.
		for p := pfn; p < pfn+PFN(1)<<order; p += PageblockNrPages {
			if bmt := m.getPageblockMigratetype(p); bmt != MIGRATE_ISOLATE && bmt != MIGRATE_CMA && bmt != MIGRATE_HIGHATOMIC {
				m.moveFreepagesBlockType(z, p, bmt, MIGRATE_MOVABLE)
			}
		}
	}
	p := &m.pages[pfn]
	p.flags = 0
	p.order = uint8(order)
	return true
}

// suitableMigrationTarget is suitable_migration_target().
func (m *Machine) suitableMigrationTarget(cc *compactControl, pfn PFN) bool {
	p := &m.pages[pfn]
	limit := Order(PageblockOrder)
	if cc.order > 0 {
		limit = Order(cc.order)
	}
	if p.flags&pgBuddy != 0 && Order(p.order) >= limit {
		return false
	}
	if cc.ignoreBlockSuitable {
		return true
	}
	mt := m.getPageblockMigratetype(pfn)
	return mt == MIGRATE_MOVABLE || mt == MIGRATE_CMA
}

// compactLockIrqsave is compact_lock_irqsave() (linux-mm @04e60ad1): an
// async run that has not yet met contention first tries the lock, and if
// some task holds it (or waits for it) at t's time, records cc.contended;
// either way it then takes the lock, waiting as Lock does. Sync runs just
// take it. The trylock reads the lock's timeline at t's time, which holds
// what the steps run so far recorded: a task whose step runs later, at an
// earlier or the same simulated time, is not seen (see the essay).
func (cc *compactControl) compactLockIrqsave(t *sim.Task, l *sim.Lock) {
	if cc.mode == migrateAsync && !cc.contended && l.HeldAt(t, t.Now) {
		cc.contended = true
	}
	l.Lock(t)
}

// isolateFreepagesBlock is isolate_freepages_block() (not strict) for one
// block: walk [start, end) with the stride, stepping over compound pages
// and taking free chunks until there are enough targets. Returns the PFN
// the scan stopped at and the pages isolated. nr_scanned counts as the
// kernel counts it (a compound page or an isolated chunk counts all its
// pages); the time charged is one CompactScanPage per struct page read.
func (m *Machine) isolateFreepagesBlock(t *sim.Task, cc *compactControl, start, end PFN, stride PFN) (PFN, uint64) {
	z := cc.zone
	var scanned, visits, isolated uint64
	pfn := start
	locked := false
	for ; pfn < end; pfn += stride {
		scanned++
		visits++
		p := &m.pages[pfn]
		if p.flags&(pgHead|pgTail) != 0 {
			// PageCompound: skip a whole compound page at its head
			// (compound_order() of a tail page is 0).
			if p.flags&pgHead != 0 {
				if n := PFN(1) << p.order; pfn+n <= end {
					pfn += n - 1
					scanned += uint64(n) - 1
				}
			}
			continue
		}
		if p.flags&pgBuddy == 0 {
			continue
		}
		if !locked {
			cc.compactLockIrqsave(t, &z.Lock)
			locked = true
		}
		order := Order(p.order)
		if !m._isolateFreePage(z, pfn, order) {
			break
		}
		n := PFN(1) << order
		scanned += uint64(n) - 1
		isolated += uint64(n)
		cc.nrFreepages += uint64(n)
		cc.freepages[order] = append(cc.freepages[order], pfn)
		if cc.nrMigratepages <= cc.nrFreepages {
			pfn += n
			break
		}
		pfn += n - 1
	}
	if locked {
		t.Charge(m.Cost.BuddyOp * sim.Time(1+isolated/32))
		z.Lock.Unlock(t)
	}
	if pfn > end {
		pfn = end
	}
	t.Charge(m.Cost.CompactScanPage * sim.Time(visits))
	m.Trace.Emit(t, TraceMmCompactionIsolateFreepages, int64(start), int64(pfn), int64(scanned), int64(isolated))
	cc.totalFreeScanned += scanned
	if isolated > 0 {
		m.countVMEvents(COMPACTISOLATED, isolated)
	}
	return pfn, isolated
}

// freelistScanLimit is freelist_scan_limit(): how many free-list entries a
// fast search may visit, halved by every consecutive failed search.
func (cc *compactControl) freelistScanLimit() uint {
	return compactClusterMax>>min(cc.fastSearchFail, 63) + 1
}

// pageblockStartPFN is pageblock_start_pfn().
func pageblockStartPFN(pfn PFN) PFN { return pfn &^ (PageblockNrPages - 1) }

// pageblockEndPFN is pageblock_end_pfn().
func pageblockEndPFN(pfn PFN) PFN { return alignUp(pfn+1, PageblockNrPages) }

// pageblockPFNToPage is pageblock_pfn_to_page(): true if [start, end) lies
// in the zone (the kernel returns start's struct page, or NULL).
func pageblockPFNToPage(z *Zone, start, end PFN) bool {
	return start < end && z.SpansPFN(start) && z.SpansPFN(end-1)
}

// moveFreelistHead is move_freelist_head(): rotate the list so that pfn is
// its first entry. fast_isolate_freepages walks the list from its tail, so
// the entries it has not reached yet (those before pfn) are next to be
// walked.
func (l *freeList) moveFreelistHead(pages []page, pfn PFN) {
	if pfn == l.head {
		return
	}
	before := pages[pfn].prev
	pages[l.tail].next = l.head
	pages[l.head].prev = l.tail
	pages[before].next = NilPFN
	pages[pfn].prev = NilPFN
	l.head, l.tail = pfn, before
}

// moveFreelistTail is move_freelist_tail(): rotate the list so that pfn is
// its last entry. fast_find_migrateblock walks the list from its head, so
// the entries it has passed (pfn and those before it) are walked last next
// time.
func (l *freeList) moveFreelistTail(pages []page, pfn PFN) {
	if pfn == l.tail {
		return
	}
	after := pages[pfn].next
	pages[l.tail].next = l.head
	pages[l.head].prev = l.tail
	pages[pfn].next = NilPFN
	pages[after].prev = NilPFN
	l.head, l.tail = after, pfn
}

// fastIsolateAround is fast_isolate_around(): after the fast search found a
// free page, scan the rest of its pageblock (stride 1) for more, and mark
// the block skipped if the scan reached its end. Async direct compaction
// keeps to the one page.
func (m *Machine) fastIsolateAround(t *sim.Task, cc *compactControl, pfn PFN) {
	if cc.nrFreepages >= cc.nrMigratepages {
		return
	}
	if cc.directCompaction && cc.mode == migrateAsync {
		return
	}
	z := cc.zone
	start := max(pageblockStartPFN(pfn), z.StartPFN)
	end := min(pageblockEndPFN(pfn), z.EndPFN())
	if !pageblockPFNToPage(z, start, end) {
		return
	}
	if stop, _ := m.isolateFreepagesBlock(t, cc, start, end, 1); stop == end {
		// set_pageblock_skip() directly: the kernel does this even
		// when the skip hint is ignored (only alloc_contig's
		// no_set_skip_hint prevents it).
		m.pageblockOf(start).skip = true
	}
}

// nextSearchOrder is next_search_order(): the orders below cc.order are
// searched round-robin, downward from cc.searchOrder; -1 once the search
// has come round to where it started (which moves the next search's start
// one order down).
func (cc *compactControl) nextSearchOrder(order int) int {
	order--
	if order < 0 {
		order = cc.order - 1
	}
	if order == cc.searchOrder {
		cc.searchOrder--
		if cc.searchOrder < 0 {
			cc.searchOrder = cc.order - 1
		}
		return -1
	}
	return order
}

// fastIsolateFreepages is fast_isolate_freepages() (linux-mm @04e60ad1):
// before the free scanner walks pageblocks, look on the MIGRATE_MOVABLE
// free lists of the orders below cc.order for a chunk in the top quarter
// of the space between the scanners (or, failing that, the highest one in
// the top half seen within the scan limit), and take it. Each list is
// walked from its tail, at most limit entries, and rotated so that the
// next search starts where this one stopped. Every entry visited counts in
// compact_free_scanned.
func (m *Machine) fastIsolateFreepages(t *sim.Task, cc *compactControl) {
	// Full compaction passes in a negative order.
	if cc.order <= 0 {
		return
	}
	z := cc.zone
	limit := max(1, cc.freelistScanLimit()>>1)
	var nrScanned, totalIsolated uint64
	var highest PFN
	page := NilPFN
	scanStart := false
	// Starting the scan: search deeper, and fall back to the highest
	// PFN seen.
	if cc.freePFN >= z.compact.initFreePFN {
		limit = PageblockNrPages >> 1
		scanStart = true
	}
	// Preferred: the top quarter of the scan space; acceptable: the top
	// half. (The kernel's unsigned long arithmetic wraps when the free
	// scanner has passed the migrate scanner, which puts both marks
	// above every PFN: nothing qualifies.)
	lowPFN, minPFN := NilPFN, NilPFN
	if cc.freePFN >= cc.migratePFN {
		distance := cc.freePFN - cc.migratePFN
		lowPFN = pageblockStartPFN(cc.freePFN - distance>>2)
		minPFN = pageblockStartPFN(cc.freePFN - distance>>1)
	}
	// Start from the order of the last success, or the next one after
	// a failure.
	cc.searchOrder = min(cc.order-1, cc.searchOrder)
	order := cc.searchOrder
	for page == NilPFN && order >= 0 {
		area := &z.freeArea[order]
		if area.nrFree == 0 {
			order = cc.nextSearchOrder(order)
			continue
		}
		z.Lock.Lock(t)
		freelist := &area.list[MIGRATE_MOVABLE]
		var orderScanned uint
		var highPFN PFN
		// freepage is where the walk stopped; NilPFN if it ran off
		// the list (then the kernel's move_freelist_head is a no-op).
		freepage := NilPFN
		for pfn := freelist.tail; pfn != NilPFN; pfn = m.pages[pfn].prev {
			orderScanned++
			nrScanned++
			if pfn >= highest {
				highest = max(pageblockStartPFN(pfn), z.StartPFN)
			}
			if pfn >= lowPFN {
				cc.fastSearchFail = 0
				cc.searchOrder = order
				page = pfn
				freepage = pfn
				break
			}
			if pfn >= minPFN && pfn > highPFN {
				highPFN = pfn
				// Shorten the scan once a candidate is found.
				limit >>= 1
			}
			if orderScanned >= limit {
				freepage = pfn
				break
			}
		}
		t.Charge(m.Cost.FreeListEntry * sim.Time(orderScanned))
		// A candidate from the top half if none from the top quarter.
		if page == NilPFN && highPFN != 0 {
			page = highPFN
			freepage = page
		}
		// Reorder so that a future search skips recent pages.
		if freepage != NilPFN {
			freelist.moveFreelistHead(m.pages, freepage)
		}
		if page != NilPFN {
			if m._isolateFreePage(z, page, Order(order)) {
				nrIsolated := Order(order).Pages()
				nrScanned += nrIsolated - 1
				totalIsolated += nrIsolated
				cc.nrFreepages += nrIsolated
				cc.freepages[order] = append(cc.freepages[order], page)
				m.countVMEvents(COMPACTISOLATED, nrIsolated)
				t.Charge(m.Cost.BuddyOp)
			} else {
				// Isolation failed (the zone is at its min
				// watermark): abort the search.
				order = cc.searchOrder + 1
				page = NilPFN
			}
		}
		z.Lock.Unlock(t)
		// Enough targets: skip the rest of the search.
		if cc.nrFreepages >= cc.nrMigratepages {
			break
		}
		// Scan less of the next order, so the total is tied to
		// freelist_scan_limit.
		if orderScanned >= limit {
			limit = max(1, limit>>1)
		}
		order = cc.nextSearchOrder(order)
	}
	m.Trace.Emit(t, TraceMmCompactionFastIsolateFreepages, int64(minPFN), int64(cc.freePFN), int64(nrScanned), int64(totalIsolated))
	if page == NilPFN {
		cc.fastSearchFail++
		if scanStart {
			// Use the highest PFN seen in the top half; if none,
			// direct compaction is pessimistic and starts the
			// free scanner at the top half's lower mark.
			if highest >= minPFN {
				page = highest
				cc.freePFN = highest
			} else if cc.directCompaction && minPFN < m.maxPFN {
				end := min(pageblockEndPFN(minPFN), z.EndPFN())
				if pageblockPFNToPage(z, minPFN, end) && m.suitableMigrationTarget(cc, minPFN) {
					page = minPFN
				}
				cc.freePFN = minPFN
			}
		}
	}
	if highest != 0 && highest >= z.compact.cachedFreePFN {
		highest -= PageblockNrPages
		z.compact.cachedFreePFN = highest
	}
	cc.totalFreeScanned += nrScanned
	if page == NilPFN {
		return
	}
	m.fastIsolateAround(t, cc, page)
}

// isolateFreepages is isolate_freepages(): a fast search of the free lists
// first; if it isolated nothing, the linear scan of pageblocks downward
// from cc.freePFN to the block after the migrate scanner's.
func (m *Machine) isolateFreepages(t *sim.Task, cc *compactControl) {
	m.fastIsolateFreepages(t, cc)
	if cc.nrFreepages > 0 {
		return
	}
	z := cc.zone
	isolateStart := cc.freePFN
	blockStart := pageblockStartPFN(isolateStart)
	blockEnd := min(blockStart+PageblockNrPages, z.EndPFN())
	lowPFN := pageblockEndPFN(cc.migratePFN)
	stride := PFN(1)
	if cc.mode == migrateAsync {
		stride = compactClusterMax
	}
	for ; blockStart >= lowPFN; blockEnd, blockStart, isolateStart = blockStart, blockStart-PageblockNrPages, blockStart-PageblockNrPages {
		if blockStart < z.StartPFN {
			break
		}
		if !m.suitableMigrationTarget(cc, blockStart) || !cc.isolationSuitable(m.pageblockOf(blockStart)) {
			t.Charge(m.Cost.PageblockFlags)
			if blockStart < PageblockNrPages {
				break
			}
			continue
		}
		var nrIsolated uint64
		isolateStart, nrIsolated = m.isolateFreepagesBlock(t, cc, isolateStart, blockEnd, stride)
		// A fully scanned block is marked skipped, whether or not
		// this run ignores the hint, and the cached position moves
		// to the block below.
		if isolateStart == blockEnd {
			m.updatePageblockSkip(cc, blockStart, blockStart-PageblockNrPages)
		}
		if cc.nrFreepages >= cc.nrMigratepages {
			if isolateStart >= blockEnd {
				isolateStart = blockStart - PageblockNrPages
			}
			break
		} else if isolateStart < blockEnd {
			break
		}
		// Sparse blocks widen the stride (every mode), a block that
		// gave pages narrows it.
		if nrIsolated > 0 {
			stride = 1
		} else {
			stride = min(compactClusterMax, stride<<1)
		}
		if blockStart < PageblockNrPages {
			break
		}
	}
	cc.freePFN = isolateStart
}

// compactionAlloc is compaction_alloc(): a migration target of the order.
func (m *Machine) compactionAlloc(t *sim.Task, cc *compactControl, order Order) PFN {
	hasIsolatedPages := false
	for {
		start := Order(NR_PAGE_ORDERS)
		for o := order; o < NR_PAGE_ORDERS; o++ {
			if len(cc.freepages[o]) > 0 {
				start = o
				break
			}
		}
		if start == NR_PAGE_ORDERS {
			if hasIsolatedPages {
				return NilPFN
			}
			m.isolateFreepages(t, cc)
			hasIsolatedPages = true
			continue
		}
		l := cc.freepages[start]
		pfn := l[len(l)-1]
		cc.freepages[start] = l[:len(l)-1]
		// Split down to order, keeping the upper halves.
		for o := start; o > order; o-- {
			half := pfn + PFN(1)<<(o-1)
			m.pages[half].order = uint8(o - 1)
			cc.freepages[o-1] = append(cc.freepages[o-1], half)
		}
		cc.nrFreepages -= order.Pages()
		return pfn
	}
}

// releaseFreeList is release_free_list(): give unused targets back.
func (m *Machine) releaseFreeList(t *sim.Task, cc *compactControl) PFN {
	var high PFN
	for o := Order(0); o < NR_PAGE_ORDERS; o++ {
		for _, pfn := range cc.freepages[o] {
			m.pages[pfn].order = 0
			m.FreePages(t, pfn, o)
			// FreePages counted PGFREE; the kernel's release path
			// does too (__free_pages).
			if pfn > high {
				high = pfn
			}
		}
		cc.freepages[o] = cc.freepages[o][:0]
	}
	cc.nrFreepages = 0
	return high
}

// ---------------------------------------------------------------------------
// Migrate scanner

// suitableMigrationSource is suitable_migration_source().
func (m *Machine) suitableMigrationSource(cc *compactControl, pfn PFN) bool {
	p := &m.pages[pfn]
	if p.flags&pgHead != 0 && p.order >= PageblockOrder {
		return false // pageblock_skip_persistent
	}
	if !cc.directCompaction {
		return true
	}
	mt := m.getPageblockMigratetype(pfn)
	if mt == MIGRATE_CMA && cc.allocFlags&ALLOC_CMA == 0 {
		return false
	}
	if cc.mode != migrateAsync {
		return true
	}
	if cc.migratetype == MIGRATE_MOVABLE || cc.order >= PageblockOrder {
		return mt == MIGRATE_MOVABLE || mt == MIGRATE_CMA
	}
	return mt == cc.migratetype
}

// skipIsolationOnOrder is skip_isolation_on_order().
func skipIsolationOnOrder(order Order, target int) bool {
	if target >= 0 && int(order) >= target {
		return true
	}
	return order >= PageblockOrder
}

// isolateMigratepagesBlock is isolate_migratepages_block(): walk one
// pageblock from low to end, isolating up to COMPACT_CLUSTER_MAX pages.
// The first isolation marks the block skipped (test_and_set_skip), so
// that later scans, the fast search included, pass it by; a block left
// with nothing isolated is marked at the end. nr_scanned counts as the
// kernel counts it (a free chunk or a skipped compound page counts all its
// pages); the time charged is one CompactScanPage per struct page read.
func (m *Machine) isolateMigratepagesBlock(t *sim.Task, cc *compactControl, low, end PFN) PFN {
	z := cc.zone
	start := low
	var scanned, visits, isolated uint64
	b := m.pageblockOf(low)
	skipOnFailure := cc.directCompaction && cc.mode == migrateAsync
	skipUpdated := false
	chunk := PFN(PageblockNrPages)
	if cc.order >= 0 && cc.order < PageblockOrder {
		chunk = PFN(1) << cc.order
	}
	validPage := low&(PageblockNrPages-1) == 0 || low == z.StartPFN
	switch {
	case validPage && !cc.isolationSuitable(b):
		// The kernel reads the first page, sees the hint and gives
		// up the block (valid_page not yet set: no skip update).
		scanned, visits = 1, 1
		low = end
		validPage = false
	case b.nrLRU == b.nrPinned && !skipOnFailure:
		// Nothing in the block can be isolated: every page fails or
		// is free. Charge the walk the kernel would make. (Async
		// direct compaction's walk, one PFN per failed chunk plus
		// the free chunks it steps over, goes through the loop.)
		scanned = uint64(end - low)
		visits = scanned
		low = end
	default:
		nextSkip := PFN(0)
		if skipOnFailure {
			nextSkip = alignUp(low+1, chunk)
		}
		for low < end {
			if skipOnFailure && low >= nextSkip {
				if isolated > 0 {
					break
				}
				nextSkip = alignUp(low+1, chunk)
			}
			scanned++
			visits++
			p := &m.pages[low]
			fail := false
			switch {
			case p.flags&pgBuddy != 0:
				n := PFN(1) << p.order
				scanned += uint64(n) - 1
				low += n
				continue
			case p.flags&(pgPCP|pgReserved) != 0:
				fail = true
			case p.flags&pgTail != 0:
				fail = true
			case p.flags&pgHead != 0 && skipIsolationOnOrder(Order(p.order), cc.order):
				n := PFN(1) << p.order
				scanned += uint64(n) - 1
				low += n - 1
				fail = true
			case p.flags&pgLRU == 0:
				fail = true
			case p.flags&pgPinned != 0:
				fail = true // folio_ref_count - 1 > folio_mapcount: a pin
			case cc.gfp&__GFP_FS == 0 && p.kind == KindFile:
				fail = true
			case p.flags&pgUnevictable != 0 && m.Sysctl.CompactUnevictableAllowed == 0:
				fail = true
			case p.flags&pgWriteback != 0:
				// Async and sync-light compaction skip folios under
				// writeback (ISOLATE_ASYNC_MIGRATE; migrate_folio_unmap
				// fails them with -EBUSY); MIGRATE_SYNC would wait
				// for the write, which pagesim's scan cannot, so it
				// skips them too: the block device's request holds
				// the folio's PFN until the write completes.
				fail = true
			}
			if !fail {
				// Under the lru_lock, the first isolation claims
				// the block.
				if !skipUpdated && validPage {
					skipUpdated = true
					if cc.testAndSetSkip(b) && !cc.finishPageblock {
						low = end
						break
					}
				}
				nr := m.folioNr(low)
				lv := m.lruvecOf(low)
				cc.compactLockIrqsave(t, &lv.Lock)
				m.isolateLRUFolio(low)
				lv.Lock.Unlock(t)
				cc.migratepages = append(cc.migratepages, low)
				cc.nrMigratepages += nr
				isolated += nr
				scanned += nr - 1
				low += PFN(nr)
				// Enough for one migration, unless the block is being
				// finished or a lock was contended ("isolate quickly
				// to potentially remove one source of contention").
				if cc.nrMigratepages >= compactClusterMax && !cc.finishPageblock && !cc.contended {
					break
				}
				continue
			}
			// isolate_fail
			if !skipOnFailure {
				low++
				continue
			}
			if isolated > 0 {
				m.putbackMovablePages(t, cc)
				isolated = 0
			}
			if low < nextSkip {
				low = nextSkip - 1
				nextSkip += chunk
			}
			low++
		}
		if low > end {
			low = end
		}
	}
	if low == end && (isolated == 0 || cc.finishPageblock) {
		// Set even when the run ignores the hint, if no isolation
		// took the lock (only alloc_contig's no_set_skip_hint
		// prevents it).
		if validPage && !skipUpdated {
			b.skip = true
		}
		cc.updateCachedMigrate(low)
	}
	t.Charge(m.Cost.CompactScanPage * sim.Time(visits))
	m.Trace.Emit(t, TraceMmCompactionIsolateMigratepages, int64(start), int64(low), int64(scanned), int64(isolated))
	cc.totalMigrateScanned += scanned
	if isolated > 0 {
		m.countVMEvents(COMPACTISOLATED, isolated)
	}
	cc.migratePFN = low
	return low
}

// putbackMovablePages is putback_movable_pages(): return isolated sources.
func (m *Machine) putbackMovablePages(t *sim.Task, cc *compactControl) {
	for _, head := range cc.migratepages {
		if m.pages[head].owner == 0 {
			m.freeIsolatedFolio(t, head)
			continue
		}
		m.putbackLRUFolio(head)
	}
	cc.migratepages = cc.migratepages[:0]
	cc.nrMigratepages = 0
}

type isolateResult uint8

const (
	isolateAbort isolateResult = iota
	isolateNone
	isolateSuccess
)

// updateFastStartPFN is update_fast_start_pfn(): remember the lowest free
// PFN the fast search has led the migrate scanner to.
func (cc *compactControl) updateFastStartPFN(pfn PFN) {
	if cc.fastStartPFN == fastStartPFNUsed {
		return
	}
	if cc.fastStartPFN == 0 {
		cc.fastStartPFN = pfn
	}
	cc.fastStartPFN = min(cc.fastStartPFN, pfn)
}

// reinitMigratePFN is reinit_migrate_pfn(): after a failed fast search,
// restart the linear scan once from the lowest PFN an earlier search found.
func (cc *compactControl) reinitMigratePFN() PFN {
	if cc.fastStartPFN == 0 || cc.fastStartPFN == fastStartPFNUsed {
		return cc.migratePFN
	}
	cc.migratePFN = cc.fastStartPFN
	cc.fastStartPFN = fastStartPFNUsed
	return cc.migratePFN
}

// fastStartPFNUsed is the kernel's ULONG_MAX in cc->fast_start_pfn.
const fastStartPFNUsed = NilPFN

// fastFindMigrateblock is fast_find_migrateblock() (linux-mm @04e60ad1):
// for a costly order, instead of taking the next pageblock, look on the
// MIGRATE_MOVABLE free lists of orders cc.order-1 down to
// PAGE_ALLOC_COSTLY_ORDER for a free chunk low in the zone (the first half
// of the space between the scanners on a fresh start, the first eighth
// later) whose block is not marked skipped: a block that already has free
// pages needs fewer migrations to empty. Each list is walked from its
// head, at most freelist_scan_limit entries in all, and the entries passed
// are rotated to the tail. Every entry visited counts in
// compact_migrate_scanned. Returns the PFN to scan from.
func (m *Machine) fastFindMigrateblock(t *sim.Task, cc *compactControl) PFN {
	limit := cc.freelistScanLimit()
	var nrScanned uint
	z := cc.zone
	pfn := cc.migratePFN
	// Skip hints are what keeps the fast search from repeating itself.
	if cc.ignoreSkipHint {
		return pfn
	}
	// A pageblock being finished is not left for another.
	if cc.finishPageblock {
		return pfn
	}
	// Mid-block: the continuation of a scan stopped at
	// COMPACT_CLUSTER_MAX.
	if pfn != z.StartPFN && pfn != pageblockStartPFN(pfn) {
		return pfn
	}
	// Small orders scan linearly: few pages to migrate.
	if cc.order <= PAGE_ALLOC_COSTLY_ORDER {
		return pfn
	}
	// Keep sub-pageblock unmovable/reclaimable requests out of movable
	// blocks.
	if cc.directCompaction && cc.migratetype != MIGRATE_MOVABLE && cc.order < PageblockOrder {
		return pfn
	}
	// Starting: any block in the first half of the search space; later,
	// the first eighth, so that a target is unlikely to become a source.
	// (The free scanner is always above the migrate scanner here:
	// compact_finished() has just said they have not met.)
	var distance PFN
	if cc.freePFN > cc.migratePFN {
		distance = (cc.freePFN - cc.migratePFN) >> 1
	}
	if cc.migratePFN != z.StartPFN {
		distance >>= 2
	}
	highPFN := pageblockStartPFN(cc.migratePFN + distance)
	found := false
	for order := cc.order - 1; order >= PAGE_ALLOC_COSTLY_ORDER && !found && nrScanned < limit; order-- {
		area := &z.freeArea[order]
		if area.nrFree == 0 {
			continue
		}
		z.Lock.Lock(t)
		freelist := &area.list[MIGRATE_MOVABLE]
		visited := nrScanned
		for freepage := freelist.head; freepage != NilPFN; {
			next := m.pages[freepage].next
			nrScanned++
			if nrScanned > limit {
				freelist.moveFreelistTail(m.pages, freepage)
				break
			}
			if freepage < highPFN {
				// Recently skipped: leave it where it is (the
				// kernel cannot reorder during the walk).
				if m.pageblockOf(freepage).skip {
					freepage = next
					continue
				}
				freelist.moveFreelistTail(m.pages, freepage)
				cc.updateFastStartPFN(freepage)
				pfn = max(pageblockStartPFN(freepage), z.StartPFN)
				cc.fastSearchFail = 0
				found = true
				break
			}
			freepage = next
		}
		t.Charge(m.Cost.FreeListEntry * sim.Time(nrScanned-visited))
		z.Lock.Unlock(t)
	}
	cc.totalMigrateScanned += uint64(nrScanned)
	// Failed: start the linear scan from a block an earlier search
	// found free pages in.
	if !found {
		cc.fastSearchFail++
		pfn = cc.reinitMigratePFN()
	}
	return pfn
}

// isolateMigratepages is isolate_migratepages(): find the next suitable
// block, by the fast search or the linear walk, and isolate from it.
func (m *Machine) isolateMigratepages(t *sim.Task, cc *compactControl) isolateResult {
	z := cc.zone
	low := m.fastFindMigrateblock(t, cc)
	blockStart := max(pageblockStartPFN(low), z.StartPFN)
	// The fast search has checked its block's skip bit already.
	fastFindBlock := low != cc.migratePFN && cc.fastSearchFail == 0
	blockEnd := pageblockEndPFN(low)
	// Each block the loop passes on its flags costs a PageblockFlags:
	// after the scanners met, a run starts at the zone start and passes
	// every block marked skipped up to the free scanner.
	var passed sim.Time
	for ; blockEnd <= cc.freePFN; fastFindBlock, cc.migratePFN, low, blockStart, blockEnd = false, blockEnd, blockEnd, blockEnd, blockEnd+PageblockNrPages {
		if (low&(PageblockNrPages-1) == 0 || low == z.StartPFN) && !fastFindBlock && !cc.isolationSuitable(m.pageblockOf(low)) {
			passed++
			continue
		}
		if !m.suitableMigrationSource(cc, blockStart) {
			passed++
			cc.updateCachedMigrate(blockEnd)
			continue
		}
		t.Charge(m.Cost.PageblockFlags * passed)
		passed = 0
		if blockEnd > z.EndPFN() {
			blockEnd = z.EndPFN()
		}
		m.isolateMigratepagesBlock(t, cc, low, blockEnd)
		break
	}
	t.Charge(m.Cost.PageblockFlags * passed)
	if cc.nrMigratepages > 0 {
		return isolateSuccess
	}
	return isolateNone
}

// migratePages is migrate_pages() with compaction_alloc as the target
// allocator: every isolated folio gets a target, is copied, and the old
// folio is freed. Returns the pages migrated and whether a target could
// not be found (-ENOMEM).
func (m *Machine) migratePages(t *sim.Task, cc *compactControl) (succeeded, failed uint64, nomem bool) {
	sources := cc.migratepages
	cc.migratepages = nil
	var left []PFN
	for i, src := range sources {
		p := &m.pages[src]
		nr := m.folioNr(src)
		order := Order(0)
		if p.flags&pgHead != 0 {
			order = Order(p.order)
		}
		if p.owner == 0 {
			// Truncated while isolated: it just goes away.
			m.freeIsolatedFolio(t, src)
			cc.nrMigratepages -= nr
			continue
		}
		dst := m.compactionAlloc(t, cc, order)
		if dst == NilPFN {
			nomem = true
			left = append(left, sources[i:]...)
			break
		}
		m.moveFolio(t, src, dst, order)
		cc.nrMigratepages -= nr
		succeeded += nr
	}
	for _, src := range left {
		failed += m.folioNr(src)
	}
	cc.migratepages = left
	m.countVMEvents(PGMIGRATE_SUCCESS, succeeded)
	if failed > 0 {
		m.countVMEvents(PGMIGRATE_FAIL, failed)
	}
	return succeeded, failed, nomem
}

// moveFolio migrates an isolated folio src to the free chunk dst of the
// same order: the owner follows (its file slot, its LRU position), the
// pin state cannot be set (pinned folios are never isolated), and src is
// freed through the normal free path.
func (m *Machine) moveFolio(t *sim.Task, src, dst PFN, order Order) {
	sp := &m.pages[src]
	n := PFN(1) << order
	o := m.owners[sp.owner]
	flags := sp.flags &^ (pgIsolated | pgLRU)
	// Target pages take the source's identity.
	m.prepNewPage(dst, order, __GFP_COMP)
	for i := PFN(0); i < n; i++ {
		m.pages[dst+i].kind = sp.kind
		m.pages[dst+i].owner = sp.owner
	}
	dp := &m.pages[dst]
	dp.flags |= flags &^ (pgHead | pgTail)
	if order > 0 {
		dp.flags |= pgHead
	}
	// Stats move with the page (node/zone may change across zones of a
	// node only; compaction stays within its zone).
	wasFile := sp.kind == KindFile
	if wasFile {
		if ext, slot := m.fileSlot(src); slot >= 0 {
			setFileSlots(ext, slot, src, dst)
		}
	}
	m.unisolateStat(src)
	if flags&pgDirty != 0 && sp.kind == KindFile { // pgSwapCache on anon
		nr := int64(n)
		zs, zd := m.ZoneOf(src), m.ZoneOf(dst)
		zs.Stat[NR_ZONE_WRITE_PENDING] -= nr
		zd.Stat[NR_ZONE_WRITE_PENDING] += nr
	}
	// The source's charge and counters transfer: undo them on src without
	// touching the owner's resident count, then add them on dst.
	srcNode, dstNode := m.ZoneOf(src).Node, m.ZoneOf(dst).Node
	if srcNode != dstNode {
		nr := int64(n)
		switch o.Kind {
		case KindAnon:
			srcNode.Stat[NR_ANON_MAPPED] -= nr
			dstNode.Stat[NR_ANON_MAPPED] += nr
		case KindFile:
			srcNode.Stat[NR_FILE_PAGES] -= nr
			dstNode.Stat[NR_FILE_PAGES] += nr
		}
	}
	// Free the source (free_folio after migration).
	for i := PFN(0); i < n; i++ {
		m.pages[src+i].owner = 0
		m.pages[src+i].kind = KindNone
	}
	sp.flags &^= pgIsolated | pgLRU | pgDirty | pgActive | pgReferenced | pgYoung | pgSwapBacked | pgWorkingset
	m.FreePages(t, src, order)
	m.lruAdd(dst)
	t.Charge(m.Cost.MigratePage*sim.Time(n) + m.remoteCost(m.cpuNode[t.CPU], dstNode.ID, m.Cost.CopyPage4K*sim.Time(n)))
}

// ---------------------------------------------------------------------------
// compact_zone

// compactYield is what compactZone returns for a run with cc.yields set
// that ended its task's step (not a kernel value).
const compactYield CompactResult = -1

// compactZone is compact_zone().
//
// A run is one call, inside one step of its task, except where cc.yields
// is set: kcompactd's proactive compaction, whose __compact_finished()
// reads another task's state at every turn of the loop
// (kswapd_is_running(): the pass stops once kswapd runs). A step runs to
// its end before the world runs anything at an earlier time (engine/sim),
// so a whole-zone pass in one step would read kswapd's state as of the
// pass's start for all of it: at the seed 000 scenario's 384 GiB a
// proactive pass took 1.5 s of simulated time in one step (traced on
// 24fb3e3), and kswapd, woken 0.35 s into it, neither stopped it nor
// could wake kcompactd, which was not on its waitqueue. A yielding run ends its task's step at the top
// of the loop, before compact_finished(), whenever the task's clock is
// ahead of the world's, returning compactYield; its task returns t.Now
// and calls compactZoneResume in its next step, once the world has caught
// up with its clock, so each __compact_finished() reads the state of its
// own time. The stop costs no time (a cond_resched() that does not
// schedule is charged nothing here).
func (m *Machine) compactZone(t *sim.Task, cc *compactControl) CompactResult {
	ret := m.compactZoneStart(t, cc)
	if ret != COMPACT_CONTINUE {
		return ret
	}
	return m.compactZoneResume(t, cc)
}

// compactZoneStart is compact_zone() up to its loop: COMPACT_CONTINUE if
// the run goes on (compactZoneResume), else its result.
func (m *Machine) compactZoneStart(t *sim.Task, cc *compactControl) CompactResult {
	z := cc.zone
	startPFN, endPFN := z.StartPFN, z.EndPFN()
	sync := cc.mode != migrateAsync
	cc.totalMigrateScanned, cc.totalFreeScanned = 0, 0
	cc.nrMigratepages, cc.nrFreepages = 0, 0
	cc.migratetype = gfpMigratetype(cc.gfp)
	if cc.order >= 0 {
		ret := m.compactionSuitAllocationOrder(t, z, Order(cc.order), cc.highestZoneidx, cc.allocFlags, cc.mode == migrateAsync, !cc.directCompaction, cc.migratetype)
		if ret != COMPACT_CONTINUE {
			return ret
		}
		if compactionRestarting(z, Order(cc.order)) {
			m._resetIsolationSuitable(t, z)
		}
	}
	c := &z.compact
	cc.fastStartPFN = 0
	if cc.wholeZone {
		cc.migratePFN = startPFN
		cc.freePFN = (endPFN - 1) &^ (PageblockNrPages - 1)
	} else {
		si := 0
		if sync {
			si = 1
		}
		cc.migratePFN = c.cachedMigPFN[si]
		cc.freePFN = c.cachedFreePFN
		if cc.freePFN < startPFN || cc.freePFN >= endPFN {
			cc.freePFN = (endPFN - 1) &^ (PageblockNrPages - 1)
			c.cachedFreePFN = cc.freePFN
		}
		if cc.migratePFN < startPFN || cc.migratePFN >= endPFN {
			cc.migratePFN = startPFN
			c.cachedMigPFN = [2]PFN{startPFN, startPFN}
		}
		if cc.migratePFN <= c.initMigratePFN {
			cc.wholeZone = true
		}
	}
	cc.lastMigrated = 0
	cc.updateCached = !sync && c.cachedMigPFN[0] == c.cachedMigPFN[1]
	m.Trace.Emit(t, TraceMmCompactionBegin, int64(startPFN), int64(cc.migratePFN), int64(cc.freePFN), int64(endPFN), int64(b2i(!sync)))
	m.Compact.Runs++
	return COMPACT_CONTINUE
}

// compactZoneResume is compact_zone()'s loop and its end, from where the
// run is (compactZoneStart, or the stop a yielding run returned
// compactYield at).
func (m *Machine) compactZoneResume(t *sim.Task, cc *compactControl) CompactResult {
	z := cc.zone
	startPFN, endPFN := z.StartPFN, z.EndPFN()
	sync := cc.mode != migrateAsync
	c := &z.compact
	lastMigrated, updateCached := cc.lastMigrated, cc.updateCached
	var ret CompactResult
	for {
		if cc.yields && t.Now > m.World.Now() {
			cc.lastMigrated, cc.updateCached = lastMigrated, updateCached
			return compactYield
		}
		ret = m.compactFinished(t, cc)
		if ret != COMPACT_CONTINUE {
			break
		}
		iterationStart := cc.migratePFN
		cc.finishPageblock = lastMigrated&^(PageblockNrPages-1) == iterationStart&^(PageblockNrPages-1) && lastMigrated != 0
	rescan:
		switch m.isolateMigratepages(t, cc) {
		case isolateNone:
			if updateCached {
				c.cachedMigPFN[1] = c.cachedMigPFN[0]
			}
			goto checkDrain
		case isolateSuccess:
			updateCached = false
			lastMigrated = cc.migratePFN - 1
			if lastMigrated < startPFN {
				lastMigrated = startPFN
			}
			lastMigrated &^= PageblockNrPages - 1
		}
		{
			nr := cc.nrMigratepages
			succeeded, _, nomem := m.migratePages(t, cc)
			m.Trace.Emit(t, TraceMmCompactionMigratepages, int64(succeeded), int64(nr-succeeded))
			if len(cc.migratepages) > 0 {
				m.putbackMovablePages(t, cc)
				if nomem && !cc.scannersMet() {
					ret = COMPACT_CONTENDED
					goto out
				}
				if cc.migratePFN&(PageblockNrPages-1) != 0 && !cc.ignoreSkipHint && !cc.finishPageblock && cc.mode < migrateSync {
					cc.finishPageblock = true
					if cc.order == compactionHPageOrder {
						lastMigrated = 0
					}
					goto rescan
				}
			}
			cc.nrMigratepages = 0
		}
		if m.capc != nil && m.capc.page != NilPFN {
			ret = COMPACT_SUCCESS
			break
		}
	checkDrain:
		if cc.order > 0 && lastMigrated != 0 {
			if lastMigrated < cc.migratePFN&^(PFN(1)<<cc.order-1) {
				m.drainPagesZone(t, t.CPU, z)
				lastMigrated = 0
			}
		}
	}
out:
	if cc.nrFreepages > 0 {
		high := m.releaseFreeList(t, cc)
		high &^= PageblockNrPages - 1
		if high > c.cachedFreePFN {
			c.cachedFreePFN = high
		}
	}
	m.countVMEvents(COMPACTMIGRATE_SCANNED, cc.totalMigrateScanned)
	m.countVMEvents(COMPACTFREE_SCANNED, cc.totalFreeScanned)
	z.compact.last = LastCompaction{Runs: z.compact.last.Runs + 1, At: t.Now, MigratePFN: cc.migratePFN, FreePFN: cc.freePFN,
		MigrateScanned: cc.totalMigrateScanned, FreeScanned: cc.totalFreeScanned, Result: compactionStatus[ret.traceStatus()], Async: !sync,
		Daemon: t == z.Node.kcompactd.task}
	m.Trace.Emit(t, TraceMmCompactionEnd, int64(startPFN), int64(cc.migratePFN), int64(cc.freePFN), int64(endPFN), int64(b2i(!sync)), ret.traceStatus())
	return ret
}

// compactZoneOrder is compact_zone_order().
func (m *Machine) compactZoneOrder(t *sim.Task, z *Zone, order Order, gfp GFP, prio CompactPriority, allocFlags AllocFlags, highest ZoneType) CompactResult {
	cc := &compactControl{
		zone: z, order: int(order), searchOrder: int(order), gfp: gfp, allocFlags: allocFlags, highestZoneidx: highest,
		directCompaction: true, wholeZone: prio == COMPACT_PRIO_SYNC_FULL, ignoreSkipHint: prio == COMPACT_PRIO_SYNC_FULL,
		ignoreBlockSuitable: prio == COMPACT_PRIO_SYNC_FULL,
	}
	if prio == COMPACT_PRIO_ASYNC {
		cc.mode = migrateAsync
	} else {
		cc.mode = migrateSyncLight
	}
	return m.compactZone(t, cc)
}

// tryToCompactPages is try_to_compact_pages().
func (m *Machine) tryToCompactPages(t *sim.Task, gfp GFP, order Order, allocFlags AllocFlags, ac *allocContext, prio CompactPriority, capc *captureControl) CompactResult {
	rc := COMPACT_SKIPPED
	if !gfpCompactionAllowed(gfp) {
		return COMPACT_SKIPPED
	}
	m.Trace.Emit(t, TraceMmCompactionTryToCompactPages, int64(order), int64(gfp), int64(prio))
	for _, z := range ac.zonelist {
		if z.Type > ac.highestZoneidx || !ac.nodemask.Has(z.Node.ID) {
			continue
		}
		if prio > MIN_COMPACT_PRIORITY && m.compactionDeferred(t, z, order) {
			rc = max(rc, COMPACT_DEFERRED)
			continue
		}
		capc.zone = z
		status := m.compactZoneOrder(t, z, order, gfp, prio, allocFlags, ac.highestZoneidx)
		capc.zone = nil
		if capc.page != NilPFN {
			status = COMPACT_SUCCESS
		}
		rc = max(rc, status)
		if status == COMPACT_SUCCESS {
			m.compactionDeferReset(t, z, order, false)
			break
		}
		if prio != COMPACT_PRIO_ASYNC && (status == COMPACT_COMPLETE || status == COMPACT_PARTIAL_SKIPPED) {
			m.deferCompaction(t, z, order)
		}
	}
	return rc
}

// compactionCapture is compaction_capture(): while a direct compactor runs
// on this zone, a freed chunk of exactly its order goes to it.
func (m *Machine) compactionCapture(z *Zone, pfn PFN, order Order, mt MigrateType) bool {
	capc := m.capc
	if capc == nil || capc.zone != z || capc.page != NilPFN || m.capcTask == nil || m.current(m.capcTask).flags&PF_KTHREAD != 0 {
		return false
	}
	if order != capc.order {
		return false
	}
	if mt == MIGRATE_CMA || mt == MIGRATE_ISOLATE {
		return false
	}
	if order < PageblockOrder && mt == MIGRATE_MOVABLE && capc.migratetype != MIGRATE_MOVABLE {
		return false
	}
	if mt != capc.migratetype {
		m.Trace.extfrag(m.capcTask, pfn, capc.order, order, capc.migratetype, mt, false)
	}
	capc.page = pfn
	m.Compact.Captured++
	return true
}

// CompactStats counts compaction work the kernel reports only in traces.
type CompactStats struct {
	Runs     uint64 // compact_zone runs that started scanning
	Captured uint64 // pages handed out by capture
}
