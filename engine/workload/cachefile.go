package workload

import (
	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/sim"
)

// CacheWriter writes one named file through the page cache, Chunk pages per
// step (one write(2) of Chunk pages), Pages in all. At the end of a pass it
// fdatasyncs the file if Sync is set and truncates it if Unlink is set; with
// Loop it then starts the next pass (rewriting the same pages, or after a
// truncation fresh ones), which is a log writer or a backup job churning
// the page cache. Ops counts pages written; a write that gets no page ends
// the program with Failed set. (PageCacheWriter streams into ever new files
// instead.)
type CacheWriter struct {
	Progress
	M        *mm.Machine
	File     *mm.File
	Pages    uint64
	Chunk    uint64
	GFP      mm.GFP
	Sync     bool
	Unlink   bool
	Loop     bool
	Interval sim.Time
	// Passes counts completed passes.
	Passes uint64

	pos uint64
	// resuming is set when a write stopped at a cond_resched().
	resuming bool
}

// Step writes one chunk.
func (c *CacheWriter) Step(w *sim.World, t *sim.Task) sim.Time {
	c.begin(t)
	chunk := c.Chunk
	if chunk == 0 {
		chunk = 256 // 1 MiB
	}
	n := min(chunk, c.Pages-c.pos)
	c.File.Unlinked = false
	if !c.resuming {
		t.Charge(SyscallCost)
	}
	got := c.M.FileWrite(t, c.File, c.pos, n, c.GFP)
	c.Ops += got
	c.pos += got
	if c.resuming = c.M.AllocPending(t); c.resuming {
		return sim.Resched
	}
	if got < n {
		c.Failed++
		return c.finish(t)
	}
	if c.pos < c.Pages {
		return next(t, c.Interval)
	}
	if c.Sync {
		c.M.FileSync(t, c.File)
	}
	if c.Unlink {
		c.M.FileTruncate(t, c.File)
	}
	c.Passes++
	c.pos = 0
	if !c.Loop {
		return c.finish(t)
	}
	return next(t, c.Interval)
}

// CacheReader reads a file through the page cache from start to end, Chunk
// pages per step: cached pages are copied, missing ones read from disk (a
// refault when their shadow entry is still there). With Loop it reads the
// file again and again, which keeps its pages active. Ops counts pages
// read, Misses the ones that had to come from disk. An empty or unlinked
// file ends the program.
type CacheReader struct {
	Progress
	M        *mm.Machine
	File     *mm.File
	Chunk    uint64
	GFP      mm.GFP
	Loop     bool
	Interval sim.Time
	Passes   uint64
	Misses   uint64

	pos uint64
	// resuming is set when a read stopped at a cond_resched().
	resuming bool
}

// Step reads one chunk.
func (c *CacheReader) Step(w *sim.World, t *sim.Task) sim.Time {
	c.begin(t)
	chunk := c.Chunk
	if chunk == 0 {
		chunk = 256
	}
	size := c.File.Size
	if c.File.Unlinked || size == 0 {
		return c.finish(t)
	}
	n := min(chunk, size-min(size, c.pos))
	if !c.resuming {
		t.Charge(SyscallCost)
	}
	done, missing := c.M.FileRead(t, c.File, c.pos, n, c.GFP)
	c.Misses += missing
	if c.resuming = c.M.AllocPending(t); c.resuming {
		c.Ops += done
		c.pos += done
		return sim.Resched
	}
	c.Ops += n
	c.pos += n
	if c.pos < size {
		return next(t, c.Interval)
	}
	c.Passes++
	c.pos = 0
	if !c.Loop {
		return c.finish(t)
	}
	return next(t, c.Interval)
}

// RandomReader reads a file at random: each step reads Chunk pages at
// Batch Chunk-aligned offsets drawn from Rand (one after the other), the
// way a database's buffer reads or fio's randread go over a data set larger
// than memory. Cached pages are copied (and marked accessed, so pages read
// twice are activated); missing ones are read from disk into new page-cache
// pages. Because a page's place in memory follows when it was read, not
// where it is in the file, while the pages kept by a second read stay
// behind, the page cache it leaves is interleaved with holes wherever
// reclaim takes it back: the free memory reclaim produces in movable
// pageblocks comes in small pieces. Ops counts reads, Misses the pages read
// from disk. An empty file ends the program. A read whose allocation stops
// at a cond_resched() resumes where it stopped.
type RandomReader struct {
	Progress
	M        *mm.Machine
	File     *mm.File
	Chunk    uint64
	Batch    int
	GFP      mm.GFP
	Rand     *sim.Rand
	Interval sim.Time
	Misses   uint64

	resuming  bool
	inBatch   int
	off, left uint64
}

// Step reads one batch (or resumes it).
func (r *RandomReader) Step(w *sim.World, t *sim.Task) sim.Time {
	r.begin(t)
	chunk := max(r.Chunk, 1)
	for {
		if !r.resuming {
			n := r.File.Size / chunk
			if r.File.Unlinked || n == 0 {
				return r.finish(t)
			}
			r.off, r.left = r.Rand.Uint64n(n)*chunk, chunk
			t.Charge(SyscallCost)
		}
		done, missing := r.M.FileRead(t, r.File, r.off, r.left, r.GFP)
		r.Misses += missing
		if r.resuming = r.M.AllocPending(t); r.resuming {
			r.off, r.left = r.off+done, r.left-done
			return sim.Resched
		}
		r.Ops++
		if r.inBatch++; r.inBatch >= max(r.Batch, 1) {
			r.inBatch = 0
			return next(t, r.Interval)
		}
	}
}
