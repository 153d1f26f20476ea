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
