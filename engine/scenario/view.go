package scenario

import (
	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/sim"
)

// View is what the page reads of a run, between calls to Advance: copies
// of the machine's state, never the machine. Every method returns plain
// data (numbers, strings, the mm view types filled into buffers the
// caller owns), which is also what a Web Worker boundary can carry: the
// page states of the viewport, the zone and node views, counters, trace
// lines and results.
type View interface {
	// The memory map (mapview.Source). PageStates fills dst with the
	// states of pages [start, start+len(dst)); BlockViews fills dst,
	// grown if needed, with every pageblock's summary.
	BlockViews(dst []mm.BlockView) []mm.BlockView
	ZoneViews() []mm.ZoneView
	NodeViews() []mm.NodeView
	PageStates(start mm.PFN, dst []mm.PageState) []mm.PageState
	MaxPFN() mm.PFN

	// VMStat reads a /proc/vmstat line of the current phase's machine
	// by name; Event sums a vmstat event over every machine the run has
	// used.
	VMStat(name string) (int64, bool)
	Event(e mm.VMEventItem) uint64
	// PSIAvg is /proc/pressure/memory's some (or full) avg10, avg60 and
	// avg300, in percent.
	PSIAvg(full bool) [3]float64

	// TraceWritten counts the tracepoint events recorded over the whole
	// run (numbered from 0 in order); TraceEvents appends to dst the
	// events numbered from or later that the current and the previous
	// phase's machines still hold, oldest first; TraceLines returns the
	// latest n in ftrace's text form. Their times are on the run's clock
	// (Now), not their machine's.
	TraceWritten() uint64
	TraceEvents(from uint64, dst []mm.TraceEvent) []mm.TraceEvent
	TraceLines(n int) []string
	// LastStall is the slow-path decision trace of the latest allocation
	// that stalled in direct reclaim or compaction, on any of the run's
	// machines, its start on the run's clock.
	LastStall() (string, bool)

	// Variant is the run's variant; Now its simulated time; Phase names
	// the current phase ("2/4: 34 GB"), PhaseStart is when its machine
	// booted, on the run's clock, and PhaseCount how many phases the run
	// has; Status says where it is, Done whether
	// the run has ended, and Results are the finished phases' results.
	Variant() string
	Now() sim.Time
	Phase() string
	PhaseStart() sim.Time
	PhaseCount() int
	Status() string
	Done() bool
	Results() []PhaseResult
}

// runView is a Run seen through View.
type runView struct{ r *Run }

func (v runView) m() *mm.Machine { return v.r.cur.M }

func (v runView) BlockViews(dst []mm.BlockView) []mm.BlockView { return v.m().BlockViews(dst) }
func (v runView) ZoneViews() []mm.ZoneView                     { return v.m().ZoneViews() }
func (v runView) NodeViews() []mm.NodeView                     { return v.m().NodeViews() }
func (v runView) MaxPFN() mm.PFN                               { return v.m().MaxPFN() }
func (v runView) PageStates(start mm.PFN, dst []mm.PageState) []mm.PageState {
	return v.m().PageStates(start, dst)
}

func (v runView) VMStat(name string) (int64, bool) { return v.m().VMStatValue(name) }
func (v runView) Event(e mm.VMEventItem) uint64    { return v.r.retired[e] + v.m().Event(e) }
func (v runView) PSIAvg(full bool) [3]float64      { return v.m().PSIAvg(full) }

func (v runView) TraceWritten() uint64 { return v.r.retiredTrace + v.m().Trace.Written }

func (v runView) TraceEvents(from uint64, dst []mm.TraceEvent) []mm.TraceEvent {
	r := v.r
	shift := func(start int, off sim.Time) {
		for i := start; i < len(dst); i++ {
			dst[i].Time += off
		}
	}
	if r.prevTrace != nil && from < r.retiredTrace {
		n := len(dst)
		dst = r.prevTrace.EventsFrom(max(from, r.prevFirst)-r.prevFirst, dst)
		shift(n, r.prevOffset)
	}
	n := len(dst)
	dst = v.m().Trace.EventsFrom(max(from, r.retiredTrace)-r.retiredTrace, dst)
	shift(n, r.offset)
	return dst
}

func (v runView) TraceLines(n int) []string {
	w := v.TraceWritten()
	ev := v.TraceEvents(w-min(w, uint64(n)), nil)
	out := make([]string, len(ev))
	for i := range ev {
		out[i] = ev[i].String()
	}
	return out
}

func (v runView) LastStall() (string, bool) {
	if st, ok := v.m().LastStallAt(v.r.offset); ok {
		return st, true
	}
	return v.r.retiredStall, v.r.retiredStall != ""
}

func (v runView) Variant() string        { return v.r.variant }
func (v runView) Now() sim.Time          { return v.r.Now() }
func (v runView) Phase() string          { return v.r.Phase() }
func (v runView) PhaseStart() sim.Time   { return v.r.offset }
func (v runView) PhaseCount() int        { return v.r.n }
func (v runView) Done() bool             { return v.r.done }
func (v runView) Status() string         { return v.r.Status() }
func (v runView) Results() []PhaseResult { return v.r.Results() }
