package workload

import (
	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/sim"
)

// Faulter touches an anonymous region in address order, the way a process
// populating its heap, a memhog or an application mapping a buffer does:
// each step takes Batch faults (default: up to the next 2 MiB boundary, so
// one THP or up to 512 base pages), then waits Interval. With Pin the
// faults are taken by a FOLL_LONGTERM pin (io_uring buffers, RDMA), which
// pins every folio it maps. Pages limits how many pages it faults (0: the
// rest of the region). A fault the kernel cannot serve (no OOM killer in
// pagesim) ends the program with Failed set.
type Faulter struct {
	Progress
	M        *mm.Machine
	Region   *mm.AnonRegion
	Pin      bool
	Pages    uint64
	Batch    uint64
	Interval sim.Time

	faulted uint64
}

// Step takes one batch of faults.
func (f *Faulter) Step(w *sim.World, t *sim.Task) sim.Time {
	f.begin(t)
	r := f.Region
	remaining := r.Pages - min(r.Pages, r.Cursor)
	if f.Pages > 0 {
		remaining = min(remaining, f.Pages-min(f.Pages, f.faulted))
	}
	end := r.Cursor + remaining
	if f.Batch > 0 {
		end = min(end, r.Cursor+f.Batch)
	} else {
		end = min(end, (r.Cursor/mm.HPAGE_PMD_NR+1)*mm.HPAGE_PMD_NR)
	}
	for r.Cursor < end {
		before := r.Cursor
		res := f.M.FaultAnonNext(t, r, f.Pin)
		if res.Pending {
			return sim.Resched
		}
		if !res.OK {
			f.Failed++
			return f.finish(t)
		}
		f.faulted += r.Cursor - before
		f.Ops++
	}
	if r.Cursor >= r.Pages || (f.Pages > 0 && f.faulted >= f.Pages) {
		return f.finish(t)
	}
	return next(t, f.Interval)
}
