package mm

// vmscan_kswapd.go models kswapd, the per-node background reclaim thread of
// mm/vmscan.c (linux-mm/linux-mm mm/vmscan.c @000fc868): the
// kswapd() loop, kswapd_try_to_sleep() with its 100 ms nap and the
// *_wmark_hit_quickly counters, balance_pgdat() with watermark boosting and
// the order-0 hand-over to kcompactd, pgdat_balanced() (which counts whole
// free pageblocks under defrag_mode), wakeup_kswapd() with the
// kcompactd-instead branch, and the "hopeless" node after
// MAX_RECLAIM_RETRIES failed runs.
//
// kswapd is a sim task on the node's first CPU. Each of its steps runs one
// priority iteration of balance_pgdat (one kswapd_shrink_node), so its
// work interleaves with the allocations that woke it; the whole balance run
// is one PSI memory stall, as in the kernel.
//
// A task's step may run ahead of the daemon in simulated time, so a wakeup
// can arrive (in the order the steps run) asking at a time later than the
// daemon's next read of pgdat->kswapd_order. In the kernel that wakeup
// raises kswapd_order while kswapd runs and kswapd reads it when its loop
// comes round after that time (kswapd(): alloc_order =
// READ_ONCE(pgdat->kswapd_order) at the loop's top). pagesim keeps each
// wakeup's order and zone index as a daemonAsk with its time and hands it
// to the daemon when the daemon's clock reaches that time
// (takeKswapdAsks): a wake takes only what was asked at or before it.

import (
	"slices"

	"github.com/pagesim/pagesim/engine/sim"
)

type kswapdState uint8

const (
	ksTrySleep kswapdState = iota
	ksNap
	ksSleep
	ksBalanceStart
	ksBalance
)

// kswapdData is the pgdat's kswapd part and the thread's program state.
type kswapdData struct {
	task           *sim.Task
	state          kswapdState
	order          Order    // pgdat->kswapd_order
	highestZoneidx ZoneType // pgdat->kswapd_highest_zoneidx (MAX_NR_ZONES = unset)
	failures       int      // pgdat->kswapd_failures
	waitActive     bool     // waitqueue_active(&pgdat->kswapd_wait)
	// wokenAt is when the wakeup that took the thread off its waitqueue
	// asked for it (valid while woken). woken is true from that wakeup
	// until the thread's next step runs: the wakeup is still an event
	// in the queue, which an earlier wakeup may move to its own time.
	wokenAt sim.Time
	woken   bool
	// asks holds the wakeups' orders and zone indexes not yet merged
	// into order and highestZoneidx: those asked at a time the thread's
	// clock has not reached. Sorted by time; an ask another one
	// asked no later already covers is not kept.
	asks                     []daemonAsk
	allocOrder, reclaimOrder Order
	highest                  ZoneType
	napEnd                   sim.Time
	bal                      balanceState
	// Wakeups counts wake_up_interruptible calls that woke the thread.
	Wakeups uint64
}

type balanceState struct {
	sc             scanControl
	nrBoostReclaim uint64
	zoneBoosts     [MAX_NR_ZONES]uint64
	boosted        bool
	noCacheTrim    bool
}

func (m *Machine) initKswapd() {
	for _, n := range m.Nodes {
		cpu := 0
		if len(n.CPUs) > 0 {
			cpu = n.CPUs[0]
		}
		k := &n.kswapd
		k.highestZoneidx = MAX_NR_ZONES
		k.highest = MAX_NR_ZONES - 1
		k.state = ksSleep
		k.waitActive = true
		k.task = m.World.NewTask(kthreadName("kswapd", n.ID), cpu, kswapdProgram{m, n}, sim.Never)
		m.current(k.task).flags = PF_MEMALLOC | PF_KSWAPD | PF_KTHREAD
		k.task.JiffiesTimeouts = true // schedule_timeout()
		if len(n.CPUs) > 0 {
			k.task.AllowedCPUs = n.CPUs
		}
	}
}

// kswapdProgram is the kswapd thread of one node: kswapd() looping.
type kswapdProgram struct {
	m    *Machine
	node *Node
}

// Step is one turn of kswapd()'s loop.
func (p kswapdProgram) Step(w *sim.World, t *sim.Task) sim.Time { return p.m.kswapdStep(t, p.node) }

func kthreadName(base string, id int) string {
	return base + itoa(id)
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b [20]byte
	p := len(b)
	neg := i < 0
	if neg {
		i = -i
	}
	for i > 0 {
		p--
		b[p] = byte('0' + i%10)
		i /= 10
	}
	if neg {
		p--
		b[p] = '-'
	}
	return string(b[p:])
}

// daemonAsk is one wakeup_kswapd() or wakeup_kcompactd() call's request:
// the order and highest zone index it asked for, at the time it asked.
type daemonAsk struct {
	at      sim.Time
	order   Order
	highest ZoneType
}

// addDaemonAsk adds a to asks (sorted by time) unless an ask no later
// than a covers it (covers(earlier, later): merging the later one after
// the earlier changes nothing), and drops the later asks a covers. The
// list stays short: along it the order or the zone index grows.
func addDaemonAsk(asks []daemonAsk, a daemonAsk, covers func(earlier, later daemonAsk) bool) []daemonAsk {
	i := 0
	for i < len(asks) && asks[i].at <= a.at {
		if covers(asks[i], a) {
			return asks
		}
		i++
	}
	if i == len(asks) {
		return append(asks, a)
	}
	out := asks[:i]
	rest := slices.Clone(asks[i:])
	out = append(out, a)
	for _, b := range rest {
		if !covers(a, b) {
			out = append(out, b)
		}
	}
	return out
}

// kswapdAskCovers reports whether a later ask adds nothing to an earlier
// one: wakeup_kswapd() raises kswapd_order and kswapd_highest_zoneidx.
func kswapdAskCovers(earlier, later daemonAsk) bool {
	return later.order <= earlier.order && later.highest <= earlier.highest
}

// takeKswapdAsks merges into pgdat->kswapd_order and
// kswapd_highest_zoneidx the wakeups asked at or before now, as
// wakeup_kswapd() does (raise the order; set the index if unset or
// lower), and keeps the later ones.
func takeKswapdAsks(k *kswapdData, now sim.Time) {
	i := 0
	for ; i < len(k.asks) && k.asks[i].at <= now; i++ {
		a := k.asks[i]
		if k.highestZoneidx == MAX_NR_ZONES || k.highestZoneidx < a.highest {
			k.highestZoneidx = a.highest
		}
		if k.order < a.order {
			k.order = a.order
		}
	}
	if i > 0 {
		k.asks = slices.Delete(k.asks, 0, i)
	}
}

// kswapdHighestZoneidx is kswapd_highest_zoneidx(): the pending index, or
// prev if none is pending.
func kswapdHighestZoneidx(k *kswapdData, prev ZoneType) ZoneType {
	if k.highestZoneidx == MAX_NR_ZONES {
		return prev
	}
	return k.highestZoneidx
}

// hopeless is kswapd_test_hopeless().
func (k *kswapdData) hopeless() bool { return k.failures >= maxReclaimRetries }

// KswapdFailures returns pgdat->kswapd_failures.
func (n *Node) KswapdFailures() int { return n.kswapd.failures }

// KswapdRunning reports whether the node's kswapd is awake.
func (n *Node) KswapdRunning() bool { return !n.kswapd.waitActive }

// kswapdActive reports whether the node's kswapd is running (the allocator
// skips such nodes first on multi-node machines).
func (m *Machine) kswapdActive(n *Node) bool { return !n.kswapd.waitActive }

// kswapdIsRunning is kswapd_is_running().
func (m *Machine) kswapdIsRunning(n *Node) bool {
	return n.kswapd.state == ksBalance || n.kswapd.state == ksBalanceStart
}

// kswapdTryClearHopeless is kswapd_try_clear_hopeless().
func (m *Machine) kswapdTryClearHopeless(n *Node, order Order, idx ZoneType) {
	if n.kswapd.failures != 0 && m.pgdatBalanced(n, order, idx) {
		n.kswapd.failures = 0
	}
}

// pgdatBalanced is pgdat_balanced().
func (m *Machine) pgdatBalanced(n *Node, order Order, highest ZoneType) bool {
	sawZone := false
	for i := ZoneType(0); i <= highest && i < MAX_NR_ZONES; i++ {
		z := n.Zones[i]
		if !z.Managed() {
			continue
		}
		sawZone = true
		mark := z.WmarkPages(WMARK_HIGH)
		free := z.Stat[NR_FREE_PAGES]
		if m.Sysctl.DefragMode != 0 && order > 0 {
			free = z.Stat[NR_FREE_PAGES_BLOCKS]
		}
		if m._zoneWatermarkOK(z, order, mark, highest, 0, free, MIGRATE_UNMOVABLE) {
			return true
		}
	}
	return !sawZone
}

// pgdatWatermarkBoosted is pgdat_watermark_boosted().
func pgdatWatermarkBoosted(n *Node, highest ZoneType) bool {
	for i := ZoneType(0); i <= highest && i < MAX_NR_ZONES; i++ {
		if z := n.Zones[i]; z.Managed() && z.WatermarkBoost != 0 {
			return true
		}
	}
	return false
}

// wakeupKswapd is wakeup_kswapd().
func (m *Machine) wakeupKswapd(t *sim.Task, z *Zone, gfp GFP, order Order, highest ZoneType) {
	if !z.Managed() {
		return
	}
	n := z.Node
	k := &n.kswapd
	now := m.World.Now()
	if t != nil && t.Now > now {
		now = t.Now
	}
	// The kernel raises pgdat->kswapd_highest_zoneidx and kswapd_order
	// here; pagesim raises them when kswapd's clock reaches now.
	k.asks = addDaemonAsk(k.asks, daemonAsk{at: now, order: order, highest: highest}, kswapdAskCovers)
	// A step that ran ahead may have woken the thread at a later time
	// than now, and its step has not run yet: at now the thread is
	// still on its waitqueue, so this wakeup is the one that wakes it
	// (with what was asked by now: the later wakeup's order waits for
	// the thread's clock).
	earlier := !k.waitActive && k.woken && k.wokenAt > now
	if !k.waitActive && !earlier {
		return
	}
	if k.hopeless() || (m.pgdatBalanced(n, order, highest) && !pgdatWatermarkBoosted(n, highest)) {
		if gfp&__GFP_DIRECT_RECLAIM == 0 {
			m.wakeupKcompactd(t, n, order, highest)
		}
		return
	}
	m.Trace.Emit(t, TraceMmVmscanWakeupKswapd, int64(n.ID), int64(order), int64(gfp))
	if !earlier {
		k.Wakeups++ // an earlier wakeup replaces the later one
	}
	k.waitActive = false
	k.woken = true
	k.wokenAt = now
	m.World.Wake(k.task, now)
}

// prepareKswapdSleep is prepare_kswapd_sleep().
func (m *Machine) prepareKswapdSleep(n *Node, order Order, highest ZoneType) bool {
	if n.kswapd.hopeless() {
		return true
	}
	return m.pgdatBalanced(n, order, highest)
}

// kswapdStep runs the kswapd state machine one step.
func (m *Machine) kswapdStep(t *sim.Task, n *Node) sim.Time {
	k := &n.kswapd
	k.woken = false
	for {
		takeKswapdAsks(k, t.Now)
		switch k.state {
		case ksSleep:
			// schedule() returned: someone woke us.
			k.state = ksBalanceStart
		case ksTrySleep:
			if m.prepareKswapdSleep(n, k.reclaimOrder, k.highest) {
				m.resetIsolationSuitablePgdat(t, n)
				m.wakeupKcompactd(t, n, k.allocOrder, k.highest)
				k.state = ksNap
				k.waitActive = true
				k.napEnd = t.Now + 100*sim.Millisecond // HZ/10
				return k.napEnd
			}
			m.countVMEvent(KSWAPD_HIGH_WMARK_HIT_QUICKLY)
			k.state = ksBalanceStart
		case ksNap:
			if t.Now < k.napEnd {
				// Woken before the nap ended (remaining != 0).
				k.highestZoneidx = kswapdHighestZoneidx(k, k.highest)
				if k.order < k.reclaimOrder {
					k.order = k.reclaimOrder
				}
				m.countVMEvent(KSWAPD_LOW_WMARK_HIT_QUICKLY)
				k.waitActive = false
				k.state = ksBalanceStart
				continue
			}
			if m.prepareKswapdSleep(n, k.reclaimOrder, k.highest) {
				m.Trace.Emit(t, TraceMmVmscanKswapdSleep, int64(n.ID))
				k.state = ksSleep
				k.waitActive = true
				return sim.Never
			}
			m.countVMEvent(KSWAPD_HIGH_WMARK_HIT_QUICKLY)
			k.waitActive = false
			k.state = ksBalanceStart
		case ksBalanceStart:
			k.waitActive = false
			k.allocOrder = k.order
			k.highest = kswapdHighestZoneidx(k, k.highest)
			k.order = 0
			k.highestZoneidx = MAX_NR_ZONES
			m.Trace.Emit(t, TraceMmVmscanKswapdWake, int64(n.ID), int64(k.allocOrder))
			m.balancePgdatBegin(t, n, k.allocOrder, k.highest)
			k.state = ksBalance
			return t.Now
		case ksBalance:
			done, reclaimOrder := m.balancePgdatStep(t, n)
			if !done {
				return t.Now
			}
			k.reclaimOrder = reclaimOrder
			if reclaimOrder < k.allocOrder {
				k.state = ksTrySleep
				continue
			}
			// Top of the loop: alloc_order = reclaim_order = kswapd_order.
			takeKswapdAsks(k, t.Now)
			k.allocOrder = k.order
			k.reclaimOrder = k.order
			k.highest = kswapdHighestZoneidx(k, k.highest)
			k.state = ksTrySleep
		}
	}
}

// balancePgdatBegin is the start of balance_pgdat().
func (m *Machine) balancePgdatBegin(t *sim.Task, n *Node, order Order, highest ZoneType) {
	b := &n.kswapd.bal
	*b = balanceState{}
	b.sc = scanControl{gfp: GFP_KERNEL, order: order, mayUnmap: true, who: reclaimerKswapd, reclaimIdx: highest, priority: defPriority}
	m.psiMemstallEnter(t)
	m.countVMEvent(PAGEOUTRUN)
	for i := ZoneType(0); i <= highest; i++ {
		z := n.Zones[i]
		if z.Managed() {
			b.nrBoostReclaim += z.WatermarkBoost
			b.zoneBoosts[i] = z.WatermarkBoost
		}
	}
	b.boosted = b.nrBoostReclaim != 0
	m.setReclaimActive(n, highest, true)
}

func (m *Machine) setReclaimActive(n *Node, highest ZoneType, on bool) {
	for i := ZoneType(0); i <= highest; i++ {
		z := n.Zones[i]
		if !z.Managed() {
			continue
		}
		if on {
			z.flags |= ZONE_RECLAIM_ACTIVE
		} else {
			z.flags &^= ZONE_RECLAIM_ACTIVE
		}
	}
}

// balancePgdatStep runs one iteration of balance_pgdat's priority loop.
// It returns true when the run is over, with the order kswapd finished at.
func (m *Machine) balancePgdatStep(t *sim.Task, n *Node) (bool, Order) {
	b := &n.kswapd.bal
	sc := &b.sc
	highest := n.kswapd.highest
	before := sc.nrReclaimed
	raisePriority := true
	sc.reclaimIdx = highest
	balanced := m.pgdatBalanced(n, sc.order, highest)
	if !balanced && b.nrBoostReclaim != 0 {
		// Ignore boosting and restart.
		b.nrBoostReclaim = 0
		sc.priority = defPriority
		return false, 0
	}
	if b.nrBoostReclaim == 0 && balanced {
		return true, m.balancePgdatEnd(t, n)
	}
	if b.nrBoostReclaim != 0 && sc.priority == defPriority-2 {
		raisePriority = false
	}
	sc.mayWritepage = b.nrBoostReclaim == 0
	sc.maySwap = b.nrBoostReclaim == 0
	m.kswapdAgeNode(t, n, sc)
	sc.nrScanned = 0
	if m.kswapdShrinkNode(t, n, sc) {
		raisePriority = false
	}
	nrReclaimed := sc.nrReclaimed - before
	b.nrBoostReclaim -= min(b.nrBoostReclaim, nrReclaimed)
	if b.nrBoostReclaim != 0 && nrReclaimed == 0 {
		return true, m.balancePgdatFinish(t, n)
	}
	if raisePriority || nrReclaimed == 0 {
		sc.priority--
	}
	if sc.priority >= 1 {
		return false, 0
	}
	return true, m.balancePgdatFinish(t, n)
}

// balancePgdatFinish is the tail of balance_pgdat's loop: count a failure
// if nothing was reclaimed, then out.
func (m *Machine) balancePgdatFinish(t *sim.Task, n *Node) Order {
	b := &n.kswapd.bal
	if b.sc.nrReclaimed == 0 && !b.boosted {
		n.kswapd.failures++
	}
	return m.balancePgdatEnd(t, n)
}

// balancePgdatEnd is the out: label of balance_pgdat().
func (m *Machine) balancePgdatEnd(t *sim.Task, n *Node) Order {
	b := &n.kswapd.bal
	highest := n.kswapd.highest
	m.setReclaimActive(n, highest, false)
	if b.boosted {
		for i := ZoneType(0); i <= highest; i++ {
			if b.zoneBoosts[i] == 0 {
				continue
			}
			z := n.Zones[i]
			z.WatermarkBoost -= min(z.WatermarkBoost, b.zoneBoosts[i])
		}
		m.wakeupKcompactd(t, n, PageblockOrder, highest)
	}
	m.snapshotRefaults(n)
	m.psiMemstallLeave(t)
	return b.sc.order
}

// kswapdAgeNode is kswapd_age_node().
func (m *Machine) kswapdAgeNode(t *sim.Task, n *Node, sc *scanControl) {
	if !m.canAgeAnonPages() {
		return
	}
	if !inactiveIsLow(uint64(n.Stat[NR_INACTIVE_ANON]), uint64(n.Stat[NR_ACTIVE_ANON])) {
		return
	}
	for _, cg := range m.memcgs {
		m.shrinkActiveList(t, SWAP_CLUSTER_MAX, cg.lruvecs[n.ID], sc, LRU_ACTIVE_ANON)
	}
}

// kswapdShrinkNode is kswapd_shrink_node().
func (m *Machine) kswapdShrinkNode(t *sim.Task, n *Node, sc *scanControl) bool {
	before := sc.nrReclaimed
	sc.nrToReclaim = 0
	for i := ZoneType(0); i <= sc.reclaimIdx; i++ {
		if z := n.Zones[i]; z.Managed() {
			sc.nrToReclaim += max(z.WmarkPages(WMARK_HIGH), SWAP_CLUSTER_MAX)
		}
	}
	m.shrinkNode(t, n, sc)
	if sc.order > 0 && sc.nrReclaimed >= compactGap(sc.order) {
		sc.order = 0
	}
	return max(sc.nrScanned, sc.nrReclaimed-before) >= sc.nrToReclaim
}
