package mm

// debug.go models the spirit of mm/debug.c and CONFIG_DEBUG_VM: a full
// consistency check of the machine that tests run after every simulated
// operation. A violation is reported with a readable dump of the state
// around the fault (the zone's counters and the pages near the bad PFN), so
// that a failing test says what broke, not just that something did.
//
// What is checked:
//   - every PFN is accounted for exactly once: reserved, inside one free
//     buddy chunk, inside one chunk on a per-CPU list, or in use;
//   - free chunks are aligned to their order, lie inside their zone, sit on
//     the list of their pageblock's migratetype, never overlap, and never
//     have a free buddy of their own order they could have merged with;
//   - list lengths equal the list counters, free_area.nr_free equals the sum
//     of its lists, and NR_FREE_PAGES, NR_FREE_PAGES_BLOCKS,
//     nr_free_highatomic and NR_FREE_CMA_PAGES equal the free lists;
//   - each per-CPU list holds chunks of its order and its count is right;
//   - the per-pageblock counters (free, per-CPU, LRU, pinned pages) and the
//     per-zone pageblock counts per migratetype equal a fresh count;
//   - folios are well formed (a head, then tails carrying the same order);
//   - the LRU lists and their counters agree (lru.go adds that part).

import (
	"fmt"
	"strings"
)

// InvariantError describes a broken invariant with a dump of the state.
type InvariantError struct {
	What string
	PFN  PFN
	Dump string
}

func (e *InvariantError) Error() string {
	return fmt.Sprintf("pagesim invariant broken: %s\n%s", e.What, e.Dump)
}

// MustCheckInvariants panics with a readable dump if an invariant is broken.
func (m *Machine) MustCheckInvariants() {
	if err := m.CheckInvariants(); err != nil {
		panic(err)
	}
}

func (m *Machine) fail(pfn PFN, format string, args ...any) error {
	return &InvariantError{What: fmt.Sprintf(format, args...), PFN: pfn, Dump: m.DumpAround(pfn)}
}

// CheckInvariants verifies the machine's state; nil means consistent.
func (m *Machine) CheckInvariants() error {
	if err := m.checkTasks(); err != nil {
		return err
	}
	owner := make([]uint8, m.maxPFN) // 0 unseen, 1 reserved, 2 free, 3 pcp, 4 in use
	type blockCount struct{ free, pcp, lru, pinned int }
	blocks := make([]blockCount, len(m.blocks))
	for _, z := range m.zones {
		var freeByMt [MIGRATE_TYPES]int64
		var blocksFree int64
		for o := Order(0); o < NR_PAGE_ORDERS; o++ {
			area := &z.freeArea[o]
			var sum uint64
			for mt := MigrateType(0); mt < MIGRATE_TYPES; mt++ {
				l := &area.list[mt]
				n := uint64(0)
				prev := NilPFN
				for pfn := l.head; pfn != NilPFN; pfn = m.pages[pfn].next {
					if pfn >= m.maxPFN {
						return m.fail(prev, "zone %d/%s free_list[%d][%s] links to PFN %#x beyond memory", z.Node.ID, z.Name(), o, mt, pfn)
					}
					p := &m.pages[pfn]
					if p.prev != prev {
						return m.fail(pfn, "free_list[%d][%s]: prev link of %#x is %#x, want %#x", o, mt, pfn, p.prev, prev)
					}
					if p.flags != pgBuddy || Order(p.order) != o {
						return m.fail(pfn, "free_list[%d][%s] holds %#x with flags %s order %d", o, mt, pfn, flagString(p.flags), p.order)
					}
					if pfn&(PFN(1)<<o-1) != 0 {
						return m.fail(pfn, "free chunk %#x of order %d is not aligned", pfn, o)
					}
					if !z.SpansPFN(pfn) || !z.SpansPFN(pfn+PFN(1)<<o-1) {
						return m.fail(pfn, "free chunk %#x order %d lies outside zone %s [%#x, %#x)", pfn, o, z.Name(), z.StartPFN, z.EndPFN())
					}
					if bmt := m.getPageblockMigratetype(pfn); bmt != mt {
						return m.fail(pfn, "free chunk %#x order %d is on the %s list but its pageblock is %s", pfn, o, mt, bmt)
					}
					if o < MAX_PAGE_ORDER {
						// Two free buddies of one order merge, unless
						// their pageblocks' types forbid it.
						if b, ok := m.findBuddy(z, pfn, o); ok {
							bmt := m.getPageblockMigratetype(b)
							if o < PageblockOrder || bmt == mt || (mt < MIGRATE_PCPTYPES && bmt < MIGRATE_PCPTYPES) {
								return m.fail(pfn, "free chunk %#x and its buddy %#x are both free at order %d and did not merge", pfn, b, o)
							}
						}
					}
					for i := PFN(0); i < PFN(1)<<o; i++ {
						q := pfn + i
						if owner[q] != 0 {
							return m.fail(q, "PFN %#x is in two places (free chunk %#x order %d overlaps)", q, pfn, o)
						}
						owner[q] = 2
						if i > 0 && m.pages[q].flags != 0 {
							return m.fail(q, "PFN %#x inside free chunk %#x has flags %s", q, pfn, flagString(m.pages[q].flags))
						}
						blocks[q>>PageblockOrder].free++
					}
					if o >= PageblockOrder && mt != MIGRATE_ISOLATE {
						blocksFree += int64(o.Pages())
					}
					freeByMt[mt] += int64(o.Pages())
					n++
					prev = pfn
				}
				if l.tail != prev {
					return m.fail(prev, "free_list[%d][%s] tail is %#x, walk ends at %#x", o, mt, l.tail, prev)
				}
				if n != l.n {
					return m.fail(l.head, "free_list[%d][%s] counter says %d chunks, list has %d", o, mt, l.n, n)
				}
				sum += n
			}
			if sum != area.nrFree {
				return m.fail(NilPFN, "zone %d/%s free_area[%d].nr_free = %d, lists hold %d", z.Node.ID, z.Name(), o, area.nrFree, sum)
			}
		}
		var nrFree int64
		for mt, v := range freeByMt {
			if MigrateType(mt) != MIGRATE_ISOLATE {
				nrFree += v
			}
		}
		if nrFree != z.Stat[NR_FREE_PAGES] {
			return m.fail(NilPFN, "zone %d/%s NR_FREE_PAGES = %d, free lists hold %d", z.Node.ID, z.Name(), z.Stat[NR_FREE_PAGES], nrFree)
		}
		if blocksFree != z.Stat[NR_FREE_PAGES_BLOCKS] {
			return m.fail(NilPFN, "zone %d/%s NR_FREE_PAGES_BLOCKS = %d, free lists hold %d", z.Node.ID, z.Name(), z.Stat[NR_FREE_PAGES_BLOCKS], blocksFree)
		}
		if uint64(freeByMt[MIGRATE_HIGHATOMIC]) != z.NrFreeHighatomic {
			return m.fail(NilPFN, "zone %d/%s nr_free_highatomic = %d, lists hold %d", z.Node.ID, z.Name(), z.NrFreeHighatomic, freeByMt[MIGRATE_HIGHATOMIC])
		}
		if freeByMt[MIGRATE_CMA] != z.Stat[NR_FREE_CMA_PAGES] {
			return m.fail(NilPFN, "zone %d/%s NR_FREE_CMA_PAGES = %d, lists hold %d", z.Node.ID, z.Name(), z.Stat[NR_FREE_CMA_PAGES], freeByMt[MIGRATE_CMA])
		}
		for cpu := range z.pcp {
			p := &z.pcp[cpu]
			count := 0
			for idx := range p.lists {
				l := &p.lists[idx]
				o := pindexToOrder(idx)
				n := uint64(0)
				prev := NilPFN
				for pfn := l.head; pfn != NilPFN; pfn = m.pages[pfn].next {
					q := &m.pages[pfn]
					if q.prev != prev {
						return m.fail(pfn, "cpu %d pcp list %d: prev link of %#x is %#x, want %#x", cpu, idx, pfn, q.prev, prev)
					}
					if q.flags != pgPCP || Order(q.order) != o {
						return m.fail(pfn, "cpu %d pcp list %d holds %#x with flags %s order %d, want order %d", cpu, idx, pfn, flagString(q.flags), q.order, o)
					}
					if !z.SpansPFN(pfn) {
						return m.fail(pfn, "cpu %d pcp list of zone %s holds %#x from another zone", cpu, z.Name(), pfn)
					}
					for i := PFN(0); i < PFN(1)<<o; i++ {
						r := pfn + i
						if owner[r] != 0 {
							return m.fail(r, "PFN %#x is in two places (pcp chunk %#x order %d overlaps)", r, pfn, o)
						}
						owner[r] = 3
						blocks[r>>PageblockOrder].pcp++
						if i > 0 && m.pages[r].flags != 0 {
							return m.fail(r, "PFN %#x inside pcp chunk %#x has flags %s", r, pfn, flagString(m.pages[r].flags))
						}
					}
					count += 1 << o
					n++
					prev = pfn
				}
				if n != l.n || l.tail != prev {
					return m.fail(l.head, "cpu %d pcp list %d counter %d (tail %#x), walk %d (ends %#x)", cpu, idx, l.n, l.tail, n, prev)
				}
			}
			if count != p.count {
				return m.fail(NilPFN, "zone %d/%s cpu %d pcp->count = %d, lists hold %d", z.Node.ID, z.Name(), cpu, p.count, count)
			}
		}
	}
	// Every other PFN: reserved or in use, folios well formed.
	resident := make([]uint64, len(m.owners))
	// Dirty and writeback pages by zone, for the counters.
	dirty := make(map[*Zone]int64)
	writeback := make(map[*Zone]int64)
	for pfn := PFN(0); pfn < m.maxPFN; pfn++ {
		if owner[pfn] != 0 {
			continue
		}
		p := &m.pages[pfn]
		if p.flags&(pgReserved|pgTail) == 0 && p.owner != 0 {
			if int(p.owner) >= len(resident) {
				return m.fail(pfn, "PFN %#x belongs to owner %d, which does not exist", pfn, p.owner)
			}
			resident[p.owner] += uint64(1) << (p.order * uint8(b2i(p.flags&pgHead != 0)))
		}
		if p.flags&pgReserved != 0 {
			if p.flags != pgReserved {
				return m.fail(pfn, "reserved PFN %#x has flags %s", pfn, flagString(p.flags))
			}
			continue
		}
		if p.flags&(pgBuddy|pgPCP) != 0 {
			return m.fail(pfn, "PFN %#x is marked %s but is on no list", pfn, flagString(p.flags))
		}
		if m.ZoneOf(pfn) == nil {
			return m.fail(pfn, "in-use PFN %#x lies outside every zone", pfn)
		}
		if p.flags&pgTail != 0 {
			o := Order(p.order)
			head := pfn &^ (PFN(1)<<o - 1)
			if o == 0 || m.pages[head].flags&pgHead == 0 || m.pages[head].order != p.order {
				return m.fail(pfn, "tail PFN %#x (order %d) has no matching head at %#x", pfn, o, head)
			}
		}
		if p.flags&pgHead != 0 {
			o := Order(p.order)
			if o == 0 || pfn&(PFN(1)<<o-1) != 0 {
				return m.fail(pfn, "folio head %#x has order %d or is misaligned", pfn, o)
			}
			for i := PFN(1); i < PFN(1)<<o; i++ {
				q := &m.pages[pfn+i]
				if q.flags&pgTail == 0 || q.order != p.order {
					return m.fail(pfn+i, "folio %#x order %d: page %#x is not its tail", pfn, o, pfn+i)
				}
			}
		}
		if p.flags&pgLRU != 0 {
			n := 1
			if p.flags&pgHead != 0 {
				n = 1 << p.order
			}
			for i := 0; i < n; i++ {
				blocks[(pfn+PFN(i))>>PageblockOrder].lru++
			}
		}
		if p.flags&pgPinned != 0 {
			n := PFN(1)
			if p.flags&pgHead != 0 {
				n = PFN(1) << p.order
			}
			for i := PFN(0); i < n; i++ {
				blocks[(pfn+i)>>PageblockOrder].pinned++
			}
		}
		if p.flags&pgTail == 0 && p.owner != 0 {
			n := int64(1)
			if p.flags&pgHead != 0 {
				n = int64(1) << p.order
			}
			if p.kind == KindFile && p.flags&pgDirty != 0 {
				dirty[m.ZoneOf(pfn)] += n
			}
			if p.flags&pgWriteback != 0 {
				writeback[m.ZoneOf(pfn)] += n
			}
		}
		owner[pfn] = 4
	}
	for id, o := range m.owners {
		if id > 0 && o.Resident != resident[id] {
			return m.fail(NilPFN, "owner %d (%s %q) counts %d resident pages, the pages say %d", id, o.Kind, o.Name, o.Resident, resident[id])
		}
	}
	for b := range m.blocks {
		got := &m.blocks[b]
		want := blocks[b]
		if int(got.nrFree) != want.free || int(got.nrPCP) != want.pcp || int(got.nrLRU) != want.lru || int(got.nrPinned) != want.pinned {
			return m.fail(PFN(b)<<PageblockOrder, "pageblock %d counters free=%d pcp=%d lru=%d pinned=%d, pages say free=%d pcp=%d lru=%d pinned=%d",
				b, got.nrFree, got.nrPCP, got.nrLRU, got.nrPinned, want.free, want.pcp, want.lru, want.pinned)
		}
	}
	// Every folio a block request carries is under writeback until the
	// request is retired (blk_mq.go relies on its PFN staying valid).
	for _, rq := range m.Blk.inflight {
		for _, head := range rq.folios {
			if p := &m.pages[head]; p.flags&pgWriteback == 0 || p.owner == 0 {
				return m.fail(head, "folio %#x is carried by a block request (completes at %v) but is not under writeback (flags %s)", head, rq.complete, flagString(p.flags))
			}
		}
	}
	// NR_FILE_DIRTY and NR_WRITEBACK by node, NR_ZONE_WRITE_PENDING (dirty
	// plus writeback) by zone, equal what the folios say.
	for _, n := range m.Nodes {
		var d, w int64
		for _, z := range n.Zones {
			if z == nil {
				continue
			}
			d += dirty[z]
			w += writeback[z]
			if got := z.Stat[NR_ZONE_WRITE_PENDING]; got != dirty[z]+writeback[z] {
				return m.fail(z.StartPFN, "zone %d/%s nr_zone_write_pending is %d, its folios say %d dirty + %d under writeback", n.ID, z.Name(), got, dirty[z], writeback[z])
			}
		}
		if n.Stat[NR_FILE_DIRTY] != d || n.Stat[NR_WRITEBACK] != w {
			return m.fail(NilPFN, "node %d nr_dirty=%d nr_writeback=%d, its folios say %d and %d", n.ID, n.Stat[NR_FILE_DIRTY], n.Stat[NR_WRITEBACK], d, w)
		}
	}
	for _, z := range m.zones {
		want := m.countZoneBlocks(z)
		if want != z.nrBlocks {
			return m.fail(z.StartPFN, "zone %d/%s pageblock counts %v, a walk says %v", z.Node.ID, z.Name(), z.nrBlocks, want)
		}
	}
	return m.checkLRUInvariants()
}

// countZoneBlocks counts the zone's pageblocks per migratetype the way
// pagetypeinfo_showblockcount_print() walks them: from zone_start_pfn in
// steps of pageblock_nr_pages.
func (m *Machine) countZoneBlocks(z *Zone) [MIGRATE_TYPES]uint64 {
	var c [MIGRATE_TYPES]uint64
	for pfn := z.StartPFN; pfn < z.EndPFN(); pfn += PageblockNrPages {
		if int(m.zoneOfBlock[pfn>>PageblockOrder]) != z.ID {
			continue
		}

		c[m.blocks[pfn>>PageblockOrder].mt]++
	}
	return c
}

func flagString(f uint16) string {
	names := []string{"buddy", "pcp", "reserved", "head", "tail", "lru", "active", "referenced", "dirty", "writeback", "pinned", "swapbacked", "workingset", "isolated", "unevictable", "young"}
	var parts []string
	for i, n := range names {
		if f&(1<<uint(i)) != 0 {
			parts = append(parts, n)
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, "|")
}

// DumpAround returns a readable description of the pages and pageblock
// around pfn and of the zone holding it.
func (m *Machine) DumpAround(pfn PFN) string {
	var b strings.Builder
	if pfn == NilPFN || pfn >= m.maxPFN {
		for _, z := range m.zones {
			if z.SpannedPages == 0 {
				continue
			}
			fmt.Fprintf(&b, "zone %d/%-7s start %#x spanned %d managed %d free %d blocks_free %d\n",
				z.Node.ID, z.Name(), z.StartPFN, z.SpannedPages, z.ManagedPages, z.Stat[NR_FREE_PAGES], z.Stat[NR_FREE_PAGES_BLOCKS])
		}
		return b.String()
	}
	if z := m.ZoneOf(pfn); z != nil {
		fmt.Fprintf(&b, "zone %d/%s start %#x end %#x managed %d NR_FREE_PAGES %d\n", z.Node.ID, z.Name(), z.StartPFN, z.EndPFN(), z.ManagedPages, z.Stat[NR_FREE_PAGES])
		for o := 0; o < NR_PAGE_ORDERS; o++ {
			fmt.Fprintf(&b, "  order %2d nr_free %d", o, z.freeArea[o].nrFree)
			for mt := MigrateType(0); mt < MIGRATE_TYPES; mt++ {
				if n := z.freeArea[o].list[mt].n; n > 0 {
					fmt.Fprintf(&b, " %s=%d", mt, n)
				}
			}
			b.WriteByte('\n')
		}
	}
	blk := &m.blocks[pfn>>PageblockOrder]
	fmt.Fprintf(&b, "pageblock %d (PFN %#x): %s skip=%v free=%d pcp=%d lru=%d pinned=%d\n",
		pfn>>PageblockOrder, pfn&^(PageblockNrPages-1), blk.mt, blk.skip, blk.nrFree, blk.nrPCP, blk.nrLRU, blk.nrPinned)
	lo := PFN(0)
	if pfn > 8 {
		lo = pfn - 8
	}
	hi := pfn + 9
	if hi > m.maxPFN {
		hi = m.maxPFN
	}
	for q := lo; q < hi; q++ {
		p := &m.pages[q]
		mark := " "
		if q == pfn {
			mark = ">"
		}
		fmt.Fprintf(&b, "%s PFN %#x flags=%s order=%d kind=%s owner=%d next=%#x prev=%#x\n",
			mark, q, flagString(p.flags), p.order, p.kind, p.owner, p.next, p.prev)
	}
	return b.String()
}

// sectionShift is PFN_SECTION_SHIFT on x86-64: 128 MiB memory sections.
const sectionShift = 27 - PAGE_SHIFT

// sectionPresent reports whether the memory section holding pfn has any
// present page (a zone's present pages come first in its span).
func (m *Machine) sectionPresent(pfn PFN) bool {
	start := pfn &^ (PFN(1)<<sectionShift - 1)
	end := start + PFN(1)<<sectionShift
	for _, z := range m.zones {
		if z.PresentPages == 0 {
			continue
		}
		ps, pe := z.StartPFN, z.StartPFN+PFN(z.PresentPages)
		if ps < end && pe > start {
			return true
		}
	}
	return false
}

// checkTasks checks the tasks' suspended allocations: none was abandoned
// (a caller that did not repeat a call AllocPending asked it to), and one
// stopped inside direct reclaim holds its memory stall open.
func (m *Machine) checkTasks() error {
	if m.Slow.Abandoned > 0 {
		return fmt.Errorf("%d allocations stopped at a cond_resched() were abandoned: a caller ignored AllocPending", m.Slow.Abandoned)
	}
	for id, ts := range m.tasks {
		if ts == nil || ts.alloc == nil {
			continue
		}
		f := ts.alloc
		if f != &ts.frame {
			return fmt.Errorf("task %d: its suspended allocation is not its frame", id)
		}
		if (f.at == resumeBeforeReclaim || f.at == resumeAfterReclaim) && ts.memstall == 0 {
			return fmt.Errorf("task %d: stopped in direct reclaim (%d) outside a memory stall", id, f.at)
		}
		if f.at == resumeStart {
			return fmt.Errorf("task %d: a suspended allocation with no resume point", id)
		}
	}
	return nil
}
