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
// field in struct page. Shadow entries are counted per extent, not placed:
// a refault happens when a read finds an evicted page, and the first evicted
// pages are the ones read back (CHOICE: reads are whole-file, so which
// evicted page is refaulted first does not change any counter).

import (
	"github.com/pagesim/pagesim/engine/sim"
)

const fileExtentPages = 64

// fileState is the page-cache state of one extent.
type fileState struct {
	file  *File
	base  uint64 // index of the extent's first page
	pages []PFN  // per index: head PFN of the cached folio, or NilPFN
	// shadows counts evicted pages whose shadow entry is still there.
	shadows uint64
}

// File is a file in the page cache.
type File struct {
	Name    string
	Memcg   *Memcg
	Size    uint64 // pages
	extents []*Owner
	// Unlinked files keep no pages.
	Unlinked bool
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
		o := m.NewOwner(KindFile, f.Name, f.Memcg)
		o.file.file = f
		o.file.base = uint64(len(f.extents)) * fileExtentPages
		o.file.pages = make([]PFN, fileExtentPages)
		for i := range o.file.pages {
			o.file.pages[i] = NilPFN
		}
		f.extents = append(f.extents, o)
	}
	return f.extents[e], int(index % fileExtentPages)
}

// Resident returns the file's cached pages.
func (f *File) Resident() uint64 {
	var n uint64
	for _, e := range f.extents {
		n += e.Resident
	}
	return n
}

// FileWrite writes pages [index, index+nr) (a buffered write): missing
// pages are allocated with gfp (the mapping's mask, e.g. GFP_NOFS-based for
// a filesystem that clears __GFP_FS), the data is copied, and every page
// becomes dirty. It returns the pages written; fewer than nr means an
// allocation failed.
func (m *Machine) FileWrite(t *sim.Task, f *File, index, nr uint64, gfp GFP) uint64 {
	var done uint64
	for i := index; i < index+nr; i++ {
		o, slot := m.fileExtent(f, i)
		head := o.file.pages[slot]
		if head == NilPFN {
			head = m.AllocPagesLocal(t, gfp, 0)
			if head == NilPFN {
				break
			}
			m.setupFolio(head, 0, o)
			o.file.pages[slot] = head
		}
		t.Charge(m.Cost.CopyPage4K / 2) // copy_from_user of 4 KiB
		m.setDirty(head)
		done++
	}
	if index+done > f.Size {
		f.Size = index + done
	}
	return done
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
	z.Node.Stat[NR_WRITTEN] += nr
}

// FileSync writes the file's dirty pages back and waits (fdatasync): one
// device round trip plus the submission cost per page. It returns the pages
// written.
func (m *Machine) FileSync(t *sim.Task, f *File) uint64 {
	var n uint64
	for _, o := range f.extents {
		for _, head := range o.file.pages {
			if head != NilPFN && m.pages[head].flags&pgDirty != 0 {
				m.clearDirty(head)
				n++
			}
		}
	}
	if n > 0 {
		t.Charge(m.Cost.IOLatency + sim.Time(n)*m.Cost.BuddyOp)
	}
	return n
}

// FileRead reads pages [index, index+nr): cached pages are copied, missing
// ones are read from disk into new page-cache pages. A missing page whose
// shadow entry is still there is a refault (workingset_refault_file), and
// the wait for it is a memory stall (PSI), as for a thrashing workingset
// page. It returns the number of pages that had to be read.
func (m *Machine) FileRead(t *sim.Task, f *File, index, nr uint64, gfp GFP) uint64 {
	var missing, refaults uint64
	for i := index; i < index+nr && i < f.Size; i++ {
		o, slot := m.fileExtent(f, i)
		if o.file.pages[slot] != NilPFN {
			t.Charge(m.Cost.CopyPage4K / 2)
			m.markAccessed(o.file.pages[slot])
			continue
		}
		head := m.AllocPagesLocal(t, gfp, 0)
		if head == NilPFN {
			break
		}
		m.setupFolio(head, 0, o)
		o.file.pages[slot] = head
		missing++
		if o.file.shadows > 0 {
			o.file.shadows--
			refaults++
			m.workingsetRefault(head)
		}
	}
	if missing > 0 {
		if refaults > 0 {
			m.psiMemstallEnter(t)
		}
		t.Charge(m.Cost.IOLatency)
		if refaults > 0 {
			m.psiMemstallLeave(t)
		}
		m.countVMEvents(PGMAJFAULT, 0)
		m.countVMEvents(PGPGIN, missing*4)
	}
	return missing
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
// as on unlink of the last link).
func (m *Machine) FileTruncate(t *sim.Task, f *File) {
	for _, o := range f.extents {
		for i, head := range o.file.pages {
			if head == NilPFN {
				continue
			}
			o.file.pages[i] = NilPFN
			if m.pages[head].flags&pgIsolated != 0 {
				// Reclaim or compaction holds it; they will see
				// the folio has no mapping and free it.
				m.pages[head].owner = 0
				continue
			}
			m.FreeOwned(t, head)
		}
		o.file.shadows = 0
	}
	f.Size = 0
}

// FileUnlink truncates and forgets the file.
func (m *Machine) FileUnlink(t *sim.Task, f *File) {
	m.FileTruncate(t, f)
	f.Unlinked = true
}

// fileSlot returns the extent and slot of a cached folio head.
func (m *Machine) fileSlot(head PFN) (*Owner, int) {
	o := m.owners[m.pages[head].owner]
	if o.file == nil {
		return o, -1
	}
	for i, p := range o.file.pages {
		if p == head {
			return o, i
		}
	}
	return o, -1
}
