package sim

// sched.go is the scheduler's timing: when a task that was asleep gets to
// run. It is one of the causes of run-to-run variation (the others are
// where boot puts memory, engine/mm, and a workload's own choices), and it
// acts only through mechanisms a real kernel has:
//
//   - Leaving an idle state. A CPU with nothing to run sits in a cpuidle
//     state; the longer it has been idle, the deeper the state the governor
//     picked and the longer the way back. A task woken onto an idle CPU runs
//     after that CPU's exit latency. The states are intel_idle's table for
//     Skylake-SP (drivers/idle/intel_idle.c, skx_cstates, unchanged from
//     v4.18 to v6.x; a 2018 server, as in seed 003) plus the poll state
//     (drivers/cpuidle/poll_state.c, no exit latency). pagesim takes the
//     deepest state whose target residency the CPU's idle time so far
//     covers (the governor guessing right). The table's exit latency is the
//     worst case the governor plans with; what one exit takes below it is
//     drawn uniformly from [0, exit latency] (an estimate: no per-state
//     distribution is published), from the woken task's own stream.
//   - Timer expiry. A user task's timed sleep (nanosleep, poll, epoll_wait)
//     is an hrtimer with the task's slack, timer_slack_ns = 50 us by
//     default (init/init_task.c); the hardware is programmed for the end of
//     the slack range (hrtimer_reprogram uses the hard expiry), so with no
//     other interrupt on the CPU the sleep ends 50 us late. A kernel
//     thread's timed sleep (Task.JiffiesTimeouts) is schedule_timeout() in
//     jiffies on the timer wheel (kernel/time/timer.c): the timeout is
//     rounded up to whole jiffies and then to the wheel level's granularity
//     (calc_index(): the bucket after the expiry, 1 jiffy at level 0, 8 at
//     level 1, 64 at level 2 ...), so when it fires depends on where
//     jiffies stood when it was armed. pagesim draws the tick's phase and the value of jiffies at
//     time 0 from the sched/jiffies stream: a run starts at no particular
//     point of the tick. CONFIG_HZ is 250 (CHOICE: Debian's and Ubuntu's
//     x86-64 configs; RHEL uses 1000).
//   - Fork placement. A task made with World.Fork starts where
//     select_task_rq_fair's fork balancing puts it (find_idlest_group_cpu):
//     among its allowed CPUs (default: the parent CPU's node, where an idle
//     machine's find_idlest_group keeps it), an idle CPU in the shallowest
//     idle state, then the one that went idle last. On a real machine
//     background activity (timer ticks, kworkers, RCU) makes those idle
//     stamps differ; pagesim has none, so CPUs that tie are chosen between
//     by the task's stream.
//
// A World without a SchedModel (Sched == nil) has none of this: wakeups
// and timers are exact and new tasks start on the CPU they are given, as
// the engine's unit tests expect. Scenarios set the model.

// IdleState is one cpuidle state (struct cpuidle_state).
type IdleState struct {
	Name string
	// ExitLatency is the worst-case time to leave the state (exit_latency);
	// TargetResidency the idle time that makes entering it worth while
	// (target_residency).
	ExitLatency, TargetResidency Time
}

// SkylakeSPIdleStates is the poll state and intel_idle's skx_cstates (C1,
// C1E, C6), shallowest first.
func SkylakeSPIdleStates() []IdleState {
	return []IdleState{
		{Name: "POLL", ExitLatency: 0, TargetResidency: 0},
		{Name: "C1", ExitLatency: 2 * Microsecond, TargetResidency: 2 * Microsecond},
		{Name: "C1E", ExitLatency: 10 * Microsecond, TargetResidency: 20 * Microsecond},
		{Name: "C6", ExitLatency: 133 * Microsecond, TargetResidency: 600 * Microsecond},
	}
}

// SchedModel is the scheduler timing a World applies (see the top of
// sched.go).
type SchedModel struct {
	// IdleStates are the CPUs' idle states, shallowest first; the first
	// must have a zero target residency. Empty: wakeups pay no exit.
	IdleStates []IdleState
	// HZ is CONFIG_HZ, the tick rate of kernel threads' jiffies timeouts;
	// 0 treats them like user timers.
	HZ int
	// TimerSlack is timer_slack_ns for user tasks' timed sleeps.
	TimerSlack Time
}

// DefaultSched returns the model scenarios use: Skylake-SP idle states,
// HZ=250, 50 us timer slack.
func DefaultSched() *SchedModel {
	return &SchedModel{IdleStates: SkylakeSPIdleStates(), HZ: 250, TimerSlack: 50 * Microsecond}
}

// Timer wheel geometry (kernel/time/timer.c): LVL_CLK_SHIFT and LVL_BITS.
const (
	lvlClkShift = 3
	lvlBits     = 6
	lvlDepth    = 9
)

// lvlStart is LVL_START(n): the first delta that goes to level n.
func lvlStart(n int) uint64 { return (1<<lvlBits - 1) << ((n - 1) * lvlClkShift) }

// wheelBucketExpiry is calc_wheel_index()'s bucket_expiry for a timer due
// at jiffy expires, armed delta jiffies ahead: the level is chosen by
// delta, and calc_index() rounds up to the level's next boundary.
func wheelBucketExpiry(expires, delta uint64) uint64 {
	lvl := 0
	for lvl < lvlDepth-1 && delta >= lvlStart(lvl+1) {
		lvl++
	}
	shift := uint(lvl * lvlClkShift)
	return ((expires >> shift) + 1) << shift
}

// tick returns the jiffy length and, drawn once from sched/jiffies, the
// tick's phase and jiffies at time 0.
func (w *World) tick() (length, phase Time, j0 uint64) {
	length = Second / Time(w.Sched.HZ)
	if !w.jiffiesDrawn {
		r := w.Stream("sched/jiffies")
		w.jiffiesPhase = Time(r.Uint64n(uint64(length)))
		w.jiffies0 = r.Uint64n(1 << 32)
		w.jiffiesDrawn = true
	}
	return length, w.jiffiesPhase, w.jiffies0
}

// timerExpiry returns when a timed sleep that t arms at now, due at at,
// fires.
func (w *World) timerExpiry(t *Task, now, at Time) Time {
	s := w.Sched
	if !t.JiffiesTimeouts || s.HZ <= 0 {
		return at + s.TimerSlack
	}
	tick, phase, j0 := w.tick()
	// msecs_to_jiffies() rounds up; jiffies advance at phase + k*tick.
	n := uint64((at - now + tick - 1) / tick)
	j := j0 + uint64((now+phase)/tick)
	bucket := wheelBucketExpiry(j+n, n)
	return Time(bucket-j0)*tick - phase
}

// JiffiesExpire returns when jiffies reach the expire of a
// schedule_timeout() armed at now to end at at (expire = timeout +
// jiffies, kernel/time/sleep_timeout.c): from then on the call returns 0
// when woken, though its timer fires later, on the wheel's bucket
// (timerExpiry). Without a tick (no SchedModel, or HZ 0) it is at.
func (w *World) JiffiesExpire(now, at Time) Time {
	s := w.Sched
	if s == nil || s.HZ <= 0 {
		return at
	}
	tick, phase, j0 := w.tick()
	n := uint64((at - now + tick - 1) / tick)
	j := j0 + uint64((now+phase)/tick)
	return Time(j+n-j0)*tick - phase
}

// idleState returns the state an idle CPU is in: the deepest whose target
// residency its idle time covers. A CPU that has never run has been idle
// since before the run.
func (w *World) idleState(c *CPU) IdleState {
	states := w.Sched.IdleStates
	idle := w.now - c.BusyUntil
	if c.BusyUntil == 0 && c.Busy == 0 {
		return states[len(states)-1]
	}
	s := states[0]
	for _, st := range states[1:] {
		if st.TargetResidency <= idle {
			s = st
		}
	}
	return s
}

// wakeLatency returns how long a task woken now waits before its CPU runs
// it: the exit latency of the idle CPU it will run on, drawn below the
// state's worst case. A busy CPU is awake: the task queues instead.
func (w *World) wakeLatency(t *Task) Time {
	if len(w.Sched.IdleStates) == 0 {
		return 0
	}
	c := w.pickCPU(t)
	if w.busy(c, t) {
		return 0
	}
	exit := w.idleState(c).ExitLatency
	if exit <= 0 {
		return 0
	}
	return Time(w.taskRand(t).Uint64n(uint64(exit) + 1))
}

// taskRand returns t's own stream, sched/task/NAME#N.
func (w *World) taskRand(t *Task) *Rand {
	if t.rand == nil {
		n := 0
		for _, o := range w.Tasks[:t.ID] {
			if o.Name == t.Name {
				n++
			}
		}
		t.rand = w.Stream("sched/task/" + t.Name + "#" + itoa(n))
	}
	return t.rand
}

// forkPlace is the fork balancing of select_task_rq_fair(WF_FORK) for a
// task made with Fork: it sets t.CPU (see the top of sched.go).
func (w *World) forkPlace(t *Task) {
	cands := t.AllowedCPUs
	if cands == nil {
		node := w.CPUs[t.CPU].Node
		for _, c := range w.CPUs {
			if c.Node == node {
				cands = append(cands, c.ID)
			}
		}
	}
	var tied []int
	var bestExit, bestStamp Time
	for _, id := range cands {
		c := w.CPUs[id]
		if c.BusyUntil > w.now {
			continue
		}
		var exit Time
		if w.Sched != nil && len(w.Sched.IdleStates) > 0 {
			exit = w.idleState(c).ExitLatency
		}
		switch {
		case tied == nil || exit < bestExit || (exit == bestExit && c.BusyUntil > bestStamp):
			tied = append(tied[:0], id)
			bestExit, bestStamp = exit, c.BusyUntil
		case exit == bestExit && c.BusyUntil == bestStamp:
			tied = append(tied, id)
		}
	}
	if len(tied) == 0 {
		// No idle CPU: the one that frees up first, lowest ID on ties.
		best := w.CPUs[cands[0]]
		for _, id := range cands[1:] {
			if c := w.CPUs[id]; c.BusyUntil < best.BusyUntil {
				best = c
			}
		}
		t.CPU = best.ID
		return
	}
	t.CPU = tied[0]
	if len(tied) > 1 && w.Sched != nil {
		t.CPU = tied[w.taskRand(t).Intn(len(tied))]
	}
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for ; n > 0; n /= 10 {
		i--
		b[i] = byte('0' + n%10)
	}
	return string(b[i:])
}

// jiffyClock is the tick a World's jiffies count: with a SchedModel whose
// HZ is set, tick(); without one, HZ 250 with jiffies 0 at time 0.
func (w *World) jiffyClock() (length, phase Time, j0 uint64) {
	if w.Sched == nil || w.Sched.HZ <= 0 {
		return Second / defaultHZ, 0, 0
	}
	return w.tick()
}

// defaultHZ is the jiffy rate of a World without a SchedModel tick.
const defaultHZ = 250

// HZ returns the jiffy rate (CONFIG_HZ) of the World's jiffies.
func (w *World) HZ() int {
	if w.Sched == nil || w.Sched.HZ <= 0 {
		return defaultHZ
	}
	return w.Sched.HZ
}

// Jiffies returns the value of jiffies at time at.
func (w *World) Jiffies(at Time) uint64 {
	tick, phase, j0 := w.jiffyClock()
	return j0 + uint64((at+phase)/tick)
}

// JiffyTime returns when jiffies reach j (j at or after jiffies at time 0).
func (w *World) JiffyTime(j uint64) Time {
	tick, phase, j0 := w.jiffyClock()
	return Time(j-j0)*tick - phase
}

// WheelExpiry returns when a timer-wheel timer (a kernel timer_list, a
// delayed_work's timer) due at jiffy expires and armed delta jiffies
// before it fires: at the bucket boundary of its level (calc_index()),
// as a kernel thread's timed sleep does (timerExpiry). Without a
// SchedModel tick it is JiffyTime(expires), as timed sleeps are exact
// there.
func (w *World) WheelExpiry(expires, delta uint64) Time {
	if w.Sched == nil || w.Sched.HZ <= 0 {
		return w.JiffyTime(expires)
	}
	return w.JiffyTime(wheelBucketExpiry(expires, delta))
}
