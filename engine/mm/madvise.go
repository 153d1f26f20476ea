package mm

// madvise.go models the part of mm/madvise.c that gives memory back without
// unmapping the VMA: MADV_DONTNEED (madvise_dontneed_single_vma ->
// zap_page_range_single), which frees the pages of a range at once, so the
// next touch faults in fresh zeroed pages. Scripts and scenarios use it to
// punch holes into a populated region, the way a memory allocator returning
// freed chunks, or a test that fragments memory on purpose, does.
//
// # Model
//
// pagesim keeps no page tables, so a region's pages are found through the
// LRU: every resident folio of an anonymous owner sits on one of its
// cgroup's lruvecs (or in a lruvec's pinned pool). ownerFolios collects them
// and sorts them by PFN, which is the order a sequentially faulted region
// has in its address space (the buddy allocator hands out ascending PFNs to
// a lone faulting task), so "every Nth folio" is every Nth folio of the
// range.
//
// What the model simplifies: the kernel zaps a sub-range of a THP by
// splitting the PMD and freeing the base pages; pagesim cannot split a folio,
// so a THP is freed whole or kept whole. Scripts that want 4 KiB holes
// fault the region with MADV_NOHUGEPAGE. A long-term pinned folio is
// unmapped by the kernel but stays allocated (the pin holds a reference
// until unpin_user_page), which for the allocator is the same as keeping
// it: MadviseDontneed skips pinned folios. Folios isolated by reclaim or
// compaction at that moment are skipped too (they are not on the LRU).

import (
	"fmt"
	"slices"

	"github.com/pagesim/pagesim/engine/sim"
)

// ownerFolios returns the head PFN of every folio of o that is on an LRU
// list or in a pinned pool of o's cgroup, sorted by PFN.
func (m *Machine) ownerFolios(o *Owner) []PFN {
	out := make([]PFN, 0, o.Resident)
	walk := func(l *freeList) {
		for pfn := l.head; pfn != NilPFN; pfn = m.pages[pfn].next {
			if m.pages[pfn].owner == o.ID {
				out = append(out, pfn)
			}
		}
	}
	for _, lv := range o.Memcg.lruvecs {
		for l := range lv.lists {
			walk(&lv.lists[l])
		}
		for typ := range lv.pinned {
			walk(&lv.pinned[typ])
		}
	}
	slices.Sort(out)
	return out
}

// MadviseDontneed is madvise(MADV_DONTNEED) over the folios of an
// anonymous owner, keeping n-1 of every n (in address order) and freeing the
// nth: every = 1 frees the whole range, every = 2 every other folio. Pinned
// folios are counted in the walk but not freed. It returns the base pages
// freed.
func (m *Machine) MadviseDontneed(t *sim.Task, o *Owner, every int) (uint64, error) {
	if o.Kind != KindAnon {
		return 0, fmt.Errorf("MADV_DONTNEED: %s is %s memory, not anonymous", o.Name, o.Kind)
	}
	if every < 1 {
		return 0, fmt.Errorf("MADV_DONTNEED: every must be at least 1, got %d", every)
	}
	var freed uint64
	t.Charge(m.Cost.AnonFault) // the syscall and the TLB flush of the range
	for i, head := range m.ownerFolios(o) {
		if (i+1)%every != 0 || m.pages[head].flags&pgPinned != 0 {
			continue
		}
		freed += m.folioNr(head)
		m.FreeOwned(t, head)
	}
	return freed, nil
}
