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
			name: "a mutex waiter sleeps: its CPU is free meanwhile",
			cpus: []int{0},
			setup: func(w *World) {
				l := &Lock{Name: "pcpu_drain_mutex", FreeAt: 50}
				w.NewTask("a", 0, ProgramFunc(func(w *World, t *Task) Time {
					l.LockSleep(t)
					t.Charge(10)
					l.Unlock(t)
					return Exit
				}), 0)
				w.NewTask("b", 0, once(10), 1)
			},
			want: []run{{"a", 0, 0, 10}, {"b", 0, 10, 20}},
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
// its CPU goes behind it; a task that just returns its clock keeps the CPU.
func TestReschedGivesTheCPUToAWaiterOnceTheSliceIsUsed(t *testing.T) {
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
		if resched {
			assert.Equal(t, Millisecond, bStart, "b runs at a's first cond_resched")
		} else {
			assert.Equal(t, 5*Millisecond, bStart, "b waits until a stops")
		}
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
