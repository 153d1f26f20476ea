package mm

import (
	"testing"

	"github.com/pagesim/pagesim/engine/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// freeFromOrder returns the pages of z's free chunks of order o and above.
func freeFromOrder(z *Zone, o Order) uint64 {
	var n uint64
	for ; o < NR_PAGE_ORDERS; o++ {
		n += z.NrFree(o) << o
	}
	return n
}

// What reclaim frees is what was allocated together (issue 12's first
// question; docs/FIDELITY.md, seed 001, "Issue 12: what could keep
// order-4 chunks free"). The kernel's steps, linux-mm/linux-mm mm/page_alloc.c
// @00cb34b0, mm/vmscan.c @000fc868, mm/filemap.c @009cff43:
//
//   - a random 64 KiB read that misses allocates 16 order-0 folios one
//     after another (page_cache_sync_ra -> do_page_cache_ra ->
//     page_cache_ra_unbounded at mapping_min_folio_order, 0);
//   - each comes from the head of the CPU's pcp list (__rmqueue_pcplist),
//     which rmqueue_bulk refills at its tail in physical order: the
//     __rmqueue_smallest loop takes the head of the smallest list and
//     expand() puts the upper halves on the lists' heads, so a fresh chunk
//     is handed out page by page in PFN order;
//   - folio_add_lru puts each at the head of the inactive list, and
//     filemap_read marks it accessed (PG_referenced, not active;
//     pagesim's FileRead does not yet, which changes nothing here);
//   - reclaim isolates from the inactive tail, SWAP_CLUSTER_MAX at a time
//     (isolate_lru_folios), and an unmapped clean folio with only
//     PG_referenced is FOLIOREF_RECLAIM_CLEAN: freed, oldest read first;
//   - free_unref_folios puts each on the reclaimer's pcp list head, and
//     free_pcppages_bulk (or drain_all_pages) frees from the tail into
//     __free_one_page, which merges with every free buddy.
//
// So reads that were allocated in one run of PFNs and are reclaimed in
// reading order come back as chunks of order 4 and above. The test reads
// a file at random on CPU 0, reclaims the older half on CPU 1 and drains
// the pcp lists.
func TestReclaimInLRUOrderFreesWhatWasAllocatedTogether(t *testing.T) {
	m := newQuietMachine(t, 16384, 1, 2)
	z := m.Nodes[0].Zones[ZONE_NORMAL]
	f := m.NewFile("hog", nil)
	const reads, chunk = 256, 16
	f.Size = reads * chunk
	pfnOf := func(i uint64) PFN {
		o, slot := m.fileExtent(f, i)
		return o.file.pages[slot]
	}
	// Random order: chunk k is read k-th (97 is prime to 256).
	order := make([]uint64, reads)
	for k := range order {
		order[k] = uint64(k*97%reads) * chunk
	}
	inWorld(t, m, 0, func(tk *sim.Task) {
		for _, idx := range order {
			done, missing := m.FileRead(tk, f, idx, chunk, GFP_HIGHUSER_MOVABLE)
			require.Equal(t, uint64(chunk), done)
			require.Equal(t, uint64(chunk), missing)
		}
	})
	// Every read got 16 consecutive PFNs from an aligned block of 16
	// (the pcp refills split chunks of order 4 and above), and a read
	// begins where the one before it ended except where a refill moved
	// to another free chunk.
	jumps := 0
	for k, idx := range order {
		first := pfnOf(idx)
		require.Zero(t, first%chunk, "read %d is 16-aligned", k)
		for i := uint64(1); i < chunk; i++ {
			require.Equal(t, first+PFN(i), pfnOf(idx+i), "read %d page %d", k, i)
		}
		if k > 0 && pfnOf(order[k-1])+chunk != first {
			jumps++
		}
	}
	assert.Less(t, jumps, 8, "reads follow each other in PFN order within a free chunk")
	firsts := make([]PFN, reads)
	for k, idx := range order {
		firsts[k] = pfnOf(idx)
	}
	require.Equal(t, int64(reads*chunk), m.Nodes[0].Stat[NR_INACTIVE_FILE], "all read once: inactive")
	before := freeFromOrder(z, 4)

	// Reclaim until half the file is gone.
	gfp := GFP_KERNEL
	ac, flags := m.acFor(gfp, 0, 0)
	inWorld(t, m, 1, func(tk *sim.Task) {
		for f.Resident() > reads*chunk/2 {
			require.NotZero(t, m.tryToFreePages(tk, ac.zonelist, 0, gfp, 0, flags, ac.migratetype))
		}
	})
	reclaimed := reads*chunk - f.Resident()
	// Oldest first: the reads still cached are the newest ones.
	for k, idx := range order {
		cached := m.FileCached(f, idx, chunk)
		if uint64(k+1)*chunk <= reclaimed {
			assert.False(t, m.FileCached(f, idx, 1) || m.FileCached(f, idx+chunk-1, 1), "read %d (old) reclaimed", k)
		} else if uint64(k)*chunk >= reclaimed {
			assert.True(t, cached, "read %d (new) still cached", k)
		}
	}
	inWorld(t, m, 1, func(tk *sim.Task) { m.drainAllPages(tk, nil) })
	mustCheck(t, m, "reclaim and drain")
	// Each fully reclaimed read is a free aligned block of 16: it is in
	// a chunk of order 4 or above.
	whole := reclaimed / chunk
	gained := freeFromOrder(z, 4) - before
	assert.GreaterOrEqual(t, gained, whole*chunk, "reclaimed %d pages", reclaimed)
	for k := uint64(0); k < whole; k++ {
		o, ok := m.freeChunkOrder(firsts[k])
		assert.True(t, ok && o >= 4, "read %d's block is in a free chunk of order >= 4 (order %d)", k, o)
	}
}

// freeChunkOrder returns the order of the free buddy chunk holding pfn.
func (m *Machine) freeChunkOrder(pfn PFN) (Order, bool) {
	for o := Order(0); o < NR_PAGE_ORDERS; o++ {
		head := pfn &^ (PFN(1)<<o - 1)
		if p := &m.pages[head]; p.flags&pgBuddy != 0 && Order(p.order) == o {
			return o, true
		}
	}
	return 0, false
}
