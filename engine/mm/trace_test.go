package mm

// The tracepoints reclaim, kswapd and compaction emit, checked against the
// kernel's TP_printk formats (include/trace/events/{kmem,compaction,
// vmscan}.h), and the trace file's line layout.

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/pagesim/pagesim/engine/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	reHex    = `0x[0-9a-f]+`
	reGFP    = `(none|[A-Z][A-Z0-9_]*(\|[A-Z_][A-Z0-9_]*)*(\|0x[0-9a-f]+)?)`
	reZone   = `(DMA     |DMA32   |Normal  |Movable |HighMem )` // %-8s
	reStatus = `(skipped|deferred|continue|success|partial_skipped|complete|no_suitable_page|not_suitable_zone|contended)`
)

// tpFormats holds each event's TP_printk as a regular expression.
var tpFormats = map[string]*regexp.Regexp{
	// kmem.h
	"mm_page_alloc":         regexp.MustCompile(`^page=[0-9a-f]+ pfn=` + reHex + ` order=\d+ migratetype=\d+ gfp_flags=` + reGFP + `$`),
	"mm_page_free":          regexp.MustCompile(`^page=[0-9a-f]+ pfn=` + reHex + ` order=\d+$`),
	"mm_page_alloc_extfrag": regexp.MustCompile(`^page=[0-9a-f]+ pfn=` + reHex + ` alloc_order=\d+ fallback_order=\d+ pageblock_order=9 alloc_migratetype=\d+ fallback_migratetype=\d+ fragmenting=[01] change_ownership=[01]$`),
	// compaction.h
	"mm_compaction_begin":                  regexp.MustCompile(`^zone_start=` + reHex + ` migrate_pfn=` + reHex + ` free_pfn=` + reHex + ` zone_end=` + reHex + `, mode=(a?sync)$`),
	"mm_compaction_end":                    regexp.MustCompile(`^zone_start=` + reHex + ` migrate_pfn=` + reHex + ` free_pfn=` + reHex + ` zone_end=` + reHex + `, mode=(a?sync) status=` + reStatus + `$`),
	"mm_compaction_try_to_compact_pages":   regexp.MustCompile(`^order=\d+ gfp_mask=` + reGFP + ` priority=[012]$`),
	"mm_compaction_finished":               regexp.MustCompile(`^node=\d+ zone=` + reZone + ` order=-?\d+ ret=` + reStatus + `$`),
	"mm_compaction_suitable":               regexp.MustCompile(`^node=\d+ zone=` + reZone + ` order=-?\d+ ret=` + reStatus + `$`),
	"mm_compaction_deferred":               regexp.MustCompile(`^node=\d+ zone=` + reZone + ` order=\d+ order_failed=-?\d+ consider=\d+ limit=\d+$`),
	"mm_compaction_defer_compaction":       regexp.MustCompile(`^node=\d+ zone=` + reZone + ` order=\d+ order_failed=-?\d+ consider=\d+ limit=\d+$`),
	"mm_compaction_defer_reset":            regexp.MustCompile(`^node=\d+ zone=` + reZone + ` order=\d+ order_failed=-?\d+ consider=\d+ limit=\d+$`),
	"mm_compaction_isolate_migratepages":   regexp.MustCompile(`^range=\(` + reHex + ` ~ ` + reHex + `\) nr_scanned=\d+ nr_taken=\d+$`),
	"mm_compaction_isolate_freepages":      regexp.MustCompile(`^range=\(` + reHex + ` ~ ` + reHex + `\) nr_scanned=\d+ nr_taken=\d+$`),
	"mm_compaction_fast_isolate_freepages": regexp.MustCompile(`^range=\(` + reHex + ` ~ ` + reHex + `\) nr_scanned=\d+ nr_taken=\d+$`),
	"mm_compaction_migratepages":           regexp.MustCompile(`^nr_migrated=\d+ nr_failed=\d+$`),
	"mm_compaction_kcompactd_sleep":        regexp.MustCompile(`^nid=\d+$`),
	"mm_compaction_wakeup_kcompactd":       regexp.MustCompile(`^nid=\d+ order=-?\d+ classzone_idx=` + reZone + `$`),
	"mm_compaction_kcompactd_wake":         regexp.MustCompile(`^nid=\d+ order=-?\d+ classzone_idx=` + reZone + `$`),
	// vmscan.h
	"mm_vmscan_kswapd_sleep":         regexp.MustCompile(`^nid=\d+$`),
	"mm_vmscan_kswapd_wake":          regexp.MustCompile(`^nid=\d+ order=\d+$`),
	"mm_vmscan_wakeup_kswapd":        regexp.MustCompile(`^nid=\d+ order=\d+ gfp_flags=` + reGFP + `$`),
	"mm_vmscan_direct_reclaim_begin": regexp.MustCompile(`^order=\d+ gfp_flags=` + reGFP + ` pid=\d+ memcg_id=\d+ $`),
	"mm_vmscan_direct_reclaim_end":   regexp.MustCompile(`^nr_reclaimed=\d+ pid=\d+ memcg_id=\d+ $`),
	"mm_vmscan_lru_shrink_inactive": regexp.MustCompile(`^nid=\d+ nr_scanned=\d+ nr_reclaimed=\d+ nr_dirty=\d+ nr_writeback=\d+ nr_congested=\d+ nr_immediate=\d+ ` +
		`nr_activate_anon=\d+ nr_activate_file=\d+ nr_ref_keep=\d+ nr_unmap_fail=\d+ priority=\d+ flags=RECLAIM_WB_(ANON|FILE)\|RECLAIM_WB_ASYNC$`),
	"mm_vmscan_lru_isolate":       regexp.MustCompile(`^classzone=\d+ order=\d+ nr_requested=\d+ nr_scanned=\d+ nr_skipped=\d+ nr_taken=\d+ lru=(inactive_anon|active_anon|inactive_file|active_file|unevictable)$`),
	"mm_vmscan_lru_shrink_active": regexp.MustCompile(`^nid=\d+ nr_taken=\d+ nr_active=\d+ nr_deactivated=\d+ nr_referenced=\d+ priority=\d+ flags=RECLAIM_WB_(ANON|FILE)\|RECLAIM_WB_ASYNC$`),
	// oom.h
	"reclaim_retry_zone": regexp.MustCompile(`^node=\d+ zone=` + reZone + ` order=\d+ reclaimable=\d+ available=\d+ min_wmark=\d+ no_progress_loops=\d+ wmark_check=[01]$`),
	"compact_retry":      regexp.MustCompile(`^order=\d+ priority=COMPACT_PRIO_(SYNC_FULL|SYNC_LIGHT|ASYNC) compaction_result=(failed|withdrawn|progress) retries=\d+ max_retries=\d+ should_retry=[01]$`),
}

// traceLine is the layout of a line of /sys/kernel/tracing/trace.
var traceLine = regexp.MustCompile(`^ *\S+-\d+ +\[\d{3}\] \.\.\.\.\. +\d+\.\d{6}: ([a-z_]+): (.*)$`)

func TestTracepointsPrintTheKernelsFormats(t *testing.T) {
	m := newQuietMachine(t, 8192, 1, 2)
	require.NoError(t, m.Trace.Enable("all", true))
	l := carveZone(t, m, nil, pinnedHolesFileLayout)
	tk := m.testTask(1)
	// A failing madvised THP fault: ASYNC compaction, reclaim, SYNC_LIGHT
	// compaction that defers; a second one is deferred.
	for i := 0; i < 2; i++ {
		inWorld(t, m, 1, func(t *sim.Task) { m.allocSync(t, GFP_TRANSHUGE, 9, 0, 0) })
	}
	// A costly __GFP_RETRY_MAYFAIL request goes through should_reclaim_retry
	// and should_compact_retry before it fails.
	inWorld(t, m, 1, func(t *sim.Task) { m.allocSync(t, GFP_KERNEL|__GFP_RETRY_MAYFAIL|__GFP_COMP, 4, 0, 0) })
	// A defer-mode THP fault wakes kswapd at order 9; kswapd reclaims
	// page cache and hands over to kcompactd.
	inWorld(t, m, 1, func(t *sim.Task) { m.allocSync(t, GFP_TRANSHUGE_LIGHT|__GFP_KSWAPD_RECLAIM, 9, 0, 0) })
	runWorld(t, m, m.World.Now()+2*sim.Second)
	// Unpinned, the zone compacts at SYNC_FULL (deferral or not): free
	// pages isolated, pages migrated, the deferral reset.
	for _, pfn := range l.pages[roleAnonPinned] {
		m.UnpinFolio(tk, pfn)
	}
	var rc CompactResult
	inWorld(t, m, 1, func(tk *sim.Task) { rc = m.compactOnce(tk, GFP_TRANSHUGE, 9, 0, COMPACT_PRIO_SYNC_FULL) })
	require.Equal(t, COMPACT_SUCCESS, rc)
	// An unmovable request falls back into a movable block.
	inWorld(t, m, 1, func(t *sim.Task) { m.allocSync(t, GFP_KERNEL, 0, 0, 0) })

	events := m.Trace.Events()
	require.Less(t, len(events), 1<<16, "the ring kept every event")
	seen := map[string]int{}
	for i := range events {
		e := &events[i]
		re, ok := tpFormats[e.Name()]
		require.True(t, ok, "no kernel format known for %s", e.Name())
		assert.Regexp(t, re, e.Fields(), "%s", e.Name())
		line := e.String()
		mm := traceLine.FindStringSubmatch(line)
		require.NotNil(t, mm, "trace line %q", line)
		assert.Equal(t, e.Name(), mm[1])
		assert.Equal(t, e.Fields(), mm[2])
		assert.False(t, strings.ContainsAny(line, "\n\t"))
		seen[e.Name()]++
	}
	for _, name := range []string{
		"mm_page_alloc_extfrag",
		"mm_compaction_begin", "mm_compaction_end", "mm_compaction_try_to_compact_pages",
		"mm_compaction_finished", "mm_compaction_suitable",
		"mm_compaction_deferred", "mm_compaction_defer_compaction", "mm_compaction_defer_reset",
		"mm_compaction_isolate_migratepages", "mm_compaction_isolate_freepages", "mm_compaction_migratepages",
		"mm_compaction_wakeup_kcompactd", "mm_compaction_kcompactd_wake", "mm_compaction_kcompactd_sleep",
		"mm_vmscan_wakeup_kswapd", "mm_vmscan_kswapd_wake", "mm_vmscan_kswapd_sleep",
		"mm_vmscan_direct_reclaim_begin", "mm_vmscan_direct_reclaim_end", "mm_vmscan_lru_shrink_inactive",
		"mm_vmscan_lru_isolate",
		"reclaim_retry_zone", "compact_retry",
	} {
		assert.Greater(t, seen[name], 0, "%s was emitted", name)
	}
	// Begin and end pair up, per reclaimer and per compaction run.
	assert.Equal(t, seen["mm_vmscan_direct_reclaim_begin"], seen["mm_vmscan_direct_reclaim_end"])
	assert.Equal(t, seen["mm_compaction_begin"], seen["mm_compaction_end"])
	// The reclaimer's pid is the allocating task's.
	for i := range events {
		e := &events[i]
		if e.Name() == "mm_vmscan_direct_reclaim_begin" {
			assert.Contains(t, e.Fields(), " pid="+itoa(int(e.PID))+" ")
		}
	}
}

func TestMmPageAllocTracesFailuresWithANullPage(t *testing.T) {
	m := newQuietMachine(t, 8192, 1, 2)
	require.NoError(t, m.Trace.Enable("kmem:mm_page_alloc", true))
	carveZone(t, m, nil, pinnedHolesLayout(true))
	tk := m.testTask(1)
	require.Equal(t, NilPFN, m.allocSync(tk, GFP_TRANSHUGE_LIGHT, 9, 0, 0))
	pfn := m.allocSync(tk, GFP_KERNEL, 0, 0, 0)
	require.NotEqual(t, NilPFN, pfn)
	lines := traceFields(m, "mm_page_alloc")
	require.Len(t, lines, 2)
	// TP_printk prints a NULL struct page pointer and pfn 0 for a failure.
	assert.Equal(t, "page=0000000000000000 pfn=0x0 order=9 migratetype=1 gfp_flags=GFP_TRANSHUGE_LIGHT", lines[0])
	assert.Equal(t, fmt.Sprintf("page=%s pfn=%#x order=0 migratetype=0 gfp_flags=GFP_KERNEL", pagePtr(int64(pfn)), pfn), lines[1])
}

// reclaim_retry_zone and compact_retry (include/trace/events/oom.h) show
// why a costly __GFP_RETRY_MAYFAIL request gives up when every pageblock
// holds a pin: nothing reclaimable, and compaction gave up at the costly
// floor, COMPACT_PRIO_SYNC_LIGHT. Its result reads "withdrawn": on a zone
// whose skip bits were never reset, compact_init_migrate_pfn is still 0,
// no run is a whole-zone scan, and the scanners' meeting is
// COMPACT_PARTIAL_SKIPPED.
func TestRetryTracepointsExplainAGiveUp(t *testing.T) {
	m := newQuietMachine(t, 8192, 1, 2)
	require.NoError(t, m.Trace.Enable("oom", true))
	carveZone(t, m, nil, pinnedHolesLayout(true))
	got := PFN(0)
	inWorld(t, m, 1, func(tk *sim.Task) { got = m.allocSync(tk, GFP_KERNEL|__GFP_RETRY_MAYFAIL|__GFP_COMP, 9, 0, 0) })
	require.Equal(t, NilPFN, got)
	z := m.Nodes[0].Zones[ZONE_NORMAL]
	assert.Equal(t, []string{fmt.Sprintf("node=0 zone=Normal   order=9 reclaimable=0 available=%d min_wmark=%d no_progress_loops=1 wmark_check=0",
		z.Stat[NR_FREE_PAGES], z.WmarkPages(WMARK_MIN))}, traceFields(m, "reclaim_retry_zone"))
	assert.Equal(t, []string{"order=9 priority=COMPACT_PRIO_SYNC_LIGHT compaction_result=withdrawn retries=0 max_retries=16 should_retry=0"},
		traceFields(m, "compact_retry"))
}

// The masks mm_page_alloc prints for folios: every folio allocation adds
// __GFP_COMP (folio_alloc_mpol), a page-cache write adds __GFP_WRITE
// (FGP_WRITE on a mapping that can write back), a read goes through
// readahead first (readahead_gfp_mask: __GFP_NORETRY|__GFP_NOWARN), and an
// order-0 anonymous fault is vma_alloc_zeroed_movable_folio's
// GFP_HIGHUSER_MOVABLE|__GFP_ZERO.
func TestFolioAllocationsPrintTheKernelsMasks(t *testing.T) {
	tests := []struct {
		name string
		do   func(m *Machine, tk *sim.Task)
		want string
	}{
		{"an order-0 anonymous fault", func(m *Machine, tk *sim.Task) {
			r := m.NewAnonRegion("anon", nil, 1)
			require.True(t, m.FaultAnonNext(tk, r, false).OK)
		}, "GFP_HIGHUSER_MOVABLE|__GFP_ZERO|__GFP_COMP"},
		{"a page-cache write", func(m *Machine, tk *sim.Task) {
			require.Equal(t, uint64(1), m.FileWrite(tk, m.NewFile("f", nil), 0, 1, GFP_HIGHUSER_MOVABLE))
		}, "GFP_HIGHUSER_MOVABLE|__GFP_WRITE|__GFP_COMP"},
		{"a page-cache read", func(m *Machine, tk *sim.Task) {
			f := m.NewFile("f", nil)
			f.Size = 1
			_, missing := m.FileRead(tk, f, 0, 1, GFP_HIGHUSER_MOVABLE)
			require.Equal(t, uint64(1), missing)
		}, "GFP_HIGHUSER_MOVABLE|__GFP_NOWARN|__GFP_NORETRY|__GFP_COMP"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := newQuietMachine(t, 8192, 1, 2)
			require.NoError(t, m.SetTHPKnob("transparent_hugepage.enabled", "never"))
			require.NoError(t, m.Trace.Enable("kmem:mm_page_alloc", true))
			inWorld(t, m, 0, func(tk *sim.Task) { tc.do(m, tk) })
			lines := traceFields(m, "mm_page_alloc")
			require.Len(t, lines, 1)
			assert.Regexp(t, ` order=0 migratetype=1 gfp_flags=`+regexp.QuoteMeta(tc.want)+`$`, lines[0])
		})
	}
}

func TestEventsFromGivesAReaderTheEventsItHasNotSeen(t *testing.T) {
	tr := NewTrace(4)
	tk := &sim.Task{Name: "t"}
	emit := func(n int) {
		for i := 0; i < n; i++ {
			tk.Now++
			tr.Emit(tk, TraceMmVmscanKswapdWake, 0, int64(tk.Now))
		}
	}
	times := func(ev []TraceEvent) []sim.Time {
		var out []sim.Time
		for _, e := range ev {
			out = append(out, e.Time)
		}
		return out
	}
	emit(3)
	assert.Equal(t, []sim.Time{1, 2, 3}, times(tr.EventsFrom(0, nil)))
	assert.Equal(t, []sim.Time{3}, times(tr.EventsFrom(2, nil)))
	assert.Empty(t, tr.EventsFrom(3, nil))
	emit(3) // the ring of 4 now holds events 2..5 (times 3..6)
	assert.Equal(t, []sim.Time{3, 4, 5, 6}, times(tr.EventsFrom(0, nil)), "the overwritten ones are gone")
	assert.Equal(t, []sim.Time{5, 6}, times(tr.EventsFrom(4, nil)))
	dst := tr.EventsFrom(5, []TraceEvent{{Time: 99}})
	assert.Equal(t, []sim.Time{99, 6}, times(dst), "appended to dst")
	assert.Equal(t, times(tr.Events()), times(tr.EventsFrom(0, nil)))
}
