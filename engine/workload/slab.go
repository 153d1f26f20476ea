package workload

// slab.go holds the workloads' slab caches, seen from two sides.
//
// kmemCache is a kmem_cache with its objects counted per slab, as SLUB
// keeps them (linux-mm/linux-mm mm/slub.c @0349fd01). kmem_cache_alloc
// takes an object from the first slab on the node's partial list
// (get_from_partial_node walks n->partial from its head), or from a new
// slab (allocate_slab, mm.Machine.AllocateSlab), which goes on the list
// while it has free objects. kmem_cache_free (__slab_free) returns the
// object to its slab: a slab that was full goes on the list's tail
// (add_partial ADD_TO_TAIL); a slab left empty is discarded (discard_slab)
// when the list already holds s->min_partial slabs, itself counted
// (n->nr_partial >= s->min_partial), and otherwise stays on the list,
// empty, for the next allocations. do_kmem_cache_create sets
// s->min_partial to ilog2(s->size) / 2 clamped to [MIN_PARTIAL,
// MAX_PARTIAL] = [5, 10]. So a cache whose objects die one by one, in
// whatever order their users let them go, frees a slab page only when
// every object in it has gone, and keeps a few empty slabs besides.
//
// What it leaves out: the per-CPU sheaves (arrays of free objects in
// front of the slabs, which keep freed objects counted in slab->inuse
// until a sheaf is flushed: the kernel's slabs empty later than these),
// the per-node partial lists (one list for the cache), object sizes
// rounded to alignment, and the CPU time of the object operations
// (the callers charge their own).
//
// ObjectCycler churns a kmemCache's objects. SlabChurner and SlabCycler
// work on whole slabs: they allocate and free slabs as units, with no
// objects inside, as the scripts' slab and slabcycle programs do.

import (
	"math/bits"

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
		turnCycle(s.Cache.NrSlabs(), s.Lo, s.Hi, &s.shrinking, &s.Cycles)
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
	// minPartial is s->min_partial: the slabs the partial list keeps
	// before an empty slab is discarded, ilog2(objSize)/2 clamped to
	// [MIN_PARTIAL, MAX_PARTIAL] (do_kmem_cache_create).
	minPartial int
	slabs      []slab
	// partialHead and partialTail are the ends of the partial list
	// (s->node[]->partial, linked through slab.prev and slab.next, -1
	// when empty); nrPartial is its length (n->nr_partial). A slab is
	// on it exactly when it has a free object and has not been
	// discarded: full slabs are on no list.
	partialHead, partialTail int32
	nrPartial                int
	// freeRecs recycles the records of discarded slabs.
	freeRecs []int32
	// Objects counts live objects.
	Objects uint64
}

// The partial list's bounds (mm/slub.c).
const (
	MIN_PARTIAL = 5
	MAX_PARTIAL = 10
)

// slab is a struct slab: its head page, slab->inuse (objects allocated)
// and slab->objects (its capacity). head is mm.NilPFN once the slab was
// discarded. prev and next link it on the partial list (-1 at the
// ends) while onPartial is set.
type slab struct {
	head           mm.PFN
	inuse, objects uint32
	prev, next     int32
	onPartial      bool
}

// kmemCacheCreate is kmem_cache_create: a cache of objSize-byte objects
// whose slabs have the order SLUB picks for that size on cpus CPUs
// (calculate_order), charged to cg (nil: root), SLAB_RECLAIM_ACCOUNT when
// reclaimable, with s->min_partial as do_kmem_cache_create sets it. Its
// slabs are asked for with gfp, the mask its callers' kmem_cache_alloc
// passes (allocate_slab adds the cache's own flags).
func kmemCacheCreate(m *mm.Machine, name string, cg *mm.Memcg, objSize uint64, reclaimable bool, cpus int, gfp mm.GFP) *kmemCache {
	c := m.NewSlabCache(name, cg, mm.SlubOrder(objSize, cpus), reclaimable)
	minPartial := min(max(bits.Len64(max(objSize, 1))-1, 0)/2, MAX_PARTIAL)
	return &kmemCache{c: c, objSize: objSize, gfp: gfp, minPartial: max(minPartial, MIN_PARTIAL),
		partialHead: -1, partialTail: -1}
}

// kmemCacheAlloc takes an object (kmem_cache_alloc): from the first slab
// on the partial list (get_from_partial_node walks it from its head), or
// from a new slab, which goes on the list's head while it has free
// objects. It returns the slab's index, or -1 with m.AllocPending(t) set
// when the slab allocation stopped at a cond_resched() (call again), or
// -1 when it failed.
func (o *kmemCache) kmemCacheAlloc(m *mm.Machine, t *sim.Task) int32 {
	if i := o.partialHead; i >= 0 {
		r := &o.slabs[i]
		r.inuse++
		o.Objects++
		if r.inuse == r.objects {
			o.removePartial(i)
		}
		return i
	}
	head := m.AllocateSlab(t, o.c, o.gfp, -1)
	if head == mm.NilPFN {
		return -1
	}
	i := o.store(slab{head: head, inuse: 1, objects: o.objsPerSlab(), prev: -1, next: -1})
	o.Objects++
	if o.slabs[i].inuse < o.slabs[i].objects {
		o.addPartial(i, true)
	}
	return i
}

// objsPerSlab is the objects a slab of the order the cache's latest slab
// got holds (oo_objects).
func (o *kmemCache) objsPerSlab() uint32 {
	return uint32((mm.PAGE_SIZE << o.c.LastOrder) / o.objSize)
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

// newSlab files a slab that an allocation resumed after its caller moved
// on got: empty, at the head of the partial list, where the next
// allocation takes from.
func (o *kmemCache) newSlab(head mm.PFN) {
	i := o.store(slab{head: head, objects: o.objsPerSlab(), prev: -1, next: -1})
	o.addPartial(i, true)
}

// addPartial is add_partial(): slab i goes on the partial list, at its
// head (ADD_TO_HEAD) or its tail (ADD_TO_TAIL).
func (o *kmemCache) addPartial(i int32, toHead bool) {
	r := &o.slabs[i]
	r.onPartial = true
	o.nrPartial++
	if toHead {
		r.prev, r.next = -1, o.partialHead
		if o.partialHead >= 0 {
			o.slabs[o.partialHead].prev = i
		} else {
			o.partialTail = i
		}
		o.partialHead = i
		return
	}
	r.prev, r.next = o.partialTail, -1
	if o.partialTail >= 0 {
		o.slabs[o.partialTail].next = i
	} else {
		o.partialHead = i
	}
	o.partialTail = i
}

// removePartial is remove_partial(): slab i leaves the partial list.
func (o *kmemCache) removePartial(i int32) {
	r := &o.slabs[i]
	if r.prev >= 0 {
		o.slabs[r.prev].next = r.next
	} else {
		o.partialHead = r.next
	}
	if r.next >= 0 {
		o.slabs[r.next].prev = r.prev
	} else {
		o.partialTail = r.prev
	}
	r.prev, r.next, r.onPartial = -1, -1, false
	o.nrPartial--
}

// kmemCacheFree returns an object to slab i (kmem_cache_free, __slab_free):
// a slab that was full goes on the partial list's tail (ADD_TO_TAIL); a
// slab left empty is discarded (discard_slab) when the partial list
// already holds s->min_partial slabs, and otherwise stays on it, empty.
func (o *kmemCache) kmemCacheFree(m *mm.Machine, t *sim.Task, i int32) {
	r := &o.slabs[i]
	wasFull := r.inuse == r.objects
	r.inuse--
	o.Objects--
	if r.inuse == 0 && o.nrPartial >= o.minPartial {
		if !wasFull {
			o.removePartial(i)
		}
		m.DiscardSlab(t, o.c, r.head)
		r.head = mm.NilPFN
		o.freeRecs = append(o.freeRecs, i)
		return
	}
	if wasFull {
		o.addPartial(i, false)
	}
}

// NrSlabs returns the slabs the cache holds.
func (o *kmemCache) NrSlabs() int { return o.c.NrSlabs() }

// ObjectCycler is a cache of objects that grows and shrinks, the way the
// dentry and inode caches do under a workload that creates, looks up and
// deletes many files: it allocates Batch objects per step
// (kmem_cache_alloc) until the cache holds Hi objects, then frees Batch
// objects per step (kmem_cache_free) until it holds Lo, and so on. The
// objects it frees die in random order (drawn from Rand: files are
// deleted in whatever order the workload deletes them, not in the order
// their objects were allocated), and a slab goes back to the page
// allocator only when its last object has gone and the partial list is
// full (__slab_free), so a cache shrunk to half its objects keeps most of
// its slabs, each half used, and grows back into them. Ops counts objects
// allocated, Failed the allocations that got nothing (allocate_slab
// failed); Cycles counts completed grow-and-shrink cycles.
//
// With a Shrinker (NewObjectCycler's shrink), the objects are also unused
// inodes on the superblock's LRU list, and reclaim frees them through
// shrink_slab as the superblock shrinker does, oldest first: pagesim
// puts an object on the list's tail when it is allocated, standing for a
// file created, closed and its dentry pruned in that order (the kernel
// adds an inode in iput_final() once its last reference goes;
// list_lru_add appends, linux-mm/linux-mm mm/list_lru.c @15ac173c), and
// super_cache_scan walks it from the head
// (__list_lru_walk_one, prune_icache_sb in fs/inode.c, prune_dcache_sb in
// fs/dcache.c), freeing each unreferenced object it passes
// (inode_lru_isolate: none of these is used again, so none has
// I_REFERENCED or i_count); it needs __GFP_FS and returns SHRINK_STOP
// without it (super_cache_scan, fs/super.c). Objects allocated one after
// the other share slabs, so the walk empties the oldest slabs whole where
// random deletions empty almost none. Shrunk counts the objects it freed.
// Simplified: one list for the machine (the kernel keeps one per node and
// cgroup; the cache is the root's), and the dentry that pins an inode in
// the kernel until the dentry is pruned first is not modelled.
type ObjectCycler struct {
	Progress
	M        *mm.Machine
	cache    *kmemCache
	Lo, Hi   int
	Batch    int
	Rand     *sim.Rand
	Interval sim.Time
	Cycles   uint64
	// Shrinker is the cache's superblock shrinker (nil: none); Shrunk
	// counts the objects it freed.
	Shrinker *mm.Shrinker
	Shrunk   uint64

	// live holds each live object's record index, in no order; objs
	// holds the records (a free record's slab is -1), freeObjs the free
	// ones. lru links the live objects (record indexes) oldest first
	// while Shrinker is set: a list_lru, head the oldest, n its nr_items.
	live     []int32
	objs     []cycObj
	freeObjs []int32
	lru      lruList
	// pend: the batch's slab allocation stopped at a cond_resched().
	pend               bool
	shrinking, inBatch bool
	done               int
}

// cycObj is one live object of an ObjectCycler: its slab's index in the
// cache, its place in live (pos), and its LRU links (record indexes, -1
// at the ends).
type cycObj struct {
	slab, pos  int32
	prev, next int32
}

// NewObjectCycler returns an ObjectCycler on a new cache (kmem_cache_create)
// of objSize-byte objects, unmovable or SLAB_RECLAIM_ACCOUNT, whose slabs
// are asked for with gfp, with the slab order SLUB picks for the size on
// m's CPUs. With shrink, a reclaimable cache's objects are on an LRU list
// that a registered superblock shrinker (DEFAULT_SEEKS, memcg aware)
// frees oldest first.
func NewObjectCycler(m *mm.Machine, name string, objSize uint64, reclaimable bool, gfp mm.GFP, lo, hi, batch int, r *sim.Rand, interval sim.Time, shrink bool) *ObjectCycler {
	c := kmemCacheCreate(m, name, nil, objSize, reclaimable, m.NrCPUs(), gfp)
	s := &ObjectCycler{M: m, cache: c, Lo: lo, Hi: hi, Batch: batch, Rand: r, Interval: interval,
		lru: newLRU()}
	if shrink && reclaimable {
		s.Shrinker = &mm.Shrinker{Name: "super_cache-" + name, Seeks: mm.DEFAULT_SEEKS, MemcgAware: true,
			Ops: objectCyclerShrinker{s}}
		m.RegisterShrinker(s.Shrinker)
	}
	return s
}

// ObjectsPerSlab is the objects a slab of the cache's preferred order
// holds (oo_objects(s->oo)).
func (s *ObjectCycler) ObjectsPerSlab() int {
	return int((mm.PAGE_SIZE << s.cache.c.Order) / s.cache.objSize)
}

// SlabCache is the cache as the page allocator sees it.
func (s *ObjectCycler) SlabCache() *mm.SlabCache { return s.cache.c }

// Objects returns the live objects.
func (s *ObjectCycler) Objects() int { return len(s.live) }

// Step allocates or frees one batch (or resumes an allocation that stopped
// at a cond_resched()).
func (s *ObjectCycler) Step(w *sim.World, t *sim.Task) sim.Time {
	s.begin(t)
	if !s.inBatch {
		turnCycle(len(s.live), s.Lo, s.Hi, &s.shrinking, &s.Cycles)
		s.inBatch, s.done = true, 0
	}
	for ; s.done < max(s.Batch, 1); s.done++ {
		if s.shrinking {
			if k := len(s.live); k > s.Lo {
				s.free(t, s.live[s.Rand.Intn(k)])
			}
			continue
		}
		if s.pend {
			// The slab allocation that stopped at a cond_resched()
			// goes on as itself: the shrinker may have put slabs on
			// the partial list meanwhile.
			head := s.M.AllocateSlab(t, s.cache.c, s.cache.gfp, -1)
			if s.M.AllocPending(t) {
				return sim.Resched
			}
			s.pend = false
			if head == mm.NilPFN {
				s.Failed++
				continue
			}
			s.cache.newSlab(head)
		}
		i := s.cache.kmemCacheAlloc(s.M, t)
		if s.M.AllocPending(t) {
			s.pend = true
			return sim.Resched
		}
		if i < 0 {
			s.Failed++
			continue
		}
		s.add(i)
		s.Ops++
	}
	s.inBatch = false
	return next(t, s.Interval)
}

// add files a new object of slab i: in live, and on the LRU's tail when
// the cache has a shrinker (list_lru_add).
func (s *ObjectCycler) add(i int32) {
	id := int32(len(s.objs))
	if k := len(s.freeObjs); k > 0 {
		id = s.freeObjs[k-1]
		s.freeObjs = s.freeObjs[:k-1]
	} else {
		s.objs = append(s.objs, cycObj{})
	}
	s.objs[id] = cycObj{slab: i, pos: int32(len(s.live)), prev: -1, next: -1}
	s.live = append(s.live, id)
	if s.Shrinker == nil {
		return
	}
	o := &s.objs[id]
	o.prev = s.lru.tail
	if s.lru.tail >= 0 {
		s.objs[s.lru.tail].next = id
	} else {
		s.lru.head = id
	}
	s.lru.tail = id
	s.lru.n++
}

// free frees object id (kmem_cache_free), taking it out of live and off
// the LRU.
func (s *ObjectCycler) free(t *sim.Task, id int32) {
	o := &s.objs[id]
	k := len(s.live) - 1
	last := s.live[k]
	s.live[o.pos] = last
	s.objs[last].pos = o.pos
	s.live = s.live[:k]
	if s.Shrinker != nil {
		if o.prev >= 0 {
			s.objs[o.prev].next = o.next
		} else {
			s.lru.head = o.next
		}
		if o.next >= 0 {
			s.objs[o.next].prev = o.prev
		} else {
			s.lru.tail = o.prev
		}
		s.lru.n--
	}
	slab := o.slab
	*o = cycObj{slab: -1, pos: -1, prev: -1, next: -1}
	s.freeObjs = append(s.freeObjs, id)
	s.cache.kmemCacheFree(s.M, t, slab)
}

// objectCyclerShrinker is an ObjectCycler's superblock shrinker callbacks
// (super_cache_count, super_cache_scan).
type objectCyclerShrinker struct{ s *ObjectCycler }

// CountObjects is super_cache_count(): the objects on the LRU, for the
// root cgroup (the cache's), with vfs_cache_pressure at its default 100.
func (c objectCyclerShrinker) CountObjects(sc *mm.ShrinkControl) uint64 {
	if sc.Memcg != nil && sc.Memcg != c.s.M.RootMemcg() {
		return 0
	}
	return c.s.lru.n
}

// ScanObjects is super_cache_scan() and prune_icache_sb(): without
// __GFP_FS, SHRINK_STOP; otherwise walk sc.NrToScan objects from the
// LRU's head, freeing each.
func (c objectCyclerShrinker) ScanObjects(t *sim.Task, sc *mm.ShrinkControl) (uint64, bool) {
	if sc.GFP&gfpFS == 0 {
		return 0, true
	}
	s := c.s
	var walked uint64
	for walked < sc.NrToScan && s.lru.head >= 0 {
		t.Charge(s.M.Cost.ShrinkObject)
		s.free(t, s.lru.head)
		walked++
	}
	s.Shrunk += walked
	sc.NrScanned = walked
	return walked, false
}

// turnCycle turns a grow-and-shrink cycle (SlabCycler, ObjectCycler) at
// its ends: it starts shrinking once n reaches hi, and growing again, one
// cycle done, once n is down to lo.
func turnCycle(n, lo, hi int, shrinking *bool, cycles *uint64) {
	switch {
	case !*shrinking && n >= hi:
		*shrinking = true
	case *shrinking && n <= lo:
		*shrinking = false
		*cycles++
	}
}
