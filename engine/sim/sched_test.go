package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// firstRun returns when a program's first step ran.
func firstRun(w *World, t *Task) Time {
	runs := recorder(w)
	w.RunUntil(10*Second, nil)
	for _, r := range *runs {
		if r.name == t.Name {
			return r.start
		}
	}
	return Never
}

func TestWheelBucketExpiryRoundsUpToTheLevelGranularity(t *testing.T) {
	for _, tc := range []struct {
		name           string
		expires, delta uint64
		want           uint64
	}{
		// kernel/time/timer.c: a level-0 timer fires the jiffy after it is due.
		{"a timer due within 63 jiffies fires one jiffy after its expiry", 125, 25, 126},
		// calc_wheel_index(expires=67, clk=2): level 1, bucket_expiry 72.
		{"a timer 65 jiffies out goes to level 1 and its 8-jiffy boundary", 67, 65, 72},
		{"a level-1 timer already on a boundary moves to the next one", 72, 70, 80},
		// 0x43dd at level 2: (0x43dd >> 6) + 1 << 6 = 0x4400.
		{"a timer 600 jiffies out goes to level 2 and its 64-jiffy boundary", 0x43dd, 600, 0x4400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, wheelBucketExpiry(tc.expires, tc.delta))
		})
	}
}

func TestWithoutASchedModelWakeupsAndTimersAreExact(t *testing.T) {
	w := NewWorld([]int{0, 0}, 1)
	var at []Time
	tk := w.NewTask("sleeper", 0, ProgramFunc(func(w *World, t *Task) Time {
		at = append(at, t.Now)
		if len(at) == 3 {
			return Exit
		}
		return t.Now + Millisecond
	}), 5*Microsecond)
	tk.JiffiesTimeouts = true
	w.RunUntil(Second, nil)
	assert.Equal(t, []Time{5 * Microsecond, 1005 * Microsecond, 2005 * Microsecond}, at)
}

func TestAWakeupOntoAnIdleCPUWaitsForItsExitLatency(t *testing.T) {
	skx := SkylakeSPIdleStates()
	for _, tc := range []struct {
		name string
		// idle is how long the CPU has been idle when the task is woken
		// (-1: never ran).
		idle    Time
		maxWait Time
	}{
		{"a CPU idle since before the run is in C6", -1, skx[3].ExitLatency},
		{"a CPU idle for a millisecond is in C6", Millisecond, skx[3].ExitLatency},
		{"a CPU idle for 30 us is in C1E", 30 * Microsecond, skx[2].ExitLatency},
		{"a CPU idle for 5 us is in C1", 5 * Microsecond, skx[1].ExitLatency},
		{"a CPU idle for 1 us polls", Microsecond, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var waits []Time
			for seed := uint64(1); seed <= 20; seed++ {
				w := NewWorld([]int{0}, seed)
				w.Sched = DefaultSched()
				wakeAt := Millisecond
				if tc.idle >= 0 {
					// The CPU ran something until idle before the wakeup.
					w.CPUs[0].BusyUntil, w.CPUs[0].Busy = wakeAt-tc.idle, 10
				}
				tk := w.NewTask("woken", 0, once(10), Never)
				w.At(wakeAt, func(w *World) { w.Wake(tk, wakeAt) })
				start := firstRun(w, tk)
				require.GreaterOrEqual(t, start, wakeAt, "never early")
				waits = append(waits, start-wakeAt)
			}
			distinct := map[Time]bool{}
			for _, d := range waits {
				assert.LessOrEqual(t, d, tc.maxWait, "within the state's exit latency")
				distinct[d] = true
			}
			if tc.maxWait > 0 {
				assert.Greater(t, len(distinct), 10, "drawn per seed: %v", waits)
			} else {
				assert.Len(t, distinct, 1)
			}
		})
	}
}

func TestAWakeupOntoABusyCPUQueuesWithoutExitLatency(t *testing.T) {
	w := NewWorld([]int{0}, 3)
	w.Sched = DefaultSched()
	w.NewTask("busy", 0, once(Millisecond), 0)
	tk := w.NewTask("woken", 0, once(10), Never)
	w.At(500*Microsecond, func(w *World) { w.Wake(tk, 500*Microsecond) })
	runs := recorder(w)
	w.RunUntil(Second, nil)
	require.Len(t, *runs, 2)
	busy, woken := (*runs)[0], (*runs)[1]
	require.Equal(t, "woken", woken.name)
	assert.Equal(t, busy.end, woken.start, "runs when the busy task's step ends")
}

func TestTheSameSeedWakesAtTheSameTimes(t *testing.T) {
	times := func(seed uint64) []Time {
		w := NewWorld([]int{0, 0}, seed)
		w.Sched = DefaultSched()
		var at []Time
		w.NewTask("sleeper", 0, ProgramFunc(func(w *World, t *Task) Time {
			at = append(at, t.Now)
			if len(at) == 5 {
				return Exit
			}
			return t.Now + 3*Millisecond
		}), 0)
		w.RunUntil(Second, nil)
		return at
	}
	assert.Equal(t, times(5), times(5))
	assert.NotEqual(t, times(5), times(6))
}

func TestAUserTaskTimedSleepEndsAtTheEndOfItsSlack(t *testing.T) {
	w := NewWorld([]int{0, 0}, 1)
	w.Sched = DefaultSched()
	w.Sched.IdleStates = nil // timers alone
	var at []Time
	w.NewTask("sleeper", 0, ProgramFunc(func(w *World, t *Task) Time {
		at = append(at, t.Now)
		if len(at) == 2 {
			return Exit
		}
		return t.Now + Millisecond
	}), 0)
	w.RunUntil(Second, nil)
	assert.Equal(t, []Time{0, Millisecond + 50*Microsecond}, at, "hrtimer_reprogram programs the hard expiry")
}

func TestAKernelThreadTimeoutFiresOnTheTimerWheel(t *testing.T) {
	for _, tc := range []struct {
		name     string
		timeout  Time
		min, max Time
	}{
		// HZ=250: 25 jiffies at level 0, fired the jiffy after expiry.
		{"kswapd's HZ/10 nap ends 100-104 ms later", 100 * Millisecond, 100 * Millisecond, 104 * Millisecond},
		// 125 jiffies at level 1: up to one 8-jiffy bucket late.
		{"kcompactd's 500 ms timeout ends 500-532 ms later", 500 * Millisecond, 500 * Millisecond, 532 * Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			seen := map[Time]bool{}
			for seed := uint64(1); seed <= 30; seed++ {
				w := NewWorld([]int{0}, seed)
				w.Sched = DefaultSched()
				w.Sched.IdleStates = nil
				var at []Time
				armed := 7 * Millisecond
				tk := w.NewTask("kthread", 0, ProgramFunc(func(w *World, t *Task) Time {
					at = append(at, t.Now)
					if len(at) == 2 {
						return Exit
					}
					return t.Now + tc.timeout
				}), armed)
				tk.JiffiesTimeouts = true
				w.RunUntil(10*Second, nil)
				require.Len(t, at, 2)
				d := at[1] - armed
				assert.GreaterOrEqual(t, d, tc.min, "seed %d: a timeout never fires early", seed)
				assert.LessOrEqual(t, d, tc.max, "seed %d", seed)
				seen[d] = true
			}
			assert.Greater(t, len(seen), 5, "where jiffies stood when the timer was armed varies with the seed")
		})
	}
}

func TestForkPlacesANewTaskOnAnIdleCPUOfItsNode(t *testing.T) {
	t.Run("without a sched model it takes the first idle CPU", func(t *testing.T) {
		w := NewWorld([]int{0, 0, 0, 1, 1}, 1)
		w.NewTask("busy", 0, once(Second), 0)
		tk := w.Fork("child", 0, once(10), 0)
		w.RunUntil(Second, nil)
		assert.Equal(t, 1, tk.CPU, "CPU 0 is busy; CPU 1 is the first idle CPU of node 0")
	})
	t.Run("idle CPUs that tie are chosen between by the seed", func(t *testing.T) {
		cpus := map[int]bool{}
		for seed := uint64(1); seed <= 20; seed++ {
			w := NewWorld([]int{0, 0, 0, 0, 1, 1, 1, 1}, seed)
			w.Sched = DefaultSched()
			tk := w.Fork("child", 0, once(10), 0)
			w.RunUntil(Second, nil)
			assert.Less(t, tk.CPU, 4, "stays on the parent's node")
			cpus[tk.CPU] = true
		}
		assert.Greater(t, len(cpus), 2, "no CPU is favoured when all idled alike: %v", cpus)
	})
	t.Run("it prefers the CPU in the shallowest idle state", func(t *testing.T) {
		for seed := uint64(1); seed <= 10; seed++ {
			w := NewWorld([]int{0, 0, 0}, seed)
			w.Sched = DefaultSched()
			// CPU 2 ran something until 5 us before the fork.
			w.CPUs[2].BusyUntil, w.CPUs[2].Busy = Millisecond-5*Microsecond, 10*Microsecond
			tk := w.Fork("child", 0, once(10), Millisecond)
			tk.AllowedCPUs = []int{0, 1, 2}
			w.RunUntil(Second, nil)
			assert.Equal(t, 2, tk.CPU, "CPU 2 idled 5 us ago (C1); the others are in C6")
		}
	})
}

// TestJiffiesCountTheTickFromItsDrawnPhase checks the jiffies clock the
// per-CPU vmstat workers run on: HZ 250 from 0 at time 0 without a
// SchedModel; with one, the drawn phase and start value, and a timer's
// expiry on its wheel level's bucket (8 jiffies at level 1).
func TestJiffiesCountTheTickFromItsDrawnPhase(t *testing.T) {
	w := NewWorld([]int{0}, 1)
	assert.Equal(t, 250, w.HZ())
	assert.Equal(t, uint64(0), w.Jiffies(0))
	assert.Equal(t, uint64(250), w.Jiffies(Second))
	assert.Equal(t, Second, w.JiffyTime(250))
	assert.Equal(t, w.JiffyTime(300), w.WheelExpiry(300, 250), "no tick: exact")

	w = NewWorld([]int{0}, 1)
	w.Sched = DefaultSched()
	j := w.Jiffies(0)
	assert.LessOrEqual(t, w.JiffyTime(j), Time(0))
	assert.Greater(t, w.JiffyTime(j+1), Time(0))
	assert.Equal(t, j+1, w.Jiffies(w.JiffyTime(j+1)))
	want := ((j+250)>>3 + 1) << 3
	assert.Equal(t, w.JiffyTime(want), w.WheelExpiry(j+250, 250), "level 1 rounds up to the next 8 jiffies")
	assert.Equal(t, w.JiffyTime(j+11), w.WheelExpiry(j+10, 10), "level 0: the next jiffy")
}
