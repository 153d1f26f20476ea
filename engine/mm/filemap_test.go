package mm

import (
	"testing"

	"github.com/pagesim/pagesim/engine/sim"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFilemapOrderLoopFallsBackOneOrderAtATime(t *testing.T) {
	m := smallMachine(t, 8192, 1, 1)
	tk := m.testTask(0)
	f := m.NewFile("wal", nil)
	// A 64 KiB write at index 0 asks for an order-4 folio.
	got := m.FileWriteOrder(tk, f, 0, 16, GFP_NOFS|__GFP_HIGHMEM|__GFP_MOVABLE|__GFP_WRITE, 4)
	require.Equal(t, uint64(16), got)
	m.MustCheckInvariants()
	o, slot := m.fileExtent(f, 0)
	head := o.file.pages[slot]
	assert.Equal(t, Order(4), m.Folio(head).Order)
	for k := 0; k < 16; k++ {
		assert.Equal(t, head, o.file.pages[k])
	}
	// An unaligned index lowers the order to its alignment.
	m.FileWriteOrder(tk, f, 18, 4, GFP_NOFS|__GFP_MOVABLE, 4)
	o, slot = m.fileExtent(f, 18)
	assert.Equal(t, Order(1), m.Folio(o.file.pages[slot]).Order)
	assert.Equal(t, uint64(22), f.Size)
	m.FileSync(tk, f)
	m.FileTruncate(tk, f)
	assert.Equal(t, uint64(0), f.Resident())
	m.MustCheckInvariants()
}

// Files come and go (a build tree): an extent emptied by truncation or by
// reclaim gives its Owner ID back, so the owner table stays as large as
// what is cached, not as large as everything ever written; refaults are
// still counted from the file's shadow entries.
func TestEmptiedExtentsReturnTheirOwnersAndShadowsSurvive(t *testing.T) {
	m := newQuietMachine(t, 8192, 1, 1)
	tk := m.testTask(0)
	base := len(m.owners)
	for i := 0; i < 200; i++ {
		f := m.NewFile("tmp", nil)
		require.Equal(t, uint64(3), m.FileWrite(tk, f, 0, 3, GFP_HIGHUSER_MOVABLE))
		m.FileUnlink(tk, f)
		mustCheck(t, m, "file %d", i)
	}
	assert.LessOrEqual(t, len(m.owners), base+1, "unlinked files' extents were reused")

	// Reclaim empties a file's extent: its pages leave shadows, and the
	// read-back counts them as refaults.
	l := carveZone(t, m, nil, lowFreeFileLayout)
	f := l.file
	before := f.Resident()
	for i := 0; i < 3000 && f.Resident() > 0; i++ {
		m.allocSync(tk, GFP_KERNEL, 0, 0, 0)
	}
	mustCheck(t, m, "pressure")
	evicted := before - f.Resident()
	require.Greater(t, evicted, uint64(0))
	assert.Equal(t, evicted, f.shadows)
	ownersBefore := len(m.owners)
	m.FileRead(tk, f, 0, f.Size, GFP_HIGHUSER_MOVABLE)
	mustCheck(t, m, "read back")
	assert.Greater(t, m.Nodes[0].Stat[WORKINGSET_REFAULT_FILE], int64(0))
	assert.LessOrEqual(t, len(m.owners), ownersBefore+int(f.Size/fileExtentPages)+1)
}

// A read that allocates can run direct reclaim, which may evict the last
// cached page of the very extent being read into and retire the extent:
// the read must look the extent up again after the allocation (as
// FileWriteOrder does), not write into the retired one.
func TestAReadWhoseAllocationReclaimsItsOwnExtentStillCachesThePage(t *testing.T) {
	m := newQuietMachine(t, 8192, 1, 1)
	z := m.Nodes[0].Zones[ZONE_NORMAL]
	free := 0
	min := int(z.WmarkPages(WMARK_MIN))
	// One cached page of the file, min pages free, the rest kernel.
	l := carveZone(t, m, nil, func(block, off int) role {
		switch {
		case block == 0 && off == 0:
			return roleFile
		case free < min:
			free++
			return roleFree
		}
		return roleKernel
	})
	f := l.file
	require.Equal(t, uint64(1), f.Resident())
	f.Size = 2 // page 1 is not cached
	var missing uint64
	inWorld(t, m, 0, func(tk *sim.Task) {
		// Read on in the same step when the allocation stops at a
		// cond_resched().
		for done := uint64(0); ; {
			d, miss := m.FileRead(tk, f, 1+done, 1-done, GFP_HIGHUSER_MOVABLE)
			done += d
			missing += miss
			if !m.AllocPending(tk) {
				break
			}
		}
	})
	assert.Equal(t, uint64(1), missing)
	assert.Greater(t, m.Event(PGSTEAL_DIRECT), uint64(0), "the read's allocation reclaimed")
	assert.Equal(t, uint64(1), f.Resident(), "page 0 was evicted, page 1 is cached")
	o, slot := m.fileExtent(f, 1)
	assert.NotEqual(t, NilPFN, o.file.pages[slot])
}

// A read whose second allocation attempt (filemap_create_folio's, after
// readahead's __GFP_NORETRY one failed) stops at a cond_resched() resumes
// that attempt when the read is repeated, instead of skipping both and
// returning at once forever (a reader looping in place at one instant).
func TestAReadResumesItsSecondAttemptAfterACondResched(t *testing.T) {
	m := newQuietMachine(t, 8192, 1, 2)
	// Nothing reclaimable, nothing free: both attempts fail, the second
	// only after its direct reclaim's cond_resched() points.
	carveZone(t, m, nil, func(block, off int) role { return roleKernel })
	f := m.NewFile("data", nil)
	f.Size = 4
	steps, resumed := 0, 0
	var done uint64
	finished := false
	spawn(m, "reader", 1, m.World.Now(), func(tk *sim.Task) sim.Time {
		steps++
		start := tk.Now
		d, _ := m.FileRead(tk, f, 0, 4, GFP_HIGHUSER_MOVABLE)
		if m.AllocPending(tk) {
			resumed++
			require.Greater(t, tk.Now, start, "every resumed step does work")
			return sim.Resched
		}
		done, finished = d, true
		return sim.Exit
	})
	runWorld(t, m, m.World.Now()+sim.Second)
	require.True(t, finished, "the read ended (after %d steps)", steps)
	assert.Greater(t, resumed, 0, "the allocation stopped at a cond_resched() at least once")
	assert.Zero(t, done, "no page could be allocated")
	assert.Zero(t, m.Slow.Abandoned)
}

// invalidate_mapping_pages drops clean pages and keeps dirty ones.
func TestInvalidateDropsCleanPagesAndKeepsDirtyOnes(t *testing.T) {
	m := newQuietMachine(t, 8192, 1, 1)
	tk := m.testTask(0)
	f := m.NewFile("data", nil)
	require.Equal(t, uint64(8), m.FileWrite(tk, f, 0, 8, GFP_HIGHUSER_MOVABLE))
	m.FileSync(tk, f)
	m.blkRetire(sim.Never - 1)
	require.Equal(t, uint64(4), m.FileWrite(tk, f, 8, 4, GFP_HIGHUSER_MOVABLE), "four dirty pages")
	assert.Equal(t, uint64(8), m.FileInvalidate(tk, f))
	assert.Equal(t, uint64(4), f.Resident())
	assert.False(t, m.FileCached(f, 0, 8))
	assert.True(t, m.FileCached(f, 8, 4))
	m.MustCheckInvariants()
	assert.Equal(t, uint64(4), m.FileTruncateRange(tk, f, 8, 4))
	assert.Zero(t, f.Resident())
	m.MustCheckInvariants()
}
func TestIomapAsksForTheOrderOfTheBytesLeftInItsChunk(t *testing.T) {
	tests := []struct {
		name   string
		i, end uint64
		want   Order
	}{
		{"a 64 KiB write asks for order 4", 0, 16, 4},
		{"a 96 KiB write asks for the floor of log2: order 4", 0, 24, 4},
		{"one page left asks for order 0", 15, 16, 0},
		{"a 4 MiB write asks for its 2 MiB chunk: order 9", 0, 1024, 9},
		{"the bytes left stop at the chunk's end", 500, 1024, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, iomapWriteOrder(tc.i, tc.end))
		})
	}
}

// A 256 KiB write at index 18 gets the folios iomap_write_iter() and
// __filemap_get_folio_mpol() give it: each asked for at the order of what
// is left, lowered to its index's alignment.
func TestAnIomapWriteGrowsItsFoliosAsItsIndexAligns(t *testing.T) {
	m := smallMachine(t, 8192, 1, 1)
	tk := m.testTask(0)
	f := m.NewFile("wal", nil)
	gfp := GFP_NOFS | __GFP_HIGHMEM | __GFP_MOVABLE
	require.Equal(t, uint64(64), m.IomapFileBufferedWrite(tk, f, 64, 64, gfp))
	require.Equal(t, uint64(64), m.IomapFileBufferedWrite(tk, f, 18, 64, gfp))
	m.MustCheckInvariants()
	orderAt := func(i uint64) Order {
		o, slot := m.fileExtent(f, i)
		return m.Folio(o.file.pages[slot]).Order
	}
	// [64, 128) was one order-6 folio; the second write covers [18, 82)
	// and finds [64, 82) cached.
	assert.Equal(t, Order(6), orderAt(64))
	for _, c := range []struct {
		i     uint64
		order Order
	}{{18, 1}, {20, 2}, {24, 3}, {32, 5}} {
		assert.Equal(t, c.order, orderAt(c.i), "index %d", c.i)
	}
	assert.Equal(t, [NR_PAGE_ORDERS]uint64{1: 1, 2: 1, 3: 1, 5: 1, 6: 1}, m.Filemap.FoliosAdded)

	m.MustCheckInvariants()
}

// The v3 review's filemap alternative lets only the order loop's first
// order reclaim and compact; v4 stops the costly orders; the baseline
// runs the slow path's direct work at every order.
func TestFilemapClearingStallsOnlyTheFirstOrder(t *testing.T) {
	tests := []struct {
		name                string
		v4, filemap         bool
		compactions, stalls uint64
	}{
		{"baseline: every order from 4 down to 1 stalls in direct reclaim", false, false, 5, 7},
		{"v4: order 4 loses its two compactions and its reclaim, orders 3 to 1 keep theirs", true, false, 3, 6},
		{"filemap clearing: order 4 alone does", false, true, 2, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := newQuietMachine(t, 8192, 1, 2)
			m.Patches.CostlyNoretryNoDirectReclaim = tc.v4
			m.Patches.FilemapClearReclaimAfterFirst = tc.filemap
			// Every other page free, the rest kernel memory: no order
			// above 0 can be had, by reclaim or by compaction.
			carveZone(t, m, nil, func(block, off int) role {
				if off%2 == 1 {
					return roleFree
				}
				return roleKernel
			})
			f := m.NewFile("wal", nil)
			var got uint64
			inWorld(t, m, 1, func(tk *sim.Task) {
				for got < 1 {
					got += m.FileWriteOrder(tk, f, got, 1, GFP_NOFS|__GFP_MOVABLE, 4)
					if !m.AllocPending(tk) && got < 1 {
						break
					}
				}
			})
			require.Equal(t, uint64(1), got)
			assert.Equal(t, uint64(1), m.Filemap.FoliosAdded[0], "the write fell back to order 0")
			assert.Equal(t, tc.compactions, m.Event(COMPACTSTALL), "compact_stall")
			assert.Equal(t, tc.stalls, allocstalls(m), "allocstall_*")
		})
	}
}

// A write whose folio allocation stopped at a cond_resched() while another
// task cached the same page finishes when it is repeated: its allocation
// runs on, the folio it gets is put back (filemap_add_folio's -EEXIST),
// and the write copies into the other task's folio. It used to find the
// page cached, skip the allocation and return with it still pending, so
// its caller repeated the call for ever (pgbench's history extension at
// scale 0.125 with max_write_kb=256 never ended).
func TestAWriteWhosePageWasCachedWhileItsAllocationWaitedFinishes(t *testing.T) {
	m := newQuietMachine(t, 8192, 1, 2)
	setup := m.testTask(0)
	held := takeEveryFreePage(m, setup)
	require.NotEmpty(t, held)
	f := m.NewFile("pgbench_history", nil)
	gfp := GFP_NOFS | __GFP_HIGHMEM | __GFP_MOVABLE | __GFP_NOFAIL
	steps, pendingSteps := 0, 0
	var done uint64
	finished := false
	freeAt := setup.Now + sim.Millisecond
	spawn(m, "backend", 1, setup.Now, func(tk *sim.Task) sim.Time {
		if steps++; steps > 100000 || tk.Now > freeAt+sim.Millisecond {
			return sim.Exit // still pending long after the page was cached
		}
		done += m.IomapFileBufferedWrite(tk, f, done, 2-done, gfp)
		if m.AllocPending(tk) {
			pendingSteps++
			return sim.Resched
		}
		finished = true
		return sim.Exit
	})
	spawn(m, "checkpointer", 0, freeAt, func(tk *sim.Task) sim.Time {
		for _, pfn := range held[:len(held)/4] {
			m.FreePages(tk, pfn, 0)
		}
		require.Equal(t, uint64(2), m.IomapFileBufferedWrite(tk, f, 0, 2, gfp))
		return sim.Exit
	})
	runWorld(t, m, freeAt+2*sim.Millisecond)
	require.True(t, finished, "the write ended (after %d steps)", steps)
	assert.Greater(t, pendingSteps, 0, "the backend's allocation stopped at a cond_resched() while memory was short")
	assert.Equal(t, uint64(2), done, "it wrote both pages")
	assert.Equal(t, uint64(2), f.Resident(), "into the checkpointer's folio: no second copy is cached")
	assert.Zero(t, m.Slow.Abandoned, "no allocation was dropped half-way")
	m.drainAllPages(setup, nil)
	assert.Equal(t, uint64(len(held)/4-2), m.NrFreePages(), "the backend's folio was put back: only the cached one is allocated")
}

// filemap_read() calls folio_mark_accessed() on every folio it copies from,
// the ones its readahead has just read in as well (linux-mm/linux-mm
// mm/filemap.c @009cff43, filemap_read; folio_mark_accessed in mm/swap.c
// sets PG_referenced on the first call and activates on the second). So a
// page read once is referenced, and reading it again moves it to the
// active list; a third read changes nothing more.
func TestAPageReadTwiceIsActive(t *testing.T) {
	m := newQuietMachine(t, 8192, 1, 1)
	tk := m.testTask(0)
	f := m.NewFile("data", nil)
	f.Size = 64
	n := m.Nodes[0]
	done, missing := m.FileRead(tk, f, 0, 16, GFP_HIGHUSER_MOVABLE)
	require.Equal(t, uint64(16), done)
	require.Equal(t, uint64(16), missing)
	mustCheck(t, m, "first read")
	assert.Equal(t, int64(16), n.Stat[NR_INACTIVE_FILE], "read once: inactive")
	assert.Zero(t, n.Stat[NR_ACTIVE_FILE])
	assert.Zero(t, m.Event(PGACTIVATE))
	_, missing = m.FileRead(tk, f, 0, 16, GFP_HIGHUSER_MOVABLE)
	require.Zero(t, missing)
	mustCheck(t, m, "second read")
	assert.Equal(t, int64(16), n.Stat[NR_ACTIVE_FILE], "read twice: active")
	assert.Zero(t, n.Stat[NR_INACTIVE_FILE])
	assert.Equal(t, uint64(16), m.Event(PGACTIVATE))
	m.FileRead(tk, f, 0, 16, GFP_HIGHUSER_MOVABLE)
	assert.Equal(t, uint64(16), m.Event(PGACTIVATE), "a third read activates nothing more")
	// The pages of a read the first read did not cover are read once.
	m.FileRead(tk, f, 16, 16, GFP_HIGHUSER_MOVABLE)
	assert.Equal(t, int64(16), n.Stat[NR_INACTIVE_FILE])
	mustCheck(t, m, "reads")
}
