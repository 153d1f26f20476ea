package mm

// page_alloc_slowpath.go models __alloc_pages_slowpath() of mm/page_alloc.c
// and its helpers, in the kernel's order (linux-mm/linux-mm
// mm/page_alloc.c @6e2201b1 for the baseline and @00cb34b0 for seed 000 as
// merged; condensed in the project's kernel notes):
//
//	alloc_flags_slowpath          ALLOC_WMARK_MIN|ALLOC_CPUSET, KSWAPD, reserves
//	wake_all_kswapds              every pass; pageblock_order under defrag_mode
//	get_page_from_freelist        at the min watermark
//	__alloc_pages_direct_compact  first, at ASYNC priority, for costly orders
//	                              and non-movable order > 0 (compact_first)
//	__alloc_pages_direct_reclaim  try_to_free_pages, then drain_all_pages
//	__alloc_pages_direct_compact  at compact_priority
//	__GFP_NORETRY / costly exits
//	should_reclaim_retry, should_compact_retry
//	defrag_mode give-up           drop ALLOC_NOFRAGMENT once and retry
//	__alloc_pages_may_oom         (no OOM killer: see below)
//	nopage                        warn_alloc unless __GFP_NOWARN
//
// # The patches, where their diffs flip the code
//
//   - Seed 000 (Patches.CostlyNoretryNoDirectReclaim), as posted in v4:
//     at the top of the slow path a costly __GFP_NORETRY request without
//     __GFP_THISNODE loses __GFP_DIRECT_RECLAIM, before can_direct_reclaim,
//     can_compact and nofail are computed. (The merged form in the newest mm
//     tree keeps gfp intact and forces can_direct_reclaim false through a
//     costly_noretry local, also exempting __GFP_NOFAIL; the only difference
//     is that the v4 form also changes the flags gfp_to_alloc_flags derives:
//     ALLOC_NON_BLOCK is set, which lets rmqueue_buddy dip into the
//     HighAtomic reserve. pagesim follows the posted v4 text.)
//   - Seed 002 (Patches.PromotedOrderRetries and the "requested" variant
//     PromotedOrderRequestedFloor): should_reclaim_retry and
//     should_compact_retry judge the promoted order.
//   - Seed 003 fix 1 (Patches.OnlyCompact): after the first direct
//     compaction, a request with __GFP_ONLY_COMPACT goes to nopage. The
//     2018 patch put this check after the early compaction block; today's
//     equivalent place is the end of the compact_first pass.
//
// # Simplifications
//
// No cpusets, no OOM killer (an order-0 request that would OOM fails instead
// and says so in the trace; the seeds never reach OOM), no __GFP_NOFAIL
// loop (refused like an ordinary failure), no PF_MEMALLOC reserves outside
// kswapd.

import (
	"fmt"

	"github.com/pagesim/pagesim/engine/sim"
)

// Compaction priorities (include/linux/compaction.h enum compact_priority).
type CompactPriority int

const (
	CompactPrioSyncFull  CompactPriority = 0
	CompactPrioSyncLight CompactPriority = 1
	CompactPrioAsync     CompactPriority = 2

	minCompactPriority       = CompactPrioSyncFull
	minCompactCostlyPriority = CompactPrioSyncLight
	defCompactPriority       = CompactPrioSyncLight
	initCompactPriority      = CompactPrioAsync

	maxCompactRetries = 16
)

var compactPrioNames = [...]string{"COMPACT_PRIO_SYNC_FULL", "COMPACT_PRIO_SYNC_LIGHT", "COMPACT_PRIO_ASYNC"}

func (p CompactPriority) String() string {
	if p >= 0 && int(p) < len(compactPrioNames) {
		return compactPrioNames[p]
	}
	return fmt.Sprint(int(p))
}

// gfpToAllocFlags is alloc_flags_slowpath() (the old gfp_to_alloc_flags).
func (m *Machine) gfpToAllocFlags(gfp GFP, order Order) AllocFlags {
	flags := ALLOC_WMARK_MIN | ALLOC_CPUSET
	if gfp&__GFP_HIGH != 0 {
		flags |= ALLOC_MIN_RESERVE
	}
	if gfp&__GFP_KSWAPD_RECLAIM != 0 {
		flags |= ALLOC_KSWAPD
	}
	flags |= allocFlagsNonblocking(gfp, order)
	if gfp&__GFP_DIRECT_RECLAIM == 0 {
		if flags&ALLOC_MIN_RESERVE != 0 {
			flags &^= ALLOC_CPUSET
		}
	}
	if gfpMigratetype(gfp) == MigrateMovable {
		flags |= ALLOC_CMA
	}
	if m.Sysctl.DefragMode != 0 {
		flags |= ALLOC_NOFRAGMENT
	}
	return flags
}

// allocFlagsNonblocking is alloc_flags_nonblocking().
func allocFlagsNonblocking(gfp GFP, order Order) AllocFlags {
	if gfp&__GFP_DIRECT_RECLAIM != 0 || gfp&__GFP_NOMEMALLOC != 0 {
		return 0
	}
	f := ALLOC_NON_BLOCK
	if order > 0 && gfp&__GFP_HIGH != 0 {
		f |= ALLOC_HIGHATOMIC
	}
	return f
}

// wakeAllKswapds is wake_all_kswapds().
func (m *Machine) wakeAllKswapds(t *sim.Task, order Order, gfp GFP, ac *allocContext) {
	reclaimOrder := order
	if m.Sysctl.DefragMode != 0 && reclaimOrder < PageblockOrder {
		reclaimOrder = PageblockOrder
	}
	var last *Node
	for _, z := range ac.zonelist {
		if z.Type > ac.highestZoneidx || !ac.nodemask.Has(z.Node.ID) || !z.Managed() || z.Node == last {
			continue
		}
		m.wakeupKswapd(t, z, gfp, reclaimOrder, ac.highestZoneidx)
		last = z.Node
	}
}

// nofragPromoteOrder is seed 002's nofrag_promote_order(): reclaim and
// compaction for a non-movable ALLOC_NOFRAGMENT request work at
// pageblock_order (7e8756d7ad22).
func nofragPromoteOrder(order Order, allocFlags AllocFlags, mt MigrateType) Order {
	if allocFlags&ALLOC_NOFRAGMENT != 0 && mt != MigrateMovable && order < PageblockOrder {
		return PageblockOrder
	}
	return order
}

// allocPagesSlowpath is __alloc_pages_slowpath().
func (m *Machine) allocPagesSlowpath(t *sim.Task, gfp GFP, order Order, ac *allocContext) PFN {
	st := m.slowTrace.begin(t, gfp, order)
	costly := order > PageAllocCostlyOrder
	// Seed 000, v4: costly __GFP_NORETRY callers have a cheap fallback.
	if m.Patches.CostlyNoretryNoDirectReclaim && costly && gfp&__GFP_NORETRY != 0 && gfp&__GFP_THISNODE == 0 {
		gfp &^= __GFP_DIRECT_RECLAIM
		st.step(stepCostlyNoretry, 0, 0)
	}
	canDirectReclaim := gfp&__GFP_DIRECT_RECLAIM != 0
	canCompact := canDirectReclaim && gfpCompactionAllowed(gfp)
	m.Slow.Entered++

	var (
		compactionRetries int
		noProgressLoops   int
		compactResult     CompactResult
		compactPriority   CompactPriority
		compactFirst      bool
		didSomeProgress   uint64
		allocFlags        AllocFlags
		pfn               PFN
		canRetryReserves  = true
	)
	// restart: (cpusets and zonelists never change in pagesim, so the
	// kernel's goto restart paths are not taken.)
	compactionRetries, noProgressLoops = 0, 0
	compactResult = CompactSkipped
	compactPriority = defCompactPriority
	compactFirst = false
	if canCompact && (costly || (order > 0 && ac.migratetype != MigrateMovable)) {
		compactFirst = true
		compactPriority = initCompactPriority
	}
	allocFlags = m.gfpToAllocFlags(gfp, order)
	ac.preferredIdx = firstZonesZonelist(ac.zonelist, ac.highestZoneidx, ac.nodemask)
	if ac.preferredIdx < 0 {
		goto nopage
	}
retry:
	if allocFlags&ALLOC_KSWAPD != 0 {
		m.wakeAllKswapds(t, order, gfp, ac)
		st.step(stepWakeKswapd, int64(order), 0)
	}
	pfn = m.getPageFromFreelist(t, gfp, order, allocFlags, ac)
	st.step(stepFreelistMin, int64(b2i(pfn != NilPFN)), int64(allocFlags))
	if pfn != NilPFN {
		goto gotPage
	}
	if allocFlags&ALLOC_CPUSET == 0 && canRetryReserves {
		canRetryReserves = false
		goto retry
	}
	if !canDirectReclaim {
		if m.Sysctl.DefragMode != 0 && allocFlags&ALLOC_NOFRAGMENT != 0 && gfp&__GFP_KSWAPD_RECLAIM != 0 {
			allocFlags &^= ALLOC_NOFRAGMENT
			m.Slow.NofragGiveUps++
			st.step(stepNofragGiveUp, 1, 0)
			goto retry
		}
		st.step(stepNopage, nopageNoDirectReclaim, 0)
		goto nopage
	}
	if m.current(t).flags&PF_MEMALLOC != 0 {
		st.step(stepNopage, nopagePFMemalloc, 0)
		goto nopage
	}
	if !compactFirst {
		pfn, didSomeProgress = m.allocPagesDirectReclaim(t, gfp, order, allocFlags, ac, st)
		if pfn != NilPFN {
			goto gotPage
		}
	}
	pfn, compactResult = m.allocPagesDirectCompact(t, gfp, order, allocFlags, ac, compactPriority, st)
	if pfn != NilPFN {
		goto gotPage
	}
	if compactFirst {
		if m.Kernel.LegacyCostlyNoretry {
			// 2018: "If compaction is deferred for high-order
			// allocations, it is because sync compaction recently
			// failed" - only then give up.
			if gfp&__GFP_NORETRY != 0 && compactResult == CompactDeferred {
				st.step(stepNopage, nopageNoretryDeferred, 0)
				goto nopage
			}
		}
		// Seed 003 fix 1: only one compaction attempt, never reclaim.
		if gfp&___GFP_ONLY_COMPACT != 0 {
			st.step(stepNopage, nopageOnlyCompact, 0)
			goto nopage
		}
		if !m.Kernel.LegacyCostlyNoretry && gfp.Has(__GFP_NORETRY|__GFP_THISNODE) {
			st.step(stepNopage, nopageNoretryThisnode, 0)
			goto nopage
		}
		if gfp&__GFP_NORETRY == 0 {
			compactPriority = defCompactPriority
		}
		compactFirst = false
		goto retry
	}
	if gfp&__GFP_NORETRY != 0 {
		st.step(stepNopage, nopageNoretry, 0)
		goto nopage
	}
	if costly && (!canCompact || gfp&__GFP_RETRY_MAYFAIL == 0) {
		st.step(stepNopage, nopageCostly, 0)
		goto nopage
	}
	if m.shouldReclaimRetry(t, gfp, order, ac, allocFlags, didSomeProgress > 0, &noProgressLoops, st) {
		goto retry
	}
	if didSomeProgress > 0 && canCompact &&
		m.shouldCompactRetry(t, gfp, ac, order, allocFlags, compactResult, &compactPriority, &compactionRetries, st) {
		goto retry
	}
	if m.Sysctl.DefragMode != 0 && allocFlags&ALLOC_NOFRAGMENT != 0 {
		// defrag_mode: reclaim and compaction failed, fall back
		// rather than OOM ("give-up").
		allocFlags &^= ALLOC_NOFRAGMENT
		m.Slow.NofragGiveUps++
		st.step(stepNofragGiveUp, 0, 0)
		goto retry
	}
	// __alloc_pages_may_oom: the model has no OOM killer. A last
	// attempt at the high watermark catches a parallel free.
	if !costly && gfp&(__GFP_RETRY_MAYFAIL|__GFP_THISNODE) == 0 && ac.highestZoneidx >= ZoneNormal {
		m.Slow.WouldOOM++
		st.step(stepWouldOOM, 0, 0)
	}
	if pfn = m.getPageFromFreelist(t, (gfp|__GFP_HARDWALL)&^__GFP_DIRECT_RECLAIM, order, ALLOC_WMARK_HIGH|ALLOC_CPUSET, ac); pfn != NilPFN {
		goto gotPage
	}
	st.step(stepNopage, nopageOOM, 0)
nopage:
	m.Slow.Failed++
	m.countFailure(gfp, order)
	st.end(t, NilPFN, gfp)
	return NilPFN
gotPage:
	st.end(t, pfn, gfp)
	return pfn
}

// countFailure records an allocation failure (warn_alloc).
func (m *Machine) countFailure(gfp GFP, order Order) {
	m.Slow.FailedByOrder[order]++
}

// allocPagesDirectReclaim is __alloc_pages_direct_reclaim() with
// __perform_reclaim(): reclaim at the (promoted) reclaim order, then try
// the freelists, draining the per-CPU lists once if that fails.
func (m *Machine) allocPagesDirectReclaim(t *sim.Task, gfp GFP, order Order, allocFlags AllocFlags, ac *allocContext, st *slowTrace) (PFN, uint64) {
	reclaimOrder := nofragPromoteOrder(order, allocFlags, ac.migratetype)
	m.psiMemstallEnter(t)
	start := t.Now
	ts := m.current(t)
	ts.flags |= PF_MEMALLOC
	progress := m.tryToFreePages(t, ac.zonelist, reclaimOrder, gfp, ac.nodemask, allocFlags, ac.migratetype)
	ts.flags &^= PF_MEMALLOC
	st.step(stepDirectReclaim, int64(progress), int64(reclaimOrder))
	pfn := NilPFN
	if progress > 0 {
		drained := false
		for {
			pfn = m.getPageFromFreelist(t, gfp, order, allocFlags, ac)
			if pfn != NilPFN || drained {
				break
			}
			m.unreserveHighatomicPageblock(t, ac, false)
			m.drainAllPages(t, nil)
			st.step(stepDrainAllPages, 0, 0)
			drained = true
		}
	}
	m.Slow.DirectReclaimTime += t.Now - start
	m.psiMemstallLeave(t)
	return pfn, progress
}

// compactInactive is COMPACT_INACTIVE of the kernels before 19a4cd3c3a68
// (v5.1): "compaction didn't start as it was deferred due to past
// failures", an alias of COMPACT_DEFERRED that the old
// __alloc_pages_direct_compact compared against.
const compactInactive = CompactDeferred

// allocPagesDirectCompact is __alloc_pages_direct_compact().
func (m *Machine) allocPagesDirectCompact(t *sim.Task, gfp GFP, order Order, allocFlags AllocFlags, ac *allocContext, prio CompactPriority, st *slowTrace) (PFN, CompactResult) {
	compactOrder := nofragPromoteOrder(order, allocFlags, ac.migratetype)
	if compactOrder == 0 {
		return NilPFN, CompactSkipped
	}
	m.psiMemstallEnter(t)
	start := t.Now
	ts := m.current(t)
	ts.flags |= PF_MEMALLOC
	capc := &captureControl{migratetype: ac.migratetype, order: order, page: NilPFN}
	m.capc = capc
	m.capcTask = t
	result := m.tryToCompactPages(t, gfp, compactOrder, allocFlags, ac, prio, capc)
	m.capc = nil
	m.capcTask = nil
	ts.flags &^= PF_MEMALLOC
	page := capc.page
	if page != NilPFN {
		result = CompactSuccess
	}
	m.Slow.DirectCompactTime += t.Now - start
	m.psiMemstallLeave(t)
	st.step(stepDirectCompact, int64(result), int64(prio))
	// "At least in one zone compaction wasn't deferred or skipped, so
	// let's count a compaction stall": today only COMPACT_SKIPPED returns
	// first (06dac2f467fe, v5.13), so a deferred attempt counts
	// compact_stall and then compact_fail. The 2018 kernel returned for
	// every result up to COMPACT_INACTIVE (= COMPACT_DEFERRED), a check
	// 19a4cd3c3a68 (v5.1) removed. The v7.3-rc5 mm tree (@00cb34b0)
	// returns for COMPACT_DEFERRED too (Kernel.DeferredCompactNoStall).
	if result == CompactSkipped || (m.Kernel.LegacyCompactStall && result <= compactInactive) ||
		(m.Kernel.DeferredCompactNoStall && result == CompactDeferred) {
		return NilPFN, result
	}
	m.countVMEvent(COMPACTSTALL)
	if page != NilPFN {
		m.prepNewPage(page, order, gfp)
		m.countVMEvents(pgallocEvent(m.ZoneOf(page).Type), order.Pages())
	} else {
		page = m.getPageFromFreelist(t, gfp, order, allocFlags, ac)
	}
	if page != NilPFN {
		z := m.ZoneOf(page)
		z.compact.blockskipFlush = false
		m.compactionDeferReset(t, z, compactOrder, true)
		m.countVMEvent(COMPACTSUCCESS)
		return page, result
	}
	m.countVMEvent(COMPACTFAIL)
	return NilPFN, result
}

// shouldReclaimRetry is should_reclaim_retry().
func (m *Machine) shouldReclaimRetry(t *sim.Task, gfp GFP, order Order, ac *allocContext, allocFlags AllocFlags, didProgress bool, loops *int, st *slowTrace) bool {
	// Seed 002: judge the promoted order.
	if m.Patches.PromotedOrderRetries {
		order = nofragPromoteOrder(order, allocFlags, ac.migratetype)
	}
	if didProgress && order <= PageAllocCostlyOrder {
		*loops = 0
	} else {
		*loops++
	}
	ret := false
	if *loops <= maxReclaimRetries {
		for _, z := range ac.zonelist {
			if z.Type > ac.highestZoneidx || !ac.nodemask.Has(z.Node.ID) {
				continue
			}
			reclaimable := int64(m.zoneReclaimablePages(z))
			available := reclaimable + z.Stat[NR_FREE_PAGES]
			minWmark := z.WmarkPages(WmarkMin)
			// Plain __zone_watermark_ok(): seed 001 leaves this
			// check counting every migratetype (reclaim and
			// compaction work across types to free a whole block).
			wmark := m.zoneWatermarkOK(z, order, minWmark, ac.highestZoneidx, allocFlags&^ALLOC_NOFRAGMENT, available, ac.migratetype)
			m.Trace.Emit(t, TraceReclaimRetryZone, int64(z.Node.ID), int64(z.Type), int64(order), reclaimable, available,
				int64(minWmark), int64(*loops), int64(b2i(wmark)))
			if wmark {
				ret = true
				break
			}
		}
	}
	if !ret {
		ret = m.unreserveHighatomicPageblock(t, ac, true)
	}
	st.step(stepShouldReclaimRetry, int64(b2i(ret)), int64(*loops))
	return ret
}

// zoneReclaimablePages is zone_reclaimable_pages().
func (m *Machine) zoneReclaimablePages(z *Zone) uint64 {
	n := z.Stat[NR_ZONE_INACTIVE_FILE] + z.Stat[NR_ZONE_ACTIVE_FILE]
	if m.canReclaimAnonPages() {
		n += z.Stat[NR_ZONE_INACTIVE_ANON] + z.Stat[NR_ZONE_ACTIVE_ANON]
	}
	return uint64(max(n, 0))
}

// shouldCompactRetry is should_compact_retry().
func (m *Machine) shouldCompactRetry(t *sim.Task, gfp GFP, ac *allocContext, order Order, allocFlags AllocFlags, result CompactResult, prio *CompactPriority, retries *int, st *slowTrace) bool {
	// Seed 002: the posted fix judges the promoted order everywhere; the
	// "requested" variant keeps the requested order for the priority floor
	// and the COMPACT_SUCCESS retry cap.
	floorOrder := order
	if m.Patches.PromotedOrderRetries {
		promoted := nofragPromoteOrder(order, allocFlags, ac.migratetype)
		order = promoted
		if !m.Patches.PromotedOrderRequestedFloor {
			floorOrder = promoted
		}
	}
	if order == 0 {
		st.step(stepShouldCompactRetry, 0, int64(*prio))
		return false
	}
	ret := false
	maxRetries := maxCompactRetries
	tracePrio, traceRetries := *prio, *retries
	switch {
	case result == CompactSkipped:
		ret = m.compactionZonelistSuitable(ac, order, allocFlags)
	default:
		if result == CompactSuccess {
			if floorOrder > PageAllocCostlyOrder {
				maxRetries /= 4
			}
			*retries++
			if *retries <= maxRetries {
				ret = true
				break
			}
		}
		minPrio := minCompactPriority
		if floorOrder > PageAllocCostlyOrder {
			minPrio = minCompactCostlyPriority
		}
		if *prio > minPrio {
			*prio--
			*retries = 0
			ret = true
		}
	}
	m.Trace.Emit(t, TraceCompactRetry, int64(order), int64(tracePrio), int64(result), int64(traceRetries), int64(maxRetries), int64(b2i(ret)))
	st.step(stepShouldCompactRetry, int64(b2i(ret)), int64(*prio))
	return ret
}

// unreserveHighatomicPageblock is unreserve_highatomic_pageblock().
func (m *Machine) unreserveHighatomicPageblock(t *sim.Task, ac *allocContext, force bool) bool {
	for _, z := range ac.zonelist {
		if z.Type > ac.highestZoneidx || !ac.nodemask.Has(z.Node.ID) {
			continue
		}
		if !force && z.NrReservedHighatomic <= PageblockNrPages {
			continue
		}
		if z.NrReservedHighatomic == 0 {
			continue
		}
		z.Lock.Lock(t)
		for o := Order(0); o < NrPageOrders; o++ {
			pfn := z.freeArea[o].list[MigrateHighAtomic].head
			if pfn == NilPFN {
				continue
			}
			size := uint64(PageblockNrPages)
			if o.Pages() > size {
				size = o.Pages()
			}
			z.NrReservedHighatomic -= min(size, z.NrReservedHighatomic)
			var ret int
			if o < PageblockOrder {
				ret = m.moveFreepagesBlockType(z, pfn, MigrateHighAtomic, ac.migratetype)
			} else {
				m.moveToFreeList(z, pfn, o, MigrateHighAtomic, ac.migratetype)
				m.changePageblockRange(pfn, o, ac.migratetype)
				ret = 1
			}
			if ret > 0 {
				z.Lock.Unlock(t)
				return true
			}
		}
		z.Lock.Unlock(t)
	}
	return false
}

// drainAllPages is drain_all_pages(zone) / __drain_all_pages(): flush the
// per-CPU lists of every CPU that has pages on them back to the buddy
// allocator. Since 5.19 the drainer does it remotely under each pcp's lock
// (no IPI). Concurrent drain_all_pages(NULL) callers give up if another
// drain is running (mutex_trylock on pcpu_drain_mutex).
func (m *Machine) drainAllPages(t *sim.Task, zone *Zone) {
	if m.pcpuDrainMutex.FreeAt > t.Now {
		if zone == nil {
			m.Slow.DrainsSkipped++
			return
		}
	}
	m.pcpuDrainMutex.Lock(t)
	m.Slow.Drains++
	for cpu := range m.cpuNode {
		has := false
		for _, z := range m.zones {
			if (zone == nil || z == zone) && z.Populated() && z.pcp[cpu].count > 0 {
				has = true
				break
			}
		}
		if !has {
			continue
		}
		m.Slow.DrainCPUs++
		t.Charge(m.Cost.RemotePCPDrain)
		for _, z := range m.zones {
			if (zone == nil || z == zone) && z.Populated() {
				m.drainPagesZone(t, cpu, z)
			}
		}
	}
	m.pcpuDrainMutex.Unlock(t)
}

// SlowpathStats counts slow-path outcomes the kernel has no vmstat counter
// for (seed 002 measured give-ups from a trace).
type SlowpathStats struct {
	Entered       uint64
	Failed        uint64
	FailedByOrder [NrPageOrders]uint64
	// NofragGiveUps counts defrag_mode dropping ALLOC_NOFRAGMENT.
	NofragGiveUps uint64
	// WouldOOM counts requests that reached __alloc_pages_may_oom where
	// the kernel could have invoked the OOM killer.
	WouldOOM uint64
	// Drains counts drain_all_pages runs, DrainCPUs the CPUs drained,
	// DrainsSkipped the callers that found a drain in progress.
	Drains, DrainCPUs, DrainsSkipped uint64
	// Time spent in direct reclaim and direct compaction (all tasks).
	DirectReclaimTime, DirectCompactTime sim.Time
}
