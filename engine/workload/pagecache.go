package workload

import (
	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/sim"
)

// PageCacheWriter streams buffered writes into new files and writes each
// file back when it is full (a backup job, a log shipper): the page cache
// grows until reclaim has to take the oldest clean pages. Its rate is set
// by the block device (engine/mm/blk_mq.go: the writers share its
// bandwidth, and FileSync waits for their writes) and the copy cost.
type PageCacheWriter struct {
	M  *mm.Machine
	Cg *mm.Memcg
	// FilePages is the size of each file (default 4096 pages, 16 MiB);
	// ChunkPages the pages written per step (default 256, one 1 MiB
	// write); Order the iomap folio order hint (0: base pages).
	FilePages, ChunkPages uint64
	Order                 mm.Order
	GFP                   mm.GFP
	// Written counts pages written; Failed writes that found no memory.
	Written, Failed uint64
	cur             *mm.File
	off             uint64
	n               int
	// resuming is set when a write stopped at a cond_resched().
	resuming bool
}

// SyscallCost is the CPU time of one write(2) call besides the copy
// (entry/exit, filesystem bookkeeping): about 2 us (estimate).
const SyscallCost = 2 * sim.Microsecond

// Step writes one chunk.
func (p *PageCacheWriter) Step(w *sim.World, t *sim.Task) sim.Time {
	if p.FilePages == 0 {
		p.FilePages = 4096
	}
	if p.ChunkPages == 0 {
		p.ChunkPages = 256
	}
	if p.GFP == 0 {
		p.GFP = mm.GFP_HIGHUSER_MOVABLE // the mapping's mask; writes add __GFP_WRITE
	}
	if p.cur == nil {
		p.n++
		p.cur = p.M.NewFile("writer", p.Cg)
		p.off = 0
	}
	if !p.resuming {
		t.Charge(SyscallCost)
	}
	want := min(p.ChunkPages, p.FilePages-min(p.FilePages, p.off))
	if want == 0 {
		want = p.ChunkPages
	}
	got := p.M.FileWriteOrder(t, p.cur, p.off, want, p.GFP, p.Order)
	p.Written += got
	p.off += got
	if p.resuming = p.M.AllocPending(t); p.resuming {
		return sim.Resched
	}
	if got < want {
		p.Failed++
		return t.Now + 10*sim.Millisecond
	}
	if p.off >= p.FilePages {
		p.M.FileSync(t, p.cur)
		p.cur = nil
	}
	return t.Now
}

// BuildWorker is seed 002's build-like worker on btrfs: create a file of
// 1-64 KiB and write it, read back an earlier file, unlink one file in five,
// and fdatasync every 50 creates. Each file costs its inode and dentry in
// reclaimable slab. An operation whose allocation stops at a cond_resched()
// goes on from that point in the next step.
type BuildWorker struct {
	M  *mm.Machine
	Cg *mm.Memcg
	// Rng draws the worker's own choices (file sizes, which file to read
	// back or unlink): its own stream, m.World.Stream("workload/build#N")
	// for worker N, so that workers and other causes do not share draws
	// (sim's "Streams").
	Rng *sim.Rand
	// Ops counts completed operations (create + read back + maybe unlink).
	Ops, Failed uint64
	files       []*mm.File
	unsynced    []*mm.File
	creates     int
	slab        *mm.SlabCache
	slabObjs    int
	op          buildOp
}

// buildOp is the operation under way: its stage and what it has done.
type buildOp struct {
	stage          buildStage
	f, old         *mm.File
	pages, written uint64
	read           uint64
}

type buildStage uint8

const (
	buildCreate buildStage = iota // open(O_CREAT): the inode's slab
	buildWrite                    // write the new file
	buildRead                     // read back an earlier one
)

// btrfsDataGFP is the mask of btrfs data page cache: mapping_gfp_mask with
// __GFP_FS cleared (btrfs_alloc_write_mask); a write adds __GFP_WRITE
// (FGP_WRITE) in the page cache.
var btrfsDataGFP = mm.GFP_NOFS | mm.G__GFP_HIGHMEM | mm.G__GFP_MOVABLE | mm.G__GFP_HARDWALL

// slabObjsPerPage is how many files' slab objects fill a 4 KiB slab page:
// a btrfs inode (~1 KiB) plus a dentry (~200 B) per file, about three. The slabs are order 0 and come
// through allocate_slab (mm.AllocateSlab), with its masks.
const slabObjsPerPage = 3

// Step runs one operation, or the rest of one that stopped.
func (b *BuildWorker) Step(w *sim.World, t *sim.Task) sim.Time {
	m := b.M
	if b.slab == nil {
		b.slab = m.NewSlabCache("btrfs_inode", b.Cg, 0, true)
	}
	op := &b.op
	switch op.stage {
	case buildCreate:
		if op.f == nil {
			// Create and write a new file.
			op.pages = uint64(1 + b.Rng.Intn(16))
			op.f = m.NewFile("obj", b.Cg)
			op.written, op.read, op.old = 0, 0, nil
			t.Charge(3 * SyscallCost) // open(O_CREAT), write, close
		}
		if b.slabObjs%slabObjsPerPage == 0 {
			pfn := m.AllocateSlab(t, b.slab, mm.GFP_NOFS, -1)
			if m.AllocPending(t) {
				return sim.Resched
			}
			if pfn == mm.NilPFN {
				b.Failed++
				op.f = nil
				return t.Now + sim.Millisecond
			}
		}
		b.slabObjs++
		op.stage = buildWrite
		fallthrough
	case buildWrite:
		op.written += m.FileWrite(t, op.f, op.written, op.pages-op.written, btrfsDataGFP)
		if m.AllocPending(t) {
			return sim.Resched
		}
		if op.written < op.pages {
			b.Failed++
		}
		b.files = append(b.files, op.f)
		b.unsynced = append(b.unsynced, op.f)
		b.creates++
		op.stage = buildRead
		// Read back an earlier file.
		if len(b.files) > 1 {
			op.old = b.files[b.Rng.Intn(len(b.files)-1)]
			t.Charge(SyscallCost)
		}
		fallthrough
	case buildRead:
		if old := op.old; old != nil && !old.Unlinked {
			done, _ := m.FileRead(t, old, op.read, old.Size-min(old.Size, op.read), btrfsDataGFP)
			op.read += done
			if m.AllocPending(t) {
				return sim.Resched
			}
		}
	}
	*op = buildOp{}
	// Unlink one file in five.
	if b.Rng.Intn(5) == 0 && len(b.files) > 0 {
		i := b.Rng.Intn(len(b.files))
		victim := b.files[i]
		b.files[i] = b.files[len(b.files)-1]
		b.files = b.files[:len(b.files)-1]
		t.Charge(2 * SyscallCost)
		m.FileUnlink(t, victim)
		b.slabObjs--
		if b.slabObjs%slabObjsPerPage == 0 && b.slab.NrSlabs() > 0 {
			m.FreeOldestSlabs(t, b.slab, 1)
		}
	}
	// fdatasync every 50 creates.
	if b.creates%50 == 0 {
		for _, f := range b.unsynced {
			if !f.Unlinked {
				m.FileSync(t, f)
			}
		}
		b.unsynced = b.unsynced[:0]
	}
	b.Ops++
	return t.Now
}
