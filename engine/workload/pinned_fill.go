package workload

import (
	"fmt"

	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/sim"
)

// PinnedFill is seed 002's preparation of memory, done by one setup task
// outside the world's steps:
//
//  1. fault 4 KiB anonymous pages (MADV_NOHUGEPAGE) in cgroup Cg until the
//     free memory of the node's zones is down to their high watermarks
//     plus Margin pages, with the page tables the faults allocate (below),
//     where a zone below the fault's highest zone keeps its
//     lowmem_reserve against that zone on top of its watermark (the
//     fault's zone_watermark_ok reads z->lowmem_reserve[highest_zoneidx],
//     so those pages are out of its reach; without it a machine with a
//     ZONE_NORMAL, 16 GiB and more, ran out of memory before the target),
//     and set the cgroup's memory.low to the fill plus Protect bytes
//     ("memory.low = fill + 1G, so page cache beyond that stays
//     reclaimable"). Set here, to the whole fill, before step 3 frees an
//     eighth of it, the protection covers more page cache than the free
//     memory can hold: no page cache is ever beyond it, kswapd (which
//     honours memory.low) leaves the cgroup alone, and its page cache is
//     reclaimed only by the allocating tasks' direct reclaim, on its
//     memcg_low_reclaim retry. With LowAfterFree, memory.low is set after
//     step 3 to what the fill then holds plus Protect, so the cgroup's
//     page cache past Protect is reclaimable, as the seed says it is;
//  2. with vm.defrag_mode already set, pin one page in a PinFraction share
//     of the pageblocks holding the fill (io_uring registered buffers,
//     FOLL_LONGTERM, mm.PinBlocks; 0 pins nothing): the rest are the blocks
//     that can still be made whole;
//  3. free one page in FreeEvery of the fill (MADV_DONTNEED), so that the
//     holes sit scattered in movable blocks.
//
// The page tables: the first fault in each 2 MiB of the mapping allocates
// the PTE page that maps it, and the first in each 1 GiB the PMD page
// (do_anonymous_page -> pte_alloc -> __pte_alloc -> pte_alloc_one, and
// __handle_mm_fault -> pmd_alloc -> __pmd_alloc; mm/memory.c), each one
// order-0 GFP_PGTABLE_USER page: unmovable, charged to the faulting
// task's cgroup. (The mapping is taken as 2 MiB-aligned, as the kernel
// aligns an anonymous mapping of at least PMD_SIZE since v6.7, commit
// efa7df3e3bb5 "mm: align larger anonymous mappings on THP boundaries".)
// Before defrag_mode is on, the first of them claims a free movable block
// for MIGRATE_UNMOVABLE (__rmqueue_claim) and the rest fill it and the
// next: the fill leaves unmovable blocks behind, as a real one does (a
// 4 KiB fill of 31 GiB needs 62 MiB of PTE pages); MADV_DONTNEED does not
// free them (only munmap's free_pgtables does).
//
// The seed turns defrag_mode on after step 3; PinnedFill asks for it
// before step 2 because pins that migrate their page first
// (mm.Patches.PinMigrateMovable) look at it, and nothing else in steps 2
// and 3 allocates.
type PinnedFill struct {
	Cg          *mm.Memcg
	Margin      uint64
	Protect     uint64
	PinFraction float64
	FreeEvery   int
	// LowAfterFree sets memory.low after step 3, to what the fill still
	// holds plus Protect, instead of to the whole fill plus Protect
	// before it (see the scenario's `low` parameter).
	LowAfterFree bool
	// Region is the fill; Pinned counts pinned pageblocks, Freed the pages
	// MADV_DONTNEED freed; PageTables owns the fill's PTE and PMD pages
	// (PageTablePages of them).
	Region         *mm.AnonRegion
	Pinned         int
	Freed          uint64
	PageTables     *mm.Owner
	PageTablePages uint64
}

// ptrsPerPTE and ptrsPerPMD are x86-64's PTRS_PER_PTE and PTRS_PER_PMD: a
// PTE page maps 2 MiB, a PMD page 1 GiB.
const ptrsPerPTE, ptrsPerPMD = 512, 512

// Run prepares m's memory with task t.
func (p *PinnedFill) Run(m *mm.Machine, t *sim.Task) error {
	var target uint64
	highest := mm.GFPZone(mm.GFP_HIGHUSER_MOVABLE)
	for _, n := range m.Nodes {
		for _, z := range n.Zones {
			if z != nil && z.Managed() {
				keep := z.WmarkPages(mm.WMARK_HIGH) + uint64(max(z.LowmemReserve[highest], 0))
				target += min(keep, z.FreePages())
			}
		}
	}
	target += p.Margin
	free := m.NrFreePages()
	if free <= target {
		return fmt.Errorf("no memory to fill: %d pages free, %d to keep", free, target)
	}
	r := m.NewAnonRegion("fill", p.Cg, free-target)
	r.NoHugepage = true
	p.PageTables = m.NewOwner(mm.KindPageTable, "fill-pagetables", p.Cg)
	for r.Cursor < r.Pages && m.NrFreePages() > target {
		if r.Cursor%ptrsPerPTE == 0 {
			tables := 1 // __pte_alloc
			if r.Cursor%(ptrsPerPTE*ptrsPerPMD) == 0 {
				tables++ // __pmd_alloc
			}
			for ; tables > 0; tables-- {
				if m.AllocOwned(t, p.PageTables, PgtableGFP, 0, -1, 0) == mm.NilPFN {
					return fmt.Errorf("the fill's page tables failed after %d pages", r.Cursor)
				}
				p.PageTablePages++
			}
		}
		if !m.FaultAnonNext(t, r, false).OK {
			return fmt.Errorf("the fill failed after %d pages", r.Cursor)
		}
	}
	p.Region = r
	if p.Cg != nil && !p.LowAfterFree {
		if err := p.Cg.SetKnob("memory.low", r.Cursor*mm.PAGE_SIZE+p.Protect); err != nil {
			return err
		}
	}
	if err := m.SetSysctl("vm.defrag_mode", "1"); err != nil {
		return err
	}
	if p.PinFraction > 0 {
		blocks, _, err := m.PinBlocks(t, r.Owner, min(p.PinFraction, 1))
		if err != nil {
			return err
		}
		p.Pinned = blocks
	}
	if p.FreeEvery > 0 {
		freed, err := m.MadviseDontneed(t, r.Owner, p.FreeEvery)
		if err != nil {
			return err
		}
		p.Freed = freed
	}
	if p.Cg != nil && p.LowAfterFree {
		if err := p.Cg.SetKnob("memory.low", (r.Cursor-p.Freed)*mm.PAGE_SIZE+p.Protect); err != nil {
			return err
		}
	}
	return nil
}
