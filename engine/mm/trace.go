package mm

// trace.go models the tracepoints of include/trace/events/kmem.h,
// compaction.h, vmscan.h and the slow path's two in oom.h
// (reclaim_retry_zone, compact_retry) as ftrace would print them from
// /sys/kernel/tracing/trace: a bounded ring of events recorded with typed
// arguments (cheap on the hot path) and formatted only when read, one line
// per event in the trace file's layout:
//
//	          kswapd0-93      [002] ..... 12345.678901: mm_vmscan_kswapd_wake: nid=0 order=9
//
// Like the kernel's events/<system>/<event>/enable files, each event can be
// switched off; mm_page_alloc and mm_page_free are off by default because
// they fire on every allocation.

import (
	"fmt"
	"strings"

	"github.com/pagesim/pagesim/engine/sim"
)

// TraceID names a tracepoint.
type TraceID uint8

const (
	TraceMmPageAlloc TraceID = iota
	TraceMmPageFree
	TraceMmPageAllocExtfrag
	TraceMmCompactionBegin
	TraceMmCompactionEnd
	TraceMmCompactionTryToCompactPages
	TraceMmCompactionFinished
	TraceMmCompactionSuitable
	TraceMmCompactionDeferred
	TraceMmCompactionDeferCompaction
	TraceMmCompactionDeferReset
	TraceMmCompactionIsolateMigratepages
	TraceMmCompactionIsolateFreepages
	TraceMmCompactionMigratepages
	TraceMmCompactionKcompactdSleep
	TraceMmCompactionWakeupKcompactd
	TraceMmCompactionKcompactdWake
	TraceMmVmscanKswapdSleep
	TraceMmVmscanKswapdWake
	TraceMmVmscanWakeupKswapd
	TraceMmVmscanDirectReclaimBegin
	TraceMmVmscanDirectReclaimEnd
	TraceMmVmscanLruShrinkInactive
	TraceReclaimRetryZone
	TraceCompactRetry
	TraceMmVmscanLruIsolate
	TraceMmVmscanLruShrinkActive
	TraceMmVmscanThrottled
	TraceMmCompactionFastIsolateFreepages
	NrTraceIDs
)

type traceDef struct {
	system, name string
	format       func(a *[8]int64) string
}

// vmemmapBase is x86-64's VMEMMAP_START (4-level paging, no KASLR): the
// page pointer printed for a PFN is vmemmap + pfn * sizeof(struct page).
const vmemmapBase = 0xffffea0000000000

func pagePtr(pfn int64) string { return fmt.Sprintf("%016x", uint64(vmemmapBase)+uint64(pfn)*64) }

var compactionStatus = [...]string{"not_suitable_zone", "skipped", "deferred", "no_suitable_page", "continue", "complete", "partial_skipped", "contended", "success"}

func statusName(v int64) string {
	if v >= 0 && int(v) < len(compactionStatus) {
		return compactionStatus[v]
	}
	return fmt.Sprint(v)
}

func zoneName(v int64) string {
	if v >= 0 && v < int64(MAX_NR_ZONES) {
		return ZoneType(v).String()
	}
	return "?"
}

func modeName(async int64) string {
	if async != 0 {
		return "async"
	}
	return "sync"
}

var traceDefs = [NrTraceIDs]traceDef{
	TraceMmPageAlloc: {"kmem", "mm_page_alloc", func(a *[8]int64) string {
		page := pagePtr(a[0])
		if a[0] == 0 {
			page = "0000000000000000" // a failure: the page pointer is NULL
		}
		return fmt.Sprintf("page=%s pfn=0x%x order=%d migratetype=%d gfp_flags=%s", page, a[0], a[1], a[2], GFP(a[3]))
	}},
	TraceMmPageFree: {"kmem", "mm_page_free", func(a *[8]int64) string {
		return fmt.Sprintf("page=%s pfn=0x%x order=%d", pagePtr(a[0]), a[0], a[1])
	}},
	TraceMmPageAllocExtfrag: {"kmem", "mm_page_alloc_extfrag", func(a *[8]int64) string {
		return fmt.Sprintf("page=%s pfn=0x%x alloc_order=%d fallback_order=%d pageblock_order=%d alloc_migratetype=%d fallback_migratetype=%d fragmenting=%d change_ownership=%d",
			pagePtr(a[0]), a[0], a[1], a[2], PageblockOrder, a[3], a[4], b2i(a[2] < PageblockOrder), a[5])
	}},
	TraceMmCompactionBegin: {"compaction", "mm_compaction_begin", func(a *[8]int64) string {
		return fmt.Sprintf("zone_start=0x%x migrate_pfn=0x%x free_pfn=0x%x zone_end=0x%x, mode=%s", a[0], a[1], a[2], a[3], modeName(a[4]))
	}},
	TraceMmCompactionEnd: {"compaction", "mm_compaction_end", func(a *[8]int64) string {
		return fmt.Sprintf("zone_start=0x%x migrate_pfn=0x%x free_pfn=0x%x zone_end=0x%x, mode=%s status=%s", a[0], a[1], a[2], a[3], modeName(a[4]), statusName(a[5]))
	}},
	TraceMmCompactionTryToCompactPages: {"compaction", "mm_compaction_try_to_compact_pages", func(a *[8]int64) string {
		return fmt.Sprintf("order=%d gfp_mask=%s priority=%d", a[0], GFP(a[1]), a[2])
	}},
	TraceMmCompactionFinished: {"compaction", "mm_compaction_finished", func(a *[8]int64) string {
		return fmt.Sprintf("node=%d zone=%-8s order=%d ret=%s", a[0], zoneName(a[1]), a[2], statusName(a[3]))
	}},
	TraceMmCompactionSuitable: {"compaction", "mm_compaction_suitable", func(a *[8]int64) string {
		return fmt.Sprintf("node=%d zone=%-8s order=%d ret=%s", a[0], zoneName(a[1]), a[2], statusName(a[3]))
	}},
	TraceMmCompactionDeferred:        {"compaction", "mm_compaction_deferred", deferFmt},
	TraceMmCompactionDeferCompaction: {"compaction", "mm_compaction_defer_compaction", deferFmt},
	TraceMmCompactionDeferReset:      {"compaction", "mm_compaction_defer_reset", deferFmt},
	TraceMmCompactionIsolateMigratepages: {"compaction", "mm_compaction_isolate_migratepages", func(a *[8]int64) string {
		return fmt.Sprintf("range=(0x%x ~ 0x%x) nr_scanned=%d nr_taken=%d", a[0], a[1], a[2], a[3])
	}},
	TraceMmCompactionIsolateFreepages: {"compaction", "mm_compaction_isolate_freepages", func(a *[8]int64) string {
		return fmt.Sprintf("range=(0x%x ~ 0x%x) nr_scanned=%d nr_taken=%d", a[0], a[1], a[2], a[3])
	}},
	TraceMmCompactionFastIsolateFreepages: {"compaction", "mm_compaction_fast_isolate_freepages", func(a *[8]int64) string {
		return fmt.Sprintf("range=(0x%x ~ 0x%x) nr_scanned=%d nr_taken=%d", a[0], a[1], a[2], a[3])
	}},
	TraceMmCompactionMigratepages: {"compaction", "mm_compaction_migratepages", func(a *[8]int64) string {
		return fmt.Sprintf("nr_migrated=%d nr_failed=%d", a[0], a[1])
	}},
	TraceMmCompactionKcompactdSleep: {"compaction", "mm_compaction_kcompactd_sleep", func(a *[8]int64) string {
		return fmt.Sprintf("nid=%d", a[0])
	}},
	TraceMmCompactionWakeupKcompactd: {"compaction", "mm_compaction_wakeup_kcompactd", func(a *[8]int64) string {
		return fmt.Sprintf("nid=%d order=%d classzone_idx=%-8s", a[0], a[1], zoneName(a[2]))
	}},
	TraceMmCompactionKcompactdWake: {"compaction", "mm_compaction_kcompactd_wake", func(a *[8]int64) string {
		return fmt.Sprintf("nid=%d order=%d classzone_idx=%-8s", a[0], a[1], zoneName(a[2]))
	}},
	TraceMmVmscanKswapdSleep: {"vmscan", "mm_vmscan_kswapd_sleep", func(a *[8]int64) string {
		return fmt.Sprintf("nid=%d", a[0])
	}},
	TraceMmVmscanKswapdWake: {"vmscan", "mm_vmscan_kswapd_wake", func(a *[8]int64) string {
		return fmt.Sprintf("nid=%d order=%d", a[0], a[1])
	}},
	TraceMmVmscanWakeupKswapd: {"vmscan", "mm_vmscan_wakeup_kswapd", func(a *[8]int64) string {
		return fmt.Sprintf("nid=%d order=%d gfp_flags=%s", a[0], a[1], GFP(a[2]))
	}},
	// The trailing "%s" prints "(in-irq)" for reclaim from interrupt
	// context, else nothing: the line ends in a space.
	TraceMmVmscanDirectReclaimBegin: {"vmscan", "mm_vmscan_direct_reclaim_begin", func(a *[8]int64) string {
		return fmt.Sprintf("order=%d gfp_flags=%s pid=%d memcg_id=%d ", a[0], GFP(a[1]), a[2], a[3])
	}},
	TraceMmVmscanDirectReclaimEnd: {"vmscan", "mm_vmscan_direct_reclaim_end", func(a *[8]int64) string {
		return fmt.Sprintf("nr_reclaimed=%d pid=%d memcg_id=%d ", a[0], a[1], a[2])
	}},
	// pagesim's reclaim never finds a folio under writeback (FileSync
	// writes back within its step) and its try_to_unmap never fails, so
	// nr_writeback, nr_congested, nr_immediate and nr_unmap_fail are 0;
	// nr_dirty (a[6]) is counted.
	TraceMmVmscanLruShrinkInactive: {"vmscan", "mm_vmscan_lru_shrink_inactive", func(a *[8]int64) string {
		return fmt.Sprintf("nid=%d nr_scanned=%d nr_reclaimed=%d nr_dirty=%d nr_writeback=0 nr_congested=0 nr_immediate=0 nr_activate_anon=%d nr_activate_file=%d nr_ref_keep=%d nr_unmap_fail=0 priority=%d flags=%s",
			a[0], a[1], a[2], a[6], a[3], a[4], a[5], a[7]>>8, lruFlags(a[7]&0xff))
	}},
	TraceReclaimRetryZone: {"oom", "reclaim_retry_zone", func(a *[8]int64) string {
		return fmt.Sprintf("node=%d zone=%-8s order=%d reclaimable=%d available=%d min_wmark=%d no_progress_loops=%d wmark_check=%d",
			a[0], zoneName(a[1]), a[2], a[3], a[4], a[5], a[6], a[7])
	}},
	TraceCompactRetry: {"oom", "compact_retry", func(a *[8]int64) string {
		return fmt.Sprintf("order=%d priority=%s compaction_result=%s retries=%d max_retries=%d should_retry=%d",
			a[0], prioName(a[1]), compactionFeedback(a[2]), a[3], a[4], a[5])
	}},
	TraceMmVmscanLruIsolate: {"vmscan", "mm_vmscan_lru_isolate", func(a *[8]int64) string {
		return fmt.Sprintf("classzone=%d order=%d nr_requested=%d nr_scanned=%d nr_skipped=%d nr_taken=%d lru=%s",
			a[0], a[1], a[2], a[3], a[4], a[5], LRUList(a[6]))
	}},
	TraceMmVmscanLruShrinkActive: {"vmscan", "mm_vmscan_lru_shrink_active", func(a *[8]int64) string {
		return fmt.Sprintf("nid=%d nr_taken=%d nr_active=%d nr_deactivated=%d nr_referenced=%d priority=%d flags=%s",
			a[0], a[1], a[2], a[3], a[4], a[5], lruFlags(a[6]))
	}},
	// The kernel's format spells usect_delayed so.
	TraceMmVmscanThrottled: {"vmscan", "mm_vmscan_throttled", func(a *[8]int64) string {
		return fmt.Sprintf("nid=%d usec_timeout=%d usect_delayed=%d reason=%s", a[0], a[1], a[2], throttleReason(a[3]))
	}},
}

// compactionFeedback is compact_result_to_feedback() with
// COMPACTION_FEEDBACK's names.
func compactionFeedback(r int64) string {
	switch CompactResult(r) {
	case COMPACT_COMPLETE:
		return "failed"
	case COMPACT_SUCCESS:
		return "progress"
	}
	return "withdrawn"
}

func prioName(p int64) string {
	if p >= 0 && int(p) < len(compactPrioNames) {
		return compactPrioNames[p]
	}
	return fmt.Sprint(p)
}

func lruFlags(file int64) string {
	if file != 0 {
		return "RECLAIM_WB_FILE|RECLAIM_WB_ASYNC"
	}
	return "RECLAIM_WB_ANON|RECLAIM_WB_ASYNC"
}

func deferFmt(a *[8]int64) string {
	return fmt.Sprintf("node=%d zone=%-8s order=%d order_failed=%d consider=%d limit=%d", a[0], zoneName(a[1]), a[2], a[3], a[4], a[5])
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TraceEvent is one recorded tracepoint hit.
type TraceEvent struct {
	Time sim.Time
	Comm string
	PID  int32
	CPU  int16
	ID   TraceID
	Args [8]int64
}

// Name returns the tracepoint's name.
func (e *TraceEvent) Name() string { return traceDefs[e.ID].name }

// System returns the tracepoint's system (kmem, compaction, vmscan, oom).
func (e *TraceEvent) System() string { return traceDefs[e.ID].system }

// Fields returns the event's TP_printk text.
func (e *TraceEvent) Fields() string { return traceDefs[e.ID].format(&e.Args) }

// String formats the event as a line of /sys/kernel/tracing/trace.
func (e *TraceEvent) String() string {
	return fmt.Sprintf("%16s-%-7d [%03d] ..... %5d.%06d: %s: %s",
		e.Comm, e.PID, e.CPU, int64(e.Time)/int64(sim.Second), (int64(e.Time)%int64(sim.Second))/int64(sim.Microsecond),
		traceDefs[e.ID].name, e.Fields())
}

// Trace is the bounded ring of events (the ftrace ring buffer).
type Trace struct {
	ring    []TraceEvent
	next    int
	full    bool
	enabled [NrTraceIDs]bool
	// Written counts every event recorded (entries-written).
	Written uint64
	// Hits counts events per tracepoint, including overwritten ones.
	Hits [NrTraceIDs]uint64
	// rec, if set, keeps every enabled event (trace_record.go).
	rec *recMachine
}

// NewTrace makes a ring of size entries with the default events enabled:
// all but mm_page_alloc, mm_page_free and mm_vmscan_lru_isolate.
func NewTrace(size int) *Trace {
	if size < 1 {
		size = 1
	}
	t := &Trace{ring: make([]TraceEvent, size)}
	for i := range t.enabled {
		t.enabled[i] = true
	}
	// One line per page or per LRU batch would bury the rest: these are
	// off until asked for.
	t.enabled[TraceMmPageAlloc] = false
	t.enabled[TraceMmPageFree] = false
	t.enabled[TraceMmVmscanLruIsolate] = false
	return t
}

// Enable switches an event on or off by name ("mm_compaction_begin",
// "compaction:mm_compaction_begin", "compaction" for a whole system, or
// "all").
func (t *Trace) Enable(name string, on bool) error {
	found := false
	for i, d := range traceDefs {
		if name == "all" || name == d.system || name == d.name || name == d.system+":"+d.name {
			t.enabled[i] = on
			found = true
		}
	}
	if !found {
		return fmt.Errorf("unknown tracepoint %q", name)
	}
	return nil
}

// Enabled reports whether an event is on.
func (t *Trace) Enabled(id TraceID) bool { return t.enabled[id] }

// Emit records an event for task tk at its clock.
func (t *Trace) Emit(tk *sim.Task, id TraceID, args ...int64) {
	at := sim.Time(0)
	if tk != nil {
		at = tk.Now
	}
	t.emitAt(tk, at, id, args...)
}

// emitAt records an event for task tk (nil: none) at time at: what tk did
// at an earlier time of its clock, such as a wakeup whose decision waited
// for the world's clock to reach the time it was asked at.
func (t *Trace) emitAt(tk *sim.Task, at sim.Time, id TraceID, args ...int64) {
	t.Hits[id]++
	if !t.enabled[id] {
		return
	}
	e := &t.ring[t.next]
	e.ID = id
	if tk != nil {
		e.Time, e.Comm, e.PID, e.CPU = at, tk.Name, int32(tk.ID+1), int16(tk.CPU)
	} else {
		e.Time, e.Comm, e.PID, e.CPU = at, "<idle>", 0, 0
	}
	e.Args = [8]int64{}
	copy(e.Args[:], args)
	if t.rec != nil {
		t.rec.event(e)
	}
	t.next++
	t.Written++
	if t.next == len(t.ring) {
		t.next = 0
		t.full = true
	}
}

// Events returns the events in the ring, oldest first.
func (t *Trace) Events() []TraceEvent {
	if !t.full {
		return append([]TraceEvent(nil), t.ring[:t.next]...)
	}
	out := make([]TraceEvent, 0, len(t.ring))
	out = append(out, t.ring[t.next:]...)
	return append(out, t.ring[:t.next]...)
}

// EventsFrom appends to dst the events still held whose number is n or
// more (the first event recorded is number 0, the latest Written-1),
// oldest first: the ones a reader that has seen n events has not.
func (t *Trace) EventsFrom(n uint64, dst []TraceEvent) []TraceEvent {
	held := uint64(t.Len())
	first := t.Written - held
	if n < first {
		n = first
	}
	for i := n; i < t.Written; i++ {
		// Event i sits held-(Written-i) places after the oldest.
		pos := int(i - first)
		if t.full {
			pos = (t.next + pos) % len(t.ring)
		}
		dst = append(dst, t.ring[pos])
	}
	return dst
}

// Len returns the number of events held.
func (t *Trace) Len() int {
	if t.full {
		return len(t.ring)
	}
	return t.next
}

// Clear empties the ring (echo > trace).
func (t *Trace) Clear() {
	t.next, t.full = 0, false
}

// Format writes the ring as the trace file, with its header.
func (t *Trace) Format(nrCPUs int) string { return FormatTraceFile(t.Events(), t.Written, nrCPUs) }

// FormatTraceFile writes events as /sys/kernel/tracing/trace shows them:
// the header (with entries-in-buffer/entries-written and the CPU count
// #P), then a line per event.
func FormatTraceFile(ev []TraceEvent, written uint64, nrCPUs int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# tracer: nop\n#\n# entries-in-buffer/entries-written: %d/%d   #P:%d\n#\n", len(ev), written, nrCPUs)
	b.WriteString("#                                _-----=> irqs-off/BH-disabled\n")
	b.WriteString("#                               / _----=> need-resched\n")
	b.WriteString("#                              | / _---=> hardirq/softirq\n")
	b.WriteString("#                              || / _--=> preempt-depth\n")
	b.WriteString("#                              ||| / _-=> migrate-disable\n")
	b.WriteString("#                              |||| /     delay\n")
	b.WriteString("#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION\n")
	b.WriteString("#              | |         |   |||||     |         |\n")
	for i := range ev {
		b.WriteString(ev[i].String())
		b.WriteByte('\n')
	}
	return b.String()
}

// TraceNames lists every tracepoint as system:name.
func TraceNames() []string {
	var out []string
	for _, d := range traceDefs {
		out = append(out, d.system+":"+d.name)
	}
	return out
}

// extfrag records mm_page_alloc_extfrag.
func (t *Trace) extfrag(tk *sim.Task, pfn PFN, allocOrder, fallbackOrder Order, allocMt, fallbackMt MigrateType, changeOwnership bool) {
	t.Emit(tk, TraceMmPageAllocExtfrag, int64(pfn), int64(allocOrder), int64(fallbackOrder), int64(allocMt), int64(fallbackMt), int64(b2i(changeOwnership)))
}

// throttleReason is show_throttle_flags() of 1 << reason.
func throttleReason(r int64) string {
	names := [...]string{"VMSCAN_THROTTLE_WRITEBACK", "VMSCAN_THROTTLE_ISOLATED", "VMSCAN_THROTTLE_NOPROGRESS", "VMSCAN_THROTTLE_CONGESTED"}
	if r >= 0 && int(r) < len(names) {
		return names[r]
	}
	return "VMSCAN_THROTTLE_NONE"
}
