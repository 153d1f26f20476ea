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

// folioStartWriteback is __folio_start_writeback(): PG_writeback set and
// counted. The caller has cleared PG_dirty (folio_clear_dirty_for_io) or,
// for swap, written the folio's swap entry.
func (m *Machine) folioStartWriteback(head PFN) {
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
	for _, o := range f.extents {
		if o == nil {
			continue
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
			if m.pages[head].flags&pgDirty != 0 {
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
				m.folioStartWriteback(head)
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
