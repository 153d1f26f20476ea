package mm

// Behaviour tests for compaction: pinned pages, deferral, suitability and
// the counters direct compaction keeps.

import (
	"fmt"
	"testing"

	"github.com/pagesim/pagesim/engine/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pinnedHolesLayout puts a pinned anonymous page at the start of every
// pageblock (an unpinned one if pinned is false), frees every odd page and
// fills every other even page with unpinned anon: half of memory free, all
// of it in order-0 holes, and no block can be emptied while its pin holds.
func pinnedHolesLayout(pinned bool) func(block, off int) role {
	return func(block, off int) role {
		switch {
		case off == 0 && pinned:
			return roleAnonPinned
		case off%2 == 1:
			return roleFree
		}
		return roleAnon
	}
}

// inUse counts the pages of the pageblock starting at start that belong to
// a memory user.
func (m *Machine) inUse(start PFN) int {
	n := 0
	for pfn := start; pfn < start+PageblockNrPages; pfn++ {
		if m.pages[pfn].owner != 0 {
			n++
		}
	}
	return n
}

func TestCompactionCannotEmptyAPageblockHoldingAPinnedPage(t *testing.T) {
	direct := func(prio CompactPriority) func(m *Machine, t *sim.Task) {
		return func(m *Machine, t *sim.Task) {
			m.compactOnce(t, GFP_TRANSHUGE, 9, 0, prio)
		}
	}
	tests := []struct {
		name   string
		pinned bool
		run    func(m *Machine, t *sim.Task)
		// migrates: the first block's unpinned pages are migrated away.
		migrates bool
	}{
		{"SYNC_LIGHT direct compaction migrates the block's other pages but cannot free it", true, direct(COMPACT_PRIO_SYNC_LIGHT), true},
		{"SYNC_FULL direct compaction migrates the block's other pages but cannot free it", true, direct(COMPACT_PRIO_SYNC_FULL), true},
		{"ASYNC direct compaction abandons each block at its pinned first page", true, direct(COMPACT_PRIO_ASYNC), false},
		{"compact_memory (MIGRATE_SYNC) migrates around the pins but frees no block", true, func(m *Machine, t *sim.Task) { m.CompactMemory(t) }, true},
		{"kcompactd migrates around the pins but frees no block", true, nil, true},
		{"proactive compaction migrates around the pins but frees no block", true, func(m *Machine, t *sim.Task) {
			// The timer branch of kcompactd(): fragmentation score 99
			// is above the proactiveness-20 high mark of 90.
			m.Sysctl.CompactionProactiveness = 20
			if !m.shouldProactiveCompactNode(t, m.Nodes[0]) {
				panic("the node should be due for proactive compaction")
			}
			m.compactNode(t, m.Nodes[0], true)
		}, true},
		{"control: without the pins SYNC_LIGHT compaction frees a block", false, direct(COMPACT_PRIO_SYNC_LIGHT), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := newQuietMachine(t, 8192, 1, 2)
			l := carveZone(t, m, nil, pinnedHolesLayout(tc.pinned))
			z := l.zone
			require.Zero(t, freeHighOrder(z))
			pinned := l.pages[roleAnonPinned]
			if tc.run == nil {
				m.wakeupKcompactd(nil, m.Nodes[0], 9, ZONE_NORMAL)
				runWorld(t, m, sim.Second)
				require.Equal(t, uint64(1), m.Event(KCOMPACTD_WAKE))
			} else {
				inWorld(t, m, 1, func(tk *sim.Task) { tc.run(m, tk) })
			}
			m.drainAllPages(m.testTask(0), nil)
			mustCheck(t, m, "compaction")
			assert.Greater(t, m.Event(COMPACTMIGRATE_SCANNED)+m.Event(KCOMPACTD_MIGRATE_SCANNED), uint64(0), "compaction ran")
			first := z.StartPFN
			if !tc.pinned {
				assert.Greater(t, freeHighOrder(z), uint64(0), "a whole pageblock was freed")
				return
			}
			assert.Empty(t, m.movedOrFreed(pinned, l.pinned), "no pinned page moved")
			for _, pfn := range pinned {
				require.True(t, m.Folio(pfn).Pinned)
			}
			assert.Zero(t, freeHighOrder(z), "no pageblock became free")
			for b := 0; b < l.blocks; b++ {
				assert.GreaterOrEqual(t, m.inUse(first+PFN(b)*PageblockNrPages), 1, "block %d keeps its pinned page", b)
			}
			if tc.migrates {
				assert.Greater(t, m.Event(PGMIGRATE_SUCCESS), uint64(0), "pgmigrate_success")
				assert.Equal(t, 1, m.inUse(first), "the first block's other pages were migrated: only the pin is left")
				return
			}
			assert.Zero(t, m.Event(PGMIGRATE_SUCCESS), "pgmigrate_success")
			assert.Zero(t, m.Event(COMPACTISOLATED), "compact_isolated")
			assert.Empty(t, m.movedOrFreed(l.pages[roleAnon], l.anon), "every unpinned page is where it was")
			iso := traceFields(m, "mm_compaction_isolate_migratepages")
			require.NotEmpty(t, iso)
			assert.Equal(t, fmt.Sprintf("range=(0x%x ~ 0x%x) nr_scanned=1 nr_taken=0", first, first+PageblockNrPages), iso[0],
				"skip_on_failure: the first failure gives up the whole order-9 chunk")
		})
	}
}

// deferRef is the zone deferral state of mm/compaction.c
// (compaction_deferred, defer_compaction, compaction_defer_reset with
// COMPACT_MAX_DEFER_SHIFT 6), kept independently of compaction.go.
type deferRef struct {
	considered  uint64
	shift       uint
	orderFailed int
}

func (d *deferRef) deferred(order int) bool {
	limit := uint64(1) << d.shift
	if order < d.orderFailed {
		return false
	}
	d.considered++
	if d.considered >= limit {
		d.considered = limit
		return false
	}
	return true
}

func (d *deferRef) deferCompaction(order int) {
	d.considered = 0
	d.shift++
	if order < d.orderFailed {
		d.orderFailed = order
	}
	if d.shift > 6 {
		d.shift = 6
	}
}

func (d *deferRef) reset(order int, allocSuccess bool) {
	if allocSuccess {
		d.considered = 0
		d.shift = 0
	}
	if order >= d.orderFailed {
		d.orderFailed = order + 1
	}
}

func (d *deferRef) fields(order int) string {
	return fmt.Sprintf("node=0 zone=Normal   order=%d order_failed=%d consider=%d limit=%d", order, d.orderFailed, d.considered, uint64(1)<<d.shift)
}

func (d *deferRef) equal(t testing.TB, z *Zone, what string) {
	t.Helper()
	c, s, f := z.DeferState()
	require.Equal(t, *d, deferRef{c, s, f}, "deferral state after %s", what)
}

func TestCompactionDeferralBacksOffAndResetsLikeTheKernel(t *testing.T) {
	m := newQuietMachine(t, 8192, 1, 2)
	l := carveZone(t, m, nil, pinnedHolesLayout(true))
	z := l.zone
	tk := m.testTask(1)
	ref := &deferRef{}
	ref.equal(t, z, "boot")
	runs := 0
	// SYNC_LIGHT attempts that fail: each run defers, each deferral
	// counts towards the limit 1 << shift; shift stops at 6.
	for i := 0; i < 160; i++ {
		m.Trace.Clear()
		wantDeferred := ref.deferred(9)
		rc := m.compactOnce(tk, GFP_TRANSHUGE, 9, 0, COMPACT_PRIO_SYNC_LIGHT)
		mustCheck(t, m, "attempt %d", i)
		if wantDeferred {
			require.Equal(t, COMPACT_DEFERRED, rc, "attempt %d is deferred", i)
			require.Equal(t, []string{ref.fields(9)}, traceFields(m, "mm_compaction_deferred"), "attempt %d", i)
			require.Empty(t, traceFields(m, "mm_compaction_begin"), "a deferred attempt does not scan")
		} else {
			runs++
			require.Contains(t, []CompactResult{COMPACT_COMPLETE, COMPACT_PARTIAL_SKIPPED}, rc, "attempt %d runs and fails", i)
			ref.deferCompaction(9)
			require.Equal(t, []string{ref.fields(9)}, traceFields(m, "mm_compaction_defer_compaction"), "attempt %d", i)
		}
		ref.equal(t, z, fmt.Sprintf("attempt %d", i))
	}
	// Runs at attempts 0, 2, 6, 14, 30, 62 and 126: each failure doubles
	// the limit until COMPACT_MAX_DEFER_SHIFT, then every 64th attempt.
	assert.Equal(t, 7, runs)
	_, shift, _ := z.DeferState()
	assert.Equal(t, uint(compactMaxDeferShift), shift)

	// SYNC_FULL ignores deferral: it runs although the zone is deferred,
	// without counting a consideration, and defers further on failure.
	probe := *ref
	require.True(t, probe.deferred(9), "the next attempt would be deferred")
	m.Trace.Clear()
	rc := m.compactOnce(tk, GFP_TRANSHUGE, 9, 0, COMPACT_PRIO_SYNC_FULL)
	assert.Contains(t, []CompactResult{COMPACT_COMPLETE, COMPACT_PARTIAL_SKIPPED}, rc)
	assert.Len(t, traceFields(m, "mm_compaction_begin"), 1)
	assert.Empty(t, traceFields(m, "mm_compaction_deferred"))
	ref.deferCompaction(9)
	ref.equal(t, z, "a failed SYNC_FULL attempt")

	// Success. With the pins gone, a SYNC_FULL attempt builds the page:
	// try_to_compact_pages resets order_failed only; the allocator's
	// success (alloc_success) resets the back-off too.
	for _, pfn := range l.pages[roleAnonPinned] {
		m.UnpinFolio(tk, pfn)
	}
	rc = m.compactOnce(tk, GFP_TRANSHUGE, 9, 0, COMPACT_PRIO_SYNC_FULL)
	require.Equal(t, COMPACT_SUCCESS, rc)
	ref.reset(9, false)
	ref.equal(t, z, "a successful compaction")
	m.compactionDeferReset(tk, z, 9, true)
	ref.reset(9, true)
	ref.equal(t, z, "an allocation that compaction satisfied")
	assert.Equal(t, deferRef{0, 0, 10}, *ref)
}

func TestAsyncCompactionNeverDefers(t *testing.T) {
	m := newQuietMachine(t, 8192, 1, 2)
	l := carveZone(t, m, nil, pinnedHolesLayout(true))
	tk := m.testTask(1)
	ref := &deferRef{}
	for i := 0; i < 20; i++ {
		require.False(t, ref.deferred(9))
		rc := m.compactOnce(tk, GFP_TRANSHUGE, 9, 0, COMPACT_PRIO_ASYNC)
		mustCheck(t, m, "attempt %d", i)
		require.NotEqual(t, COMPACT_DEFERRED, rc)
		require.NotEqual(t, COMPACT_SUCCESS, rc)
		ref.equal(t, l.zone, fmt.Sprintf("attempt %d", i))
	}
	assert.Empty(t, traceFields(m, "mm_compaction_defer_compaction"))
	assert.Empty(t, traceFields(m, "mm_compaction_deferred"))
	assert.Equal(t, 20, len(traceFields(m, "mm_compaction_end")), "every attempt ran")
}

// freeHolesLayout frees exactly free pages (the first odd offsets in PFN
// order) and fills the rest with unpinned anon.
func freeHolesLayout(free int) func(block, off int) role {
	n := 0
	return func(block, off int) role {
		if off%2 == 1 && n < free {
			n++
			return roleFree
		}
		return roleAnon
	}
}

func TestCompactionIsSkippedBelowTheWatermarkPlusGap(t *testing.T) {
	probe := newQuietMachine(t, 8192, 1, 2)
	pz := probe.Nodes[0].Zones[ZONE_NORMAL]
	// __compaction_suitable for a costly order at the min watermark:
	// free must exceed min + compact_gap(9) + (low - min).
	threshold := int(pz.WmarkPages(WMARK_MIN) + compactGap(9) + pz.WmarkPages(WMARK_LOW) - pz.WmarkPages(WMARK_MIN))
	tests := []struct {
		name string
		free int
		prio CompactPriority
		want CompactResult
	}{
		{"SYNC_LIGHT with free pages at watermark+gap is skipped", threshold, COMPACT_PRIO_SYNC_LIGHT, COMPACT_SKIPPED},
		{"ASYNC with free pages at watermark+gap is skipped", threshold, COMPACT_PRIO_ASYNC, COMPACT_SKIPPED},
		{"SYNC_FULL with free pages at watermark+gap is skipped", threshold, COMPACT_PRIO_SYNC_FULL, COMPACT_SKIPPED},
		{"SYNC_LIGHT with one page more runs", threshold + 1, COMPACT_PRIO_SYNC_LIGHT, COMPACT_CONTINUE},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := newQuietMachine(t, 8192, 1, 2)
			l := carveZone(t, m, nil, freeHolesLayout(tc.free))
			require.Equal(t, int64(tc.free), l.zone.Stat[NR_FREE_PAGES])
			rc := m.compactOnce(m.testTask(1), GFP_TRANSHUGE, 9, 0, tc.prio)
			mustCheck(t, m, "compaction")
			if tc.want == COMPACT_SKIPPED {
				assert.Equal(t, COMPACT_SKIPPED, rc)
				assert.Equal(t, []string{"node=0 zone=Normal   order=9 ret=skipped"}, traceFields(m, "mm_compaction_suitable"))
				assert.Empty(t, traceFields(m, "mm_compaction_begin"), "no scanning")
				assert.Zero(t, m.Event(COMPACTMIGRATE_SCANNED)+m.Event(COMPACTFREE_SCANNED))
				c, s, f := l.zone.DeferState()
				considered := uint64(1) // compaction_deferred() was asked once
				if tc.prio == COMPACT_PRIO_SYNC_FULL {
					considered = 0 // SYNC_FULL does not ask
				}
				assert.Equal(t, deferRef{considered, 0, 0}, deferRef{c, s, f}, "COMPACT_SKIPPED never defers")
				return
			}
			assert.NotEqual(t, COMPACT_SKIPPED, rc)
			assert.Equal(t, []string{"node=0 zone=Normal   order=9 ret=continue"}, traceFields(m, "mm_compaction_suitable"))
			assert.Len(t, traceFields(m, "mm_compaction_begin"), 1)
		})
	}
}

// evenHolesLayout frees every even page and fills every odd one with
// unpinned anon. (The async free scanner strides 32 pages from the block
// start, so its samples land on holes whatever the fast search finds.)
func evenHolesLayout(block, off int) role {
	if off%2 == 0 {
		return roleFree
	}
	return roleAnon
}

func TestDirectCompactionCountersCountOnlyRunsOfCompaction(t *testing.T) {
	// The THP local-node attempt: one ASYNC compaction, then nopage.
	gfp := GFP_TRANSHUGE | __GFP_THISNODE | __GFP_NORETRY
	probe := newQuietMachine(t, 8192, 1, 2)
	pz := probe.Nodes[0].Zones[ZONE_NORMAL]
	threshold := int(pz.WmarkPages(WMARK_LOW) + compactGap(9))
	tests := []struct {
		name                 string
		layout               func(block, off int) role
		deferShift           uint
		legacy               bool // KernelBase.LegacyCompactStall
		result               CompactResult
		stall, fail, success uint64
		gotPage              bool
	}{
		{"COMPACT_SKIPPED counts nothing", freeHolesLayout(threshold), 0, false, COMPACT_SKIPPED, 0, 0, 0, false},
		{"COMPACT_DEFERRED counts a stall and a failure (06dac2f467fe)", pinnedHolesLayout(true), 3, false, COMPACT_DEFERRED, 1, 1, 0, false},
		{"a compaction that fails counts a stall and a failure", pinnedHolesLayout(true), 0, false, COMPACT_COMPLETE, 1, 1, 0, false},
		{"a compaction that succeeds counts a stall and a success", evenHolesLayout, 0, false, COMPACT_SUCCESS, 1, 0, 1, true},
		{"2018: COMPACT_SKIPPED counts nothing", freeHolesLayout(threshold), 0, true, COMPACT_SKIPPED, 0, 0, 0, false},
		{"2018: COMPACT_DEFERRED counts nothing (<= COMPACT_INACTIVE)", pinnedHolesLayout(true), 3, true, COMPACT_DEFERRED, 0, 0, 0, false},
		{"2018: a compaction that fails counts a stall and a failure", pinnedHolesLayout(true), 0, true, COMPACT_COMPLETE, 1, 1, 0, false},
		{"2018: a compaction that succeeds counts a stall and a success", evenHolesLayout, 0, true, COMPACT_SUCCESS, 1, 0, 1, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := newQuietMachine(t, 8192, 1, 2)
			m.Kernel.LegacyCompactStall = tc.legacy
			l := carveZone(t, m, nil, tc.layout)
			l.zone.compact.deferShift = tc.deferShift
			var got PFN
			inWorld(t, m, 1, func(t *sim.Task) { got = m.allocSync(t, gfp, 9, 0, 0) })
			assert.Equal(t, tc.gotPage, got != NilPFN)
			assert.Equal(t, tc.stall, m.Event(COMPACTSTALL), "compact_stall")
			assert.Equal(t, tc.fail, m.Event(COMPACTFAIL), "compact_fail")
			assert.Equal(t, tc.success, m.Event(COMPACTSUCCESS), "compact_success")
			var results []CompactResult
			for _, s := range m.slowTrace.cur.steps {
				if s.kind == stepDirectCompact {
					results = append(results, CompactResult(s.a))
					assert.Equal(t, int64(COMPACT_PRIO_ASYNC), s.b)
				}
			}
			want := tc.result
			if want == COMPACT_COMPLETE && len(results) == 1 && results[0] == COMPACT_PARTIAL_SKIPPED {
				want = COMPACT_PARTIAL_SKIPPED
			}
			assert.Equal(t, []CompactResult{want}, results, "exactly one direct compaction")
			if tc.gotPage {
				// The migrated block's last pages reach the buddy lists
				// in the compactor's context (check_drain), and the
				// order-9 merge is captured for the request.
				assert.Equal(t, uint64(1), m.Compact.Captured, "captured")
				assert.Equal(t, l.zone.StartPFN, got, "the captured page is the first block, emptied by migration")
				assert.GreaterOrEqual(t, m.Event(PGMIGRATE_SUCCESS), uint64(PageblockNrPages/2))
			}
			assert.Zero(t, allocstalls(m), "the THP local-node attempt never reclaims")
		})
	}
}

// TestIsolatingHalfABlockMovesTheBlocksOtherFreeChunks: __isolate_free_page
// of at least half a pageblock retypes the block with move_freepages_block,
// which moves the block's other free chunks to the MOVABLE lists too; with
// the retype alone they stayed on the Unmovable lists of a Movable block
// and the lists later cross-linked (review finding F16: a panic in
// fastIsolateFreepages and an endless loop on promoted-order fs=tmpfs).
func TestIsolatingHalfABlockMovesTheBlocksOtherFreeChunks(t *testing.T) {
	m := newQuietMachine(t, 8192, 1, 2)
	z := m.Nodes[0].Zones[ZONE_NORMAL]
	pfn, order := NilPFN, Order(0)
	for o := Order(MAX_PAGE_ORDER); o >= PageblockOrder; o-- {
		if h := z.freeArea[o].list[MIGRATE_MOVABLE].head; h != NilPFN {
			pfn, order = h, o
			break
		}
	}
	require.NotEqual(t, NilPFN, pfn)
	// Make pfn's block Unmovable, holding a free half and a free quarter
	// (the last quarter in use); the rest of the chunk stays free.
	m._delPageFromFreeList(z, pfn, order, MIGRATE_MOVABLE)
	m.accountFreepages(z, -int64(order.Pages()), MIGRATE_MOVABLE)
	m.setPageblockMigratetype(pfn, MIGRATE_UNMOVABLE)
	for p := pfn + PageblockNrPages; p < pfn+PFN(order.Pages()); p += PageblockNrPages {
		m._addToFreeList(z, p, PageblockOrder, MIGRATE_MOVABLE, false)
		m.accountFreepages(z, int64(PageblockNrPages), MIGRATE_MOVABLE)
	}
	half, quarter := Order(PageblockOrder-1), Order(PageblockOrder-2)
	m._addToFreeList(z, pfn, half, MIGRATE_UNMOVABLE, false)
	m.accountFreepages(z, int64(half.Pages()), MIGRATE_UNMOVABLE)
	m._addToFreeList(z, pfn+PFN(half.Pages()), quarter, MIGRATE_UNMOVABLE, false)
	m.accountFreepages(z, int64(quarter.Pages()), MIGRATE_UNMOVABLE)
	require.NoError(t, m.CheckInvariants())

	require.True(t, m._isolateFreePage(z, pfn, half))
	require.NoError(t, m.CheckInvariants(), "the quarter left in the block is on the list of the block's type")
	assert.Equal(t, MIGRATE_MOVABLE, m.getPageblockMigratetype(pfn))
	assert.Equal(t, pfn+PFN(half.Pages()), z.freeArea[quarter].list[MIGRATE_MOVABLE].tail, "move_to_free_list puts it at the tail")
	assert.Equal(t, NilPFN, z.freeArea[quarter].list[MIGRATE_UNMOVABLE].head)
}

// TestKcompactdsProactivePassStopsOnceKswapdIsWokenDuringIt: kcompactd's
// proactive pass reads kswapd_is_running() at every turn of compact_zone()'s
// loop (__compact_finished) and stops once kswapd runs. The pass's run ends
// its step whenever its clock is ahead of the world's, so a kswapd woken
// 1 us into the pass (and reclaiming page cache, so running for a while)
// stops it at the loop's next turn; a pass in one step read kswapd's state
// as of its start and compacted the whole zone.
func TestKcompactdsProactivePassStopsOnceKswapdIsWokenDuringIt(t *testing.T) {
	m := newQuietMachine(t, 256*PageblockNrPages, 1, 2)
	l := carveZone(t, m, nil, func(block, off int) role {
		switch {
		case off == 0:
			return roleAnonPinned // no block can be freed
		case off < PageblockNrPages/4:
			return roleAnon
		case off < PageblockNrPages/2:
			return roleFile // clean page cache for kswapd to reclaim
		}
		return roleFree
	})
	z := l.zone
	// Due for proactive compaction at kcompactd's first timeout, 500 ms:
	// no order-9 block is free, so the node's score is above the
	// proactiveness-20 high mark of 90.
	m.Sysctl.CompactionProactiveness = 20
	require.Greater(t, m.fragmentationScoreNode(z.Node), uint64(m.fragmentationScoreWmark(false)))
	wakeAt := 500*sim.Millisecond + sim.Microsecond
	spawn(m, "waker", 1, wakeAt, func(t *sim.Task) sim.Time {
		m.wakeupKswapd(t, z, GFP_KERNEL, 9, ZONE_NORMAL)
		return sim.Exit
	})
	runWorld(t, m, 2*sim.Second)
	var begin, end *TraceEvent
	for _, e := range m.Trace.Events() {
		if e.Comm != z.Node.kcompactd.task.Name {
			continue
		}
		switch e.Name() {
		case "mm_compaction_begin":
			if begin == nil {
				begin = &e
			}
		case "mm_compaction_end":
			if end == nil {
				end = &e
			}
		}
	}
	require.NotNil(t, begin, "a proactive pass began")
	require.NotNil(t, end, "and ended")
	require.NotEmpty(t, traceAt(m, "mm_vmscan_kswapd_wake"), "kswapd was woken")
	assert.Equal(t, 500*sim.Millisecond, begin.Time)
	assert.Contains(t, end.Fields(), "status=partial_skipped", "the pass stopped for kswapd (COMPACT_PARTIAL_SKIPPED)")
	for _, e := range m.Trace.Events() {
		if e.Comm != z.Node.kcompactd.task.Name {
			continue
		}
		if e.Name() == "mm_compaction_end" {
			break
		}
		if e.Name() == "mm_compaction_isolate_migratepages" {
			assert.Less(t, e.Time, wakeAt, "the first turn of the loop after kswapd's wakeup stops the pass: it isolates nothing more")
		}
	}
	assert.Less(t, end.Time, wakeAt+sim.Millisecond, "at the first turn of the loop after kswapd's wakeup")
}

// TestKswapdIsRunningFromTheWakeupThatTakesItOffItsWaitqueue:
// kswapd_is_running() is task_is_running(pgdat->kswapd), true from the
// wakeup (try_to_wake_up() sets TASK_RUNNING) before kswapd's first step
// has run, so a proactive pass reading it then stops; it read kswapd's
// state machine, still asleep until that step.
func TestKswapdIsRunningFromTheWakeupThatTakesItOffItsWaitqueue(t *testing.T) {
	m := newQuietMachine(t, 8192, 1, 2)
	lowNode(t, m)
	n := m.Nodes[0]
	z := n.Zones[ZONE_NORMAL]
	var before, after bool
	inWorld(t, m, 1, func(t *sim.Task) {
		before = m.kswapdIsRunning(n, t.Now)
		m.wakeupKswapd(t, z, GFP_KERNEL, 0, ZONE_NORMAL)
		after = m.kswapdIsRunning(n, t.Now)
	})
	assert.False(t, before, "asleep on its waitqueue")
	assert.Len(t, traceAt(m, "mm_vmscan_wakeup_kswapd"), 1)
	assert.True(t, after, "woken: TASK_RUNNING, its first step still to come")
}
