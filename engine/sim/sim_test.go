package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// run records each step a world runs: task name, CPU, start and end.
type run struct {
	name       string
	cpu        int
	start, end Time
}

func recorder(w *World) *[]run {
	var runs []run
	w.OnStep = func(t *Task, cpu *CPU, start, end Time) {
		runs = append(runs, run{t.Name, cpu.ID, start, end})
	}
	return &runs
}

// once is a program that does d of CPU work once and exits.
func once(d Time) Program {
	return ProgramFunc(func(w *World, t *Task) Time {
		t.Charge(d)
		return Exit
	})
}

func TestEventsAtTheSameTimeRunInInsertionOrder(t *testing.T) {
	w := NewWorld([]int{0}, 1)
	var order []int
	for i := 0; i < 5; i++ {
		w.At(100, func(*World) { order = append(order, i) })
	}
	w.At(50, func(*World) { order = append(order, -1) })
	assert.Equal(t, 6, w.RunUntil(1000, nil))
	assert.Equal(t, []int{-1, 0, 1, 2, 3, 4}, order)
	assert.Equal(t, Time(1000), w.Now(), "RunUntil leaves the clock at its target")
}

func TestCPUsAndLocks(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cpus  []int
		setup func(w *World)
		want  []run
	}{
		{
			name: "two tasks bound to one CPU run one after the other",
			cpus: []int{0, 0},
			setup: func(w *World) {
				a := w.NewTask("a", 0, once(10), 0)
				b := w.NewTask("b", 0, once(10), 0)
				a.AllowedCPUs, b.AllowedCPUs = []int{0}, []int{0}
			},
			want: []run{{"a", 0, 0, 10}, {"b", 0, 10, 20}},
		},
		{
			name: "an unbound task moves to the free CPU",
			cpus: []int{0, 0},
			setup: func(w *World) {
				w.NewTask("a", 0, once(10), 0)
				w.NewTask("b", 0, once(10), 0)
			},
			want: []run{{"a", 0, 0, 10}, {"b", 1, 0, 10}},
		},
		{
			name: "sleeping does not hold the CPU",
			cpus: []int{0},
			setup: func(w *World) {
				w.NewTask("a", 0, ProgramFunc(func(w *World, t *Task) Time {
					t.Charge(5)
					t.Sleep(100)
					return Exit
				}), 0)
				w.NewTask("b", 0, once(10), 0)
			},
			want: []run{{"a", 0, 0, 5}, {"b", 0, 5, 15}},
		},
		{
			name: "a spinlock holder makes the other CPU's task wait, on its CPU",
			cpus: []int{0, 0},
			setup: func(w *World) {
				l := &Lock{Name: "zone->lock"}
				hold := func(d Time) Program {
					return ProgramFunc(func(w *World, t *Task) Time {
						l.Hold(t, d)
						return Exit
					})
				}
				w.NewTask("a", 0, hold(30), 0)
				w.NewTask("b", 1, hold(10), 0)
			},
			want: []run{{"a", 0, 0, 30}, {"b", 1, 0, 40}},
		},
		{
			// a's one step takes the lock twice, at 0-10 and 90-100;
			// b's step starts at 50, between them, after a's step was
			// run: b does not wait for the end of a's step.
			name: "a task asking between another step's holds does not wait",
			cpus: []int{0, 0},
			setup: func(w *World) {
				l := &Lock{Name: "zone->lock"}
				w.NewTask("a", 0, ProgramFunc(func(w *World, t *Task) Time {
					l.Hold(t, 10)
					t.Charge(80)
					l.Hold(t, 10)
					return Exit
				}), 0)
				w.NewTask("b", 1, ProgramFunc(func(w *World, t *Task) Time {
					l.Hold(t, 10)
					return Exit
				}), 50)
			},
			want: []run{{"a", 0, 0, 100}, {"b", 1, 50, 60}},
		},
		{
			name: "a task asking inside another step's hold waits for that hold's end",
			cpus: []int{0, 0},
			setup: func(w *World) {
				l := &Lock{Name: "zone->lock"}
				w.NewTask("a", 0, ProgramFunc(func(w *World, t *Task) Time {
					l.Hold(t, 10)
					t.Charge(40)
					l.Hold(t, 40)
					t.Charge(10)
					return Exit
				}), 0)
				w.NewTask("b", 1, ProgramFunc(func(w *World, t *Task) Time {
					l.Hold(t, 10)
					return Exit
				}), 60)
			},
			want: []run{{"a", 0, 0, 100}, {"b", 1, 60, 100}},
		},
		{
			// c holds the mutex from 0 to 50 on CPU 1; a, asking at
			// 0 on CPU 0, sleeps until 50 and does its 10 then, and b
			// runs on CPU 0 meanwhile, after a's 10 of CPU time.
			name: "a mutex waiter sleeps: its CPU is free meanwhile",
			cpus: []int{0, 0},
			setup: func(w *World) {
				l := &Lock{Name: "pcpu_drain_mutex"}
				c := w.NewTask("c", 1, ProgramFunc(func(w *World, t *Task) Time {
					l.Hold(t, 50)
					return Exit
				}), 0)
				a := w.NewTask("a", 0, ProgramFunc(func(w *World, t *Task) Time {
					l.LockSleep(t)
					t.Charge(10)
					l.Unlock(t)
					if t.Now != 60 {
						panic("the mutex waiter did not sleep until the holder's end")
					}
					return Exit
				}), 0)
				b := w.NewTask("b", 0, once(10), 1)
				a.AllowedCPUs, b.AllowedCPUs, c.AllowedCPUs = []int{0}, []int{0}, []int{1}
			},
			want: []run{{"c", 1, 0, 50}, {"a", 0, 0, 10}, {"b", 0, 10, 20}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := NewWorld(tc.cpus, 1)
			runs := recorder(w)
			tc.setup(w)
			w.RunUntil(Second, nil)
			assert.Equal(t, tc.want, *runs)
			var busy Time
			for _, c := range w.CPUs {
				assert.Zero(t, c.Waiters, "cpu %d: no task left waiting", c.ID)
				busy += c.Busy
			}
			var ran Time
			for _, r := range *runs {
				ran += r.end - r.start
			}
			assert.Equal(t, ran, busy, "CPU busy time is the steps' CPU time")
		})
	}
}

func TestLockCounters(t *testing.T) {
	w := NewWorld([]int{0, 0, 0}, 1)
	l := &Lock{Name: "lru_lock"}
	for i := 0; i < 3; i++ {
		w.NewTask("t", i, ProgramFunc(func(w *World, t *Task) Time {
			l.Hold(t, 10)
			return Exit
		}), 0)
	}
	w.RunUntil(Second, nil)
	assert.Equal(t, uint64(3), l.Acquired)
	assert.Equal(t, uint64(2), l.Contended)
	assert.Equal(t, Time(10+20), l.WaitTime)
	assert.Equal(t, Time(30), l.FreeAt)
}

func TestWakeAndExit(t *testing.T) {
	w := NewWorld([]int{0}, 1)
	runs := recorder(w)
	steps := 0
	sleeper := w.NewTask("kswapd0", 0, ProgramFunc(func(w *World, t *Task) Time {
		steps++
		t.Charge(1)
		if steps == 2 {
			return Exit
		}
		return Never
	}), Never)
	assert.True(t, sleeper.Sleeping())
	w.RunUntil(100, nil)
	assert.Empty(t, *runs, "a task created with Never waits for Wake")

	w.Wake(sleeper, 50) // in the past: runs now
	w.RunUntil(200, nil)
	require.Len(t, *runs, 1)
	assert.Equal(t, Time(100), (*runs)[0].start)
	assert.True(t, sleeper.Sleeping())

	// A later wake-up of a task already due earlier changes nothing; an
	// earlier one moves its step and the old event goes stale.
	w.Wake(sleeper, 500)
	w.Wake(sleeper, 600)
	w.Wake(sleeper, 300)
	w.RunUntil(1000, nil)
	require.Len(t, *runs, 2)
	assert.Equal(t, Time(300), (*runs)[1].start)
	assert.True(t, sleeper.Exited())
	assert.Equal(t, uint64(2), w.Steps)

	w.Wake(sleeper, 2000)
	assert.False(t, w.Pending(), "waking an exited task queues nothing")
}

func TestRunUntilStopsWhenAsked(t *testing.T) {
	w := NewWorld([]int{0}, 1)
	n := 0
	w.NewTask("loop", 0, ProgramFunc(func(w *World, t *Task) Time {
		n++
		t.Charge(10)
		return t.Now + 90
	}), 0)
	assert.Equal(t, 3, w.RunUntil(Second, func() bool { return n == 3 }))
	assert.Equal(t, Time(200), w.Now(), "the clock stays at the last event when stopped")
	assert.Equal(t, Time(300), w.NextEventTime())
	assert.Equal(t, 2, w.RunUntil(450, nil))
	assert.Equal(t, Time(450), w.Now())
	assert.True(t, w.Step())
	assert.Equal(t, Time(500), w.Now())
	assert.Equal(t, Never, NewWorld([]int{0}, 1).NextEventTime())
	assert.False(t, NewWorld([]int{0}, 1).Step())
}

func TestTheSameSeedGivesTheSameWorld(t *testing.T) {
	trace := func(seed uint64) []run {
		w := NewWorld([]int{0, 0, 1, 1}, seed)
		runs := recorder(w)
		for i := 0; i < 6; i++ {
			w.NewTask("t", i%4, ProgramFunc(func(w *World, t *Task) Time {
				t.Charge(Time(1 + w.Rand.Intn(1000)))
				if w.Rand.Chance(1, 10) {
					return Exit
				}
				return t.Now + Time(w.Rand.Intn(500))
			}), Time(i))
		}
		w.RunUntil(Millisecond, nil)
		return *runs
	}
	a, b := trace(7), trace(7)
	assert.NotEmpty(t, a)
	assert.Equal(t, a, b)
	assert.NotEqual(t, a, trace(8))
}

func TestRand(t *testing.T) {
	// xoshiro256** seeded through splitmix64: the reference sequence
	// (computed independently from the published algorithms).
	for _, tc := range []struct {
		seed uint64
		want []uint64
	}{
		{0, []uint64{0x99ec5f36cb75f2b4, 0xbf6e1f784956452a, 0x1a5f849d4933e6e0}},
		{1, []uint64{0xb3f2af6d0fc710c5, 0x853b559647364cea, 0x92f89756082a4514}},
		{42, []uint64{0x15780b2e0c2ec716, 0x6104d9866d113a7e, 0xae17533239e499a1}},
	} {
		r := NewRand(tc.seed)
		for i, want := range tc.want {
			assert.Equal(t, want, r.Uint64(), "seed %d, value %d", tc.seed, i)
		}
		r.Seed(tc.seed)
		assert.Equal(t, tc.want[0], r.Uint64(), "Seed restarts the sequence")
	}

	r := NewRand(3)
	var seen [7]int
	for i := 0; i < 7000; i++ {
		v := r.Uint64n(7)
		require.Less(t, v, uint64(7))
		seen[v]++
		f := r.Float64()
		require.True(t, f >= 0 && f < 1)
	}
	for v, n := range seen {
		assert.InDelta(t, 1000, n, 150, "value %d", v)
	}
	assert.Less(t, r.Uint64n(8), uint64(8))
	assert.False(t, r.Chance(0, 5))
	assert.True(t, r.Chance(5, 5))
	assert.Panics(t, func() { r.Intn(0) })
}

func TestTimeString(t *testing.T) {
	assert.InDelta(t, 1.5, (1500 * Millisecond).Seconds(), 1e-12)
	assert.Equal(t, "0.001234", Time(1234567).String(), "ftrace's timestamp form")
	assert.Equal(t, "12.345678", (12*Second + 345678*Microsecond + 999).String())
}

// cond_resched() gives the CPU away only when TIF_NEED_RESCHED is set: a
// task that returns Resched after using its slice while another waits for
// its CPU goes behind it. A task that just returns its clock is at a
// preemption point too (the tick's need_resched, seen at its next
// cond_resched() or return to user space): until December 2026 it kept
// the CPU until it stopped.
func TestAPreemptionPointGivesTheCPUToAWaiterOnceTheSliceIsUsed(t *testing.T) {
	for _, resched := range []bool{true, false} {
		w := NewWorld([]int{0}, 1)
		require.Equal(t, 700*Microsecond, w.SchedSlice, "one CPU: the base slice")
		steps := 0
		a := w.NewTask("a", 0, ProgramFunc(func(w *World, t *Task) Time {
			steps++
			t.Charge(Millisecond)
			if steps == 5 {
				return Exit
			}
			if resched {
				return Resched
			}
			return t.Now
		}), 0)
		a.AllowedCPUs = []int{0}
		var bStart Time = -1
		b := w.NewTask("b", 0, ProgramFunc(func(w *World, t *Task) Time {
			bStart = t.Now
			t.Charge(Millisecond)
			return Exit
		}), Millisecond/2)
		b.AllowedCPUs = []int{0}
		w.RunUntil(Second, nil)
		assert.Equal(t, Millisecond, bStart, "resched %v: b runs at a's first preemption point", resched)
	}
}

// A task that returns Resched within its slice keeps its CPU.
func TestReschedWithinTheSliceRunsOn(t *testing.T) {
	w := NewWorld([]int{0, 0, 0, 0, 0, 0, 0, 0}, 1)
	require.Equal(t, 2800*Microsecond, w.SchedSlice, "eight CPUs: 0.7 ms x (1 + ilog2(8))")
	steps := 0
	a := w.NewTask("a", 0, ProgramFunc(func(w *World, t *Task) Time {
		steps++
		t.Charge(Millisecond)
		if steps == 2 {
			return Exit
		}
		return Resched
	}), 0)
	a.AllowedCPUs = []int{0}
	var bStart Time = -1
	b := w.NewTask("b", 0, ProgramFunc(func(w *World, t *Task) Time { bStart = t.Now; return Exit }), Microsecond)
	b.AllowedCPUs = []int{0}
	w.RunUntil(Second, nil)
	assert.Equal(t, 2*Millisecond, bStart, "a had used 1 ms of its 2.8 ms slice")
}

func TestStreamsAreSeparatePerCauseAndStableAgainstOtherDraws(t *testing.T) {
	a := NewWorld([]int{0}, 42)
	b := NewWorld([]int{0}, 42)
	// b draws from another cause first; a's and b's "x" must not care.
	for i := 0; i < 100; i++ {
		b.Stream("y").Uint64()
	}
	b.Rand.Uint64()
	for i := 0; i < 10; i++ {
		assert.Equal(t, a.Stream("x").Uint64(), b.Stream("x").Uint64(), "draw %d", i)
	}
	assert.Same(t, a.Stream("x"), a.Stream("x"), "one generator per name")
	assert.NotEqual(t, StreamSeed(42, "x"), StreamSeed(42, "y"), "names give different streams")
	assert.NotEqual(t, StreamSeed(42, "x"), StreamSeed(43, "x"), "seeds give different streams")
	assert.NotEqual(t, NewRand(StreamSeed(1, "x")).Uint64(), NewRand(StreamSeed(2, "x")).Uint64())
}

// lockStep is one task's step as a lock sees it: the task's clock starts at
// start and, in turn, charges gap[i] of work outside the lock and holds
// it for hold[i].
type lockStep struct {
	start     Time
	gap, hold []Time
}

// runLockSteps runs the steps in the order given (the order the world
// ran them, not their clocks' order) on l, each by its own task, and
// returns each acquisition's ask time, wait and hold.
func runLockSteps(l *Lock, steps []lockStep) (asks, waits, holds []Time) {
	for i, s := range steps {
		t := &Task{ID: i, Now: s.start}
		for j, d := range s.hold {
			t.Charge(s.gap[j])
			ask := t.Now
			l.Lock(t)
			asks, waits = append(asks, ask), append(waits, t.Now-ask)
			t.Charge(d)
			l.Unlock(t)
			holds = append(holds, d)
		}
	}
	return asks, waits, holds
}

func TestALockWaiterWaitsForTheHoldsQueuedBeforeIt(t *testing.T) {
	// Eight reclaimers' long steps, each taking the lock for 1 every 6
	// of its clock (1/6 of the lock each): the world runs them one after
	// the other, each from its start to about 600, and the last one asks
	// at 6.
	var reclaimers []lockStep
	for i := 0; i < 7; i++ {
		s := lockStep{start: Time(i)}
		for j := 0; j < 100; j++ {
			s.gap, s.hold = append(s.gap, 5), append(s.hold, 1)
		}
		reclaimers = append(reclaimers, s)
	}
	reclaimers = append(reclaimers, lockStep{start: 6, gap: []Time{0}, hold: []Time{1}})
	for _, tc := range []struct {
		name  string
		steps []lockStep
		// want is the waits of the last step's acquisitions.
		want []Time
	}{
		{
			name: "a task asking inside a hold waits for its end and for the holds asked before it",
			steps: []lockStep{
				{start: 10, gap: []Time{0}, hold: []Time{30}},
				{start: 20, gap: []Time{0}, hold: []Time{10}},
				{start: 30, gap: []Time{0}, hold: []Time{10}},
			},
			want: []Time{20}, // 40 for the first, 50 for the second
		},
		{
			// The world ran the steps asking at 25, 15 and 5 before the
			// one asking at 1: they found the lock free and recorded
			// [25,35), [15,25) and [5,15). The step asking at 1 found it
			// free too. A task asking at 2 is behind the one that asked
			// at 1 (it holds the lock until 11) and ahead of the three
			// that asked later: it does not wait for their 30.
			name: "a task does not wait for holds that steps run earlier took after it asked",
			steps: []lockStep{
				{start: 25, gap: []Time{0}, hold: []Time{10}},
				{start: 15, gap: []Time{0}, hold: []Time{10}},
				{start: 5, gap: []Time{0}, hold: []Time{10}},
				{start: 1, gap: []Time{0}, hold: []Time{10}},
				{start: 2, gap: []Time{0}, hold: []Time{10}},
			},
			want: []Time{9},
		},
		{
			// seed 002's reclaimers waited milliseconds for microsecond
			// holds this way: seven steps run one after the other fill
			// each other's gaps with holds taken at their own clocks,
			// and the eighth, asking at 6, found a busy stretch of 600.
			// On a machine it waits for what was asked before it: the
			// hold the second asked for at 6 (the first's, asked at 5,
			// ends at 6).
			name:  "a reclaimer asking among out-of-order steps' holds waits for at most one hold of each other task",
			steps: reclaimers,
			want:  []Time{1},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := &Lock{Name: "lru_lock"}
			_, waits, _ := runLockSteps(l, tc.steps)
			last := tc.steps[len(tc.steps)-1]
			assert.Equal(t, tc.want, waits[len(waits)-len(last.hold):])
		})
	}
}

// The timeline's invariants, for steps run in the world's order (by
// their start) with clocks that run ahead by random amounts: the
// recorded holds never overlap, their lengths add up to the time the
// tasks held the lock, and no task waits longer than all the hold time
// asked before it (the most a FIFO queue could make it wait).
func TestALockTimelineIsDisjointConservesHeldTimeAndBoundsWaits(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		r := NewRand(seed)
		var steps []lockStep
		start := Time(0)
		for i := 0; i < 40; i++ {
			start += Time(r.Intn(20))
			s := lockStep{start: start}
			for j := r.Intn(30); j >= 0; j-- {
				s.gap = append(s.gap, Time(r.Intn(50)))
				s.hold = append(s.hold, Time(r.Intn(10)))
			}
			steps = append(steps, s)
		}
		l := &Lock{Name: "zone->lock"}
		asks, waits, holds := runLockSteps(l, steps)
		var held, recorded Time
		for _, d := range holds {
			held += d
		}
		var all []lockHold
		for _, c := range l.holds.chunks {
			require.NotEmpty(t, c, "seed %d: an empty chunk", seed)
			all = append(all, c...)
		}
		require.Greater(t, len(l.holds.chunks), 1, "seed %d: the holds fill several chunks", seed)
		for i, h := range all {
			recorded += h.end - h.start
			require.Less(t, h.start, h.end, "seed %d: hold %d is empty", seed, i)
			if i > 0 {
				require.LessOrEqual(t, all[i-1].end, h.start, "seed %d: holds %d and %d overlap (or are out of order)", seed, i-1, i)
			}
		}
		require.Equal(t, held, recorded, "seed %d: the recorded holds add up to the time held", seed)
		for i, ask := range asks {
			var before Time
			for j := 0; j < i; j++ {
				if asks[j] <= ask {
					before += holds[j]
				}
			}
			require.LessOrEqual(t, waits[i], before, "seed %d: acquisition %d at %d waited more than the hold time asked before it", seed, i, ask)
		}
	}
}

// A zero-length hold (a Lock and Unlock with nothing charged between)
// by a step whose clock ran far ahead holds nobody up once the earlier
// holds are pruned.
func TestAnEmptyHoldFarAheadDoesNotHoldTheLock(t *testing.T) {
	w := NewWorld([]int{0, 0}, 1)
	runs := recorder(w)
	l := &Lock{Name: "lru_lock"}
	w.NewTask("a", 0, ProgramFunc(func(w *World, t *Task) Time {
		l.Hold(t, 5)
		t.Charge(1000)
		l.Hold(t, 0)
		return Exit
	}), 0)
	w.NewTask("b", 1, ProgramFunc(func(w *World, t *Task) Time {
		l.Hold(t, 10)
		return Exit
	}), 10)
	w.RunUntil(Second, nil)
	assert.Equal(t, []run{{"a", 0, 0, 1005}, {"b", 1, 10, 20}}, *runs)
}

// A task whose step ran ahead of the world's clock to a sleep (a timed
// nap or an indefinite one) and is woken by a task whose step runs
// afterwards at an earlier time does not start its next step before its
// previous one ended: on a machine it was still running then, and sees the
// wakeup once its work is done (the kernel's kswapd puts itself on its
// waitqueue before it resets the skip bits, then naps: a wakeup during the
// reset ends the nap as soon as it starts).
func TestAWakeupAskedBeforeATasksStepEndedStartsItsNextStepAtThatEnd(t *testing.T) {
	for _, tc := range []struct {
		name string
		nap  Time // the sleeper's step returns now+nap; Never for an indefinite sleep
	}{
		{"a timed nap", 100 * Millisecond},
		{"an indefinite sleep", Never},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := NewWorld([]int{0, 0}, 1)
			runs := recorder(w)
			steps := 0
			sleeper := w.NewTask("sleeper", 0, ProgramFunc(func(w *World, t *Task) Time {
				steps++
				if steps > 1 {
					return Exit
				}
				t.Charge(5 * Millisecond)
				if tc.nap == Never {
					return Never
				}
				return t.Now + tc.nap
			}), 0)
			// The waker runs after the sleeper's first step, at 1 ms.
			w.NewTask("waker", 1, ProgramFunc(func(w *World, t *Task) Time {
				w.Wake(sleeper, t.Now)
				return Exit
			}), Millisecond)
			w.RunUntil(Second, nil)
			require.Equal(t, 2, steps)
			var starts []Time
			for _, r := range *runs {
				if r.name == "sleeper" {
					starts = append(starts, r.start)
				}
			}
			assert.Equal(t, []Time{0, 5 * Millisecond}, starts)
		})
	}
}

// A lock whose holds end as fast as new ones come (the promoted-order
// storm's zone->lock: a hold per take, the ended ones dropped at the
// next) keeps one chunk whose array never grows: dropping the ended holds
// moves the rest to the array's start, and the array has room for the
// most a chunk holds before it splits, so a steady take-and-drop
// allocates nothing.
func TestAHoldListThatDropsAsFastAsItGrowsAllocatesNothing(t *testing.T) {
	var hl holdList
	now := Time(0)
	step := func() {
		for i := 0; i < 4*holdChunk; i++ {
			now += 10
			hl.insert(len(hl.chunks), 0, lockHold{now, now, now + 25})
			hl.dropEnded(now)
		}
	}
	step()
	require.Len(t, hl.chunks, 1, "three holds at most are live")
	allocs := testing.AllocsPerRun(20, step)
	assert.Zero(t, allocs, "no array is made or grown once the first chunk exists")
	assert.Equal(t, 2*holdChunk+1, cap(hl.chunks[0]))
}
