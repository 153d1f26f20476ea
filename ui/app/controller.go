// Package app is the browser app's controller: it owns the simulation
// runs, advances them in bounded slices, and turns their state into
// snapshots and permalinks. It is plain Go (no Ebiten, no syscall/js) so
// every decision the page makes can be tested natively.
//
// # Ownership
//
// One goroutine owns a Controller (in the page, the Ebiten game loop) and
// is the only one that calls its methods or reads the runs' machines. Other
// goroutines (the Vugu panel, JavaScript callbacks) talk to it through a
// Loop: they queue commands, which the owner applies at the start of its
// next tick, and they read immutable Snapshots the owner publishes. No lock
// is held while simulating or drawing.
//
// # Time
//
// The controller keeps a clock target in simulated nanoseconds. While
// playing, each tick moves the target by speed x wall time, rounded down
// to a whole millisecond, and the runs are advanced towards it in chunks
// of events until they reach it or the tick's wall-time budget is spent.
// Every run is advanced to the same target, so the variants stay in
// lockstep; when the budget is not enough the clock stops moving ahead
// (the page shows the speed actually achieved) instead of piling up debt.
// Paused and caught up, every run sits exactly at the target, a whole
// millisecond, which is what a permalink records and what reopening it
// runs to. Because a Run's outcome depends only on the times it reaches,
// not on the slicing, the reopened page shows the same machine.
package app

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/pagesim/pagesim/engine/scenario"
	"github.com/pagesim/pagesim/engine/sim"
)

// Options tune a Controller.
type Options struct {
	// Wall is a monotonic wall clock used only for work budgets and the
	// achieved-speed display; nil uses time.Since(start).
	Wall func() time.Duration
	// MaxChunk bounds the events per Advance call (default 65536).
	MaxChunk int
	// Link is the permalink (fragment) to open with; "" opens the
	// defaults. A refused link opens the defaults and sets Message, as
	// LoadFragment does, without booting the defaults first.
	Link string
	// Workers, if set, run the catch-up to a link's time off the main
	// thread (worker.go); nil: the main thread does it.
	Workers Workers
}

// Controller owns the runs of the selected scenario and variants.
type Controller struct {
	cat  *Catalog
	opt  Options
	st   State
	spec *scenario.Spec
	// runs holds one run per selected variant, in the scenario's order;
	// views their views.
	runs  []*scenario.Run
	views []scenario.View
	// record is set while the runs record their traces for the
	// downloads (traceexport.go).
	record bool

	playing bool
	// clock is the unrounded simulated time the clock asks for; target
	// is clock rounded down to a millisecond. Invariant: target <= clock
	// and target is a multiple of sim.Millisecond.
	clock  float64
	target sim.Time
	// goal is the time a permalink asked for while the runs catch up to
	// it (restoring); -1 otherwise.
	goal sim.Time

	message string // why the last permalink was refused ("" = none)
	// relink is set when the address bar holds a refused link
	// (takeRelink).
	relink bool
	// keepAddress is set when the address bar holds a link the page read
	// only in part: it stays as the user wrote it, so the typo can be
	// fixed there, until the state changes (takeKeepAddress).
	keepAddress bool
	runErr      string // why the runs could not start ("" = none)
	paramErr    map[string]string
	// badValues maps a parameter to the refused value a link gave it,
	// which the panel shows in its field until the parameter is set.
	badValues map[string]string
	// history counts the user's own changes of what runs (scenario,
	// variants, parameters, knobs, seed): each is a new entry of the
	// browser's history, which Back and Forward walk. Playing, speed,
	// reset and the view modes are not.
	history uint64
	// focus is the variant shown alone where the screen has room for
	// one (a phone): an index into the selected variants.
	focus int

	// version counts changes to anything drawn: events processed,
	// restarts. Views redraw when it moves.
	version uint64
	// gen counts restarts.
	gen uint64

	chunk int // events per Advance call, adapted to ~1 ms of work

	// speed measurement: wall time and simulated time at the start of
	// the current window.
	winWall time.Duration
	winSim  sim.Time
	actual  float64

	// traces hold the runs' tracepoint logs, samplers their time
	// series, one per run.
	traces   []traceRing
	samplers []sampler

	// script is the Script mode's runner (scriptclock.go); while
	// scriptOn, the map shows its machine and the clock (playing, clock,
	// target) is the script's, the scenarios' kept in saved.
	script     *ScriptRunner
	scriptWant bool // the Script mode is open
	scriptOn   bool
	scriptGen  uint64 // the run the script's clock is for
	saved      savedClock

	// mapRequests wait for the view's next frame (RequestMap).
	mapRequests []MapRequest

	// remote are the workers' jobs of the catch-up under way, one per
	// run in the runs' order (nil: none; the main thread advances the
	// runs). While there are some, the runs stay where they are until
	// every job is over, then all are replaced at once (lockstep).
	remote []remoteJob
	jobSeq uint64
	// reader is reading a job's run back (nil: none under way).
	reader *runReader
	// caughtUpBy says how the last catch-up to a link's time was done
	// ("workers", or "main thread" and why); "" before any.
	caughtUpBy string
	// readBack is ReadBack.
	readBack time.Duration
	// seekTook is SeekTook.
	seekTook time.Duration

	// tt keeps the runs' checkpoints (timetravel.go): nil when the page
	// has no way back, ttErr then saying why. marks are the runs'
	// marker readings, one grid per run.
	tt    Timelines
	ttErr string
	marks []markGrid
	// ends are the times the runs ended at, once they have (0 = not
	// yet): a run put back before its end still ends there.
	ends []sim.Time
}

// remoteJob is a worker's job for run i: where it is, and once over,
// the run it sent and its series and tracepoint log.
type remoteJob struct {
	id      uint64
	now     sim.Time
	over    bool
	run     *scenario.Run
	sampler sampler
	trace   traceRing
	marks   markGrid
	past    *scenario.Past
	// arrived is set when the job's reply has come, its payload (or
	// size and copyPayload: WorkerReply's) until it is read back.
	arrived     bool
	payload     []byte
	size        int
	copyPayload func(dst []byte, off int)
}

// NewController returns a controller showing the catalog's defaults.
func NewController(cat *Catalog, opt Options) *Controller {
	if opt.Wall == nil {
		start := time.Now()
		opt.Wall = func() time.Duration { return time.Since(start) }
	}
	if opt.MaxChunk <= 0 {
		opt.MaxChunk = 1 << 16
	}
	c := &Controller{cat: cat, opt: opt, goal: -1, chunk: min(256, opt.MaxChunk)}
	c.LoadFragment(opt.Link)
	return c
}

// apply switches to st and restarts the runs at time 0; a non-zero
// st.Time becomes the goal the runs catch up to.
func (c *Controller) apply(st State) {
	c.st = st
	c.spec, _ = c.cat.Lookup(st.Scenario)
	c.paramErr = map[string]string{}
	c.badValues = map[string]string{}
	c.restart()
	if st.Time > 0 {
		goal := st.Time
		if d := c.duration(); d > 0 && goal > d {
			goal = d
		}
		c.goal = goal
		c.setTarget(goal)
		c.startRemote()
	}
}

// restart boots fresh runs for the current state at time 0.
func (c *Controller) restart() {
	c.cancelRemote()
	c.gen++
	c.version++
	c.runs, c.views = nil, nil
	c.runErr = ""
	c.goal = -1
	c.clock, c.target = 0, 0
	c.st.Time = 0
	c.traces = nil
	c.samplers = nil
	c.tt, c.ttErr, c.marks, c.ends = nil, "", nil, nil
	c.winWall, c.winSim, c.actual = c.opt.Wall(), 0, 0
	st, err := c.spec.ParseMap(c.st.Params, c.st.Knobs)
	if err != nil {
		c.runErr = "the runs could not start: " + err.Error()
		c.playing = false
		return
	}
	for _, v := range c.st.Variants {
		r, err := c.newRun(v, st, PageMaxBytes/uint64(len(c.st.Variants)))
		if err != nil {
			c.runErr = fmt.Sprintf("variant %s could not start: %v", v, err)
			c.runs, c.views = nil, nil
			c.playing = false
			return
		}
		c.runs = append(c.runs, r)
		c.views = append(c.views, r.View())
	}
	c.traces = make([]traceRing, len(c.runs))
	c.samplers = make([]sampler, len(c.runs))
	refs := chartRefs(c.spec)
	for i := range c.samplers {
		c.samplers[i] = newSampler(refs)
		c.traces[i].fill(c.views[i])
	}
	c.startTimelines()
}

func copyParams(p map[string]string) map[string]string {
	out := make(map[string]string, len(p))
	for k, v := range p {
		out[k] = v
	}
	return out
}

// duration is when the last run ends, once every run's end is known; 0
// otherwise.
func (c *Controller) duration() sim.Time {
	if c.scriptOn {
		if v := c.script.Live(); v.Ended {
			return v.Now
		}
		return 0
	}
	var d sim.Time
	for i, r := range c.runs {
		rd := r.Duration()
		if rd == 0 && i < len(c.ends) {
			rd = c.ends[i]
		}
		if rd == 0 {
			return 0
		}
		d = max(d, rd)
	}
	return d
}

func (c *Controller) setTarget(t sim.Time) {
	if d := c.duration(); d > 0 && t > d {
		t = d
	}
	if t < 0 {
		t = 0
	}
	t -= t % sim.Millisecond
	c.target = t
	c.clock = float64(t)
}

// LoadFragment applies a permalink. A link read only in part keeps what
// could be read, marks each refused parameter (ParamErrors, BadValues)
// and says what was refused (Message); a link naming no scenario the page
// has opens the defaults and says why. Either way the address bar keeps
// the link as it was written, until the state changes. A link whose
// machines would cost more than PageMaxBytes to simulate is refused with
// a message before anything boots: the page keeps what it showed (the
// defaults if it showed nothing yet), and the address bar gets that
// state's link back. The previous message is cleared otherwise.
func (c *Controller) LoadFragment(frag string) {
	st, err := c.cat.Decode(frag)
	c.message = ""
	le, _ := err.(*LinkError)
	kept := le != nil && le.Kept
	switch {
	case err != nil && !kept:
		c.message = "This link could not be read: " + err.Error() + ". Showing the defaults instead."
	case kept:
		c.message = "Part of this link could not be used: " + err.Error() +
			". The page kept the rest of it; fix the value in the panel, or in the address bar, which keeps the link as written."
	}
	if err == nil || kept {
		if berr := c.checkBudget(st); berr != nil {
			c.message = "This link asks for more than a browser tab can simulate: " + berr.Error() +
				" (" + c.commandOf(st) + " simulates it natively)."
			c.relink = true
			if c.spec != nil {
				c.message += " The page keeps what it showed."
				return
			}
			c.message += " Showing the defaults instead."
			st, kept = c.cat.Opening(""), false
		}
	}
	c.keepAddress = err != nil && !c.relink
	c.playing = false
	if err == nil && c.sameButTime(st) && c.Seek(st.Time) == nil {
		// Only the link's t moved: the timeline goes there, the runs
		// are not booted again.
		return
	}
	c.apply(st)
	if kept {
		for k, v := range le.Params {
			c.paramErr[k] = v
		}
		for k, v := range le.Values {
			c.badValues[k] = v
		}
	}
}

// PageMaxBytes is the page's memory budget: what the variants shown side
// by side may cost to simulate together (mm.MachineBytes of each variant's
// machine, times the variants). A 64-bit Chrome tab gives a wasm32 module
// at most 4 GiB of linear memory, which never shrinks; the Go collector
// lets the heap reach about twice the live bytes (a scenario that boots
// a machine per guest size briefly holds the old and the new one), and
// the page's own state (views, rasters, traces) comes on top. 1 GiB of
// machines therefore peaks near 2 GiB, half of the ceiling. Natively, 3
// variants of thp-thisnode at scale 0.25 (269 MiB of MachineBytes) reach a
// peak HeapSys of 236 MiB, at scale 1 (1.0 GiB) 1016 MiB
// (docs/RELIABILITY.md). The seed's full size (scale=1, 342 MiB a machine)
// fits with two variants side by side.
const PageMaxBytes = 1 << 30

// checkBudget returns an *mm.BudgetError when st's variants side by side
// would cost more than PageMaxBytes, and nil when they fit or when st
// cannot be parsed (restart reports that).
func (c *Controller) checkBudget(st State) error {
	s, ok := c.cat.Lookup(st.Scenario)
	if !ok {
		return nil
	}
	set, err := s.ParseMap(st.Params, st.Knobs)
	if err != nil {
		return nil
	}
	return s.CheckBudget(set.Values, len(st.Variants), PageMaxBytes)
}

// takeKeepAddress reports, once, that the address bar holds a link the
// page read only in part, which the next published link must not replace
// unless the state changes.
func (c *Controller) takeKeepAddress() bool {
	k := c.keepAddress
	c.keepAddress = false
	return k
}

// takeRelink reports, once, that the address bar holds a link the page
// refused, which the next published link must replace even if the state
// did not change.
func (c *Controller) takeRelink() bool {
	r := c.relink
	c.relink = false
	return r
}

// Fragment is the permalink of the current state (without '#').
func (c *Controller) Fragment() string {
	st := c.st
	st.Time = c.target
	return c.cat.Encode(st)
}

// linkWith is the permalink of the current state in embed mode (embed) or
// as the full page: an embed is never in presentation mode.
func (c *Controller) linkWith(embed bool) string {
	st := c.st
	st.Time = c.target
	st.Embed = embed
	if embed {
		st.Present = false
	}
	return c.cat.Encode(st)
}

// State returns the current state, with Time the clock target.
func (c *Controller) State() State {
	st := c.st
	st.Params = copyParams(st.Params)
	st.Variants = append([]string(nil), st.Variants...)
	st.Knobs = slices.Clone(st.Knobs)
	st.Time = c.target
	return st
}

// Catalog returns the catalog.
func (c *Controller) Catalog() *Catalog { return c.cat }

// Spec returns the current scenario.
func (c *Controller) Spec() *scenario.Spec { return c.spec }

// Runs returns the runs, one per selected variant, in the scenario's order.
// Only the owner goroutine may use them.
func (c *Controller) Runs() []*scenario.Run { return c.runs }

// Views returns the runs' read-only views, in the order of Runs: what
// drawing reads. Only the owner goroutine may read them, between ticks.
func (c *Controller) Views() []scenario.View { return c.views }

// Samples returns run i's time series so far (see series.go). The slice
// is the controller's: only the owner goroutine may read it, and only
// until the next Tick.
func (c *Controller) Samples(i int) []Sample { return c.samplers[i].samples }

// Version moves whenever anything a view draws may have changed.
func (c *Controller) Version() uint64 { return c.version }

// Generation moves whenever the runs are restarted.
func (c *Controller) Generation() uint64 { return c.gen }

// Message is the permalink error to show ("" = none).
func (c *Controller) Message() string { return c.message }

// DismissMessage clears Message.
func (c *Controller) DismissMessage() { c.message = "" }

// RunError says why the runs could not start ("" = they did).
func (c *Controller) RunError() string { return c.runErr }

// ParamErrors maps parameter names to the last refused value's error.
func (c *Controller) ParamErrors() map[string]string { return c.paramErr }

// BadValues maps parameter names to the refused value a link gave them.
func (c *Controller) BadValues() map[string]string { return c.badValues }

// History counts the user's changes of what runs; each is a history
// entry of its own (see the field).
func (c *Controller) History() uint64 { return c.history }

// Now is the simulated time every run still going has reached (the
// lockstep time); once all are finished, the time of the last to finish.
func (c *Controller) Now() sim.Time {
	if c.scriptOn {
		return c.script.Live().Now
	}
	if len(c.runs) == 0 {
		return c.target
	}
	now := sim.Time(math.MaxInt64)
	var last sim.Time
	for _, r := range c.runs {
		last = max(last, r.Now())
		if !r.Done() {
			now = min(now, r.Now())
		}
	}
	if now == math.MaxInt64 {
		return last
	}
	return now
}

// Shown is the time the page shows: the clock (what a link carries) once
// the runs have reached it, else where the runs are.
func (c *Controller) Shown() sim.Time {
	if c.CaughtUp() && !c.playing {
		return c.target
	}
	return c.Now()
}

// CaughtUp reports whether the runs have reached the clock (or their
// ends): what a paused page shows is then final.
func (c *Controller) CaughtUp() bool { return c.Now() >= c.target || c.Ended() }

// Target is the simulated time the clock asks for.
func (c *Controller) Target() sim.Time { return c.target }

// Playing reports whether the clock runs.
func (c *Controller) Playing() bool { return c.playing }

// Restoring reports whether the runs are still catching up to a
// permalink's time; Progress says how far (0..1).
func (c *Controller) Restoring() bool { return c.goal >= 0 }

// Progress is the fraction of the catch-up done.
func (c *Controller) Progress() float64 {
	if c.goal <= 0 {
		return 1
	}
	if c.remote != nil {
		now := c.goal
		for _, j := range c.remote {
			if !j.over {
				now = min(now, j.now)
			}
		}
		return min(float64(now)/float64(c.goal), 1)
	}
	return min(float64(c.Now())/float64(c.goal), 1)
}

// Ended reports whether every run is finished.
func (c *Controller) Ended() bool {
	if c.scriptOn {
		return c.script.Live().Ended
	}
	return c.runsEnded()
}

// runsEnded reports whether every scenario run is finished.
func (c *Controller) runsEnded() bool {
	for _, r := range c.runs {
		if !r.Done() {
			return false
		}
	}
	return len(c.runs) > 0
}

// ActualSpeed is the simulated seconds per wall second achieved recently.
func (c *Controller) ActualSpeed() float64 { return c.actual }

// Play starts the clock (a finished run does not restart).
func (c *Controller) Play() {
	if c.scriptOn {
		c.playing = !c.Ended()
		return
	}
	if len(c.runs) > 0 && !c.Ended() {
		c.playing = true
	}
}

// Pause stops the clock at the first whole millisecond every run can
// reach: runs never go back, so that is at or after the run that is
// furthest ahead.
func (c *Controller) Pause() {
	if !c.playing {
		return
	}
	c.playing = false
	var ahead sim.Time
	for _, r := range c.runs {
		ahead = max(ahead, r.Now())
	}
	if c.scriptOn {
		ahead = c.Now()
	}
	t := ahead - ahead%sim.Millisecond
	if t < ahead {
		t += sim.Millisecond
	}
	if t < c.target {
		c.setTarget(t)
	}
}

// TogglePlay plays or pauses.
func (c *Controller) TogglePlay() {
	if c.playing {
		c.Pause()
	} else {
		c.Play()
	}
}

// StepSize is how far Step moves the clock: one 60 Hz frame at the current
// speed, at least a millisecond.
func (c *Controller) StepSize() sim.Time {
	d := sim.Time(c.st.Speed * float64(sim.Second) / 60)
	d -= d % sim.Millisecond
	return max(d, sim.Millisecond)
}

// Step pauses and moves the clock one StepSize ahead of where the runs are.
func (c *Controller) Step() {
	c.playing = false
	base := max(c.target, c.Now())
	c.setTarget(base + c.StepSize())
}

// SetSpeed sets the speed to one of Speeds.
func (c *Controller) SetSpeed(x float64) error {
	for _, v := range Speeds {
		if v == x {
			c.st.Speed = x
			return nil
		}
	}
	return fmt.Errorf("speed %v is not one of %s", x, speedList())
}

// SetSeed restarts the runs with a new seed.
func (c *Controller) SetSeed(seed uint64) {
	if seed != c.st.Seed {
		c.history++
	}
	c.st.Seed = seed
	c.restart()
}

// Reset restarts the runs at time 0 with the current settings.
func (c *Controller) Reset() {
	c.playing = false
	if c.scriptOn {
		c.script.Rerun()
		return
	}
	c.restart()
}

// SelectScenario switches scenario, with its defaults.
func (c *Controller) SelectScenario(name string) error {
	if _, ok := c.cat.Lookup(name); !ok {
		return fmt.Errorf("unknown scenario %q", name)
	}
	if name == c.st.Scenario {
		return nil
	}
	st := c.cat.Opening(name)
	st.Seed, st.Speed = c.st.Seed, c.st.Speed
	st.Present, st.Embed, st.TextSize = c.st.Present, c.st.Embed, c.st.TextSize
	c.playing = false
	c.history++
	c.apply(st)
	return nil
}

// SetVariant selects or deselects a variant and restarts the runs. The
// last selected variant cannot be deselected.
func (c *Controller) SetVariant(name string, on bool) error {
	if !c.spec.HasVariant(name) {
		return fmt.Errorf("scenario %s has no variant %q", c.spec.ID, name)
	}
	sel := map[string]bool{}
	for _, v := range c.st.Variants {
		sel[v] = true
	}
	if sel[name] == on {
		return nil
	}
	sel[name] = on
	var out []string
	for _, v := range c.spec.Variants {
		if sel[v.Name] {
			out = append(out, v.Name)
		}
	}
	if len(out) == 0 {
		return fmt.Errorf("at least one variant must stay selected")
	}
	next := c.st
	next.Variants = out
	if err := c.checkBudget(next); err != nil {
		return fmt.Errorf("%s more side by side is over the page's memory: %w", name, err)
	}
	c.st.Variants = out
	c.history++
	c.restart()
	return nil
}

// SetParam sets a parameter and restarts the runs; a value that fails the
// parameter's check is refused and recorded in ParamErrors.
func (c *Controller) SetParam(name, value string) error {
	p, ok := c.spec.Param(name)
	if !ok {
		return fmt.Errorf("scenario %s has no parameter %q", c.spec.ID, name)
	}
	if _, err := p.Check(value); err != nil {
		c.paramErr[name] = err.Error()
		return err
	}
	if c.st.Params[name] == value {
		delete(c.paramErr, name)
		delete(c.badValues, name)
		return nil
	}
	// Each value may be in range and the combination still too large
	// for the tab (nodes=8 with node_gb=64 at scale=1).
	next := c.st
	next.Params = copyParams(c.st.Params)
	next.Params[name] = value
	if err := c.checkBudget(next); err != nil {
		c.paramErr[name] = err.Error()
		return err
	}
	delete(c.paramErr, name)
	delete(c.badValues, name)
	c.st.Params[name] = value
	c.history++
	c.restart()
	return nil
}

// SetKnobs replaces the kernel knobs and restarts the runs. Each knob
// is checked as `pagesim run --set` checks it; on the first refusal
// nothing changes.
func (c *Controller) SetKnobs(knobs []scenario.Knob) error {
	var out []scenario.Knob
	seen := map[string]bool{}
	for _, k := range knobs {
		ck, err := checkKnob(c.spec, k.Name, k.Value)
		if err != nil {
			return err
		}
		if seen[ck.Name] {
			return fmt.Errorf("%s is given twice", ck.Name)
		}
		seen[ck.Name] = true
		out = append(out, ck)
	}
	if slices.Equal(out, c.st.Knobs) {
		return nil
	}
	c.st.Knobs = out
	c.history++
	c.restart()
	return nil
}

// SetPresent turns presentation mode on or off (a view mode: the runs go
// on as they were).
func (c *Controller) SetPresent(on bool) {
	if c.st.Present != on {
		c.st.Present = on
		c.version++
	}
}

// SetFocus picks the variant shown alone on a narrow screen (an index
// into the selected variants; out of range picks the first).
func (c *Controller) SetFocus(i int) {
	if i < 0 || i >= len(c.st.Variants) {
		i = 0
	}
	if i != c.focus {
		c.focus = i
		c.version++
	}
}

// Focus is the variant shown alone on a narrow screen.
func (c *Controller) Focus() int {
	if c.focus >= len(c.runs) {
		return 0
	}
	return c.focus
}

// SetTextSize sets the map text's size setting, 1 to MaxTextSize.
func (c *Controller) SetTextSize(n int) error {
	if n < 1 || n > MaxTextSize {
		return fmt.Errorf("text size %d is not one of 1 to %d", n, MaxTextSize)
	}
	if max(c.st.TextSize, 1) != n {
		c.st.TextSize = n
		c.version++
	}
	return nil
}

// MaxLag bounds how far the clock may run ahead of the runs while
// playing, in wall time at the current speed.
const MaxLag = 250 * time.Millisecond

// Tick moves the clock by dt of wall time (if playing) and advances the
// runs towards it for at most budget of wall time. It returns the number
// of events processed.
func (c *Controller) Tick(dt, budget time.Duration) int {
	c.switchClock()
	if c.scriptOn {
		return c.tickScript(dt, budget)
	}
	if len(c.runs) == 0 {
		return 0
	}
	if dt > MaxLag {
		dt = MaxLag
	}
	if c.playing && c.goal < 0 {
		lag := float64(c.target-c.Now()) / c.st.Speed
		if lag < float64(MaxLag) {
			c.clock += c.st.Speed * float64(dt)
			t := sim.Time(c.clock)
			t -= t % sim.Millisecond
			if d := c.duration(); d > 0 && t >= d {
				t = d
				c.clock = float64(d)
			}
			c.target = t
		}
	}
	n := c.advance(budget)
	if c.goal >= 0 && (c.Now() >= c.goal || c.Ended()) {
		c.goal = -1
	}
	if c.Ended() {
		c.playing = false
		// The clock stops at the end (to the next millisecond), so the
		// permalink carries the time the runs ended.
		if end := c.Now(); c.target > end {
			t := end - end%sim.Millisecond
			if t < end {
				t += sim.Millisecond
			}
			c.target = min(c.target, t)
			c.clock = float64(c.target)
		}
	}
	c.measure()
	return n
}

// advance runs every run towards the target until all are there or the
// budget is spent.
func (c *Controller) advance(budget time.Duration) int {
	if c.remote != nil {
		c.pollRemote(budget)
		if c.remote != nil {
			return 0
		}
	}
	deadline := c.opt.Wall() + budget
	total := 0
	for {
		behind, moved := false, false
		start := c.opt.Wall()
		n := 0
		for i, r := range c.runs {
			sp := &c.samplers[i]
			sp.observe(r)
			until := c.target
			if d := r.Duration(); d > 0 && until > d {
				until = d
			}
			until = c.marks[i].stopAt(r.Now(), sp.stopAt(until))
			if before := r.Now(); before < until && !r.Done() {
				behind = true
				n += c.advanceRun(i, until, c.chunk)
				moved = moved || r.Now() != before || r.Done()
				c.traces[i].fill(c.views[i])
			}
			sp.observe(r)
			c.marks[i].observe(r)
			if r.Done() {
				c.ends[i] = r.Now()
			}
		}
		if !behind || (n == 0 && !moved) {
			break // there, or a run that cannot move (a bug in it)
		}
		total += n
		c.version++
		now := c.opt.Wall()
		// Aim for chunks of about a millisecond of work.
		if el := now - start; el > 0 && n > 0 {
			want := int(float64(c.chunk) * float64(time.Millisecond) / float64(el))
			c.chunk = min(max(want, 16), c.opt.MaxChunk, c.chunk*2)
		}
		if now >= deadline {
			break
		}
	}
	return total
}

func (c *Controller) measure() {
	w := c.opt.Wall()
	if el := w - c.winWall; el >= 500*time.Millisecond {
		now := c.Now()
		c.actual = float64(now-c.winSim) / float64(sim.Second) / el.Seconds()
		c.winWall, c.winSim = w, now
	}
}
