package mm

// page_writeback.go models the writeback state of a folio from
// mm/page-writeback.c: __folio_start_writeback() and __folio_end_writeback()
// with their counters (NR_WRITEBACK, NR_ZONE_WRITE_PENDING, NR_WRITTEN),
// folio_end_writeback()'s rotation of a folio reclaim is waiting for
// (folio_rotate_reclaimable), folio_wait_writeback(), and do_writepages()
// for one file (the filesystem's writepages reduced to: every dirty folio
// in index order, contiguous indexes in one plugged submission).
//
// A folio under writeback keeps PG_writeback from submission until its
// request completes (blk_mq.go retires it): reclaim keeps it, compaction
// does not isolate it, truncation and fdatasync wait for it. Its request
// knows its head PFN, which stays valid because nothing moves or frees a
// folio under writeback.
//
// There is no background writeback: no flusher thread writes dirty pages
// on its own (dirty_background_ratio, dirty_expire_centisecs) and writers
// are not throttled (balance_dirty_pages). Dirty page cache is written when
// its writer calls fdatasync or sync_file_range (FileFdatawrite).
//
// # Dirty limits
//
// The file also models the dirty limits of mm/page-writeback.c (mm tree of
// the v7.3-rc5 cycle, the one page_alloc.go follows) and the one place the
// page allocator uses them.
//
// ## What the kernel does
//
// Page cache that is written becomes dirty and has to be written back
// before reclaim can free it. The kernel bounds how much of it there may
// be: vm.dirty_ratio (or vm.dirty_bytes) of the "dirtyable" memory, the
// free pages above the kernel's reserves plus the file LRU pages, is the
// dirty limit; vm.dirty_background_ratio (or _bytes) is where the flusher
// threads start writing in the background (global_dirty_limits,
// domain_dirty_limits). A writer that goes over the limit is throttled in
// balance_dirty_pages until writeback brings the count down.
//
// Each node gets its share of the limit (node_dirty_limit over
// node_dirtyable_memory), and get_page_from_freelist spreads page cache
// allocated for a write (__GFP_WRITE, ac->spread_dirty_pages) so that no
// node holds more than its share: on the fast path, a node over its limit
// is skipped for the next one in the zonelist (node_dirty_ok, with the
// answer cached for consecutive zones of one node, last_pgdat_dirty_ok).
// The slow path does not look ("allow allocations to potentially exceed
// the per-node dirty limit in the slowpath ... before going into
// reclaim"), so a write never fails or reclaims because of the limit.
//
// ## What the model keeps
//
// The limits exactly: totalreserve_pages per node
// (calculate_totalreserve_pages, recomputed where the kernel recomputes
// it), the dirtyable memory, the ratio and bytes forms with the kernel's
// sysctl handlers (writing one form zeroes the other), the 32-bit cap, and
// node_dirty_ok in the zonelist walk as the kernel has it.
//
// ## What it leaves out, and what follows
//
// No flusher threads and no balance_dirty_pages: dirty page cache stays
// dirty until its writer syncs it (FileSync, FileFdatawrite), however much there is. The
// kernel would throttle a writer at the global limit and start background
// writeback at the background threshold, so in the kernel the nodes'
// dirty counts stay near their limits; in pagesim a workload that dirties
// more than the global limit without syncing pushes every node over its
// limit, after which node_dirty_ok sends each write allocation to the slow
// path (which takes a page locally, as the kernel's would, but counts the
// slow-path entry and wakes kswapd where the kernel's writer would have
// slept in balance_dirty_pages instead). The placement below the limit,
// which is what __GFP_WRITE changes, is the kernel's. No task in pagesim
// is real-time, so the 1/4 bonus of rt_or_dl_task never applies.

import (
	"github.com/pagesim/pagesim/engine/sim"
)

// pgSwapCache marks an anonymous folio whose swap-out write has completed:
// it is in the swap cache, unmapped and clean, and the next reclaim pass
// that meets it frees it (__remove_mapping). The kernel keeps PG_swapcache
// as an alias of PG_owner_priv_1; pagesim aliases it to the bit file
// folios use for PG_dirty, which anonymous folios never carry (the dirty
// state of anon memory is implied until it is written to swap).
const pgSwapCache = pgDirty

// _folioStartWriteback is __folio_start_writeback(): PG_writeback set and
// counted. The caller has cleared PG_dirty (folio_clear_dirty_for_io) or,
// for swap, written the folio's swap entry.
func (m *Machine) _folioStartWriteback(head PFN) {
	p := &m.pages[head]
	p.flags |= pgWriteback
	nr := int64(m.folioNr(head))
	z := m.ZoneOf(head)
	z.Node.Stat[NR_WRITEBACK] += nr
	z.Stat[NR_ZONE_WRITE_PENDING] += nr
}

// folioEndWriteback is folio_end_writeback() at the completion of the
// request that carried the folio: PG_writeback cleared, NR_WRITTEN counted.
// A swapped-out anonymous folio (PG_reclaim set by pageout) is rotated to
// the tail of its inactive list (folio_rotate_reclaimable) as a clean
// swap-cache folio for the next reclaim pass to free.
func (m *Machine) folioEndWriteback(head PFN) {
	p := &m.pages[head]
	if p.flags&pgWriteback == 0 {
		return
	}
	p.flags &^= pgWriteback
	nr := int64(m.folioNr(head))
	z := m.ZoneOf(head)
	z.Node.Stat[NR_WRITEBACK] -= nr
	z.Stat[NR_ZONE_WRITE_PENDING] -= nr
	z.Node.Stat[NR_WRITTEN] += nr
	if p.kind == KindAnon {
		p.flags |= pgSwapCache
		if p.flags&pgLRU != 0 && p.flags&pgPinned == 0 {
			m.lruDel(head)
			p.flags &^= pgActive
			m.lruAddTail(head)
			m.countVMEvents(PGROTATED, uint64(nr))
		}
	}
}

// folioWaitWriteback is folio_wait_writeback(): t sleeps until the request
// carrying the folio completes.
func (m *Machine) folioWaitWriteback(t *sim.Task, head PFN) {
	m.blkRetire(t.Now)
	if m.pages[head].flags&pgWriteback == 0 {
		return
	}
	for _, rq := range m.Blk.inflight {
		for _, h := range rq.folios {
			if h == head {
				m.ioSchedule(t, rq.complete)
				return
			}
		}
	}
}

// writebackFile is do_writepages() for a whole file (filemap_fdatawrite):
// every dirty folio, in index order, goes under writeback; each run of
// contiguous indexes is one plugged submission. It returns the pages
// submitted and when the last of them completes.
func (m *Machine) writebackFile(t *sim.Task, f *File) (uint64, sim.Time) {
	return m.writebackRange(t, f, 0, ^uint64(0))
}

// writebackRange is writebackFile for the folios that start in [lo, hi)
// (filemap_fdatawrite_range); only the extents that cover the range are
// walked.
func (m *Machine) writebackRange(t *sim.Task, f *File, lo, hi uint64) (uint64, sim.Time) {
	var total uint64
	var last sim.Time
	var run []PFN
	var runPages uint64
	next := uint64(0)
	flush := func() {
		if runPages == 0 {
			return
		}
		c := m.blkSubmitBios(t, REQ_OP_WRITE, runPages, run, m.folioNr, m.Cost.WritebackPage)
		last = max(last, c)
		total += runPages
		run, runPages = nil, 0
	}
	first := min(lo/fileExtentPages, uint64(len(f.extents)))
	for _, o := range f.extents[first:] {
		if o == nil {
			continue
		}
		if o.file.base >= hi {
			break
		}
		pages := o.file.pages
		for i := 0; i < len(pages); {
			head := pages[i]
			if head == NilPFN {
				i++
				continue
			}
			nr := m.folioNr(head)
			idx := o.file.base + uint64(i)
			if idx >= lo && idx < hi && m.pages[head].flags&pgDirty != 0 {
				if m.pages[head].flags&pgWriteback != 0 {
					// Redirtied while under writeback: a data-integrity
					// sync waits for the old write first
					// (write_cache_pages with WB_SYNC_ALL).
					flush()
					m.folioWaitWriteback(t, head)
				}
				if runPages > 0 && idx != next {
					flush()
				}
				m.clearDirty(head)
				m._folioStartWriteback(head)
				run = append(run, head)
				runPages += nr
				next = idx + nr
			}
			for i < len(pages) && pages[i] == head {
				i++
			}
		}
	}
	flush()
	if last > f.wbEnd {
		f.wbEnd = last
	}
	return total, last
}

// Default writeback sysctls (mm/page-writeback.c).
const (
	defDirtyRatio           = 20
	defDirtyBackgroundRatio = 10
	// dirtyBytesMin is dirty_bytes_min: vm.dirty_bytes takes at least
	// two pages.
	dirtyBytesMin = 2 * PAGE_SIZE
)

// calculateTotalreservePages is calculate_totalreserve_pages(): for every
// zone, its largest lowmem reserve against itself or a higher zone plus its
// high watermark, at most its managed pages, summed per node
// (pgdat->totalreserve_pages) and over the machine (totalreserve_pages).
// The kernel recomputes it at the end of __setup_per_zone_wmarks and of
// setup_per_zone_lowmem_reserve, when watermark_boost is 0.
func (m *Machine) calculateTotalreservePages() {
	var total uint64
	for _, n := range m.Nodes {
		n.totalreservePages = 0
		for _, z := range n.Zones {
			if z == nil {
				continue
			}
			var reserve int64
			for j := int(z.Type); j < len(z.LowmemReserve); j++ {
				reserve = max(reserve, z.LowmemReserve[j])
			}
			r := min(uint64(reserve)+z.watermark[WMARK_HIGH], z.ManagedPages)
			n.totalreservePages += r
			total += r
		}
	}
	m.totalreservePages = total
}

// TotalreservePages returns totalreserve_pages.
func (m *Machine) TotalreservePages() uint64 { return m.totalreservePages }

// nodeDirtyableMemory is node_dirtyable_memory(): the node's free pages
// above its reserves, plus its file LRU pages.
func (m *Machine) nodeDirtyableMemory(n *Node) uint64 {
	var free int64
	for _, z := range n.Zones {
		if z != nil && z.Populated() {
			free += z.Stat[NR_FREE_PAGES]
		}
	}
	nr := uint64(max(free, 0))
	nr -= min(nr, n.totalreservePages)
	nr += uint64(max(n.Stat[NR_INACTIVE_FILE], 0))
	nr += uint64(max(n.Stat[NR_ACTIVE_FILE], 0))
	return nr
}

// globalDirtyableMemory is global_dirtyable_memory() (no highmem on
// x86-64): never 0.
func (m *Machine) globalDirtyableMemory() uint64 {
	x := uint64(max(m.GlobalZoneState(NR_FREE_PAGES), 0))
	x -= min(x, m.totalreservePages)
	x += uint64(max(m.GlobalNodeState(NR_INACTIVE_FILE), 0))
	x += uint64(max(m.GlobalNodeState(NR_ACTIVE_FILE), 0))
	return x + 1
}

// divRoundUpPages is DIV_ROUND_UP(bytes, PAGE_SIZE).
func divRoundUpPages(bytes uint64) uint64 { return (bytes + PAGE_SIZE - 1) / PAGE_SIZE }

// nodeDirtyLimit is node_dirty_limit(): the most dirty pages the node may
// hold, its share of vm.dirty_bytes or vm.dirty_ratio of its dirtyable
// memory, capped to 32 bits.
func (m *Machine) nodeDirtyLimit(n *Node) uint64 {
	nodeMemory := m.nodeDirtyableMemory(n)
	var dirty uint64
	if m.Sysctl.DirtyBytes != 0 {
		dirty = divRoundUpPages(m.Sysctl.DirtyBytes) * nodeMemory / m.globalDirtyableMemory()
	} else {
		dirty = uint64(m.Sysctl.DirtyRatio) * nodeMemory / 100
	}
	return min(dirty, 1<<32-1)
}

// nodeDirtyOk is node_dirty_ok(): whether the node's dirty and writeback
// pages are within its dirty limit.
func (m *Machine) nodeDirtyOk(n *Node) bool {
	nr := uint64(max(n.Stat[NR_FILE_DIRTY], 0)) + uint64(max(n.Stat[NR_WRITEBACK], 0))
	return nr <= m.nodeDirtyLimit(n)
}

// GlobalDirtyLimits is global_dirty_limits() for a task that is not
// real-time: domain_dirty_limits() over global_dirtyable_memory(), in
// pages (the background threshold, then the dirty threshold), as
// /proc/vmstat's nr_dirty_background_threshold and nr_dirty_threshold
// print them.
func (m *Machine) GlobalDirtyLimits() (background, dirty uint64) {
	available := m.globalDirtyableMemory()
	// Ratios in per-PAGE_SIZE units for precision.
	ratio := uint64(m.Sysctl.DirtyRatio) * PAGE_SIZE / 100
	bgRatio := uint64(m.Sysctl.DirtyBackgroundRatio) * PAGE_SIZE / 100
	if m.Sysctl.DirtyBytes != 0 {
		dirty = divRoundUpPages(m.Sysctl.DirtyBytes)
	} else {
		dirty = ratio * available / PAGE_SIZE
	}
	if m.Sysctl.DirtyBackgroundBytes != 0 {
		background = divRoundUpPages(m.Sysctl.DirtyBackgroundBytes)
	} else {
		background = bgRatio * available / PAGE_SIZE
	}
	dirty = min(dirty, 1<<32-1)
	if background >= dirty {
		background = dirty / 2
	}
	return background, dirty
}
