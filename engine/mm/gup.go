package mm

// gup.go models the long-term pinning users of mm/gup.c
// (pin_user_pages with FOLL_LONGTERM) that pin a few pages scattered over a
// large, already populated range: io_uring's registered buffers, RDMA
// memory regions, a DPDK ring. Seed 002's machine has such buffers: one
// pinned page is enough to make a whole pageblock impossible to compact
// (isolate_migratepages skips folio_maybe_dma_pinned folios), so a small
// pinned fraction of memory spread over many pageblocks defeats compaction
// far beyond its size.
//
// # Model
//
// PinBlocks takes an owner's resident folios in PFN order (ownerFolios),
// groups them by pageblock, and pins the first unpinned folio of a given
// fraction of those pageblocks, spread evenly: with fraction 0.25, every
// fourth pageblock that holds the owner's memory gets one pin. The spread
// is a deterministic stride rather than a random pick so that a script
// states exactly which share of blocks it poisons. Folios in ZONE_MOVABLE
// are skipped (the kernel migrates them out first, which pagesim does not
// model; see PinFolio).

import (
	"fmt"

	"github.com/pagesim/pagesim/engine/sim"
)

// PinBlocks pins one folio of o in fraction (0..1] of the pageblocks that
// hold o's resident folios, spread evenly over them in PFN order. It
// returns the pageblocks that got a pin and the base pages pinned.
func (m *Machine) PinBlocks(t *sim.Task, o *Owner, fraction float64) (blocks int, pages uint64, err error) {
	if !(fraction > 0 && fraction <= 1) {
		return 0, 0, fmt.Errorf("pin: fraction must be in (0, 1], got %g", fraction)
	}
	folios := m.ownerFolios(o)
	acc := 0.0
	for i := 0; i < len(folios); {
		block := folios[i] >> PageblockOrder
		j := i
		for j < len(folios) && folios[j]>>PageblockOrder == block {
			j++
		}
		acc += fraction
		if acc >= 1-1e-9 {
			acc--
			for _, head := range folios[i:j] {
				if m.pages[head].flags&pgPinned != 0 || m.ZoneOf(head).Type == ZoneMovable {
					continue
				}
				if err := m.PinFolio(t, head); err != nil {
					return blocks, pages, err
				}
				blocks++
				pages += m.folioNr(head)
				break
			}
		}
		i = j
	}
	return blocks, pages, nil
}

// UnpinAll drops every long-term pin on o's folios (unpin_user_pages of
// everything the owner pinned) and returns the base pages unpinned.
func (m *Machine) UnpinAll(t *sim.Task, o *Owner) uint64 {
	var pages uint64
	for _, head := range m.ownerFolios(o) {
		if m.pages[head].flags&pgPinned != 0 {
			pages += m.folioNr(head)
			m.UnpinFolio(t, head)
		}
	}
	return pages
}
