package mm

// mmzone.go models include/linux/mmzone.h and include/linux/mm_types.h: the
// machine's nodes (pg_data_t), zones (struct zone), free areas, per-CPU
// pagesets, pageblocks and the per-page state.
//
// # The page
//
// struct page is 64 bytes in the kernel; pagesim's page is 16 bytes so that a
// 32 GiB machine (8M pages) costs 128 MiB. Its states and transitions are
// written once here, on the type:
//
//	reserved  pgReserved: not managed by the buddy allocator (a hole in the
//	          zone span, memmap, the kernel image). Never changes.
//	free      pgBuddy on the chunk's first page: a free chunk of 2^order
//	          pages on free_area[order].free_list[mt]; next/prev link the
//	          list. The other pages of the chunk have no flags.
//	pcp       pgPCP on the chunk's first page: a free chunk held on a CPU's
//	          per-CPU list; next/prev link that list. Not counted in
//	          NR_FREE_PAGES.
//	in use    none of the above. kind says who uses it (anon, file, slab,
//	          page table, kernel), owner which memory user. A folio of order
//	          > 0 has pgHead on its first page and pgTail on the others; all
//	          of its pages carry its order. An in-use folio on an LRU list has
//	          pgLRU on the head and next/prev link the LRU list.
//
// alloc:  free -> (expand) -> in use, or free -> pcp -> in use
// free:   in use -> pcp (orders 0-3 and 9), or in use -> free (merge buddies)
//
// # Pageblocks
//
// The kernel keeps 4 bits of migratetype plus the compaction skip bit per
// pageblock and walks a block's 512 struct pages whenever it needs to know
// how many are free or movable (prep_move_freepages_block, the compaction
// scanners). pagesim keeps those counts on the pageblock and updates them as
// pages change state, so that "is this block emptyable?" costs O(1). Scans
// still charge the simulated task for every page the kernel would visit.

import (
	"github.com/pagesim/pagesim/engine/internal/enum"
	"github.com/pagesim/pagesim/engine/sim"
)

// Page flags (a subset of enum pageflags plus the buddy/pcp page types).
const (
	pgBuddy       uint16 = 1 << iota // first page of a free chunk on a free list (PageBuddy)
	pgPCP                            // first page of a free chunk on a per-CPU list
	pgReserved                       // PageReserved: never managed by the buddy allocator
	pgHead                           // PageHead: first page of a folio of order > 0
	pgTail                           // PageTail: other pages of a folio
	pgLRU                            // PageLRU: folio is on an LRU list (head only)
	pgActive                         // PG_active: on the active list
	pgReferenced                     // PG_referenced
	pgDirty                          // PG_dirty
	pgWriteback                      // PG_writeback
	pgPinned                         // folio_maybe_dma_pinned(): FOLL_LONGTERM pin
	pgSwapBacked                     // PG_swapbacked: anon
	pgWorkingset                     // PG_workingset
	pgIsolated                       // taken off the LRU by reclaim or compaction
	pgUnevictable                    // PG_unevictable (mlocked)
	pgYoung                          // a PTE mapping the folio has its accessed bit set
)

// PageKind says what an in-use page is used for. It is pagesim's summary of
// what the kernel derives from page->mapping, page types and slab flags.
type PageKind uint8

const (
	KindNone        PageKind = iota // free, pcp or reserved
	KindKernel                      // other kernel allocations (unmovable)
	KindAnon                        // anonymous memory (movable, on the anon LRU)
	KindFile                        // page cache (movable, on the file LRU)
	KindSlab                        // slab, unreclaimable
	KindSlabReclaim                 // slab, reclaimable (dentries, inodes)
	KindPageTable                   // page tables
	NrPageKinds
)

var pageKindNames = [NrPageKinds]string{"none", "kernel", "anon", "file", "slab", "slab_reclaimable", "pagetable"}

// String returns the kind's name.
func (k PageKind) String() string { return enum.Name(pageKindNames[:], k) }

// page is pagesim's struct page. 16 bytes; see the file comment for its
// states. Invariant: exactly one of {reserved, free head, free tail, pcp
// head, pcp tail, in use} holds, and the per-zone and per-block counters
// agree with the sum of the pages (CheckInvariants).
type page struct {
	next, prev PFN    // free-list, pcp-list or LRU links, NilPFN-terminated
	owner      uint32 // memory user that owns an in-use page (0 = none)
	flags      uint16 // pg* bits
	order      uint8  // buddy order of a free/pcp chunk head; folio order of an in-use page
	kind       PageKind
}

// pageblock is one pageblock's bitmap entry plus counters.
type pageblock struct {
	mt   MigrateType // migratetype (MIGRATE_ISOLATE when isolated)
	skip bool        // PB_compact_skip
	// nrFree counts pages of this block inside free buddy chunks.
	nrFree uint16
	// nrLRU counts pages of folios on an LRU list (PageLRU).
	nrLRU uint16
	// nrPinned counts long-term pinned pages.
	nrPinned uint16
	// nrPCP counts pages of this block sitting on per-CPU lists.
	nrPCP uint16
}

// freeList is one free_area[order].free_list[mt]: an intrusive doubly linked
// list of chunk heads, head first.
type freeList struct {
	head, tail PFN
	n          uint64 // chunks on the list
}

// freeArea is struct free_area.
type freeArea struct {
	list [MIGRATE_TYPES]freeList
	// nrFree counts chunks of this order over all migratetypes (free_area.nr_free).
	nrFree uint64
}

// Per-CPU list geometry (mm/page_alloc.c order_to_pindex).
const (
	nrLowOrderPCPLists = MIGRATE_PCPTYPES * (PAGE_ALLOC_COSTLY_ORDER + 1)
	nrPCPLists         = nrLowOrderPCPLists + 2 // + order-9 movable and non-movable
	pcpBatchScaleMax   = 5                      // CONFIG_PCP_BATCH_SCALE_MAX
)

// pcp flags.
const (
	pcpfPrevFreeHighOrder uint8 = 1 << 0 // PCPF_PREV_FREE_HIGH_ORDER
	pcpfFreeHighBatch     uint8 = 1 << 1 // PCPF_FREE_HIGH_BATCH
)

// perCPUPages is struct per_cpu_pages.
type perCPUPages struct {
	count       int // pages on the lists, in base pages
	high        int
	highMin     int
	highMax     int
	batch       int
	flags       uint8
	allocFactor uint8
	freeCount   int
	lists       [nrPCPLists]freeList
}

// orderToPindex is order_to_pindex().
func orderToPindex(mt MigrateType, order Order) int {
	if order > PAGE_ALLOC_COSTLY_ORDER {
		if mt == MIGRATE_MOVABLE {
			return nrLowOrderPCPLists + 1
		}
		return nrLowOrderPCPLists
	}
	return MIGRATE_PCPTYPES*int(order) + int(mt)
}

// pindexToOrder is pindex_to_order().
func pindexToOrder(pindex int) Order {
	if pindex >= nrLowOrderPCPLists {
		return HPAGE_PMD_ORDER
	}
	return Order(pindex / MIGRATE_PCPTYPES)
}

// pcpAllowedOrder is pcp_allowed_order().
func pcpAllowedOrder(order Order) bool {
	return order <= PAGE_ALLOC_COSTLY_ORDER || order == HPAGE_PMD_ORDER
}

// Zone flags (enum zone_flags).
const (
	ZONE_BOOSTED_WATERMARK uint8 = 1 << iota
	ZONE_RECLAIM_ACTIVE
	ZONE_BELOW_HIGH
)

// Zone is struct zone.
type Zone struct {
	Node *Node
	Type ZoneType
	// ID indexes Machine.zones.
	ID int

	StartPFN     PFN
	SpannedPages uint64 // zone_end_pfn - zone_start_pfn
	PresentPages uint64 // pages in the span that exist
	ManagedPages uint64 // present pages given to the buddy allocator

	// watermark is _watermark[]; read through WmarkPages (which adds the boost).
	watermark      [NR_WMARK]uint64
	WatermarkBoost uint64
	// LowmemReserve[j] is the protection this zone keeps against a request
	// whose highest_zoneidx is j.
	LowmemReserve [MAX_NR_ZONES]int64

	NrReservedHighatomic uint64
	NrFreeHighatomic     uint64

	freeArea [NR_PAGE_ORDERS]freeArea
	pcp      []perCPUPages // indexed by CPU
	flags    uint8
	// nrBlocks counts the zone's pageblocks per migratetype, as
	// /proc/pagetypeinfo's "Number of blocks type" walk would.
	nrBlocks [MIGRATE_TYPES]uint64

	// Stat is vm_stat[] (enum zone_stat_item); NumaEvents is vm_numa_event[].
	Stat       [NR_VM_ZONE_STAT_ITEMS]int64
	NumaEvents [NR_VM_NUMA_EVENT_ITEMS]uint64

	// Lock is zone->lock.
	Lock sim.Lock

	// Compaction state (see compaction.go).
	compact compactState
}

// Populated is populated_zone(): the zone has present pages.
func (z *Zone) Populated() bool { return z.PresentPages > 0 }

// Managed reports whether the zone has pages managed by the buddy allocator.
func (z *Zone) Managed() bool { return z.ManagedPages > 0 }

// EndPFN is zone_end_pfn().
func (z *Zone) EndPFN() PFN { return z.StartPFN + PFN(z.SpannedPages) }

// SpansPFN is zone_spans_pfn().
func (z *Zone) SpansPFN(pfn PFN) bool { return pfn >= z.StartPFN && pfn < z.EndPFN() }

// Name is the zone's name ("Normal").
func (z *Zone) Name() string { return z.Type.String() }

// WmarkPages returns the watermark including the boost (wmark_pages()).
func (z *Zone) WmarkPages(w Watermark) uint64 { return z.watermark[w] + z.WatermarkBoost }

// RawWatermark returns _watermark[w] without the boost.
func (z *Zone) RawWatermark(w Watermark) uint64 { return z.watermark[w] }

// FreePages is zone_page_state(zone, NR_FREE_PAGES).
func (z *Zone) FreePages() uint64 {
	if v := z.Stat[NR_FREE_PAGES]; v > 0 {
		return uint64(v)
	}
	return 0
}

// PCP describes one CPU's pageset of the zone (for /proc/zoneinfo).
type PCP struct {
	Count, High, Batch, HighMin, HighMax int
}

// Pageset returns CPU cpu's per-CPU pageset values.
func (z *Zone) Pageset(cpu int) PCP {
	p := &z.pcp[cpu]
	return PCP{Count: p.count, High: p.high, Batch: p.batch, HighMin: p.highMin, HighMax: p.highMax}
}

// NrBlocks returns the number of the zone's pageblocks of a migratetype.
func (z *Zone) NrBlocks(mt MigrateType) uint64 { return z.nrBlocks[mt] }

// FreeChunks returns the number of free chunks of the order on the list of
// the migratetype (a /proc/pagetypeinfo cell).
func (z *Zone) FreeChunks(order Order, mt MigrateType) uint64 {
	return z.freeArea[order].list[mt].n
}

// NrFree returns free_area[order].nr_free (a /proc/buddyinfo cell).
func (z *Zone) NrFree(order Order) uint64 { return z.freeArea[order].nrFree }

// Node is pg_data_t.
type Node struct {
	ID    int
	Zones [MAX_NR_ZONES]*Zone
	// Zonelists: zonelist[0] is ZONELIST_FALLBACK (own zones, then other
	// nodes by distance), zonelist[1] ZONELIST_NOFALLBACK (own zones only).
	// Each lists zones highest type first within a node.
	zonelist [2][]*Zone
	// firstZone[thisnode][highest] caches first_zones_zonelist() for an
	// empty nodemask (-1: no eligible zone).
	firstZone [2][MAX_NR_ZONES]int16
	CPUs      []int
	// Stat is vm_stat[] of the node (enum node_stat_item).
	Stat      [NR_VM_NODE_STAT_ITEMS]int64
	kswapd    kswapdData
	kcompactd kcompactdData
	// memcgIter is the root cgroup's per-node reclaim iterator position
	// (mem_cgroup_per_node.iter.position): the index in Machine.memcgs of
	// the cgroup a partial walk visited last, -1 at the start of a round.
	memcgIter int
	// totalreservePages is pgdat->totalreserve_pages: the pages of the
	// node's zones the dirty limits leave out (calculateTotalreservePages).
	totalreservePages uint64
	// StartPFN/SpannedPages of the whole node.
	StartPFN     PFN
	SpannedPages uint64
	PresentPages uint64
}

// Zonelist returns the node's fallback (thisnode=false) or no-fallback zonelist.
func (n *Node) Zonelist(thisnode bool) []*Zone {
	if thisnode {
		return n.zonelist[1]
	}
	return n.zonelist[0]
}
