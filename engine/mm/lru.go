package mm

// lru.go models the LRU lists (include/linux/mmzone.h struct lruvec,
// mm/swap.c, include/linux/mm_inline.h): one lruvec per (cgroup, node) with
// the classic inactive/active lists for anon and file plus the unevictable
// list, their page counts, and the zone and node counters they feed
// (nr_zone_inactive_anon, nr_inactive_anon, ...).
//
// # Pinned folios are scanned by count
//
// The kernel keeps long-term pinned folios on the normal LRU lists. Every
// reclaim pass isolates them, finds them pinned (folio_maybe_dma_pinned) or
// unfreeable, and puts them back: real CPU time for nothing. A node full of
// vfio-pinned guest memory (seed 003) makes each failed THP fault visit
// millions of them. pagesim keeps pinned folios on a per-lruvec pinned list
// instead, with counts by position (inactive/active), zone and accessed bit.
// A scan of n pages from a list mixes pinned and unpinned pages in
// proportion to their numbers, visits the unpinned ones one by one and the
// pinned ones by count, and charges the kernel's per-folio cost for both.
// Which pinned page was visited does not matter (none can be reclaimed), so
// the result is exact except for the interleaving order, and a futile scan
// of a fully pinned node costs O(1) wall time. (Under the 2018 kernel base
// a scan moves pinned THPs between the inactive and active counts: still
// exact, and still in closed form once the lists balance, vmscan.go.)
//
// Folios are linked through their head page's next/prev fields; the list
// head is the most recently added folio, reclaim takes from the tail.

import (
	"github.com/pagesim/pagesim/engine/internal/enum"
	"github.com/pagesim/pagesim/engine/sim"
)

// LRUList is enum lru_list.
type LRUList uint8

const (
	LRU_INACTIVE_ANON LRUList = iota
	LRU_ACTIVE_ANON
	LRU_INACTIVE_FILE
	LRU_ACTIVE_FILE
	LRU_UNEVICTABLE
	NR_LRU_LISTS
)

var lruNames = [NR_LRU_LISTS]string{"inactive_anon", "active_anon", "inactive_file", "active_file", "unevictable"}

// String returns the list's name as vmstat's nr_* counters of the list
// spell it (nr_inactive_anon).
func (l LRUList) String() string { return enum.Name(lruNames[:], l) }

// isFile is is_file_lru().
func (l LRUList) isFile() bool { return l == LRU_INACTIVE_FILE || l == LRU_ACTIVE_FILE }

// isActive is is_active_lru().
func (l LRUList) isActive() bool { return l == LRU_ACTIVE_ANON || l == LRU_ACTIVE_FILE }

// lruListOf is the LRU list of a file or anon, active or inactive folio
// (folio_lru_list() without the unevictable list).
func lruListOf(file, active bool) LRUList {
	l := LRU_INACTIVE_ANON
	if file {
		l = LRU_INACTIVE_FILE
	}
	if active {
		l++
	}
	return l
}

// lruvec is struct lruvec for one (cgroup, node).
type lruvec struct {
	memcg *Memcg
	node  *Node
	// lists hold unpinned folio heads, newest at the head.
	lists [NR_LRU_LISTS]freeList
	// nrPages counts base pages per list, pinned pool included
	// (lruvec_lru_size).
	nrPages [NR_LRU_LISTS]uint64
	// zonePages[l][zone] splits nrPages by zone (mem_cgroup_get_zone_lru_size).
	zonePages [NR_LRU_LISTS][MAX_NR_ZONES]uint64
	// pinned lists pinned folios per type (0 anon, 1 file).
	pinned [2]freeList
	// pinnedCount[type][active][zone] counts pinned pages by position and
	// zone, pinnedFolios the folios (to know how many a scan visits).
	pinnedCount  [2][2][MAX_NR_ZONES]uint64
	pinnedFolios [2][2][MAX_NR_ZONES]uint64
	// Lock is lruvec->lru_lock.
	Lock sim.Lock
	// anonCost and fileCost are lruvec->anon_cost/file_cost (reclaim
	// cost of each type, for get_scan_count).
	anonCost, fileCost uint64
	// nonresidentAge is the workingset eviction clock.
	nonresidentAge uint64
	// refaults snapshot for thrashing detection (target_lruvec->refaults).
	refaults [2]uint64
}

func newLruvec(cg *Memcg, n *Node) *lruvec {
	lv := &lruvec{memcg: cg, node: n}
	for i := range lv.lists {
		lv.lists[i] = freeList{head: NilPFN, tail: NilPFN}
	}
	for i := range lv.pinned {
		lv.pinned[i] = freeList{head: NilPFN, tail: NilPFN}
	}
	lv.Lock.Name = "lru_lock"
	return lv
}

// LRUSize is lruvec_lru_size() for the whole node (all zones).
func (lv *lruvec) LRUSize(l LRUList) uint64 { return lv.nrPages[l] }

// folioHead returns the head PFN of the folio holding pfn.
func (m *Machine) folioHead(pfn PFN) PFN {
	p := &m.pages[pfn]
	if p.flags&pgTail != 0 {
		return pfn &^ (PFN(1)<<p.order - 1)
	}
	return pfn
}

// folioNr is folio_nr_pages() of a head.
func (m *Machine) folioNr(head PFN) uint64 {
	p := &m.pages[head]
	if p.flags&pgHead != 0 {
		return 1 << p.order
	}
	return 1
}

// lruvecOf returns the lruvec a folio belongs to (folio_lruvec()).
func (m *Machine) lruvecOf(head PFN) *lruvec {
	o := m.owners[m.pages[head].owner]
	return o.Memcg.lruvecs[m.ZoneOf(head).Node.ID]
}

// folioLRUList is folio_lru_list().
func (m *Machine) folioLRUList(head PFN) LRUList {
	p := &m.pages[head]
	if p.flags&pgUnevictable != 0 {
		return LRU_UNEVICTABLE
	}
	return lruListOf(p.kind == KindFile, p.flags&pgActive != 0)
}

// updateLRUSize is update_lru_size(): list, zone and node counters.
func (m *Machine) updateLRUSize(lv *lruvec, l LRUList, z *Zone, delta int64) {
	lv.nrPages[l] = uint64(int64(lv.nrPages[l]) + delta)
	lv.zonePages[l][z.Type] = uint64(int64(lv.zonePages[l][z.Type]) + delta)
	z.Stat[NR_ZONE_INACTIVE_ANON+ZoneStatItem(l)] += delta
	z.Node.Stat[NR_INACTIVE_ANON+NodeStatItem(l)] += delta
}

func (m *Machine) addBlockLRU(head PFN, nr uint64, delta int) {
	if nr <= PageblockNrPages {
		b := &m.blocks[head>>PageblockOrder]
		b.nrLRU = uint16(int(b.nrLRU) + delta*int(nr))
		return
	}
	for i := uint64(0); i < nr/PageblockNrPages; i++ {
		b := &m.blocks[(head>>PageblockOrder)+PFN(i)]
		b.nrLRU = uint16(int(b.nrLRU) + delta*PageblockNrPages)
	}
}

// lruAdd puts a folio on its LRU list (lruvec_add_folio), or on the pinned
// pool if it is pinned.
func (m *Machine) lruAdd(head PFN) {
	p := &m.pages[head]
	lv := m.lruvecOf(head)
	z := m.ZoneOf(head)
	nr := m.folioNr(head)
	l := m.folioLRUList(head)
	p.flags |= pgLRU
	if p.flags&pgPinned != 0 && l != LRU_UNEVICTABLE {
		typ := 0
		if l.isFile() {
			typ = 1
		}
		act := 0
		if l.isActive() {
			act = 1
		}
		lv.pinned[typ].pushHead(m.pages, head)
		lv.pinnedCount[typ][act][z.Type] += nr
		lv.pinnedFolios[typ][act][z.Type]++
	} else {
		lv.lists[l].pushHead(m.pages, head)
	}
	m.updateLRUSize(lv, l, z, int64(nr))
	m.addBlockLRU(head, nr, 1)
}

// lruAddTail puts a folio at the cold end (used when putting back scanned
// folios that were not referenced, lruvec_add_folio_tail).
func (m *Machine) lruAddTail(head PFN) {
	m.lruAdd(head)
	p := &m.pages[head]
	if p.flags&pgPinned != 0 {
		return
	}
	lv := m.lruvecOf(head)
	l := m.folioLRUList(head)
	lv.lists[l].remove(m.pages, head)
	lv.lists[l].pushTail(m.pages, head)
}

// lruDel takes a folio off its LRU list (lruvec_del_folio).
func (m *Machine) lruDel(head PFN) {
	p := &m.pages[head]
	lv := m.lruvecOf(head)
	z := m.ZoneOf(head)
	nr := m.folioNr(head)
	l := m.folioLRUList(head)
	if p.flags&pgPinned != 0 && l != LRU_UNEVICTABLE {
		typ := 0
		if l.isFile() {
			typ = 1
		}
		lv.pinned[typ].remove(m.pages, head)
		// The pool does not know which position this folio held:
		// take it from the inactive count first.
		act := 1
		if lv.pinnedCount[typ][0][z.Type] >= nr && lv.pinnedFolios[typ][0][z.Type] > 0 {
			act = 0
		}
		lv.pinnedCount[typ][act][z.Type] -= nr
		lv.pinnedFolios[typ][act][z.Type]--
		l = lruListOf(typ == 1, act == 1)
		if l.isActive() {
			p.flags |= pgActive
		} else {
			p.flags &^= pgActive
		}
	} else {
		lv.lists[l].remove(m.pages, head)
	}
	p.flags &^= pgLRU
	m.updateLRUSize(lv, l, z, -int64(nr))
	m.addBlockLRU(head, nr, -1)
}

// isolateLRUFolio takes a folio off the LRU for reclaim or migration
// (folio_isolate_lru) and counts it in NR_ISOLATED_*.
func (m *Machine) isolateLRUFolio(head PFN) {
	m.lruDel(head)
	p := &m.pages[head]
	p.flags |= pgIsolated
	nr := int64(m.folioNr(head))
	n := m.ZoneOf(head).Node
	if p.kind == KindFile {
		n.Stat[NR_ISOLATED_FILE] += nr
	} else {
		n.Stat[NR_ISOLATED_ANON] += nr
	}
}

// putbackLRUFolio returns an isolated folio (folio_putback_lru).
func (m *Machine) putbackLRUFolio(head PFN) {
	p := &m.pages[head]
	p.flags &^= pgIsolated
	nr := int64(m.folioNr(head))
	n := m.ZoneOf(head).Node
	if p.kind == KindFile {
		n.Stat[NR_ISOLATED_FILE] -= nr
	} else {
		n.Stat[NR_ISOLATED_ANON] -= nr
	}
	m.lruAdd(head)
}

// checkLRUInvariants verifies the LRU lists against their counters.
func (m *Machine) checkLRUInvariants() error {
	var zoneLRU = make([][NR_LRU_LISTS]int64, len(m.zones))
	var nodeIso = make([][2]int64, len(m.Nodes))
	for _, cg := range m.memcgs {
		for _, lv := range cg.lruvecs {
			var count [NR_LRU_LISTS]uint64
			for l := LRUList(0); l < NR_LRU_LISTS; l++ {
				list := &lv.lists[l]
				n := uint64(0)
				prev := NilPFN
				for pfn := list.head; pfn != NilPFN; pfn = m.pages[pfn].next {
					p := &m.pages[pfn]
					if p.prev != prev {
						return m.fail(pfn, "lru %s of cgroup %s node %d: prev link of %#x is %#x, want %#x", l, cg.Name, lv.node.ID, pfn, p.prev, prev)
					}
					if p.flags&pgLRU == 0 || p.flags&pgTail != 0 || p.flags&pgPinned != 0 {
						return m.fail(pfn, "lru %s holds %#x with flags %s", l, pfn, flagString(p.flags))
					}
					if got := m.folioLRUList(pfn); got != l {
						return m.fail(pfn, "folio %#x (kind %s, flags %s) belongs on %s but is on %s", pfn, p.kind, flagString(p.flags), got, l)
					}
					z := m.ZoneOf(pfn)
					if z.Node != lv.node || m.owners[p.owner].Memcg != cg {
						return m.fail(pfn, "folio %#x on the lruvec of cgroup %s node %d belongs to node %d cgroup %s", pfn, cg.Name, lv.node.ID, z.Node.ID, m.owners[p.owner].Memcg.Name)
					}
					nr := m.folioNr(pfn)
					count[l] += nr
					zoneLRU[z.ID][l] += int64(nr)
					n++
					prev = pfn
				}
				if n != list.n || list.tail != prev {
					return m.fail(list.head, "lru %s of cgroup %s node %d counter %d, walk %d", l, cg.Name, lv.node.ID, list.n, n)
				}
			}
			for typ := 0; typ < 2; typ++ {
				list := &lv.pinned[typ]
				var byZone [MAX_NR_ZONES]uint64
				n := uint64(0)
				for pfn := list.head; pfn != NilPFN; pfn = m.pages[pfn].next {
					p := &m.pages[pfn]
					if p.flags&pgLRU == 0 || p.flags&pgPinned == 0 || (p.kind == KindFile) != (typ == 1) {
						return m.fail(pfn, "pinned list %d holds %#x with flags %s kind %s", typ, pfn, flagString(p.flags), p.kind)
					}
					byZone[m.ZoneOf(pfn).Type] += m.folioNr(pfn)
					n++
				}
				if n != list.n {
					return m.fail(list.head, "pinned list %d counter %d, walk %d", typ, list.n, n)
				}
				for zt := ZoneType(0); zt < MAX_NR_ZONES; zt++ {
					in, act := lv.pinnedCount[typ][0][zt], lv.pinnedCount[typ][1][zt]
					if in+act != byZone[zt] {
						return m.fail(NilPFN, "cgroup %s node %d pinned pool type %d zone %s counts %d+%d pages, list holds %d", cg.Name, lv.node.ID, typ, zt, in, act, byZone[zt])
					}
					if (lv.pinnedFolios[typ][0][zt] == 0) != (in == 0) || (lv.pinnedFolios[typ][1][zt] == 0) != (act == 0) {
						return m.fail(NilPFN, "pinned pool folio counts %v disagree with page counts %d/%d", lv.pinnedFolios[typ], in, act)
					}
					z := lv.node.Zones[zt]
					count[lruListOf(typ == 1, false)] += in
					count[lruListOf(typ == 1, true)] += act
					zoneLRU[z.ID][lruListOf(typ == 1, false)] += int64(in)
					zoneLRU[z.ID][lruListOf(typ == 1, true)] += int64(act)
				}
			}
			if count != lv.nrPages {
				return m.fail(NilPFN, "cgroup %s node %d lru sizes %v, lists hold %v", cg.Name, lv.node.ID, lv.nrPages, count)
			}
		}
	}
	for pfn := PFN(0); pfn < m.maxPFN; pfn++ {
		p := &m.pages[pfn]
		if p.flags&pgIsolated != 0 && p.flags&pgTail == 0 {
			idx := 0
			if p.kind == KindFile {
				idx = 1
			}
			nodeIso[m.ZoneOf(pfn).Node.ID][idx] += int64(m.folioNr(pfn))
		}
	}
	for _, z := range m.zones {
		for l := LRUList(0); l < NR_LRU_LISTS; l++ {
			if z.Stat[NR_ZONE_INACTIVE_ANON+ZoneStatItem(l)] != zoneLRU[z.ID][l] {
				return m.fail(NilPFN, "zone %d/%s nr_zone_%s = %d, lists hold %d", z.Node.ID, z.Name(), l, z.Stat[NR_ZONE_INACTIVE_ANON+ZoneStatItem(l)], zoneLRU[z.ID][l])
			}
		}
	}
	for _, n := range m.Nodes {
		var sum [NR_LRU_LISTS]int64
		for _, z := range n.Zones {
			for l := LRUList(0); l < NR_LRU_LISTS; l++ {
				sum[l] += z.Stat[NR_ZONE_INACTIVE_ANON+ZoneStatItem(l)]
			}
		}
		for l := LRUList(0); l < NR_LRU_LISTS; l++ {
			if n.Stat[NR_INACTIVE_ANON+NodeStatItem(l)] != sum[l] {
				return m.fail(NilPFN, "node %d nr_%s = %d, zones hold %d", n.ID, l, n.Stat[NR_INACTIVE_ANON+NodeStatItem(l)], sum[l])
			}
		}
		if n.Stat[NR_ISOLATED_ANON] != nodeIso[n.ID][0] || n.Stat[NR_ISOLATED_FILE] != nodeIso[n.ID][1] {
			return m.fail(NilPFN, "node %d nr_isolated anon/file = %d/%d, pages say %d/%d", n.ID, n.Stat[NR_ISOLATED_ANON], n.Stat[NR_ISOLATED_FILE], nodeIso[n.ID][0], nodeIso[n.ID][1])
		}
	}
	return nil
}
