package workload

import (
	"testing"

	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Seed 002's fill faults 4 KiB anonymous pages, and every 2 MiB of them
// needs a PTE page (and every 1 GiB a PMD page): GFP_PGTABLE_USER,
// unmovable, charged to the fill's cgroup. Before defrag_mode is on they
// claim free movable blocks for MIGRATE_UNMOVABLE, so after the fill the
// machine has unmovable blocks holding them, and MADV_DONTNEED of one page
// in eight leaves them where they are.
func TestThePinnedFillAllocatesItsPageTablesInUnmovableBlocks(t *testing.T) {
	m, cg, tk := fillMachine(t)
	fill := &PinnedFill{Cg: cg, Protect: 16 << 20, PinFraction: 0.98, FreeEvery: 8}
	require.NoError(t, fill.Run(m, tk))
	require.NoError(t, m.CheckInvariants())

	faulted := fill.Region.Cursor
	require.Greater(t, faulted, uint64(100_000), "the fill takes most of 512 MiB")
	want := (faulted+ptrsPerPTE-1)/ptrsPerPTE + (faulted+ptrsPerPTE*ptrsPerPMD-1)/(ptrsPerPTE*ptrsPerPMD)
	assert.Equal(t, want, fill.PageTablePages, "one PTE page per 2 MiB faulted, one PMD page per 1 GiB")
	assert.Equal(t, want, fill.PageTables.Resident, "MADV_DONTNEED frees no page table")

	unmovable := map[uint64]bool{}
	var tables uint64
	for pfn := mm.PFN(0); pfn < m.MaxPFN(); pfn++ {
		if o := m.OwnerOf(pfn); o == fill.PageTables {
			tables++
			assert.Equal(t, mm.MIGRATE_UNMOVABLE, m.PageblockMigratetype(pfn), "PTE page at %d", pfn)
			unmovable[uint64(pfn)/mm.PageblockNrPages] = true
		}
	}
	assert.Equal(t, want, tables)
	assert.GreaterOrEqual(t, len(unmovable), int(want/mm.PageblockNrPages), "the page tables fill unmovable blocks")
}

// The seed sets "memory.low = fill + 1G, so page cache beyond that stays
// reclaimable". Set before one page in eight is freed, to the whole fill,
// it protects more page cache than the free memory can hold, so no page
// cache is ever beyond it; set to what the fill holds after the free
// (LowAfterFree), the cgroup's page cache passes it after Protect bytes.
func TestThePinnedFillSetsMemoryLowBeforeOrAfterTheFree(t *testing.T) {
	for _, tc := range []struct {
		name      string
		afterFree bool
	}{
		{"the whole fill protects more page cache than fits in free memory", false},
		{"what the fill holds after the free protects Protect bytes of page cache", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, cg, tk := fillMachine(t)
			const protect = 16 << 20
			fill := &PinnedFill{Cg: cg, Protect: protect, PinFraction: 0.98, FreeEvery: 8, LowAfterFree: tc.afterFree}
			require.NoError(t, fill.Run(m, tk))
			require.NoError(t, m.CheckInvariants())
			require.Greater(t, fill.Freed, uint64(10_000))
			slack := cg.Low - cg.Usage // page cache the protection still covers
			if tc.afterFree {
				assert.Equal(t, fill.Region.Cursor-fill.Freed+protect/mm.PAGE_SIZE, cg.Low)
				assert.Less(t, slack, m.NrFreePages(), "page cache past Protect is not protected")
				assert.InDelta(t, protect/mm.PAGE_SIZE, slack, float64(fill.PageTablePages), "the slack is Protect less the page tables")
			} else {
				assert.Equal(t, fill.Region.Cursor+protect/mm.PAGE_SIZE, cg.Low)
				assert.Greater(t, slack, m.NrFreePages(), "the protection covers more page cache than free memory holds")
			}
		})
	}
}

// A zone below the fault's highest zone keeps its lowmem_reserve out of
// the fault's reach. With vm.lowmem_reserve_ratio's DMA32 entry at 8, a
// 5 GiB machine's ZONE_DMA32 keeps an eighth of ZONE_NORMAL's pages: a
// fill that aimed at the high watermarks alone ran out of memory before
// reaching them (as the seed's 32 GiB did with the default ratios).
func TestThePinnedFillLeavesTheLowmemReserveOfTheZonesBelow(t *testing.T) {
	cfg, err := mm.X86Layout(5<<30, 1, 2)
	require.NoError(t, err)
	m, err := mm.NewMachine(cfg)
	require.NoError(t, err)
	require.NoError(t, m.SetSysctl("vm.lowmem_reserve_ratio", "256 8 32 0 0"))
	tk := m.World.NewTask("setup", 0, nil, sim.Never)
	fill := &PinnedFill{Cg: m.NewMemcg("build"), Protect: 16 << 20, FreeEvery: 0}
	require.NoError(t, fill.Run(m, tk))
	require.NoError(t, m.CheckInvariants())
	dma32 := m.Nodes[0].Zones[mm.ZONE_DMA32]
	require.Greater(t, dma32.LowmemReserve[mm.GFPZone(mm.GFP_HIGHUSER_MOVABLE)], int64(50_000), "the reserve this test is about")
	assert.Greater(t, fill.Region.Cursor, uint64(1_000_000), "the fill takes most of 5 GiB")
}

// fillMachine is a booted 512 MiB one-node machine with 2 CPUs, a "build"
// cgroup and a setup task, the fill's start in the tests above.
func fillMachine(t *testing.T) (*mm.Machine, *mm.Memcg, *sim.Task) {
	t.Helper()
	cfg, err := mm.SimpleLayout(512<<20/mm.PAGE_SIZE, 1, 2)
	require.NoError(t, err)
	m, err := mm.NewMachine(cfg)
	require.NoError(t, err)
	return m, m.NewMemcg("build"), m.World.NewTask("setup", 0, nil, sim.Never)
}
