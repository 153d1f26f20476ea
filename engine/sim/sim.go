// Package sim is pagesim's discrete-event core: simulated time, CPUs, tasks,
// lock timelines and the one seeded random number generator.
//
// # The model
//
// Time is an int64 count of simulated nanoseconds. The World holds a queue
// of events ordered by (time, sequence number); the sequence number breaks
// ties in insertion order, so two runs with the same inputs process events
// in the same order.
//
// A Task is a simulated thread: a workload thread, a kswapd or a kcompactd.
// It runs its Program one step at a time. A step runs to completion when its
// event fires: kernel code executed inside the step does not sleep in wall
// time, it charges the simulated cost of what it did to the task's local
// clock (Task.Now). When the step returns, the CPU the task ran on stays
// busy until Task.Now, and the task's next step is scheduled when the program
// asks. This is "costs are charged, not slept".
//
// Contention comes from two kinds of timeline. A CPU runs one task at a time:
// a task whose event fires while its CPU is busy waits for it in the CPU's
// run queue. A Lock
// (zone->lock, the LRU lock, pcpu_drain_mutex) records its holds and when
// each was asked for: a task asking for it waits for the hold time asked
// for before it and not over yet, and its hold time is the cost it charges
// while holding it. Many tasks piling into the same slow path therefore
// queue behind each other, which is the effect seed 000 measures.
//
// The approximation: a step sees the machine as it is when the step starts
// and applies all its changes at once, so two steps that overlap in simulated
// time are serialised in the order they started. Locks are first come, first
// served by the time each task asked, as far as the steps already run allow
// (see Lock).
//
// # Preemption points
//
// Long kernel work that loops (an allocation retrying in the slow path)
// ends its step at the kernel's cond_resched() calls and returns Resched:
// the task stays runnable at its clock, the events that fell due meanwhile
// (other CPUs' steps, wakeups, timers) run first, and the task carries on
// where it stopped. Whether it also gives its CPU away follows the
// scheduler: cond_resched() schedules only when TIF_NEED_RESCHED is set,
// which the tick sets once the running task has used its slice while
// another task is runnable on the CPU (EEVDF's update_curr/update_deadline
// in kernel/sched/fair.c). So a task that returns Resched after running
// SchedSlice or more since it got its CPU, while tasks wait in that CPU's
// queue, joins the queue and the pick decides who runs (see Run queues);
// otherwise it runs on. A step that returns t.Now (the task runs on at
// once) is a preemption point too: the tick's need_resched is seen at
// the next cond_resched() or return to user space. The rule is
// deterministic: it depends only on event times and order. (With
// PREEMPT_FULL or PREEMPT_LAZY the kernel would also preempt between
// cond_resched() calls; the model preempts only at step ends.)
//
// # Run queues
//
// Each CPU keeps the tasks waiting for it in EEVDF's order
// (kernel/sched/fair.c, torvalds/linux v6.12: place_entity, pick_eevdf,
// update_curr/update_deadline, entity_lag): when its step ends, one
// dispatch event runs the pick, so a CPU with many waiters costs one
// event per step, not one per waiter. Every task is SCHED_NORMAL at nice
// 0, so all weights are equal and virtual time is CPU time:
//
//   - A task on a CPU (running its steps there, or queued) has a vruntime
//     in that CPU's frame; the CPU's V is their average (avg_vruntime(),
//     kept as a sum and a count), and the frame starts again at 0
//     whenever the CPU has no task left. A step of d adds d to its task's
//     vruntime; once the vruntime passes the task's deadline, the
//     deadline moves to vruntime + SchedSlice (update_deadline).
//   - A task that leaves its CPU (it sleeps, exits, or moves to another
//     CPU) keeps its lag, V - vruntime, clamped to max(2 x slice, a tick)
//     as entity_lag() clamps it; when it joins a CPU it is placed at
//     V - lag, the lag scaled by (n + 1) / n for the n tasks already
//     there so that placing it keeps its lag (place_entity()'s PLACE_LAG),
//     with the deadline vruntime + SchedSlice.
//   - The pick is the eligible waiter (vruntime <= V: lag >= 0) with the
//     earliest deadline (pick_eevdf()); if rounding leaves none eligible,
//     the earliest deadline.
//
// So a woken sleeper, which left with a lag near 0 or above, goes ahead
// of the waiters that have run more than their share (a preempted task
// whose vruntime is past V is not eligible), but not of those whose
// deadline is earlier, and V moves on as the CPU serves its queue: a
// task waits about one slice for each task queued ahead of it, however
// many wakeups arrive (until December 2026 a woken task went ahead of
// every task that had been preempted or had found the CPU busy, without
// bound: kswapd waited 0.2 s behind woken postgres backends, review
// finding F11, docs/FIDELITY.md). The running task keeps its CPU for
// its slice (RUN_TO_PARITY: pick_eevdf() keeps curr until its deadline
// moves, so check_preempt_wakeup_fair() does not preempt it for a
// wakeup before then) and yields at its next preemption point once the
// slice is used and tasks wait (until December 2026 a step that returned
// t.Now was no preemption point: a looping task held its CPU for as long
// as it looped).
//
// Steps run whole when they start, and the order follows: while a step
// runs on a CPU, a task joining or leaving that CPU sees V without the
// part of the step still to come; a task whose step ends in a sleep or
// an exit leaves the CPU's order when the CPU is done with the step; and
// a CPU whose task's step ended now and runs on at once is not free to
// another task whose event falls at the same instant (it joins the
// queue).
//
// A task that goes to sleep with a negative lag (it ran more than its
// share) is, in the kernel, not dequeued but left in the order, delayed
// (DELAY_DEQUEUE), until it is eligible and picked, or woken: its
// vruntime stays while V moves on, so it burns its negative lag off, and
// DELAY_ZERO clips what it comes back with to 0 (dequeue_entity(),
// update_entity_lag(), requeue_delayed_entity(); features.h, v6.12 and
// linux-mm today). pagesim takes the task out of the order as before and
// gives it, when it comes back, its lag raised by V's advance on the CPU
// it left meanwhile, capped at 0: each step of d there moves that V by
// d / (nr + 1), the delayed task counted (CPU.vclock), and a CPU that ran
// out of other tasks in between picked it, so it comes back at 0. So a
// task that ran long and slept long comes back at V, and one woken soon
// after keeps most of its negative lag (until December 2026 it kept it
// however long it slept: a kswapd that left a long balance run behind V
// was placed behind every busy backend at its next wake, seconds later,
// review finding F17). Simplified: V's advance counts the one delayed
// task, not the others that may sit delayed on the CPU with it (their
// weight slows V a little), and a delayed task's wakeup goes where
// pickCPU puts it, where the kernel's finds it still queued on its old
// CPU (ttwu_runnable()).
//
// Simplified too: a new task starts with lag 0 and a whole slice
// (PLACE_DEADLINE_INITIAL gives half); a task's lag is kept in
// nanoseconds of CPU time whatever CPU it moves to (the kernel's is in
// each cfs_rq's virtual time, the same with equal weights).
//
// A task that finds its CPU busy goes to an allowed CPU that is free,
// else to the one with the shortest queue. A CPU whose step ends with
// nothing queued and nothing to run on pulls a waiter from another
// CPU's queue (sched_balance_newidle(), kernel/sched/fair.c, linux-mm;
// newidleBalance says how it picks): from its own node's CPUs first,
// then the other nodes' (the kernel's sched domains, walked from the
// lowest level up, stop at the first that pulls), the longest queue,
// the least recently run waiter that may run there, unless it ran less
// than sysctl_sched_migration_cost (0.5 ms) ago (cache hot,
// task_hot()). A count of the waiters of all CPUs keeps it cheap: a CPU
// going idle looks only when somebody waits (until December 2026 an
// idle CPU never pulled: a waiter queued behind a 50 ms step waited for
// it while another CPU idled, review finding F21).
//
// A CPU that stays idle is balanced by the nohz idle balance: a busy
// CPU's tick with a task waiting behind the running one (nr_running >=
// 2) kicks an idle CPU (nohz_balancer_kick(), kick_ilb()), which runs
// sched_balance_domains() with CPU_IDLE for the idle CPUs whose
// rq->next_balance is due, through the same can_migrate_task() and
// task_hot() (_nohz_idle_balance(), sched_balance_rq(); linux-mm at
// 0327372bcd3d). pagesim models it as: a CPU that went idle and found
// only cache-hot waiters looks again at the first tick at or after the
// first of them cools; and when
// a task joins a queue behind a running task (preempted at a
// preemption point) or stays queued when its CPU serves its queue, the
// lowest-numbered idle CPU it may run on, with nothing queued, that
// does not look by then already, looks at the first tick at or after it
// cools (kickIdleBalance: one idle CPU per waiter, as the kernel's pass
// balances every idle CPU). The look is newidleBalance's walk. So no
// event is queued per tick, nor per idle CPU: one per kick, and none
// when nobody waits. Without a SchedModel there is no tick and the look
// is when the waiter cools. Until December 2026 a CPU serving its queue
// moved its next pick to an idle CPU at once, hot or not (review
// finding F25): the kernel has no push at pick time.
//
// Simplified: the newidle balance is always tried (since v5.16 the
// kernel skips it when the CPU's avg_idle is below the domain's
// max_newidle_lb_cost, the measured cost of a balance, microseconds;
// pagesim gives a balance no cost and keeps no avg_idle; and since
// v7.0, NI_RANDOM, it runs each level's balance only with the
// probability of its recent success rate, sd->newidle_ratio out of
// 1024, which pagesim's, always tried, does not follow); within a level
// the source is the longest queue, not the busiest group's busiest
// queue by load (find_busiest_group(): with equal weights and one task
// per pull they agree but for the NUMA level's allowed imbalance,
// adjust_numa_imbalance(), which pagesim does not apply). In the idle
// balance, the balance interval is not kept: the kernel balances a
// domain of an idle CPU every sd->balance_interval, sd_weight ms (its
// CPU count: 48 ms on a 48-CPU node, 96 ms at the NUMA level of two;
// sd_init(), kernel/sched/topology.c) converted to jiffies, doubled,
// up to 2 x sd_weight, after a balance that found it balanced, and
// counts from the domain's last balance, which a busy CPU does every
// busy_factor (16) intervals, so when a CPU goes idle its first idle
// balance is most often due at once; pagesim takes it as due whenever
// a waiter cools. A kernel idle balance that finds the waiter still hot
// fails, counts sd->nr_balance_failed and tries again an interval
// later, and after cache_nice_tries failures (1 within a node, 2 at the
// NUMA level) takes it hot; pagesim never takes a hot waiter and looks
// again when it cools. The kick goes to the lowest-numbered idle CPU
// the waiter may use that does not look by then (the kernel's idle load
// balancer is the first idle CPU, which balances every due idle CPU in
// turn from the next one, itself last, and each walks its domains, node
// first); the busy CPU's
// own periodic balance (sched_balance_domains() with a busy CPU, every
// busy_factor x sd_weight ms), which may pull a waiter to a CPU that
// runs a task, is not modelled.
//
// # Randomness and timing
//
// Randomness comes from the seed alone, one stream per cause (rand.go,
// "Streams"). With a SchedModel (sched.go) the world also times wakeups as
// a machine does: a woken task waits for its idle CPU to leave its idle
// state, timed sleeps end when their timer fires, and tasks made with Fork
// start where fork balancing puts them. Without one, time is exact.
package sim

import (
	"fmt"
	"math/bits"
)

// Time is simulated time in nanoseconds.
type Time int64

// Durations.
const (
	Nanosecond  Time = 1
	Microsecond Time = 1000
	Millisecond Time = 1000 * Microsecond
	Second      Time = 1000 * Millisecond
)

// Seconds returns t in seconds as a float.
func (t Time) Seconds() float64 { return float64(t) / float64(Second) }

// String prints t as seconds with microsecond precision, the way ftrace
// prints timestamps ("12.345678").
func (t Time) String() string {
	return fmt.Sprintf("%d.%06d", int64(t)/int64(Second), (int64(t)%int64(Second))/int64(Microsecond))
}

// Program is what a task runs. Step executes one step of the program on the
// task's CPU starting at t.Now, charging costs to t.Now, and returns when the
// task wants to run next: an absolute time >= t.Now, or Never to sleep until
// woken, or Exit to end the task.
type Program interface {
	Step(w *World, t *Task) Time
}

// ProgramFunc adapts a function to Program.
type ProgramFunc func(w *World, t *Task) Time

// Step calls f.
func (f ProgramFunc) Step(w *World, t *Task) Time { return f(w, t) }

const (
	// Never, returned by Step, parks the task until Wake.
	Never Time = -1
	// Exit, returned by Step, ends the task.
	Exit Time = -2
	// Resched, returned by Step, ends the step at a preemption point
	// (cond_resched()): the task is runnable at t.Now and gives its CPU
	// to the tasks waiting for it if its slice is used up.
	Resched Time = -3
)

// Task is a simulated thread: what the scheduler knows of a task_struct.
// What the kernel code running on it keeps per task (flags, stall state)
// belongs to that code (engine/mm keeps it by task ID).
type Task struct {
	ID   int
	Name string
	// CPU is the CPU the task runs on now (task_cpu()); AllowedCPUs lists
	// where it may run (nil = any).
	CPU         int
	AllowedCPUs []int
	// Now is the task's local clock while a step runs.
	Now Time
	// Program is what the task runs; Data is free for the program.
	Program Program
	Data    any
	// JiffiesTimeouts says the task's timed sleeps are schedule_timeout()
	// in jiffies, as a kernel thread's are; with a SchedModel they end on
	// the timer wheel's boundaries. Otherwise a timed sleep is an hrtimer
	// with timer slack, as a user task's nanosleep or poll is.
	JiffiesTimeouts bool

	w       *World
	state   taskState
	pending bool // an event for this task is queued
	wakeAt  Time
	slept   Time
	// onCPU is set while the task's Step runs.
	onCPU bool
	// resched is set while the task's next event is the one a Resched
	// return queued; sliceStart is when the task last got its CPU (the
	// start of its slice).
	resched    bool
	sliceStart Time
	// fork is set by World.Fork until the first run places the task;
	// rand is the task's stream (sched/task/NAME#N), made on first use.
	fork bool
	rand *Rand
	// deferred is set while the task waits in deferredOn's run queue.
	deferred   bool
	deferredOn *CPU
	// rq is the CPU whose EEVDF order the task is in (running its steps
	// there or queued), nil while it sleeps or before it first runs.
	// While rq is set, vruntime and deadline are in rq's virtual time
	// and vruntime is counted in rq.vsum; otherwise vlag is the lag it
	// left with (V - vruntime, clamped: see "Run queues"). leaving is
	// set while the task is still in rq's order but its last step ends
	// in a sleep or an exit: a step is run whole when it starts, and
	// the task leaves when the CPU is done with it (settle).
	rq                 *CPU
	vruntime, deadline Time
	vlag               Time
	leaving            bool
	// sleptOn is the CPU whose order the task left to sleep with a
	// negative lag (nil otherwise): in the kernel it stays there,
	// delayed (DELAY_DEQUEUE), and burns its lag off as V moves on
	// (see "Run queues"). sleptV and sleptIdles are that CPU's
	// vclockAt() and idles when it left.
	sleptOn    *CPU
	sleptV     Time
	sleptIdles uint64
	// lastRan is when the task's latest step ended (the kernel's
	// se.exec_start while it is off its CPU), 0 before its first:
	// newidle balancing leaves a waiter that ran less than
	// sysctl_sched_migration_cost ago (task_hot()).
	lastRan Time
}

type taskState uint8

const (
	taskRunnable taskState = iota
	taskSleeping
	taskExited
)

// Sleeping reports whether the task is parked waiting for Wake.
func (t *Task) Sleeping() bool { return t.state == taskSleeping }

// Exited reports whether the task's program has finished.
func (t *Task) Exited() bool { return t.state == taskExited }

// OnCPU reports whether the task is running a step now, so that it can end
// the step at a preemption point (return Resched) and be called again.
// Work done for a task outside its steps (setup code, tests) cannot.
func (t *Task) OnCPU() bool { return t.onCPU }

// NeedResched reports whether a step running now should end at the
// cond_resched() its code is at (return Resched) for anything else to
// happen before it goes on: an event is due at or before the task's
// clock (a wakeup, a timer, another CPU's step, which the step's end
// lets run first), or a task waits for this CPU and the task has used
// its slice (TIF_NEED_RESCHED, see "Preemption points"). When it reports
// false, ending the step there would let nothing else run before the
// task's next step, at once; so a long kernel loop may ask it at each of
// its cond_resched() calls and stop only where stopping lets something
// happen. False outside a step.
func (t *Task) NeedResched() bool {
	if !t.onCPU {
		return false
	}
	w := t.w
	if at := w.NextEventTime(); at != Never && at <= t.Now {
		return true
	}
	cpu := w.CPUs[t.CPU]
	return cpu.Waiters > 0 && cpu.curr == t && t.Now-t.sliceStart >= w.SchedSlice
}

// Sleep advances the task's clock by d without using the CPU (waiting for
// I/O): the CPU is free for others after the step's CPU work.
func (t *Task) Sleep(d Time) {
	if d > 0 {
		t.Now += d
		t.slept += d
	}
}

// Charge adds d nanoseconds of work to the task's clock.
func (t *Task) Charge(d Time) {
	if d > 0 {
		t.Now += d
	}
}

// CPU is a simulated processor.
type CPU struct {
	ID   int
	Node int
	// BusyUntil is when the task running on it finishes its step.
	BusyUntil Time
	// Busy is the total time the CPU ran steps (for utilisation).
	Busy Time
	// Waiters counts tasks currently waiting in the CPU's run queue:
	// len(runq).
	Waiters int
	// curr is the task that ran the CPU's latest step.
	curr *Task
	// runq holds the tasks waiting for the CPU, sorted by deadline
	// (equal deadlines in the order they came). When the CPU's step
	// ends, one dispatch event (at dispatchAt, queued while
	// dispatchArmed) runs the pick (pickEEVDF); the others stay queued,
	// so a busy CPU costs one event per step however many tasks wait
	// for it.
	runq          []*Task
	dispatchAt    Time
	dispatchArmed bool
	// vsum is the sum of the vruntimes of the nr tasks whose rq is this
	// CPU, so V, avg_vruntime(), is vsum / nr. When nr falls to 0 the
	// frame starts again at 0, where the next task to come is placed:
	// only differences of vruntimes matter, and this keeps vruntime x nr
	// (pickEEVDF) far from overflowing on a CPU that ever idles (the
	// kernel keys its vruntimes to zero_vruntime for the same reason;
	// until December 2026 V ran on from where it stood, review finding
	// F20).
	vsum Time
	nr   int
	// vclock is how far V has moved for a task that left this CPU's
	// order to sleep and stays in it delayed (DELAY_DEQUEUE): a step
	// of d adds d / (nr + 1), the delayed task counted. stepDV is the
	// latest step's part of it, run from stepStart to stepEnd (a step
	// is charged whole when it starts: vclockAt() takes out the part
	// still to come). idles counts the times nr fell to 0: a CPU with
	// nothing else to run picks its delayed tasks, and they leave
	// with lag 0.
	vclock, stepDV     Time
	stepStart, stepEnd Time
	idles              uint64
}

// Lock is a lock timeline: the intervals of simulated time during which
// some task held it. A step runs to completion, so a task's step may hold
// a lock at many moments spread over a long stretch of simulated time (a
// compaction scan takes zone->lock for each free chunk it isolates, tens
// of milliseconds apart) before another task's step, which starts earlier
// in simulated time, asks for the same lock. The steps therefore record
// their holds out of clock order, and the timeline has to answer a task
// asking at time x with what a machine would have made it wait.
//
// On a machine a waiter waits for the holder and for the waiters queued
// before it (a queued spinlock and a mutex's wait list are first come,
// first served), not for the tasks that ask after it: they queue behind
// it. So every hold is recorded with the time its task asked for the
// lock, and a task asking at x waits for the hold time that was asked
// for at or before x and is not over by x: the rest of the hold that
// covers x, and the holds recorded after x by tasks that asked at or
// before x (they were queued ahead of it). Holds that steps run earlier
// took after x, asked after x, are not in its way: on a machine those
// tasks would have waited for it.
//
// A hold is recorded when its task unlocks, and it goes in the free time
// of the timeline from the moment its task got the lock: where it runs
// into a hold already recorded by a step that ran earlier (a task that
// asked later, whose step could not wait for it), the rest of it goes in
// the next free time after that hold, and so on. So the recorded holds
// never overlap and their lengths add up to the time the tasks held the
// lock, the lock's busy time is what a machine's would be, and the holds
// a later waiter finds queued ahead of it are its real queue (a task's
// wait is the unfinished hold time asked for before it: a FIFO queue's
// waiting time). The wait the step run earlier could not take is not
// lost: the hold it displaced sits later in the timeline, and the tasks
// that ask after that hold's task wait for it there. What is not
// modelled: the task that asked later and ran earlier does not wait
// for the task that asked before it (its step is over), and the task
// that asked first runs on its own clock from the moment it got the
// lock, so around such a collision the two hold the lock at once on
// their clocks; the timeline books the second of the two after the first.
//
// (Until December 2026 a task waited until the end of the merged busy
// stretch around x: steps run out of clock order filled each other's
// gaps with holds taken at their own clocks, and a task that ran later
// waited for all of them, milliseconds for microsecond holds. And a Lock
// whose recorded holds had all been dropped was held until the latest
// end ever recorded, which a zero-length hold far ahead had raised.)
//
// The holds are kept sorted and disjoint, in chunks (holdList); those
// that end before the world's clock can no longer be run into (every
// later step starts at or after it) and are dropped as locks are taken.
type Lock struct {
	Name string
	// FreeAt is when the latest recorded hold ends (0 if none).
	FreeAt Time
	// Contended counts acquisitions that had to wait; WaitTime sums the
	// waits; Held sums the hold times recorded (the lengths of every
	// hold in holds, and of those dropped from it).
	Contended uint64
	WaitTime  Time
	Held      Time
	Acquired  uint64
	heldBy    *Task
	// askedAt is when the current holder asked for the lock, lockedAt
	// when it got it.
	askedAt, lockedAt Time
	// holds are the recorded hold intervals [start, end), sorted by start
	// and disjoint (so sorted by end too), none empty, none ending at or
	// before the world's clock when they were last pruned (in chunks:
	// holdList). A hold's ask
	// is when its task asked for the lock: ask <= start.
	holds holdList
	// queued are the holds that start after their ask (a wait, or a
	// hold booked after one it ran into), a subset of holds in the same
	// order: the ones a later asker may find queued ahead of it.
	queued []lockHold
}

type lockHold struct{ ask, start, end Time }

// holdList is a sorted list of disjoint holds kept in chunks of at most
// holdChunk, so that a hold inserted before thousands of others (a step
// that ran far ahead of the world's clock recorded them: a boot reading
// its files before the clock moves, kcompactd's long scans) moves one
// chunk's holds, not all of them. Every chunk is non-empty; the chunks
// are in order, so their last holds' ends are sorted. A chunk's array
// has room for 2*holdChunk+1 holds, the most it holds before insert
// splits it, so an insert never reallocates (the promoted-order storm
// recorded a hold per zone->lock taken and reallocated a chunk every
// few hundred).
type holdList struct {
	chunks [][]lockHold
	// spare is the last chunk dropped whole with its array's full room,
	// empty, kept for the next hold (a lock's holds often all end
	// between two acquisitions).
	spare []lockHold
}

const holdChunk = 128

func (hl *holdList) empty() bool { return len(hl.chunks) == 0 }

// search returns the position (chunk, index) of the first hold that
// ends after at, or (len(chunks), 0).
func (hl *holdList) search(at Time) (int, int) {
	lo, hi := 0, len(hl.chunks)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if c := hl.chunks[mid]; c[len(c)-1].end <= at {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo == len(hl.chunks) {
		return lo, 0
	}
	return lo, firstEndingAfter(hl.chunks[lo], at)
}

// get returns the hold at (c, k), if there is one.
func (hl *holdList) get(c, k int) (lockHold, bool) {
	if c >= len(hl.chunks) {
		return lockHold{}, false
	}
	return hl.chunks[c][k], true
}

// insert puts h at position (c, k), before the hold there (after the
// last one if c is len(chunks)), splitting a chunk that grows past
// twice holdChunk.
func (hl *holdList) insert(c, k int, h lockHold) {
	if c == len(hl.chunks) {
		if c == 0 || len(hl.chunks[c-1]) >= holdChunk {
			chunk := hl.spare
			if chunk == nil {
				chunk = make([]lockHold, 0, 2*holdChunk+1)
			}
			hl.spare = nil
			hl.chunks = append(hl.chunks, append(chunk, h))
			return
		}
		c--
		k = len(hl.chunks[c])
	}
	chunk := insertHold(hl.chunks[c], k, h)
	if len(chunk) <= 2*holdChunk {
		hl.chunks[c] = chunk
		return
	}
	tail := append(make([]lockHold, 0, 2*holdChunk+1), chunk[holdChunk:]...)
	hl.chunks[c] = chunk[:holdChunk]
	hl.chunks = append(hl.chunks, nil)
	copy(hl.chunks[c+2:], hl.chunks[c+1:])
	hl.chunks[c+1] = tail
}

// dropEnded drops the holds that end at or before now.
func (hl *holdList) dropEnded(now Time) {
	c, k := hl.search(now)
	if c > 0 {
		if last := hl.chunks[c-1]; cap(last) > 2*holdChunk {
			hl.spare = last[:0]
		}
		n := copy(hl.chunks, hl.chunks[c:])
		clear(hl.chunks[n:])
		hl.chunks = hl.chunks[:n]
	}
	if k > 0 {
		// Move the rest to the array's start rather than slicing it
		// off: a chunk sliced from the front loses room at its end
		// and reallocates as holds are appended.
		first := hl.chunks[0]
		hl.chunks[0] = first[:copy(first, first[k:])]
	}
}

// prune drops the holds no step can run into any more: those that end at
// or before the world's clock.
func (l *Lock) prune(t *Task) {
	if t.w == nil || l.holds.empty() {
		return
	}
	now := t.w.now
	l.holds.dropEnded(now)
	l.queued = dropEnded(l.queued, now)
}

// dropEnded drops the holds of h that end at or before now.
func dropEnded(h []lockHold, now Time) []lockHold {
	i := 0
	for i < len(h) && h[i].end <= now {
		i++
	}
	if i > 0 {
		h = append(h[:0], h[i:]...)
	}
	return h
}

// firstEndingAfter returns the index of the first hold of h that ends
// after at (h is sorted by end), or len(h).
func firstEndingAfter(h []lockHold, at Time) int {
	lo, hi := 0, len(h)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if h[mid].end <= at {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// queuedAt returns the hold time a task asking at x finds ahead of it:
// the rest of the hold that covers x, and the holds that start after x
// and were asked for at or before x.
func (l *Lock) queuedAt(x Time) Time {
	var ahead Time
	if h, ok := l.holds.get(l.holds.search(x)); ok && h.start <= x {
		ahead = h.end - x
	}
	for _, h := range l.queued[firstEndingAfter(l.queued, x):] {
		if h.start > x && h.ask <= x {
			ahead += h.end - h.start
		}
	}
	return ahead
}

// HeldAt reports whether some task holds l at time at, or waits for it
// (mutex_trylock's answer for a task asking then).
func (l *Lock) HeldAt(t *Task, at Time) bool {
	l.prune(t)
	return l.queuedAt(at) > 0
}

// record books a hold of d asked for at ask, in the free time of the
// timeline from start on: a part of it that runs into a recorded hold
// goes on after that hold.
func (l *Lock) record(ask, start, d Time) {
	if d <= 0 {
		return
	}
	l.Held += d
	// (c, k) is the first hold that ends after start.
	c, k := l.holds.search(start)
	for d > 0 {
		n := d
		if c < len(l.holds.chunks) {
			// Go on after the holds that start by start (they are
			// back to back, or start is inside the first).
			chunk := l.holds.chunks[c]
			for k < len(chunk) && chunk[k].start <= start {
				start = chunk[k].end
				k++
			}
			if k == len(chunk) {
				c, k = c+1, 0
				continue
			}
			n = min(d, chunk[k].start-start)
		}
		h := lockHold{ask, start, start + n}
		l.holds.insert(c, k, h)
		if n < d {
			c, k = l.holds.search(h.end)
		}
		if h.start > h.ask {
			l.queued = insertHold(l.queued, firstEndingAfter(l.queued, h.start), h)
		}
		l.FreeAt = max(l.FreeAt, h.end)
		start += n
		d -= n
	}
}

// insertHold inserts h into s at index i.
func insertHold(s []lockHold, i int, h lockHold) []lockHold {
	if i == len(s) {
		return append(s, h)
	}
	s = append(s, lockHold{})
	copy(s[i+1:], s[i:])
	s[i] = h
	return s
}

// acquire finds how long t, asking now, waits for l, and makes it the
// holder.
func (l *Lock) acquire(t *Task) Time {
	l.Acquired++
	l.prune(t)
	wait := l.queuedAt(t.Now)
	if wait > 0 {
		l.Contended++
		l.WaitTime += wait
	}
	l.heldBy = t
	l.askedAt = t.Now
	return wait
}

// Lock takes l for t: t waits (spinning on its CPU) for the hold time
// queued ahead of it at t's time. The hold lasts until Unlock, and the
// task's charged costs in between are the hold time.
func (l *Lock) Lock(t *Task) {
	t.Charge(l.acquire(t))
	l.lockedAt = t.Now
}

// LockSleep takes l like a mutex: a task that finds it held sleeps until it
// is free (the CPU is free for others meanwhile).
func (l *Lock) LockSleep(t *Task) {
	t.Sleep(l.acquire(t))
	l.lockedAt = t.Now
}

// Book books d of the timeline for work asked for at ask by no task (a
// block device's transfer pipe, which serves its transfers first come,
// first served, as a lock serves its waiters): it starts after the hold
// time queued ahead of a task asking at ask, as Lock's does, is recorded
// like a hold (in the free time from its start on), and Book returns
// when it ends for its asker: ask, plus that wait, plus d. What ended by
// now, the world's clock, is forgotten first.
func (l *Lock) Book(now, ask, d Time) Time {
	if !l.holds.empty() {
		l.holds.dropEnded(now)
		l.queued = dropEnded(l.queued, now)
	}
	start := ask + l.queuedAt(ask)
	l.record(ask, start, d)
	return start + d
}

// Reset forgets every recorded hold: the lock is free from now on.
func (l *Lock) Reset() {
	l.FreeAt, l.holds, l.queued, l.heldBy = 0, holdList{}, l.queued[:0], nil
}

// Unlock releases l at t's current time.
func (l *Lock) Unlock(t *Task) {
	l.record(l.askedAt, l.lockedAt, t.Now-l.lockedAt)
	l.heldBy = nil
}

// Hold takes and releases l around d nanoseconds of work.
func (l *Lock) Hold(t *Task, d Time) {
	l.Lock(t)
	t.Charge(d)
	l.Unlock(t)
}

type event struct {
	at    Time
	seq   uint64
	task  *Task
	timer Timer
	// wake marks a task's wakeup from sleep (a start, a Wake, a timer):
	// with a SchedModel its CPU may have to leave an idle state first.
	wake bool
	// cpu marks a dispatch event: run the head of the CPU's run queue.
	cpu *CPU
}

type eventQueue []event

func (q eventQueue) Len() int { return len(q) }
func (q eventQueue) Less(i, j int) bool {
	if q[i].at != q[j].at {
		return q[i].at < q[j].at
	}
	return q[i].seq < q[j].seq
}
func (q eventQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }

// push adds e to the heap: container/heap's Push on a typed slice, so
// an event is not boxed in an interface (an allocation per event).
// (at, seq) is unique, so the order events leave the queue is the same
// as with any correct heap.
func (q *eventQueue) push(e event) {
	*q = append(*q, e)
	h := *q
	j := len(h) - 1
	for {
		i := (j - 1) / 2 // parent
		if i == j || !h.Less(j, i) {
			break
		}
		h.Swap(i, j)
		j = i
	}
}

// pop removes and returns the earliest event (container/heap's Pop).
func (q *eventQueue) pop() event {
	h := *q
	n := len(h) - 1
	h.Swap(0, n)
	i := 0
	for {
		j1 := 2*i + 1
		if j1 >= n || j1 < 0 {
			break
		}
		j := j1
		if j2 := j1 + 1; j2 < n && h.Less(j2, j1) {
			j = j2
		}
		if !h.Less(j, i) {
			break
		}
		h.Swap(i, j)
		i = j
	}
	e := h[n]
	h[n] = event{} // drop the references the slot held
	*q = h[:n]
	return e
}

// World is the simulation: clock, CPUs, tasks, events and the RNG.
type World struct {
	now   Time
	seq   uint64
	queue eventQueue
	CPUs  []*CPU
	Tasks []*Task
	Rand  *Rand
	// Steps counts task steps run (a measure of simulated work).
	Steps uint64
	// OnStep, if set, is told about every step: the CPU ran t from start
	// to end (end includes Sleep time the CPU did not spend).
	// It is a test's hook: a checkpoint (engine/internal/deepcopy) leaves
	// it out. The engine's own observer is Observer.
	OnStep func(t *Task, cpu *CPU, start, end Time) `deepcopy:"-"`
	// Observer, if set, is told about every step as OnStep is. It is
	// data (mm's PSI accounting), so a checkpoint copies it.
	Observer StepObserver
	// AfterEvent, if set, runs after every event RunUntil or Step
	// processes (tests check the machine's invariants there). A
	// checkpoint leaves it out: whoever wants it on a copy sets it again.
	AfterEvent func() `deepcopy:"-"`
	// BeforeEvent, if set, is told the time of every event before it
	// runs: the state it could read then is the state at every time
	// from the previous event's up to (not including) at. A recorder
	// samples counters there (mm's trace_record.go); it must not change
	// the simulation. A checkpoint leaves it out (a recorder is not part
	// of the run).
	BeforeEvent func(at Time) `deepcopy:"-"`
	// SchedSlice is the scheduler's slice (see Resched): EEVDF's
	// sysctl_sched_base_slice, 0.70 ms since "sched: Reduce the default
	// slice to avoid tasks getting an extra tick" (2025, lore
	// 20250208075322.13139-1-15645113830zzh@gmail.com), scaled by
	// 1 + ilog2(CPUs, at most 8) as update_sysctl() does under the
	// default SCHED_TUNABLESCALING_LOG (kernel/sched/fair.c): 2.8 ms on
	// 8 CPUs.
	SchedSlice Time
	// Sched is the scheduler timing model (sched.go); nil: wakeups and
	// timers are exact. Set it before the first event runs.
	Sched *SchedModel
	// waiting is the number of tasks waiting in run queues, the CPUs'
	// Waiters summed: a CPU going idle looks for a waiter to pull
	// (newidleBalance) only when it is not 0.
	waiting int

	seed    uint64
	streams map[string]*Rand
	// jiffiesPhase and jiffies0 are drawn once from sched/jiffies.
	jiffiesDrawn bool
	jiffiesPhase Time
	jiffies0     uint64
}

// NewWorld creates a world with the given CPUs (cpuNode[i] is CPU i's NUMA
// node) and RNG seed.
func NewWorld(cpuNode []int, seed uint64) *World {
	w := &World{Rand: NewRand(seed), seed: seed}
	for i, n := range cpuNode {
		w.CPUs = append(w.CPUs, &CPU{ID: i, Node: n})
	}
	w.SchedSlice = 700 * Microsecond * Time(bits.Len(uint(min(max(len(cpuNode), 1), 8)))) // 1 + ilog2(n) = bits.Len(n)
	return w
}

// Stream returns the generator of the cause called name, seeded from the
// world's seed and the name (see "Streams" in rand.go); the same name
// returns the same generator.
func (w *World) Stream(name string) *Rand {
	if r, ok := w.streams[name]; ok {
		return r
	}
	if w.streams == nil {
		w.streams = map[string]*Rand{}
	}
	r := NewRand(StreamSeed(w.seed, name))
	w.streams[name] = r
	return r
}

// Now is the simulated time of the event being processed.
func (w *World) Now() Time { return w.now }

// NewTask creates a task that starts at time start on cpu (or the least busy
// allowed CPU). Pass start = Never for a task that sleeps until woken.
func (w *World) NewTask(name string, cpu int, p Program, start Time) *Task {
	t := &Task{ID: len(w.Tasks), Name: name, CPU: cpu, Program: p, w: w}
	w.Tasks = append(w.Tasks, t)
	if start == Never {
		t.state = taskSleeping
	} else {
		w.scheduleWake(t, start, true)
	}
	return t
}

// Fork creates a task the way fork() and wake_up_new_task() do: it starts
// at time start on the CPU that fork balancing picks among its
// AllowedCPUs (set them before start), or among the CPUs of parentCPU's
// node (see sched.go).
func (w *World) Fork(name string, parentCPU int, p Program, start Time) *Task {
	t := w.NewTask(name, parentCPU, p, start)
	t.fork = true
	return t
}

// Wake makes a sleeping task runnable at time at (try_to_wake_up).
// Waking a runnable task whose next step is later moves the step earlier.
// A task is not woken before its own clock, where its last step ended: a
// step runs to completion, so a task whose step ran ahead of the world to
// a sleep may be woken by a step run afterwards at an earlier time, when
// on a machine it was still running; it sees the wakeup once that work is
// done (until December 2026 its next step started at the waker's time,
// before the previous one had ended, and the task did more work than its
// time allowed: kswapd's skip-bit resets, docs/FIDELITY.md).
func (w *World) Wake(t *Task, at Time) {
	if t.state == taskExited {
		return
	}
	if at < w.now {
		at = w.now
	}
	if at < t.Now {
		at = t.Now
	}
	if t.state == taskSleeping {
		t.state = taskRunnable
		w.scheduleWake(t, at, true)
		return
	}
	if t.deferred {
		return // runnable already, waiting in a run queue
	}
	if t.pending && at < t.wakeAt {
		w.scheduleWake(t, at, true) // the later event becomes stale
	}
}

func (w *World) schedule(t *Task, at Time) { w.scheduleWake(t, at, false) }

func (w *World) scheduleWake(t *Task, at Time, wake bool) {
	w.seq++
	t.pending = true
	t.wakeAt = at
	w.queue.push(event{at: at, seq: w.seq, task: t, wake: wake})
}

// At runs fn at time at (a timer, such as the PSI averaging work). A
// checkpoint cannot copy a closure: the engine's own timers are values
// (AtTimer).
func (w *World) At(at Time, fn func(w *World)) { w.AtTimer(at, TimerFunc(fn)) }

// TimerFunc adapts a function to Timer.
type TimerFunc func(w *World)

// Fire calls f.
func (f TimerFunc) Fire(w *World) { f(w) }

// Timer is work queued for a time that is not a task's step (a timer
// list entry, a block request's completion). It is a value, not a
// closure, so that a checkpoint copies it with the state it acts on.
type Timer interface {
	Fire(w *World)
}

// StepObserver is told about every step: the CPU ran t from start to end
// (end includes Sleep time the CPU did not spend).
type StepObserver interface {
	TaskStepped(t *Task, cpu *CPU, start, end Time)
}

// AtTimer runs tm.Fire at time at. Unlike At, whose function may be a
// closure a checkpoint cannot copy, the engine's own timers use it.
func (w *World) AtTimer(at Time, tm Timer) {
	if at < w.now {
		at = w.now
	}
	w.seq++
	w.queue.push(event{at: at, seq: w.seq, timer: tm})
}

// Pending reports whether any event is queued.
func (w *World) Pending() bool { return len(w.queue) > 0 }

// NextEventTime returns the time of the next queued event, or Never.
func (w *World) NextEventTime() Time {
	if len(w.queue) == 0 {
		return Never
	}
	return w.queue[0].at
}

// RunUntil processes events with time <= until (or until Stop returns true
// after an event) and leaves the clock at until. It returns the number of
// events processed.
func (w *World) RunUntil(until Time, stop func() bool) int {
	n := 0
	for len(w.queue) > 0 && w.queue[0].at <= until {
		w.step()
		if w.AfterEvent != nil {
			w.AfterEvent()
		}
		n++
		if stop != nil && stop() {
			return n
		}
	}
	if until > w.now {
		w.now = until
	}
	return n
}

// Step processes one event. It returns false if the queue is empty.
func (w *World) Step() bool {
	if len(w.queue) == 0 {
		return false
	}
	w.step()
	if w.AfterEvent != nil {
		w.AfterEvent()
	}
	return true
}

func (w *World) step() {
	e := w.queue.pop()
	if w.BeforeEvent != nil {
		w.BeforeEvent(max(e.at, w.now))
	}
	if e.at > w.now {
		w.now = e.at
	}
	if e.timer != nil {
		e.timer.Fire(w)
		return
	}
	if e.cpu != nil {
		w.dispatch(e.cpu, e.at)
		return
	}
	t := e.task
	if !t.pending || e.at != t.wakeAt || t.state != taskRunnable {
		return // stale event
	}
	if t.resched {
		// cond_resched(): schedule() if TIF_NEED_RESCHED is set.
		t.resched = false
		if cpu := w.CPUs[t.CPU]; cpu.Waiters > 0 && cpu.curr == t && w.now-t.sliceStart >= w.SchedSlice {
			// Into the queue, for pick_eevdf() to choose; an idle
			// CPU takes it once it cools (nohz idle balance).
			cpu.curr = nil
			w.enqueue(t, cpu)
			w.kickIdleBalance(t, cpu)
			return
		}
	}
	if t.fork {
		w.forkPlace(t)
		t.fork = false
	}
	if e.wake && w.Sched != nil {
		if d := w.wakeLatency(t); d > 0 {
			w.schedule(t, w.now+d)
			return
		}
	}
	cpu := w.pickCPU(t)
	if w.busy(cpu, t) {
		// The CPU is running someone else: wait in its run queue.
		w.enqueue(t, cpu)
		return
	}
	w.run(t, cpu)
}

// enqueue puts t in cpu's run queue, in deadline order behind the tasks
// with the same deadline; the CPU's dispatch event runs the pick.
func (w *World) enqueue(t *Task, cpu *CPU) {
	w.attach(t, cpu)
	t.deferred = true
	t.deferredOn = cpu
	t.pending = true
	t.wakeAt = Never // no event of t's is live while it waits
	cpu.Waiters++
	w.waiting++
	q := cpu.runq
	lo, hi := 0, len(q)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if q[mid].deadline <= t.deadline {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	q = append(q, nil)
	copy(q[lo+1:], q[lo:])
	q[lo] = t
	cpu.runq = q
	w.armDispatch(cpu)
}

// attach places t in cpu's EEVDF order (place_entity()): at V - lag, the
// lag scaled by (n + 1) / n for the n tasks already there, with a
// deadline one slice on. A task in another CPU's order leaves it first.
func (w *World) attach(t *Task, cpu *CPU) {
	w.settle(cpu)
	if t.rq == cpu && !t.leaving {
		return
	}
	if t.rq != nil {
		w.detach(t)
	}
	w.burnLag(t)
	var v, lag Time
	if cpu.nr > 0 {
		v = w.avgVruntime(cpu, t)
		lag = t.vlag * Time(cpu.nr+1) / Time(cpu.nr)
	}
	t.rq = cpu
	t.vruntime = v - lag
	t.deadline = t.vruntime + w.SchedSlice
	cpu.vsum += t.vruntime
	cpu.nr++
}

// detach takes t out of its CPU's EEVDF order, keeping its lag as
// entity_lag() clamps it: to max(2 x slice, a tick).
func (w *World) detach(t *Task) {
	cpu := t.rq
	if cpu == nil {
		return
	}
	v := w.avgVruntime(cpu, t)
	tick := Second / 250
	if w.Sched != nil && w.Sched.HZ > 0 {
		tick = Second / Time(w.Sched.HZ)
	}
	limit := max(2*w.SchedSlice, tick)
	t.vlag = min(max(v-t.vruntime, -limit), limit)
	t.sleptOn = nil
	if t.leaving && t.vlag < 0 {
		// dequeue_entity(DEQUEUE_SLEEP) of an entity that is not
		// eligible: it stays queued, delayed (DELAY_DEQUEUE).
		t.sleptOn, t.sleptV, t.sleptIdles = cpu, w.vclockAt(cpu), cpu.idles
	}
	cpu.vsum -= t.vruntime
	cpu.nr--
	if cpu.nr == 0 {
		cpu.vsum = 0
		cpu.idles++
	}
	t.rq, t.leaving = nil, false
}

// burnLag gives t, which left its CPU's order to sleep with a negative
// lag, the lag it has when it comes back after sitting in that order
// delayed (DELAY_DEQUEUE + DELAY_ZERO): its vruntime stays while V moves
// on, so its lag rises by V's advance, and it is clipped to 0
// (update_entity_lag() on a sched_delayed entity: vlag = max(vlag,
// se->vlag), then min(vlag, 0)), whether the pick dequeued it once it
// became eligible or its wakeup found it still queued
// (requeue_delayed_entity()). A CPU that ran out of other tasks picked
// it and it left with lag 0.
func (w *World) burnLag(t *Task) {
	c := t.sleptOn
	if c == nil {
		return
	}
	t.sleptOn = nil
	if c.idles != t.sleptIdles {
		t.vlag = 0
		return
	}
	t.vlag = min(t.vlag+w.vclockAt(c)-t.sleptV, 0)
}

// vclockAt returns cpu's vclock at the world's time: without the part
// of the running step still to come.
func (w *World) vclockAt(cpu *CPU) Time {
	v := cpu.vclock
	if rest := cpu.stepEnd - w.now; rest > 0 && cpu.stepEnd > cpu.stepStart {
		// stepDV x rest / span, rest < span: the quotient fits.
		hi, lo := bits.Mul64(uint64(cpu.stepDV), uint64(min(rest, cpu.stepEnd-cpu.stepStart)))
		q, _ := bits.Div64(hi, lo, uint64(cpu.stepEnd-cpu.stepStart))
		v -= Time(q)
	}
	return v
}

// settle takes out of cpu's order the task whose last step there ended
// in a sleep or an exit, once the CPU is done with that step.
func (w *World) settle(cpu *CPU) {
	if c := cpu.curr; c != nil && c.leaving && c.rq == cpu && cpu.BusyUntil <= w.now {
		w.detach(c)
	}
}

// busy reports whether cpu is running a task other than t: a step's,
// or a task whose step ended now and runs on at once (its event is due
// now but has not run yet: the CPU is not free in between).
func (w *World) busy(cpu *CPU, t *Task) bool {
	if cpu.BusyUntil > w.now {
		return true
	}
	c := cpu.curr
	return c != nil && c != t && c.resched && c.pending && c.wakeAt == w.now && c.rq == cpu
}

// avgVruntime returns cpu's V at the world's time as t, joining or
// leaving, sees it: the average vruntime of the tasks in its order
// (avg_vruntime(); nr > 0), rounded down. A step is charged whole when
// it starts, so while another task's step runs on the CPU the part of it
// still to come is not counted yet.
func (w *World) avgVruntime(cpu *CPU, t *Task) Time {
	sum, n := cpu.vsum, Time(cpu.nr)
	if c := cpu.curr; c != nil && c != t && c.rq == cpu && cpu.BusyUntil > w.now {
		sum -= cpu.BusyUntil - w.now
	}
	if sum < 0 {
		return (sum - (n - 1)) / n
	}
	return sum / n
}

// pickEEVDF returns the index in cpu's run queue of the task to run next
// (pick_eevdf()): the first, in deadline order, that is eligible (its
// vruntime at most V, vruntime_eligible() without the division), or the
// first if none is.
func pickEEVDF(cpu *CPU) int {
	n := Time(cpu.nr)
	for i, t := range cpu.runq {
		if t.vruntime*n <= cpu.vsum {
			return i
		}
	}
	return 0
}

// armDispatch makes sure a dispatch event for cpu is queued at the end of
// its current step.
func (w *World) armDispatch(cpu *CPU) { w.armDispatchAt(cpu, cpu.BusyUntil) }

// armDispatchAt makes sure a dispatch event for cpu is queued at at, or
// at the end of its current step if later.
func (w *World) armDispatchAt(cpu *CPU, at Time) {
	at = max(at, cpu.BusyUntil, w.now)
	if cpu.dispatchArmed && cpu.dispatchAt == at {
		return
	}
	cpu.dispatchArmed = true
	cpu.dispatchAt = at
	w.seq++
	w.queue.push(event{at: at, seq: w.seq, cpu: cpu})
}

// dispatch runs the pick of cpu's run queue once the CPU is free; if a
// task still waits, an idle CPU it may use is kicked to balance when it
// cools (kickIdleBalance). A CPU free with nothing queued balances
// (newidleBalance).
func (w *World) dispatch(cpu *CPU, at Time) {
	if !cpu.dispatchArmed || at != cpu.dispatchAt {
		return // stale
	}
	cpu.dispatchArmed = false
	if len(cpu.runq) == 0 {
		if !w.busy(cpu, nil) {
			w.newidleBalance(cpu)
		}
		return
	}
	if w.busy(cpu, nil) {
		w.armDispatch(cpu)
		return
	}
	w.settle(cpu)
	t := w.dequeue(cpu, pickEEVDF(cpu))
	w.run(t, cpu)
	if len(cpu.runq) > 0 {
		w.kickIdleBalance(cpu.runq[pickEEVDF(cpu)], cpu)
	}
}

// kickIdleBalance is nohz_balancer_kick() for t, which waits in src's
// queue behind a running task (src's nr_running >= 2): an idle CPU t
// may run on, with nothing queued, balances (newidleBalance) at the
// first tick at or after t stops being cache hot. The kernel's idle
// load balancer balances every idle CPU in one pass
// (_nohz_idle_balance()), and each look pulls one waiter, so each kick
// takes one idle CPU: the lowest-numbered that does not look by then
// already (a CPU that does is another waiter's, or finds this one); the
// look takes the coldest waiter of the longest queue, which may be
// another task.
func (w *World) kickIdleBalance(t *Task, src *CPU) {
	at := w.tickAtOrAfter(max(t.lastRan+sysctlSchedMigrationCost, w.now))
	n := len(t.AllowedCPUs)
	if t.AllowedCPUs == nil {
		n = len(w.CPUs)
	}
	for i := 0; i < n; i++ {
		c := w.CPUs[i]
		if t.AllowedCPUs != nil {
			c = w.CPUs[t.AllowedCPUs[i]]
		}
		if c == src || w.busy(c, nil) || len(c.runq) > 0 || c.dispatchArmed && c.dispatchAt <= at {
			continue
		}
		w.armDispatchAt(c, at)
		return
	}
}

// tickAtOrAfter returns the first tick (jiffy boundary) at or after at,
// where a busy CPU's sched_tick() kicks the idle load balancer; without
// a tick (no SchedModel, or HZ 0) it is at.
func (w *World) tickAtOrAfter(at Time) Time {
	if w.Sched == nil || w.Sched.HZ <= 0 {
		return at
	}
	tick, phase, _ := w.tick()
	k := (at + phase + tick - 1) / tick
	return k*tick - phase
}

// sysctlSchedMigrationCost is sysctl_sched_migration_cost, 0.5 ms
// (kernel/sched/fair.c): a task that ran less than this ago is cache hot
// (task_hot()) and load balancing leaves it where it is.
const sysctlSchedMigrationCost = 500 * Microsecond

// newidleBalance is sched_balance_newidle() for cpu, which goes idle now
// with nothing queued (see "Run queues"): it looks for a waiter to pull
// among the CPUs of its node, then among the others (the kernel's
// domains, walked from the lowest, stop at the first that pulls), and
// runs it. The source is the CPU with the most waiters that has one cpu
// may take (find_busiest_queue() for migrate_task; a queue whose waiters
// may not run on cpu is passed over as LBF_ALL_PINNED redoes without
// it), ties to the lowest ID; the waiter is its least recently run one
// that may run on cpu (detach_tasks() walks cfs_tasks from the tail, and
// a preemptible kernel stops newidle balancing at the first task), unless
// that one is cache hot. When only cache-hot waiters stopped it, the
// CPU looks again at the first tick at or after the first of them is no
// longer hot: the kernel's idle CPU is balanced again by the nohz idle
// balance (sched_balance_domains() with CPU_IDLE; see "Run queues" for
// what pagesim keeps of it). It reports whether it pulled a task.
func (w *World) newidleBalance(cpu *CPU) bool {
	if w.waiting == 0 {
		return false
	}
	retry := Never
	for _, local := range [2]bool{true, false} {
		var src *CPU
		pick := -1
		for _, c := range w.CPUs {
			if c == cpu || (c.Node == cpu.Node) != local || len(c.runq) == 0 ||
				src != nil && len(c.runq) <= len(src.runq) {
				continue
			}
			if i := w.detachable(c, cpu); i >= 0 {
				src, pick = c, i
			} else if i == -2 {
				// The busiest queue's coldest waiter is hot: no pull
				// at this level (load_balance() moves nothing).
				src, pick = c, -1
			}
		}
		if src == nil {
			continue
		}
		if pick >= 0 {
			w.run(w.dequeue(src, pick), cpu)
			return true
		}
		if at := w.coolAt(src, cpu); retry == Never || at < retry {
			retry = at
		}
	}
	if retry != Never {
		w.armDispatchAt(cpu, w.tickAtOrAfter(retry))
	}
	return false
}

// coolAt returns when the waiter of src that dst would pull stops being
// cache hot.
func (w *World) coolAt(src, dst *CPU) Time {
	at := Never
	for _, t := range src.runq {
		if t.allowed(dst.ID) && (at == Never || t.lastRan+sysctlSchedMigrationCost < at) {
			at = t.lastRan + sysctlSchedMigrationCost
		}
	}
	return at
}

// detachable returns the index in src's run queue of the waiter dst
// would pull (the least recently run that may run on dst, the first in
// the queue's order on ties), -2 if that waiter is cache hot, -1 if no
// waiter may run on dst.
func (w *World) detachable(src, dst *CPU) int {
	best := -1
	for i, t := range src.runq {
		if !t.allowed(dst.ID) {
			continue
		}
		if best < 0 || t.lastRan < src.runq[best].lastRan {
			best = i
		}
	}
	if best >= 0 {
		if t := src.runq[best]; t.lastRan > 0 && w.now-t.lastRan < sysctlSchedMigrationCost {
			return -2
		}
	}
	return best
}

// allowed reports whether t may run on CPU id.
func (t *Task) allowed(id int) bool {
	if t.AllowedCPUs == nil {
		return true
	}
	for _, a := range t.AllowedCPUs {
		if a == id {
			return true
		}
	}
	return false
}

// dequeue takes the i'th task of cpu's run queue out of it (it stays in
// the CPU's EEVDF order).
func (w *World) dequeue(cpu *CPU, i int) *Task {
	t := cpu.runq[i]
	copy(cpu.runq[i:], cpu.runq[i+1:])
	cpu.runq[len(cpu.runq)-1] = nil
	cpu.runq = cpu.runq[:len(cpu.runq)-1]
	cpu.Waiters--
	w.waiting--
	t.deferred = false
	t.deferredOn = nil
	return t
}

// leave takes t, whose step on cpu just ran and ends in a sleep or an
// exit, out of cpu's order when the CPU is done with the step.
func (w *World) leave(t *Task, cpu *CPU) {
	t.leaving = true
	w.settle(cpu)
}

// run runs one step of t on cpu, which is free now.
func (w *World) run(t *Task, cpu *CPU) {
	if cpu.curr != t || cpu.BusyUntil < w.now {
		// A new slice: the CPU ran another task or idled.
		t.sliceStart = w.now
	}
	w.attach(t, cpu)
	cpu.curr = t
	t.pending = false
	t.CPU = cpu.ID
	t.Now = w.now
	start := t.Now
	w.Steps++
	t.slept = 0
	t.onCPU = true
	next := t.Program.Step(w, t)
	t.onCPU = false
	ran := t.Now - t.slept
	if ran > cpu.BusyUntil {
		cpu.BusyUntil = ran
	}
	cpu.Busy += ran - start
	// update_curr(), update_deadline().
	t.vruntime += ran - start
	cpu.vsum += ran - start
	t.lastRan = ran
	dv := (ran - start) / Time(cpu.nr+1)
	cpu.vclock += dv
	cpu.stepDV, cpu.stepStart, cpu.stepEnd = dv, start, ran
	if t.vruntime >= t.deadline {
		t.deadline = t.vruntime + w.SchedSlice
	}
	if w.Observer != nil {
		w.Observer.TaskStepped(t, cpu, start, ran)
	}
	if w.OnStep != nil {
		w.OnStep(t, cpu, start, ran)
	}
	goesIdle := true // unless t runs on at once
	switch {
	case next == Exit:
		t.state = taskExited
		w.leave(t, cpu)
	case next == Never:
		if !t.pending {
			t.state = taskSleeping
		}
		w.leave(t, cpu)
	case next == Resched:
		t.resched = true
		goesIdle = false
		w.schedule(t, t.Now)
	default:
		if next < t.Now {
			next = t.Now
		}
		wake := false
		if next > t.Now && w.Sched != nil {
			// A timed sleep: it ends when its timer fires.
			next, wake = w.timerExpiry(t, t.Now, next), true
		}
		runsOn := next == t.Now && t.slept == 0
		goesIdle = !runsOn
		if !runsOn {
			// A task that slept in its step (an I/O wait) or asks
			// to run later (a timed sleep) leaves the CPU's order
			// with its lag and comes back as a wakeup.
			w.leave(t, cpu)
		}
		if !t.pending || next < t.wakeAt {
			// A task that runs on at once is at a preemption point
			// (the tick's need_resched, seen at its next
			// cond_resched() or return to user space), as a Resched.
			t.resched = runsOn
			w.scheduleWake(t, next, wake)
		}
	}
	if len(cpu.runq) > 0 || goesIdle && w.waiting > 0 {
		// Serve the queue when the step ends, or, with nothing
		// queued here, look for a waiter elsewhere then.
		w.armDispatch(cpu)
	}
}

// pickCPU returns the CPU the task runs its next step on: its current CPU
// if free, else an allowed CPU that is free (the one idle longest), else
// the allowed CPU with the shortest run queue, then the one that frees up
// first (lowest ID on ties).
func (w *World) pickCPU(t *Task) *CPU {
	cur := w.CPUs[t.CPU]
	if !w.busy(cur, t) || len(t.AllowedCPUs) == 1 {
		return cur
	}
	best := cur
	better := func(c *CPU) bool {
		cf, bf := !w.busy(c, t), !w.busy(best, t)
		switch {
		case cf != bf:
			return cf
		case !cf && len(c.runq) != len(best.runq):
			return len(c.runq) < len(best.runq)
		}
		return c.BusyUntil < best.BusyUntil
	}
	if t.AllowedCPUs == nil {
		for _, c := range w.CPUs {
			if better(c) {
				best = c
			}
		}
	} else {
		for _, id := range t.AllowedCPUs {
			if c := w.CPUs[id]; better(c) {
				best = c
			}
		}
	}
	return best
}
