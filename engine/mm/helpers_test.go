package mm

// Helpers shared by the behaviour tests of reclaim, kswapd, PSI, compaction
// and the slow path: small machines, exact memory layouts, a world stepper
// that checks every invariant after every event, and counter and trace
// readers.

import (
	"testing"

	"github.com/pagesim/pagesim/engine/sim"
	"github.com/stretchr/testify/require"
)

// newQuietMachine boots a SimpleLayout machine with proactive compaction
// off (so kcompactd only runs when something wakes it) and a trace ring big
// enough that no test loses an event.
func newQuietMachine(t testing.TB, pagesPerNode uint64, nodes, cpusPerNode int) *Machine {
	t.Helper()
	cfg, err := SimpleLayout(pagesPerNode, nodes, cpusPerNode)
	require.NoError(t, err)
	m, err := NewMachine(cfg)
	require.NoError(t, err)
	require.NoError(t, m.SetSysctl("vm.compaction_proactiveness", "0"))
	m.Trace = NewTrace(1 << 16)
	m.MustCheckInvariants()
	return m
}

// mustCheck fails the test if an invariant is broken.
func mustCheck(t testing.TB, m *Machine, what string, args ...any) {
	t.Helper()
	if err := m.CheckInvariants(); err != nil {
		t.Fatalf("after "+what+": %v", append(args, err)...)
	}
}

// runWorld steps the world one event at a time up to and including time
// until, checking every invariant after each event, and leaves the clock at
// until. It returns the number of events processed.
func runWorld(t testing.TB, m *Machine, until sim.Time) int {
	t.Helper()
	n := 0
	for {
		next := m.World.NextEventTime()
		if next == sim.Never || next > until {
			break
		}
		require.True(t, m.World.Step())
		n++
		mustCheck(t, m, "event %d at %s", n, m.World.Now())
	}
	m.World.RunUntil(until, nil)
	return n
}

// spawn starts a task on cpu at time at that runs fn as its program.
func spawn(m *Machine, name string, cpu int, at sim.Time, fn func(t *sim.Task) sim.Time) *sim.Task {
	return m.World.NewTask(name, cpu, sim.ProgramFunc(func(_ *sim.World, t *sim.Task) sim.Time { return fn(t) }), at)
}

// inWorld runs fn once as the single step of a new task on cpu, at the
// world's current time, and steps the world (checking invariants) until the
// task has run. It returns the task, whose clock says when fn finished.
func inWorld(t testing.TB, m *Machine, cpu int, fn func(t *sim.Task)) *sim.Task {
	t.Helper()
	done := false
	tk := spawn(m, "worker", cpu, m.World.Now(), func(tk *sim.Task) sim.Time {
		fn(tk)
		done = true
		return sim.Exit
	})
	for !done {
		require.True(t, m.World.Step(), "the world ran dry before the task ran")
		mustCheck(t, m, "event at %s", m.World.Now())
	}
	return tk
}

// resetCounters zeroes the event counters, the slow-path, reclaim and
// compaction statistics and the trace, so a test reads its own deltas.
func resetCounters(m *Machine) {
	m.Stat.Events = [NR_VM_EVENT_ITEMS]uint64{}
	m.Slow = SlowpathStats{}
	m.Reclaim = ReclaimStats{}
	m.Compact = CompactStats{}
	m.Trace.Clear()
	for i := range m.Trace.Hits {
		m.Trace.Hits[i] = 0
	}
}

// allocstalls sums allocstall_* over the zone types.
func allocstalls(m *Machine) uint64 {
	var n uint64
	for e := ALLOCSTALL_DMA; e <= ALLOCSTALL_DEVICE; e++ {
		n += m.Event(e)
	}
	return n
}

// traceFields returns the TP_printk text of every recorded event called
// name, oldest first.
func traceFields(m *Machine, name string) []string {
	var out []string
	for _, e := range m.Trace.Events() {
		if e.Name() == name {
			out = append(out, e.Fields())
		}
	}
	return out
}

// traceNames returns the names of the recorded events, oldest first.
func traceNames(m *Machine) []string {
	var out []string
	for _, e := range m.Trace.Events() {
		out = append(out, e.Name())
	}
	return out
}

// freeHighOrder returns the free chunks of pageblock order and above in z.
func freeHighOrder(z *Zone) uint64 {
	var n uint64
	for o := Order(PageblockOrder); o < NR_PAGE_ORDERS; o++ {
		n += z.NrFree(o)
	}
	return n
}

// ---------------------------------------------------------------------------
// Exact layouts

// role is what carveZone makes of one page.
type role uint8

const (
	roleFree       role = iota // returned to the buddy allocator
	roleKernel                 // an unmovable kernel page (not on any LRU)
	roleAnon                   // an anonymous page of layout.anon
	roleAnonPinned             // an anonymous page of layout.pinned, FOLL_LONGTERM pinned
	roleFile                   // a clean page-cache page of layout.file
)

// layout is the result of carveZone.
type layout struct {
	zone   *Zone
	anon   *Owner
	pinned *Owner
	file   *File
	// pages lists the PFNs given each role.
	pages map[role][]PFN
	// blocks is the number of whole pageblocks the zone holds.
	blocks int
}

// carveZone takes every page of node 0's Normal zone out of the buddy
// allocator (with the watermarks lowered to zero for the occasion, then
// restored), and gives each page the role place(block, offset) returns,
// where block indexes the zone's pageblocks and offset the page inside it.
// Every pageblock stays MIGRATE_MOVABLE. The counters and the trace are
// reset afterwards.
func carveZone(t testing.TB, m *Machine, cg *Memcg, place func(block, off int) role) *layout {
	t.Helper()
	return carveNodeZone(t, m, 0, cg, place)
}

// carveNodeZone is carveZone for node nid's Normal zone.
func carveNodeZone(t testing.TB, m *Machine, nid int, cg *Memcg, place func(block, off int) role) *layout {
	t.Helper()
	z := m.Nodes[nid].Zones[ZONE_NORMAL]
	tk := m.testTask(m.Nodes[nid].CPUs[0])
	saved := z.watermark
	z.watermark = [NR_WMARK]uint64{}
	z.WatermarkBoost = 0
	for {
		pfn := m.allocSync(tk, __GFP_MOVABLE|__GFP_THISNODE|__GFP_NOWARN, 0, nid, 0)
		if pfn != NilPFN {
			require.Equal(t, z, m.ZoneOf(pfn))
			continue
		}
		// The watermark check sees only the buddy lists: pages left on
		// the per-CPU lists go back to the buddy allocator first.
		m.DrainLocalPages(tk)
		if z.Stat[NR_FREE_PAGES] == 0 {
			break
		}
	}
	require.Equal(t, int64(0), z.Stat[NR_FREE_PAGES], "every page of the zone is taken")
	l := &layout{
		zone:   z,
		anon:   m.NewOwner(KindAnon, "anon", cg),
		pinned: m.NewOwner(KindAnon, "pinned", cg),
		file:   m.NewFile("file", cg),
		pages:  map[role][]PFN{},
		blocks: int(z.SpannedPages / PageblockNrPages),
	}
	var fileIdx uint64
	for pfn := z.StartPFN; pfn < z.EndPFN(); pfn++ {
		if m.pages[pfn].flags&pgReserved != 0 {
			continue
		}
		rel := int(pfn - z.StartPFN)
		r := place(rel/PageblockNrPages, rel%PageblockNrPages)
		switch r {
		case roleFree:
			m.FreePages(tk, pfn, 0)
		case roleKernel:
		case roleAnon:
			m.setupFolio(pfn, 0, l.anon)
		case roleAnonPinned:
			m.setupFolio(pfn, 0, l.pinned)
			require.NoError(t, m.PinFolio(tk, pfn))
		case roleFile:
			o, slot := m.fileExtent(l.file, fileIdx)
			m.setupFolio(pfn, 0, o)
			o.file.pages[slot] = pfn
			fileIdx++
			l.file.Size = fileIdx
		}
		l.pages[r] = append(l.pages[r], pfn)
	}
	m.DrainLocalPages(tk)
	z.watermark = saved
	z.WatermarkBoost = 0
	z.flags &^= ZONE_BOOSTED_WATERMARK | ZONE_BELOW_HIGH
	m.MustCheckInvariants()
	resetCounters(m)
	return l
}

// movedOrFreed returns the PFNs of pfns that no longer hold a page of
// owner o (the page was freed, reclaimed or migrated away).
func (m *Machine) movedOrFreed(pfns []PFN, o *Owner) []PFN {
	var out []PFN
	for _, pfn := range pfns {
		if m.pages[pfn].owner != o.ID {
			out = append(out, pfn)
		}
	}
	return out
}

// acFor builds the allocation context and the slow path's alloc_flags of a
// request, as __alloc_pages would on node nid.
func (m *Machine) acFor(gfp GFP, order Order, nid int) (allocContext, AllocFlags) {
	var ac allocContext
	m.prepareAllocPages(&ac, gfp, order, nid, 0)
	return ac, m.gfpToAllocFlags(gfp, order)
}

// compactOnce runs try_to_compact_pages for a request of gfp and order on
// node nid at priority prio, without a capturing allocator.
func (m *Machine) compactOnce(t *sim.Task, gfp GFP, order Order, nid int, prio CompactPriority) CompactResult {
	ac, flags := m.acFor(gfp, order, nid)
	capc := &captureControl{migratetype: ac.migratetype, order: order, page: NilPFN}
	return m.tryToCompactPages(t, gfp, order, flags, &ac, prio, capc)
}

// slowSteps returns the kinds of the steps the latest slow-path run
// recorded (stalled or not).
func (m *Machine) slowSteps() []stepKind {
	var out []stepKind
	for _, s := range m.slowTrace.cur.steps {
		out = append(out, s.kind)
	}
	return out
}

// allocSync is AllocPages repeated until the allocation is over, for a test
// that allocates inside one step and wants it run to completion there (no
// other task runs in between: the step never ends).
func (m *Machine) allocSync(t *sim.Task, gfp GFP, order Order, nid int, nm NodeMask) PFN {
	for {
		pfn := m.AllocPages(t, gfp, order, nid, nm)
		if !m.AllocPending(t) {
			return pfn
		}
	}
}
