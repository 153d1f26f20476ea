package mm

// Tests for compaction's fast free-list searches, fast_isolate_freepages
// and fast_find_migrateblock (mm/compaction.c, linux-mm @04e60ad1): what
// they find that the strided free scanner misses, the kernel's rules for
// where they may look, and how their list walks are counted.

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// isolateRange is one mm_compaction_isolate_* or
// mm_compaction_fast_isolate_freepages event.
type isolateRange struct {
	start, end     PFN
	scanned, taken uint64
}

func isolateRanges(t *testing.T, m *Machine, name string) []isolateRange {
	t.Helper()
	var out []isolateRange
	for _, f := range traceFields(m, name) {
		var r isolateRange
		_, err := fmt.Sscanf(f, "range=(0x%x ~ 0x%x) nr_scanned=%d nr_taken=%d", &r.start, &r.end, &r.scanned, &r.taken)
		require.NoError(t, err, "%s: %q", name, f)
		out = append(out, r)
	}
	return out
}

// carveAndFree is carveZone, after which the pages given roleKernel are
// freed one at a time, in PFN order or (topDown) from the highest PFN
// down. A freed order-0 page whose buddy is busy goes to the head of its
// free list (__free_one_page: buddy_merge_likely is false), so the page
// freed first ends up at the list's tail. Counters and trace are reset.
func carveAndFree(t testing.TB, m *Machine, topDown bool, place func(block, off int) role) (*layout, []PFN) {
	t.Helper()
	l := carveZone(t, m, nil, place)
	tk := m.testTask(0)
	freed := slices.Clone(l.pages[roleKernel])
	if topDown {
		slices.Reverse(freed)
	}
	for _, pfn := range freed {
		m.FreePages(tk, pfn, 0)
	}
	m.DrainLocalPages(tk)
	mustCheck(t, m, "freeing the layout's holes")
	resetCounters(m)
	return l, l.pages[roleKernel]
}

// everyOtherPage is docs/FIDELITY.md's example of what the free-list
// searches change ("Compaction's free-list searches", under "Corrections
// to the kernel model"): a zone of 336 pageblocks whose 320 middle blocks
// (10 to 329; the memmap's reserved pages end the zone) have every odd
// page free, 81,920 order-0 pages in all, and anonymous pages everywhere
// else.
func everyOtherPage(block, off int) role {
	if block >= 10 && block < 330 && off%2 == 1 {
		return roleKernel
	}
	return roleAnon
}

func TestAsyncCompactionFindsTheFreePagesItsStridedScanMisses(t *testing.T) {
	tests := []struct {
		name    string
		topDown bool
	}{
		// The async free scanner samples one PFN in 32 from each block's
		// start, all even: alone it isolates none of these pages.
		{"pages freed from the top of the zone down: every search takes the page at the list's tail, and the first pageblock is emptied", true},
		{"pages freed from the bottom up: the tail holds pages below the top half of the scan space, so the first search walks 256 entries and restarts the free scanner at the top half's mark", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := newQuietMachine(t, 336*PageblockNrPages, 1, 2)
			l, free := carveAndFree(t, m, tc.topDown, everyOtherPage)
			z := l.zone
			require.Len(t, free, 81920)
			require.Equal(t, int64(81920), z.Stat[NR_FREE_PAGES])
			rc := m.compactOnce(m.testTask(1), GFP_TRANSHUGE, 9, 0, COMPACT_PRIO_ASYNC)
			mustCheck(t, m, "compaction")
			if tc.topDown {
				assert.Equal(t, COMPACT_SUCCESS.Name(), rc.Name())
				assert.Equal(t, uint64(PageblockNrPages), m.Event(PGMIGRATE_SUCCESS), "the zone's first block migrated")
			}
			fast := isolateRanges(t, m, "mm_compaction_fast_isolate_freepages")
			linear := isolateRanges(t, m, "mm_compaction_isolate_freepages")
			migrate := isolateRanges(t, m, "mm_compaction_isolate_migratepages")
			require.NotEmpty(t, fast)
			require.NotEmpty(t, migrate)
			if tc.topDown {
				assert.Equal(t, migrate[0].start, z.StartPFN, "no free chunk of order 3+: the migrate scanner starts at the zone start")
				p := &m.pages[z.StartPFN]
				assert.True(t, p.flags == pgBuddy && p.order == PageblockOrder, "the first block is a free order-9 chunk")
				// One search per target, one list entry each: async
				// direct compaction takes the chunk and does not scan
				// around it (fast_isolate_around).
				require.Len(t, fast, PageblockNrPages)
				for i, r := range fast {
					require.Equal(t, isolateRange{r.start, r.end, 1, 1}, r, "search %d", i)
				}
				assert.Empty(t, linear, "the linear scan never ran")
				assert.Equal(t, uint64(PageblockNrPages), m.Event(COMPACTFREE_SCANNED), "compact_free_scanned counts the list entries visited")
				for _, pfn := range free[len(free)-PageblockNrPages:] {
					require.Equal(t, l.anon.ID, m.pages[pfn].owner, "PFN %#x: the highest free pages became the targets", pfn)
				}
				return
			}
			// Not COMPACT_COMPLETE: until the skip bits are first
			// reset, compact_init_migrate_pfn is 0 and no run counts
			// as a whole-zone scan.
			assert.Equal(t, COMPACT_PARTIAL_SKIPPED, rc)
			assert.Zero(t, m.Event(PGMIGRATE_SUCCESS))
			// The kernel's marks: from the scanners' positions at the
			// first search, the top half starts at min_pfn.
			freePFN := pageblockStartPFN(z.EndPFN() - 1)
			migratePFN := migrate[0].end
			minPFN := pageblockStartPFN(freePFN - (freePFN-migratePFN)/2)
			assert.Equal(t, isolateRange{minPFN, freePFN, PageblockNrPages / 2, 0}, fast[0], "a fresh start walks pageblock_nr_pages/2 entries")
			require.NotEmpty(t, linear)
			assert.Equal(t, minPFN, linear[0].start, "direct compaction restarts the free scanner at min_pfn")
			var sampled uint64
			for _, r := range linear {
				assert.Equal(t, isolateRange{r.start, r.start + PageblockNrPages, PageblockNrPages / compactClusterMax, 0}, r)
				sampled += r.scanned
			}
			var listed uint64
			for _, r := range fast {
				listed += r.scanned
			}
			assert.Equal(t, listed+sampled, m.Event(COMPACTFREE_SCANNED))
			// move_freelist_head: the 256 pages walked go to the head
			// end, so the next search starts with the 257th.
			list := &z.freeArea[0].list[MIGRATE_MOVABLE]
			assert.Equal(t, free[PageblockNrPages/2-1], list.head)
			assert.Equal(t, free[PageblockNrPages/2], list.tail)
		})
	}
}

// topHalfHoles frees every odd page of blocks 32-61 of a 64-block zone;
// lowHoles every odd page of blocks 4-23, all below the top half of the
// space between the scanners. The rest is anonymous.
func topHalfHoles(block, off int) role {
	if block >= 32 && block < 62 && off%2 == 1 {
		return roleKernel
	}
	return roleAnon
}

func lowHoles(block, off int) role {
	if block >= 4 && block < 24 && off%2 == 1 {
		return roleKernel
	}
	return roleAnon
}

func TestFastIsolateFreepagesFollowsTheKernelsRules(t *testing.T) {
	tests := []struct {
		name   string
		place  func(block, off int) role
		prio   CompactPriority
		memory bool // vm.compact_memory instead of a direct compaction
		check  func(t *testing.T, m *Machine, l *layout, free []PFN, fast, linear []isolateRange)
	}{
		{"ASYNC direct compaction takes one page per search and never scans around it", topHalfHoles, COMPACT_PRIO_ASYNC, false,
			func(t *testing.T, m *Machine, l *layout, free []PFN, fast, linear []isolateRange) {
				require.GreaterOrEqual(t, len(fast), compactClusterMax)
				for _, r := range fast[:compactClusterMax] {
					assert.Equal(t, uint64(1), r.taken)
				}
				assert.Empty(t, linear)
			}},
		{"SYNC_LIGHT direct compaction scans the found page's pageblock from its start for the rest (fast_isolate_around)", topHalfHoles, COMPACT_PRIO_SYNC_LIGHT, false,
			func(t *testing.T, m *Machine, l *layout, free []PFN, fast, linear []isolateRange) {
				top := free[len(free)-1]
				block := pageblockStartPFN(top)
				require.NotEmpty(t, fast)
				assert.Equal(t, uint64(1), fast[0].taken, "the first search takes the list's tail, the highest free page")
				assert.Equal(t, l.anon.ID, m.pages[top].owner)
				require.NotEmpty(t, linear)
				// 31 more odd pages from the block start: the walk
				// stops after the 62nd PFN.
				assert.Equal(t, isolateRange{block, block + 62, 62, compactClusterMax - 1}, linear[0])
			}},
		{"a free page below the top half of the scan space is never taken", lowHoles, COMPACT_PRIO_ASYNC, false,
			func(t *testing.T, m *Machine, l *layout, free []PFN, fast, linear []isolateRange) {
				require.NotEmpty(t, fast)
				for _, r := range fast {
					assert.Zero(t, r.taken)
				}
				assert.Zero(t, m.Event(PGMIGRATE_SUCCESS))
				for _, pfn := range free {
					require.NotEqual(t, l.anon.ID, m.pages[pfn].owner)
				}
			}},
		{"compact_memory (order -1) does no fast search", chunkBlocks(nil), 0, true,
			func(t *testing.T, m *Machine, l *layout, free []PFN, fast, linear []isolateRange) {
				assert.Empty(t, fast)
				assert.NotEmpty(t, linear)
				assert.Greater(t, m.Event(PGMIGRATE_SUCCESS), uint64(0))
			}},
		{"the sync free scanner widens its stride over full blocks and then misses holes at odd PFNs", topHalfHoles, 0, true,
			func(t *testing.T, m *Machine, l *layout, free []PFN, fast, linear []isolateRange) {
				// Blocks 63 and 62 hold no free page, so the stride
				// doubles from 1 and is even (2, 4, ... up to
				// COMPACT_CLUSTER_MAX) by the time it meets a hole.
				require.Greater(t, len(linear), 6)
				want := []uint64{512, 256, 128, 64, 32, 16, 16}
				for i, w := range want {
					assert.Equal(t, w, linear[i].scanned, "block %d from the top", i)
				}
				assert.Zero(t, m.Event(PGMIGRATE_SUCCESS))
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := newQuietMachine(t, 64*PageblockNrPages, 1, 2)
			l, free := carveAndFree(t, m, true, tc.place)
			tk := m.testTask(1)
			if tc.memory {
				m.CompactMemory(tk)
			} else {
				m.compactOnce(tk, GFP_TRANSHUGE, 9, 0, tc.prio)
			}
			mustCheck(t, m, "compaction")
			tc.check(t, m, l, free, isolateRanges(t, m, "mm_compaction_fast_isolate_freepages"), isolateRanges(t, m, "mm_compaction_isolate_freepages"))
		})
	}
}

// chunkBlocks returns a 64-block layout where each listed block starts with
// a free order-4 chunk (freed from the top down, so that the lowest block
// heads the order-4 free list), blocks 32-61 have every even page free
// (targets the async free scanner's stride lands on) and the rest is
// anonymous, with a pinned page after the chunk in each block of pinned.
func chunkBlocks(chunks []int, pinned ...int) func(block, off int) role {
	return func(block, off int) role {
		switch {
		case slices.Contains(chunks, block) && off < 16:
			return roleKernel
		case slices.Contains(pinned, block) && off == 16:
			return roleAnonPinned
		case block >= 32 && block < 62 && off%2 == 0:
			return roleFree
		}
		return roleAnon
	}
}

func TestFastFindMigrateblockFollowsTheKernelsRules(t *testing.T) {
	tests := []struct {
		name   string
		chunks []int
		pinned []int // blocks async compaction cannot empty
		skip   []int // blocks marked PB_compact_skip before compacting
		prio   CompactPriority
		// blocks lists the pageblocks the migrate scanner works in, in
		// order; visits the free-list entries the searches walked
		// (compact_migrate_scanned beyond what the block scans report).
		blocks []int
		visits int
	}{
		{"ASYNC THP compaction starts in the block of the first listed chunk below the halfway mark", []int{8, 16, 24}, nil, nil, COMPACT_PRIO_ASYNC, []int{8}, 1},
		{"a block marked skipped is passed over", []int{8, 16, 24}, nil, []int{8}, COMPACT_PRIO_ASYNC, []int{16}, 2},
		{"a chunk above the halfway mark is not taken: the linear scan starts at the zone start", []int{31}, nil, nil, COMPACT_PRIO_ASYNC, []int{0}, 1},
		{"SYNC_LIGHT compaction searches too", []int{8, 16, 24}, nil, []int{8}, COMPACT_PRIO_SYNC_LIGHT, []int{16}, 2},
		{"SYNC_FULL ignores skip hints, so it does not search", []int{8, 16, 24}, nil, nil, COMPACT_PRIO_SYNC_FULL, []int{0}, 0},
		{"after a failed search the linear scan restarts from the lowest block a search found (fast_start_pfn)", []int{12, 16}, []int{12, 16}, nil, COMPACT_PRIO_ASYNC, []int{12, 16, 13}, 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := newQuietMachine(t, 64*PageblockNrPages, 1, 2)
			l, _ := carveAndFree(t, m, true, chunkBlocks(tc.chunks, tc.pinned...))
			z := l.zone
			require.Equal(t, uint64(len(tc.chunks)), z.NrFree(4))
			for _, b := range tc.skip {
				m.pageblockOf(z.StartPFN + PFN(b)*PageblockNrPages).skip = true
			}
			m.compactOnce(m.testTask(1), GFP_TRANSHUGE, 9, 0, tc.prio)
			mustCheck(t, m, "compaction")
			migrate := isolateRanges(t, m, "mm_compaction_isolate_migratepages")
			var blocks []int
			var blockScans uint64
			for _, r := range migrate {
				if b := int(r.start-z.StartPFN) / PageblockNrPages; len(blocks) == 0 || blocks[len(blocks)-1] != b {
					blocks = append(blocks, b)
				}
				blockScans += r.scanned
			}
			require.GreaterOrEqual(t, len(blocks), len(tc.blocks))
			assert.Equal(t, tc.blocks, blocks[:len(tc.blocks)], "the blocks the migrate scanner worked in")
			assert.Equal(t, uint64(tc.visits), m.Event(COMPACTMIGRATE_SCANNED)-blockScans, "free-list entries counted in compact_migrate_scanned")
			for _, b := range tc.skip {
				assert.Equal(t, PageblockNrPages-16, m.inUse(z.StartPFN+PFN(b)*PageblockNrPages), "skipped block %d untouched", b)
			}
		})
	}
}

// listOf returns a free list's entries, head first.
func listOf(m *Machine, l *freeList) []PFN {
	var out []PFN
	for pfn := l.head; pfn != NilPFN; pfn = m.pages[pfn].next {
		out = append(out, pfn)
	}
	return out
}

func TestFreelistRotationsAreTheKernelsListCuts(t *testing.T) {
	entries := []PFN{0x1001, 0x1003, 0x1005, 0x1007, 0x1009} // head first
	tests := []struct {
		name string
		head bool // move_freelist_head, else move_freelist_tail
		at   int
		want []PFN
	}{
		// list_cut_before(sublist, list, entry) + list_splice_tail
		{"move_freelist_head of the first entry changes nothing", true, 0, entries},
		{"move_freelist_head of the last entry puts it first, the rest after it in order", true, 4, []PFN{0x1009, 0x1001, 0x1003, 0x1005, 0x1007}},
		{"move_freelist_head of a middle entry moves the entries before it to the tail", true, 2, []PFN{0x1005, 0x1007, 0x1009, 0x1001, 0x1003}},
		// list_cut_position(sublist, list, entry) + list_splice_tail
		{"move_freelist_tail of the last entry changes nothing", false, 4, entries},
		{"move_freelist_tail of the first entry puts it last", false, 0, []PFN{0x1003, 0x1005, 0x1007, 0x1009, 0x1001}},
		{"move_freelist_tail of a middle entry moves it and the entries before it to the tail", false, 2, []PFN{0x1007, 0x1009, 0x1001, 0x1003, 0x1005}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := newQuietMachine(t, 4*PageblockNrPages, 1, 1)
			var l freeList
			l.head, l.tail = NilPFN, NilPFN
			for _, pfn := range entries {
				l.pushTail(m.pages, pfn)
			}
			if tc.head {
				l.moveFreelistHead(m.pages, entries[tc.at])
			} else {
				l.moveFreelistTail(m.pages, entries[tc.at])
			}
			assert.Equal(t, tc.want, listOf(m, &l))
			var back []PFN
			for pfn := l.tail; pfn != NilPFN; pfn = m.pages[pfn].prev {
				back = append(back, pfn)
			}
			slices.Reverse(back)
			assert.Equal(t, tc.want, back, "prev links")
			assert.Equal(t, uint64(len(entries)), l.n)
		})
	}
}

func TestFastSearchOrderAndLimitFollowTheKernel(t *testing.T) {
	t.Run("next_search_order cycles down from search_order and stops where it started, moving the next start down", func(t *testing.T) {
		cc := &compactControl{order: 9, searchOrder: 3}
		var seen []int
		for o := cc.searchOrder; o >= 0; o = cc.nextSearchOrder(o) {
			seen = append(seen, o)
		}
		assert.Equal(t, []int{3, 2, 1, 0, 8, 7, 6, 5, 4}, seen)
		assert.Equal(t, 2, cc.searchOrder)
	})
	t.Run("a search that started at order 0 wraps search_order to order-1", func(t *testing.T) {
		cc := &compactControl{order: 4, searchOrder: 0}
		var seen []int
		for o := cc.searchOrder; o >= 0; o = cc.nextSearchOrder(o) {
			seen = append(seen, o)
		}
		assert.Equal(t, []int{0, 3, 2, 1}, seen)
		assert.Equal(t, 3, cc.searchOrder)
	})
	limits := []struct {
		fails uint
		want  uint
	}{{0, 33}, {1, 17}, {2, 9}, {3, 5}, {4, 3}, {5, 2}, {6, 1}, {63, 1}, {64, 1}, {1000, 1}}
	for _, tc := range limits {
		t.Run(fmt.Sprintf("freelist_scan_limit after %d failed searches is %d", tc.fails, tc.want), func(t *testing.T) {
			cc := &compactControl{fastSearchFail: tc.fails}
			assert.Equal(t, tc.want, cc.freelistScanLimit())
		})
	}
}

// BenchmarkFastIsolateFreepagesWalk: one fast_isolate_freepages() call
// on a fresh start that walks pageblock_nr_pages/2 order-0 list entries
// and finds nothing (every free page lies below the top half of the scan
// space). Reports the wall time per list entry visited.
func BenchmarkFastIsolateFreepagesWalk(b *testing.B) {
	m := newQuietMachine(b, 64*PageblockNrPages, 1, 2)
	l, _ := carveAndFree(b, m, false, lowHoles)
	z := l.zone
	tk := m.testTask(1)
	cc := &compactControl{zone: z, order: 9, searchOrder: 9, mode: migrateAsync, directCompaction: true, nrMigratepages: compactClusterMax}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cc.freePFN, cc.migratePFN, cc.fastSearchFail = pageblockStartPFN(z.EndPFN()-1), z.StartPFN, 0
		m.fastIsolateFreepages(tk, cc)
	}
	b.StopTimer()
	if cc.nrFreepages != 0 || cc.totalFreeScanned != uint64(b.N)*PageblockNrPages/2 {
		b.Fatalf("the walk took %d pages and visited %d entries, want 0 and %d", cc.nrFreepages, cc.totalFreeScanned, b.N*PageblockNrPages/2)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(cc.totalFreeScanned), "ns/entry")
}
