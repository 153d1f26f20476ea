package mm

// page_io.go models swap I/O from mm/page_io.c: swap_writepage() submits an
// anonymous folio's write to the block device (swap_writepage_bdev_async:
// one bio per folio; the reclaimer's plug merges a batch's contiguous
// slots into requests, see blk_mq.go) and returns at once; the folio stays
// under writeback until end_swap_bio_write() ends it (folioEndWriteback).
// pswpout and pgpgout are counted at submission (count_swpout_vm_event).
//
// The reclaimer does not wait for its writes: pageout() returns
// PAGE_SUCCESS with the folio under writeback, shrink_folio_list keeps it,
// and the folio is freed by a later pass after the write completes. Memory
// therefore comes back at the device's pace, and a reclaimer that needs it
// sooner scans on, submitting more. It sleeps only when the device's
// nr_requests tags are all in use.

import (
	"github.com/pagesim/pagesim/engine/sim"
)

// swapWritepages is swap_writepage() for the folios reclaim decided to
// write in one shrink_folio_list batch, under the batch's plug: the CPU
// part is charged per page (SwapOutPage), the writes are submitted as one
// run of contiguous slots.
func (m *Machine) swapWritepages(t *sim.Task, folios []PFN) {
	var pages uint64
	for _, head := range folios {
		nr := m.folioNr(head)
		pages += nr
		m._folioStartWriteback(head)
		m.countVMEvents(PSWPOUT, nr)
		m.countVMEvents(PGPGOUT, nr*4)
		if nr > 1 {
			m.countVMEvent(THP_SWPOUT)
		}
	}
	if pages == 0 {
		return
	}
	m.blkSubmitBios(t, REQ_OP_WRITE, pages, folios, m.folioNr, m.Cost.SwapOutPage)
}
