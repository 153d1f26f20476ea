package mm

// filemap.go models the page cache of mm/filemap.c and mm/truncate.c: files
// whose pages are cached, written (dirty), read back, written back, evicted
// by reclaim (leaving a shadow entry that mm/workingset.c uses to detect
// refaults) and truncated.
//
// # Model
//
// A file is split into extents of at most fileExtentPages pages; each
// extent is an Owner of kind file and keeps the PFN of every cached page
// (its part of the xarray). A page's owner ID therefore leads to its extent,
// and finding the page's index in the extent is a scan of at most 64 slots,
// which keeps reclaim and migration O(1) per page without a second 4-byte
// field in struct page. An extent exists only while it caches a page: when
// reclaim or truncation empties it, its slot array goes back to a pool and
// its Owner ID is reused (the kernel frees xarray nodes that hold only
// shadow entries), so a long run that creates many files keeps memory
// bounded by what is cached. Shadow entries are counted per file, not
// placed: a refault happens when a read finds an evicted page while the
// file still has shadows (CHOICE: reads are whole-file, so which evicted
// page is refaulted first does not change any counter).

import (
	"math/bits"

	"github.com/pagesim/pagesim/engine/sim"
)

// fileExtentPages is the most pages one extent (one Owner) holds: a PMD
// folio's worth, so that every page-cache folio fits in one extent.
const fileExtentPages = HPAGE_PMD_NR

// MAX_PAGECACHE_ORDER is MAX_PAGECACHE_ORDER on x86-64 with 4 KiB pages.
const MAX_PAGECACHE_ORDER = HPAGE_PMD_ORDER

// fileState is the page-cache state of one extent.
type fileState struct {
	file  *File
	base  uint64 // index of the extent's first page
	pages []PFN  // per index: head PFN of the cached folio, or NilPFN
	// hint is where the next slot search starts: reclaim evicts a file's
	// pages in about the order they were added, so searching from just
	// after the last hit finds the next one at once.
	hint int
}

// File is a file in the page cache.
type File struct {
	Name  string
	Memcg *Memcg
	Size  uint64 // pages
	// extents[e] caches pages [e*fileExtentPages, (e+1)*fileExtentPages),
	// nil while none is cached.
	extents []*Owner
	// shadows counts evicted pages whose shadow entry is still there.
	shadows uint64
	// Unlinked files keep no pages.
	Unlinked bool
	// wbEnd is when the last writeback request submitted for the file
	// completes (what filemap_fdatawait waits for).
	wbEnd sim.Time
}

// NewFile creates an empty file charged to cg.
func (m *Machine) NewFile(name string, cg *Memcg) *File {
	if cg == nil {
		cg = m.RootMemcg()
	}
	return &File{Name: name, Memcg: cg}
}

func (m *Machine) fileExtent(f *File, index uint64) (*Owner, int) {
	e := index / fileExtentPages
	for uint64(len(f.extents)) <= e {
		f.extents = append(f.extents, nil)
	}
	o := f.extents[e]
	if o == nil {
		o = m.NewOwner(KindFile, f.Name, f.Memcg)
		o.file.file = f
		o.file.base = e * fileExtentPages
		f.extents[e] = o
	}
	slot := int(index % fileExtentPages)
	if n := len(o.file.pages); n <= slot {
		if cap(o.file.pages) <= slot {
			// Grow fourfold (small files stay small, streaming writes
			// reach a whole extent in a few steps); whole extents come
			// from the pool.
			c := max(16, 4*cap(o.file.pages))
			for c <= slot {
				c *= 4
			}
			c = min(c, fileExtentPages)
			var grown []PFN
			if k := len(m.slotPool); c == fileExtentPages && k > 0 {
				grown = m.slotPool[k-1][:n]
				m.slotPool = m.slotPool[:k-1]
			} else {
				grown = make([]PFN, n, c)
			}
			copy(grown, o.file.pages)
			o.file.pages = grown
		}
		o.file.pages = o.file.pages[:slot+1]
		for i := n; i <= slot; i++ {
			o.file.pages[i] = NilPFN
		}
	}
	return o, slot
}

// releaseExtent retires an extent that caches no page: its slot array goes
// back to the pool fileExtent takes from, its Owner to the free owners, and
// the file forgets it.
func (m *Machine) releaseExtent(o *Owner) {
	if o.Resident != 0 || o.Pinned != 0 || o.file == nil {
		return
	}
	if cap(o.file.pages) == fileExtentPages && len(m.slotPool) < slotPoolMax {
		m.slotPool = append(m.slotPool, o.file.pages[:0])
	}
	o.file.pages = nil
	o.file.hint = 0
	if f := o.file.file; f != nil {
		if e := o.file.base / fileExtentPages; e < uint64(len(f.extents)) && f.extents[e] == o {
			f.extents[e] = nil
		}
	}
	o.file.file = nil
	m.freeOwner(o)
}

// FilemapStats counts the folios added to the page cache by order, as the
// mm_filemap_add_to_page_cache tracepoint (its order= field) lets a
// script count them; the kernel keeps no counter of them (the mTHP
// file_alloc counters became shmem_alloc before they were merged).
type FilemapStats struct {
	FoliosAdded [NR_PAGE_ORDERS]uint64
}

// slotPoolMax bounds the pool of free extent slot arrays (2 KiB each).
const slotPoolMax = 256

// Resident returns the file's cached pages.
func (f *File) Resident() uint64 {
	var n uint64
	for _, e := range f.extents {
		if e != nil {
			n += e.Resident
		}
	}
	return n
}

// FileWrite writes pages [index, index+nr) (a buffered write): missing
// pages are allocated with gfp (the mapping's mask, e.g. GFP_NOFS-based for
// a filesystem that clears __GFP_FS) plus __GFP_WRITE (FGP_WRITE: every
// pagesim file can be written back), the data is copied, and every page
// becomes dirty. It returns the pages written; fewer than nr means an
// allocation failed.
func (m *Machine) FileWrite(t *sim.Task, f *File, index, nr uint64, gfp GFP) uint64 {
	return m.FileWriteOrder(t, f, index, nr, gfp, 0)
}

// FileWriteOrder is FileWrite with a folio order hint, as iomap's buffered
// write passes one since "iomap: Copy larger chunks from userspace"
// (fgf_set_order of the write length): missing pages are allocated by
// __filemap_get_folio_mpol's order loop, which tries the hinted order
// (lowered to the index's alignment and to what is not cached yet), then
// one order less at a time down to 0, with __GFP_NORETRY|__GFP_NOWARN on
// every attempt above order 0. An allocation that stops at a
// cond_resched() ends the write early with AllocPending(t) set: write the
// rest with the same call from where it stopped.
func (m *Machine) FileWriteOrder(t *sim.Task, f *File, index, nr uint64, gfp GFP, hint Order) uint64 {
	return m.fileWrite(t, f, index, nr, gfp, func(uint64, uint64) Order { return hint })
}

// IomapFileBufferedWrite is FileWrite through iomap_file_buffered_write(),
// as XFS does it since "iomap: Copy larger chunks from userspace"
// (5d8edfb900d5, v6.6): iomap_write_iter() copies the write in chunks of
// at most mapping_max_folio_size() bytes, aligned to it, and asks
// __iomap_get_folio() for each missing folio with fgf_set_order() of the
// bytes left in the chunk (fs/iomap/buffered-io.c): the first order tried
// is the floor of log2 of that length in pages, which
// __filemap_get_folio_mpol() then lowers to the index's alignment before
// its order loop (filemapGetFolio). A 256 KiB write at a 64-page boundary
// asks for order 6 first; the same write at index 18 asks for order 1,
// then 2 and 3 as the folios reach aligned indexes. Like FileWriteOrder,
// an allocation that stops at a cond_resched() ends the write early with
// AllocPending(t) set.
func (m *Machine) IomapFileBufferedWrite(t *sim.Task, f *File, index, nr uint64, gfp GFP) uint64 {
	return m.fileWrite(t, f, index, nr, gfp, iomapWriteOrder)
}

// iomapWriteOrder is the order fgf_set_order() asks for a folio at index
// i of a write that ends before index end: log2 of the pages left in the
// write's mapping_max_folio_size() chunk (2 MiB, MAX_PAGECACHE_ORDER).
func iomapWriteOrder(i, end uint64) Order {
	const chunk = uint64(1) << MAX_PAGECACHE_ORDER
	left := min(end, (i/chunk+1)*chunk) - i
	return Order(bits.Len64(left) - 1)
}

// fileWrite writes pages [index, index+nr) of f, allocating each missing
// folio with the first order orderOf gives for its index.
func (m *Machine) fileWrite(t *sim.Task, f *File, index, nr uint64, gfp GFP, orderOf func(i, end uint64) Order) uint64 {
	var done uint64
	end := index + nr
	for i := index; i < end; {
		o, slot := m.fileExtent(f, i)
		head := o.file.pages[slot]
		if head != NilPFN && !m.dropRacedFolio(t) {
			break // the allocation stopped at a cond_resched() again
		}
		if head == NilPFN {
			var order Order
			head, order = m.filemapGetFolio(t, f, i, gfp, orderOf(i, end))
			if head == NilPFN {
				break
			}
			first := i &^ (uint64(1)<<order - 1)
			m.fileExtent(f, first+uint64(1)<<order-1) // grow the slots
			o, slot = m.fileExtent(f, first)
			m.setupFolio(head, order, o)
			for k := 0; k < 1<<order; k++ {
				o.file.pages[slot+k] = head
			}
			m.Filemap.FoliosAdded[order]++
			slot = int(i % fileExtentPages)
		}
		// Copy what this write covers of the folio (copy_from_user).
		fStart := o.file.base + uint64(slot) - (uint64(slot) & (m.folioNr(head) - 1))
		fEnd := fStart + m.folioNr(head)
		n := min(fEnd, end) - i
		t.Charge(m.remoteCost(m.cpuNode[t.CPU], m.ZoneOf(head).Node.ID, m.Cost.CopyPage4K/2*sim.Time(n)))
		m.setDirty(head)
		done += n
		i += n
	}
	if index+done > f.Size {
		f.Size = index + done
	}
	return done
}

// filemapGetFolio is the allocation part of __filemap_get_folio_mpol() for
// a missing page at index, for a write (FGP_WRITEBEGIN): __GFP_WRITE is
// added because the mapping can write back (mapping_can_writeback), then
// the order loop, each folio through filemap_alloc_folio, whose
// folio_alloc_mpol adds __GFP_COMP at every order (mm/filemap.c and
// mm/mempolicy.c of the mm tree).
func (m *Machine) filemapGetFolio(t *sim.Task, f *File, index uint64, gfp GFP, hint Order) (PFN, Order) {
	gfp |= __GFP_WRITE
	order := hint
	if order > MAX_PAGECACHE_ORDER {
		order = MAX_PAGECACHE_ORDER
	}
	if index != 0 {
		if low := Order(trailingZeros(index)); low < order {
			order = low
		}
	}
	// A folio must not cover pages already in the cache (filemap_add_folio
	// would return -EEXIST and the kernel retries at a lower order).
	for order > 0 && m.fileRangeCached(f, index&^(uint64(1)<<order-1), uint64(1)<<order) {
		order--
	}
	// An attempt that stopped at a cond_resched() goes on at its order,
	// unless pages its folio would cover were cached meanwhile.
	if _, o, ok := m.pendingAlloc(t); ok && o > order && !m.dropRacedFolio(t) {
		return NilPFN, o
	}
	first := order
	if _, o, ok := m.pendingAlloc(t); ok && o < order {
		order = o
	}
	for {
		allocGFP := gfp | __GFP_COMP
		if order > 0 {
			allocGFP |= __GFP_NORETRY | __GFP_NOWARN
			// The v3 review's filemap alternative: only the first
			// order may reclaim (min_order, 0 here, keeps the
			// caller's mask).
			if m.Patches.FilemapClearReclaimAfterFirst && order < first {
				allocGFP &^= __GFP_DIRECT_RECLAIM
			}
		}
		head := m.AllocPagesLocal(t, allocGFP, order)
		if head != NilPFN || m.AllocPending(t) {
			return head, order
		}
		if order == 0 {
			return NilPFN, 0
		}
		order--
	}
}

// dropRacedFolio finishes t's allocation stopped at a cond_resched() when
// the page it was for has been cached meanwhile by another task: the
// kernel's task is still inside the allocator, and when it gets its
// folio, filemap_add_folio() finds the index taken (-EEXIST), the folio
// is put and __filemap_get_folio() looks the index up again ("repeat"),
// finding the other task's folio. Without this the writer would find the
// page cached, skip the allocation and return with it still pending,
// and its caller would repeat the call at the same instant for ever. It
// returns false if the allocation stopped at a cond_resched() again (the
// call must be repeated), true otherwise (also when nothing was pending).
func (m *Machine) dropRacedFolio(t *sim.Task) bool {
	ts := m.current(t)
	f := ts.alloc
	if f == nil {
		return true
	}
	order := f.order
	pfn := m.allocPagesFinish(t, ts, f)
	if ts.alloc != nil {
		return false
	}
	if pfn != NilPFN {
		m.FreePages(t, pfn, order)
	}
	return true
}

func trailingZeros(x uint64) int {
	n := 0
	for x&1 == 0 && n < 64 {
		x >>= 1
		n++
	}
	return n
}

// FileCached reports whether every page of [index, index+n) of f is in
// the page cache.
func (m *Machine) FileCached(f *File, index, n uint64) bool {
	for i := index; i < index+n; i++ {
		e := i / fileExtentPages
		if e >= uint64(len(f.extents)) || f.extents[e] == nil {
			return false
		}
		o := f.extents[e]
		s := int(i % fileExtentPages)
		if s >= len(o.file.pages) || o.file.pages[s] == NilPFN {
			return false
		}
	}
	return true
}

// fileRangeCached reports whether any page of [index, index+n) is cached.
func (m *Machine) fileRangeCached(f *File, index, n uint64) bool {
	for i := index; i < index+n; i++ {
		e := i / fileExtentPages
		if e >= uint64(len(f.extents)) {
			continue
		}
		o := f.extents[e]
		s := int(i % fileExtentPages)
		if o != nil && s < len(o.file.pages) && o.file.pages[s] != NilPFN {
			return true
		}
	}
	return false
}

func (m *Machine) setDirty(head PFN) {
	p := &m.pages[head]
	if p.flags&pgDirty != 0 {
		return
	}
	p.flags |= pgDirty
	nr := int64(m.folioNr(head))
	z := m.ZoneOf(head)
	z.Stat[NR_ZONE_WRITE_PENDING] += nr
	z.Node.Stat[NR_FILE_DIRTY] += nr
	z.Node.Stat[NR_DIRTIED] += nr
}

func (m *Machine) clearDirty(head PFN) {
	p := &m.pages[head]
	if p.flags&pgDirty == 0 {
		return
	}
	p.flags &^= pgDirty
	nr := int64(m.folioNr(head))
	z := m.ZoneOf(head)
	z.Stat[NR_ZONE_WRITE_PENDING] -= nr
	z.Node.Stat[NR_FILE_DIRTY] -= nr
}

// FileFdatawrite starts writeback of every dirty page of the file and does
// not wait (filemap_fdatawrite, sync_file_range(SYNC_FILE_RANGE_WRITE)):
// the pages go under writeback and their requests queue on the block
// device. It returns the pages submitted.
func (m *Machine) FileFdatawrite(t *sim.Task, f *File) uint64 {
	n, _ := m.writebackFile(t, f)
	return n
}

// FileFdatawait waits for all writeback of the file submitted so far, by
// anyone (filemap_fdatawait): the task sleeps in I/O wait until the last
// request carrying one of its pages completes.
func (m *Machine) FileFdatawait(t *sim.Task, f *File) {
	m.ioSchedule(t, f.wbEnd)
}

// FileSyncRange is filemap_write_and_wait_range() over pages [index,
// index+nr) of f, as a file system writes and waits for the blocks it
// marked (btrfs_write_marked_extents, btrfs_wait_tree_log_extents): the
// dirty folios that start in the range go under writeback and the task
// waits until this call's requests complete. Simplified: the kernel's
// __filemap_fdatawait_range also waits for folios in the range that
// another task put under writeback; this waits only for its own requests
// (the same for the btrfs log's blocks, which only their own fdatasync
// writes). It returns the pages written.
func (m *Machine) FileSyncRange(t *sim.Task, f *File, index, nr uint64) uint64 {
	n, last := m.writebackRange(t, f, index, index+nr)
	m.ioSchedule(t, last)
	return n
}

// FileSync is fdatasync(): file_write_and_wait_range() over the whole
// file, FileFdatawrite then FileFdatawait. Writeback already queued for
// the file (an earlier FileFdatawrite) is waited for too. It returns the
// pages this call wrote. (No cache flush is charged: the modelled drive's
// write cache is power-loss protected, see blk_mq.go.)
func (m *Machine) FileSync(t *sim.Task, f *File) uint64 {
	n := m.FileFdatawrite(t, f)
	m.FileFdatawait(t, f)
	return n
}

// FileRead reads pages [index, index+nr): cached pages are copied, missing
// ones get new page-cache folios that are read from the block device
// (filemap_read, page_cache_ra_unbounded: one plugged submission per run
// of missing pages), and the reader sleeps in I/O wait until the last read
// completes (folio_wait_locked). A missing page whose shadow entry is
// still there is a refault (workingset_refault_file), and the wait for it
// is also a memory stall (PSI), as for a thrashing workingset page. It
// returns the pages it got through (cached or read) and how many of them
// had to be read. It stops early when an allocation fails, or stops at a
// cond_resched() (AllocPending(t)): read the rest from there.
//
// The pages come as filemap_get_pages() gets them: readahead first
// (page_cache_sync_ra -> ractl_alloc_folio with readahead_gfp_mask(), the
// mapping's mask plus __GFP_NORETRY|__GFP_NOWARN), and if readahead got
// nothing, filemap_create_folio() with the mapping's mask; both through
// filemap_alloc_folio (__GFP_COMP). pagesim reads order-0 folios, one at
// a time, exactly the pages asked for (no readahead window, so no
// PG_readahead and no async readahead's larger folios). filemap_read()
// then marks every folio it copies from accessed, cached or just read
// (linux-mm/linux-mm mm/filemap.c @009cff43): a page read once is
// PG_referenced, and its next read activates it.
func (m *Machine) FileRead(t *sim.Task, f *File, index, nr uint64, gfp GFP) (done, missing uint64) {
	var refaults, run uint64
	var last sim.Time
	submit := func() {
		if run > 0 {
			last = max(last, m.blkSubmitBios(t, REQ_OP_READ, run, nil, nil, 0))
			run = 0
		}
	}
	i := index
	for ; i < index+nr && i < f.Size; i++ {
		o, slot := m.fileExtent(f, i)
		if o.file.pages[slot] != NilPFN {
			if !m.dropRacedFolio(t) {
				break // cached meanwhile; the allocation stopped again
			}
			submit()
			t.Charge(m.remoteCost(m.cpuNode[t.CPU], m.ZoneOf(o.file.pages[slot]).Node.ID, m.Cost.CopyPage4K/2))
			m.markAccessed(o.file.pages[slot])
			continue
		}
		// Readahead's attempt, then filemap_create_folio's; resuming the
		// second attempt after a cond_resched() skips the first, and an
		// attempt that stopped ends the read here.
		head := NilPFN
		ra := gfp | __GFP_NORETRY | __GFP_NOWARN | __GFP_COMP
		pgfp, _, pending := m.pendingAlloc(t)
		resumeSecond := pending && pgfp != ra
		if !resumeSecond {
			head = m.AllocPagesLocal(t, ra, 0)
			if head == NilPFN && m.AllocPending(t) {
				break
			}
		}
		if head == NilPFN && (resumeSecond || !m.AllocPending(t)) {
			head = m.AllocPagesLocal(t, gfp|__GFP_COMP, 0)
		}
		if head == NilPFN {
			break
		}
		// The allocation may have reclaimed the extent's last cached
		// page and retired the extent: look it up again.
		o, slot = m.fileExtent(f, i)
		m.setupFolio(head, 0, o)
		o.file.pages[slot] = head
		m.Filemap.FoliosAdded[0]++
		missing++
		run++
		if f.shadows > 0 {
			f.shadows--
			refaults++
			m.workingsetRefault(head)
		}
		// filemap_read() marks every folio it copies from accessed,
		// the ones readahead has just brought in too: a page read
		// once is PG_referenced, and its next read activates it.
		m.markAccessed(head)
	}
	submit()
	if missing > 0 {
		if refaults > 0 {
			m.psiMemstallEnter(t)
		}
		m.ioSchedule(t, last)
		if refaults > 0 {
			m.psiMemstallLeave(t)
		}
		m.countVMEvents(PGMAJFAULT, 0)
		m.countVMEvents(PGPGIN, missing*4)
	}
	return i - index, missing
}

// markAccessed is folio_mark_accessed(): a second access activates.
func (m *Machine) markAccessed(head PFN) {
	p := &m.pages[head]
	if p.flags&pgReferenced == 0 {
		p.flags |= pgReferenced
		return
	}
	if p.flags&pgActive == 0 && p.flags&pgLRU != 0 && p.flags&pgPinned == 0 {
		m.lruDel(head)
		p.flags |= pgActive
		p.flags &^= pgReferenced
		m.lruAdd(head)
		m.countVMEvent(PGACTIVATE)
	}
}

// FileTruncate drops every cached page of the file (truncate_inode_pages,
// as on unlink of the last link), after waiting for the file's writeback
// (truncate_inode_pages_range waits on each folio under writeback).
func (m *Machine) FileTruncate(t *sim.Task, f *File) {
	m.FileFdatawait(t, f)
	for _, o := range f.extents {
		if o == nil {
			continue
		}
		for i, head := range o.file.pages {
			if head == NilPFN {
				continue
			}
			for k := i; k < len(o.file.pages) && o.file.pages[k] == head; k++ {
				o.file.pages[k] = NilPFN
			}
			if m.pages[head].flags&pgIsolated != 0 {
				// Reclaim or compaction holds it; they will see
				// the folio has no mapping and free it.
				m.pages[head].owner = 0
				continue
			}
			m.FreeOwned(t, head)
		}
		m.releaseExtent(o)
	}
	f.shadows = 0
	f.Size = 0
}

// FileTruncateRange drops the cached folios that hold pages [index,
// index+nr) of f (truncate_inode_pages_range over the range, as a file
// system drops the page cache of a block it freed), waiting first for the
// file's writeback if one of them is under writeback. It returns the base
// pages freed.
func (m *Machine) FileTruncateRange(t *sim.Task, f *File, index, nr uint64) uint64 {
	var freed uint64
	waited := false
	for i := index; i < index+nr; i++ {
		e := i / fileExtentPages
		if e >= uint64(len(f.extents)) || f.extents[e] == nil {
			continue
		}
		o := f.extents[e]
		slot := int(i % fileExtentPages)
		if slot >= len(o.file.pages) {
			continue
		}
		head := o.file.pages[slot]
		if head == NilPFN {
			continue
		}
		if m.pages[head].flags&pgWriteback != 0 && !waited {
			m.FileFdatawait(t, f)
			waited = true
		}
		k := slot
		for k > 0 && o.file.pages[k-1] == head {
			k--
		}
		for ; k < len(o.file.pages) && o.file.pages[k] == head; k++ {
			o.file.pages[k] = NilPFN
		}
		n := m.folioNr(head)
		if m.pages[head].flags&pgIsolated != 0 {
			m.pages[head].owner = 0
		} else {
			m.FreeOwned(t, head)
		}
		freed += n
		if o.Resident == 0 {
			m.releaseExtent(o)
		}
	}
	return freed
}

// FileInvalidate is invalidate_mapping_pages(mapping, 0, -1) (mm/truncate.c,
// as the inode shrinker calls it on an unused inode that still has page
// cache): every clean, unlocked folio not under writeback is dropped, with
// no shadow entry; dirty and writeback folios stay. It returns the base
// pages dropped.
func (m *Machine) FileInvalidate(t *sim.Task, f *File) uint64 {
	var freed uint64
	for _, o := range f.extents {
		if o == nil {
			continue
		}
		for i := 0; i < len(o.file.pages); i++ {
			head := o.file.pages[i]
			if head == NilPFN {
				continue
			}
			p := &m.pages[head]
			n := m.folioNr(head)
			if p.flags&(pgDirty|pgWriteback|pgIsolated|pgPinned) != 0 {
				i += int(n) - 1
				continue
			}
			for k := i; k < len(o.file.pages) && o.file.pages[k] == head; k++ {
				o.file.pages[k] = NilPFN
			}
			m.FreeOwned(t, head)
			freed += n
			i += int(n) - 1
		}
		if o.Resident == 0 {
			m.releaseExtent(o)
		}
	}
	return freed
}

// FileUnlink truncates and forgets the file.
func (m *Machine) FileUnlink(t *sim.Task, f *File) {
	m.FileTruncate(t, f)
	f.Unlinked = true
}

// fileSlot returns the extent and first slot of a cached folio head.
func (m *Machine) fileSlot(head PFN) (*Owner, int) {
	o := m.owners[m.pages[head].owner]
	if o.file == nil {
		return o, -1
	}
	pages := o.file.pages
	n := len(pages)
	start := o.file.hint
	if start >= n {
		start = 0
	}
	for k := 0; k < n; k++ {
		i := start + k
		if i >= n {
			i -= n
		}
		if pages[i] == head {
			// The first slot of the folio: step back over its other slots.
			for i > 0 && pages[i-1] == head {
				i--
			}
			o.file.hint = i + int(m.folioNr(head))
			return o, i
		}
	}
	return o, -1
}

// setFileSlots points every slot of a folio (starting at slot) at head.
func setFileSlots(o *Owner, slot int, old, head PFN) {
	for k := slot; k < len(o.file.pages) && o.file.pages[k] == old; k++ {
		o.file.pages[k] = head
	}
}
