package app

// timetravel.go is the page's way back in time: the timeline under the
// maps, which spans the run, marks what happened in each variant, and
// takes the page to any time it has reached.
//
// # Going back
//
// Each variant's run is kept by a scenario.Timeline, which takes packed
// checkpoints as the run goes (engine/scenario/timeline.go). Seek(t)
// restores, for every variant, the latest checkpoint at or before t and
// replays it to t: the run there is byte for byte the run that went to t
// directly, so the page shows what a fresh page opened at t shows (the
// table, the status line, the charts; see Seek for what differs). The
// variants stay in lockstep: all are put at the same t. Forward, a Seek
// within the time reached also jumps from a checkpoint when that is
// ahead of where the runs stand; past it, the runs go there as they go
// anywhere (advance).
//
// Timelines is the controller's interface to whoever keeps the runs and
// their checkpoints: today localTimelines, on the page's thread; an
// engine in a Web Worker can serve the same three calls.
//
// # Markers
//
// The controller reads each run's counters at every multiple of
// MarkEvery of simulated time (it stops the runs there, as the charts'
// sampler does) and at the run's end, and keeps the points; a marker is a
// point where a counter moved since the one before: allocation stalls
// (allocstall_*), kswapd runs (pageoutrun), kcompactd wakes
// (compact_daemon_wake), direct compaction runs (compact_stall), OOM
// (oom_kill, and the requests that reached __alloc_pages_may_oom),
// give-ups (failed allocations and defrag_mode dropping
// ALLOC_NOFRAGMENT), and phase ends (at the next phase's boot, exactly).
// The points depend only on the times reached, so the markers are the
// same however the page got there. The points are kept up to the furthest
// time reached: gone back, the page still marks what comes later.
//
// # Script mode
//
// A script runs forward only: its runner keeps no checkpoints. In the
// Script mode the timeline is hidden, and Seek, StepBack and NextStall
// do nothing but say so.

import (
	"errors"
	"fmt"
	"time"

	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/scenario"
	"github.com/pagesim/pagesim/engine/sim"
)

// Timelines keeps the variants' runs and their pasts.
type Timelines interface {
	// Advance moves run i forward to until, by at most maxEvents
	// events (scenario.Run.Advance), and returns the events run.
	Advance(i int, until sim.Time, maxEvents int) (int, error)
	// Run is run i as it stands (a Seek replaces it).
	Run(i int) *scenario.Run
	// Seek puts every run at time t, at most Frontier, or leaves a run
	// whose t is ahead of it and no checkpoint is nearer than it is
	// (advancing it gets there). It reports whether any run changed.
	Seek(t sim.Time) (bool, error)
	// Frontier is the furthest time run i has reached (its end, once
	// it has ended).
	Frontier(i int) sim.Time
	// Checkpoints are the times of run i's checkpoints.
	Checkpoints(i int) []sim.Time
	// Adopt makes r run i: the same run, advanced elsewhere to a later
	// time (the engine workers' catch-up to a link's time), with the
	// checkpoints taken there on the way (past; nil if none).
	Adopt(i int, r *scenario.Run, past *scenario.Past) error
}

// localTimelines keeps every run's scenario.Timeline on the caller's
// thread.
type localTimelines struct {
	tls []*scenario.Timeline
}

func newLocalTimelines(runs []*scenario.Run) (*localTimelines, error) {
	lt := &localTimelines{}
	for _, r := range runs {
		// The start's checkpoint is written when the run first moves
		// or is adopted: the engine workers' catch-up to a link's
		// time sends its own.
		tl, err := scenario.NewTimeline(r, scenario.TimelineOptions{LateStart: true})
		if err != nil {
			return nil, err
		}
		lt.tls = append(lt.tls, tl)
	}
	return lt, nil
}

func (lt *localTimelines) Advance(i int, until sim.Time, maxEvents int) (int, error) {
	return lt.tls[i].Advance(until, maxEvents)
}

func (lt *localTimelines) Run(i int) *scenario.Run { return lt.tls[i].Run() }

func (lt *localTimelines) Frontier(i int) sim.Time { return lt.tls[i].Frontier() }

func (lt *localTimelines) Checkpoints(i int) []sim.Time { return lt.tls[i].Checkpoints() }

func (lt *localTimelines) Adopt(i int, r *scenario.Run, past *scenario.Past) error {
	if past == nil {
		return lt.tls[i].Adopt(r)
	}
	return lt.tls[i].AdoptPast(r, *past)
}

func (lt *localTimelines) Seek(t sim.Time) (bool, error) {
	changed := false
	for _, tl := range lt.tls {
		r, at := tl.Run(), min(t, tl.Frontier())
		switch {
		case at < r.Now():
		case at > r.Now() && latestBefore(tl.Checkpoints(), at) > r.Now():
		default:
			continue
		}
		if err := tl.Seek(at); err != nil {
			return changed, err
		}
		changed = true
	}
	return changed, nil
}

// latestBefore returns the latest of the sorted times at or before t.
func latestBefore(ts []sim.Time, t sim.Time) sim.Time {
	out := sim.Time(-1)
	for _, x := range ts {
		if x > t {
			break
		}
		out = x
	}
	return out
}

// MarkEvery is the interval of simulated time at which the controller
// reads the counters the markers come from.
const MarkEvery = 20 * sim.Millisecond

// MarkKind is what a marker marks.
type MarkKind int

const (
	// MarkStall is allocation stalls (allocstall_*).
	MarkStall MarkKind = iota
	// MarkKswapd is kswapd runs (pageoutrun).
	MarkKswapd
	// MarkKcompactd is kcompactd wakes (compact_daemon_wake).
	MarkKcompactd
	// MarkCompaction is direct compaction runs (compact_stall).
	MarkCompaction
	// MarkOOM is oom_kill and the requests that reached
	// __alloc_pages_may_oom.
	MarkOOM
	// MarkGiveUp is failed allocations and defrag_mode's give-ups.
	MarkGiveUp
	// MarkPhase is a phase's end.
	MarkPhase
	nrMarkKinds
)

// MarkNames name the kinds as the timeline's legend and tooltips do.
var MarkNames = [nrMarkKinds]string{
	MarkStall: "allocation stall", MarkKswapd: "kswapd run (pageoutrun)", MarkKcompactd: "kcompactd wake",
	MarkCompaction: "direct compaction (compact_stall)", MarkOOM: "OOM", MarkGiveUp: "give-up", MarkPhase: "phase end",
}

// Marker is one marker of the timeline: in variant Variant (an index
// into the selected variants), N events of Kind in the interval that ends
// at T (a phase end: exactly at T, Label naming the phase).
type Marker struct {
	Variant int
	Kind    MarkKind
	T       sim.Time
	N       uint64
	Label   string
}

// markPoint is one reading of a run's counters.
type markPoint struct {
	t sim.Time
	n [nrMarkKinds - 1]uint64
	// phaseStart and phase are the current phase's boot time and name.
	phaseStart sim.Time
	phase      string
}

// markGrid is one run's readings, at increasing times.
type markGrid struct {
	points []markPoint
}

// stopAt returns the time a run at now may advance to before its next
// reading.
func (g *markGrid) stopAt(now, until sim.Time) sim.Time {
	return min(until, (now/MarkEvery+1)*MarkEvery)
}

// observe reads the run's counters if it stands on a reading's time (or
// at its end) not read yet.
func (g *markGrid) observe(r *scenario.Run) {
	now := r.Now()
	if now%MarkEvery != 0 && !r.Done() {
		return
	}
	if n := len(g.points); n > 0 && g.points[n-1].t >= now {
		return
	}
	v := r.View()
	p := markPoint{t: now, phaseStart: v.PhaseStart(), phase: v.Phase()}
	p.n[MarkStall] = v.Event(mm.ALLOCSTALL_DMA) + v.Event(mm.ALLOCSTALL_DMA32) + v.Event(mm.ALLOCSTALL_NORMAL) +
		v.Event(mm.ALLOCSTALL_MOVABLE) + v.Event(mm.ALLOCSTALL_DEVICE)
	p.n[MarkKswapd] = v.Event(mm.PAGEOUTRUN)
	p.n[MarkKcompactd] = v.Event(mm.KCOMPACTD_WAKE)
	p.n[MarkCompaction] = v.Event(mm.COMPACTSTALL)
	slow := r.Machine().Slow
	p.n[MarkOOM] = v.Event(mm.OOM_KILL) + slow.WouldOOM
	p.n[MarkGiveUp] = slow.Failed + slow.NofragGiveUps
	g.points = append(g.points, p)
}

// markers appends the grid's markers for variant i to out.
func (g *markGrid) markers(i int, out []Marker) []Marker {
	for j := 1; j < len(g.points); j++ {
		a, b := &g.points[j-1], &g.points[j]
		newPhase := b.phaseStart != a.phaseStart
		if newPhase {
			out = append(out, Marker{Variant: i, Kind: MarkPhase, T: b.phaseStart, N: 1, Label: a.phase})
		}
		for k, n := range b.n {
			d := n - a.n[k]
			// The slow path's counts are the machine's own: a new
			// phase's machine counts from zero.
			if newPhase && (k == int(MarkOOM) || k == int(MarkGiveUp)) || n < a.n[k] {
				d = n
			}
			if d > 0 {
				out = append(out, Marker{Variant: i, Kind: MarkKind(k), T: b.t, N: d})
			}
		}
	}
	return out
}

// errScriptTimeline refuses the timeline in the Script mode.
var errScriptTimeline = errors.New("the timeline is for scenarios: a script runs forward only")

// TimelineOff says why the page has no way back ("" = it has one).
func (c *Controller) TimelineOff() string {
	switch {
	case c.scriptOn:
		return errScriptTimeline.Error()
	case c.ttErr != "":
		return c.ttErr
	}
	return ""
}

// Markers returns every variant's markers up to the furthest time
// reached, in time order within each variant.
func (c *Controller) Markers() []Marker {
	if c.scriptOn {
		return nil
	}
	var out []Marker
	for i := range c.marks {
		out = c.marks[i].markers(i, out)
	}
	return out
}

// Span is the time the timeline spans: the run's duration once it is
// known, else the furthest time reached (or the clock, if further).
func (c *Controller) Span() sim.Time {
	if d := c.duration(); d > 0 {
		return d
	}
	return max(c.reached(), c.target)
}

// Reached is the furthest time every run has reached: the least of the
// runs whose end is not known yet, or the last end.
func (c *Controller) Reached() sim.Time { return c.reached() }

func (c *Controller) reached() sim.Time {
	if c.tt == nil {
		return c.Now()
	}
	f, last := sim.Time(-1), sim.Time(0)
	for i := range c.runs {
		if e := c.ends[i]; e > 0 {
			last = max(last, e)
			continue
		}
		if fi := c.tt.Frontier(i); f < 0 || fi < f {
			f = fi
		}
	}
	if f < 0 {
		return last
	}
	return max(f, c.Now())
}

// Seek takes the page to time t (rounded down to a millisecond, within
// the run): back or forward within the time reached, every variant is
// restored from its checkpoint before t and replayed to t; past it, the
// runs advance there. Playing or paused stays as it was. The charts'
// series are rebuilt to t from their points, as a fresh page opened at t
// has them; the tracepoint log holds what the machine's own ring (the
// latest 4096 events) holds at t, where a page that played there may
// have read more.
func (c *Controller) Seek(t sim.Time) error {
	if c.scriptOn {
		return errScriptTimeline
	}
	if len(c.runs) == 0 {
		return errors.New("no runs")
	}
	if c.tt == nil {
		return errors.New(c.ttErr)
	}
	if d := c.duration(); d > 0 && t > d {
		t = d
	}
	t = max(t, 0)
	t -= t % sim.Millisecond
	start := c.opt.Wall()
	changed, err := c.tt.Seek(t)
	c.seekTook = c.opt.Wall() - start
	if err != nil {
		c.ttErr = "the timeline failed: " + err.Error()
		c.tt = nil
		return err
	}
	c.setTarget(t)
	c.clock = float64(c.target)
	// Past the time reached, the runs catch up as to a link's t.
	c.goal = -1
	if c.Now() < c.target && !c.Ended() {
		c.goal = c.target
	}
	if changed {
		refs := chartRefs(c.spec)
		for i := range c.runs {
			r := c.tt.Run(i)
			if r == c.runs[i] {
				continue
			}
			c.runs[i], c.views[i] = r, r.View()
			c.samplers[i] = c.samplers[i].rebuild(refs, r)
			c.traces[i] = traceRing{}
			c.traces[i].fill(c.views[i])
		}
	}
	c.version++
	c.winWall, c.winSim = c.opt.Wall(), c.Now()
	return nil
}

// Checkpoints are the times of run i's checkpoints (none without the way
// back).
func (c *Controller) Checkpoints(i int) []sim.Time {
	if c.tt == nil || i < 0 || i >= len(c.runs) {
		return nil
	}
	return c.tt.Checkpoints(i)
}

// SeekTook is how long the last Seek took to restore the runs'
// checkpoints and replay them to its time, on the main thread (the
// frame that follows draws it).
func (c *Controller) SeekTook() time.Duration { return c.seekTook }

// StepBack pauses and moves the clock one StepSize back from where the
// page stands (as Step moves it forward), to time 0 at the least.
func (c *Controller) StepBack() error {
	if c.scriptOn {
		return errScriptTimeline
	}
	c.Pause()
	c.playing = false
	return c.Seek(max(c.Shown()-c.StepSize(), 0))
}

// NextStall takes the page to the next allocation stall's marker after
// the time it shows (dir > 0), or the previous one before it (dir < 0),
// in any variant, paused. It reports false when there is none that way.
func (c *Controller) NextStall(dir int) (bool, error) {
	if c.scriptOn {
		return false, errScriptTimeline
	}
	now := c.Shown()
	best := sim.Time(-1)
	for _, m := range c.Markers() {
		if m.Kind != MarkStall {
			continue
		}
		if dir > 0 && m.T > now && (best < 0 || m.T < best) || dir < 0 && m.T < now && m.T > best {
			best = m.T
		}
	}
	if best < 0 {
		return false, nil
	}
	c.Pause()
	c.playing = false
	return true, c.Seek(best)
}

// startTimelines starts the runs' timelines and marker grids (restart).
func (c *Controller) startTimelines() {
	c.tt, c.ttErr = nil, ""
	c.marks = make([]markGrid, len(c.runs))
	c.ends = make([]sim.Time, len(c.runs))
	for i, r := range c.runs {
		c.marks[i].observe(r)
	}
	if c.record {
		c.ttErr = "the way back is off while the runs record their traces (a recorded run cannot be checkpointed)"
		return
	}
	tt, err := newLocalTimelines(c.runs)
	if err != nil {
		c.ttErr = fmt.Sprintf("the timeline could not start: %v", err)
		return
	}
	c.tt = tt
}

// advanceRun moves run i towards until by at most maxEvents events,
// through its timeline when there is one.
func (c *Controller) advanceRun(i int, until sim.Time, maxEvents int) int {
	if c.tt == nil {
		return c.runs[i].Advance(until, maxEvents)
	}
	n, err := c.tt.Advance(i, until, maxEvents)
	if err != nil {
		// The way back stops; the run goes on.
		c.ttErr = "the timeline stopped: " + err.Error()
		c.tt = nil
	}
	return n
}

// sameButTime reports whether st is the state the page shows but for its
// time (a link whose t alone was edited).
func (c *Controller) sameButTime(st State) bool {
	if c.spec == nil || c.scriptOn || c.tt == nil || len(c.runs) == 0 {
		return false
	}
	a, b := st, c.st
	a.Time, b.Time = 0, 0
	return c.cat.Encode(a) == c.cat.Encode(b)
}

// adoptRuns gives the timelines the runs the engine workers caught up
// (worker.go) and the checkpoints they took on the way (pasts[i], nil if
// none): the way back from there restores the nearest of them.
func (c *Controller) adoptRuns(pasts []*scenario.Past) {
	if c.tt == nil {
		return
	}
	for i, r := range c.runs {
		if err := c.tt.Adopt(i, r, pasts[i]); err != nil {
			c.ttErr = "the timeline stopped: " + err.Error()
			c.tt = nil
			return
		}
	}
}
