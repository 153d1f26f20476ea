package mm

// page_alloc_slowpath.go models __alloc_pages_slowpath() of mm/page_alloc.c
// and its helpers, in the kernel's order (linux-mm/linux-mm
// mm/page_alloc.c @6e2201b1 for the baseline and @00cb34b0 for seed 000 as
// merged):
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
//     PromotedOrderRequestedFloor). The kernel base, v7.3-rc5, has
//     7e8756d7ad22 ("mm: page_alloc: fix non-movable reclaim storm in
//     defrag_mode"): __alloc_pages_direct_reclaim and
//     __alloc_pages_direct_compact each promote a non-movable
//     ALLOC_NOFRAGMENT request to pageblock_order for their own work
//     (linux-mm/linux-mm mm/page_alloc.c @00cb34b0), while
//     should_reclaim_retry and should_compact_retry go on judging the
//     requested order. The fix as posted splits the two: the slow path
//     computes the production order (reclaim_order, compact_order) once
//     per iteration, passes it to direct reclaim and direct compaction,
//     and hands both orders to the retry helpers, which judge the work by
//     the production order ("All they really need to know is the split
//     into requested order vs production order", the thread's last
//     round, folded into the fix). The "requested" variant keeps
//     should_compact_retry's priority floor and COMPACT_SUCCESS retry
//     limit on the requested order. Here the split is allocFrame's
//     reclaimOrder and compactOrder, and retryOrders says which order
//     each helper judges.
//   - Seed 003 fix 1 (Patches.OnlyCompact): after the first direct
//     compaction, a request with __GFP_ONLY_COMPACT goes to nopage. The
//     2018 patch put this check after the early compaction block; today's
//     equivalent place is the end of the compact_first pass.
//
// # Simplifications
//
// No cpusets, no OOM killer (an order-0 request that would OOM fails instead
// and says so in the trace; the seeds never reach OOM; a __GFP_NOFAIL one
// goes on looping), no PF_MEMALLOC reserves outside kswapd.
//
// # Time and preemption
//
// Each pass of the retry loop charges its work: every get_page_from_freelist
// call's zonelist walk (ZoneCheck per zone), should_reclaim_retry's walk
// with zone_page_state_snapshot's sum over the CPUs, drain_all_pages'
// has_pcps scan, and each cond_resched() call. The loop stops at the
// kernel's cond_resched() points (linux-mm @00cb34b0): __perform_reclaim
// before and after try_to_free_pages, __alloc_pages_direct_compact after
// COMPACTFAIL, should_reclaim_retry after its zonelist walk (unless
// no_progress_loops is past MAX_RECLAIM_RETRIES), and the __GFP_NOFAIL loop
// before goto retry. There the task ends its step (package sim decides, by
// TIF_NEED_RESCHED's rule, whether another task takes its CPU) and the
// allocation waits in its allocFrame, plain data on the task's mm side,
// until the caller repeats the call. The cond_resched() calls inside
// reclaim and compaction themselves are not preemption points of an
// allocation in the model: a try_to_free_pages or try_to_compact_pages
// call is one piece of a step. (kswapd's reclaim does stop at
// shrink_lruvec()'s and shrink_node_memcgs()' cond_resched(): vmscan.go,
// "Preemption".) Work done for a task outside its steps (setup, tests) runs to
// the end without stopping.
//
// __GFP_NOFAIL: where the OOM killer would run (__alloc_pages_may_oom:
// not a costly order, no __GFP_RETRY_MAYFAIL or __GFP_THISNODE, a zone
// from ZONE_NORMAL up), __alloc_pages_cpuset_fallback() without
// watermarks, then retry; otherwise, after nopage, the same at
// ALLOC_MIN_RESERVE, then cond_resched() and retry, for as long as it
// takes (without __GFP_DIRECT_RECLAIM it fails, as in the kernel).

import (
	"github.com/pagesim/pagesim/engine/internal/enum"
	"github.com/pagesim/pagesim/engine/sim"
)

// CompactPriority is a compaction priority (include/linux/compaction.h enum
// compact_priority): lower is more thorough.
type CompactPriority int

const (
	COMPACT_PRIO_SYNC_FULL  CompactPriority = 0
	COMPACT_PRIO_SYNC_LIGHT CompactPriority = 1
	COMPACT_PRIO_ASYNC      CompactPriority = 2

	MIN_COMPACT_PRIORITY        = COMPACT_PRIO_SYNC_FULL
	MIN_COMPACT_COSTLY_PRIORITY = COMPACT_PRIO_SYNC_LIGHT
	DEF_COMPACT_PRIORITY        = COMPACT_PRIO_SYNC_LIGHT
	INIT_COMPACT_PRIORITY       = COMPACT_PRIO_ASYNC

	maxCompactRetries = 16
)

var compactPrioNames = [...]string{"COMPACT_PRIO_SYNC_FULL", "COMPACT_PRIO_SYNC_LIGHT", "COMPACT_PRIO_ASYNC"}

// String returns the kernel's name of the priority.
func (p CompactPriority) String() string { return enum.Name(compactPrioNames[:], p) }

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
	if gfpMigratetype(gfp) == MIGRATE_MOVABLE {
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
	if allocFlags&ALLOC_NOFRAGMENT != 0 && mt != MIGRATE_MOVABLE && order < PageblockOrder {
		return PageblockOrder
	}
	return order
}

// slowResume names the cond_resched() call an allocation stopped at.
type slowResume uint8

const (
	resumeStart slowResume = iota
	// resumeBeforeReclaim and resumeAfterReclaim are __perform_reclaim's
	// cond_resched() before try_to_free_pages and the one after it.
	resumeBeforeReclaim
	resumeAfterReclaim
	// resumeAfterCompactFail is __alloc_pages_direct_compact's
	// cond_resched() after COMPACTFAIL.
	resumeAfterCompactFail
	// resumeReclaimRetry is should_reclaim_retry's cond_resched() after its
	// zonelist walk.
	resumeReclaimRetry
	// resumeNofail is the __GFP_NOFAIL loop's cond_resched() before goto
	// retry.
	resumeNofail
)

// allocFrame is one __alloc_pages() call that has entered the slow path:
// the request, the alloc_context, and every local of
// __alloc_pages_slowpath() and __alloc_pages_direct_reclaim() that lives
// across a cond_resched(). While the task is stopped at one (at), the
// frame is its suspended kernel stack, kept on the mm side of the task
// (taskStruct.alloc) as plain data.
type allocFrame struct {
	// The request as the caller passed it: a call with the same four
	// values resumes the frame.
	reqGFP   GFP
	order    Order
	reqNid   int
	nodemask NodeMask
	// cpuNid is numa_node_id() when the request began: the caller's local
	// node, which the kernel computed before the cond_resched() and keeps
	// if the task resumes on another node's CPU (numaNodeID).
	cpuNid int

	ac  allocContext
	gfp GFP // the slow path's mask (seed 000 may drop __GFP_DIRECT_RECLAIM)

	costly, canDirectReclaim, canCompact, nofail bool

	compactionRetries int
	noProgressLoops   int
	compactResult     CompactResult
	compactPriority   CompactPriority
	compactFirst      bool
	canRetryReserves  bool
	didSomeProgress   uint64
	allocFlags        AllocFlags
	// reclaimOrder and compactOrder are the iteration's production
	// order: the order direct reclaim and direct compaction work at
	// (nofragPromoteOrder); retry is should_reclaim_retry's ret at its
	// cond_resched().
	reclaimOrder, compactOrder Order
	retry                      bool
	// phaseStart is when the running direct reclaim last resumed (for
	// SlowpathStats.DirectReclaimTime).
	phaseStart sim.Time
	// at is where the allocation stopped (resumeStart while it runs).
	at slowResume
	// yields counts the cond_resched() calls this allocation stopped at.
	yields uint64
	// trace is this allocation's decision trace.
	trace slowTrace
}

// condResched is cond_resched() at point at of the slow path: the task
// ends its step there if it is running one (package sim then decides
// whether it gives its CPU away), and the allocation resumes at at when
// the caller repeats the call. Work done outside a step cannot stop and
// carries on.
func (m *Machine) condResched(t *sim.Task, f *allocFrame, at slowResume) bool {
	t.Charge(m.Cost.CondResched)
	if !t.OnCPU() {
		return false
	}
	f.at = at
	f.yields++
	if at == resumeBeforeReclaim || at == resumeAfterReclaim {
		m.Slow.DirectReclaimTime += t.Now - f.phaseStart
	}
	m.Slow.Yields++
	return true
}

// slowFreelist is a get_page_from_freelist() call from the slow path,
// with the cost of its zonelist walk: each eligible zone's watermark
// check. (The fast path's single check is in AllocFastPath.)
func (m *Machine) slowFreelist(t *sim.Task, gfp GFP, order Order, allocFlags AllocFlags, ac *allocContext) PFN {
	t.Charge(m.Cost.ZoneCheck * sim.Time(m.eligibleZones(ac)))
	return m.getPageFromFreelist(t, gfp, order, allocFlags, ac)
}

// eligibleZones counts the zonelist's zones a walk from the preferred
// zone visits (for_next_zone_zonelist_nodemask).
func (m *Machine) eligibleZones(ac *allocContext) int {
	n := 0
	for i := max(ac.preferredIdx, 0); i < len(ac.zonelist); i++ {
		if z := ac.zonelist[i]; z.Type <= ac.highestZoneidx && ac.nodemask.Has(z.Node.ID) {
			n++
		}
	}
	return n
}

// _allocPagesSlowpath is __alloc_pages_slowpath(), run or resumed on frame
// f. It returns the page (or NilPFN) and true when the allocation is
// over, or false when it stopped at a cond_resched() (f.at says where).
func (m *Machine) _allocPagesSlowpath(t *sim.Task, f *allocFrame) (PFN, bool) {
	st := &f.trace
	ac := &f.ac
	pfn := NilPFN
	switch f.at {
	case resumeBeforeReclaim:
		f.phaseStart = t.Now
		goto performReclaim
	case resumeAfterReclaim:
		f.phaseStart = t.Now
		goto afterReclaim
	case resumeAfterCompactFail:
		goto afterCompact
	case resumeReclaimRetry:
		goto afterReclaimRetry
	case resumeNofail:
		goto retry
	}
	m.slowTrace.begin(st, t, f.gfp, f.order)
	m.spanBegin(t, SpanSlowpath, f.gfp, f.order, f.order, 0)
	f.costly = f.order > PAGE_ALLOC_COSTLY_ORDER
	// Seed 000, v4: costly __GFP_NORETRY callers have a cheap fallback
	// (the v3 review's form exempts no __GFP_THISNODE caller).
	if m.Patches.CostlyNoretryNoDirectReclaim && f.costly && f.gfp&__GFP_NORETRY != 0 &&
		(f.gfp&__GFP_THISNODE == 0 || m.Patches.CostlyNoretryNoThisnodeExempt) {
		f.gfp &^= __GFP_DIRECT_RECLAIM
		st.step(stepCostlyNoretry, 0, 0)
	}
	f.canDirectReclaim = f.gfp&__GFP_DIRECT_RECLAIM != 0
	f.canCompact = f.canDirectReclaim && gfpCompactionAllowed(f.gfp)
	f.nofail = f.gfp&__GFP_NOFAIL != 0
	f.canRetryReserves = true
	m.Slow.Entered++

	// restart: (cpusets and zonelists never change in pagesim, so the
	// kernel's goto restart paths are not taken.)
	f.compactionRetries, f.noProgressLoops = 0, 0
	f.compactResult = COMPACT_SKIPPED
	f.compactPriority = DEF_COMPACT_PRIORITY
	f.compactFirst = false
	if f.canCompact && (f.costly || (f.order > 0 && ac.migratetype != MIGRATE_MOVABLE)) {
		f.compactFirst = true
		f.compactPriority = INIT_COMPACT_PRIORITY
	}
	f.allocFlags = m.gfpToAllocFlags(f.gfp, f.order)
	ac.preferredIdx = firstZonesZonelist(ac.zonelist, ac.highestZoneidx, ac.nodemask)
	if ac.preferredIdx < 0 {
		goto nopage
	}
retry:
	if f.allocFlags&ALLOC_KSWAPD != 0 {
		m.wakeAllKswapds(t, f.order, f.gfp, ac)
		st.step(stepWakeKswapd, int64(f.order), 0)
	}
	pfn = m.slowFreelist(t, f.gfp, f.order, f.allocFlags, ac)
	st.step(stepFreelistMin, int64(b2i(pfn != NilPFN)), int64(f.allocFlags))
	if pfn != NilPFN {
		goto gotPage
	}
	if f.allocFlags&ALLOC_CPUSET == 0 && f.canRetryReserves {
		f.canRetryReserves = false
		goto retry
	}
	if !f.canDirectReclaim {
		if m.Sysctl.DefragMode != 0 && f.allocFlags&ALLOC_NOFRAGMENT != 0 && f.gfp&__GFP_KSWAPD_RECLAIM != 0 {
			f.allocFlags &^= ALLOC_NOFRAGMENT
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
	// The production order of this iteration (7e8756d7ad22 computes it
	// inside direct reclaim and direct compaction; seed 002's fix once
	// here, for them and for the retry helpers: the same value).
	f.reclaimOrder = nofragPromoteOrder(f.order, f.allocFlags, ac.migratetype)
	f.compactOrder = f.reclaimOrder
	if f.compactFirst {
		goto directCompact
	}
	// __alloc_pages_direct_reclaim(): reclaim at reclaim_order inside a
	// memory stall; __perform_reclaim() calls cond_resched() before and
	// after try_to_free_pages().
	m.psiMemstallEnter(t)
	m.spanBegin(t, SpanDirectReclaim, f.gfp, f.order, f.reclaimOrder, 0)
	f.phaseStart = t.Now
	if m.condResched(t, f, resumeBeforeReclaim) {
		return NilPFN, false
	}
performReclaim:
	f.didSomeProgress = m.performReclaim(t, f)
	if m.condResched(t, f, resumeAfterReclaim) {
		return NilPFN, false
	}
afterReclaim:
	pfn = m.directReclaimFreelist(t, f)
	m.Slow.DirectReclaimTime += t.Now - f.phaseStart
	m.psiMemstallLeave(t)
	m.spanEnd(t, SpanDirectReclaim, int64(f.didSomeProgress))
	if pfn != NilPFN {
		goto gotPage
	}
directCompact:
	{
		var resched bool
		pfn, f.compactResult, resched = m._allocPagesDirectCompact(t, f.gfp, f.order, f.compactOrder, f.allocFlags, ac, f.compactPriority, st)
		if pfn != NilPFN {
			goto gotPage
		}
		if resched && m.condResched(t, f, resumeAfterCompactFail) {
			return NilPFN, false
		}
	}
afterCompact:
	if f.compactFirst {
		if m.Kernel.LegacyCostlyNoretry {
			// 2018: "If compaction is deferred for high-order
			// allocations, it is because sync compaction recently
			// failed" - only then give up.
			if f.gfp&__GFP_NORETRY != 0 && f.compactResult == COMPACT_DEFERRED {
				st.step(stepNopage, nopageNoretryDeferred, 0)
				goto nopage
			}
		}
		// Seed 003 fix 1: only one compaction attempt, never reclaim.
		if f.gfp&___GFP_ONLY_COMPACT != 0 {
			st.step(stepNopage, nopageOnlyCompact, 0)
			goto nopage
		}
		if !m.Kernel.LegacyCostlyNoretry && f.gfp.Has(__GFP_NORETRY|__GFP_THISNODE) {
			st.step(stepNopage, nopageNoretryThisnode, 0)
			goto nopage
		}
		if f.gfp&__GFP_NORETRY == 0 {
			f.compactPriority = DEF_COMPACT_PRIORITY
		}
		f.compactFirst = false
		goto retry
	}
	if f.gfp&__GFP_NORETRY != 0 {
		st.step(stepNopage, nopageNoretry, 0)
		goto nopage
	}
	if f.costly && (!f.canCompact || f.gfp&__GFP_RETRY_MAYFAIL == 0) {
		st.step(stepNopage, nopageCostly, 0)
		goto nopage
	}
	f.retry = m.shouldReclaimRetry(t, f.gfp, m.retryOrders(f), ac, f.allocFlags, f.didSomeProgress > 0, &f.noProgressLoops, st)
	if f.noProgressLoops <= maxReclaimRetries && m.condResched(t, f, resumeReclaimRetry) {
		return NilPFN, false
	}
afterReclaimRetry:
	// should_reclaim_retry's out: before OOM, exhaust the highatomic
	// reserve.
	if !f.retry {
		f.retry = m.unreserveHighatomicPageblock(t, ac, true)
	}
	st.step(stepShouldReclaimRetry, int64(b2i(f.retry)), int64(f.noProgressLoops))
	if f.retry {
		goto retry
	}
	if f.didSomeProgress > 0 && f.canCompact &&
		m.shouldCompactRetry(t, f.gfp, ac, m.retryOrders(f), f.allocFlags, f.compactResult, &f.compactPriority, &f.compactionRetries, st) {
		goto retry
	}
	if m.Sysctl.DefragMode != 0 && f.allocFlags&ALLOC_NOFRAGMENT != 0 {
		// defrag_mode: reclaim and compaction failed, fall back
		// rather than OOM ("give-up").
		f.allocFlags &^= ALLOC_NOFRAGMENT
		m.Slow.NofragGiveUps++
		st.step(stepNofragGiveUp, 0, 0)
		goto retry
	}
	// __alloc_pages_may_oom (linux-mm mm/page_alloc.c @00cb34b0): a last
	// attempt at the high watermark catches a parallel free; then, for a
	// request that is not costly, has neither __GFP_RETRY_MAYFAIL nor
	// __GFP_THISNODE and may use ZONE_NORMAL, out_of_memory(). oom_lock's
	// mutex_trylock always succeeds here: a task holds it only within this
	// step.
	if pfn = m.slowFreelist(t, (f.gfp|__GFP_HARDWALL)&^__GFP_DIRECT_RECLAIM, f.order, ALLOC_WMARK_HIGH|ALLOC_CPUSET, ac); pfn != NilPFN {
		goto gotPage
	}
	if oomable := !f.costly && f.gfp&(__GFP_RETRY_MAYFAIL|__GFP_THISNODE) == 0 && ac.highestZoneidx >= ZONE_NORMAL; oomable {
		m.Slow.WouldOOM++
		// out_of_memory() (mm/oom_kill.c): "The OOM killer does not
		// compensate for IO-less reclaim": a request without __GFP_FS
		// gets true before any victim is selected (pagesim has no
		// memcg OOM, which would kill for it); with __GFP_FS the
		// killer selects a victim, which pagesim does not model.
		kill := f.gfp&__GFP_FS != 0
		if kill {
			m.Slow.WouldOOMKill++
		}
		st.step(stepWouldOOM, int64(b2i(kill)), 0)
		if f.nofail {
			// "out_of_memory(&oc) || WARN_ON_ONCE_GFP(gfp_mask &
			// __GFP_NOFAIL, gfp_mask)": whether or not the OOM killer
			// found a victim, a __GFP_NOFAIL request counts it as
			// progress and gets the reserves below the min
			// watermark, __alloc_pages_cpuset_fallback() with
			// ALLOC_NO_WATERMARKS (there since 6c18ba7a1899 "mm: help
			// __GFP_NOFAIL allocations which do not trigger OOM
			// killer", v4.11, so the 2018 base has it too).
			pfn = m.slowFreelist(t, f.gfp, f.order, ALLOC_NO_WATERMARKS, ac)
			st.step(stepNofailNoWatermarks, int64(b2i(pfn != NilPFN)), 0)
			if pfn != NilPFN {
				goto gotPage
			}
			m.Slow.NofailRetries++
		} else if kill {
			// The kernel kills a task and retries; pagesim fails the
			// request where the kill would be (its callers that care,
			// promoted-order and nofrag-watermark, end their run at
			// WouldOOMKill).
			goto oomNopage
		} else {
			// A GFP_NOFS or GFP_NOIO request: out_of_memory() returned
			// true without a kill (review finding F48).
			m.Slow.OOMRetries++
		}
		// out_of_memory() returned true: *did_some_progress = 1, and
		// "Retry as long as the OOM killer is making progress" with
		// no_progress_loops reset. The kernel bounds this loop by
		// nothing but a free page: each pass reclaims, compacts and
		// spends its no_progress_loops at should_reclaim_retry's
		// cond_resched() (where the task yields here) before it comes
		// back; a scenario's duration ends a run that loops.
		f.noProgressLoops = 0
		goto retry
	}
oomNopage:
	st.step(stepNopage, nopageOOM, 0)
nopage:
	if f.nofail && f.canDirectReclaim {
		// __GFP_NOFAIL never fails: __alloc_pages_cpuset_fallback()
		// with ALLOC_MIN_RESERVE (no cpusets: one attempt), then
		// cond_resched() and retry, for as long as it takes.
		pfn = m.slowFreelist(t, f.gfp, f.order, ALLOC_WMARK_MIN|ALLOC_MIN_RESERVE, ac)
		st.step(stepNofailRetry, int64(b2i(pfn != NilPFN)), 0)
		if pfn != NilPFN {
			goto gotPage
		}
		m.Slow.NofailRetries++
		if m.condResched(t, f, resumeNofail) {
			return NilPFN, false
		}
		goto retry
	}
	m.Slow.Failed++
	m.countFailure(f.gfp, f.order)
	st.end(t, NilPFN, f.gfp)
	m.spanEnd(t, SpanSlowpath, int64(NilPFN))
	return NilPFN, true
gotPage:
	st.end(t, pfn, f.gfp)
	m.spanEnd(t, SpanSlowpath, int64(pfn))
	return pfn, true
}

// countFailure records an allocation failure (warn_alloc).
func (m *Machine) countFailure(gfp GFP, order Order) {
	m.Slow.FailedByOrder[order]++
}

// performReclaim is try_to_free_pages() as __perform_reclaim() calls it,
// with PF_MEMALLOC set (memalloc_noreclaim_save).
func (m *Machine) performReclaim(t *sim.Task, f *allocFrame) uint64 {
	ts := m.current(t)
	ts.flags |= PF_MEMALLOC
	progress := m.tryToFreePages(t, f.ac.zonelist, f.reclaimOrder, f.gfp, f.ac.nodemask, f.allocFlags, f.ac.migratetype)
	ts.flags &^= PF_MEMALLOC
	f.trace.step(stepDirectReclaim, int64(progress), int64(f.reclaimOrder))
	return progress
}

// directReclaimFreelist is the rest of __alloc_pages_direct_reclaim()
// after __perform_reclaim(): if reclaim made progress, try the freelists,
// draining the per-CPU lists once if that fails.
func (m *Machine) directReclaimFreelist(t *sim.Task, f *allocFrame) PFN {
	if f.didSomeProgress == 0 {
		return NilPFN
	}
	drained := false
	for {
		pfn := m.slowFreelist(t, f.gfp, f.order, f.allocFlags, &f.ac)
		if pfn != NilPFN || drained {
			return pfn
		}
		m.unreserveHighatomicPageblock(t, &f.ac, false)
		m.drainAllPages(t, nil)
		f.trace.step(stepDrainAllPages, 0, 0)
		drained = true
	}
}

// COMPACT_INACTIVE is COMPACT_INACTIVE of the kernels before 19a4cd3c3a68
// (v5.1): "compaction didn't start as it was deferred due to past
// failures", an alias of COMPACT_DEFERRED that the old
// __alloc_pages_direct_compact compared against.
const COMPACT_INACTIVE = COMPACT_DEFERRED

// _allocPagesDirectCompact is __alloc_pages_direct_compact(): compaction at
// compactOrder (the production order: pageblock_order for a non-movable
// ALLOC_NOFRAGMENT request, 7e8756d7ad22), the capture and the freelist
// attempt at the requested order. resched reports that it reached its
// cond_resched() (compaction ran and failed).
func (m *Machine) _allocPagesDirectCompact(t *sim.Task, gfp GFP, order, compactOrder Order, allocFlags AllocFlags, ac *allocContext, prio CompactPriority, st *slowTrace) (page PFN, result CompactResult, resched bool) {
	if compactOrder == 0 {
		return NilPFN, COMPACT_SKIPPED, false
	}
	m.psiMemstallEnter(t)
	m.spanBegin(t, SpanDirectCompact, gfp, order, compactOrder, prio)
	start := t.Now
	ts := m.current(t)
	ts.flags |= PF_MEMALLOC
	capc := &m.capcBuf
	if m.capc != nil {
		capc = new(captureControl) // nested: capcBuf is in use
	}
	*capc = captureControl{migratetype: ac.migratetype, order: order, page: NilPFN}
	m.capc = capc
	m.capcTask = t
	result = m.tryToCompactPages(t, gfp, compactOrder, allocFlags, ac, prio, capc)
	m.capc = nil
	m.capcTask = nil
	ts.flags &^= PF_MEMALLOC
	page = capc.page
	if page != NilPFN {
		result = COMPACT_SUCCESS
	}
	m.Slow.DirectCompactTime += t.Now - start
	m.psiMemstallLeave(t)
	m.spanEnd(t, SpanDirectCompact, int64(result))
	st.step(stepDirectCompact, int64(result), int64(prio))
	// "At least in one zone compaction wasn't deferred or skipped, so
	// let's count a compaction stall": today only COMPACT_SKIPPED returns
	// first (06dac2f467fe, v5.13), so a deferred attempt counts
	// compact_stall and then compact_fail. The 2018 kernel returned for
	// every result up to COMPACT_INACTIVE (= COMPACT_DEFERRED), a check
	// 19a4cd3c3a68 (v5.1) removed. The v7.3-rc5 mm tree (@00cb34b0)
	// returns for COMPACT_DEFERRED too (Kernel.DeferredCompactNoStall).
	if result == COMPACT_SKIPPED || (m.Kernel.LegacyCompactStall && result <= COMPACT_INACTIVE) ||
		(m.Kernel.DeferredCompactNoStall && result == COMPACT_DEFERRED) {
		return NilPFN, result, false
	}
	m.countVMEvent(COMPACTSTALL)
	st.stall()
	if page != NilPFN {
		m.prepNewPage(page, order, gfp)
		m.countVMEvents(pgallocEvent(m.ZoneOf(page).Type), order.Pages())
	} else {
		page = m.slowFreelist(t, gfp, order, allocFlags, ac)
	}
	if page != NilPFN {
		z := m.ZoneOf(page)
		z.compact.blockskipFlush = false
		m.compactionDeferReset(t, z, compactOrder, true)
		m.countVMEvent(COMPACTSUCCESS)
		return page, result, false
	}
	m.countVMEvent(COMPACTFAIL)
	return NilPFN, result, true
}

// retryOrders are the orders the retry helpers judge, which seed 002 is
// about. In v7.3-rc5 both helpers get the requested order alone. The fix
// as posted gives them the production order: should_reclaim_retry judges
// reclaim progress and the watermark at reclaim_order, and
// should_compact_retry everything at compact_order; its "requested"
// variant keeps should_compact_retry's priority floor and COMPACT_SUCCESS
// retry limit (floor) on the requested order.
type retryOrders struct {
	reclaim, compact, floor Order
}

func (m *Machine) retryOrders(f *allocFrame) retryOrders {
	if !m.Patches.PromotedOrderRetries {
		return retryOrders{reclaim: f.order, compact: f.order, floor: f.order}
	}
	o := retryOrders{reclaim: f.reclaimOrder, compact: f.compactOrder, floor: f.compactOrder}
	if m.Patches.PromotedOrderRequestedFloor {
		o.floor = f.order
	}
	return o
}

// shouldReclaimRetry is should_reclaim_retry() up to its cond_resched():
// the caller does that and the final unreserve_highatomic_pageblock().
// It judges orders.reclaim. Each zone's check reads the zone's reclaimable
// LRU sizes and zone_page_state_snapshot(NR_FREE_PAGES), which sums every
// CPU's vm_stat_diff.
func (m *Machine) shouldReclaimRetry(t *sim.Task, gfp GFP, orders retryOrders, ac *allocContext, allocFlags AllocFlags, didProgress bool, loops *int, st *slowTrace) bool {
	order := orders.reclaim
	if didProgress && order <= PAGE_ALLOC_COSTLY_ORDER {
		*loops = 0
	} else {
		*loops++
	}
	if *loops > maxReclaimRetries {
		return false
	}
	for _, z := range ac.zonelist {
		if z.Type > ac.highestZoneidx || !ac.nodemask.Has(z.Node.ID) {
			continue
		}
		t.Charge(m.Cost.ZoneCheck + m.Cost.PerCPUStatRead*sim.Time(len(m.cpuNode)))
		reclaimable := int64(m.zoneReclaimablePages(z))
		available := reclaimable + z.Stat[NR_FREE_PAGES]
		minWmark := z.WmarkPages(WMARK_MIN)
		// Plain __zone_watermark_ok(): seed 001 leaves this
		// check counting every migratetype (reclaim and
		// compaction work across types to free a whole block).
		wmark := m._zoneWatermarkOK(z, order, minWmark, ac.highestZoneidx, allocFlags&^ALLOC_NOFRAGMENT, available, ac.migratetype)
		m.Trace.Emit(t, TraceReclaimRetryZone, int64(z.Node.ID), int64(z.Type), int64(order), reclaimable, available,
			int64(minWmark), int64(*loops), int64(b2i(wmark)))
		if wmark {
			return true
		}
	}
	return false
}

// zoneReclaimablePages is zone_reclaimable_pages().
func (m *Machine) zoneReclaimablePages(z *Zone) uint64 {
	n := z.Stat[NR_ZONE_INACTIVE_FILE] + z.Stat[NR_ZONE_ACTIVE_FILE]
	if m.canReclaimAnonPages() {
		n += z.Stat[NR_ZONE_INACTIVE_ANON] + z.Stat[NR_ZONE_ACTIVE_ANON]
	}
	return uint64(max(n, 0))
}

// shouldCompactRetry is should_compact_retry(): orders.compact decides
// whether compaction can help at all and what a COMPACT_SKIPPED needs;
// orders.floor sets the COMPACT_SUCCESS retry limit and the priority floor.
func (m *Machine) shouldCompactRetry(t *sim.Task, gfp GFP, ac *allocContext, orders retryOrders, allocFlags AllocFlags, result CompactResult, prio *CompactPriority, retries *int, st *slowTrace) bool {
	order, floorOrder := orders.compact, orders.floor
	if order == 0 {
		st.step(stepShouldCompactRetry, 0, int64(*prio))
		return false
	}
	ret := false
	maxRetries := maxCompactRetries
	tracePrio, traceRetries := *prio, *retries
	switch {
	case result == COMPACT_SKIPPED:
		ret = m.compactionZonelistSuitable(ac, order, allocFlags)
	default:
		if result == COMPACT_SUCCESS {
			if floorOrder > PAGE_ALLOC_COSTLY_ORDER {
				maxRetries /= 4
			}
			*retries++
			if *retries <= maxRetries {
				ret = true
				break
			}
		}
		minPrio := MIN_COMPACT_PRIORITY
		if floorOrder > PAGE_ALLOC_COSTLY_ORDER {
			minPrio = MIN_COMPACT_COSTLY_PRIORITY
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
		for o := Order(0); o < NR_PAGE_ORDERS; o++ {
			pfn := z.freeArea[o].list[MIGRATE_HIGHATOMIC].head
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
				ret = m.moveFreepagesBlockType(z, pfn, MIGRATE_HIGHATOMIC, ac.migratetype)
			} else {
				m.moveToFreeList(z, pfn, o, MIGRATE_HIGHATOMIC, ac.migratetype)
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
	if m.pcpuDrainMutex.HeldAt(t, t.Now) {
		if zone == nil {
			m.Slow.DrainsSkipped++
			return
		}
	}
	m.pcpuDrainMutex.Lock(t)
	m.Slow.Drains++
	for cpu := range m.cpuNode {
		// has_pcps: read each zone's pcp count of this CPU.
		has := false
		for _, z := range m.zones {
			if (zone == nil || z == zone) && z.Populated() {
				t.Charge(m.Cost.PerCPUStatRead)
				if z.pcp[cpu].count > 0 {
					has = true
					break
				}
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
	FailedByOrder [NR_PAGE_ORDERS]uint64
	// NofragGiveUps counts defrag_mode dropping ALLOC_NOFRAGMENT.
	NofragGiveUps uint64
	// ResumedOffNode counts the resumptions of allocations stopped at a
	// cond_resched() on a CPU of another node than the one the
	// allocation began on (its task moved while it was stopped). The
	// kernel has no counter: the allocation keeps the preferred node
	// its caller computed before cond_resched(); pagesim's scripts count
	// it to show such a resume happened.
	ResumedOffNode uint64
	// WouldOOM counts requests that reached __alloc_pages_may_oom and
	// called out_of_memory() there: their last attempt at the high
	// watermark failed, and they are not costly, have neither
	// __GFP_RETRY_MAYFAIL nor __GFP_THISNODE and may use ZONE_NORMAL.
	WouldOOM uint64
	// WouldOOMKill counts those of them for which out_of_memory() would
	// select a victim: a request without __GFP_FS gets "return true"
	// before any selection, "The OOM killer does not compensate for
	// IO-less reclaim" (mm/oom_kill.c out_of_memory; pagesim has no memcg
	// OOM), and the kernel's slow path retries it as progress.
	WouldOOMKill uint64
	// OOMRetries counts the retries of requests without __GFP_NOFAIL
	// after such a "return true" without a kill (the __GFP_NOFAIL ones
	// count in NofailRetries).
	OOMRetries uint64
	// Yields counts cond_resched() calls at which an allocation ended
	// its task's step; NofailRetries the __GFP_NOFAIL loop's retries;
	// Abandoned the suspended allocations whose task did not repeat
	// the call (a caller that ignored AllocPending: a bug the invariant
	// check reports).
	Yields, NofailRetries, Abandoned uint64
	// Drains counts drain_all_pages runs, DrainCPUs the CPUs drained,
	// DrainsSkipped the callers that found a drain in progress.
	Drains, DrainCPUs, DrainsSkipped uint64
	// Time spent in direct reclaim and direct compaction (all tasks).
	DirectReclaimTime, DirectCompactTime sim.Time
}
