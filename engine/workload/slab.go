package workload

import (
	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/sim"
)

// SlabChurner grows a slab cache to Slabs slabs, Batch slabs per step, and
// then keeps it at that size while turning it over: each further step frees
// the Batch oldest slabs and allocates Batch new ones, the way a dentry or
// network-buffer cache lives under a steady workload. The new slabs land
// wherever the allocator finds unmovable (or reclaimable) room, so the
// churn spreads unmovable pages over pageblocks. Steps bounds the number of
// steps (0: run until stopped). Ops counts slabs allocated, Failed the
// allocate_slab calls that got nothing.
type SlabChurner struct {
	Progress
	M        *mm.Machine
	Cache    *mm.SlabCache
	GFP      mm.GFP
	Slabs    int
	Batch    int
	Steps    uint64
	Interval sim.Time

	steps uint64
	// done counts the slabs allocated in the batch under way; inBatch
	// is set while a batch is under way (its allocation stopped at a
	// cond_resched()).
	done    int
	inBatch bool
}

// Step frees and allocates one batch.
func (s *SlabChurner) Step(w *sim.World, t *sim.Task) sim.Time {
	s.begin(t)
	batch := max(s.Batch, 1)
	if !s.inBatch {
		if s.Cache.NrSlabs()+batch > s.Slabs {
			s.M.FreeOldestSlabs(t, s.Cache, s.Cache.NrSlabs()+batch-s.Slabs)
		}
		s.inBatch, s.done = true, 0
	}
	for ; s.done < batch; s.done++ {
		pfn := s.M.AllocateSlab(t, s.Cache, s.GFP, -1)
		if s.M.AllocPending(t) {
			return sim.Resched
		}
		if pfn == mm.NilPFN {
			s.Failed++
			continue
		}
		s.Ops++
	}
	s.inBatch = false
	s.steps++
	if s.Steps > 0 && s.steps >= s.Steps {
		return s.finish(t)
	}
	return next(t, s.Interval)
}
