package mm

// slowtrace.go records the slow path's decisions for one allocation, step by
// step in kernel function names, so a person can see why an allocation
// stalled:
//
//	GFP_TRANSHUGE|__GFP_THISNODE order=9: fast path missed at low watermark
//	-> wake_all_kswapds(order=9) -> get_page_from_freelist(ALLOC_WMARK_MIN|...): NULL
//	-> __alloc_pages_direct_compact(COMPACT_PRIO_ASYNC): COMPACT_SKIPPED
//	-> __alloc_pages_direct_reclaim(order=9): 0 pages -> ... -> nopage: costly order
//
// Steps are recorded as small structs into a reused buffer (the slow path is
// hot in a storm); the text is built only when someone asks. The trace of
// the latest allocation that stalled (entered direct reclaim or
// compaction) is kept for the page and the command line.

import (
	"fmt"
	"strings"

	"github.com/pagesim/pagesim/engine/sim"
)

type stepKind uint8

const (
	stepCostlyNoretry stepKind = iota
	stepWakeKswapd
	stepFreelistMin
	stepDirectReclaim
	stepDrainAllPages
	stepDirectCompact
	stepShouldReclaimRetry
	stepShouldCompactRetry
	stepNofragGiveUp
	stepWouldOOM
	stepNopage
	stepNofailRetry
	stepNofailNoWatermarks
)

const (
	nopageNoDirectReclaim = iota
	nopagePFMemalloc
	nopageOnlyCompact
	nopageNoretryThisnode
	nopageNoretry
	nopageCostly
	nopageOOM
	nopageNoretryDeferred
)

var nopageReasons = [...]string{
	"no __GFP_DIRECT_RECLAIM",
	"PF_MEMALLOC (no reclaim recursion)",
	"__GFP_ONLY_COMPACT after one compaction",
	"__GFP_NORETRY|__GFP_THISNODE after compaction",
	"__GFP_NORETRY",
	"costly order without __GFP_RETRY_MAYFAIL",
	"reclaim and compaction cannot help (would OOM)",
	"__GFP_NORETRY after COMPACT_DEFERRED",
}

type slowStep struct {
	kind stepKind
	a, b int64
	at   sim.Time
}

// maxSlowSteps bounds the steps a trace keeps; a longer retry loop keeps
// its first steps and says how many more there were.
const maxSlowSteps = 64

// slowTrace is the recorder of one slow-path run.
type slowTrace struct {
	gfp      GFP
	order    Order
	start    sim.Time
	task     string
	steps    []slowStep
	dropped  int // steps past maxSlowSteps, not kept
	stalled  bool
	result   PFN
	finalGFP GFP
	elapsed  sim.Time
	owner    *slowTraces
}

// slowTraces points at the recorder of the latest slow path to begin and
// holds a copy of the latest stalled one. (Each allocation records into
// its own frame's recorder: several may be suspended at once.)
type slowTraces struct {
	cur      *slowTrace
	last     slowTrace
	haveLast bool
	// Stalls counts allocations that stalled in direct reclaim/compaction.
	Stalls uint64
	// longest is the longest time a finished allocation spent in the
	// slow path.
	longest sim.Time
}

func (s *slowTraces) begin(c *slowTrace, t *sim.Task, gfp GFP, order Order) {
	s.cur = c
	c.gfp, c.order, c.start, c.task = gfp, order, t.Now, t.Name
	c.steps = c.steps[:0]
	c.dropped = 0
	c.stalled = false
	c.result = NilPFN
	c.finalGFP = gfp
	c.owner = s
}

// step records one decision. Direct reclaim is a stall; direct
// compaction is one only when the kernel counts it as compact_stall
// (_allocPagesDirectCompact calls stall then): a skipped attempt takes no
// time and is not.
func (c *slowTrace) step(k stepKind, a, b int64) {
	if k == stepDirectReclaim {
		c.stalled = true
	}
	if len(c.steps) < maxSlowSteps {
		c.steps = append(c.steps, slowStep{kind: k, a: a, b: b})
	} else {
		c.dropped++
	}
}

// stall marks the allocation as stalled (a counted compact_stall).
func (c *slowTrace) stall() { c.stalled = true }

func (c *slowTrace) end(t *sim.Task, pfn PFN, gfp GFP) {
	c.result = pfn
	c.finalGFP = gfp
	if e := t.Now - c.start; c.owner != nil && e > c.owner.longest {
		c.owner.longest = e
	}
	if c.stalled {
		s := c.owner
		s.Stalls++
		s.last.gfp, s.last.order, s.last.start, s.last.task = c.gfp, c.order, c.start, c.task
		s.last.steps = append(s.last.steps[:0], c.steps...)
		s.last.dropped = c.dropped
		s.last.result, s.last.finalGFP, s.last.stalled = pfn, gfp, true
		s.last.elapsed = t.Now - c.start
		s.haveLast = true
	}
}

// String formats the trace as one line of steps joined by " -> ".
func (c *slowTrace) String() string {
	var parts []string
	parts = append(parts, fmt.Sprintf("%s order=%d: fast path missed at low watermark", c.gfp, c.order))
	for _, s := range c.steps {
		parts = append(parts, s.String())
	}
	if c.dropped > 0 {
		parts = append(parts, fmt.Sprintf("... (%d more steps)", c.dropped))
	}
	if c.result != NilPFN {
		parts = append(parts, fmt.Sprintf("got page pfn=%#x", c.result))
	} else if c.finalGFP&__GFP_NOWARN == 0 {
		parts = append(parts, fmt.Sprintf("warn_alloc: %s: page allocation failure: order:%d, mode:%#x(%s), nodemask=(null)", c.task, c.order, uint32(c.finalGFP), c.finalGFP))
	} else {
		parts = append(parts, "fail (__GFP_NOWARN: no warning)")
	}
	return strings.Join(parts, " -> ")
}

func (s slowStep) String() string {
	switch s.kind {
	case stepCostlyNoretry:
		return "costly __GFP_NORETRY: clear __GFP_DIRECT_RECLAIM"
	case stepWakeKswapd:
		return fmt.Sprintf("wake_all_kswapds(order=%d)", s.a)
	case stepFreelistMin:
		if s.a != 0 {
			return fmt.Sprintf("get_page_from_freelist(%s): page", AllocFlags(s.b))
		}
		return fmt.Sprintf("get_page_from_freelist(%s): NULL", AllocFlags(s.b))
	case stepDirectReclaim:
		return fmt.Sprintf("__alloc_pages_direct_reclaim(order=%d): %d pages", s.b, s.a)
	case stepDrainAllPages:
		return "drain_all_pages"
	case stepDirectCompact:
		return fmt.Sprintf("__alloc_pages_direct_compact(%s): %s", CompactPriority(s.b), CompactResult(s.a).Name())
	case stepShouldReclaimRetry:
		return fmt.Sprintf("should_reclaim_retry: %v (no_progress_loops=%d)", s.a != 0, s.b)
	case stepShouldCompactRetry:
		return fmt.Sprintf("should_compact_retry: %v (priority %s)", s.a != 0, CompactPriority(s.b))
	case stepNofragGiveUp:
		return "defrag_mode: drop ALLOC_NOFRAGMENT and retry"
	case stepWouldOOM:
		if s.a != 0 {
			return "__alloc_pages_may_oom: out_of_memory() would kill (pagesim has no OOM killer)"
		}
		return "__alloc_pages_may_oom: out_of_memory() without __GFP_FS kills nothing: progress, retry"
	case stepNopage:
		return "nopage: " + nopageReasons[s.a]
	case stepNofailRetry:
		if s.a != 0 {
			return "__GFP_NOFAIL: __alloc_pages_cpuset_fallback(ALLOC_MIN_RESERVE): page"
		}
		return "__GFP_NOFAIL: __alloc_pages_cpuset_fallback(ALLOC_MIN_RESERVE): NULL, cond_resched, retry"
	case stepNofailNoWatermarks:
		if s.a != 0 {
			return "__GFP_NOFAIL: __alloc_pages_cpuset_fallback(ALLOC_NO_WATERMARKS): page"
		}
		return "__GFP_NOFAIL: __alloc_pages_cpuset_fallback(ALLOC_NO_WATERMARKS): NULL, retry"
	}
	return "?"
}

// LastStall returns the decision trace of the latest allocation that
// stalled in direct reclaim or compaction, and whether there was one.
func (m *Machine) LastStall() (string, bool) { return m.LastStallAt(0) }

// LastStallAt is LastStall with the stall's start on a clock offset
// later than the machine's (a scenario's run, whose clock goes on over
// the machines of its phases).
func (m *Machine) LastStallAt(offset sim.Time) (string, bool) {
	if !m.slowTrace.haveLast {
		return "", false
	}
	l := &m.slowTrace.last
	return fmt.Sprintf("[%s] %s (stalled %s): %s", l.start+offset, l.task, stallDuration(l.elapsed), l.String()), true
}

// stallDuration prints how long an allocation stalled in the unit it
// needs, truncated as sim.Time's String truncates to the microsecond: a
// reclaim that finds nothing takes well under a microsecond, and
// "0.000000 s" would read as no stall at all.
func stallDuration(d sim.Time) string {
	switch {
	case d < sim.Microsecond:
		return fmt.Sprintf("%d ns", int64(d))
	case d < sim.Millisecond:
		return fmt.Sprintf("%d.%d us", int64(d/sim.Microsecond), int64(d%sim.Microsecond)/100)
	case d < sim.Second:
		return fmt.Sprintf("%d.%03d ms", int64(d/sim.Millisecond), int64(d%sim.Millisecond)/1000)
	}
	return d.String() + " s"
}

// LongestSlowpath returns the longest time one allocation has spent in the
// slow path: the finished ones, and those still looping at now (a task
// stopped at a cond_resched() inside one). An allocation that loops for
// seconds is what seed 002's workers "that would not die on SIGKILL" were
// doing.
func (m *Machine) LongestSlowpath(now sim.Time) sim.Time {
	l := m.slowTrace.longest
	for _, ts := range m.tasks {
		if ts != nil && ts.alloc != nil && now-ts.alloc.trace.start > l {
			l = now - ts.alloc.trace.start
		}
	}
	return l
}
