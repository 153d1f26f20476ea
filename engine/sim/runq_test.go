package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// loop is a program that does d of CPU work per step, forever.
func loop(d Time) Program {
	return ProgramFunc(func(w *World, t *Task) Time {
		t.Charge(d)
		return t.Now
	})
}

func TestTasksWaitingForABusyCPURunInTheOrderTheyArrived(t *testing.T) {
	w := NewWorld([]int{0}, 1)
	runs := recorder(w)
	w.NewTask("busy", 0, once(100), 0)
	for i, name := range []string{"a", "b", "c"} {
		w.NewTask(name, 0, once(10), Time(10+i))
	}
	w.RunUntil(1000, nil)
	assert.Equal(t, []run{{"busy", 0, 0, 100}, {"a", 0, 100, 110}, {"b", 0, 110, 120}, {"c", 0, 120, 130}}, *runs)
}

func TestManyTasksOnFewCPUsCostAboutOneEventPerStep(t *testing.T) {
	// 64 tasks that never sleep on 4 CPUs: each CPU's queue is served by
	// one dispatch event per step, not by an event per waiting task.
	w := NewWorld([]int{0, 0, 0, 0}, 1)
	for i := 0; i < 64; i++ {
		w.NewTask("t", i%4, loop(100), 0)
	}
	events := w.RunUntil(100_000, nil)
	require.Positive(t, w.Steps)
	assert.Less(t, float64(events)/float64(w.Steps), 3.0, "events per step")
	assert.InDelta(t, 4*100_000/100, w.Steps, 8, "every CPU stays busy")
}

func TestAWokenTaskRunsBeforeTasksThatWerePreempted(t *testing.T) {
	// Two tasks share CPU 0 and yield at a cond_resched() once their
	// slice is used; a third, woken from a sleep while b runs, gets the
	// CPU when b gives it up, ahead of a, which b preempted.
	w := NewWorld([]int{0}, 1)
	w.SchedSlice = 50
	yielder := func(w *World, t *Task) Time {
		t.Charge(40)
		return Resched
	}
	a := w.NewTask("a", 0, ProgramFunc(yielder), 0)
	b := w.NewTask("b", 0, ProgramFunc(yielder), 0)
	a.AllowedCPUs, b.AllowedCPUs = []int{0}, []int{0}
	sleeper := w.NewTask("s", 0, once(5), Never)
	sleeper.AllowedCPUs = []int{0}
	runs := recorder(w)
	w.At(100, func(w *World) { w.Wake(sleeper, w.Now()) })
	w.RunUntil(200, nil)
	var after []string
	for _, r := range *runs {
		if r.start >= 100 {
			after = append(after, r.name)
		}
	}
	require.GreaterOrEqual(t, len(after), 3)
	assert.Equal(t, []string{"b", "s", "a"}, after[:3], "b runs on to its slice's end, then the woken task, then a")
}

func TestAQueuedTaskMovesToACPUThatGoesIdle(t *testing.T) {
	// CPU 0 runs a long step with two tasks queued; CPU 1 finishes early
	// and goes idle: when CPU 0's queue is served, its next waiter moves
	// to the idle CPU instead of waiting its turn.
	w := NewWorld([]int{0, 0}, 1)
	runs := recorder(w)
	w.NewTask("long", 0, once(100), 0)
	w.NewTask("short", 1, once(10), 0)
	w.NewTask("x", 0, once(50), 1)
	w.NewTask("y", 0, once(50), 2)
	w.RunUntil(1000, nil)
	got := map[string]run{}
	for _, r := range *runs {
		got[r.name] = r
	}
	assert.Equal(t, 1, got["x"].cpu, "x takes the idle CPU 1 at once")
	assert.Equal(t, Time(10), got["x"].start)
	assert.Equal(t, Time(100), got["y"].start, "y waits for CPU 0 or the next free CPU")
}

// cpuTime sums the CPU time of name's steps that start in [from, to).
func cpuTime(runs []run, name string, from, to Time) (Time, int) {
	var d Time
	n := 0
	for _, r := range runs {
		if r.name == name && r.start >= from && r.start < to {
			d += r.end - r.start
			n++
		}
	}
	return d, n
}

func TestARunnableTaskGetsItsShareOfACPUThatAStreamOfWakeupsKeepsBusy(t *testing.T) {
	// One CPU: three tasks that run 600 us and wait 50 us for I/O, over
	// and over, and a task that runs 10 us steps without sleeping. Each
	// wakeup is a sleeper placed with its lag, not ahead of every task
	// that waits: EEVDF gives the looper about a quarter of the CPU
	// (review finding F11: it ran 5 steps, then none for 199 ms).
	w := NewWorld([]int{0}, 1)
	w.Sched = DefaultSched()
	runs := recorder(w)
	for _, name := range []string{"s1", "s2", "s3"} {
		w.NewTask(name, 0, ProgramFunc(func(w *World, t *Task) Time {
			t.Charge(600 * Microsecond)
			t.Sleep(50 * Microsecond)
			return t.Now
		}), 0)
	}
	w.NewTask("looper", 0, loop(10*Microsecond), 100*Microsecond)
	w.RunUntil(200*Millisecond, nil)
	got, steps := cpuTime(*runs, "looper", 100*Millisecond, 200*Millisecond)
	assert.Greater(t, steps, 100, "the looper keeps getting steps")
	assert.InDelta(t, float64(25*Millisecond), float64(got), float64(8*Millisecond), "the looper's CPU time in the last 100 ms, about a quarter")
	for _, name := range []string{"s1", "s2", "s3"} {
		d, _ := cpuTime(*runs, name, 100*Millisecond, 200*Millisecond)
		assert.InDelta(t, float64(25*Millisecond), float64(d), float64(8*Millisecond), "%s's CPU time", name)
	}
}

func TestATaskThatNeverSleepsYieldsItsCPUOnceItsSliceIsUsed(t *testing.T) {
	// A task running 100 us steps from time 0 on one CPU, and three tasks
	// that come at 1 us: they run within about one slice each, not once
	// the looper is done (review finding F11: 200 ms, 2,000 steps).
	w := NewWorld([]int{0}, 1)
	w.Sched = DefaultSched()
	runs := recorder(w)
	w.NewTask("looper", 0, loop(100*Microsecond), 0)
	for _, name := range []string{"a", "b", "c"} {
		w.NewTask(name, 0, loop(100*Microsecond), Microsecond)
	}
	w.RunUntil(200*Millisecond, nil)
	first := map[string]Time{}
	for _, r := range *runs {
		if _, ok := first[r.name]; !ok {
			first[r.name] = r.start
		}
	}
	for _, name := range []string{"a", "b", "c"} {
		require.Contains(t, first, name, "%s ran", name)
		assert.LessOrEqual(t, first[name], 4*w.SchedSlice, "%s's first step starts within (tasks x slice)", name)
		d, _ := cpuTime(*runs, name, 100*Millisecond, 200*Millisecond)
		assert.InDelta(t, float64(25*Millisecond), float64(d), float64(5*Millisecond), "%s's CPU time in the last 100 ms", name)
	}
}
