package workload

import (
	"testing"

	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fillSlabs allocates objects of o until it holds n full slabs and returns
// each slab's objects' slab index, oldest slab first.
func fillSlabs(t *testing.T, m *mm.Machine, tk *sim.Task, o *kmemCache, n int) []int32 {
	t.Helper()
	var order []int32
	for o.c.NrSlabs() < n || o.partialHead >= 0 {
		i := o.kmemCacheAlloc(m, tk)
		require.GreaterOrEqual(t, i, int32(0))
		if len(order) == 0 || order[len(order)-1] != i {
			order = append(order, i)
		}
	}
	return order
}

func TestAKmemCacheDiscardsAnEmptySlabOnlyPastMinPartial(t *testing.T) {
	m := small(t)
	tk := m.World.NewTask("t", 0, nil, sim.Never)
	// 192-byte objects: ilog2(192)/2 = 3, raised to MIN_PARTIAL.
	o := kmemCacheCreate(m, "dentry", nil, 192, true, 2, mm.GFP_KERNEL)
	require.Equal(t, MIN_PARTIAL, o.minPartial)
	per := int(o.objsPerSlab())
	order := fillSlabs(t, m, tk, o, 8)
	require.Len(t, order, 8)
	require.Equal(t, 0, o.nrPartial, "full slabs are on no list")

	// Freeing a full slab's objects one by one puts it on the partial
	// list at the first; it is discarded at the last only when the list
	// then holds min_partial slabs, itself included (__slab_free).
	for k, i := range order[:6] {
		for j := 0; j < per; j++ {
			o.kmemCacheFree(m, tk, i)
			if j < per-1 {
				assert.Equal(t, 8-max(k-4, 0), o.c.NrSlabs(), "slab %d keeps its page while it holds an object", k)
			}
		}
		if k < MIN_PARTIAL-1 {
			assert.Equal(t, 8, o.c.NrSlabs(), "empty slab %d stays on a partial list of %d", k, o.nrPartial)
			assert.Equal(t, k+1, o.nrPartial)
		} else {
			assert.Equal(t, 8-(k-3), o.c.NrSlabs(), "empty slab %d is discarded: the list held %d", k, MIN_PARTIAL)
			assert.Equal(t, MIN_PARTIAL-1, o.nrPartial)
		}
	}
	require.NoError(t, m.CheckInvariants())
	// An allocation takes from the partial list's head: the slab that
	// went on it first.
	assert.Equal(t, order[0], o.kmemCacheAlloc(m, tk))
}

func TestAKmemCacheWhoseObjectsDieAtRandomKeepsMostOfItsSlabs(t *testing.T) {
	m := small(t)
	// ext4_inode_cache-sized objects: order-2 slabs of 14 on 2 CPUs.
	s := NewObjectCycler(m, "ext4_inode_cache", 1152, true, mm.GFP_KERNEL, 0, 0, 50, sim.NewRand(1), sim.Millisecond, false)
	per := s.ObjectsPerSlab()
	require.Equal(t, 14, per)
	s.Hi, s.Lo = 100*per, 50*per
	m.World.NewTask("cycler", 1, s, 0)
	var peak, atLo int
	for s.Cycles < 1 {
		m.World.Step()
		require.NoError(t, m.CheckInvariants())
		peak = max(peak, s.SlabCache().NrSlabs())
		if s.shrinking {
			atLo = s.SlabCache().NrSlabs()
		}
	}
	assert.Equal(t, 100, peak, "the objects fill whole slabs as they grow")
	// Freeing half the objects at random empties almost no slab (one
	// loses all 14 of its objects with probability about 2^-14): the
	// cache keeps nearly all 100 slabs where freeing whole slabs would
	// keep 50.
	assert.GreaterOrEqual(t, atLo, 95)
	// The step that found the shrink done allocated its batch.
	assert.Equal(t, uint64(50*per+50), s.cache.Objects)
	// Growing back fills the holes before it asks for a new slab.
	for len(s.live) < s.Hi {
		m.World.Step()
	}
	assert.Equal(t, 100, s.SlabCache().NrSlabs())
}

// With the superblock shrinker, reclaim frees a reclaimable cache's
// objects oldest first (list_lru_add appends, __list_lru_walk_one walks
// from the head): the objects allocated one after the other filled the
// oldest slabs, so the walk empties them whole and their pages go back,
// where as many random deletions empty almost none. A caller without
// __GFP_FS gets SHRINK_STOP.
func TestTheObjectCyclersShrinkerFreesTheOldestObjectsAndEmptiesTheirSlabs(t *testing.T) {
	for _, shrink := range []bool{true, false} {
		m := small(t)
		s := NewObjectCycler(m, "ext4_inode_cache", 1152, true, mm.GFP_KERNEL, 0, 0, 50, sim.NewRand(1), sim.Millisecond, shrink)
		per := s.ObjectsPerSlab()
		s.Hi, s.Lo = 100*per, 50*per
		m.World.NewTask("cycler", 1, s, 0)
		for s.Objects() < s.Hi {
			m.World.Step()
			require.NoError(t, m.CheckInvariants())
		}
		require.Equal(t, 100, s.SlabCache().NrSlabs())
		if !shrink {
			assert.Nil(t, s.Shrinker, "no shrinker asked for")
			continue
		}
		require.NotNil(t, s.Shrinker)
		kt := m.World.NewTask("kswapd-like", 0, nil, sim.Never)
		sc := &mm.ShrinkControl{GFP: mm.GFP_NOFS, Memcg: m.RootMemcg(), NrToScan: 128}
		freed, stop := s.Shrinker.Ops.ScanObjects(kt, sc)
		assert.True(t, stop, "GFP_NOFS: SHRINK_STOP")
		assert.Zero(t, freed)
		assert.Equal(t, uint64(s.Objects()), s.Shrinker.Ops.CountObjects(sc), "every live object is unused, on the LRU")
		// Half the objects, walked from the LRU's head in batches.
		for s.Objects() > s.Lo {
			sc = &mm.ShrinkControl{GFP: mm.GFP_KERNEL, Memcg: m.RootMemcg(), NrToScan: uint64(min(128, s.Objects()-s.Lo))}
			freed, stop = s.Shrinker.Ops.ScanObjects(kt, sc)
			require.False(t, stop)
			require.Equal(t, sc.NrToScan, freed, "none is referenced: every object walked is freed")
			require.NoError(t, m.CheckInvariants())
		}
		assert.Equal(t, uint64(50*per), s.Shrunk)
		// The 50 oldest slabs emptied; the partial list kept
		// min_partial - 1 of them (__slab_free discards an empty slab
		// once the list holds min_partial, itself counted), the others
		// went back to the page allocator.
		assert.Equal(t, 50+s.cache.minPartial-1, s.SlabCache().NrSlabs())
		// Growing back refills the empty slabs kept on the partial
		// list first, then asks for new ones.
		for s.Objects() < s.Hi {
			m.World.Step()
		}
		assert.Equal(t, 100, s.SlabCache().NrSlabs())
		require.NoError(t, m.CheckInvariants())
	}
}
