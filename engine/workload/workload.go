// Package workload holds the task programs the scenarios run on a simulated
// machine: a qemu/vfio guest-RAM mapper, a page-cache filler, and the
// setup helpers that fill, fragment and pin memory. Each program is a
// sim.Program: one step does a bounded piece of work (one fault, one
// file) and charges its simulated cost, so the world interleaves tasks the
// way the scheduler would.
package workload

import (
	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/sim"
)

// QemuVfio maps a guest's RAM the way qemu with a vfio-assigned device
// does at start-up: VFIO_IOMMU_MAP_DMA pins (FOLL_LONGTERM) every page of
// guest RAM in address order, faulting each 2 MiB range in as it goes (one
// THP, or 512 base pages after a THP fallback). With Pin false the guest
// RAM is only touched (a memhog), so nothing is pinned.
type QemuVfio struct {
	M      *mm.Machine
	Region *mm.AnonRegion
	Pin    bool
	// Progress: Ops is the guest pages mapped so far (Region.Cursor after
	// each step); Failed becomes 1 when a fault cannot be served (OOM),
	// which ends the mapping.
	Progress
	// The batch under way: its contiguous runs so far, where the last
	// ended, and whether a fault stopped at a cond_resched().
	runs     int
	runEnd   mm.PFN
	resuming bool
}

// Step maps the next 2 MiB of guest RAM (a fault whose allocation stops at
// a cond_resched() ends the step early; the next one goes on from there).
func (q *QemuVfio) Step(w *sim.World, t *sim.Task) sim.Time {
	q.begin(t)
	r := q.Region
	end := min(r.Pages, (r.Cursor/mm.HPAGE_PMD_NR+1)*mm.HPAGE_PMD_NR)
	if !q.resuming {
		q.runs, q.runEnd = 0, mm.NilPFN
	}
	for r.Cursor < end {
		res := q.M.FaultAnonNext(t, r, q.Pin)
		if q.resuming = res.Pending; q.resuming {
			q.Ops = r.Cursor
			return sim.Resched
		}
		if !res.OK {
			q.Failed = 1
			break
		}
		if res.Head != q.runEnd {
			q.runs++
		}
		q.runEnd = res.Head + mm.PFN(res.Order.Pages())
	}
	q.Ops = r.Cursor
	if q.Pin {
		// vfio_pin_map_dma maps each physically contiguous run of
		// pinned pages with one iommu_map() call (vfio_iommu_map): one
		// for a THP, one per run of the base pages a fallback got.
		t.Charge(q.M.Cost.IOMMUMap * sim.Time(q.runs))
	}
	if r.Cursor >= r.Pages || q.Failed > 0 {
		return q.finish(t)
	}
	return t.Now
}

// FillPageCache writes bytes of clean page cache from a task on the node's
// first CPU (so the pages land on that node), in files of 16 MiB, and writes
// them back so they are clean. It returns the files.
func FillPageCache(m *mm.Machine, t *sim.Task, name string, cg *mm.Memcg, bytes uint64) []*mm.File {
	const filePages = 4096
	pages := bytes / mm.PAGE_SIZE
	var files []*mm.File
	for done := uint64(0); done < pages; {
		n := min(uint64(filePages), pages-done)
		f := m.NewFile(name, cg)
		got := m.FileWrite(t, f, 0, n, mm.GFP_HIGHUSER_MOVABLE)
		m.FileSync(t, f)
		files = append(files, f)
		done += got
		if got < n {
			break
		}
	}
	return files
}
