package mm

// slab.go models the page-level side of mm/slub.c: a kmem_cache takes whole
// slabs (compound pages of the cache's order) from the page allocator and
// gives them back when they are empty. Objects inside a slab are not
// modelled; what matters to the allocator is which pages a cache holds, with
// which GFP mask they were asked for, and that they never move: slab pages
// are unmovable (or, for SLAB_RECLAIM_ACCOUNT caches such as dentries and
// inodes, reclaimable), so a slab left in a Movable pageblock after a
// fallback pins that block's migratetype history, and a cache that frees
// only some of its slabs leaves unmovable pageblocks half used.
//
// AllocateSlab is allocate_slab(): the cache's preferred order s->oo is
// tried first with __GFP_NOWARN|__GFP_NORETRY and without __GFP_NOFAIL, and
// when the caller could reclaim, without __GFP_RECLAIM at all and with
// __GFP_NOMEMALLOC ("let the initial higher-order allocation fail under
// memory pressure so we fall back to the minimum order allocation"); on
// failure the minimum order s->min is tried with the caller's mask
// (stat ORDER_FALLBACK), even when s->min is s->oo: an order-0 cache's page
// is asked for once with __GFP_NORETRY and, if that fails, again with the
// caller's full mask. s->allocflags adds __GFP_COMP and, for reclaimable
// caches, __GFP_RECLAIMABLE. (linux-mm/linux-mm mm/slub.c @0349fd01
// allocate_slab.)
//
// What the model leaves out: per-CPU and partial slabs (a slab is either
// allocated or freed), object accounting (a caller that tracks its objects
// frees a slab with FreeSlab when its last object goes, as discard_slab
// does), and memcg charging of slab pages (kmem accounting): they are
// charged to the cache's cgroup as pages, which only changes
// memory.current. Reclaimable slab is shrunk only through a registered
// Shrinker (vmscan.go's shrink_slab), whose owner frees the slabs its
// objects emptied.

import (
	"math/bits"

	"github.com/pagesim/pagesim/engine/sim"
)

// SlabCache is a kmem_cache as the page allocator sees it.
type SlabCache struct {
	Name  string
	Owner *Owner
	// Order is oo_order(s->oo), the preferred slab order; MinOrder is
	// oo_order(s->min).
	Order, MinOrder Order
	// Reclaimable is SLAB_RECLAIM_ACCOUNT.
	Reclaimable bool
	// slabs holds the head PFN of every allocated slab, oldest first.
	slabs []PFN
	// Pages counts base pages held; OrderFallbacks counts ORDER_FALLBACK;
	// Failed counts allocate_slab calls that got nothing.
	Pages          uint64
	OrderFallbacks uint64
	Failed         uint64
	// LastOrder is the order of the slab the latest successful
	// AllocateSlab got (s->oo's or, after a fallback, s->min's).
	LastOrder Order
}

// SlubOrder is the slab order mm/slub.c's calculate_order() picks for
// objects of objSize bytes on a machine with nrCPUs CPUs: the smallest order
// up to slub_max_order (PAGE_ALLOC_COSTLY_ORDER) whose slab holds
// min_objects = 4 * (fls(nr_cpu_ids) + 1) objects, else the largest
// (linux-mm/linux-mm mm/slub.c @0349fd01; the leftover-fraction test,
// which only raises the order for awkward sizes, is left out).
func SlubOrder(objSize uint64, nrCPUs int) Order {
	minObjects := uint64(4 * (bits.Len(uint(max(nrCPUs, 1))) + 1))
	for o := Order(0); o < PAGE_ALLOC_COSTLY_ORDER; o++ {
		if (PAGE_SIZE<<o)/max(objSize, 1) >= minObjects {
			return o
		}
	}
	return PAGE_ALLOC_COSTLY_ORDER
}

// NewSlabCache creates a cache (kmem_cache_create) whose slabs have the
// given preferred order and minimum order 0, charged to cg (nil: root).
func (m *Machine) NewSlabCache(name string, cg *Memcg, order Order, reclaimable bool) *SlabCache {
	kind := KindSlab
	if reclaimable {
		kind = KindSlabReclaim
	}
	if order > MAX_PAGE_ORDER {
		order = MAX_PAGE_ORDER
	}
	return &SlabCache{Name: name, Owner: m.NewOwner(kind, name, cg), Order: order, Reclaimable: reclaimable}
}

// allocflags is s->allocflags.
func (c *SlabCache) allocflags() GFP {
	g := __GFP_COMP
	if c.Reclaimable {
		g |= __GFP_RECLAIMABLE
	}
	return g
}

// AllocateSlab is allocate_slab(s, gfp, node): one new slab for the cache,
// preferring node nid (-1: the task's node). It returns the slab's head PFN
// or NilPFN (with AllocPending(t) when an attempt stopped at a
// cond_resched(): call again).
func (m *Machine) AllocateSlab(t *sim.Task, c *SlabCache, gfp GFP, nid int) PFN {
	flags := gfp | c.allocflags()
	oo := c.Order
	allocGFP := (flags | __GFP_NOWARN | __GFP_NORETRY) &^ __GFP_NOFAIL
	if allocGFP&__GFP_DIRECT_RECLAIM != 0 && oo > c.MinOrder {
		allocGFP = (allocGFP | __GFP_NOMEMALLOC) &^ __GFP_RECLAIM
	}
	// Resuming the fallback attempt skips the first.
	head := NilPFN
	if pgfp, po, ok := m.pendingAlloc(t); !ok || pgfp != flags || po != c.MinOrder || (allocGFP == flags && oo == c.MinOrder) {
		head = m.AllocOwned(t, c.Owner, allocGFP, oo, nid, 0)
		if m.AllocPending(t) {
			return NilPFN
		}
	}
	if head == NilPFN {
		// "Allocation may have failed due to fragmentation. Try a
		// lower order alloc if possible": unconditionally, so a cache
		// whose s->oo is s->min asks again, now with the caller's
		// mask and no __GFP_NORETRY.
		oo = c.MinOrder
		head = m.AllocOwned(t, c.Owner, flags, oo, nid, 0)
		if m.AllocPending(t) {
			return NilPFN
		}
		if head != NilPFN {
			c.OrderFallbacks++
		}
	}
	if head == NilPFN {
		c.Failed++
		return NilPFN
	}
	c.slabs = append(c.slabs, head)
	c.Pages += oo.Pages()
	c.LastOrder = oo
	return head
}

// DiscardSlab frees the cache's slab whose head is head (discard_slab once
// its last object is freed) and returns the base pages freed; 0 if the
// cache holds no such slab. The pages count as reclaimed slab
// (reclaim_state) for a shrinker's reclaimer.
func (m *Machine) DiscardSlab(t *sim.Task, c *SlabCache, head PFN) uint64 {
	for i := len(c.slabs) - 1; i >= 0; i-- {
		if c.slabs[i] != head {
			continue
		}
		n := m.folioNr(head)
		m.FreeOwned(t, head)
		c.slabs = append(c.slabs[:i], c.slabs[i+1:]...)
		c.Pages -= n
		m.slabReclaimed += n
		return n
	}
	return 0
}

// FreeSlabs frees every nth slab of the cache, oldest first (n = 1 frees
// them all), as discard_slab does for slabs that became empty. It returns
// the base pages freed.
func (m *Machine) FreeSlabs(t *sim.Task, c *SlabCache, every int) uint64 {
	if every < 1 {
		every = 1
	}
	var freed uint64
	kept := c.slabs[:0]
	for i, head := range c.slabs {
		if (i+1)%every != 0 {
			kept = append(kept, head)
			continue
		}
		freed += m.folioNr(head)
		m.FreeOwned(t, head)
	}
	c.slabs = kept
	c.Pages -= freed
	return freed
}

// FreeOldestSlabs frees the n oldest slabs (a churning cache's turnover)
// and returns the base pages freed.
func (m *Machine) FreeOldestSlabs(t *sim.Task, c *SlabCache, n int) uint64 {
	if n > len(c.slabs) {
		n = len(c.slabs)
	}
	var freed uint64
	for _, head := range c.slabs[:n] {
		freed += m.folioNr(head)
		m.FreeOwned(t, head)
	}
	c.slabs = append(c.slabs[:0], c.slabs[n:]...)
	c.Pages -= freed
	return freed
}

// NrSlabs returns the number of slabs the cache holds.
func (c *SlabCache) NrSlabs() int { return len(c.slabs) }

// FreeSlab frees the cache's i-th slab (0 is the oldest), as discard_slab
// does for a slab whose last object was freed, and returns the base pages
// freed. The newest slab takes the freed one's place in the order.
func (m *Machine) FreeSlab(t *sim.Task, c *SlabCache, i int) uint64 {
	if i < 0 || i >= len(c.slabs) {
		return 0
	}
	head := c.slabs[i]
	freed := m.folioNr(head)
	m.FreeOwned(t, head)
	last := len(c.slabs) - 1
	c.slabs[i] = c.slabs[last]
	c.slabs = c.slabs[:last]
	c.Pages -= freed
	m.slabReclaimed += freed
	return freed
}
