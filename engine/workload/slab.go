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

// SlabCycler is a slab cache that grows and shrinks, the way the dentry and
// inode caches do under a workload that walks, creates and deletes many
// files while memory pressure shrinks them: it allocates Batch slabs per
// step until the cache holds Hi slabs, then frees Batch slabs per step
// until it holds Lo, and so on. Which slabs empty first is random (objects
// die in whatever order the files do, and a slab is freed when its last
// object goes), so the slabs it frees, drawn from Rand, leave free chunks
// of every size inside the unmovable and reclaimable pageblocks the cache
// took. Ops counts slabs allocated, Failed the allocate_slab calls that got
// nothing; Cycles counts completed grow-and-shrink cycles.
type SlabCycler struct {
	Progress
	M        *mm.Machine
	Cache    *mm.SlabCache
	GFP      mm.GFP
	Lo, Hi   int
	Batch    int
	Rand     *sim.Rand
	Interval sim.Time
	Cycles   uint64

	shrinking, inBatch bool
	done               int
}

// Step allocates or frees one batch (or resumes an allocation that stopped
// at a cond_resched()).
func (s *SlabCycler) Step(w *sim.World, t *sim.Task) sim.Time {
	s.begin(t)
	if !s.inBatch {
		n := s.Cache.NrSlabs()
		switch {
		case !s.shrinking && n >= s.Hi:
			s.shrinking = true
		case s.shrinking && n <= s.Lo:
			s.shrinking = false
			s.Cycles++
		}
		s.inBatch, s.done = true, 0
	}
	for ; s.done < max(s.Batch, 1); s.done++ {
		if s.shrinking {
			if k := s.Cache.NrSlabs(); k > s.Lo {
				s.M.FreeSlab(t, s.Cache, s.Rand.Intn(k))
			}
			continue
		}
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
	return next(t, s.Interval)
}
