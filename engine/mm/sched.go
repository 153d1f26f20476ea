package mm

// sched.go holds the parts of struct task_struct (include/linux/sched.h)
// that the memory code reads and writes: the PF_* flags that steer
// allocation and reclaim, and the PSI memory-stall state (in_memstall);
// and what the model keeps in place of the task's kernel stack: the
// allocation it stopped at a cond_resched().
//
// Package sim knows tasks only as things that run steps on CPUs; every
// kernel flag lives here, on the mm side, found through the task's ID.

import (
	"github.com/pagesim/pagesim/engine/sim"
)

// Task flags (include/linux/sched.h PF_*), the ones the memory code reads.
const (
	PF_MEMALLOC uint32 = 0x00000800
	PF_KSWAPD   uint32 = 0x00020000
	PF_KTHREAD  uint32 = 0x00200000
)

// taskStruct is the memory code's part of one task's task_struct.
type taskStruct struct {
	// flags holds PF_* bits (current->flags).
	flags uint32
	// memstall counts nested psi_memstall_enter() calls (the kernel
	// saves in_memstall in *pflags to nest); memstallStart is when the
	// outermost one began, memstallRecorded how far PSI has recorded the
	// open stall (memstallStart <= memstallRecorded), on CPU memstallCPU.
	// memstall > 0 exactly while the task is on PSI.stalled.
	memstall                        int
	memstallStart, memstallRecorded sim.Time
	memstallCPU                     int
	// alloc is the allocation the task has stopped at a cond_resched()
	// in the slow path (page_alloc_slowpath.go), nil when it has none.
	// It is plain data (no goroutine, no closure), so a machine can be
	// copied at any event boundary.
	alloc *allocFrame
	// frame is alloc's storage, reused from one allocation to the next
	// (alloc is nil or &frame).
	frame allocFrame
}

// current returns t's task_struct part (the kernel's `current` when t is
// the running task). Tasks are the machine's world's, numbered from 0.
func (m *Machine) current(t *sim.Task) *taskStruct {
	if t.ID < len(m.tasks) {
		if ts := m.tasks[t.ID]; ts != nil {
			return ts
		}
	}
	for len(m.tasks) <= t.ID {
		m.tasks = append(m.tasks, nil)
	}
	ts := &taskStruct{}
	m.tasks[t.ID] = ts
	return ts
}
