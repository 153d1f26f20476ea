package mm

import (
	"sort"
	"testing"

	"github.com/pagesim/pagesim/engine/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSlabsComeFromTheirMigratetypesBlocks(t *testing.T) {
	tests := []struct {
		name        string
		reclaimable bool
		wantMT      MigrateType
		wantStat    NodeStatItem
	}{
		{name: "an unreclaimable cache takes Unmovable blocks", wantMT: MIGRATE_UNMOVABLE, wantStat: NR_SLAB_UNRECLAIMABLE_B},
		{name: "a SLAB_RECLAIM_ACCOUNT cache takes Reclaimable blocks", reclaimable: true, wantMT: MIGRATE_RECLAIMABLE, wantStat: NR_SLAB_RECLAIMABLE_B},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := smallMachine(t, 8192, 1, 1)
			tk := m.testTask(0)
			c := m.NewSlabCache("cache", nil, 3, tc.reclaimable)
			for i := 0; i < 16; i++ {
				head := m.AllocateSlab(tk, c, GFP_KERNEL, -1)
				require.NotEqual(t, NilPFN, head)
				assert.Equal(t, tc.wantMT, m.PageblockMigratetype(head))
				assert.Equal(t, Order(3), m.Folio(head).Order)
			}
			m.MustCheckInvariants()
			assert.Equal(t, uint64(128), c.Pages)
			assert.Equal(t, int64(128*PAGE_SIZE), m.GlobalNodeState(tc.wantStat))
			assert.Equal(t, uint64(64), m.FreeSlabs(tk, c, 2))
			assert.Equal(t, 8, c.NrSlabs())
			assert.Equal(t, uint64(32), m.FreeOldestSlabs(tk, c, 4))
			assert.Equal(t, uint64(32), m.FreeSlabs(tk, c, 1))
			assert.Zero(t, c.NrSlabs())
			assert.Zero(t, m.GlobalNodeState(tc.wantStat))
			m.MustCheckInvariants()
		})
	}
}

func TestSlabFallsBackToOrderZeroWhenNoHighOrderChunkIsFree(t *testing.T) {
	m := smallMachine(t, 8192, 1, 1)
	tk := m.testTask(0)
	// No watermark reserve, so that the loop below can empty the zone.
	require.NoError(t, m.SetSysctl("vm.min_free_kbytes", "0"))
	// Take every page, then give back every other one: plenty of free
	// memory, none of it in chunks above order 0. Chunks left on the
	// per-CPU lists are drained and taken too, until nothing is left.
	var got []PFN
	for took := true; took; {
		took = false
		m.DrainLocalPages(tk)
		for _, o := range []Order{0, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1} {
			for {
				pfn := m.allocSync(tk, GFP_ATOMIC, o, 0, 0)
				if pfn == NilPFN {
					break
				}
				took = true
				if o == 0 {
					got = append(got, pfn)
				}
			}
		}
	}
	sort.Slice(got, func(i, j int) bool { return got[i] < got[j] })
	for i, pfn := range got {
		if i%2 == 0 {
			m.FreePages(tk, pfn, 0)
		}
	}
	m.DrainLocalPages(tk)
	m.MustCheckInvariants()
	z := m.Nodes[0].Zones[ZONE_NORMAL]
	for o := Order(1); o < NR_PAGE_ORDERS; o++ {
		require.Zero(t, z.NrFree(o), "order %d", o)
	}
	compactStall, allocStall := m.Event(COMPACTSTALL), m.Event(ALLOCSTALL_NORMAL)
	c := m.NewSlabCache("kmalloc-8k", nil, 3, false)
	head := m.AllocateSlab(tk, c, GFP_KERNEL, -1)
	require.NotEqual(t, NilPFN, head)
	assert.Equal(t, Order(0), m.Folio(head).Order)
	assert.Equal(t, uint64(1), c.OrderFallbacks)
	assert.Equal(t, compactStall, m.Event(COMPACTSTALL), "the first attempt may not compact")
	assert.Equal(t, allocStall, m.Event(ALLOCSTALL_NORMAL), "nor reclaim")
	m.MustCheckInvariants()
}

func TestAnOrderZeroCacheRetriesWithTheCallersFullMask(t *testing.T) {
	// Below the min watermark with clean page cache to reclaim: the first
	// attempt (GFP_KERNEL|__GFP_NORETRY, order 0) reclaims one batch,
	// is still below min and gives up; allocate_slab then asks again at
	// s->min (order 0 too) with the caller's GFP_KERNEL, which reclaims
	// until the request fits.
	m := newQuietMachine(t, 8192, 1, 1)
	carveZone(t, m, nil, lowFreeFileLayout)
	z := m.Nodes[0].Zones[ZONE_NORMAL]
	require.Less(t, z.Stat[NR_FREE_PAGES]+SWAP_CLUSTER_MAX, int64(z.WmarkPages(WMARK_MIN)),
		"one reclaim batch does not lift the zone over its min watermark")
	c := m.NewSlabCache("dentry", nil, 0, true)
	var head PFN
	inWorld(t, m, 0, func(tk *sim.Task) {
		// Resume in the same step when an attempt stops at a
		// cond_resched().
		for head = m.AllocateSlab(tk, c, GFP_KERNEL, -1); m.AllocPending(tk); {
			head = m.AllocateSlab(tk, c, GFP_KERNEL, -1)
		}
	})
	require.NotEqual(t, NilPFN, head, "the retry with the caller's mask gets a slab")
	assert.Equal(t, uint64(1), c.OrderFallbacks, "stat(s, ORDER_FALLBACK), even though s->min is s->oo")
	assert.Equal(t, uint64(2), m.Slow.Entered, "two trips through the slow path")
	assert.Equal(t, uint64(1), m.Slow.Failed, "the __GFP_NORETRY one failed")
	assert.Greater(t, allocstalls(m), uint64(1), "the retry reclaimed more than once")
}

func TestFreeSlabFreesTheSlabAskedForAndKeepsTheOthers(t *testing.T) {
	m := smallMachine(t, 8192, 1, 1)
	tk := m.testTask(0)
	c := m.NewSlabCache("dentry", nil, 0, true)
	var heads []PFN
	for i := 0; i < 4; i++ {
		heads = append(heads, m.AllocateSlab(tk, c, GFP_KERNEL, -1))
	}
	assert.Equal(t, uint64(1), m.FreeSlab(tk, c, 1))
	m.MustCheckInvariants()
	assert.Equal(t, 3, c.NrSlabs())
	assert.Equal(t, uint64(3), c.Pages)
	assert.Equal(t, []PFN{heads[0], heads[3], heads[2]}, c.slabs, "the newest slab takes the freed one's place")
	assert.Zero(t, m.FreeSlab(tk, c, 3), "no slab 3")
	assert.Zero(t, m.FreeSlab(tk, c, -1))
	assert.Equal(t, 3, c.NrSlabs())
}
