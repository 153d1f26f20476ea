package mm

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// freeListPFNs returns a free list's chunks from head to tail.
func freeListPFNs(m *Machine, z *Zone, order Order, mt MigrateType) []PFN {
	var out []PFN
	for pfn := z.freeArea[order].list[mt].head; pfn != NilPFN; pfn = m.pages[pfn].next {
		out = append(out, pfn)
	}
	return out
}

func bootX86(t *testing.T, seed uint64, boot BootConfig) *Machine {
	cfg, err := X86Layout(1<<30, 2, 2)
	require.NoError(t, err)
	cfg.Seed, cfg.Boot = seed, boot
	m, err := NewMachine(cfg)
	require.NoError(t, err)
	mustCheck(t, m, "after boot")
	return m
}

func TestKASLRPutsTheKernelImageInA2MiBSlotOfAnyZone(t *testing.T) {
	pristine := bootX86(t, 1, BootConfig{})
	require.Zero(t, pristine.kernelImage.nr, "without KASLR the image stays among DMA32's reservations")
	var managed uint64
	for _, z := range pristine.Zones() {
		managed += z.ManagedPages
	}
	nodes := map[int]bool{}
	slots := map[PFN]bool{}
	for seed := uint64(1); seed <= 20; seed++ {
		m := bootX86(t, seed, BootConfig{KASLR: true})
		img := m.kernelImage
		require.Equal(t, uint64(4096), img.nr)
		assert.Zero(t, img.start%512, "CONFIG_PHYSICAL_ALIGN is 2 MiB")
		assert.GreaterOrEqual(t, img.start, PFN(4096), "above LOAD_PHYSICAL_ADDR")
		z := m.ZoneOf(img.start)
		require.NotNil(t, z)
		assert.Same(t, z, m.ZoneOf(img.start+PFN(img.nr)-1), "the image lies in one zone")
		for pfn := img.start; pfn < img.start+PFN(img.nr); pfn++ {
			require.Equal(t, pgReserved, m.pages[pfn].flags, "PFN %#x of the image is reserved", pfn)
		}
		var sum uint64
		for _, z := range m.Zones() {
			sum += z.ManagedPages
		}
		assert.Equal(t, managed, sum, "the image moved; it did not grow or shrink")
		assert.Equal(t, pristine.NrFreePages(), m.NrFreePages())
		nodes[z.Node.ID] = true
		slots[img.start] = true
		if seed <= 3 {
			assert.Equal(t, img, bootX86(t, seed, BootConfig{KASLR: true}).kernelImage, "the same seed, the same slot")
		}
	}
	assert.Len(t, nodes, 2, "the image lands on either node")
	assert.Greater(t, len(slots), 15, "slots are drawn from all of RAM")
}

func TestDeferredInitInterleavesTheThreadsBlocks(t *testing.T) {
	boot := func(seed uint64, b BootConfig) (*Machine, []PFN) {
		cfg, err := SimpleLayout(16*uint64(pagesPerSection), 1, 4)
		require.NoError(t, err)
		cfg.Seed, cfg.Boot = seed, b
		m, err := NewMachine(cfg)
		require.NoError(t, err)
		mustCheck(t, m, "after boot")
		z := m.Nodes[0].Zones[ZONE_NORMAL]
		return m, freeListPFNs(m, z, MAX_PAGE_ORDER, MIGRATE_MOVABLE)
	}
	_, pfnOrder := boot(1, BootConfig{})
	for i := 1; i < len(pfnOrder); i++ {
		require.Greater(t, pfnOrder[i], pfnOrder[i-1], "one thread frees in PFN order")
	}
	_, single := boot(2, BootConfig{DeferredInitMultithreaded: false})
	assert.Equal(t, pfnOrder, single)

	mA, a := boot(1, BootConfig{DeferredInitMultithreaded: true})
	_, a2 := boot(1, BootConfig{DeferredInitMultithreaded: true})
	_, b := boot(2, BootConfig{DeferredInitMultithreaded: true})
	assert.Equal(t, a, a2, "the same seed, the same order")
	assert.NotEqual(t, a, b, "another seed, another order")
	assert.ElementsMatch(t, pfnOrder, a, "the same blocks are free")
	assert.NotEqual(t, pfnOrder, a)

	// memblock_free_all frees up to the first section boundary after a
	// whole section (first_deferred_pfn) early, in PFN order.
	z := mA.Nodes[0].Zones[ZONE_NORMAL]
	first := (z.StartPFN + 2*pagesPerSection - 1) &^ (pagesPerSection - 1)
	early := 0
	for early < len(pfnOrder) && pfnOrder[early] < first {
		early++
	}
	require.Positive(t, early)
	assert.Equal(t, pfnOrder[:early], a[:early])
	// The rest, under 15 sections, with 4 threads: chunks of
	// max(15/16, 1) = 1 section; a thread frees its chunk in PFN order.
	last := map[PFN]PFN{}
	for _, pfn := range a[early:] {
		require.GreaterOrEqual(t, pfn, first)
		chunk := (pfn - first) / pagesPerSection
		assert.Greater(t, pfn+1, last[chunk], "chunk %d in PFN order", chunk)
		last[chunk] = pfn + 1
	}
}

func TestPadataInterleaveSplitsLikePadataDoMultithreaded(t *testing.T) {
	// 40 sections from PFN 0, 8 threads: chunk_size = 40/(8*4) sections,
	// at least one, rounded up to a section: 2 sections; at most 8
	// threads work at once, each on consecutive blocks of its chunk.
	var chunks []bootChunk
	for pfn := PFN(0); pfn < 40*pagesPerSection; pfn += MAX_ORDER_NR_PAGES {
		chunks = append(chunks, bootChunk{pfn, MAX_PAGE_ORDER})
	}
	m := newQuietMachine(t, 4096, 1, 1)
	out := padataInterleave(chunks, 8, m.World.Stream("test"))
	require.Len(t, out, len(chunks))
	assert.ElementsMatch(t, chunks, out)
	// The first blocks out belong to the first 8 chunks only.
	for _, c := range out[:8] {
		assert.Less(t, c.pfn, 16*pagesPerSection, "chunk %d started before the first eight were taken", c.pfn/(2*pagesPerSection))
	}
	// One thread: PFN order.
	assert.Equal(t, chunks, padataInterleave(chunks, 1, m.World.Stream("test")))
}

func TestEveryEnumNamesItsValuesAndAValuePastThemWithoutPanicking(t *testing.T) {
	for _, tc := range []struct {
		name string
		got  func() string
		want string
	}{
		{"a migratetype as /proc/pagetypeinfo spells it", MIGRATE_MOVABLE.String, "Movable"},
		{"a migratetype past MIGRATE_TYPES", MigrateType(MIGRATE_TYPES).String, "MigrateType(6)"},
		{"a zone type as zoneinfo spells it", ZONE_NORMAL.String, "Normal"},
		{"a zone type past MAX_NR_ZONES", MAX_NR_ZONES.String, "ZoneType(5)"},
		{"an LRU list", LRU_ACTIVE_FILE.String, "active_file"},
		{"an LRU list past NR_LRU_LISTS", NR_LRU_LISTS.String, "LRUList(5)"},
		{"a mempolicy mode", MPOL_INTERLEAVE.String, "interleave"},
		{"a mempolicy mode past MPOL_LOCAL", (MPOL_LOCAL + 1).String, "MempolicyMode(5)"},
		{"a vm event", PGALLOC_NORMAL.String, "pgalloc_normal"},
		{"a vm event past NR_VM_EVENT_ITEMS", NR_VM_EVENT_ITEMS.String, "VMEventItem(" + fmt.Sprint(int(NR_VM_EVENT_ITEMS)) + ")"},
		{"a THP enabled value", THPMadvise.String, "madvise"},
		{"a THP enabled value past inherit", (THPInherit + 1).String, "THPEnabled(4)"},
		{"a THP defrag value", DefragDeferMadvise.String, "defer+madvise"},
		{"a THP defrag value past never", THPDefrag(5).String, "THPDefrag(5)"},
		{"a compaction priority", CompactPriority(0).String, "COMPACT_PRIO_SYNC_FULL"},
		{"a compaction priority past async", CompactPriority(3).String, "CompactPriority(3)"},
		{"a page state", PageState(1).String, "free"},
		{"a page state past pinned", NrPageStates.String, "PageState(9)"},
		{"a page kind", KindAnon.String, "anon"},
		{"a page kind past pagetable", NrPageKinds.String, "PageKind(7)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.got())
		})
	}
	for mt := range MIGRATE_TYPES {
		got, ok := ParseMigrateType(mt.String())
		assert.True(t, ok)
		assert.Equal(t, mt, got)
	}
	for z := range MAX_NR_ZONES {
		got, ok := ParseZoneType(z.String())
		assert.True(t, ok)
		assert.Equal(t, z, got)
	}
	_, ok := ParseZoneType("ZoneType(5)")
	assert.False(t, ok)
	mode, err := ParseMempolicyMode(" bind ")
	require.NoError(t, err)
	assert.Equal(t, MPOL_BIND, mode)
}

func TestAlignUpAndRoundDownPow2AreTheKernelsALIGNAndRounddownPowOfTwo(t *testing.T) {
	for _, tc := range []struct {
		name string
		got  uint64
		want uint64
	}{
		{"ALIGN of a multiple is itself", alignUp(uint64(1024), 512), 1024},
		{"ALIGN rounds up to the next multiple", alignUp(uint64(1025), 512), 1536},
		{"ALIGN of 0 is 0", alignUp(uint64(0), 512), 0},
		{"ALIGN of a PFN", uint64(alignUp(PFN(513), PageblockNrPages)), 1024},
		{"rounddown_pow_of_two of a power of two is itself", roundDownPow2(4096), 4096},
		{"rounddown_pow_of_two of one less", roundDownPow2(4095), 2048},
		{"rounddown_pow_of_two of 1", roundDownPow2(1), 1},
		{"rounddown_pow_of_two of the top bit", roundDownPow2(1<<63 + 5), 1 << 63},
		{"rounddown_pow_of_two of 0 is 0 here", roundDownPow2(0), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.got)
		})
	}
}
