package workload

import (
	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/sim"
)

// Allocator makes raw page allocations with a given mask and order, one per
// step, and frees each one Hold after it got it (Hold < 0: never): a driver refilling its
// receive ring with order-3 buffers, a kernel path asking for contiguous
// memory now and then. It prefers node Nid (-1: the task's node). Count
// bounds the allocations (0: until stopped); after the last one the program
// ends once it has freed what it holds, or at once if it holds for good.
// Ops counts successes, Failed the requests the allocator refused.
type Allocator struct {
	Progress
	M        *mm.Machine
	GFP      mm.GFP
	Order    mm.Order
	Nid      int
	Count    uint64
	Hold     sim.Time
	Interval sim.Time

	held []heldChunk
	n    uint64
}

type heldChunk struct {
	pfn   mm.PFN
	until sim.Time
}

// Held returns the number of chunks the program holds now.
func (a *Allocator) Held() int { return len(a.held) }

// Step frees what is due and makes one allocation.
func (a *Allocator) Step(w *sim.World, t *sim.Task) sim.Time {
	a.begin(t)
	a.release(t)
	if a.Count == 0 || a.n < a.Count {
		pfn := a.M.AllocPages(t, a.GFP, a.Order, a.Nid, 0)
		if a.M.AllocPending(t) {
			return sim.Resched
		}
		a.n++
		if pfn == mm.NilPFN {
			a.Failed++
		} else {
			a.Ops++
			until := t.Now + a.Hold
			if a.Hold < 0 {
				until = forever
			}
			a.held = append(a.held, heldChunk{pfn: pfn, until: until})
		}
	}
	if a.Count > 0 && a.n >= a.Count {
		if len(a.held) == 0 || a.Hold < 0 {
			return a.finish(t)
		}
		return max(a.held[0].until, t.Now)
	}
	return next(t, a.Interval)
}

// forever marks a chunk held for good.
const forever = sim.Time(1<<63 - 1)

// release frees the chunks whose hold has passed.
func (a *Allocator) release(t *sim.Task) {
	i := 0
	for ; i < len(a.held); i++ {
		if a.held[i].until > t.Now {
			break
		}
		a.M.FreePages(t, a.held[i].pfn, a.Order)
	}
	a.held = append(a.held[:0], a.held[i:]...)
}
