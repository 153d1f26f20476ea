package mm

// compaction_kcompactd.go models kcompactd, the per-node background
// compaction thread of mm/compaction.c: wakeup_kcompactd() (from kswapd when
// it goes to sleep, from wakeup_kswapd for callers that cannot reclaim, and
// after boosted reclaim), kcompactd_do_work() at MIGRATE_SYNC_LIGHT honouring
// skip bits and deferral, and the 500 ms timer that runs proactive
// compaction when the node's fragmentation score is above the
// vm.compaction_proactiveness high mark. kcompactd's work on a wakeup is a
// PSI memory stall; proactive compaction is not.

import (
	"slices"

	"github.com/pagesim/pagesim/engine/sim"
)

type kcompactdData struct {
	task           *sim.Task
	maxOrder       Order
	highestZoneidx ZoneType
	waitActive     bool
	// wokenAt is when the wakeup that took the thread off its waitqueue
	// asked for it; woken is true from that wakeup until the thread's
	// next step runs (an earlier wakeup may move it to its own time).
	wokenAt sim.Time
	woken   bool
	// asks holds the wakeups' orders and zone indexes not yet merged
	// into maxOrder and highestZoneidx: those asked at a time the
	// thread's clock has not reached (see vmscan_kswapd.go's essay).
	// Sorted by time; an ask another one asked no later already covers
	// is not kept.
	asks    []daemonAsk
	timeout sim.Time
	// proactiveTrigger is set by writing vm.compaction_proactiveness.
	proactiveTrigger bool
}

func (m *Machine) initKcompactd() {
	for _, n := range m.Nodes {
		cpu := 0
		if len(n.CPUs) > 0 {
			cpu = n.CPUs[0]
		}
		kc := &n.kcompactd
		kc.highestZoneidx = MAX_NR_ZONES - 1
		kc.waitActive = true
		kc.timeout = hpageFragCheckIntervalMsec * sim.Millisecond
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

// kcompactdAskCovers reports whether a later ask adds nothing to an
// earlier one: wakeup_kcompactd() raises kcompactd_max_order and lowers
// kcompactd_highest_zoneidx.
func kcompactdAskCovers(earlier, later daemonAsk) bool {
	return later.order <= earlier.order && later.highest >= earlier.highest
}

// kcompactdAsked returns pgdat->kcompactd_max_order and
// kcompactd_highest_zoneidx as they stand at now: the merged values with
// the wakeups asked at or before now merged in, as wakeup_kcompactd()
// merges them.
func kcompactdAsked(kc *kcompactdData, now sim.Time) (Order, ZoneType) {
	order, highest := kc.maxOrder, kc.highestZoneidx
	for _, a := range kc.asks {
		if a.at > now {
			break
		}
		order = max(order, a.order)
		highest = min(highest, a.highest)
	}
	return order, highest
}

// takeKcompactdAsks merges the wakeups asked at or before now and keeps
// the later ones.
func takeKcompactdAsks(kc *kcompactdData, now sim.Time) {
	kc.maxOrder, kc.highestZoneidx = kcompactdAsked(kc, now)
	i := 0
	for i < len(kc.asks) && kc.asks[i].at <= now {
		i++
	}
	if i > 0 {
		kc.asks = slices.Delete(kc.asks, 0, i)
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
	if order == 0 {
		return
	}
	kc := &n.kcompactd
	now := m.World.Now()
	if t != nil && t.Now > now {
		now = t.Now
	}
	// The kernel raises pgdat->kcompactd_max_order and lowers
	// kcompactd_highest_zoneidx here; pagesim does when kcompactd's
	// clock reaches now.
	kc.asks = addDaemonAsk(kc.asks, daemonAsk{at: now, order: order, highest: highest}, kcompactdAskCovers)
	// A step that ran ahead may have woken the thread at a later time
	// than now, and its step has not run yet: at now the thread still
	// sleeps, so this wakeup is the one that wakes it.
	earlier := !kc.waitActive && kc.woken && kc.wokenAt > now
	if !kc.waitActive && !earlier {
		return
	}
	if order, highest := kcompactdAsked(kc, now); !m.kcompactdNodeSuitable(n, order, highest) {
		return
	}
	m.Trace.Emit(t, TraceMmCompactionWakeupKcompactd, int64(n.ID), int64(order), int64(highest))
	kc.waitActive = false
	kc.woken = true
	kc.wokenAt = now
	m.World.Wake(kc.task, now)
}

// kcompactdStep is one turn of the kcompactd() loop.
func (m *Machine) kcompactdStep(t *sim.Task, n *Node) sim.Time {
	kc := &n.kcompactd
	kc.woken = false
	takeKcompactdAsks(kc, t.Now)
	defaultTimeout := hpageFragCheckIntervalMsec * sim.Millisecond
	if kc.maxOrder > 0 && !kc.proactiveTrigger {
		// Woken with work.
		kc.waitActive = false
		m.psiMemstallEnter(t)
		m.kcompactdDoWork(t, n)
		m.psiMemstallLeave(t)
	} else {
		if m.shouldProactiveCompactNode(n) {
			prev := m.fragmentationScoreNode(n)
			m.compactNode(t, n, true)
			if m.fragmentationScoreNode(n) >= prev {
				defaultTimeout <<= compactMaxDeferShift
			}
		}
		kc.proactiveTrigger = false
	}
	m.Trace.Emit(t, TraceMmCompactionKcompactdSleep, int64(n.ID))
	if kc.maxOrder > 0 {
		// wait_event_freezable_timeout() tests kcompactd_work_requested()
		// before it sleeps: a wakeup during the pass raised
		// kcompactd_max_order above the pass's order, so the loop passes
		// again at once.
		return t.Now
	}
	kc.waitActive = true
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
		kc.highestZoneidx = MAX_NR_ZONES - 1
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
func (m *Machine) shouldProactiveCompactNode(n *Node) bool {
	if m.Sysctl.CompactionProactiveness == 0 || m.kswapdIsRunning(n) {
		return false
	}
	return m.fragmentationScoreNode(n) > uint64(m.fragmentationScoreWmark(false))
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
