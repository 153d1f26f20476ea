package mm

// compaction_kcompactd.go models kcompactd, the per-node background
// compaction thread of mm/compaction.c: wakeup_kcompactd() (from kswapd when
// it goes to sleep, from wakeup_kswapd for callers that cannot reclaim, and
// after boosted reclaim), kcompactd_do_work() at MIGRATE_SYNC_LIGHT honouring
// skip bits and deferral, and the 500 ms timer that runs proactive
// compaction when the node's fragmentation score is above the
// vm.compaction_proactiveness high mark. kcompactd's work on a wakeup is a
// PSI memory stall; proactive compaction is not.
//
// A proactive pass stops as soon as kswapd runs (__compact_finished():
// kswapd_is_running() at every turn of compact_zone()'s loop), so its
// runs end the thread's step wherever its clock is ahead of the world's
// (compactZone's essay) and the pass (proactivePass) goes on in the next
// step: each check reads kswapd's state at its own time. A pass read it
// as of its start until December 2026, and at the seed 000 scenario's
// 384 GiB kcompactd was never woken (docs/FIDELITY.md).

import (
	"github.com/pagesim/pagesim/engine/sim"
)

type kcompactdData struct {
	task           *sim.Task
	maxOrder       Order
	highestZoneidx ZoneType
	// daemonWait holds waitqueue_active(&pgdat->kcompactd_wait) and
	// the wakeups whose order and zone index are not merged into
	// maxOrder and highestZoneidx yet (see vmscan_kswapd.go's essay).
	daemonWait
	// passOrder and passHighest are the order and zone index of the
	// thread's last run, which kcompactd_do_work()'s end compares
	// kcompactd_max_order and kcompactd_highest_zoneidx with (0 and
	// MAX_NR_ZONES after proactive work, which resets neither).
	passOrder   Order
	passHighest ZoneType
	timeout     sim.Time
	// proactiveTrigger is set by writing vm.compaction_proactiveness.
	proactiveTrigger bool
	// proactive is the proactive compaction pass under way, nil between
	// passes: its compact_zone() runs end their steps at the loop's
	// cond_resched() points (compactZone's essay), so a pass spans
	// several steps of the thread.
	proactive *proactivePass
}

// proactivePass is kcompactd()'s proactive branch in progress:
// compact_node(pgdat, true) over the node's zones, then the score test.
type proactivePass struct {
	// prevScore is fragmentation_score_node() before the pass.
	prevScore uint64
	// zone is the index of the zone being compacted; cc its run, nil
	// before the run has started.
	zone ZoneType
	cc   *compactControl
}

func (m *Machine) initKcompactd() {
	for _, n := range m.Nodes {
		cpu := 0
		if len(n.CPUs) > 0 {
			cpu = n.CPUs[0]
		}
		kc := &n.kcompactd
		kc.highestZoneidx = max(n.nrZones(), 1) - 1 // kcompactd(): pgdat->nr_zones - 1
		kc.timeout = hpageFragCheckIntervalMsec * sim.Millisecond
		kc.park(0)
		kc.askTimerAt = sim.Never
		kc.task = m.World.NewTask(kthreadName("kcompactd", n.ID), cpu, kcompactdProgram{m, n}, kc.timeout)
		m.current(kc.task).flags = PF_KTHREAD
		kc.task.JiffiesTimeouts = true // schedule_timeout()
		if len(n.CPUs) > 0 {
			kc.task.AllowedCPUs = n.CPUs
		}
	}
}

// kcompactdProgram is the kcompactd thread of one node: kcompactd() looping.
type kcompactdProgram struct {
	m    *Machine
	node *Node
}

// Step is one turn of kcompactd()'s loop.
func (p kcompactdProgram) Step(w *sim.World, t *sim.Task) sim.Time {
	return p.m.kcompactdStep(t, p.node)
}

// kcompactdAskMerge merges a into an ask as wakeup_kcompactd() raises
// kcompactd_max_order and lowers kcompactd_highest_zoneidx.
func kcompactdAskMerge(into *daemonAsk, a daemonAsk) {
	into.order = max(into.order, a.order)
	into.highest = min(into.highest, a.highest)
}

// kcompactdAsked returns pgdat->kcompactd_max_order and
// kcompactd_highest_zoneidx as they stand at now: the merged values with
// the wakeups asked at or before now merged in, as wakeup_kcompactd()
// merges them.
func kcompactdAsked(kc *kcompactdData, now sim.Time) (Order, ZoneType) {
	return kc.asked(kc.maxOrder, kc.highestZoneidx, now, kcompactdAskMerge)
}

// takeKcompactdAsks merges the wakeups asked at or before now and keeps
// the later ones.
func takeKcompactdAsks(kc *kcompactdData, now sim.Time) {
	kc.maxOrder, kc.highestZoneidx = kcompactdAsked(kc, now)
	if i := kc.asksUpTo(now); i > 0 {
		kc.dropAsks(i, now)
	}
}

// kcompactdNodeSuitable is kcompactd_node_suitable(), for
// kcompactd_max_order and kcompactd_highest_zoneidx at order and highest.
func (m *Machine) kcompactdNodeSuitable(n *Node, order Order, highest ZoneType) bool {
	flags := ALLOC_WMARK_MIN
	if m.Sysctl.DefragMode != 0 {
		flags = ALLOC_WMARK_HIGH
	}
	for i := ZoneType(0); i <= highest && i < MAX_NR_ZONES; i++ {
		z := n.Zones[i]
		if !z.Populated() {
			continue
		}
		if m.compactionSuitAllocationOrder(nil, z, order, highest, flags, false, true, MIGRATE_UNMOVABLE) == COMPACT_CONTINUE {
			return true
		}
	}
	return false
}

// wakeupKcompactd is wakeup_kcompactd().
func (m *Machine) wakeupKcompactd(t *sim.Task, n *Node, order Order, highest ZoneType) {
	now := m.World.Now()
	if t != nil && t.Now > now {
		now = t.Now
	}
	m.wakeupKcompactdAt(t, now, n, order, highest)
}

// wakeupKcompactdAt is wakeup_kcompactd() called by t at time at
// (wakeup_kswapd()'s decision for an ask taken at the ask's time).
func (m *Machine) wakeupKcompactdAt(t *sim.Task, at sim.Time, n *Node, order Order, highest ZoneType) {
	if order == 0 {
		return
	}
	// The kernel raises pgdat->kcompactd_max_order and lowers
	// kcompactd_highest_zoneidx here; pagesim does when kcompactd's
	// clock reaches at.
	daemonAskTimer{m: m, node: n, kcompactd: true}.ask(daemonAsk{at: at, order: order, highest: highest, asker: t})
}

// kcompactdDecide is the rest of wakeup_kcompactd() for an ask, taken for
// the ask's time: wake the thread if it waited then (wq_has_sleeper())
// and kcompactd_node_suitable() holds for what pgdat holds then.
func (m *Machine) kcompactdDecide(n *Node, a daemonAsk) {
	kc := &n.kcompactd
	if a.at < kc.waitSince {
		kc.removeAsk(a)
		m.kcompactdLateAsk(n, a)
		return
	}
	if !kc.parkedAt(a.at) {
		return
	}
	if order, highest := kcompactdAsked(kc, a.at); !m.kcompactdNodeSuitable(n, order, highest) {
		return
	}
	m.Trace.emitAt(a.asker, a.at, TraceMmCompactionWakeupKcompactd, int64(n.ID), int64(a.order), int64(a.highest))
	kc.waitActive = false
	kc.woken = true
	kc.wokenAt = a.at
	m.World.Wake(kc.task, a.at)
}

// kcompactdLateAsk takes a wakeup asked while the thread ran, before it
// last went back to wait (waitSince), which its steps have run past: in the
// kernel the wakeup raised kcompactd_max_order (and lowered
// kcompactd_highest_zoneidx) during the run, kcompactd_do_work()'s end
// kept them only above (below) the run's own, and the wait's test of
// kcompactd_work_requested() found the order raised, so the thread runs
// again at once, with no wakeup (nobody was on the waitqueue to wake).
func (m *Machine) kcompactdLateAsk(n *Node, a daemonAsk) {
	kc := &n.kcompactd
	if a.order > kc.passOrder {
		kc.maxOrder = max(kc.maxOrder, a.order)
	}
	if a.highest < kc.passHighest {
		kc.highestZoneidx = min(kc.highestZoneidx, a.highest)
	}
	if kc.maxOrder == 0 || !kc.waitActive {
		return
	}
	kc.waitActive = false
	kc.woken = true
	kc.wokenAt = kc.waitSince
	m.World.Wake(kc.task, kc.waitSince)
}

// kcompactdStep is one turn of the kcompactd() loop.
func (m *Machine) kcompactdStep(t *sim.Task, n *Node) sim.Time {
	kc := &n.kcompactd
	defaultTimeout := hpageFragCheckIntervalMsec * sim.Millisecond
	if p := kc.proactive; p != nil {
		// A proactive pass stopped at a cond_resched(): go on.
		if !m.compactNodeProactive(t, n, p) {
			return t.Now
		}
		kc.proactive = nil
		if m.fragmentationScoreNode(n) >= p.prevScore {
			defaultTimeout <<= compactMaxDeferShift
		}
		kc.proactiveTrigger = false
		return m.kcompactdWait(t, n, defaultTimeout)
	}
	kc.woken = false
	takeKcompactdAsks(kc, t.Now)
	kc.waitActive = false
	kc.passOrder, kc.passHighest = 0, MAX_NR_ZONES
	if kc.maxOrder > 0 && !kc.proactiveTrigger {
		// Woken with work.
		m.psiMemstallEnter(t)
		m.kcompactdDoWork(t, n)
		m.psiMemstallLeave(t)
	} else {
		if m.shouldProactiveCompactNode(t, n) {
			p := &proactivePass{prevScore: m.fragmentationScoreNode(n)}
			if !m.compactNodeProactive(t, n, p) {
				// Off the waitqueue until the pass ends: a wakeup
				// meanwhile raises kcompactd_max_order, which the
				// wait below reads.
				kc.proactive = p
				return t.Now
			}
			if m.fragmentationScoreNode(n) >= p.prevScore {
				defaultTimeout <<= compactMaxDeferShift
			}
		}
		kc.proactiveTrigger = false
	}
	return m.kcompactdWait(t, n, defaultTimeout)
}

// kcompactdWait is the end of kcompactd()'s loop turn:
// wait_event_freezable_timeout() on kcompactd_work_requested() for
// defaultTimeout (or for ever with vm.compaction_proactiveness 0).
func (m *Machine) kcompactdWait(t *sim.Task, n *Node, defaultTimeout sim.Time) sim.Time {
	kc := &n.kcompactd
	m.Trace.Emit(t, TraceMmCompactionKcompactdSleep, int64(n.ID))
	// What was asked during the work is kcompactd_max_order now.
	takeKcompactdAsks(kc, t.Now)
	if kc.maxOrder > 0 {
		// wait_event_freezable_timeout() tests kcompactd_work_requested()
		// before it sleeps: a wakeup during the pass raised
		// kcompactd_max_order above the pass's order, so the loop passes
		// again at once.
		return t.Now
	}
	kc.park(t.Now)
	if m.Sysctl.CompactionProactiveness == 0 {
		return sim.Never
	}
	return t.Now + defaultTimeout
}

// kcompactdDoWork is kcompactd_do_work().
func (m *Machine) kcompactdDoWork(t *sim.Task, n *Node) {
	kc := &n.kcompactd
	flags := ALLOC_WMARK_MIN
	if m.Sysctl.DefragMode != 0 {
		flags = ALLOC_WMARK_HIGH
	}
	order := kc.maxOrder
	highest := kc.highestZoneidx
	kc.passOrder, kc.passHighest = order, highest
	m.Trace.Emit(t, TraceMmCompactionKcompactdWake, int64(n.ID), int64(order), int64(highest))
	m.countVMEvent(KCOMPACTD_WAKE)
	// One compact_control for the pass, as in the kernel: the fast
	// searches' search_order and fast_search_fail (and whole_zone, once
	// a zone's run has set it) carry over from one zone to the next.
	cc := &compactControl{order: int(order), searchOrder: int(order), highestZoneidx: highest, mode: migrateSyncLight,
		gfp: GFP_KERNEL, allocFlags: flags}
	for i := ZoneType(0); i <= highest && i < MAX_NR_ZONES; i++ {
		z := n.Zones[i]
		if !z.Populated() {
			continue
		}
		if m.compactionDeferred(t, z, order) {
			continue
		}
		if m.compactionSuitAllocationOrder(t, z, order, i, flags, false, true, MIGRATE_UNMOVABLE) != COMPACT_CONTINUE {
			continue
		}
		cc.zone = z
		status := m.compactZone(t, cc)
		switch status {
		case COMPACT_SUCCESS:
			m.compactionDeferReset(t, z, order, false)
		case COMPACT_PARTIAL_SKIPPED, COMPACT_COMPLETE:
			m.drainAllPages(t, z)
			m.deferCompaction(t, z, order)
		}
		m.countVMEvents(KCOMPACTD_MIGRATE_SCANNED, cc.totalMigrateScanned)
		m.countVMEvents(KCOMPACTD_FREE_SCANNED, cc.totalFreeScanned)
	}
	// A wakeup during the work raised what kcompactd keeps for its next
	// pass.
	takeKcompactdAsks(kc, t.Now)
	if kc.maxOrder <= order {
		kc.maxOrder = 0
	}
	if kc.highestZoneidx >= highest {
		kc.highestZoneidx = max(n.nrZones(), 1) - 1
	}
}

// fragmentationScoreWmark is fragmentation_score_wmark().
func (m *Machine) fragmentationScoreWmark(low bool) int {
	wmarkLow := 100 - m.Sysctl.CompactionProactiveness
	if low {
		return wmarkLow
	}
	leeway := min(10, wmarkLow/2)
	return min(wmarkLow+leeway, 100)
}

// fragmentationScoreNode is fragmentation_score_node().
func (m *Machine) fragmentationScoreNode(n *Node) uint64 {
	var score uint64
	for _, z := range n.Zones {
		if !z.Populated() {
			continue
		}
		score += z.PresentPages * extfragForOrder(z, compactionHPageOrder) / (n.PresentPages + 1)
	}
	return score
}

// shouldProactiveCompactNode is should_proactive_compact_node().
func (m *Machine) shouldProactiveCompactNode(t *sim.Task, n *Node) bool {
	if m.Sysctl.CompactionProactiveness == 0 || m.kswapdIsRunning(n, t.Now) {
		return false
	}
	return m.fragmentationScoreNode(n) > uint64(m.fragmentationScoreWmark(false))
}

// compactNodeProactive is compact_node(pgdat, true) for kcompactd's pass
// p, from where it stopped: false if a zone's run stopped at a
// cond_resched() (call again in the thread's next step), true once every
// zone is done.
func (m *Machine) compactNodeProactive(t *sim.Task, n *Node, p *proactivePass) bool {
	for ; p.zone < MAX_NR_ZONES; p.zone++ {
		z := n.Zones[p.zone]
		if !z.Populated() {
			continue
		}
		var ret CompactResult
		if p.cc == nil {
			p.cc = &compactControl{zone: z, order: -1, mode: migrateSyncLight, ignoreSkipHint: true, wholeZone: true,
				gfp: GFP_KERNEL, proactive: true, yields: true}
			ret = m.compactZone(t, p.cc)
		} else {
			ret = m.compactZoneResume(t, p.cc)
		}
		if ret == compactYield {
			return false
		}
		m.countVMEvents(KCOMPACTD_MIGRATE_SCANNED, p.cc.totalMigrateScanned)
		m.countVMEvents(KCOMPACTD_FREE_SCANNED, p.cc.totalFreeScanned)
		p.cc = nil
	}
	return true
}

// compactNode is compact_node(): whole-zone compaction of every zone
// (proactive: MIGRATE_SYNC_LIGHT until the score is low enough; manual,
// vm.compact_memory: MIGRATE_SYNC).
func (m *Machine) compactNode(t *sim.Task, n *Node, proactive bool) {
	for _, z := range n.Zones {
		if !z.Populated() {
			continue
		}
		cc := &compactControl{zone: z, order: -1, mode: migrateSync, ignoreSkipHint: true, wholeZone: true,
			gfp: GFP_KERNEL, proactive: proactive}
		if proactive {
			cc.mode = migrateSyncLight
		}
		m.compactZone(t, cc)
		if proactive {
			m.countVMEvents(KCOMPACTD_MIGRATE_SCANNED, cc.totalMigrateScanned)
			m.countVMEvents(KCOMPACTD_FREE_SCANNED, cc.totalFreeScanned)
		}
	}
}

// CompactMemory is `echo 1 > /proc/sys/vm/compact_memory`: compact every
// node fully, in the calling task.
func (m *Machine) CompactMemory(t *sim.Task) {
	for _, n := range m.Nodes {
		m.compactNode(t, n, false)
	}
}
