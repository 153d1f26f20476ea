package workload

import (
	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/sim"
)

// Pinner registers long-term pinned buffers scattered over memory an owner
// already has, as io_uring's fixed buffers or an RDMA registration do: its
// first step pins one folio in Fraction of the pageblocks holding the
// owner's memory (mm.PinBlocks). With Hold > 0 it unpins everything Hold
// later and ends; with Hold == 0 the pins stay for good and the program
// ends at once. Ops counts the pageblocks pinned.
type Pinner struct {
	Progress
	M        *mm.Machine
	Owner    *mm.Owner
	Fraction float64
	Hold     sim.Time
	// Pages counts base pages pinned.
	Pages uint64

	pinned bool
}

// Step pins, or after the hold unpins.
func (p *Pinner) Step(w *sim.World, t *sim.Task) sim.Time {
	p.begin(t)
	if p.pinned {
		p.M.UnpinAll(t, p.Owner)
		return p.finish(t)
	}
	blocks, pages, err := p.M.PinBlocks(t, p.Owner, p.Fraction)
	p.Ops += uint64(blocks)
	p.Pages += pages
	p.pinned = true
	if err != nil {
		p.Failed++
		return p.finish(t)
	}
	if p.Hold <= 0 {
		return p.finish(t)
	}
	return t.Now + p.Hold
}
