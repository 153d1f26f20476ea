package workload

// slab.go holds the workloads' slab caches, seen from two sides.
//
// kmemCache is a kmem_cache with its objects counted per slab, as SLUB
// keeps them (linux-mm/linux-mm mm/slub.c): kmem_cache_alloc takes an
// object from a slab on the cache's partial list, or from a new slab
// (allocate_slab, mm.Machine.AllocateSlab); kmem_cache_free returns it to
// its slab, puts a slab that was full on the partial list, and gives the
// slab back to the page allocator when its last object is freed
// (__slab_free -> discard_slab). A cache whose objects die one by one, in
// whatever order their users let them go, frees a slab page only when
// every object in it has gone. What it leaves out: the per-CPU slabs and
// per-CPU partial lists, and s->min_partial (every empty slab is
// discarded at once).
//
// SlabChurner and SlabCycler work on whole slabs: they allocate and free
// slabs as units, with no objects inside.

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

// kmemCache is a kmem_cache with its objects counted per slab.
type kmemCache struct {
	c       *mm.SlabCache
	objSize uint64
	gfp     mm.GFP
	slabs   []slab
	// partial holds slabs with a free object (s->node[]->partial; some
	// may have filled or gone since: they are skipped when popped);
	// freeRecs recycles the records of discarded slabs.
	partial  []int32
	freeRecs []int32
	// Objects counts live objects.
	Objects uint64
}

// slab is a struct slab: its head page, slab->inuse (objects allocated)
// and slab->objects (its capacity). head is mm.NilPFN once the slab was
// discarded. onPartial: the slab's index is on the cache's partial list.
type slab struct {
	head           mm.PFN
	inuse, objects uint32
	onPartial      bool
}

// kmemCacheCreate is kmem_cache_create: a cache of objSize-byte objects
// whose slabs have the order SLUB picks for that size on cpus CPUs,
// charged to cg (nil: root), SLAB_RECLAIM_ACCOUNT when reclaimable. Its
// slabs are asked for with GFP_NOFS.
func kmemCacheCreate(m *mm.Machine, name string, cg *mm.Memcg, objSize uint64, reclaimable bool, cpus int) *kmemCache {
	c := m.NewSlabCache(name, cg, mm.SlubOrder(objSize, cpus), reclaimable)
	return &kmemCache{c: c, objSize: objSize, gfp: mm.GFP_NOFS}
}

// kmemCacheAlloc takes an object (kmem_cache_alloc): from a partial slab,
// or from a new slab. It returns the slab's index, or -1 with
// m.AllocPending(t) set when the slab allocation stopped at a
// cond_resched() (call again), or -1 when it failed.
func (o *kmemCache) kmemCacheAlloc(m *mm.Machine, t *sim.Task) int32 {
	for len(o.partial) > 0 {
		i := o.partial[len(o.partial)-1]
		r := &o.slabs[i]
		if r.head == mm.NilPFN || r.inuse >= r.objects {
			r.onPartial = false
			o.partial = o.partial[:len(o.partial)-1]
			if r.head == mm.NilPFN {
				o.freeRecs = append(o.freeRecs, i)
			}
			continue
		}
		r.inuse++
		o.Objects++
		if r.inuse == r.objects {
			r.onPartial = false
			o.partial = o.partial[:len(o.partial)-1]
		}
		return i
	}
	head := m.AllocateSlab(t, o.c, o.gfp, -1)
	if head == mm.NilPFN {
		return -1
	}
	rec := slab{head: head, inuse: 1, objects: uint32((mm.PAGE_SIZE << o.c.LastOrder) / o.objSize)}
	i := o.store(rec)
	o.Objects++
	if rec.inuse < rec.objects {
		o.slabs[i].onPartial = true
		o.partial = append(o.partial, i)
	}
	return i
}

// store files rec in a free slot of o.slabs (one a discarded slab left),
// or at the end, and returns its index.
func (o *kmemCache) store(rec slab) int32 {
	if k := len(o.freeRecs); k > 0 {
		i := o.freeRecs[k-1]
		o.freeRecs = o.freeRecs[:k-1]
		o.slabs[i] = rec
		return i
	}
	o.slabs = append(o.slabs, rec)
	return int32(len(o.slabs) - 1)
}

// addPartial files a new slab that an allocation resumed after its caller
// moved on (add_partial): it waits empty on the partial list.
func (o *kmemCache) addPartial(head mm.PFN) {
	rec := slab{head: head, objects: uint32((mm.PAGE_SIZE << o.c.LastOrder) / o.objSize), onPartial: true}
	i := o.store(rec)
	o.partial = append(o.partial, i)
}

// kmemCacheFree returns an object to slab i (kmem_cache_free); the slab
// goes back to the page allocator when it is empty (discard_slab).
func (o *kmemCache) kmemCacheFree(m *mm.Machine, t *sim.Task, i int32) {
	r := &o.slabs[i]
	r.inuse--
	o.Objects--
	if r.inuse == 0 {
		// discard_slab. A record still on the partial list is dropped
		// when popped.
		m.DiscardSlab(t, o.c, r.head)
		r.head = mm.NilPFN
		if !r.onPartial {
			o.freeRecs = append(o.freeRecs, i)
		}
		return
	}
	if !r.onPartial {
		r.onPartial = true
		o.partial = append(o.partial, i)
	}
}
