package mm

// page_alloc.go models the buddy allocator of mm/page_alloc.c: the free
// lists, splitting (expand) and merging (__free_one_page), the per-CPU
// pagesets (rmqueue_pcplist, rmqueue_bulk, free_frozen_page_commit,
// free_pcppages_bulk, drain_all_pages), the migratetype fallbacks
// (__rmqueue_claim, try_to_claim_block, __rmqueue_steal), the HighAtomic
// reserve, watermark boosting, the watermark checks (zone_watermark_fast,
// __zone_watermark_ok) and the zonelist walk (get_page_from_freelist) that
// together make the allocator's fast path.
//
// The code follows linux-mm/linux-mm mm/page_alloc.c @00cb34b0 (a 2026 mm
// tree) function by function; names are the kernel's in Go case. What is
// left out: CMA areas (no zone has MIGRATE_CMA blocks unless imported),
// memory isolation beyond the type, guard pages, page reporting, unaccepted
// memory, deferred struct page init, page shuffling (free pages go to the
// head or tail exactly as buddy_merge_likely() says), KASAN/init_on_alloc
// and cpusets.
//
// The slow path (__alloc_pages_slowpath) lives in page_alloc_slowpath.go.
//
// # Costs
//
// Every function that does work charges the running task (see cost.go):
// the fast path a constant per allocation, the zone lock the time the
// buddy operations under it take. A task that finds zone->lock held waits
// until it is free, which is how rmqueue_bulk and free_pcppages_bulk
// contend.

import (
	"github.com/pagesim/pagesim/engine/sim"
)

// ---------------------------------------------------------------------------
// Pageblock bitmap

// pageblockOf returns the pageblock holding pfn.
func (m *Machine) pageblockOf(pfn PFN) *pageblock { return &m.blocks[pfn>>PageblockOrder] }

// getPageblockMigratetype is get_pfnblock_migratetype().
func (m *Machine) getPageblockMigratetype(pfn PFN) MigrateType {
	return m.blocks[pfn>>PageblockOrder].mt
}

// PageblockMigratetype exports get_pageblock_migratetype for views.
func (m *Machine) PageblockMigratetype(pfn PFN) MigrateType { return m.getPageblockMigratetype(pfn) }

// setPageblockMigratetype is set_pageblock_migratetype(). Counts the
// movable blocks other types take over (seed 002's "movable blocks lost").
func (m *Machine) setPageblockMigratetype(pfn PFN, mt MigrateType) {
	b := &m.blocks[pfn>>PageblockOrder]
	if b.mt == mt {
		return
	}
	if b.mt == MIGRATE_MOVABLE && mt != MIGRATE_ISOLATE {
		m.Frag.MovableBlocksLost++
	}
	if id := m.zoneOfBlock[pfn>>PageblockOrder]; id >= 0 {
		z := m.zones[id]
		z.nrBlocks[b.mt]--
		z.nrBlocks[mt]++
	}
	b.mt = mt
}

// changePageblockRange is change_pageblock_range(): retype every pageblock
// of a chunk of order >= pageblock_order.
func (m *Machine) changePageblockRange(pfn PFN, order Order, mt MigrateType) {
	nr := 1
	if order > PageblockOrder {
		nr = 1 << (order - PageblockOrder)
	}
	for i := 0; i < nr; i++ {
		m.setPageblockMigratetype(pfn+PFN(i*PageblockNrPages), mt)
	}
}

// ---------------------------------------------------------------------------
// Free lists

func (l *freeList) pushHead(pages []page, pfn PFN) {
	p := &pages[pfn]
	p.prev = NilPFN
	p.next = l.head
	if l.head != NilPFN {
		pages[l.head].prev = pfn
	} else {
		l.tail = pfn
	}
	l.head = pfn
	l.n++
}

func (l *freeList) pushTail(pages []page, pfn PFN) {
	p := &pages[pfn]
	p.next = NilPFN
	p.prev = l.tail
	if l.tail != NilPFN {
		pages[l.tail].next = pfn
	} else {
		l.head = pfn
	}
	l.tail = pfn
	l.n++
}

func (l *freeList) remove(pages []page, pfn PFN) {
	p := &pages[pfn]
	if p.prev != NilPFN {
		pages[p.prev].next = p.next
	} else {
		l.head = p.next
	}
	if p.next != NilPFN {
		pages[p.next].prev = p.prev
	} else {
		l.tail = p.prev
	}
	p.next, p.prev = NilPFN, NilPFN
	l.n--
}

// addBlockFree adds delta times a free chunk's pages to the free count of
// each pageblock the chunk covers (a chunk above pageblock order fills
// every block it spans).
func (m *Machine) addBlockFree(pfn PFN, order Order, delta int) {
	if order <= PageblockOrder {
		b := &m.blocks[pfn>>PageblockOrder]
		b.nrFree = uint16(int(b.nrFree) + delta*(1<<order))
		return
	}
	for i := PFN(0); i < PFN(1)<<(order-PageblockOrder); i++ {
		b := &m.blocks[(pfn>>PageblockOrder)+i]
		b.nrFree = uint16(int(b.nrFree) + delta*PageblockNrPages)
	}
}

// _addToFreeList is __add_to_free_list() plus set_buddy_order().
func (m *Machine) _addToFreeList(z *Zone, pfn PFN, order Order, mt MigrateType, tail bool) {
	area := &z.freeArea[order]
	p := &m.pages[pfn]
	p.flags = pgBuddy
	p.order = uint8(order)
	p.kind = KindNone
	p.owner = 0
	if tail {
		area.list[mt].pushTail(m.pages, pfn)
	} else {
		area.list[mt].pushHead(m.pages, pfn)
	}
	area.nrFree++
	m.addBlockFree(pfn, order, 1)
	if order >= PageblockOrder && mt != MIGRATE_ISOLATE {
		z._modZonePageState(NR_FREE_PAGES_BLOCKS, int64(order.Pages()))
	}
}

// _delPageFromFreeList is __del_page_from_free_list().
func (m *Machine) _delPageFromFreeList(z *Zone, pfn PFN, order Order, mt MigrateType) {
	area := &z.freeArea[order]
	area.list[mt].remove(m.pages, pfn)
	m.pages[pfn].flags &^= pgBuddy
	area.nrFree--
	m.addBlockFree(pfn, order, -1)
	if order >= PageblockOrder && mt != MIGRATE_ISOLATE {
		z._modZonePageState(NR_FREE_PAGES_BLOCKS, -int64(order.Pages()))
	}
}

// moveToFreeList is move_to_free_list().
func (m *Machine) moveToFreeList(z *Zone, pfn PFN, order Order, oldMt, newMt MigrateType) {
	area := &z.freeArea[order]
	area.list[oldMt].remove(m.pages, pfn)
	area.list[newMt].pushTail(m.pages, pfn)
	nr := int64(order.Pages())
	m.accountFreepages(z, -nr, oldMt)
	m.accountFreepages(z, nr, newMt)
	if order >= PageblockOrder && (oldMt == MIGRATE_ISOLATE) != (newMt == MIGRATE_ISOLATE) {
		if oldMt != MIGRATE_ISOLATE {
			nr = -nr
		}
		z._modZonePageState(NR_FREE_PAGES_BLOCKS, nr)
	}
}

// accountFreepages is account_freepages().
func (m *Machine) accountFreepages(z *Zone, nr int64, mt MigrateType) {
	if mt == MIGRATE_ISOLATE {
		return
	}
	z._modZonePageState(NR_FREE_PAGES, nr)
	if mt == MIGRATE_CMA {
		z._modZonePageState(NR_FREE_CMA_PAGES, nr)
	} else if mt == MIGRATE_HIGHATOMIC {
		z.NrFreeHighatomic = uint64(int64(z.NrFreeHighatomic) + nr)
	}
}

// expand is expand(): split a chunk of order high down to low, putting the
// upper halves back on mt's lists. Returns the pages put back.
func (m *Machine) expand(z *Zone, pfn PFN, low, high Order, mt MigrateType) uint64 {
	size := PFN(1) << high
	var added uint64
	for high > low {
		high--
		size >>= 1
		m._addToFreeList(z, pfn+size, high, mt, false)
		added += uint64(size)
	}
	return added
}

// pageDelAndExpand is page_del_and_expand().
func (m *Machine) pageDelAndExpand(z *Zone, pfn PFN, low, high Order, mt MigrateType) {
	nr := int64(high.Pages())
	m._delPageFromFreeList(z, pfn, high, mt)
	nr -= int64(m.expand(z, pfn, low, high, mt))
	m.accountFreepages(z, -nr, mt)
}

// _rmqueueSmallest is __rmqueue_smallest().
func (m *Machine) _rmqueueSmallest(z *Zone, order Order, mt MigrateType) PFN {
	for o := order; o < NR_PAGE_ORDERS; o++ {
		pfn := z.freeArea[o].list[mt].head
		if pfn == NilPFN {
			continue
		}
		m.pageDelAndExpand(z, pfn, order, o, mt)
		return pfn
	}
	return NilPFN
}

// fallbacks is the fallbacks[][] table.
var fallbacks = [MIGRATE_PCPTYPES][MIGRATE_PCPTYPES - 1]MigrateType{
	MIGRATE_UNMOVABLE:   {MIGRATE_RECLAIMABLE, MIGRATE_MOVABLE},
	MIGRATE_MOVABLE:     {MIGRATE_RECLAIMABLE, MIGRATE_UNMOVABLE},
	MIGRATE_RECLAIMABLE: {MIGRATE_UNMOVABLE, MIGRATE_MOVABLE},
}

// shouldTryClaimBlock is should_try_claim_block().
func shouldTryClaimBlock(order Order, startMt MigrateType) bool {
	if order >= PageblockOrder {
		return true
	}
	if order >= PageblockOrder/2 {
		return true
	}
	if startMt == MIGRATE_RECLAIMABLE || startMt == MIGRATE_UNMOVABLE {
		return true
	}
	return false
}

type fallbackResult uint8

const (
	fallbackNoClaim fallbackResult = iota
	fallbackEmpty
	fallbackFound
)

// findSuitableFallback is find_suitable_fallback().
func findSuitableFallback(area *freeArea, order Order, mt MigrateType, claimable bool) (fallbackResult, MigrateType) {
	if claimable && !shouldTryClaimBlock(order, mt) {
		return fallbackNoClaim, 0
	}
	if area.nrFree == 0 {
		return fallbackEmpty, 0
	}
	for _, f := range fallbacks[mt] {
		if area.list[f].n > 0 {
			return fallbackFound, f
		}
	}
	return fallbackEmpty, 0
}

// MaxWatermarkBoost is the most boost_watermark() lets the zone's
// watermarks rise by with vm.watermark_boost_factor factor: factor
// ten-thousandths of the high watermark, at least a pageblock; 0 when the
// factor is 0, the high watermark rounds it to nothing, or the zone is
// under four pageblocks ("unlikely to produce results").
func (z *Zone) MaxWatermarkBoost(factor int) uint64 {
	if factor <= 0 || PageblockNrPages*4 > z.ManagedPages {
		return 0
	}
	maxBoost := multFrac(z.watermark[WMARK_HIGH], uint64(factor), 10000)
	if maxBoost == 0 {
		return 0
	}
	return max(maxBoost, PageblockNrPages)
}

// boostWatermark is boost_watermark().
func (m *Machine) boostWatermark(z *Zone) bool {
	maxBoost := z.MaxWatermarkBoost(m.Sysctl.WatermarkBoostFactor)
	if maxBoost == 0 {
		return false
	}
	z.WatermarkBoost += PageblockNrPages
	if z.WatermarkBoost > maxBoost {
		z.WatermarkBoost = maxBoost
	}
	return true
}

// _moveFreepagesBlock is __move_freepages_block(): move every free chunk of
// the pageblock starting at startPFN from oldMt's lists to newMt's.
func (m *Machine) _moveFreepagesBlock(z *Zone, startPFN PFN, oldMt, newMt MigrateType) int {
	moved := 0
	end := startPFN + PageblockNrPages
	for pfn := startPFN; pfn < end; {
		p := &m.pages[pfn]
		if p.flags&pgBuddy == 0 {
			pfn++
			continue
		}
		order := Order(p.order)
		m.moveToFreeList(z, pfn, order, oldMt, newMt)
		pfn += PFN(1) << order
		moved += 1 << order
	}
	return moved
}

// prepMoveFreepagesBlock is prep_move_freepages_block(): the counts come
// from the pageblock's counters instead of a walk (the kernel walks).
func (m *Machine) prepMoveFreepagesBlock(z *Zone, pfn PFN) (start PFN, free, movable int, ok bool) {
	start = pfn &^ (PageblockNrPages - 1)
	end := start + PageblockNrPages
	if !z.SpansPFN(start) || !z.SpansPFN(end-1) {
		return 0, 0, 0, false
	}
	b := &m.blocks[start>>PageblockOrder]
	return start, int(b.nrFree), int(b.nrLRU), true
}

// moveFreepagesBlockType is move_freepages_block(): move the free pages and
// retype the block.
func (m *Machine) moveFreepagesBlockType(z *Zone, pfn PFN, oldMt, newMt MigrateType) int {
	start, _, _, ok := m.prepMoveFreepagesBlock(z, pfn)
	if !ok {
		return -1
	}
	res := m._moveFreepagesBlock(z, start, oldMt, newMt)
	m.setPageblockMigratetype(start, newMt)
	return res
}

// tryToClaimBlock is try_to_claim_block().
func (m *Machine) tryToClaimBlock(z *Zone, pfn PFN, currentOrder, order Order, startType, blockType MigrateType, allocFlags AllocFlags) PFN {
	if currentOrder >= PageblockOrder {
		// Take ownership for orders >= pageblock_order.
		m._delPageFromFreeList(z, pfn, currentOrder, blockType)
		m.changePageblockRange(pfn, currentOrder, startType)
		nrAdded := m.expand(z, pfn, order, currentOrder, startType)
		// The chunk leaves blockType's accounting; what expand put
		// back is accounted to startType.
		m.accountFreepages(z, -int64(currentOrder.Pages()), blockType)
		m.accountFreepages(z, int64(nrAdded), startType)
		if blockType == MIGRATE_MOVABLE {
			m.Frag.WholeBlocksClaimed += uint64(1) << (currentOrder - PageblockOrder)
		}
		return pfn
	}
	// Boost watermarks to increase reclaim pressure to reduce the
	// likelihood of future fallbacks; wake kswapd now.
	if m.boostWatermark(z) && allocFlags&ALLOC_KSWAPD != 0 {
		z.flags |= ZONE_BOOSTED_WATERMARK
	}
	start, free, movable, ok := m.prepMoveFreepagesBlock(z, pfn)
	if !ok {
		return NilPFN
	}
	var alike int
	if startType == MIGRATE_MOVABLE {
		alike = movable
	} else if blockType == MIGRATE_MOVABLE {
		alike = PageblockNrPages - (free + movable)
	}
	if free+alike >= 1<<(PageblockOrder-1) {
		m._moveFreepagesBlock(z, start, blockType, startType)
		m.setPageblockMigratetype(start, startType)
		return m._rmqueueSmallest(z, order, startType)
	}
	return NilPFN
}

// _rmqueueClaim is __rmqueue_claim().
func (m *Machine) _rmqueueClaim(t *sim.Task, z *Zone, order Order, startMt MigrateType, allocFlags AllocFlags) PFN {
	minOrder := order
	if order < PageblockOrder && allocFlags&ALLOC_NOFRAGMENT != 0 {
		minOrder = PageblockOrder
	}
	for o := int(MAX_PAGE_ORDER); o >= int(minOrder); o-- {
		area := &z.freeArea[o]
		res, fallbackMt := findSuitableFallback(area, Order(o), startMt, true)
		if res == fallbackEmpty {
			continue
		}
		if res == fallbackNoClaim {
			break
		}
		pfn := area.list[fallbackMt].head
		got := m.tryToClaimBlock(z, pfn, Order(o), order, startMt, fallbackMt, allocFlags)
		if got != NilPFN {
			m.traceExtfrag(t, got, order, Order(o), startMt, fallbackMt)
			return got
		}
	}
	return NilPFN
}

// _rmqueueSteal is __rmqueue_steal().
func (m *Machine) _rmqueueSteal(t *sim.Task, z *Zone, order Order, startMt MigrateType) PFN {
	for o := order; o < NR_PAGE_ORDERS; o++ {
		area := &z.freeArea[o]
		res, fallbackMt := findSuitableFallback(area, o, startMt, false)
		if res == fallbackEmpty {
			continue
		}
		pfn := area.list[fallbackMt].head
		m.pageDelAndExpand(z, pfn, order, o, fallbackMt)
		m.traceExtfrag(t, pfn, order, o, startMt, fallbackMt)
		return pfn
	}
	return NilPFN
}

// traceExtfrag emits mm_page_alloc_extfrag and counts the fallback kind.
func (m *Machine) traceExtfrag(t *sim.Task, pfn PFN, allocOrder, fallbackOrder Order, allocMt, fallbackMt MigrateType) {
	changeOwnership := m.getPageblockMigratetype(pfn) == allocMt
	switch {
	case fallbackOrder >= PageblockOrder:
		m.Frag.ClaimWhole++
	case changeOwnership:
		m.Frag.ClaimPartial++
	default:
		m.Frag.Steal++
	}
	m.Trace.extfrag(t, pfn, allocOrder, fallbackOrder, allocMt, fallbackMt, changeOwnership)
}

type rmqueueMode uint8

const (
	rmqueueNormal rmqueueMode = iota
	rmqueueCMA
	rmqueueClaimMode
	rmqueueStealMode
)

// _rmqueue is __rmqueue().
func (m *Machine) _rmqueue(t *sim.Task, z *Zone, order Order, mt MigrateType, allocFlags AllocFlags, mode *rmqueueMode) PFN {
	var pfn PFN
	if allocFlags&ALLOC_CMA != 0 && z.Stat[NR_FREE_CMA_PAGES] > z.Stat[NR_FREE_PAGES]/2 {
		if pfn = m._rmqueueSmallest(z, order, MIGRATE_CMA); pfn != NilPFN {
			return pfn
		}
	}
	switch *mode {
	case rmqueueNormal:
		if pfn = m._rmqueueSmallest(z, order, mt); pfn != NilPFN {
			return pfn
		}
		fallthrough
	case rmqueueCMA:
		if allocFlags&ALLOC_CMA != 0 {
			if pfn = m._rmqueueSmallest(z, order, MIGRATE_CMA); pfn != NilPFN {
				*mode = rmqueueCMA
				return pfn
			}
		}
		fallthrough
	case rmqueueClaimMode:
		if pfn = m._rmqueueClaim(t, z, order, mt, allocFlags); pfn != NilPFN {
			*mode = rmqueueNormal
			return pfn
		}
		fallthrough
	case rmqueueStealMode:
		if allocFlags&ALLOC_NOFRAGMENT == 0 {
			if pfn = m._rmqueueSteal(t, z, order, mt); pfn != NilPFN {
				*mode = rmqueueStealMode
				return pfn
			}
		}
	}
	return NilPFN
}

// rmqueueBulk is rmqueue_bulk(): take count chunks under zone->lock and
// append them to the pcp list. Returns how many it got.
func (m *Machine) rmqueueBulk(t *sim.Task, z *Zone, order Order, count int, list *freeList, mt MigrateType, allocFlags AllocFlags) int {
	mode := rmqueueNormal
	z.Lock.Lock(t)
	i := 0
	for ; i < count; i++ {
		pfn := m._rmqueue(t, z, order, mt, allocFlags, &mode)
		if pfn == NilPFN {
			break
		}
		m.setPCPChunk(pfn, order)
		list.pushTail(m.pages, pfn)
	}
	t.Charge(m.Cost.BuddyOp * sim.Time(i+1))
	z.Lock.Unlock(t)
	return i
}

// setPCPChunk marks a chunk as held on a per-CPU list.
func (m *Machine) setPCPChunk(pfn PFN, order Order) {
	p := &m.pages[pfn]
	p.flags = pgPCP
	p.order = uint8(order)
	m.blocks[pfn>>PageblockOrder].nrPCP += uint16(1) << order
}

// nrPCPAlloc is nr_pcp_alloc().
func (z *Zone) nrPCPAlloc(p *perCPUPages, order Order) int {
	baseBatch := p.batch
	high := min(max(p.high, p.highMin), p.highMax)
	p.high = high
	if high < baseBatch {
		return 1
	}
	batch := baseBatch
	if order == 0 {
		batch = baseBatch << p.allocFactor
	}
	if p.highMin != p.highMax && z.flags&ZONE_BELOW_HIGH == 0 {
		high = min(high+batch, p.highMax)
		p.high = high
	}
	if order == 0 {
		maxNrAlloc := max(high-p.count-baseBatch, baseBatch)
		if batch <= maxNrAlloc && p.allocFactor < pcpBatchScaleMax {
			p.allocFactor++
		}
		batch = min(batch, maxNrAlloc)
	}
	if batch > 1 {
		batch = max(batch>>order, 2)
	}
	return batch
}

// decayPCPHigh is decay_pcp_high(), from vmstat_update on p's CPU once a
// second: pcp->high, grown by refills (nrPCPAlloc) and by frees that find
// the list full (nrPCPHigh), falls by an eighth towards high_min, but not
// below count - (batch << CONFIG_PCP_BATCH_SCALE_MAX) so that one call
// frees at most that much; the pages above the new high go back to the
// buddy lists under zone->lock (free_pcppages_bulk from pindex 0). It
// reports whether there is more to do next time (the kernel's todo).
func (m *Machine) decayPCPHigh(t *sim.Task, z *Zone, p *perCPUPages) bool {
	todo := false
	if p.high > p.highMin {
		p.high = max(p.count-(p.batch<<pcpBatchScaleMax), p.high-(p.high>>3), p.highMin)
		if p.high > p.highMin {
			todo = true
		}
	}
	if toDrain := p.count - p.high; toDrain > 0 {
		m.freePCPPagesBulk(t, z, toDrain, p, 0)
		todo = true
	}
	return todo
}

// pcpNeedsDecay reports whether decayPCPHigh has work on p: the kernel's
// vmstat_update would find it (need_update() is true on a CPU whose
// refills and frees moved its zone counters, as every one that changes
// pcp->high does).
func pcpNeedsDecay(p *perCPUPages) bool { return p.high > p.highMin || p.count > p.high }

// rmqueuePCPList is rmqueue_pcplist() with __rmqueue_pcplist().
func (m *Machine) rmqueuePCPList(t *sim.Task, preferred, z *Zone, order Order, mt MigrateType, allocFlags AllocFlags) PFN {
	p := &z.pcp[t.CPU]
	p.freeCount >>= 1
	list := &p.lists[orderToPindex(mt, order)]
	if list.head == NilPFN {
		batch := z.nrPCPAlloc(p, order)
		got := m.rmqueueBulk(t, z, order, batch, list, mt, allocFlags)
		p.count += got << order
		if pcpNeedsDecay(p) {
			m.queueVmstatWork(t.Now, t.CPU)
		}
		if list.head == NilPFN {
			return NilPFN
		}
	}
	pfn := list.head
	list.remove(m.pages, pfn)
	p.count -= 1 << order
	m.blocks[pfn>>PageblockOrder].nrPCP -= uint16(1) << order
	m.pages[pfn].flags = 0
	m.countVMEvents(pgallocEvent(z.Type), order.Pages())
	m.zoneStatistics(t, preferred, z, 1)
	return pfn
}

// rmqueueBuddy is rmqueue_buddy().
func (m *Machine) rmqueueBuddy(t *sim.Task, preferred, z *Zone, order Order, allocFlags AllocFlags, mt MigrateType) PFN {
	z.Lock.Lock(t)
	pfn := NilPFN
	if allocFlags&ALLOC_HIGHATOMIC != 0 {
		pfn = m._rmqueueSmallest(z, order, MIGRATE_HIGHATOMIC)
	}
	if pfn == NilPFN {
		mode := rmqueueNormal
		pfn = m._rmqueue(t, z, order, mt, allocFlags, &mode)
		if pfn == NilPFN && allocFlags&(ALLOC_OOM|ALLOC_NON_BLOCK) != 0 {
			pfn = m._rmqueueSmallest(z, order, MIGRATE_HIGHATOMIC)
		}
	}
	t.Charge(m.Cost.BuddyOp)
	z.Lock.Unlock(t)
	if pfn == NilPFN {
		return NilPFN
	}
	m.pages[pfn].flags = 0
	m.countVMEvents(pgallocEvent(z.Type), order.Pages())
	m.zoneStatistics(t, preferred, z, 1)
	return pfn
}

// zoneStatistics is zone_statistics().
func (m *Machine) zoneStatistics(t *sim.Task, preferred, z *Zone, nr uint64) {
	local := NUMA_LOCAL
	if z.Node.ID != m.cpuNode[t.CPU] {
		local = NUMA_OTHER
	}
	if z.Node == preferred.Node {
		z.NumaEvents[NUMA_HIT] += nr
	} else {
		z.NumaEvents[NUMA_MISS] += nr
		preferred.NumaEvents[NUMA_FOREIGN] += nr
	}
	z.NumaEvents[local] += nr
}

// rmqueue is rmqueue().
func (m *Machine) rmqueue(t *sim.Task, preferred, z *Zone, order Order, gfp GFP, allocFlags AllocFlags, mt MigrateType) PFN {
	pfn := NilPFN
	if pcpAllowedOrder(order) {
		pfn = m.rmqueuePCPList(t, preferred, z, order, mt, allocFlags)
	}
	if pfn == NilPFN {
		pfn = m.rmqueueBuddy(t, preferred, z, order, allocFlags, mt)
	}
	if allocFlags&ALLOC_KSWAPD != 0 && z.flags&ZONE_BOOSTED_WATERMARK != 0 {
		z.flags &^= ZONE_BOOSTED_WATERMARK
		m.wakeupKswapd(t, z, 0, 0, z.Type)
	}
	return pfn
}

// prepNewPage is prep_new_page(): the pages become in use; a __GFP_COMP
// request of order > 0 becomes a compound page (folio).
func (m *Machine) prepNewPage(pfn PFN, order Order, gfp GFP) {
	head := &m.pages[pfn]
	head.flags = 0
	head.kind = KindKernel
	head.owner = 0
	head.order = uint8(order)
	if order == 0 {
		return
	}
	comp := gfp&__GFP_COMP != 0
	if comp {
		head.flags = pgHead
	}
	n := PFN(1) << order
	for i := PFN(1); i < n; i++ {
		p := &m.pages[pfn+i]
		p.kind = KindKernel
		p.owner = 0
		if comp {
			p.flags = pgTail
			p.order = uint8(order)
		} else {
			p.flags = 0
			p.order = 0
		}
	}
}

// reserveHighatomicPageblock is reserve_highatomic_pageblock().
func (m *Machine) reserveHighatomicPageblock(t *sim.Task, pfn PFN, order Order, z *Zone) {
	if z.ManagedPages/100 < PageblockNrPages {
		return
	}
	maxManaged := alignUp(z.ManagedPages/100, PageblockNrPages)
	if z.NrReservedHighatomic >= maxManaged {
		return
	}
	z.Lock.Lock(t)
	defer z.Lock.Unlock(t)
	mt := m.getPageblockMigratetype(pfn)
	if mt >= MIGRATE_PCPTYPES {
		return
	}
	if order < PageblockOrder {
		if m.moveFreepagesBlockType(z, pfn, mt, MIGRATE_HIGHATOMIC) == -1 {
			return
		}
		z.NrReservedHighatomic += PageblockNrPages
	} else {
		m.changePageblockRange(pfn, order, MIGRATE_HIGHATOMIC)
		z.NrReservedHighatomic += order.Pages()
	}
}

// alignUp is the kernel's ALIGN(x, a): x rounded up to a multiple of a, a
// power of two.
func alignUp[T ~uint32 | ~uint64](x, a T) T { return (x + a - 1) &^ (a - 1) }

// ---------------------------------------------------------------------------
// Watermark checks

// _zoneWatermarkUnusableFree is __zone_watermark_unusable_free().
func _zoneWatermarkUnusableFree(z *Zone, order Order, allocFlags AllocFlags) int64 {
	unusable := int64(order.Pages()) - 1
	if allocFlags&ALLOC_RESERVES == 0 {
		unusable += int64(z.NrFreeHighatomic)
	}
	if allocFlags&ALLOC_CMA == 0 {
		unusable += z.Stat[NR_FREE_CMA_PAGES]
	}
	return unusable
}

// _zoneWatermarkOK is __zone_watermark_ok(), and with seed 001 patch 1
// (Patches.WatermarkCheckKnowsMigratetype) __zone_watermark_ok_mt(): mt is
// the request's migratetype, or MIGRATE_TYPES for a caller that has none
// (the kernel's callers of plain __zone_watermark_ok; patches 2 and 3 turn
// theirs into callers of the _mt check). With patch 1 and a migratetype,
// under ALLOC_NOFRAGMENT a sub-pageblock order counts only the free lists
// the request can take.
func (m *Machine) _zoneWatermarkOK(z *Zone, order Order, mark uint64, highestZoneidx ZoneType, allocFlags AllocFlags, freePages int64, mt MigrateType) bool {
	min := int64(mark)
	freePages -= _zoneWatermarkUnusableFree(z, order, allocFlags)
	if allocFlags&ALLOC_RESERVES != 0 {
		if allocFlags&ALLOC_MIN_RESERVE != 0 {
			min -= min / 2
			if allocFlags&ALLOC_NON_BLOCK != 0 {
				min -= min / 4
			}
		}
		if allocFlags&ALLOC_OOM != 0 {
			min -= min / 2
		}
	}
	if freePages <= min+z.LowmemReserve[highestZoneidx] {
		return false
	}
	if order == 0 {
		return true
	}
	nofragMT := m.Patches.WatermarkCheckKnowsMigratetype && mt != MIGRATE_TYPES && allocFlags&ALLOC_NOFRAGMENT != 0
	for o := order; o < NR_PAGE_ORDERS; o++ {
		area := &z.freeArea[o]
		if area.nrFree == 0 {
			continue
		}
		if nofragMT && o < PageblockOrder {
			// Seed 001 patch 1: below pageblock_order a
			// NOFRAGMENT request can only take its own type.
			if mt < MIGRATE_PCPTYPES && area.list[mt].n > 0 {
				return true
			}
		} else {
			for t := MigrateType(0); t < MIGRATE_PCPTYPES; t++ {
				if area.list[t].n > 0 {
					return true
				}
			}
		}
		if allocFlags&ALLOC_CMA != 0 && area.list[MIGRATE_CMA].n > 0 {
			return true
		}
		if allocFlags&(ALLOC_HIGHATOMIC|ALLOC_OOM) != 0 && area.list[MIGRATE_HIGHATOMIC].n > 0 {
			return true
		}
	}
	return false
}

// zoneWatermarkOK is zone_watermark_ok(): __zone_watermark_ok with the
// zone's NR_FREE_PAGES.
func (m *Machine) zoneWatermarkOK(z *Zone, order Order, mark uint64, highestZoneidx ZoneType, allocFlags AllocFlags) bool {
	return m._zoneWatermarkOK(z, order, mark, highestZoneidx, allocFlags, z.Stat[NR_FREE_PAGES], MIGRATE_TYPES)
}

// zoneWatermarkFast is zone_watermark_fast(). mt reaches the check only with
// seed 001 patch 2 (Patches.HighOrderCheckHonoursNofragment), which makes
// it call __zone_watermark_ok_mt().
func (m *Machine) zoneWatermarkFast(z *Zone, order Order, mark uint64, highestZoneidx ZoneType, allocFlags AllocFlags, mt MigrateType) bool {
	if !m.Patches.HighOrderCheckHonoursNofragment {
		mt = MIGRATE_TYPES
	}
	free := z.Stat[NR_FREE_PAGES]
	if order == 0 {
		usable := free
		reserved := _zoneWatermarkUnusableFree(z, 0, allocFlags)
		if reserved > usable {
			reserved = usable
		}
		usable -= reserved
		if usable > int64(mark)+z.LowmemReserve[highestZoneidx] {
			return true
		}
	}
	if m._zoneWatermarkOK(z, order, mark, highestZoneidx, allocFlags, free, mt) {
		return true
	}
	if order == 0 && allocFlags&ALLOC_MIN_RESERVE != 0 && z.WatermarkBoost != 0 &&
		allocFlags&ALLOC_WMARK_MASK == ALLOC_WMARK_MIN {
		return m._zoneWatermarkOK(z, order, z.watermark[WMARK_MIN], highestZoneidx, allocFlags, free, mt)
	}
	return false
}

// ---------------------------------------------------------------------------
// The fast path

// NodeMask is a nodemask_t for up to 64 nodes; 0 means "all nodes".
type NodeMask uint64

// Has reports whether node n is in the mask (an empty mask has every node).
func (nm NodeMask) Has(n int) bool { return nm == 0 || nm&(1<<uint(n)) != 0 }

// allocContext is struct alloc_context.
type allocContext struct {
	zonelist       []*Zone
	nodemask       NodeMask
	preferredIdx   int // index in zonelist of preferred_zoneref, -1 if none
	highestZoneidx ZoneType
	migratetype    MigrateType
	spreadDirty    bool
}

func (ac *allocContext) preferredZone() *Zone { return ac.zonelist[ac.preferredIdx] }

// firstZonesZonelist is first_zones_zonelist(): the first zone in the
// zonelist at or below highest and allowed by the nodemask.
func firstZonesZonelist(zl []*Zone, highest ZoneType, nm NodeMask) int {
	for i, z := range zl {
		if z.Type <= highest && nm.Has(z.Node.ID) {
			return i
		}
	}
	return -1
}

// getPageFromFreelist is get_page_from_freelist().
func (m *Machine) getPageFromFreelist(t *sim.Task, gfp GFP, order Order, allocFlags AllocFlags, ac *allocContext) PFN {
	multiNode := len(m.Nodes) > 1
	skipKswapdNodes := multiNode
	skippedKswapdNodes := false
	// last_pgdat / last_pgdat_dirty_ok: node_dirty_ok's answer for the
	// node of the previous zone ("mm/page_alloc: cache the result of
	// node_dirty_ok()", v5.19); kept across the retries, as the kernel
	// declares them outside its retry label.
	var lastPgdat *Node
	lastPgdatDirtyOk := false
retry:
	noFallback := allocFlags&ALLOC_NOFRAGMENT != 0
	for i := ac.preferredIdx; i < len(ac.zonelist); i++ {
		z := ac.zonelist[i]
		if z.Type > ac.highestZoneidx || (ac.nodemask != 0 && !ac.nodemask.Has(z.Node.ID)) {
			continue
		}
		// Page cache allocated for a write goes to a node within its
		// dirty limit (page_writeback.go), on the fast path only.
		if ac.spreadDirty {
			if lastPgdat != z.Node {
				lastPgdat = z.Node
				lastPgdatDirtyOk = m.nodeDirtyOk(z.Node)
			}
			if !lastPgdatDirtyOk {
				continue
			}
		}
		if noFallback && m.Sysctl.DefragMode == 0 && multiNode && i != ac.preferredIdx {
			// If moving to a remote node, retry but allow
			// fragmenting fallbacks: locality is more important.
			if z.Node != ac.preferredZone().Node {
				allocFlags &^= ALLOC_NOFRAGMENT
				goto retry
			}
		}
		if skipKswapdNodes && m.kswapdActive(z.Node) {
			skippedKswapdNodes = true
			continue
		}
		if z.flags&ZONE_BELOW_HIGH == 0 {
			if m.zoneWatermarkFast(z, order, z.WmarkPages(WMARK_HIGH), ac.highestZoneidx, allocFlags, ac.migratetype) {
				goto tryThisZone
			}
			z.flags |= ZONE_BELOW_HIGH
		}
		if !m.zoneWatermarkFast(z, order, z.WmarkPages(Watermark(allocFlags&ALLOC_WMARK_MASK)), ac.highestZoneidx, allocFlags, ac.migratetype) {
			if allocFlags&ALLOC_NO_WATERMARKS != 0 {
				goto tryThisZone
			}
			// node_reclaim is disabled (vm.zone_reclaim_mode = 0).
			continue
		}
	tryThisZone:
		if pfn := m.rmqueue(t, ac.preferredZone(), z, order, gfp, allocFlags, ac.migratetype); pfn != NilPFN {
			m.prepNewPage(pfn, order, gfp)
			if allocFlags&ALLOC_HIGHATOMIC != 0 {
				m.reserveHighatomicPageblock(t, pfn, order, z)
			}
			return pfn
		}
	}
	if skipKswapdNodes && skippedKswapdNodes {
		skipKswapdNodes = false
		goto retry
	}
	if noFallback && m.Sysctl.DefragMode == 0 {
		allocFlags &^= ALLOC_NOFRAGMENT
		goto retry
	}
	return NilPFN
}

// allocFlagsNofragment is alloc_flags_nofragment(): ALLOC_NOFRAGMENT under
// defrag_mode, or for a request whose preferred zone is ZONE_NORMAL, unless
// the machine has several nodes and this node's ZONE_DMA32 is empty; plus
// ALLOC_KSWAPD from __GFP_KSWAPD_RECLAIM. The kernel code is under
// CONFIG_ZONE_DMA32, which the x86-64 and arm64 kernels pagesim models
// have, and "assume[s] on UMA that if Normal is populated then so is
// DMA32": on one node it sets the flag without looking at ZONE_DMA32
// (linux-mm/linux-mm mm/page_alloc.c @00cb34b0, nr_online_nodes > 1 &&
// !populated_zone(--zone)). get_page_from_freelist drops it once the
// zonelist is walked without a page (the "UMA machine" retry). Kernels
// before v5.0 have no such rule (Kernel.NoAllocNofragment).
func (m *Machine) allocFlagsNofragment(z *Zone, gfp GFP) AllocFlags {
	var flags AllocFlags
	if gfp&__GFP_KSWAPD_RECLAIM != 0 {
		flags = ALLOC_KSWAPD
	}
	if m.Sysctl.DefragMode != 0 {
		return flags | ALLOC_NOFRAGMENT
	}
	if m.Kernel.NoAllocNofragment || z == nil || z.Type != ZONE_NORMAL {
		return flags
	}
	if len(m.Nodes) > 1 && !z.Node.Zones[ZONE_DMA32].Populated() {
		return flags
	}
	return flags | ALLOC_NOFRAGMENT
}

// prepareAllocPages is prepare_alloc_pages().
func (m *Machine) prepareAllocPages(ac *allocContext, gfp GFP, order Order, nid int, nodemask NodeMask) AllocFlags {
	ac.highestZoneidx = gfpZone(gfp)
	ac.nodemask = nodemask
	ac.migratetype = gfpMigratetype(gfp)
	ac.spreadDirty = gfp&__GFP_WRITE != 0
	if gfp&__GFP_THISNODE != 0 {
		ac.zonelist = m.Nodes[nid].zonelist[1]
	} else {
		ac.zonelist = m.Nodes[nid].zonelist[0]
	}
	if nodemask == 0 {
		ac.preferredIdx = int(m.Nodes[nid].firstZone[b2i(gfp&__GFP_THISNODE != 0)][ac.highestZoneidx])
	} else {
		ac.preferredIdx = firstZonesZonelist(ac.zonelist, ac.highestZoneidx, ac.nodemask)
	}
	return ALLOC_WMARK_LOW
}

// AllocPages is __alloc_pages(gfp, order, preferred_nid, nodemask): the
// fast path, then the slow path. It returns the first PFN of the allocated
// chunk, or NilPFN. The pages are marked in use by the kernel
// (KindKernel); callers that are memory users set their kind and owner.
//
// An allocation that loops in the slow path ends its task's step at the
// kernel's cond_resched() calls: AllocPages then returns NilPFN with
// AllocPending(t) true, and the caller must end its step (return
// sim.Resched) and make the same call again when the task runs next,
// which resumes the allocation where it stopped.
func (m *Machine) AllocPages(t *sim.Task, gfp GFP, order Order, nid int, nodemask NodeMask) PFN {
	ts := m.current(t)
	if f := ts.alloc; f != nil {
		if f.reqGFP == gfp && f.order == order && f.reqNid == nid && f.nodemask == nodemask {
			if m.cpuNode[t.CPU] != f.cpuNid {
				m.Slow.ResumedOffNode++
			}
			return m.allocPagesFinish(t, ts, f)
		}
		m.abandonAlloc(t, ts)
	}
	if order > MAX_PAGE_ORDER {
		// WARN_ON_ONCE_GFP(order > MAX_PAGE_ORDER, gfp)
		return NilPFN
	}
	rnid := nid
	if nid < 0 || nid >= len(m.Nodes) {
		nid = m.cpuNode[t.CPU]
	}
	t.Charge(m.Cost.AllocFastPath)
	var ac allocContext
	allocFlags := m.prepareAllocPages(&ac, gfp, order, nid, nodemask)
	if ac.preferredIdx < 0 {
		return NilPFN
	}
	allocFlags |= m.allocFlagsNofragment(ac.preferredZone(), gfp)
	// A non-blocking __GFP_HIGH high-order request may use, and reserve,
	// the highatomic pageblocks from the first attempt on.
	allocFlags |= allocFlagsNonblocking(gfp, order) & ALLOC_HIGHATOMIC
	pfn := m.getPageFromFreelist(t, gfp, order, allocFlags, &ac)
	if pfn == NilPFN {
		// The slow path may put dirty pages anywhere.
		ac.spreadDirty = false
		f := &ts.frame
		trace := f.trace
		*f = allocFrame{reqGFP: gfp, order: order, reqNid: rnid, nodemask: nodemask, cpuNid: m.cpuNode[t.CPU], ac: ac, gfp: gfp, trace: trace}
		ts.alloc = f
		return m.allocPagesFinish(t, ts, f)
	}
	m.traceMmPageAlloc(t, pfn, order, ac.migratetype, gfp)
	return pfn
}

// allocPagesFinish runs or resumes the slow path of frame f, and when the
// allocation is over, retires the frame and emits mm_page_alloc.
func (m *Machine) allocPagesFinish(t *sim.Task, ts *taskStruct, f *allocFrame) PFN {
	pfn, done := m._allocPagesSlowpath(t, f)
	if !done {
		return NilPFN
	}
	ts.alloc = nil
	f.at = resumeStart
	m.traceMmPageAlloc(t, pfn, f.order, f.ac.migratetype, f.reqGFP)
	return pfn
}

// traceMmPageAlloc emits mm_page_alloc, which fires for failures too
// (pfn 0).
func (m *Machine) traceMmPageAlloc(t *sim.Task, pfn PFN, order Order, mt MigrateType, gfp GFP) {
	if m.Trace.enabled[TraceMmPageAlloc] {
		p := int64(pfn)
		if pfn == NilPFN {
			p = 0
		}
		m.Trace.Emit(t, TraceMmPageAlloc, p, int64(order), int64(mt), int64(gfp))
	}
}

// AllocPending reports whether t has an allocation stopped at a
// cond_resched() in the slow path: the call that returned must be made
// again (after the task's step ends with sim.Resched) to finish it.
func (m *Machine) AllocPending(t *sim.Task) bool {
	return m.current(t).alloc != nil
}

// AllocYields returns how many times t's suspended allocation has stopped
// at a cond_resched() so far (0 when none is pending): a caller that must
// not wait for ever (a script command) bounds it.
func (m *Machine) AllocYields(t *sim.Task) uint64 {
	if f := m.current(t).alloc; f != nil {
		return f.yields
	}
	return 0
}

// pendingAlloc returns the mask and order of t's suspended allocation, for
// callers that try several requests in turn (an order loop, a first
// attempt on the local node): they resume at the one that stopped instead
// of repeating the attempts before it.
func (m *Machine) pendingAlloc(t *sim.Task) (GFP, Order, bool) {
	if f := m.current(t).alloc; f != nil {
		return f.reqGFP, f.order, true
	}
	return 0, 0, false
}

// abandonAlloc drops t's suspended allocation when the task makes another
// request instead of repeating the call (a caller that ignored
// AllocPending; the kernel has no such path). The memory stall a direct
// reclaim holds open is closed; Slow.Abandoned counts it and the invariant
// check reports it.
func (m *Machine) abandonAlloc(t *sim.Task, ts *taskStruct) {
	f := ts.alloc
	if f.at == resumeBeforeReclaim || f.at == resumeAfterReclaim {
		m.psiMemstallLeave(t)
	}
	ts.alloc = nil
	f.at = resumeStart
	m.Slow.Abandoned++
}

// AllocPagesLocal allocates on the node of the task's CPU (alloc_pages()
// with the default policy).
func (m *Machine) AllocPagesLocal(t *sim.Task, gfp GFP, order Order) PFN {
	return m.AllocPages(t, gfp, order, m.numaNodeID(t), 0)
}

// numaNodeID is numa_node_id() as a caller of the allocator sees it: the
// node of the task's CPU, except while an allocation of t is stopped at a
// cond_resched(), when it is the node the request began on. The kernel's
// caller computed its node before the allocator rescheduled and keeps it
// in a local when the task resumes on another node's CPU; pagesim's
// callers repeat the call, so they ask here for the same node.
func (m *Machine) numaNodeID(t *sim.Task) int {
	if f := m.current(t).alloc; f != nil {
		return f.cpuNid
	}
	return m.cpuNode[t.CPU]
}

// ---------------------------------------------------------------------------
// Freeing

// findBuddy is find_buddy_page_pfn(): the buddy of a chunk if it is a free
// chunk of the same order in the same zone.
func (m *Machine) findBuddy(z *Zone, pfn PFN, order Order) (PFN, bool) {
	buddy := pfn ^ (PFN(1) << order)
	if buddy >= m.maxPFN || !z.SpansPFN(buddy) {
		return buddy, false
	}
	p := &m.pages[buddy]
	return buddy, p.flags&pgBuddy != 0 && Order(p.order) == order
}

// _freeOnePage is __free_one_page(). The caller holds zone->lock.
func (m *Machine) _freeOnePage(z *Zone, pfn PFN, order Order, mt MigrateType) {
	m.accountFreepages(z, int64(order.Pages()), mt)
	var buddyPFN PFN
	for order < MAX_PAGE_ORDER {
		if m.compactionCapture(z, pfn, order, mt) {
			m.accountFreepages(z, -int64(order.Pages()), mt)
			return
		}
		b, ok := m.findBuddy(z, pfn, order)
		buddyPFN = b
		if !ok {
			break
		}
		buddyMt := mt
		if order >= PageblockOrder {
			// Prevent merges between blocks without fallbacks
			// and normal blocks.
			buddyMt = m.getPageblockMigratetype(b)
			if mt != buddyMt && (mt >= MIGRATE_PCPTYPES || buddyMt >= MIGRATE_PCPTYPES) {
				break
			}
		}
		m._delPageFromFreeList(z, b, order, buddyMt)
		if buddyMt != mt {
			// Match buddy type so expand() puts sub-blocks on
			// the right lists.
			m.setPageblockMigratetype(b, mt)
		}
		pfn &= b
		order++
	}
	toTail := false
	if order < MAX_PAGE_ORDER-1 {
		// buddy_merge_likely(): is the next-larger buddy free?
		higher := buddyPFN & pfn
		_, toTail = m.findBuddy(z, higher, order+1)
	}
	m._addToFreeList(z, pfn, order, mt, toTail)
}

// splitLargeBuddy is split_large_buddy(): free a chunk in pieces of at most
// pageblock_order, each with its block's migratetype.
func (m *Machine) splitLargeBuddy(z *Zone, pfn PFN, order Order) {
	end := pfn + PFN(1)<<order
	if order > PageblockOrder {
		order = PageblockOrder
	}
	for pfn < end {
		m._freeOnePage(z, pfn, order, m.getPageblockMigratetype(pfn))
		pfn += PFN(1) << order
	}
}

// freePagesPrepare is free_pages_prepare(): clear the folio state.
func (m *Machine) freePagesPrepare(pfn PFN, order Order) {
	n := PFN(1) << order
	for i := PFN(0); i < n; i++ {
		p := &m.pages[pfn+i]
		p.flags = 0
		p.order = 0
		p.kind = KindNone
		p.owner = 0
	}
}

// freeOnePage is free_one_page(): under zone->lock.
func (m *Machine) freeOnePage(t *sim.Task, z *Zone, pfn PFN, order Order) {
	z.Lock.Lock(t)
	m.splitLargeBuddy(z, pfn, order)
	t.Charge(m.Cost.BuddyOp)
	z.Lock.Unlock(t)
}

// FreePages is __free_pages(): return a chunk of 2^order pages starting at
// pfn, which the caller allocated with that order.
func (m *Machine) FreePages(t *sim.Task, pfn PFN, order Order) {
	z := m.ZoneOf(pfn)
	m.freePagesPrepare(pfn, order)
	m.countVMEvents(PGFREE, order.Pages())
	if m.Trace.enabled[TraceMmPageFree] {
		m.Trace.Emit(t, TraceMmPageFree, int64(pfn), int64(order))
	}
	t.Charge(m.Cost.FreeFastPath)
	if !pcpAllowedOrder(order) {
		m.freeOnePage(t, z, pfn, order)
		return
	}
	mt := m.getPageblockMigratetype(pfn)
	if mt >= MIGRATE_PCPTYPES {
		if mt == MIGRATE_ISOLATE {
			m.freeOnePage(t, z, pfn, order)
			return
		}
		mt = MIGRATE_MOVABLE
	}
	m.freeFrozenPageCommit(t, z, &z.pcp[t.CPU], pfn, mt, order)
}

// nextMemoryNode reports whether next_memory_node(nid) < MAX_NUMNODES: a
// node with memory has a higher ID.
func (m *Machine) nextMemoryNode(nid int) bool {
	for _, n := range m.Nodes[nid+1:] {
		if n.PresentPages > 0 {
			return true
		}
	}
	return false
}

// freeFrozenPageCommit is free_frozen_page_commit().
func (m *Machine) freeFrozenPageCommit(t *sim.Task, z *Zone, p *perCPUPages, pfn PFN, mt MigrateType, order Order) {
	p.allocFactor >>= 1
	pindex := orderToPindex(mt, order)
	m.setPCPChunk(pfn, order)
	p.lists[pindex].pushHead(m.pages, pfn)
	p.count += 1 << order
	batch := p.batch
	freeHigh := false
	if order > 0 && order <= PAGE_ALLOC_COSTLY_ORDER {
		freeHigh = p.freeCount >= batch+p.highMin/2 && p.flags&pcpfPrevFreeHighOrder != 0 &&
			(p.flags&pcpfFreeHighBatch == 0 || p.count >= batch)
		p.flags |= pcpfPrevFreeHighOrder
	} else if p.flags&pcpfPrevFreeHighOrder != 0 {
		p.flags &^= pcpfPrevFreeHighOrder
	}
	if p.freeCount < batch<<pcpBatchScaleMax {
		p.freeCount += 1 << order
	}
	high := z.nrPCPHigh(p, batch, freeHigh)
	if pcpNeedsDecay(p) {
		m.queueVmstatWork(t.Now, t.CPU)
	}
	if p.count >= high {
		m.freePCPPagesBulk(t, z, nrPCPFree(p, batch, high, freeHigh), p, pindex)
		if z.flags&ZONE_BELOW_HIGH != 0 && m.zoneWatermarkOK(z, 0, z.WmarkPages(WMARK_HIGH), ZONE_MOVABLE, 0) {
			z.flags &^= ZONE_BELOW_HIGH
			// The pressure is gone: if a fallback node exists, direct
			// reclaim (which would reset it) may never run here, so
			// a hopeless kswapd gets another chance
			// (next_memory_node(nid) < MAX_NUMNODES).
			if n := z.Node; n.kswapd.hopeless() && m.nextMemoryNode(n.ID) {
				n.kswapd.failures = 0
			}
		}
	}
}

// nrPCPFree is nr_pcp_free().
func nrPCPFree(p *perCPUPages, batch, high int, freeHigh bool) int {
	if freeHigh {
		return min(p.count, batch<<pcpBatchScaleMax)
	}
	if high < batch {
		return 1
	}
	// high >= batch*4 here (zone_highsize), so batch <= high-batch.
	return min(max(p.freeCount, batch), high-batch)
}

// nrPCPHigh is nr_pcp_high().
func (z *Zone) nrPCPHigh(p *perCPUPages, batch int, freeHigh bool) int {
	high := min(max(p.high, p.highMin), p.highMax)
	p.high = high
	if high == 0 {
		return 0
	}
	if freeHigh {
		p.high = max(high-(batch<<pcpBatchScaleMax), p.highMin)
		return 0
	}
	if z.flags&ZONE_RECLAIM_ACTIVE != 0 {
		fc := max(p.freeCount, batch)
		p.high = max(high-fc, p.highMin)
		return min(batch<<2, p.high)
	}
	if p.highMin == p.highMax {
		return high
	}
	if z.flags&ZONE_BELOW_HIGH != 0 {
		fc := max(p.freeCount, batch)
		p.high = max(high-fc, p.highMin)
		high = max(p.count, p.highMin)
	} else if p.count >= high {
		need := p.freeCount + batch
		if p.high < need {
			p.high = min(max(need, p.highMin), p.highMax)
		}
	}
	return high
}

// freePCPPagesBulk is free_pcppages_bulk(): return count pages from the
// lists, round robin starting at pindex, oldest first, under zone->lock.
func (m *Machine) freePCPPagesBulk(t *sim.Task, z *Zone, count int, p *perCPUPages, pindex int) {
	if count > p.count {
		count = p.count
	}
	pindex--
	z.Lock.Lock(t)
	ops := 0
	for count > 0 {
		var list *freeList
		for {
			pindex++
			if pindex > nrPCPLists-1 {
				pindex = 0
			}
			list = &p.lists[pindex]
			if list.head != NilPFN {
				break
			}
		}
		order := pindexToOrder(pindex)
		nr := 1 << order
		for {
			pfn := list.tail
			list.remove(m.pages, pfn)
			count -= nr
			p.count -= nr
			m.pages[pfn].flags = 0
			m.blocks[pfn>>PageblockOrder].nrPCP -= uint16(nr)
			m._freeOnePage(z, pfn, order, m.getPageblockMigratetype(pfn))
			ops++
			if count <= 0 || list.head == NilPFN {
				break
			}
		}
	}
	t.Charge(m.Cost.BuddyOp * sim.Time(ops))
	z.Lock.Unlock(t)
}

// drainPagesZone is drain_pages_zone().
func (m *Machine) drainPagesZone(t *sim.Task, cpu int, z *Zone) {
	p := &z.pcp[cpu]
	for p.count > 0 {
		m.freePCPPagesBulk(t, z, min(p.count, p.batch<<pcpBatchScaleMax), p, 0)
	}
}

// DrainLocalPages is drain_local_pages(NULL).
func (m *Machine) DrainLocalPages(t *sim.Task) {
	for _, z := range m.zones {
		if z.Populated() {
			m.drainPagesZone(t, t.CPU, z)
		}
	}
}
