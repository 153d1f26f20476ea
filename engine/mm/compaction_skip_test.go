package mm

import (
	"testing"

	"github.com/pagesim/pagesim/engine/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fileHolesLayout fills a zone with clean page cache and frees every odd
// page: order-0 holes, so that compaction is suitable at low orders and
// finds nothing free at them.
func fileHolesLayout(block, off int) role {
	if off%2 == 1 {
		return roleFree
	}
	return roleFile
}

// skippedZoneCompaction carves a zone of file pages and holes, marks every
// pageblock skipped with the scanners' positions reset (what a direct
// compaction leaves when its scanners met and kswapd has not slept since),
// sets the cost of passing a pageblock on its flags, and runs one async
// direct compaction at order 2 for a GFP_NOFS page-cache request. It
// returns the time the compaction took and the pageblocks in the zone.
func skippedZoneCompaction(t *testing.T, flagsCost sim.Time) (sim.Time, int) {
	m := newQuietMachine(t, 16384, 1, 2)
	m.Cost.PageblockFlags = flagsCost
	l := carveZone(t, m, nil, fileHolesLayout)
	for pfn := l.zone.StartPFN; pfn < l.zone.EndPFN(); pfn += PageblockNrPages {
		m.pageblockOf(pfn).skip = true
	}
	resetCachedPositions(l.zone)
	tk := m.testTask(1)
	start := tk.Now
	rc := m.compactOnce(tk, GFP_NOFS|__GFP_MOVABLE, 2, 0, COMPACT_PRIO_ASYNC)
	mustCheck(t, m, "the compaction")
	require.Equal(t, COMPACT_PARTIAL_SKIPPED, rc, "the scanners met with nothing isolated")
	return tk.Now - start, l.blocks
}

// After a direct compaction's scanners met, the next one starts at the zone
// start and passes every pageblock marked skipped up to the free scanner,
// one flags check each (isolate_migratepages' loop): the walk costs
// PageblockFlags per block passed, so it grows with the zone.
func TestACompactionStartingAtTheZoneStartPaysForEverySkippedPageblockItPasses(t *testing.T) {
	free, blocks := skippedZoneCompaction(t, 0)
	paid, _ := skippedZoneCompaction(t, 7)
	// The free scanner stands on the last block: the migrate scanner
	// passes the blocks below it.
	assert.Equal(t, 7*sim.Time(blocks-1), paid-free)
}

// __reset_isolation_suitable (kswapd going to sleep after a direct
// compaction's scanners met) clears the skip bit of a block holding an LRU
// page on the source side and keeps the others', and is charged to the
// task that runs it: a PageblockFlags per block and a CompactScanPage per
// struct page the kernel's sample (every 8th) reads: the first of a block
// with an LRU page, all 64 of a block without one.
func TestKswapdGoingToSleepClearsSkipBitsOfBlocksWithLRUPagesAndPaysForTheWalk(t *testing.T) {
	m := newQuietMachine(t, 4096, 1, 2)
	// Block 0 holds one page-cache page; the rest are kernel pages.
	l := carveZone(t, m, nil, func(block, off int) role {
		if block == 0 && off == 8 {
			return roleFile
		}
		return roleKernel
	})
	require.Equal(t, 8, l.blocks)
	for pfn := l.zone.StartPFN; pfn < l.zone.EndPFN(); pfn += PageblockNrPages {
		m.pageblockOf(pfn).skip = true
	}
	l.zone.compact.blockskipFlush = true
	tk := m.testTask(0)
	start := tk.Now
	m.resetIsolationSuitablePgdat(tk, m.Nodes[0])
	mustCheck(t, m, "the reset")
	assert.False(t, m.pageblockOf(l.zone.StartPFN).skip, "block 0 holds an LRU page")
	for b := 1; b < l.blocks; b++ {
		assert.True(t, m.pageblockOf(l.zone.StartPFN+PFN(b)*PageblockNrPages).skip, "block %d has nothing to migrate or take", b)
	}
	assert.False(t, l.zone.compact.blockskipFlush)
	// The migrate side walks blocks 0-3 (block 0: its first sample;
	// then, a source found, blocks 1-3 are sampled for an LRU or a free
	// page: 64 samples each), the free side blocks 7-4 (MIGRATE_MOVABLE,
	// no free page: 64 samples each).
	samples := sim.Time(1 + 3*64 + 4*64)
	assert.Equal(t, 8*m.Cost.PageblockFlags+samples*m.Cost.CompactScanPage, tk.Now-start)
	// A second call finds the flag cleared and does nothing.
	start = tk.Now
	m.resetIsolationSuitablePgdat(tk, m.Nodes[0])
	assert.Equal(t, start, tk.Now)
}

// update_cached_migrate() raises compact_cached_migrate_pfn to
// pageblock_end_pfn() of what its callers pass, and both pass the end of the
// block they finished, already aligned (isolate_migratepages:
// update_cached_migrate(cc, block_end_pfn) for a block that is not a
// suitable source; isolate_migratepages_block: update_cached_migrate(cc,
// low_pfn) with low_pfn == end_pfn; linux-mm mm/compaction.c @04e60ad1).
// ALIGN(end + 1, pageblock_nr_pages) is the end of the NEXT block
// (include/linux/pageblock-flags.h), so the next run starts one block past
// the block just finished. Only a run that is not async moves the sync
// position.
func TestTheCachedMigratePositionLandsOneBlockPastTheBlockJustFinished(t *testing.T) {
	tests := []struct {
		name string
		mode migrateMode
		// unmovable is true when block 2 is a MIGRATE_UNMOVABLE block
		// that an async direct compaction for a movable page passes
		// without scanning; else block 2 is scanned and yields nothing.
		unmovable bool
		// async and sync are the cached positions afterwards, in blocks
		// from the zone start.
		async, sync int
	}{
		{"an async scan of a block that isolated nothing moves the async position to the end of the block after it", migrateAsync, false, 4, 0},
		{"a sync-light scan of a block that isolated nothing moves both positions to the end of the block after it", migrateSyncLight, false, 4, 4},
		{"an async direct compaction passing a block of another migratetype moves the async position to the end of the block after it", migrateAsync, true, 4, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := newQuietMachine(t, 16*PageblockNrPages, 1, 2)
			l := carveZone(t, m, nil, func(block, off int) role { return roleKernel })
			z := l.zone
			require.Zero(t, z.StartPFN%PageblockNrPages, "the zone starts on a block boundary")
			block := func(b int) PFN { return z.StartPFN + PFN(b)*PageblockNrPages }
			resetCachedPositions(z)
			cc := &compactControl{zone: z, order: 2, gfp: GFP_HIGHUSER_MOVABLE, migratetype: MIGRATE_MOVABLE,
				mode: tc.mode, directCompaction: true, migratePFN: block(2), freePFN: block(3), searchOrder: 1}
			tk := m.testTask(0)
			if tc.unmovable {
				m.pageblockOf(block(2)).mt = MIGRATE_UNMOVABLE
				require.Equal(t, isolateNone, m.isolateMigratepages(tk, cc))
			} else {
				m.isolateMigratepagesBlock(tk, cc, block(2), block(3))
				require.Zero(t, cc.nrMigratepages, "kernel pages are not isolated")
			}
			assert.Equal(t, [2]PFN{block(tc.async), block(tc.sync)}, z.compact.cachedMigPFN)
		})
	}
}
