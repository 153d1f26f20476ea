package app

// scriptclock.go puts the Script mode's machine on the map: while the
// mode is open and a script has run, the map shows the machine the
// script is on, and the page's play, pause, step, speed and reset act
// on the script. The controller drives the script (ScriptRunner.Drive)
// as it advances the scenarios' runs: each tick moves the clock by speed
// x wall time and lets the script go on up to it, for the tick's budget
// of wall time, so a long script leaves the page answering input. The
// script's time is its machines' clocks one after the other (each of its
// machines starts at 0, as in its trace). The scenarios' runs stand still
// meanwhile, their clock kept aside, and take it back when the mode
// closes.

import (
	"time"

	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/sim"
)

// savedClock is the clock of the side the map does not show.
type savedClock struct {
	playing bool
	clock   float64
	target  sim.Time
	winSim  sim.Time
	actual  float64
}

// SetScript gives the controller the Script mode's runner, which it
// drives (r.Driven is set here).
func (c *Controller) SetScript(r *ScriptRunner) {
	r.Driven = true
	c.script = r
}

// ShowScript says whether the Script mode is open: the map then shows
// the script's machine once a script has run.
func (c *Controller) ShowScript(open bool) {
	c.scriptWant = open
	c.switchClock()
}

// ScriptOn reports whether the map shows the script's machine (and the
// clock is the script's).
func (c *Controller) ScriptOn() bool { return c.scriptOn }

// ScriptLive is the script's run as the map draws it; only the owner
// goroutine may read its machine, between ticks.
func (c *Controller) ScriptLive() LiveView {
	if c.script == nil {
		return LiveView{}
	}
	return c.script.Live()
}

// switchClock swaps the scenarios' clock and the script's when what the
// map shows changes.
func (c *Controller) switchClock() {
	on := c.scriptWant && c.script != nil && c.script.Live().Gen != 0
	if on == c.scriptOn {
		return
	}
	cur := savedClock{playing: c.playing, clock: c.clock, target: c.target, winSim: c.winSim, actual: c.actual}
	if !on {
		// Leaving the script: it stands still, paused.
		cur.playing = false
	}
	c.playing, c.clock, c.target, c.winSim, c.actual = c.saved.playing, c.saved.clock, c.saved.target, c.saved.winSim, c.saved.actual
	c.saved = cur
	c.scriptOn = on
	c.winWall = c.opt.Wall()
	c.version++
	c.gen++
}

// tickScript is Tick while the map shows the script.
func (c *Controller) tickScript(dt, budget time.Duration) int {
	if dt > MaxLag {
		dt = MaxLag
	}
	v := c.script.Live()
	if v.Gen != c.scriptGen {
		// A new run starts the clock at 0, playing.
		c.scriptGen = v.Gen
		c.clock, c.target = 0, 0
		c.playing = true
		c.winWall, c.winSim, c.actual = c.opt.Wall(), 0, 0
		c.version++
		c.gen++
	}
	if c.playing && v.Paced {
		lag := float64(c.target-v.Now) / c.st.Speed
		if lag < float64(MaxLag) {
			c.clock += c.st.Speed * float64(dt)
			t := sim.Time(c.clock)
			c.target = t - t%sim.Millisecond
		}
	}
	target := c.target
	if !v.Paced {
		target = noClock
	}
	if !v.Ended && (c.playing || !v.Paced || v.Now < target) {
		if c.script.Drive(target, budget) {
			c.version++
		}
	}
	if v = c.script.Live(); v.Ended {
		c.playing = false
		end := v.Now - v.Now%sim.Millisecond
		if end < v.Now {
			end += sim.Millisecond
		}
		if !v.Paced || c.target > end {
			c.target = end
			c.clock = float64(end)
		}
	}
	c.measure()
	return 0
}

// ScriptMachine is the machine the map shows for the script, with its
// time on the script's clock, the time it booted on that clock and how
// many machines the script has booted; nil before the script's first
// machine. Only the owner goroutine may read the machine, between ticks.
func (c *Controller) ScriptMachine() (m *mm.Machine, now, booted sim.Time, machines int) {
	v := c.ScriptLive()
	return v.M, v.Now, v.Offset, v.Machines
}

// noClock is the clock a run to the end is given: later than any time a
// script reaches.
const noClock = sim.Time(1 << 62)
