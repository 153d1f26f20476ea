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
// priority iteration of balance_pgdat (one kswapd_shrink_node), or the
// part of one up to a cond_resched() in its shrink_node() where something
// else is due (vmscan.go, "Preemption"), so its work interleaves with the
// allocations that woke it; the whole balance run is one PSI memory
// stall, as in the kernel. kswapd_try_to_sleep()'s
// reset_isolation_suitable() walk stops the same way at the cond_resched()
// of each step of its loop (ksTrySleepReset, compaction.go resetWalk):
// kswapd is on its waitqueue by then, and a wakeup that comes while it is
// stopped there makes the nap end at once (KSWAPD_LOW_WMARK_HIT_QUICKLY),
// as schedule_timeout() returns at once for a task already woken.
//
// A task's step may run ahead of the daemon in simulated time, so a wakeup
// can arrive (in the order the steps run) asking at a time later than the
// daemon's next read of pgdat->kswapd_order. In the kernel that wakeup
// raises kswapd_order at its time and kswapd reads it when its loop comes
// round after that time (kswapd(): alloc_order =
// READ_ONCE(pgdat->kswapd_order) at the loop's top). pagesim keeps each
// wakeup as a daemonAsk with its time and hands its order and zone index
// to the daemon when the daemon's clock reaches that time
// (takeKswapdAsks): a wake takes only what was asked at or before it.
//
// The wakeup's other half, the decision whether to wake the thread
// (wakeup_kswapd(): waitqueue_active(), kswapd_failures, pgdat_balanced()
// at the asked order, and wakeup_kcompactd() instead for a caller without
// __GFP_DIRECT_RECLAIM), depends on what the thread does at the asked
// time, which the steps run so far may not say yet. So it is taken at that
// time in the world's order: at once for a wakeup asked at the world's
// clock, or for one asked while the thread's steps ran past it without
// parking (it was running then: the wakeup only raises what it reads
// next); otherwise the ask waits with due set and a timer
// (daemonAskTimer) decides when the world's clock reaches it, whatever the
// thread did meanwhile: if it parked before then, in its nap the wake is
// premature (KSWAPD_LOW_WMARK_HIT_QUICKLY, kswapd_try_to_sleep()) unless
// jiffies had reached the nap's expire (schedule_timeout() returns 0 in
// the last jiffy, before its timer fires), asleep it wakes. Decisions
// taken at the asked time also mean that a wakeup never wakes the thread
// for a time an earlier wakeup, run later, would have woken it before. kcompactd's decision (kcompactdDecide) is the same
// with wakeup_kcompactd()'s test, kcompactd_node_suitable(). A wakeup
// asked at a time the thread's clock has passed (the waker's step lags
// the thread's) is decided at once as the thread stood then: it was on its
// waitqueue at that time only if it parked at or before it.

import (
	"encoding/binary"
	"slices"

	"github.com/pagesim/pagesim/engine/sim"
)

type kswapdState uint8

const (
	ksTrySleep kswapdState = iota
	// ksTrySleepReset is kswapd_try_to_sleep() on its waitqueue, in
	// reset_isolation_suitable(), stopped at its cond_resched().
	ksTrySleepReset
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
	daemonWait
	allocOrder, reclaimOrder Order
	highest                  ZoneType
	napEnd                   sim.Time
	// napExpire is when jiffies reach the nap's schedule_timeout()
	// expire (at or before napEnd; its timer fires a jiffy later): a
	// nap that ends before it was woken prematurely (remaining != 0).
	napExpire sim.Time
	bal       balanceState
	// reset is kswapd_try_to_sleep()'s reset_isolation_suitable() walk
	// (ksTrySleepReset).
	reset resetWalk
	// Wakeups counts wake_up_interruptible calls that woke the thread.
	Wakeups uint64
}

type balanceState struct {
	sc             scanControl
	nrBoostReclaim uint64
	zoneBoosts     [MAX_NR_ZONES]uint64
	boosted        bool
	noCacheTrim    bool
	// The priority iteration's locals that live across a cond_resched()
	// in its kswapd_shrink_node(): balance_pgdat()'s nr_reclaimed before
	// it and raise_priority, kswapd_shrink_node()'s nr_reclaimed before
	// its shrink_node(), and shrink_node()'s frame (shrink.at is
	// shrinkRunning unless the pass stopped in it).
	stepBefore, shrinkBefore uint64
	raisePriority            bool
	shrink                   shrinkFrame
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
		k.park(0)
		k.askTimerAt = sim.Never
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
	// gfp is the asker's gfp_mask (wakeup_kswapd() wakes kcompactd
	// instead for a caller without __GFP_DIRECT_RECLAIM; the tracepoint
	// prints it).
	gfp GFP
	// due is set while the decision whether to wake the thread waits
	// for the world's clock to reach at (daemonAskTimer).
	due bool
	// asker is the task that asked (the wakeup tracepoints' task), or
	// nil.
	asker *sim.Task
	// run holds the times of the due asks equal to this one but for
	// their time (same asker, order, zone index and gfp mask) that
	// follow it in the list with nothing between: each a uvarint of the
	// nanoseconds since the time before, the last at end (at for an ask
	// alone). A run is only a shorter way to write those asks (a
	// ran-ahead fault loop below the low watermark asks on every
	// slow-path entry): every one keeps its own time, is decided at it,
	// and is read when the thread's clock reaches it (see daemonWait).
	// due says whether the first is still to be decided; the others
	// always are. A decided first ask is dropped when the next one is
	// decided: they raise the same order and zone index, and every read
	// from then on is at or after the next one's time.
	run []byte
	end sim.Time
}

// same reports whether b can join a's run: both due, equal but for the
// time.
func (a *daemonAsk) same(b *daemonAsk) bool {
	return a.due && b.due && a.asker == b.asker && a.order == b.order && a.highest == b.highest && a.gfp == b.gfp
}

// popHead removes a run's first ask: the ask becomes the run's second,
// which is due.
func (a *daemonAsk) popHead() {
	delta, n := binary.Uvarint(a.run)
	a.at += sim.Time(delta)
	a.run = a.run[n:]
	a.due = true
}

// nextDue returns the time of a's first due ask (Never: none).
func (a *daemonAsk) nextDue() sim.Time {
	switch {
	case a.due:
		return a.at
	case len(a.run) == 0:
		return sim.Never
	}
	delta, _ := binary.Uvarint(a.run)
	return a.at + sim.Time(delta)
}

// single returns a's first ask alone.
func (a daemonAsk) single() daemonAsk {
	a.run, a.end = nil, a.at
	return a
}

// daemonWait is what a daemon's waitqueue and wakeups hold:
// waitqueue_active() and the wakeups not yet read.
type daemonWait struct {
	// waitActive is waitqueue_active(): the thread is parked (napping,
	// asleep, or waiting for work) since waitSince.
	waitActive bool
	waitSince  sim.Time
	// wokenAt is when the wakeup that took the thread off its waitqueue
	// asked for it (valid while woken). woken is true from that wakeup
	// until the thread's next step runs.
	wokenAt sim.Time
	woken   bool
	// asks holds the wakeups whose order and zone index the thread has
	// not read yet (its clock has not reached them), sorted by time.
	// The ones asked before the world's clock are merged into one: the
	// thread's next read, at the world's clock or later, takes them all
	// at once, so no read can separate them. Every other ask is kept
	// until the thread's clock reaches it; due asks equal but for their
	// time and next to each other share one entry (daemonAsk.run).
	asks []daemonAsk
	// askTimerAt is the time of the earliest daemonAskTimer queued for
	// a due ask (Never: none).
	askTimerAt sim.Time
}

// park puts the thread on its waitqueue at now.
func (d *daemonWait) park(now sim.Time) {
	d.waitActive = true
	d.waitSince = now
}

// parkedAt reports whether the thread was on its waitqueue at at: parked
// since at or before at and not woken since (the decisions are taken at
// the world's clock, so a wakeup that woke the thread asked no later than
// at).
func (d *daemonWait) parkedAt(at sim.Time) bool {
	return d.waitActive && d.waitSince <= at
}

// decidesAt reports whether the wake decision for an ask at at can be
// taken now, with the world's clock at now and the thread's at clock:
// at the asked time itself, or when the thread's steps already ran past
// at without parking before it (it was running then, so the wakeup only
// raises what it reads next). Otherwise the thread's later steps may
// park it before at, or a wakeup asked before at may wake it.
func (d *daemonWait) decidesAt(at, now, clock sim.Time) bool {
	switch {
	case at <= now:
		return true
	case d.waitActive:
		return d.waitSince > at
	case d.woken:
		return false
	}
	return clock >= at
}

// addAsk adds a to the asks (sorted by time, after those at its time)
// and merges the asks made before now into one, with merge (the
// daemon's own rule for raising its order and zone index). A due ask
// equal to the one before it joins its run.
func (d *daemonWait) addAsk(a daemonAsk, now sim.Time, merge func(into *daemonAsk, a daemonAsk)) {
	a = a.single()
	i := len(d.asks)
	for i > 0 && d.asks[i-1].at > a.at {
		i--
	}
	if i > 0 && d.asks[i-1].end > a.at {
		d.splitRun(i-1, a.at)
	}
	if i > 0 && d.asks[i-1].same(&a) {
		b := &d.asks[i-1]
		b.run = binary.AppendUvarint(b.run, uint64(a.at-b.end))
		b.end = a.at
	} else if i == len(d.asks) {
		d.asks = append(d.asks, a)
	} else {
		d.asks = slices.Insert(d.asks, i, a)
	}
	d.coalesce(now, merge)
}

// splitRun splits the run of the ask at i after its last ask at or
// before t (its first is at or before t): the later ones become the
// next ask's run. The two share the bytes; the first's capacity ends
// where the second's begin.
func (d *daemonWait) splitRun(i int, t sim.Time) {
	a := &d.asks[i]
	prev, off := a.at, 0
	for off < len(a.run) {
		delta, n := binary.Uvarint(a.run[off:])
		if prev+sim.Time(delta) > t {
			break
		}
		prev += sim.Time(delta)
		off += n
	}
	if off == len(a.run) {
		return
	}
	rest := *a
	rest.run = a.run[off:]
	rest.at = prev
	rest.popHead()
	a.run = a.run[:off:off]
	a.end = prev
	d.asks = slices.Insert(d.asks, i+1, rest)
}

// coalesce merges the decided asks made before now into one: no read
// can separate them (see asks).
func (d *daemonWait) coalesce(now sim.Time, merge func(into *daemonAsk, a daemonAsk)) {
	j := 0
	for j < len(d.asks) && d.asks[j].at < now && !d.asks[j].due && len(d.asks[j].run) == 0 {
		j++
	}
	if j > 1 {
		last := d.asks[j-1]
		for _, b := range d.asks[:j-1] {
			merge(&last, b)
		}
		last.asker = nil
		d.asks[j-1] = last
		clear(d.asks[:j-1])
		d.asks = d.asks[j-1:] // no copy: the list is taken from its front
	}
}

// removeAsk removes the first ask equal to a.
func (d *daemonWait) removeAsk(a daemonAsk) {
	for i, b := range d.asks {
		if b.at == a.at && b.order == a.order && b.highest == a.highest && b.gfp == a.gfp && b.due == a.due && b.asker == a.asker {
			if len(b.run) > 0 {
				d.asks[i].popHead()
			} else {
				d.asks = slices.Delete(d.asks, i, i+1)
			}
			return
		}
	}
}

// armAskTimer queues a daemonAskTimer for the first due ask, unless one
// is queued no later.
func (d *daemonWait) armAskTimer(w *sim.World, tm sim.Timer) {
	for i := range d.asks {
		at := d.asks[i].nextDue()
		if at == sim.Never {
			continue
		}
		if d.askTimerAt != sim.Never && d.askTimerAt <= at && d.askTimerAt >= w.Now() {
			return
		}
		d.askTimerAt = at
		w.AtTimer(at, tm)
		return
	}
}

// takeDue clears the due flag of the asks at or before now and returns
// them, oldest first, for their decisions (in buf's storage).
func (d *daemonWait) takeDue(now sim.Time, buf []daemonAsk) []daemonAsk {
	out := buf[:0]
	for i := range d.asks {
		a := &d.asks[i]
		if a.at > now {
			break
		}
		for {
			if a.due {
				a.due = false
				out = append(out, a.single())
			}
			if at := a.nextDue(); at == sim.Never || at > now {
				break
			}
			a.popHead() // the decided first ask: the next one stands for it
		}
	}
	return out
}

// daemonAskTimer takes, at an ask's time, the wake decisions of a node's
// kswapd (kcompactd false) or kcompactd that waited for that time.
type daemonAskTimer struct {
	m         *Machine
	node      *Node
	kcompactd bool
}

// wait is the daemon's wait state, its task's clock and its rule for
// merging asks.
func (tm daemonAskTimer) wait() (*daemonWait, sim.Time, func(into *daemonAsk, a daemonAsk)) {
	if tm.kcompactd {
		kc := &tm.node.kcompactd
		return &kc.daemonWait, kc.task.Now, kcompactdAskMerge
	}
	k := &tm.node.kswapd
	return &k.daemonWait, k.task.Now, kswapdAskMerge
}

// decide takes wakeup_kswapd()'s or wakeup_kcompactd()'s decision for a.
func (tm daemonAskTimer) decide(a daemonAsk) {
	if tm.kcompactd {
		tm.m.kcompactdDecide(tm.node, a)
	} else {
		tm.m.kswapdDecide(tm.node, a)
	}
}

// ask records a wakeup's ask, where the kernel raises the daemon's order
// and zone index: decided now if the daemon would see it now, else due,
// decided when the timer reaches its time.
func (tm daemonAskTimer) ask(a daemonAsk) {
	d, clock, merge := tm.wait()
	now := tm.m.World.Now()
	if d.decidesAt(a.at, now, clock) {
		d.addAsk(a, now, merge)
		tm.decide(a)
		return
	}
	a.due = true
	d.addAsk(a, now, merge)
	d.armAskTimer(tm.m.World, tm)
}

// Fire decides the asks now due and queues the timer for the next ones.
func (tm daemonAskTimer) Fire(w *sim.World) {
	d, _, merge := tm.wait()
	if d.askTimerAt == w.Now() {
		d.askTimerAt = sim.Never
	}
	d.coalesce(w.Now(), merge)
	var buf [4]daemonAsk
	for _, a := range d.takeDue(w.Now(), buf[:]) {
		tm.decide(a)
	}
	d.armAskTimer(w, tm)
}

// kswapdAskMerge merges a into an ask as wakeup_kswapd() raises
// kswapd_order and sets kswapd_highest_zoneidx if unset (MAX_NR_ZONES)
// or lower.
func kswapdAskMerge(into *daemonAsk, a daemonAsk) {
	into.order = max(into.order, a.order)
	if into.highest == MAX_NR_ZONES || into.highest < a.highest {
		into.highest = a.highest
	}
}

// asked returns the daemon's order and zone index as they stand at now:
// order and highest with the wakeups asked at or before now merged in
// by merge.
func (d *daemonWait) asked(order Order, highest ZoneType, now sim.Time, merge func(into *daemonAsk, a daemonAsk)) (Order, ZoneType) {
	acc := daemonAsk{order: order, highest: highest}
	for _, a := range d.asks {
		if a.at > now {
			break
		}
		merge(&acc, a)
	}
	return acc.order, acc.highest
}

// kswapdAsked returns pgdat->kswapd_order and kswapd_highest_zoneidx as
// they stand at now, as wakeup_kswapd() merges them.
func kswapdAsked(k *kswapdData, now sim.Time) (Order, ZoneType) {
	return k.asked(k.order, k.highestZoneidx, now, kswapdAskMerge)
}

// takeKswapdAsks merges the wakeups asked at or before now into
// pgdat->kswapd_order and kswapd_highest_zoneidx and keeps the later
// ones.
func takeKswapdAsks(k *kswapdData, now sim.Time) {
	i := k.asksUpTo(now)
	if i > 0 {
		k.order, k.highestZoneidx = kswapdAsked(k, now)
		k.dropAsks(i, now)
	}
}

// asksUpTo returns how many asks begin at or before now (the last of
// them may be a run going on past now).
func (d *daemonWait) asksUpTo(now sim.Time) int {
	i := 0
	for i < len(d.asks) && d.asks[i].at <= now {
		i++
	}
	return i
}

// dropAsks removes the asks at or before now, read by the thread: the
// first i, but for the part of the i-th's run after now.
func (d *daemonWait) dropAsks(i int, now sim.Time) {
	if last := &d.asks[i-1]; last.end > now {
		for last.at <= now {
			last.popHead()
		}
		i--
	}
	clear(d.asks[:i])
	d.asks = d.asks[i:] // no copy: the list is taken from its front
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

// kswapdIsRunning is kswapd_is_running() read at at (the reader's clock,
// at or after the world's): task_is_running(pgdat->kswapd), true from
// the wakeup that takes the thread off its waitqueue (try_to_wake_up()
// sets TASK_RUNNING; it need not have run yet) until it next waits in
// kswapd_try_to_sleep(). kswapd's steps may have run past at, so it ran
// at at unless it was on its waitqueue then (parkedAt). Until December
// 2026 it read kswapd's state machine as it stood (balancing), which
// missed a woken kswapd whose first step was still to come.
func (m *Machine) kswapdIsRunning(n *Node, at sim.Time) bool {
	return !n.kswapd.parkedAt(at)
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
	now := m.World.Now()
	if t != nil && t.Now > now {
		now = t.Now
	}
	// The kernel raises pgdat->kswapd_highest_zoneidx and kswapd_order
	// here; pagesim raises them when kswapd's clock reaches now.
	daemonAskTimer{m: m, node: n}.ask(daemonAsk{at: now, order: order, highest: highest, gfp: gfp, asker: t})
}

// kswapdDecide is the rest of wakeup_kswapd() for an ask, taken for the
// ask's time: wake the thread if it was on its waitqueue then and the
// node needs it, else wake kcompactd for a caller that cannot reclaim.
func (m *Machine) kswapdDecide(n *Node, a daemonAsk) {
	k := &n.kswapd
	if !k.parkedAt(a.at) {
		return // waitqueue_active() is false: kswapd runs
	}
	if k.hopeless() || (m.pgdatBalanced(n, a.order, a.highest) && !pgdatWatermarkBoosted(n, a.highest)) {
		if a.gfp&__GFP_DIRECT_RECLAIM == 0 {
			m.wakeupKcompactdAt(a.asker, a.at, n, a.order, a.highest)
		}
		return
	}
	m.Trace.emitAt(a.asker, a.at, TraceMmVmscanWakeupKswapd, int64(n.ID), int64(a.order), int64(a.gfp))
	k.Wakeups++
	k.waitActive = false
	k.woken = true
	k.wokenAt = a.at
	m.World.Wake(k.task, a.at)
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
	woken := k.woken
	k.woken = false
	for {
		takeKswapdAsks(k, t.Now)
		switch k.state {
		case ksSleep:
			// schedule() returned: someone woke us.
			k.state = ksBalanceStart
		case ksTrySleep:
			if m.prepareKswapdSleep(n, k.reclaimOrder, k.highest) {
				// On the waitqueue from prepare_to_wait(), before the
				// reset: a wakeup during it ends the nap at once.
				k.park(t.Now)
				k.reset = resetWalk{stops: true}
				k.state = ksTrySleepReset
				continue
			}
			m.countVMEvent(KSWAPD_HIGH_WMARK_HIT_QUICKLY)
			k.state = ksBalanceStart
		case ksTrySleepReset:
			if !m.resetIsolationSuitablePgdatFrom(t, n, &k.reset) {
				// At the walk's cond_resched(): preempted, not
				// asleep (TASK_INTERRUPTIBLE, but __schedule() with
				// SM_PREEMPT keeps it queued).
				return sim.Resched
			}
			m.wakeupKcompactd(t, n, k.allocOrder, k.highest)
			k.state = ksNap
			k.napEnd = t.Now + 100*sim.Millisecond // HZ/10
			k.napExpire = m.World.JiffiesExpire(t.Now, k.napEnd)
			if !k.waitActive {
				// A wakeup took it off the waitqueue while the walk
				// was stopped: schedule_timeout() returns at once,
				// with time remaining.
				woken = true
				continue
			}
			return k.napEnd
		case ksNap:
			if woken && t.Now < k.napExpire {
				// Woken before jiffies reached the nap's expire:
				// schedule_timeout() returns remaining != 0. A wake
				// after that, before the timer fires on the next
				// jiffy, returns 0: not premature, and kswapd goes to
				// sleep below with the order the wakeup raised.
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
				if woken {
					// The wake took it off the waitqueue;
					// prepare_to_wait() puts it back now.
					k.park(t.Now)
				} else {
					k.park(k.waitSince) // still on the waitqueue, since the nap began
				}
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
			done, stopped, reclaimOrder := m.balancePgdatStep(t, n)
			if stopped {
				return sim.Resched // at a cond_resched() in shrink_node()
			}
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
	b.shrink.stops = true
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

// balancePgdatStep runs one iteration of balance_pgdat's priority loop,
// or resumes the one that stopped at a cond_resched() in its
// shrink_node(). It returns done when the run is over, with the order
// kswapd finished at, and stopped when the iteration stopped at a
// cond_resched() (the task's next step resumes it).
func (m *Machine) balancePgdatStep(t *sim.Task, n *Node) (done, stopped bool, order Order) {
	b := &n.kswapd.bal
	sc := &b.sc
	if b.shrink.at == shrinkRunning {
		highest := n.kswapd.highest
		b.stepBefore = sc.nrReclaimed
		b.raisePriority = true
		sc.reclaimIdx = highest
		balanced := m.pgdatBalanced(n, sc.order, highest)
		if !balanced && b.nrBoostReclaim != 0 {
			// Ignore boosting and restart.
			b.nrBoostReclaim = 0
			sc.priority = defPriority
			return false, false, 0
		}
		if b.nrBoostReclaim == 0 && balanced {
			return true, false, m.balancePgdatEnd(t, n)
		}
		if b.nrBoostReclaim != 0 && sc.priority == defPriority-2 {
			b.raisePriority = false
		}
		sc.mayWritepage = b.nrBoostReclaim == 0
		sc.maySwap = b.nrBoostReclaim == 0
		m.kswapdAgeNode(t, n, sc)
		sc.nrScanned = 0
		b.shrinkBefore = m.kswapdShrinkNodeBegin(n, sc)
	}
	if !m.shrinkNodeFrom(t, n, sc, &b.shrink) {
		return false, true, 0
	}
	if m.kswapdShrinkNodeEnd(sc, b.shrinkBefore) {
		b.raisePriority = false
	}
	nrReclaimed := sc.nrReclaimed - b.stepBefore
	b.nrBoostReclaim -= min(b.nrBoostReclaim, nrReclaimed)
	if b.nrBoostReclaim != 0 && nrReclaimed == 0 {
		return true, false, m.balancePgdatFinish(t, n)
	}
	if b.raisePriority || nrReclaimed == 0 {
		sc.priority--
	}
	if sc.priority >= 1 {
		return false, false, 0
	}
	return true, false, m.balancePgdatFinish(t, n)
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

// kswapdShrinkNodeBegin is kswapd_shrink_node() up to its
// shrink_node(): it sets nr_to_reclaim and returns nr_reclaimed before.
// kswapd's shrink_node() may stop at its cond_resched() calls, so
// balancePgdatStep runs it between this and kswapdShrinkNodeEnd.
func (m *Machine) kswapdShrinkNodeBegin(n *Node, sc *scanControl) uint64 {
	sc.nrToReclaim = 0
	for i := ZoneType(0); i <= sc.reclaimIdx; i++ {
		if z := n.Zones[i]; z.Managed() {
			sc.nrToReclaim += max(z.WmarkPages(WMARK_HIGH), SWAP_CLUSTER_MAX)
		}
	}
	return sc.nrReclaimed
}

// kswapdShrinkNodeEnd is the rest of kswapd_shrink_node() after its
// shrink_node(), which began with before reclaimed: it reports whether
// the scan met nr_to_reclaim.
func (m *Machine) kswapdShrinkNodeEnd(sc *scanControl, before uint64) bool {
	if sc.order > 0 && sc.nrReclaimed >= compactGap(sc.order) {
		sc.order = 0
	}
	return max(sc.nrScanned, sc.nrReclaimed-before) >= sc.nrToReclaim
}
