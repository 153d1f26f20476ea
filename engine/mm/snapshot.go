package mm

// snapshot.go hands out read-only views of the machine for the page map, the
// panel and the command line. Views are copies filled on request into
// caller-owned buffers, so that drawing never touches live state and a
// caller that reuses its buffers allocates nothing per frame.

import (
	"github.com/pagesim/pagesim/engine/internal/enum"
	"github.com/pagesim/pagesim/engine/sim"
)

// PageState is a compact per-page state for drawing.
type PageState uint8

const (
	PSReserved  PageState = iota // not managed, or a hole
	PSFree                       // in a free buddy chunk
	PSPCP                        // in a chunk on a per-CPU list
	PSKernel                     // other kernel memory
	PSSlab                       // slab (reclaimable or not)
	PSPageTable                  // page tables
	PSAnon                       // anonymous memory
	PSFile                       // page cache
	PSPinned                     // long-term pinned (FOLL_LONGTERM)
	NrPageStates
)

var pageStateNames = [NrPageStates]string{"reserved", "free", "pcp", "kernel", "slab", "pagetable", "anon", "file", "pinned"}

// String returns the state's name as the map's legend spells it.
func (s PageState) String() string { return enum.Name(pageStateNames[:], s) }

// PageStates fills dst with the state of pages [start, start+len(dst)) and
// returns it. PFNs beyond memory read as reserved.
func (m *Machine) PageStates(start PFN, dst []PageState) []PageState {
	i := 0
	pfn := start
	// Back up to the head of a free or pcp chunk that covers start.
	for i < len(dst) {
		if pfn >= m.maxPFN {
			dst[i] = PSReserved
			i++
			pfn++
			continue
		}
		p := &m.pages[pfn]
		switch {
		case p.flags&pgReserved != 0:
			dst[i] = PSReserved
		case p.flags&(pgBuddy|pgPCP) != 0:
			st := PSFree
			if p.flags&pgPCP != 0 {
				st = PSPCP
			}
			n := 1 << p.order
			for j := 0; j < n && i < len(dst); j++ {
				dst[i] = st
				i++
			}
			pfn += PFN(n)
			continue
		case p.flags&pgPinned != 0:
			dst[i] = PSPinned
		default:
			dst[i] = m.kindState(pfn, p)
		}
		i++
		pfn++
	}
	// A chunk that starts before 'start' was seen as in-use pages: fix up
	// by looking for covering chunks of every order.
	for o := Order(1); o < NR_PAGE_ORDERS; o++ {
		head := start &^ (PFN(1)<<o - 1)
		if head == start || head >= m.maxPFN {
			continue
		}
		p := &m.pages[head]
		if p.flags&(pgBuddy|pgPCP) != 0 && Order(p.order) == o {
			st := PSFree
			if p.flags&pgPCP != 0 {
				st = PSPCP
			}
			end := head + PFN(1)<<o
			for q := start; q < end && int(q-start) < len(dst); q++ {
				dst[q-start] = st
			}
		}
	}
	return dst
}

func (m *Machine) kindState(pfn PFN, p *page) PageState {
	k := p.kind
	if p.flags&pgTail != 0 {
		head := pfn &^ (PFN(1)<<p.order - 1)
		k = m.pages[head].kind
		if m.pages[head].flags&pgPinned != 0 {
			return PSPinned
		}
	}
	switch k {
	case KindAnon:
		return PSAnon
	case KindFile:
		return PSFile
	case KindSlab, KindSlabReclaim:
		return PSSlab
	case KindPageTable:
		return PSPageTable
	}
	return PSKernel
}

// BlockView summarises one pageblock.
type BlockView struct {
	MT     MigrateType
	Skip   bool
	Zone   int16 // zone ID, -1 outside every zone
	Free   uint16
	PCP    uint16
	LRU    uint16
	Pinned uint16
}

// NrPageblocks returns the number of pageblocks (maxPFN / 512, rounded up).
func (m *Machine) NrPageblocks() int { return len(m.blocks) }

// BlockViews fills dst (grown if needed) with every pageblock's view.
func (m *Machine) BlockViews(dst []BlockView) []BlockView {
	if cap(dst) < len(m.blocks) {
		dst = make([]BlockView, len(m.blocks))
	}
	dst = dst[:len(m.blocks)]
	for i := range m.blocks {
		b := &m.blocks[i]
		dst[i] = BlockView{MT: b.mt, Skip: b.skip, Zone: m.zoneOfBlock[i], Free: b.nrFree, PCP: b.nrPCP, LRU: b.nrLRU, Pinned: b.nrPinned}
	}
	return dst
}

// ZoneView summarises one zone.
type ZoneView struct {
	Node           int
	Type           ZoneType
	StartPFN       PFN
	Spanned        uint64
	Managed        uint64
	Free           int64
	Min, Low, High uint64
	Boost          uint64
	NrFree         [NR_PAGE_ORDERS]uint64
	Blocks         [MIGRATE_TYPES]uint64
	// CachedMigratePFN (async, sync) and CachedFreePFN are where the next
	// compaction run's scanners start (compact_cached_migrate_pfn,
	// compact_cached_free_pfn).
	CachedMigratePFN [2]PFN
	CachedFreePFN    PFN
	// LastCompaction is the latest compact_zone() run on the zone.
	LastCompaction LastCompaction
}

// LastCompaction describes one compact_zone() run: where its scanners met
// or stopped, what they scanned and how it ended.
type LastCompaction struct {
	Runs                        uint64 // compact_zone() runs so far on the zone
	At                          sim.Time
	MigratePFN, FreePFN         PFN
	MigrateScanned, FreeScanned uint64
	Result                      string // mm_compaction_end status ("complete", "success", ...)
	Async                       bool
	Daemon                      bool // run by kcompactd
}

// NodeView is what the map shows of a node's reclaim and compaction
// threads.
type NodeView struct {
	Node int
	// CPUs is the number of CPUs on the node.
	CPUs int
	// Kswapd is "sleeping", "napping" or "balancing" (in balance_pgdat);
	// KswapdOrder its kswapd_order and KswapdFailures kswapd_failures
	// (MAX_RECLAIM_RETRIES: hopeless).
	Kswapd         string
	KswapdOrder    Order
	KswapdFailures int
	// Kcompactd is "sleeping" or "compacting"; KcompactdOrder its
	// kcompactd_max_order.
	Kcompactd      string
	KcompactdOrder Order
}

// NodeViews returns a view of every node's kswapd and kcompactd.
func (m *Machine) NodeViews() []NodeView {
	out := make([]NodeView, 0, len(m.Nodes))
	for _, n := range m.Nodes {
		// What pgdat holds at the world's time: the wakeups asked by
		// then are in it, whether or not the daemon has read them.
		ksOrder, _ := kswapdAsked(&n.kswapd, m.World.Now())
		kcOrder, _ := kcompactdAsked(&n.kcompactd, m.World.Now())
		v := NodeView{Node: n.ID, CPUs: len(n.CPUs), KswapdOrder: ksOrder, KswapdFailures: n.kswapd.failures,
			KcompactdOrder: kcOrder, Kswapd: "sleeping", Kcompactd: "sleeping"}
		switch n.kswapd.state {
		case ksTrySleepReset, ksNap:
			v.Kswapd = "napping"
		case ksBalanceStart, ksBalance:
			v.Kswapd = "balancing"
		}
		if !n.kcompactd.waitActive {
			v.Kcompactd = "compacting"
		}
		out = append(out, v)
	}
	return out
}

// ZoneViews returns a view of every zone that spans memory.
func (m *Machine) ZoneViews() []ZoneView {
	var out []ZoneView
	for _, z := range m.zones {
		if z.SpannedPages == 0 {
			continue
		}
		v := ZoneView{Node: z.Node.ID, Type: z.Type, StartPFN: z.StartPFN, Spanned: z.SpannedPages, Managed: z.ManagedPages,
			Free: z.Stat[NR_FREE_PAGES], Min: z.WmarkPages(WMARK_MIN), Low: z.WmarkPages(WMARK_LOW), High: z.WmarkPages(WMARK_HIGH),
			Boost: z.WatermarkBoost, Blocks: z.nrBlocks,
			CachedMigratePFN: z.compact.cachedMigPFN, CachedFreePFN: z.compact.cachedFreePFN, LastCompaction: z.compact.last}
		for o := range v.NrFree {
			v.NrFree[o] = z.freeArea[o].nrFree
		}
		out = append(out, v)
	}
	return out
}
