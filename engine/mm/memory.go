package mm

// memory.go models the parts of mm/memory.c, mm/rmap.c and mm/swap.c that
// give pages to memory users and take them back: setting up a new folio for
// an owner (charge, rmap counters, LRU add), unmapping and freeing it, and
// the costs of a fault. The policy of which order and node a fault tries
// (THP, mTHP, mempolicy) lives in huge_memory.go and mempolicy.go.

import (
	"fmt"
	"math/bits"

	"github.com/pagesim/pagesim/engine/sim"
)

// SwapDevice is the machine's swap space (one device, modelled by size).
type SwapDevice struct {
	// TotalPages and UsedPages count 4 KiB swap slots.
	TotalPages uint64
	UsedPages  uint64
}

// SetSwap sizes the swap device (swapon/swapoff); shrinking below what is
// in use is refused.
func (m *Machine) SetSwap(bytes uint64) error {
	pages := bytes / PAGE_SIZE
	if pages < m.Swap.UsedPages {
		return fmt.Errorf("swap: %d pages are in use, cannot shrink to %d", m.Swap.UsedPages, pages)
	}
	m.Swap.TotalPages = pages
	return nil
}

// nrSwapPagesFree is get_nr_swap_pages().
func (m *Machine) nrSwapPagesFree() uint64 { return m.Swap.TotalPages - m.Swap.UsedPages }

// canReclaimAnonPages is can_reclaim_anon_pages() without demotion: anon
// is reclaimable only if there is swap space left.
func (m *Machine) canReclaimAnonPages() bool { return m.nrSwapPagesFree() > 0 }

// canAgeAnonPages is can_age_anon_pages() without demotion: aging the
// anon LRU is worth it when swap is present (total_swap_pages), even full.
func (m *Machine) canAgeAnonPages() bool { return m.Swap.TotalPages > 0 }

// setupFolio makes a freshly allocated chunk a folio of owner o: kind,
// owner ID, memcg charge, the rmap counters, and the LRU (folio_add_lru).
func (m *Machine) setupFolio(head PFN, order Order, o *Owner) {
	n := PFN(1) << order
	for i := PFN(0); i < n; i++ {
		p := &m.pages[head+i]
		p.kind = o.Kind
		p.owner = o.ID
	}
	nr := uint64(n)
	o.Resident += nr
	o.Memcg.Usage += nr
	node := m.ZoneOf(head).Node
	switch o.Kind {
	case KindAnon:
		// The instantiating fault leaves the PTE young.
		m.pages[head].flags |= pgSwapBacked | pgYoung
		node.Stat[NR_ANON_MAPPED] += int64(nr)
		if order == HPAGE_PMD_ORDER {
			node.Stat[NR_ANON_THPS] += int64(nr)
		}
		m.lruAdd(head)
	case KindFile:
		node.Stat[NR_FILE_PAGES] += int64(nr)
		if order == HPAGE_PMD_ORDER {
			node.Stat[NR_FILE_THPS] += int64(nr)
		}
		m.lruAdd(head)
	case KindSlab:
		node.Stat[NR_SLAB_UNRECLAIMABLE_B] += int64(nr * PAGE_SIZE)
	case KindSlabReclaim:
		node.Stat[NR_SLAB_RECLAIMABLE_B] += int64(nr * PAGE_SIZE)
	case KindPageTable:
		node.Stat[NR_PAGETABLE] += int64(nr)
	}
}

// teardownFolio undoes setupFolio: off the LRU, uncharged, counters back.
// The pages stay allocated; the caller frees them.
func (m *Machine) teardownFolio(head PFN) {
	p := &m.pages[head]
	o := m.owners[p.owner]
	nr := m.folioNr(head)
	order := Order(0)
	if p.flags&pgHead != 0 {
		order = Order(p.order)
	}
	if p.flags&pgLRU != 0 {
		m.lruDel(head)
	}
	if p.flags&pgPinned != 0 {
		m.unpinFlags(head)
	}
	if p.flags&pgWriteback != 0 {
		// Callers wait for writeback first (FreeOwned, truncation);
		// keep the counters right if one did not.
		z := m.ZoneOf(head)
		z.Node.Stat[NR_WRITEBACK] -= int64(nr)
		z.Stat[NR_ZONE_WRITE_PENDING] -= int64(nr)
		p.flags &^= pgWriteback
	}
	o.Resident -= nr
	o.Memcg.Usage -= nr
	node := m.ZoneOf(head).Node
	switch o.Kind {
	case KindAnon:
		node.Stat[NR_ANON_MAPPED] -= int64(nr)
		if order == HPAGE_PMD_ORDER {
			node.Stat[NR_ANON_THPS] -= int64(nr)
		}
	case KindFile:
		node.Stat[NR_FILE_PAGES] -= int64(nr)
		if order == HPAGE_PMD_ORDER {
			node.Stat[NR_FILE_THPS] -= int64(nr)
		}
		if p.flags&pgDirty != 0 { // pgSwapCache for anon, so only here
			m.ZoneOf(head).Stat[NR_ZONE_WRITE_PENDING] -= int64(nr)
			node.Stat[NR_FILE_DIRTY] -= int64(nr)
		}
	case KindSlab:
		node.Stat[NR_SLAB_UNRECLAIMABLE_B] -= int64(nr * PAGE_SIZE)
	case KindSlabReclaim:
		node.Stat[NR_SLAB_RECLAIMABLE_B] -= int64(nr * PAGE_SIZE)
	case KindPageTable:
		node.Stat[NR_PAGETABLE] -= int64(nr)
	}
}

// AllocOwned allocates a folio of order for owner o with gfp on node nid
// (nodemask may restrict it) and sets it up (charge, counters, LRU). It
// returns the head PFN or NilPFN (with AllocPending(t) when the
// allocation stopped at a cond_resched(): call again).
func (m *Machine) AllocOwned(t *sim.Task, o *Owner, gfp GFP, order Order, nid int, nodemask NodeMask) PFN {
	head := m.AllocPages(t, gfp, order, nid, nodemask)
	if head == NilPFN {
		return NilPFN
	}
	m.setupFolio(head, order, o)
	return head
}

// FreeOwned unmaps and frees a folio (zap_pte_range + folio_put).
func (m *Machine) FreeOwned(t *sim.Task, head PFN) {
	head = m.folioHead(head)
	if m.pages[head].flags&pgWriteback != 0 {
		m.folioWaitWriteback(t, head)
	}
	order := Order(0)
	if m.pages[head].flags&pgHead != 0 {
		order = Order(m.pages[head].order)
	}
	m.teardownFolio(head)
	m.FreePages(t, head, order)
}

// PinFolio takes a FOLL_LONGTERM pin on the folio holding pfn
// (pin_user_pages with FOLL_LONGTERM): the folio can no longer be migrated
// or reclaimed. A folio in ZONE_MOVABLE is not long-term pinnable
// (folio_is_longterm_pinnable); the caller migrates it first, so PinFolio
// refuses it.
func (m *Machine) PinFolio(t *sim.Task, pfn PFN) error {
	head := m.folioHead(pfn)
	p := &m.pages[head]
	if p.owner == 0 {
		return fmt.Errorf("PFN %#x is not owned by a memory user", pfn)
	}
	if p.flags&pgPinned != 0 {
		return nil
	}
	if z := m.ZoneOf(head); z.Type == ZONE_MOVABLE {
		return fmt.Errorf("PFN %#x is in ZONE_MOVABLE and must be migrated before a long-term pin", pfn)
	}
	onLRU := p.flags&pgLRU != 0
	if onLRU {
		m.lruDel(head)
	}
	p.flags |= pgPinned
	if onLRU {
		m.lruAdd(head)
	}
	m.accountPin(t, head)
	return nil
}

// accountPin counts a new long-term pin of a folio whose pgPinned flag is
// set: its pageblocks' and owner's pinned pages, NR_FOLL_PIN_ACQUIRED, and
// the cost of pinning its pages.
func (m *Machine) accountPin(t *sim.Task, head PFN) {
	nr := m.folioNr(head)
	m.addBlockPinned(head, nr, 1)
	m.owners[m.pages[head].owner].Pinned += nr
	m.ZoneOf(head).Node.Stat[NR_FOLL_PIN_ACQUIRED] += int64(nr)
	t.Charge(m.Cost.PinPage * sim.Time(nr))
}

// UnpinFolio drops the pin (unpin_user_page).
func (m *Machine) UnpinFolio(t *sim.Task, pfn PFN) {
	head := m.folioHead(pfn)
	p := &m.pages[head]
	if p.flags&pgPinned == 0 {
		return
	}
	onLRU := p.flags&pgLRU != 0
	if onLRU {
		m.lruDel(head)
	}
	m.unpinFlags(head)
	if onLRU {
		m.lruAdd(head)
	}
}

func (m *Machine) unpinFlags(head PFN) {
	p := &m.pages[head]
	nr := m.folioNr(head)
	p.flags &^= pgPinned
	m.addBlockPinned(head, nr, -1)
	m.owners[p.owner].Pinned -= nr
	m.ZoneOf(head).Node.Stat[NR_FOLL_PIN_RELEASED] += int64(nr)
}

func (m *Machine) addBlockPinned(head PFN, nr uint64, delta int) {
	for i := uint64(0); i < nr; i += PageblockNrPages {
		b := &m.blocks[(head+PFN(i))>>PageblockOrder]
		n := nr - i
		if n > PageblockNrPages {
			n = PageblockNrPages
		}
		b.nrPinned = uint16(int(b.nrPinned) + delta*int(n))
	}
}

// FolioInfo describes the folio holding a PFN, for scripts and tests.
type FolioInfo struct {
	Head   PFN
	Order  Order
	Kind   PageKind
	Owner  string
	Node   int
	Zone   ZoneType
	LRU    bool
	Active bool
	Pinned bool
	Dirty  bool
	Free   bool
}

// Folio returns what is at pfn.
func (m *Machine) Folio(pfn PFN) FolioInfo {
	if pfn >= m.maxPFN {
		return FolioInfo{Head: NilPFN}
	}
	head := m.folioHead(pfn)
	p := &m.pages[head]
	fi := FolioInfo{Head: head, Kind: p.kind, LRU: p.flags&pgLRU != 0, Active: p.flags&pgActive != 0,
		Pinned: p.flags&pgPinned != 0, Dirty: p.kind == KindFile && p.flags&pgDirty != 0}
	if p.flags&pgHead != 0 {
		fi.Order = Order(p.order)
	}
	if p.owner != 0 {
		fi.Owner = m.owners[p.owner].Name
	}
	if z := m.ZoneOf(pfn); z != nil {
		fi.Node, fi.Zone = z.Node.ID, z.Type
	}
	states := m.PageStates(pfn, make([]PageState, 1))
	fi.Free = states[0] == PSFree || states[0] == PSPCP
	return fi
}

// AnonRegion is an anonymous VMA faulted in address order: a process heap,
// a VM's guest RAM, a memhog. pagesim keeps no page table: the region
// faults sequentially from Cursor, which is how qemu's vfio mapping and the
// seeds' fillers touch memory, so "is this range still unpopulated?"
// (pte_range_none) is a comparison with the cursor.
type AnonRegion struct {
	Owner *Owner
	// Pages is the region's size; Cursor the next page to fault.
	Pages, Cursor uint64
	// Madvised is VM_HUGEPAGE (MADV_HUGEPAGE), NoHugepage VM_NOHUGEPAGE.
	Madvised, NoHugepage bool
	Policy               Mempolicy
	// Pages mapped by folio size, and per node.
	PMDPages, MTHPPages, BasePages uint64
	NodePages                      []uint64
}

// NewAnonRegion creates an anonymous region of pages in cgroup cg.
func (m *Machine) NewAnonRegion(name string, cg *Memcg, pages uint64) *AnonRegion {
	return &AnonRegion{Owner: m.NewOwner(KindAnon, name, cg), Pages: pages, NodePages: make([]uint64, len(m.Nodes))}
}

// FaultResult says what one fault mapped.
type FaultResult struct {
	Head  PFN
	Order Order
	OK    bool // false: even the order-0 fallback failed (OOM)
	// Pending: the fault's allocation stopped at a cond_resched(); end
	// the step (sim.Resched) and take the fault again to finish it.
	Pending bool
}

// FaultAnonNext takes the write fault at the region's cursor
// (handle_mm_fault -> do_huge_pmd_anonymous_page or do_anonymous_page):
// a PMD THP if the range allows it and THP is enabled, else the enabled
// mTHP orders highest first, else a base page. With pin, the fault is taken
// by a FOLL_LONGTERM pin (vfio, io_uring buffers), which pins the folio.
func (m *Machine) FaultAnonNext(t *sim.Task, r *AnonRegion, pin bool) FaultResult {
	if r.Cursor >= r.Pages {
		return FaultResult{Head: NilPFN, OK: true}
	}
	nid := m.numaNodeID(t)
	gfpFix := func(g GFP) GFP {
		// PF_MEMALLOC_PIN: current_gfp_context() strips __GFP_MOVABLE
		// while a long-term pin faults pages in.
		if pin && !m.Kernel.NoMemallocPin {
			g &^= __GFP_MOVABLE
		}
		return g
	}
	ilx := int(r.Cursor)
	// A fault whose allocation stopped at a cond_resched() is taken again
	// from the attempt that stopped: from that order down, whatever the
	// THP settings say now (the kernel's fault is still in that call).
	from, resume := Order(HPAGE_PMD_ORDER), false
	if _, o, ok := m.pendingAlloc(t); ok {
		from, resume = o, true
	}
	pending := FaultResult{Head: NilPFN, Pending: true}
	// PMD-size THP (do_huge_pmd_anonymous_page).
	if from == HPAGE_PMD_ORDER && (resume || r.Cursor%HPAGE_PMD_NR == 0 && r.Pages-r.Cursor >= HPAGE_PMD_NR && m.THP.thpOrderAllowed(HPAGE_PMD_ORDER, r.Madvised, r.NoHugepage)) {
		resume = false
		gfp := gfpFix(m.THP.vmaTHPGFPMask(r.Madvised))
		head := m.allocPagesMpol(t, gfp|__GFP_COMP, HPAGE_PMD_ORDER, &r.Policy, ilx>>HPAGE_PMD_ORDER, nid)
		if m.AllocPending(t) {
			return pending
		}
		if head != NilPFN {
			m.countVMEvent(THP_FAULT_ALLOC)
			m.MTHP[HPAGE_PMD_ORDER].AnonFaultAlloc++
			return m.mapAnonFolio(t, r, head, HPAGE_PMD_ORDER, pin)
		}
		m.countVMEvent(THP_FAULT_FALLBACK)
		m.MTHP[HPAGE_PMD_ORDER].AnonFaultFallback++
	}
	// mTHP orders below PMD (alloc_anon_folio): the orders the VMA allows
	// (thp_vma_allowable_orders), those whose naturally aligned folio
	// lies inside the VMA (thp_vma_suitable_orders), highest first. No
	// order fits an address that is not 16 KiB aligned.
	if from > 0 && (resume || r.Cursor&3 == 0) {
		orders := m.THP.anonOrders(r.Madvised, r.NoHugepage, 1<<HPAGE_PMD_ORDER-1) & (1<<(from+1) - 1)
		if resume {
			orders |= 1 << from
		}
		if orders != 0 {
			gfp := gfpFix(m.THP.vmaTHPGFPMask(r.Madvised))
			for orders != 0 {
				o := Order(bits.Len64(orders) - 1)
				orders &^= 1 << o
				n := uint64(1) << o
				if !resume && (r.Cursor&(n-1) != 0 || r.Pages-r.Cursor < n) {
					continue
				}
				resume = false
				head := m.allocPagesMpol(t, gfp|__GFP_COMP, o, &r.Policy, ilx>>o, nid)
				if m.AllocPending(t) {
					return pending
				}
				if head != NilPFN {
					m.MTHP[o].AnonFaultAlloc++
					return m.mapAnonFolio(t, r, head, o, pin)
				}
				m.MTHP[o].AnonFaultFallback++
			}
		}
	}
	// Order 0: vma_alloc_zeroed_movable_folio, a folio like the others
	// (folio_alloc_mpol adds __GFP_COMP at every order).
	head := m.allocPagesMpol(t, gfpFix(GFP_HIGHUSER_MOVABLE|__GFP_ZERO|__GFP_COMP), 0, &r.Policy, ilx, nid)
	if m.AllocPending(t) {
		return pending
	}
	if head == NilPFN {
		return FaultResult{Head: NilPFN}
	}
	return m.mapAnonFolio(t, r, head, 0, pin)
}

// mapAnonFolio sets up a faulted folio: zeroing, rmap, LRU, the pin.
func (m *Machine) mapAnonFolio(t *sim.Task, r *AnonRegion, head PFN, order Order, pin bool) FaultResult {
	n := order.Pages()
	z := m.ZoneOf(head)
	// A long-term pin taken as the fault maps the folio (vfio's
	// VFIO_IOMMU_MAP_DMA) puts it straight into its lruvec's pinned pool,
	// where PinFolio would move it a moment later (the kernel leaves a
	// pinned folio on its LRU list; lru.go says why pagesim pools them).
	// ZONE_MOVABLE pages cannot be pinned in place (PinFolio refuses).
	pinNow := pin && z.Type != ZONE_MOVABLE
	if pinNow {
		m.pages[head].flags |= pgPinned
	}
	m.setupFolio(head, order, r.Owner)
	if order == HPAGE_PMD_ORDER {
		t.Charge(m.Cost.HugeFault)
		r.PMDPages += n
	} else {
		t.Charge(m.Cost.AnonFault)
		if order > 0 {
			r.MTHPPages += n
		} else {
			r.BasePages += n
		}
	}
	// Clearing runs on the faulting CPU: a folio on another node costs
	// the remote latency ratio (remoteCost).
	t.Charge(m.remoteCost(m.cpuNode[t.CPU], z.Node.ID, m.Cost.ClearPage4K*sim.Time(n)))
	m.countVMEvent(PGFAULT)
	r.NodePages[z.Node.ID] += n
	r.Cursor += n
	if pinNow {
		m.accountPin(t, head)
	}
	return FaultResult{Head: head, Order: order, OK: true}
}
