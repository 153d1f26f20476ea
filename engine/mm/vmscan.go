package mm

// vmscan.go models page reclaim, mm/vmscan.c: direct reclaim
// (try_to_free_pages, do_try_to_free_pages and its retries, shrink_zones
// with compaction_ready, shrink_node, shrink_node_memcgs with memory.min and
// memory.low, get_scan_count, shrink_lruvec, shrink_inactive_list,
// shrink_folio_list, shrink_active_list, should_continue_reclaim) and kswapd
// (wakeup_kswapd, balance_pgdat with watermark boosting, pgdat_balanced,
// kswapd_try_to_sleep, kswapd_failures).
//
// # What the model keeps
//
// The classic two-list LRU (MGLRU changes which pages go first, not how
// reclaim and compaction interact), the scan targets and
// their priority loop exactly, the anon/file balance (swappiness, no swap
// means no anon scanning), the folio decisions of shrink_folio_list that the
// seeds depend on (referenced -> keep or activate, pinned anon -> keep,
// dirty file -> activate for writeback, clean file -> freed leaving a
// shadow entry, anon -> swapped out when there is swap), and the counters:
// allocstall_*, pgscan_* and pgsteal_* by reclaimer, pgscan_anon/file,
// pgsteal_anon/file, pgactivate, pgdeactivate, pgrefill, pswpout, pageoutrun,
// kswapd_*_wmark_hit_quickly.
//
// # What it simplifies
//
// Shrinkers are modelled as mm/shrinker.c's do_shrink_slab() drives them
// (the scan target from the object count, the priority and seeks, deferred
// work, batches of SHRINK_BATCH), for the shrinkers a memory user registers
// (RegisterShrinker); the kernel's own caches register none, so their slab
// is unreclaimable unless freed explicitly. Of
// reclaim throttling (reclaim_throttle) only VMSCAN_THROTTLE_NOPROGRESS is
// modelled (consider_reclaim_throttle): a step runs to completion, so pages
// isolated by one reclaimer are back on the LRU before another step starts
// and too_many_isolated() cannot trigger, and the writeback and congestion
// throttles need kswapd's PGDAT_WRITEBACK bookkeeping or cgroup v1. Dirty
// page writeback is done by its writer (FileSync, FileFdatawrite); reclaim
// never writes file pages, as in today's kernel for direct reclaim.
// Swap-out submits the write to the block device (page_io.go) and keeps the
// folio under writeback; a later pass frees it once the write completed.
//
// # The 2018 kernel base
//
// Seed 003 ran on v4.18, whose reclaim differs where it meets a node full
// of pinned guest memory. Kernel.LegacyReclaim gives do_try_to_free_pages
// only the memory.low retry (no force_deactivate retry, v5.5; no full
// cgroup-walk retry, v6.10), decides deactivation with
// inactive_list_is_low() at every shrink_list call, and lets global
// reclaim's cgroup walk run to the end of its round.
// Kernel.LegacyPinnedReclaim removes folio_maybe_dma_pinned() from
// shrink_folio_list (it came in v5.11): a pinned THP reaches
// can_split_huge_page(), which the pin's references fail, and is
// activated; aging brings it back to the inactive list when that is low,
// and the next scan activates it again. The inactive anon list thus holds
// the share of the pinned memory inactive_list_is_low allows, and each
// failed fault scans that share instead of all of it.
//
// # Preemption
//
// pagesim's scheduler preempts a task only where its step ends (package
// sim, "Preemption points"): the kernel it models is CONFIG_PREEMPT_NONE
// or CONFIG_PREEMPT_VOLUNTARY (or PREEMPT_DYNAMIC booted so, as the
// distributions' kernels are), where kernel code gives its CPU away only
// at cond_resched() and the like once TIF_NEED_RESCHED is set; under
// PREEMPT_FULL or PREEMPT_LAZY it would be preempted anywhere.
//
// kswapd's shrink_node() stops at two of the kernel's cond_resched()
// calls (linux-mm mm/vmscan.c @000fc868): shrink_lruvec()'s after each
// round of SWAP_CLUSTER_MAX batches, and shrink_node_memcgs()' at the
// top of each cgroup's turn. There, if anything else is due on the
// machine by kswapd's clock or a task waits for its CPU past kswapd's
// slice (sim.Task.NeedResched), the step ends and the pass resumes at
// the same point of the same scan_control at the task's next step
// (shrinkFrame, in balanceState); package sim decides whether the
// waiting task takes the CPU meanwhile. Each call charges CondResched.
// So a task woken on kswapd's CPU waits at most a round of batches (up
// to 4 x 32 folios), not a priority iteration (until December 2026 a
// whole kswapd_shrink_node() was one step: 5 to 40 ms in the scenarios
// during which nothing else ran on that CPU, review finding F35). No
// pages are isolated at these points: a round's shrink_list() calls put
// back what they isolated. Not stop points: the cond_resched() calls
// inside shrink_folio_list() (per folio), shrink_active_list(),
// shrink_slab() and kswapd_age_node() (each at most a batch or a
// shrinker's pass), and the batches a fast-forwarded pinned scan does by
// count (fastForwardPinnedScan, fastForwardPinnedCycle: seed 003's
// guests pin their memory, and its kswapd never balances). A direct
// reclaimer's try_to_free_pages() is still one piece of its step, as
// the slow path's essay says (page_alloc_slowpath.go): it runs in the
// allocating task, which stops at the slow path's own cond_resched()
// calls around it.
//
// # Cost
//
// A scan charges LRUScanPage for every folio it isolates, plus FolioRefWalk
// for the reverse-map walk of every mapped folio (folio_referenced, on the
// inactive list and on the active list), and the unmap/free or swap-out
// cost of folios it frees. Pinned folios are visited by count (lru.go), and
// charged the same; scans that meet only pinned folios run in closed form
// (fastForwardPinnedScan, fastForwardPinnedCycle), with the same counters,
// pool positions and clock as batch by batch (a test compares them).

import (
	"github.com/pagesim/pagesim/engine/sim"
)

// Reclaim constants (mm/vmscan.c, include/linux/mmzone.h).
const (
	defPriority       = 12 // DEF_PRIORITY
	maxReclaimRetries = 16 // MAX_RECLAIM_RETRIES
	maxSwappiness     = 200
)

type reclaimer uint8

const (
	reclaimerKswapd reclaimer = iota
	reclaimerDirect
)

// scanControl is struct scan_control.
type scanControl struct {
	nrToReclaim     uint64
	nrReclaimed     uint64
	nrScanned       uint64
	gfp             GFP
	order           Order
	reclaimIdx      ZoneType
	priority        int
	nodemask        NodeMask
	mayWritepage    bool
	mayUnmap        bool
	maySwap         bool
	compactionReady bool
	who             reclaimer
	// Deactivation and protection state (may_deactivate, force_deactivate,
	// skipped_deactivate, memcg_low_reclaim, memcg_low_skipped,
	// memcg_full_walk).
	mayDeactivateAnon, mayDeactivateFile bool
	forceDeactivate                      bool
	skippedDeactivate                    bool
	memcgLowReclaim                      bool
	memcgLowSkipped                      bool
	memcgFullWalk                        bool
	cacheTrimMode                        bool
	fileIsTiny                           bool
	anonCost, fileCost                   uint64
	// allocFlags/migratetype are the allocation's, for seed 001 patch 3.
	allocFlags  AllocFlags
	migratetype MigrateType
}

func (sc *scanControl) pgscanEvent() VMEventItem {
	if sc.who == reclaimerKswapd {
		return PGSCAN_KSWAPD
	}
	return PGSCAN_DIRECT
}

func (sc *scanControl) pgstealEvent() VMEventItem {
	if sc.who == reclaimerKswapd {
		return PGSTEAL_KSWAPD
	}
	return PGSTEAL_DIRECT
}

// ---------------------------------------------------------------------------
// Direct reclaim

// tryToFreePages is try_to_free_pages(): direct reclaim for an allocation
// of order with gfp over the zonelist. It returns the pages reclaimed (or 1
// if reclaim stopped to let compaction run).
func (m *Machine) tryToFreePages(t *sim.Task, zonelist []*Zone, order Order, gfp GFP, nodemask NodeMask, allocFlags AllocFlags, mt MigrateType) uint64 {
	sc := scanControl{
		nrToReclaim:  SWAP_CLUSTER_MAX,
		gfp:          gfp,
		reclaimIdx:   gfpZone(gfp),
		order:        order,
		nodemask:     nodemask,
		priority:     defPriority,
		mayWritepage: true,
		mayUnmap:     true,
		maySwap:      true,
		who:          reclaimerDirect,
		allocFlags:   allocFlags,
		migratetype:  mt,
	}
	pid := int64(t.ID + 1)
	m.Trace.Emit(t, TraceMmVmscanDirectReclaimBegin, int64(order), int64(gfp), pid, 0)
	m.Reclaim.DirectRuns[order]++
	nr := m.doTryToFreePages(t, zonelist, &sc)
	m.Reclaim.DirectReclaimed[order] += sc.nrReclaimed
	m.Trace.Emit(t, TraceMmVmscanDirectReclaimEnd, int64(nr), pid, 0)
	return nr
}

// doTryToFreePages is do_try_to_free_pages().
func (m *Machine) doTryToFreePages(t *sim.Task, zonelist []*Zone, sc *scanControl) uint64 {
	initialPriority := sc.priority
retry:
	m.countVMEvent(allocstallEvent(sc.reclaimIdx))
	for {
		sc.nrScanned = 0
		m.shrinkZones(t, zonelist, sc)
		if sc.nrReclaimed >= sc.nrToReclaim {
			break
		}
		if sc.compactionReady {
			break
		}
		if sc.priority < defPriority-2 {
			sc.mayWritepage = true
		}
		sc.priority--
		if sc.priority < 0 {
			break
		}
	}
	// The nodes of the zonelist's eligible zones, once each (nodesOf,
	// without building the list: this runs once per direct reclaim).
	var last *Node
	for _, z := range zonelist {
		if z.Type > sc.reclaimIdx || !sc.nodemask.Has(z.Node.ID) || z.Node == last {
			continue
		}
		last = z.Node
		m.snapshotRefaults(z.Node)
	}
	if sc.nrReclaimed > 0 {
		return sc.nrReclaimed
	}
	if sc.compactionReady {
		return 1
	}
	// v4.18 (Kernel.LegacyReclaim) had only the memory.low retry.
	legacy := m.Kernel.LegacyReclaim
	// Direct reclaimers may have walked only part of the cgroup tree.
	if !sc.memcgFullWalk && !legacy {
		sc.priority = initialPriority
		sc.memcgFullWalk = true
		goto retry
	}
	if sc.skippedDeactivate && !legacy {
		sc.priority = initialPriority
		sc.forceDeactivate = true
		sc.skippedDeactivate = false
		goto retry
	}
	if sc.memcgLowSkipped {
		sc.priority = initialPriority
		sc.forceDeactivate = false
		sc.memcgLowReclaim = true
		sc.memcgLowSkipped = false
		goto retry
	}
	return 0
}

// nodesOf lists the nodes of the zonelist's eligible zones, once each.
func (m *Machine) nodesOf(zonelist []*Zone, highest ZoneType, nm NodeMask) []*Node {
	var out []*Node
	var last *Node
	for _, z := range zonelist {
		if z.Type > highest || !nm.Has(z.Node.ID) || z.Node == last {
			continue
		}
		last = z.Node
		out = append(out, z.Node)
	}
	return out
}

// snapshotRefaults is snapshot_refaults().
func (m *Machine) snapshotRefaults(n *Node) {
	for _, cg := range m.memcgs {
		lv := cg.lruvecs[n.ID]
		lv.refaults[0] = uint64(n.Stat[WORKINGSET_ACTIVATE_ANON])
		lv.refaults[1] = uint64(n.Stat[WORKINGSET_ACTIVATE_FILE])
	}
}

// shrinkZones is shrink_zones().
func (m *Machine) shrinkZones(t *sim.Task, zonelist []*Zone, sc *scanControl) {
	var last, first *Node
	for _, z := range zonelist {
		if z.Type > sc.reclaimIdx || !sc.nodemask.Has(z.Node.ID) || !z.Managed() {
			continue
		}
		t.Charge(m.Cost.ZoneCheck)
		// If we already have plenty of memory free for compaction in
		// this zone, don't free any more.
		if sc.order > PAGE_ALLOC_COSTLY_ORDER && m.compactionReady(z, sc) {
			sc.compactionReady = true
			continue
		}
		if first == nil {
			first = z.Node
		}
		if z.Node == last {
			continue
		}
		last = z.Node
		m.shrinkNode(t, z.Node, sc)
	}
	if first != nil {
		m.considerReclaimThrottle(t, first, sc)
	}
}

// Reasons for reclaim_throttle (enum vmscan_throttle_state); pagesim
// throttles only for the one direct reclaim meets without cgroup v1 or a
// flusher: no progress while writeback is in flight.
const (
	VMSCAN_THROTTLE_WRITEBACK = iota
	VMSCAN_THROTTLE_ISOLATED
	VMSCAN_THROTTLE_NOPROGRESS
	VMSCAN_THROTTLE_CONGESTED
)

// considerReclaimThrottle is consider_reclaim_throttle() (mm/vmscan.c,
// Mel Gorman's "mm: vmscan: reduce throttling due to a failure to make
// progress", v5.16): a direct reclaimer that reached priority 1 without
// reclaiming anything sleeps for a jiffy, giving writeback time to
// complete. kswapd is never throttled here. (The kernel also wakes the
// throttled tasks when a reclaimer makes progress; pagesim's sleep lasts
// the whole jiffy.)
func (m *Machine) considerReclaimThrottle(t *sim.Task, n *Node, sc *scanControl) {
	if sc.who == reclaimerKswapd {
		return
	}
	if sc.priority == 1 && sc.nrReclaimed == 0 {
		m.reclaimThrottle(t, n, VMSCAN_THROTTLE_NOPROGRESS)
	}
}

// reclaimThrottle is reclaim_throttle() for VMSCAN_THROTTLE_NOPROGRESS:
// unless skip_throttle_noprogress() says not to (kswapd has given up, or
// at most half the node's reclaimable pages are dirty or under writeback,
// so there is nothing to wait for), the task sleeps for one jiffy (1 ms at
// HZ=1000) in TASK_UNINTERRUPTIBLE: not I/O wait, but still inside direct
// reclaim's memory stall. Writeback that completed meanwhile is seen.
func (m *Machine) reclaimThrottle(t *sim.Task, n *Node, reason int) {
	if reason != VMSCAN_THROTTLE_NOPROGRESS {
		return
	}
	if n.kswapd.failures >= maxReclaimRetries {
		return
	}
	var reclaimable, writePending uint64
	for _, z := range n.Zones {
		if z == nil || !z.Managed() {
			continue
		}
		reclaimable += m.zoneReclaimablePages(z)
		writePending += uint64(max(z.Stat[NR_ZONE_WRITE_PENDING], 0))
	}
	if 2*writePending <= reclaimable {
		return
	}
	const jiffy = sim.Second / psiHZ
	start := t.Now
	t.Sleep(jiffy)
	m.blkRetire(t.Now)
	m.Reclaim.Throttled++
	if m.Trace.Enabled(TraceMmVmscanThrottled) {
		m.Trace.Emit(t, TraceMmVmscanThrottled, int64(n.ID), int64(jiffy/sim.Microsecond), int64((t.Now-start)/sim.Microsecond), int64(reason))
	}
}

// compactionReady is compaction_ready(): the zone already has enough free
// memory for compaction to build the page, so reclaim need not go on.
func (m *Machine) compactionReady(z *Zone, sc *scanControl) bool {
	if !gfpCompactionAllowed(sc.gfp) {
		return false
	}
	// Allocation can already succeed, nothing to do.
	flags, mt := m.reclaimWatermarkFlags(sc)
	if m._zoneWatermarkOK(z, sc.order, z.WmarkPages(WMARK_MIN), sc.reclaimIdx, flags, z.Stat[NR_FREE_PAGES], mt) {
		return true
	}
	return m.compactionSuitable(nil, z, sc.order, z.WmarkPages(WMARK_HIGH), sc.reclaimIdx)
}

// reclaimWatermarkFlags returns the alloc_flags and migratetype that direct
// reclaim's two "allocation can already succeed" checks, compaction_ready()
// and should_continue_reclaim(), hand to the watermark check. The kernel
// calls plain __zone_watermark_ok() with alloc_flags 0, so the check counts
// free pages of every migratetype (mm/vmscan.c @000fc868). Seed 001 patch 3
// ("mm: vmscan: tell direct reclaim the allocation is ALLOC_NOFRAGMENT",
// Patches.DirectReclaimToldNofragment) passes the allocation's
// ALLOC_NOFRAGMENT and migratetype to patch 1's __zone_watermark_ok_mt()
// instead; it needs patch 2 for nothing. kswapd has no allocation: its
// scan_control carries neither.
func (m *Machine) reclaimWatermarkFlags(sc *scanControl) (AllocFlags, MigrateType) {
	if !m.Patches.DirectReclaimToldNofragment {
		return 0, MIGRATE_TYPES
	}
	return sc.allocFlags & ALLOC_NOFRAGMENT, sc.migratetype
}

// shrinkResume names the cond_resched() call a shrink_node() call of
// kswapd stopped at (shrinkFrame).
type shrinkResume uint8

const (
	shrinkRunning shrinkResume = iota
	// shrinkMemcgTop is shrink_node_memcgs()'s cond_resched() at the top
	// of a cgroup's turn, before its protection is checked.
	shrinkMemcgTop
	// shrinkLruvecBatch is shrink_lruvec()'s cond_resched() after a
	// round of SWAP_CLUSTER_MAX batches, before the proportional check.
	shrinkLruvecBatch
)

// shrinkFrame is one shrink_node() call's locals that live across a
// cond_resched(): shrink_node()'s, shrink_node_memcgs()' and
// shrink_lruvec()'s. kswapd's balance pass keeps one (balanceState) and
// its shrink_node() stops at those calls (reclaimResched) and resumes
// there at the task's next step; a direct reclaimer's is a local whose
// calls never stop (see "Preemption" at the top of vmscan.go).
type shrinkFrame struct {
	// stops says the call may stop at its cond_resched() calls (kswapd).
	stops bool
	// at is where the call stopped (shrinkRunning while it runs).
	at shrinkResume
	// reclaimedBefore is sc->nr_reclaimed at shrink_node()'s again:.
	reclaimedBefore uint64
	// memcg is the index of the cgroup whose turn it is.
	memcg int
	// shrink_lruvec()'s nr, targets, nr_reclaimed and
	// proportional_reclaim.
	nr, targets  [NR_LRU_LISTS]uint64
	reclaimed    uint64
	proportional bool
}

// reclaimResched is cond_resched() at point at of kswapd's shrink_node()
// (f.stops): it charges the call and reports whether the step ends there
// (sim.Task.NeedResched: something else is due on the machine, or a task
// waits for the CPU past kswapd's slice), with f keeping where. A direct
// reclaimer's frame does nothing here.
func (m *Machine) reclaimResched(t *sim.Task, f *shrinkFrame, at shrinkResume) bool {
	if !f.stops || !m.kswapdCondResched(t) {
		return false
	}
	f.at = at
	return true
}

// kswapdCondResched is one of kswapd's cond_resched() calls: it charges
// the call and reports whether kswapd's step ends there
// (sim.Task.NeedResched: something else is due on the machine, or a task
// waits for the CPU past kswapd's slice), counting the stop in
// KswapdYields. The caller keeps where it stopped.
func (m *Machine) kswapdCondResched(t *sim.Task) bool {
	t.Charge(m.Cost.CondResched)
	if !t.NeedResched() {
		return false
	}
	m.Reclaim.KswapdYields++
	return true
}

// shrinkNode is shrink_node() for a reclaimer that does not stop in it
// (direct reclaim).
func (m *Machine) shrinkNode(t *sim.Task, n *Node, sc *scanControl) {
	var f shrinkFrame
	m.shrinkNodeFrom(t, n, sc, &f)
}

// shrinkNodeFrom is shrink_node(), run or resumed on frame f. It returns
// false when it stopped at a cond_resched() (f.at says where).
func (m *Machine) shrinkNodeFrom(t *sim.Task, n *Node, sc *scanControl, f *shrinkFrame) bool {
	for {
		if f.at == shrinkRunning {
			f.reclaimedBefore = sc.nrReclaimed
			m.prepareScanControl(n, sc)
		}
		if !m.shrinkNodeMemcgs(t, n, sc, f) {
			return false
		}
		nrNodeReclaimed := sc.nrReclaimed - f.reclaimedBefore
		if !m.shouldContinueReclaim(n, nrNodeReclaimed, sc) {
			if nrNodeReclaimed > 0 {
				m.kswapdTryClearHopeless(n, sc.order, sc.reclaimIdx)
			}
			return true
		}
	}
}

// prepareScanControl is prepare_scan_control() for global reclaim.
func (m *Machine) prepareScanControl(n *Node, sc *scanControl) {
	// The target lruvec of global reclaim is the root's, whose sizes are
	// the node's.
	var anonCost, fileCost uint64
	for _, cg := range m.memcgs {
		anonCost += cg.lruvecs[n.ID].anonCost
		fileCost += cg.lruvecs[n.ID].fileCost
	}
	sc.anonCost, sc.fileCost = anonCost, fileCost
	root := m.memcgs[0].lruvecs[n.ID]
	if !sc.forceDeactivate {
		sc.mayDeactivateAnon = uint64(n.Stat[WORKINGSET_ACTIVATE_ANON]) != root.refaults[0] ||
			inactiveIsLow(uint64(n.Stat[NR_INACTIVE_ANON]), uint64(n.Stat[NR_ACTIVE_ANON]))
		sc.mayDeactivateFile = uint64(n.Stat[WORKINGSET_ACTIVATE_FILE]) != root.refaults[1] ||
			inactiveIsLow(uint64(n.Stat[NR_INACTIVE_FILE]), uint64(n.Stat[NR_ACTIVE_FILE]))
	} else {
		sc.mayDeactivateAnon, sc.mayDeactivateFile = true, true
	}
	file := uint64(n.Stat[NR_INACTIVE_FILE])
	sc.cacheTrimMode = file>>uint(sc.priority) != 0 && !sc.mayDeactivateFile
	var totalHigh uint64
	var free int64
	for _, z := range n.Zones {
		free += z.Stat[NR_FREE_PAGES]
		if z.Managed() {
			totalHigh += z.WmarkPages(WMARK_HIGH)
		}
	}
	file = uint64(n.Stat[NR_ACTIVE_FILE] + n.Stat[NR_INACTIVE_FILE])
	anon := uint64(n.Stat[NR_INACTIVE_ANON])
	sc.fileIsTiny = file+uint64(max(free, 0)) <= totalHigh && !sc.mayDeactivateAnon && anon>>uint(sc.priority) != 0
}

// inactiveIsLow is inactive_is_low().
func inactiveIsLow(inactive, active uint64) bool {
	gb := (inactive + active) >> (30 - PAGE_SHIFT)
	ratio := uint64(1)
	if gb > 0 {
		ratio = intSqrt(10 * gb)
	}
	return inactive*ratio < active
}

// shrinkNodeMemcgs is shrink_node_memcgs(): every cgroup's lruvec on the
// node, skipping protected ones.
//
// kswapd and full walks visit every cgroup from the root. A direct
// reclaimer's walk is partial (mem_cgroup_iter with a reclaim cookie): it
// resumes after the cgroup the previous partial walk on this node visited
// last, stops once it has reclaimed nr_to_reclaim, and a walk that
// reaches the end of the hierarchy ends the round, so the next one starts
// at the root again (as does one that joins right at the end). Successive direct reclaimers thus take turns across
// cgroups. (Walks do not interleave here, a step being atomic, so the
// kernel's generation check against concurrent walkers never fires.)
//
// It returns false when kswapd's call stopped at a cond_resched() (f.at):
// at the top of a cgroup's turn, or in its shrink_lruvec().
func (m *Machine) shrinkNodeMemcgs(t *sim.Task, n *Node, sc *scanControl, f *shrinkFrame) bool {
	partial := sc.who == reclaimerDirect && !sc.memcgFullWalk
	first := 0
	if partial {
		first = n.memcgIter + 1
		if first == len(m.memcgs) {
			// A walk joining at the end of the hierarchy starts the
			// next round at once ("make sure they see at least one
			// group and restart from the beginning").
			first = 0
		}
	}
	resume := f.at
	if resume != shrinkRunning {
		first = f.memcg
		f.at = shrinkRunning
	}
	for i := first; i < len(m.memcgs); i++ {
		cg := m.memcgs[i]
		if resume != shrinkLruvecBatch {
			if resume == shrinkRunning {
				f.memcg = i
				if m.reclaimResched(t, f, shrinkMemcgTop) {
					return false
				}
			}
			resume = shrinkRunning
			if partial {
				n.memcgIter = i
			}
			if cg.belowMin() {
				continue
			}
			if cg.belowLow() {
				if !sc.memcgLowReclaim {
					sc.memcgLowSkipped = true
					continue
				}
				cg.EventsLow++
			}
		} else {
			// Back in the cgroup's shrink_lruvec().
			resume = shrinkRunning
			f.at = shrinkLruvecBatch
		}
		if !m.shrinkLruvec(t, cg.lruvecs[n.ID], sc, f) {
			return false
		}
		m.shrinkSlab(t, sc, n.ID, cg)
		// v4.18's global reclaim walks on to the end of the round.
		if partial && sc.nrReclaimed >= sc.nrToReclaim && !m.Kernel.LegacyReclaim {
			return true // mem_cgroup_iter_break
		}
	}
	if partial {
		n.memcgIter = -1 // the round is complete: iter->generation++
	}
	return true
}

// lruSizeUpTo is lruvec_lru_size(lruvec, lru, zone_idx): the list's pages
// in the zones up to idx.
func (lv *lruvec) lruSizeUpTo(l LRUList, idx ZoneType) uint64 {
	var s uint64
	for z := ZoneType(0); z <= idx; z++ {
		s += lv.zonePages[l][z]
	}
	return s
}

// getScanCount is get_scan_count().
func (m *Machine) getScanCount(lv *lruvec, sc *scanControl) [NR_LRU_LISTS]uint64 {
	const (
		scanEqual = iota
		scanFract
		scanAnon
		scanFile
	)
	swappiness := uint64(m.Sysctl.Swappiness)
	var fraction [2]uint64
	var denominator uint64
	balance := scanFract
	switch {
	case !sc.maySwap || !m.canReclaimAnonPages():
		balance = scanFile
	case sc.priority == 0 && swappiness != 0:
		balance = scanEqual
	case sc.fileIsTiny:
		balance = scanAnon
	case sc.cacheTrimMode:
		balance = scanFile
	default:
		total := sc.anonCost + sc.fileCost
		anonCost := total + sc.anonCost
		fileCost := total + sc.fileCost
		total = anonCost + fileCost
		ap := swappiness * (total + 1) / (anonCost + 1)
		fp := (maxSwappiness - swappiness) * (total + 1) / (fileCost + 1)
		fraction[0], fraction[1] = ap, fp
		denominator = ap + fp
	}
	var nr [NR_LRU_LISTS]uint64
	cg := lv.memcg
	for l := LRUList(0); l < LRU_UNEVICTABLE; l++ {
		file := 0
		if l.isFile() {
			file = 1
		}
		size := lv.lruSizeUpTo(l, sc.reclaimIdx)
		var scan uint64
		min, low := cg.protection()
		if min > 0 || low > 0 {
			cgSize := cg.Usage
			var protection uint64
			if !sc.memcgLowReclaim && low > min {
				protection = low
				sc.memcgLowSkipped = true
			} else {
				protection = min
			}
			if cgSize < protection {
				cgSize = protection
			}
			scan = size - size*protection/(cgSize+1)
			if scan < SWAP_CLUSTER_MAX {
				scan = SWAP_CLUSTER_MAX
			}
		} else {
			scan = size
		}
		scan >>= uint(sc.priority)
		switch balance {
		case scanFract:
			if denominator > 0 {
				scan = scan * fraction[file] / denominator
			}
		case scanFile:
			if file == 0 {
				scan = 0
			}
		case scanAnon:
			if file == 1 {
				scan = 0
			}
		}
		nr[l] = scan
	}
	return nr
}

// protection returns the cgroup's effective memory.min and memory.low
// (mem_cgroup_protection; flat hierarchy).
func (cg *Memcg) protection() (min, low uint64) {
	if cg.ID == 0 {
		return 0, 0
	}
	return cg.Min, cg.Low
}

// shrinkLruvec is shrink_lruvec(), run or resumed (f.at ==
// shrinkLruvecBatch) on frame f. It returns false when kswapd's call
// stopped at the cond_resched() after a round of batches.
func (m *Machine) shrinkLruvec(t *sim.Task, lv *lruvec, sc *scanControl, f *shrinkFrame) bool {
	nr, targets := &f.nr, &f.targets
	resume := f.at == shrinkLruvecBatch
	if resume {
		f.at = shrinkRunning
	} else {
		*nr = m.getScanCount(lv, sc)
		*targets = *nr
		f.reclaimed = 0
		f.proportional = sc.who == reclaimerDirect && sc.priority == defPriority
	}
	for resume || nr[LRU_INACTIVE_ANON] != 0 || nr[LRU_ACTIVE_FILE] != 0 || nr[LRU_INACTIVE_FILE] != 0 {
		if !resume {
			if m.noFastForward {
				// (tests: every batch one by one)
			} else if m.Kernel.LegacyPinnedReclaim && m.pinnedCycleScan(lv, sc, nr) {
				// Only pinned anon folios left, which v4.18 activates
				// and ages back: the remaining batches in closed form.
				m.fastForwardPinnedCycle(t, lv, sc, nr)
				break
			} else if m.futileScan(lv, sc, nr) {
				// Every list left to scan holds only pinned folios:
				// the remaining batches change nothing but the
				// counters and the clock, done in one go.
				m.fastForwardPinnedScan(t, lv, sc, nr)
				break
			}
			for l := LRUList(0); l < LRU_UNEVICTABLE; l++ {
				if nr[l] == 0 {
					continue
				}
				n := min(nr[l], SWAP_CLUSTER_MAX)
				nr[l] -= n
				f.reclaimed += m.shrinkList(t, l, n, lv, sc)
			}
			if m.reclaimResched(t, f, shrinkLruvecBatch) {
				return false
			}
		}
		resume = false
		reclaimed := f.reclaimed
		if reclaimed < sc.nrToReclaim || f.proportional {
			continue
		}
		nrFile := nr[LRU_INACTIVE_FILE] + nr[LRU_ACTIVE_FILE]
		nrAnon := nr[LRU_INACTIVE_ANON] + nr[LRU_ACTIVE_ANON]
		if nrFile == 0 || nrAnon == 0 {
			break
		}
		var smaller, other LRUList
		var percentage uint64
		if nrFile > nrAnon {
			target := targets[LRU_INACTIVE_ANON] + targets[LRU_ACTIVE_ANON] + 1
			smaller, other = LRU_INACTIVE_ANON, LRU_INACTIVE_FILE
			percentage = nrAnon * 100 / target
		} else {
			target := targets[LRU_INACTIVE_FILE] + targets[LRU_ACTIVE_FILE] + 1
			smaller, other = LRU_INACTIVE_FILE, LRU_INACTIVE_ANON
			percentage = nrFile * 100 / target
		}
		nr[smaller], nr[smaller+1] = 0, 0
		for _, l := range []LRUList{other, other + 1} {
			scanned := targets[l] - nr[l]
			nr[l] = targets[l] * (100 - percentage) / 100
			nr[l] -= min(nr[l], scanned)
		}
	}
	sc.nrReclaimed += f.reclaimed
	// Keep enough anon reclaim candidates for the next cycle (v4.18
	// asks inactive_list_is_low over the eligible zones).
	low := m.canAgeAnonPages() && inactiveIsLow(lv.nrPages[LRU_INACTIVE_ANON], lv.nrPages[LRU_ACTIVE_ANON])
	if m.Kernel.LegacyReclaim {
		low = m.inactiveListIsLow(lv, false, sc)
	}
	if low {
		m.shrinkActiveList(t, SWAP_CLUSTER_MAX, lv, sc, LRU_ACTIVE_ANON)
	}
	return true
}

// futileScan reports whether every list with scan work left holds nothing
// but pinned folios the scan would keep: inactive lists whose unpinned part
// is empty, active lists with nothing on them at all.
func (m *Machine) futileScan(lv *lruvec, sc *scanControl, nr *[NR_LRU_LISTS]uint64) bool {
	for l := LRUList(0); l < LRU_UNEVICTABLE; l++ {
		if nr[l] == 0 {
			continue
		}
		if lv.lists[l].n > 0 || m.legacyPinnedActivates(lv, l, sc) {
			return false
		}
		if l.isActive() && lv.lruSizeUpTo(l, sc.reclaimIdx) > 0 {
			return false
		}
	}
	return true
}

// fastForwardPinnedScan runs the remaining shrink_list batches of a futile
// scan at once: each 32-page batch of an inactive list visits pinned folios
// (at least one), keeps them, and charges the visits.
func (m *Machine) fastForwardPinnedScan(t *sim.Task, lv *lruvec, sc *scanControl, nr *[NR_LRU_LISTS]uint64) {
	for l := LRUList(0); l < LRU_UNEVICTABLE; l++ {
		left := nr[l]
		nr[l] = 0
		if left == 0 || l.isActive() {
			if left > 0 && l.isActive() {
				// An empty active list: shrink_active_list finds
				// nothing; only the deactivate bookkeeping.
				if !m.mayDeactivate(lv, l, sc) {
					sc.skippedDeactivate = true
				}
			}
			continue
		}
		batches := (left + SWAP_CLUSTER_MAX - 1) / SWAP_CLUSTER_MAX
		pages, folios := lv.pinnedShare(l, SWAP_CLUSTER_MAX, sc.reclaimIdx)
		if folios == 0 {
			continue
		}
		scanned := batches * pages
		visits := batches * folios
		cpuNode := m.cpuNode[t.CPU]
		t.Charge(m.remoteCost(cpuNode, lv.node.ID, m.Cost.LRUScanPage+m.Cost.FolioRefWalk) * sim.Time(visits))
		sc.nrScanned += scanned
		m.countVMEvents(sc.pgscanEvent(), scanned)
		if l.isFile() {
			m.countVMEvents(PGSCAN_FILE, scanned)
		} else {
			m.countVMEvents(PGSCAN_ANON, scanned)
		}
		m.lruNoteCostRepeat(lv, l.isFile(), pages, batches)
		m.Reclaim.FastForwardedBatches += batches
	}
}

// pinnedAnonPool sums the anon pinned pool at position act over the zones
// a reclaim may use: pages and folios.
func (lv *lruvec) pinnedAnonPool(act int, idx ZoneType) (pages, folios uint64) {
	for z := ZoneType(0); z <= idx; z++ {
		pages += lv.pinnedCount[0][act][z]
		folios += lv.pinnedFolios[0][act][z]
	}
	return pages, folios
}

// legacyPinnedActivates reports whether a scan of list l sends the pinned
// folios it visits to the active list under v4.18's shrink_page_list
// (Kernel.LegacyPinnedReclaim): inactive anon, a reclaim that may do I/O,
// and pinned folios larger than a page (THPs, which can_split_huge_page
// refuses). The pinned pool knows pages and folios per zone, not which
// folio is which size: a pool that mixes sizes is judged by its average.
func (m *Machine) legacyPinnedActivates(lv *lruvec, l LRUList, sc *scanControl) bool {
	if !m.Kernel.LegacyPinnedReclaim || l != LRU_INACTIVE_ANON || sc.gfp&__GFP_IO == 0 {
		return false
	}
	pages, folios := lv.pinnedAnonPool(0, sc.reclaimIdx)
	return folios > 0 && pages > folios
}

// pinnedCycleScan reports whether what is left of a v4.18 scan is the
// cycle of pinned THPs (Kernel.LegacyPinnedReclaim): no unpinned anon
// folio on either list, only THPs in the anon pinned pool, and file lists
// with work but no pages.
func (m *Machine) pinnedCycleScan(lv *lruvec, sc *scanControl, nr *[NR_LRU_LISTS]uint64) bool {
	if sc.gfp&__GFP_IO == 0 || lv.lists[LRU_INACTIVE_ANON].n > 0 || lv.lists[LRU_ACTIVE_ANON].n > 0 {
		return false
	}
	for _, l := range []LRUList{LRU_INACTIVE_FILE, LRU_ACTIVE_FILE} {
		if nr[l] > 0 && lv.lruSizeUpTo(l, sc.reclaimIdx) > 0 {
			return false
		}
	}
	ip, ifo := lv.pinnedAnonPool(0, sc.reclaimIdx)
	ap, afo := lv.pinnedAnonPool(1, sc.reclaimIdx)
	if ip != lv.lruSizeUpTo(LRU_INACTIVE_ANON, sc.reclaimIdx) || ap != lv.lruSizeUpTo(LRU_ACTIVE_ANON, sc.reclaimIdx) {
		return false
	}
	return ifo+afo > 0 && ip > ifo && (afo == 0 || ap > afo)
}

// fastForwardPinnedCycle runs the remaining batches of a v4.18 scan over
// pinned THPs (pinnedCycleScan): each loop of shrink_lruvec scans a batch
// of the inactive anon list, whose THP is activated, then, if the inactive
// list is low by then, a batch of the active list, whose THP is
// deactivated. Once a loop leaves the pools as it found them (the list
// balance is reached: one THP out, one back), every further loop with full
// batches on the same lists repeats it, and those are done in one go; the
// loops before that run one by one (each moves one folio).
func (m *Machine) fastForwardPinnedCycle(t *sim.Task, lv *lruvec, sc *scanControl, nr *[NR_LRU_LISTS]uint64) {
	idx := sc.reclaimIdx
	var batches, inPages, inFolios, activated, refill, refillFolios uint64
	for nr[LRU_INACTIVE_ANON] > 0 || nr[LRU_INACTIVE_FILE] > 0 || nr[LRU_ACTIVE_FILE] > 0 {
		count, folios := lv.pinnedCount[0], lv.pinnedFolios[0]
		var pages, f, moved uint64
		if nr[LRU_INACTIVE_ANON] > 0 {
			n := min(nr[LRU_INACTIVE_ANON], SWAP_CLUSTER_MAX)
			nr[LRU_INACTIVE_ANON] -= n
			batches++
			pages, f = lv.pinnedShare(LRU_INACTIVE_ANON, n, idx)
			moved = m.movePinned(lv, 0, LRU_INACTIVE_ANON, LRU_ACTIVE_ANON, pages, idx)
			inPages += pages
			inFolios += f
			activated += moved
			m.lruNoteCost(lv, false, 0, pages)
		}
		var back, backFolios uint64
		if nr[LRU_ACTIVE_ANON] > 0 {
			n := min(nr[LRU_ACTIVE_ANON], SWAP_CLUSTER_MAX)
			nr[LRU_ACTIVE_ANON] -= n
			if m.mayDeactivate(lv, LRU_ACTIVE_ANON, sc) {
				p, bf := lv.pinnedShare(LRU_ACTIVE_ANON, n, idx)
				back = m.movePinned(lv, 0, LRU_ACTIVE_ANON, LRU_INACTIVE_ANON, p, idx)
				backFolios = bf
			} else {
				sc.skippedDeactivate = true
			}
		}
		refill += back
		refillFolios += backFolios
		// The file lists have work but no pages: their batches find
		// nothing.
		for _, l := range []LRUList{LRU_INACTIVE_FILE, LRU_ACTIVE_FILE} {
			nr[l] -= min(nr[l], SWAP_CLUSTER_MAX)
		}
		if moved == 0 || back == 0 || lv.pinnedCount[0] != count || lv.pinnedFolios[0] != folios {
			continue
		}
		// A loop that moved one THP out and one back left the pools as
		// it found them: every further loop with full batches on the
		// same lists repeats it.
		k := nr[LRU_INACTIVE_ANON] / SWAP_CLUSTER_MAX
		k = min(k, nr[LRU_ACTIVE_ANON]/SWAP_CLUSTER_MAX)
		for _, l := range []LRUList{LRU_INACTIVE_FILE, LRU_ACTIVE_FILE} {
			if nr[l] > 0 {
				k = min(k, nr[l]/SWAP_CLUSTER_MAX)
			}
		}
		for l := LRUList(0); l < LRU_UNEVICTABLE; l++ {
			if nr[l] > 0 {
				nr[l] -= k * SWAP_CLUSTER_MAX
			}
		}
		batches += k
		inPages += k * pages
		inFolios += k * f
		activated += k * moved
		refill += k * back
		refillFolios += k * backFolios
		m.lruNoteCostRepeat(lv, false, pages, k)
	}
	cpuNode := m.cpuNode[t.CPU]
	visit := m.remoteCost(cpuNode, lv.node.ID, m.Cost.LRUScanPage) + m.remoteCost(cpuNode, lv.node.ID, m.Cost.FolioRefWalk)
	t.Charge(visit * sim.Time(inFolios+refillFolios))
	sc.nrScanned += inPages
	m.countVMEvents(sc.pgscanEvent(), inPages)
	m.countVMEvents(PGSCAN_ANON, inPages)
	m.countVMEvents(PGACTIVATE, activated)
	m.countVMEvents(PGREFILL, refill)
	m.countVMEvents(PGDEACTIVATE, refill)
	m.Reclaim.FastForwardedBatches += batches
}

// lruNoteCost is lru_note_cost(): the reclaim cost of a type (I/O done
// and pages rotated back) feeds get_scan_count's balance; both costs halve
// when they grow beyond a quarter of the LRU.
func (m *Machine) lruNoteCost(lv *lruvec, file bool, nrIO, nrRotated uint64) {
	cost := nrIO*SWAP_CLUSTER_MAX + nrRotated
	if file {
		lv.fileCost += cost
	} else {
		lv.anonCost += cost
	}
	size := lv.nrPages[LRU_INACTIVE_ANON] + lv.nrPages[LRU_ACTIVE_ANON] + lv.nrPages[LRU_INACTIVE_FILE] + lv.nrPages[LRU_ACTIVE_FILE]
	for lv.fileCost+lv.anonCost > size/4 && lv.fileCost+lv.anonCost > 0 {
		lv.fileCost /= 2
		lv.anonCost /= 2
	}
}

// mayDeactivate is whether shrink_list may deactivate list l: today
// sc->may_deactivate, decided once per node by prepare_scan_control; in
// v4.18 (Kernel.LegacyReclaim) inactive_list_is_low(), asked at every call.
func (m *Machine) mayDeactivate(lv *lruvec, l LRUList, sc *scanControl) bool {
	if m.Kernel.LegacyReclaim {
		return m.inactiveListIsLow(lv, l.isFile(), sc)
	}
	if l.isFile() {
		return sc.mayDeactivateFile
	}
	return sc.mayDeactivateAnon
}

// inactiveListIsLow is v4.18's inactive_list_is_low() for actual reclaim:
// the inactive list of the type is short against the active one, by the
// sizes in the zones the reclaim may use; no anon deactivation without
// swap; a file refault since the last reclaim (lruvec->refaults) makes any
// active page cache too much.
func (m *Machine) inactiveListIsLow(lv *lruvec, file bool, sc *scanControl) bool {
	if !file && m.Swap.TotalPages == 0 {
		return false
	}
	l := lruListOf(file, false)
	inactive := lv.lruSizeUpTo(l, sc.reclaimIdx)
	active := lv.lruSizeUpTo(l+1, sc.reclaimIdx)
	if file && uint64(lv.node.Stat[WORKINGSET_ACTIVATE_FILE]) != lv.refaults[1] {
		return active > 0 // inactive_ratio = 0
	}
	return inactiveIsLow(inactive, active)
}

// lruNoteCostRepeat is times calls of lruNoteCost(lv, file, 0,
// nrRotated) on an lruvec whose size stays the same between them (a
// fast-forwarded scan only moves pages between its lists), in as many
// steps as the costs are halved.
func (m *Machine) lruNoteCostRepeat(lv *lruvec, file bool, nrRotated, times uint64) {
	if times == 0 {
		return
	}
	if nrRotated == 0 {
		m.lruNoteCost(lv, file, 0, 0)
		return
	}
	cost := &lv.anonCost
	if file {
		cost = &lv.fileCost
	}
	limit := (lv.nrPages[LRU_INACTIVE_ANON] + lv.nrPages[LRU_ACTIVE_ANON] + lv.nrPages[LRU_INACTIVE_FILE] + lv.nrPages[LRU_ACTIVE_FILE]) / 4
	for times > 0 {
		// The calls that stay within the limit only add.
		if total := lv.fileCost + lv.anonCost; total+nrRotated <= limit {
			j := min(times, (limit-total)/nrRotated)
			*cost += j * nrRotated
			times -= j
			continue
		}
		// This call crosses it: add, then halve while over.
		*cost += nrRotated
		times--
		for lv.fileCost+lv.anonCost > limit && lv.fileCost+lv.anonCost > 0 {
			lv.fileCost /= 2
			lv.anonCost /= 2
		}
	}
}

// shrinkList is shrink_list().
func (m *Machine) shrinkList(t *sim.Task, l LRUList, nr uint64, lv *lruvec, sc *scanControl) uint64 {
	if l.isActive() {
		if m.mayDeactivate(lv, l, sc) {
			m.shrinkActiveList(t, nr, lv, sc, l)
		} else {
			sc.skippedDeactivate = true
		}
		return 0
	}
	return m.shrinkInactiveList(t, nr, lv, sc, l)
}

// movePinned moves about pages pinned pages (whole folios, zones up to idx
// first-come) of type typ from list from to list to in the pinned pool's
// position counts and returns how many pages moved.
//
// Folio by folio, a folio is count/folios pages of what is left: with
// count = folios*per + r (r < folios), the next folios-r folios are per
// pages each, and the r after them per+1 each. So the folios are moved a
// run of equal ones at a time, as many as the pages asked still take,
// with the same counts and the same moved as one at a time
// (movePinnedStepwise, which the test compares it with on random pools);
// one at a time cost the replay of a timeline jump 146 ms in one call in
// the page (docs/PERFORMANCE.md).
func (m *Machine) movePinned(lv *lruvec, typ int, from, to LRUList, pages uint64, idx ZoneType) uint64 {
	fa, ta := b2i(from.isActive()), b2i(to.isActive())
	var moved uint64
	for z := ZoneType(0); z <= idx && moved < pages; z++ {
		for lv.pinnedCount[typ][fa][z] > 0 && moved < pages {
			count, folios := lv.pinnedCount[typ][fa][z], lv.pinnedFolios[typ][fa][z]
			per := count / folios
			n := uint64(1)
			if per > 0 {
				// folios-r folios of per pages, and no more than
				// the pages asked start: a folio moves while moved
				// is below pages.
				n = min(folios-count%folios, (pages-moved+per-1)/per)
			}
			lv.pinnedCount[typ][fa][z] -= n * per
			lv.pinnedFolios[typ][fa][z] -= n
			lv.pinnedCount[typ][ta][z] += n * per
			lv.pinnedFolios[typ][ta][z] += n
			m.updateLRUSize(lv, from, lv.node.Zones[z], -int64(n*per))
			m.updateLRUSize(lv, to, lv.node.Zones[z], int64(n*per))
			moved += n * per
		}
	}
	return moved
}

// pinnedShare decides how many of n pages a scan of list l takes from the
// pinned pool, in proportion to the eligible pinned and unpinned pages.
func (lv *lruvec) pinnedShare(l LRUList, n uint64, idx ZoneType) (pages, folios uint64) {
	typ, act := 0, 0
	if l.isFile() {
		typ = 1
	}
	if l.isActive() {
		act = 1
	}
	var pinned, pinnedF uint64
	for z := ZoneType(0); z <= idx; z++ {
		pinned += lv.pinnedCount[typ][act][z]
		pinnedF += lv.pinnedFolios[typ][act][z]
	}
	total := lv.lruSizeUpTo(l, idx)
	if pinned == 0 || total == 0 {
		return 0, 0
	}
	pages = n * pinned / total
	if pages == 0 && pinned == total {
		pages = n
	}
	if pages > pinned {
		pages = pinned
	}
	if pages == 0 {
		return 0, 0
	}
	// Whole folios: a scan takes at least one, and a batch of n pages
	// visits as many folios as fit (isolate_lru_folios counts pages).
	per := pinned / pinnedF
	folios = (pages + per - 1) / per
	return folios * per, folios
}

// isolateLRUFolios is the walk of isolate_lru_folios(): folios from the
// tail of list l until want pages are taken, skipping (and counting in
// pgscan_skip_*) those of zones above the reclaim index. It returns the
// folio heads and the pages they hold, and the pages skipped, which the
// kernel counts in nr_scanned (total_scan) too; the caller isolates or
// moves the folios.
//
// The batch is built in m.lruBatch, which the caller hands back with
// putLRUBatch when it is done with it (a batch per reclaim pass, millions
// in a reclaim storm, no longer costs an allocation each); a nested call
// while a batch is out gets a new slice.
func (m *Machine) isolateLRUFolios(lv *lruvec, l LRUList, want uint64, sc *scanControl) (batch []PFN, taken, skippedPages uint64) {
	batch, m.lruBatch = m.lruBatch[:0], nil
	var skipped [MAX_NR_ZONES]uint64
	var skippedFolios []PFN
	for cursor := lv.lists[l].tail; cursor != NilPFN && want > 0; {
		head := cursor
		cursor = m.pages[head].prev
		nr := m.folioNr(head)
		if zt := m.ZoneOf(head).Type; zt > sc.reclaimIdx {
			skipped[zt] += nr
			skippedFolios = append(skippedFolios, head)
			continue
		}
		taken += nr
		want -= min(want, nr)
		batch = append(batch, head)
	}
	// "Splice any skipped folios to the start of the LRU list": the next
	// batch does not walk past them again.
	list := &lv.lists[l]
	for i := len(skippedFolios) - 1; i >= 0; i-- {
		list.remove(m.pages, skippedFolios[i])
		list.pushHead(m.pages, skippedFolios[i])
	}
	for zt, s := range skipped {
		if s > 0 {
			m.countVMEvents(PGSCAN_SKIP_DMA+VMEventItem(zt), s)
			skippedPages += s
		}
	}
	return batch, taken, skippedPages
}

// putLRUBatch returns a batch isolateLRUFolios made, for the next one.
func (m *Machine) putLRUBatch(batch []PFN) {
	m.lruBatch = batch[:0]
}

// traceLRUIsolate emits mm_vmscan_lru_isolate for one isolation: pages
// requested, scanned (taken and skipped), skipped and taken, pinned folios
// included (the kernel isolates them like any other).
func (m *Machine) traceLRUIsolate(t *sim.Task, sc *scanControl, l LRUList, requested, scanned, skipped, taken uint64) {
	if m.Trace.Enabled(TraceMmVmscanLruIsolate) {
		m.Trace.Emit(t, TraceMmVmscanLruIsolate, int64(sc.reclaimIdx), int64(sc.order), int64(requested),
			int64(scanned), int64(skipped), int64(taken), int64(l))
	}
}

// shrinkInactiveList is shrink_inactive_list() with isolate_lru_folios()
// and shrink_folio_list(): take up to n pages from the tail and decide
// each folio's fate.
func (m *Machine) shrinkInactiveList(t *sim.Task, n uint64, lv *lruvec, sc *scanControl, l LRUList) uint64 {
	file := l.isFile()
	// Completions that happened by now (this task's clock runs ahead of
	// the world's inside a step) are seen before the scan.
	m.blkRetire(t.Now)
	lv.Lock.Lock(t)
	var scanned uint64
	// Pinned folios are visited by count and kept.
	pinPages, pinFolios := lv.pinnedShare(l, n, sc.reclaimIdx)
	scanned += pinPages
	var activated uint64
	if file {
		// shrink_folio_list: a pinned file folio is unmapped, found
		// folio_maybe_dma_pinned and sent to activate_locked. Pinned
		// anon folios stop earlier, at keep_locked (before
		// add_to_swap), and stay inactive.
		activated = m.movePinned(lv, 1, l, l+1, pinPages, sc.reclaimIdx)
	} else if m.legacyPinnedActivates(lv, l, sc) {
		// v4.18: can_split_huge_page() fails on the pin's
		// references: activate_locked.
		activated = m.movePinned(lv, 0, l, l+1, pinPages, sc.reclaimIdx)
	}
	// Unpinned folios are visited one by one from the tail.
	batch, taken, skipped := m.isolateLRUFolios(lv, l, n-min(n, pinPages), sc)
	scanned += taken + skipped
	m.traceLRUIsolate(t, sc, l, n, scanned, skipped, pinPages+taken)
	for _, head := range batch {
		m.isolateLRUFolio(head)
	}
	cpuNode := m.cpuNode[t.CPU]
	t.Charge(m.remoteCost(cpuNode, lv.node.ID, m.Cost.LRUScanPage*sim.Time(len(batch)+int(pinFolios))))
	lv.Lock.Unlock(t)
	reclaimed, stat := m.shrinkFolioList(t, batch, sc)
	activated += stat.nrActivate
	// The pinned folios' reverse-map walks (the unpinned ones' are
	// charged by shrinkFolioList).
	t.Charge(m.remoteCost(cpuNode, lv.node.ID, m.Cost.FolioRefWalk*sim.Time(pinFolios)))
	// Put back what was not freed (move_folios_to_lru).
	lv.Lock.Lock(t)
	for _, head := range batch {
		if m.pages[head].flags&pgIsolated != 0 {
			m.putbackLRUFolio(head)
		}
	}
	m.putLRUBatch(batch)
	lv.Lock.Unlock(t)
	// sc->nr_scanned grows in shrink_folio_list, by the folios it
	// processes: skipped ones are in pgscan (total_scan) but not in it.
	sc.nrScanned += scanned - skipped
	m.countVMEvents(sc.pgscanEvent(), scanned)
	m.countVMEvents(sc.pgstealEvent(), reclaimed)
	if file {
		m.countVMEvents(PGSCAN_FILE, scanned)
		m.countVMEvents(PGSTEAL_FILE, reclaimed)
	} else {
		m.countVMEvents(PGSCAN_ANON, scanned)
		m.countVMEvents(PGSTEAL_ANON, reclaimed)
	}
	m.lruNoteCost(lv, file, stat.nrPageout, scanned-min(scanned, reclaimed))
	if activated > 0 {
		m.countVMEvents(PGACTIVATE, activated)
	}
	if m.Trace.Enabled(TraceMmVmscanLruShrinkInactive) {
		var aa, af int64
		if file {
			af = int64(activated)
		} else {
			aa = int64(activated)
		}
		m.Trace.Emit(t, TraceMmVmscanLruShrinkInactive, int64(lv.node.ID), int64(scanned), int64(reclaimed), aa, af,
			int64(stat.nrRefKeep), int64(stat.nrDirty), int64(sc.priority)<<8|int64(b2i(file)))
	}
	return reclaimed
}

// reclaimStat is struct reclaim_stat: what shrink_folio_list did with one
// batch of isolated folios, returned with the pages it reclaimed to
// shrink_inactive_list, which feeds both to the counters, lru_note_cost
// and the tracepoint.
type reclaimStat struct {
	// nrDirty counts evictable page cache found dirty or under
	// writeback (folio_check_dirty_writeback, before the references
	// check); anon folios never count.
	nrDirty uint64
	// nrPageout counts pages whose writeout reclaim started (swap-out
	// here: reclaim never writes file pages).
	nrPageout uint64
	// nrActivate counts pages sent to the active list (activate_locked).
	nrActivate uint64
	// nrRefKeep counts pages kept for another trip (FOLIOREF_KEEP).
	nrRefKeep uint64
}

// shrinkFolioList is shrink_folio_list() over a batch of isolated folios:
// each folio's fate (shrinkFolio), summed into the batch's reclaim_stat;
// it returns the base pages freed. Folios that are not freed stay isolated
// for the caller to put back. It charges the reverse-map walk of every
// mapped folio (folio_referenced: anon, or page cache with a young PTE).
func (m *Machine) shrinkFolioList(t *sim.Task, folios []PFN, sc *scanControl) (reclaimed uint64, stat reclaimStat) {
	var mapped int
	var pageout []PFN
	for _, head := range folios {
		p := &m.pages[head]
		nr := m.folioNr(head)
		if p.kind == KindAnon || p.flags&pgYoung != 0 {
			mapped++
		}
		if p.kind == KindFile && p.flags&(pgDirty|pgWriteback) != 0 && p.flags&pgUnevictable == 0 {
			stat.nrDirty += nr
		}
		switch m.shrinkFolio(t, head, sc) {
		case folioFreed:
			reclaimed += nr
		case folioPagedOut:
			stat.nrPageout += nr
			pageout = append(pageout, head)
		case folioActivated:
			stat.nrActivate += nr
		case folioKeptReferenced:
			stat.nrRefKeep += nr
		}
	}
	if len(folios) > 0 {
		nid := m.ZoneOf(folios[0]).Node.ID // a batch comes from one lruvec
		t.Charge(m.remoteCost(m.cpuNode[t.CPU], nid, m.Cost.FolioRefWalk*sim.Time(mapped)))
	}
	// pageout() for the anon folios added to swap, under the batch's
	// plug; they stay isolated until the caller puts them back.
	if len(pageout) > 0 {
		m.swapWritepages(t, pageout)
	}
	return reclaimed, stat
}

// folioFate is where shrink_folio_list sends one folio.
type folioFate uint8

const (
	folioKept           folioFate = iota // keep_locked: back on its list
	folioKeptReferenced                  // FOLIOREF_KEEP: young once, kept for another round
	folioActivated                       // activate_locked
	folioFreed                           // freed (free_it)
	folioPagedOut                        // swap-out write started: kept under writeback
)

// shrinkFolio is the per-folio decision of shrink_folio_list() for an
// isolated folio. Freed and paged-out folios have left the machine when it
// returns.
func (m *Machine) shrinkFolio(t *sim.Task, head PFN, sc *scanControl) folioFate {
	p := &m.pages[head]
	nr := m.folioNr(head)
	if p.owner == 0 {
		// Truncated while isolated: just free it.
		m.pages[head].flags &^= pgIsolated | pgLRU
		m.unisolateStat(head)
		m.freeIsolatedFolio(t, head)
		return folioFreed
	}
	if p.flags&pgWriteback != 0 {
		// Case 2 of shrink_folio_list's writeback handling: mark it
		// for immediate reclaim (PG_reclaim; its end of writeback
		// rotates it) and activate it meanwhile.
		m.activateIsolated(head, sc)
		return folioActivated
	}
	// folio_check_references()
	young := p.flags&pgYoung != 0
	referenced := p.flags&pgReferenced != 0
	p.flags &^= pgYoung | pgReferenced
	isFile := p.kind == KindFile
	if young {
		p.flags |= pgReferenced
		if referenced {
			m.activateIsolated(head, sc)
			return folioActivated
		}
		return folioKeptReferenced
	}
	if p.flags&pgUnevictable != 0 {
		return folioKept
	}
	if !isFile {
		if p.flags&pgSwapCache != 0 {
			// Its swap-out write has completed: a clean swap-cache
			// folio, unmapped, that __remove_mapping frees.
			t.Charge(m.Cost.ReclaimCleanPage * sim.Time(nr))
			m.freeIsolatedFolio(t, head)
			return folioFreed
		}
		// Anonymous memory needs swap space.
		if sc.gfp&__GFP_IO == 0 {
			return folioKept
		}
		if p.flags&pgPinned != 0 {
			return folioKept // folio_maybe_dma_pinned: keep_locked
		}
		if !sc.maySwap || !m.addToSwap(head) {
			m.activateIsolated(head, sc)
			return folioActivated
		}
		// add_to_swap, try_to_unmap, pageout: the write is submitted
		// with the batch (swapWritepages) and the folio kept under
		// writeback until it completes (PAGE_SUCCESS, goto keep).
		return folioPagedOut
	}
	// FOLIOREF_RECLAIM_CLEAN (referenced, not young): reclaimed if clean.
	if p.flags&pgDirty != 0 {
		// Dirty file folios are left for the flusher; mark them for
		// immediate reclaim when writeback ends and activate.
		m.ZoneOf(head).Node.Stat[NR_VMSCAN_IMMEDIATE] += int64(nr)
		m.activateIsolated(head, sc)
		return folioActivated
	}
	if p.flags&pgPinned != 0 {
		return folioKept // __remove_mapping fails on the extra reference
	}
	// Clean page cache: unmap if mapped, __remove_mapping, free.
	o, slot := m.fileSlot(head)
	if slot >= 0 {
		setFileSlots(o, slot, head, NilPFN)
		if o.file.file != nil {
			o.file.file.shadows += nr
		}
	}
	t.Charge(m.Cost.ReclaimCleanPage * sim.Time(nr))
	m.freeIsolatedFolio(t, head)
	if slot >= 0 && o.Resident == 0 {
		// The extent's last page is gone (the kernel frees xarray
		// nodes holding only shadow entries; pagesim counts shadows
		// per file, so nothing is lost).
		m.releaseExtent(o)
	}
	return folioFreed
}

func (m *Machine) unisolateStat(head PFN) {
	nr := int64(m.folioNr(head))
	n := m.ZoneOf(head).Node
	if m.pages[head].kind == KindFile {
		n.Stat[NR_ISOLATED_FILE] -= nr
	} else {
		n.Stat[NR_ISOLATED_ANON] -= nr
	}
}

// activateIsolated sets PG_active so the putback puts the folio on the
// active list (activate_locked).
func (m *Machine) activateIsolated(head PFN, sc *scanControl) {
	p := &m.pages[head]
	if p.flags&pgPinned != 0 {
		return // the pinned pool keeps its own position
	}
	p.flags |= pgActive
}

// freeIsolatedFolio frees a folio reclaim took off the LRU (the folio is
// isolated, so it is not on any list).
func (m *Machine) freeIsolatedFolio(t *sim.Task, head PFN) {
	p := &m.pages[head]
	if p.flags&pgIsolated != 0 {
		p.flags &^= pgIsolated
		m.unisolateStat(head)
	}
	order := Order(0)
	if p.flags&pgHead != 0 {
		order = Order(p.order)
	}
	if p.owner != 0 {
		m.teardownFolio(head)
	}
	m.FreePages(t, head, order)
}

// shrinkActiveList is shrink_active_list(): take up to n pages from the
// tail of an active list and move the unreferenced ones to the inactive
// list.
func (m *Machine) shrinkActiveList(t *sim.Task, n uint64, lv *lruvec, sc *scanControl, l LRUList) {
	lv.Lock.Lock(t)
	inactive := l - 1
	typ := 0
	if l.isFile() {
		typ = 1
	}
	// Pinned folios on the active list are deactivated by count.
	pinPages, pinFolios := lv.pinnedShare(l, n, sc.reclaimIdx)
	moved := m.movePinned(lv, typ, l, inactive, pinPages, sc.reclaimIdx)
	scanned := moved
	var deactivated uint64 = moved
	batch, taken, skipped := m.isolateLRUFolios(lv, l, n-min(n, pinPages), sc)
	scanned += taken + skipped
	m.traceLRUIsolate(t, sc, l, n, scanned, skipped, moved+taken)
	var kept uint64 // nr_activate: pages that stay active
	var mapped int
	for _, head := range batch {
		m.lruDel(head)
		p := &m.pages[head]
		if p.kind == KindAnon || p.flags&pgYoung != 0 {
			mapped++
		}
		keepActive := false
		if p.flags&pgYoung != 0 {
			p.flags &^= pgYoung
			// Executable file pages stay active; pagesim has none.
		}
		if keepActive {
			m.lruAdd(head)
			kept += m.folioNr(head)
			continue
		}
		p.flags &^= pgActive | pgReferenced
		m.lruAdd(head)
		deactivated += m.folioNr(head)
	}
	cpuNode := m.cpuNode[t.CPU]
	t.Charge(m.remoteCost(cpuNode, lv.node.ID, m.Cost.LRUScanPage*sim.Time(len(batch)+int(pinFolios))))
	t.Charge(m.remoteCost(cpuNode, lv.node.ID, m.Cost.FolioRefWalk*sim.Time(mapped+int(pinFolios))))
	m.putLRUBatch(batch)
	lv.Lock.Unlock(t)
	m.countVMEvents(PGREFILL, scanned)
	m.countVMEvents(PGDEACTIVATE, deactivated)
	if m.Trace.Enabled(TraceMmVmscanLruShrinkActive) {
		// nr_referenced counts referenced executable file folios kept
		// active (nr_rotated): pagesim has none.
		m.Trace.Emit(t, TraceMmVmscanLruShrinkActive, int64(lv.node.ID), int64(moved+taken), int64(kept), int64(deactivated), 0,
			int64(sc.priority), int64(b2i(l.isFile())))
	}
}

// shouldContinueReclaim is should_continue_reclaim(): in reclaim/compaction
// mode (costly orders, or any order > 0 at raised priority) keep reclaiming
// until compaction has enough room.
func (m *Machine) shouldContinueReclaim(n *Node, nrReclaimed uint64, sc *scanControl) bool {
	// in_reclaim_compaction()
	if !(gfpCompactionAllowed(sc.gfp) && sc.order > 0 && (sc.order > PAGE_ALLOC_COSTLY_ORDER || sc.priority < defPriority-2)) {
		return false
	}
	if nrReclaimed == 0 {
		return false
	}
	for z := ZoneType(0); z <= sc.reclaimIdx; z++ {
		zone := n.Zones[z]
		if !zone.Managed() {
			continue
		}
		// Allocation can already succeed, nothing to do.
		flags, mt := m.reclaimWatermarkFlags(sc)
		if m._zoneWatermarkOK(zone, sc.order, zone.WmarkPages(WMARK_MIN), sc.reclaimIdx, flags, zone.Stat[NR_FREE_PAGES], mt) {
			return false
		}
		if m.compactionSuitable(nil, zone, sc.order, zone.WmarkPages(WMARK_MIN), sc.reclaimIdx) {
			return false
		}
	}
	// If we have not reclaimed enough pages for compaction and the
	// inactive lists are large enough, continue reclaiming.
	pagesForCompaction := compactGap(sc.order)
	inactive := uint64(n.Stat[NR_INACTIVE_FILE])
	if m.canReclaimAnonPages() {
		inactive += uint64(n.Stat[NR_INACTIVE_ANON])
	}
	return inactive > pagesForCompaction
}

// ReclaimStats counts reclaim work by kind (no vmstat counter exists for
// these; seed 002 measures "order-9 reclaim runs" from the
// mm_vmscan_direct_reclaim_begin tracepoint).
type ReclaimStats struct {
	// DirectRuns[order] counts try_to_free_pages calls by sc.order.
	DirectRuns [NR_PAGE_ORDERS]uint64
	// DirectReclaimed[order] sums the pages those calls reclaimed
	// (sc->nr_reclaimed; mm_vmscan_direct_reclaim_end prints the return
	// value instead, which is 1 when reclaim stopped for compaction
	// having freed nothing). Seed 001 reports it per order-4 call.
	DirectReclaimed [NR_PAGE_ORDERS]uint64
	// FastForwardedBatches counts 32-page scan batches of pinned-only
	// lists done by count (a wall-time optimisation; no behaviour).
	FastForwardedBatches uint64
	// Throttled counts reclaim_throttle() sleeps (mm_vmscan_throttled).
	Throttled uint64
	// KswapdYields counts the cond_resched() calls at which kswapd's
	// step ended (kswapdCondResched: shrink_node()'s and
	// __reset_isolation_suitable()'s): where a task waited for kswapd's
	// CPU past its slice, a yield the kernel makes too, and where an
	// event elsewhere on the machine fell due by kswapd's clock, a stop
	// for the simulation's ordering that the kernel's kswapd would not
	// make (TIF_NEED_RESCHED is per CPU). Not a count of context
	// switches.
	KswapdYields uint64
}

// ---------------------------------------------------------------------------
// Shrinkers (mm/shrinker.c)

// Shrinker is a registered shrinker (struct shrinker): a cache of objects
// that reclaim may shrink, such as a file system's dentries and inodes
// (super_cache_count, super_cache_scan).
//
// Count is count_objects(): the objects the cache could free for sc's node
// and cgroup (0: nothing). Scan is scan_objects(): free up to sc.NrToScan
// objects, set sc.NrScanned to the objects looked at, and return the
// objects freed, or stop = true for SHRINK_STOP (the shrinker cannot work
// in this context, e.g. super_cache_scan without __GFP_FS). The slab pages
// its frees empty go back through DiscardSlab, which credits them to the
// reclaimer. Scan charges its own work to t.
type Shrinker struct {
	Name string
	// Ops is the cache's count_objects and scan_objects (with the
	// shrinker's private_data: a value, so a checkpoint copies it).
	Ops ShrinkerOps
	// Seeks is the cost of recreating an object (DEFAULT_SEEKS = 2); 0
	// trims half the cache at once. Batch is the objects per scan call
	// (0: SHRINK_BATCH, 128).
	Seeks int
	Batch uint64
	// MemcgAware shrinkers (SHRINKER_MEMCG_AWARE) are asked per cgroup;
	// the others only when reclaim visits the root.
	MemcgAware bool
	// nrDeferred is the scan work left over by callers that could not do
	// it (nr_deferred; one counter for every node and cgroup here).
	// Scanned and Freed count objects over the machine's life.
	nrDeferred     uint64
	Scanned, Freed uint64
}

// ShrinkerOps is a shrinker's count_objects and scan_objects callbacks
// (see Shrinker).
type ShrinkerOps interface {
	CountObjects(sc *ShrinkControl) uint64
	ScanObjects(t *sim.Task, sc *ShrinkControl) (freed uint64, stop bool)
}

// ShrinkControl is struct shrink_control.
type ShrinkControl struct {
	GFP       GFP
	Nid       int
	Memcg     *Memcg
	NrToScan  uint64
	NrScanned uint64
}

// Shrinker constants (include/linux/shrinker.h).
const (
	DEFAULT_SEEKS = 2
	SHRINK_BATCH  = 128
)

// RegisterShrinker is shrinker_register().
func (m *Machine) RegisterShrinker(s *Shrinker) {
	m.shrinkers = append(m.shrinkers, s)
}

// shrinkSlab is shrink_slab() for reclaim of node nid visiting cgroup cg
// (shrink_node_memcgs calls it after the cgroup's LRU lists, so a
// protected cgroup's slab is protected too). Slab pages the shrinkers free
// count as reclaimed (flush_reclaim_state).
func (m *Machine) shrinkSlab(t *sim.Task, sc *scanControl, nid int, cg *Memcg) {
	if len(m.shrinkers) == 0 {
		return
	}
	before := m.slabReclaimed
	for _, s := range m.shrinkers {
		if !s.MemcgAware && cg.ID != 0 {
			continue
		}
		// One ShrinkControl for every call, not one allocated per
		// shrinker per pass (a nested shrink_slab gets its own).
		ctl := m.shrinkCtl
		if ctl == nil {
			ctl = new(ShrinkControl)
		}
		m.shrinkCtl = nil
		*ctl = ShrinkControl{GFP: sc.gfp, Nid: nid, Memcg: cg}
		m.doShrinkSlab(t, s, ctl, sc.priority)
		m.shrinkCtl = ctl
	}
	sc.nrReclaimed += m.slabReclaimed - before
}

// doShrinkSlab is do_shrink_slab(): scan (freeable >> priority) * 4 /
// seeks objects plus the deferred work's share (nr_deferred >> priority),
// at most twice the cache, in batches; the work a SHRINK_STOP or a small
// remainder left undone is deferred to a later caller. It returns the
// objects freed.
func (m *Machine) doShrinkSlab(t *sim.Task, s *Shrinker, ctl *ShrinkControl, priority int) uint64 {
	t.Charge(m.Cost.ZoneCheck) // count_objects: a list_lru count read
	freeable := s.Ops.CountObjects(ctl)
	if freeable == 0 {
		return 0
	}
	nr := s.nrDeferred
	s.nrDeferred = 0
	var delta uint64
	if s.Seeks > 0 {
		delta = (freeable >> uint(priority)) * 4 / uint64(s.Seeks)
	} else {
		delta = freeable / 2
	}
	totalScan := min(nr>>uint(priority)+delta, 2*freeable)
	batch := s.Batch
	if batch == 0 {
		batch = SHRINK_BATCH
	}
	var freed, scanned uint64
	for totalScan >= batch || totalScan >= freeable {
		ctl.NrToScan = min(batch, totalScan)
		ctl.NrScanned = ctl.NrToScan
		ret, stop := s.Ops.ScanObjects(t, ctl)
		if stop {
			break
		}
		freed += ret
		m.countVMEvents(SLABS_SCANNED, ctl.NrScanned)
		totalScan -= min(totalScan, ctl.NrScanned)
		scanned += ctl.NrScanned
		t.Charge(m.Cost.CondResched)
		if ctl.NrScanned == 0 {
			break
		}
	}
	// next_deferred = nr + delta - scanned, at most twice the cache.
	if next := nr + delta; next > scanned {
		s.nrDeferred = min(next-scanned, 2*freeable)
	}
	s.Scanned += scanned
	s.Freed += freed
	return freed
}
