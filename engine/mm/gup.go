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
// states exactly which share of blocks it poisons.
//
// # Pins that move the page first
//
// Each pin goes through __gup_longterm_locked() (linux-mm/linux-mm
// mm/gup.c @0092cb38): a folio that folio_is_longterm_pinnable()
// (include/linux/mm.h) refuses is migrated away first and the pin taken on
// the copy (collect_longterm_unpinnable_folios isolates it from the LRU,
// migrate_longterm_unpinnable_folios migrates it with MIGRATE_SYNC for
// MR_LONGTERM_PIN to a target alloc_migration_target() allocates with
// GFP_USER|__GFP_NOWARN on the folio's node, inside memalloc_pin_save()).
// The kernel refuses folios in ZONE_MOVABLE and in MIGRATE_CMA or
// MIGRATE_ISOLATE pageblocks; a page in a MIGRATE_MOVABLE pageblock of
// ZONE_NORMAL is pinned where it sits, and its block can never be freed
// while the pin lives. The end of seed 002's thread asks whether
// defrag_mode should treat MIGRATE_MOVABLE like ZONE_MOVABLE there, and
// whether that should depend on defrag_mode at all: the what-if
// Patches.PinMigrateMovable (off, defrag_mode, always) adds MIGRATE_MOVABLE
// pageblocks to the refused ones. GFP_USER has no __GFP_MOVABLE, so the
// copy of an order-0 folio lands in a non-movable pageblock. (A large
// folio's target gets GFP_TRANSHUGE in alloc_migration_target and lands in
// a movable block again; PinBlocks pins order-0 fills, which the what-if
// is about.) A migration that finds no target fails the pin (-ENOMEM):
// PinBlocks counts it and goes on with the next block.

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
				if m.pages[head].flags&pgPinned != 0 || m.pages[head].owner != o.ID {
					continue
				}
				pinned, err := m.PinFolioLongterm(t, head)
				if err == errPinNoMem {
					m.Pins.Failed++
					break
				}
				if err != nil {
					return blocks, pages, err
				}
				blocks++
				pages += m.folioNr(pinned)
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

// PinMigrate is the what-if of seed 002's thread end: which folios a
// FOLL_LONGTERM pin migrates out of MIGRATE_MOVABLE pageblocks first.
type PinMigrate uint8

const (
	// PinMigrateOff is every kernel: pinned where it sits.
	PinMigrateOff PinMigrate = iota
	// PinMigrateDefragMode moves them while vm.defrag_mode is set
	// (Shutsemau: "Should defrag_mode treat MIGRATE_MOVABLE like
	// ZONE_MOVABLE there and move the page out at pin time?").
	PinMigrateDefragMode
	// PinMigrateAlways moves them regardless (Weiner: "Should it even be
	// specific to defrag_mode?").
	PinMigrateAlways
)

var pinMigrateNames = [...]string{"off", "defrag_mode", "always"}

func (p PinMigrate) String() string {
	if int(p) < len(pinMigrateNames) {
		return pinMigrateNames[p]
	}
	return fmt.Sprint(int(p))
}

// ParsePinMigrate reads "off", "defrag_mode" or "always".
func ParsePinMigrate(s string) (PinMigrate, error) {
	for i, n := range pinMigrateNames {
		if s == n {
			return PinMigrate(i), nil
		}
	}
	return 0, fmt.Errorf("pin_migrate must be off, defrag_mode or always, got %q", s)
}

// PinStats counts long-term pins that migrated their folio first
// (Migrated, in folios) and pins that failed because no target could be
// allocated (Failed).
type PinStats struct {
	Migrated, Failed uint64
}

// errPinNoMem is -ENOMEM from migrate_longterm_unpinnable_folios.
var errPinNoMem = fmt.Errorf("pin: no memory to migrate the folio to")

// folioIsLongtermPinnable is folio_is_longterm_pinnable(), plus the
// what-if's MIGRATE_MOVABLE pageblocks.
func (m *Machine) folioIsLongtermPinnable(head PFN) bool {
	mt := m.getPageblockMigratetype(head)
	if mt == MIGRATE_CMA || mt == MIGRATE_ISOLATE {
		return false
	}
	if m.ZoneOf(head).Type == ZONE_MOVABLE {
		return false
	}
	if mt == MIGRATE_MOVABLE {
		switch m.Patches.PinMigrateMovable {
		case PinMigrateAlways:
			return false
		case PinMigrateDefragMode:
			return m.Sysctl.DefragMode == 0
		}
	}
	return true
}

// PinFolioLongterm pins the folio holding pfn as pin_user_pages() with
// FOLL_LONGTERM does: a folio that is not long-term pinnable is migrated
// first and the copy is pinned. It returns the head of the pinned folio.
func (m *Machine) PinFolioLongterm(t *sim.Task, pfn PFN) (PFN, error) {
	head := m.folioHead(pfn)
	if m.pages[head].owner == 0 {
		return NilPFN, fmt.Errorf("PFN %#x is not owned by a memory user", pfn)
	}
	if m.pages[head].flags&pgPinned == 0 && !m.folioIsLongtermPinnable(head) {
		dst, err := m.migrateLongtermUnpinnable(t, head)
		if err != nil {
			return NilPFN, err
		}
		head = dst
	}
	return head, m.PinFolio(t, head)
}

// migrateLongtermUnpinnable is collect_longterm_unpinnable_folios() and
// migrate_longterm_unpinnable_folios() for one folio: isolate it, allocate
// the target as alloc_migration_target() does (GFP_USER|__GFP_NOWARN on
// the folio's node, no __GFP_MOVABLE under memalloc_pin_save), and move
// it. A task stepping through this waits in the allocation until it is
// over (the pin is one call).
func (m *Machine) migrateLongtermUnpinnable(t *sim.Task, head PFN) (PFN, error) {
	p := &m.pages[head]
	if p.flags&pgLRU == 0 {
		return NilPFN, errPinNoMem
	}
	order := Order(0)
	if p.flags&pgHead != 0 {
		order = Order(p.order)
	}
	gfp := GFP_USER | __GFP_NOWARN | __GFP_COMP
	if order > 0 {
		gfp = (gfp | GFP_TRANSHUGE) &^ __GFP_RECLAIM
	}
	gfp &^= __GFP_MOVABLE // memalloc_pin_save()
	nid := m.ZoneOf(head).Node.ID
	m.isolateLRUFolio(head)
	var dst PFN
	for {
		dst = m.AllocPages(t, gfp, order, nid, 0)
		if !m.AllocPending(t) {
			break
		}
	}
	if dst == NilPFN || m.pages[head].owner == 0 {
		if dst != NilPFN {
			m.FreePages(t, dst, order)
		}
		if m.pages[head].owner != 0 {
			m.putbackLRUFolio(head)
		} else {
			m.freeIsolatedFolio(t, head)
		}
		m.countVMEvents(PGMIGRATE_FAIL, order.Pages())
		return NilPFN, errPinNoMem
	}
	m.moveFolio(t, head, dst, order)
	m.countVMEvents(PGMIGRATE_SUCCESS, order.Pages())
	m.Pins.Migrated++
	return dst, nil
}
