package app

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pagesim/pagesim/engine/script"
	"github.com/pagesim/pagesim/engine/sim"
)

// clockScript boots two machines and runs 300 ms on the second.
const clockScript = "machine mem=32M layout=simple\nrun 50ms\n" +
	"machine mem=64M layout=simple cpus=2\nregion r size=8M\ntask f fault region=r cpu=1\nrun until=f-done\nrun 300ms\nprint vmstat nr_free_pages\n"

func TestAScriptOnTheMapRunsUnderThePagesClock(t *testing.T) {
	var want bytes.Buffer
	require.NoError(t, script.Run(ScriptName, strings.NewReader(clockScript), &want, script.Options{}))
	c, w := newTestController(t, "")
	r := NewScriptRunner()
	c.SetScript(r)
	c.ShowScript(true)
	require.NoError(t, c.SetSpeed(1))
	scenarioNow := c.Now()
	c.Play()
	c.Tick(0, time.Millisecond)
	assert.False(t, c.ScriptOn(), "the map shows the scenario until a script has run")

	r.Run(clockScript, nil)
	// One tick of 20 ms of wall time at x1: the script's clock is 20 ms.
	c.Tick(0, 50*time.Millisecond)
	require.True(t, c.ScriptOn())
	assert.True(t, c.Playing(), "a new run plays")
	c.Tick(20*time.Millisecond, 50*time.Millisecond)
	for i := 0; i < 20 && c.Now() < 19*sim.Millisecond; i++ {
		c.Tick(0, 50*time.Millisecond)
	}
	v := c.ScriptLive()
	require.NotNil(t, v.M, "the map has the script's machine")
	assert.LessOrEqual(t, v.Now, 20*sim.Millisecond, "the script's clock stays within the page's")
	assert.GreaterOrEqual(t, v.Now, 19*sim.Millisecond)
	assert.Equal(t, 1, v.Machines)

	t.Run("paused, the script's time stands still", func(t *testing.T) {
		c.Pause()
		before := c.Now()
		for i := 0; i < 5; i++ {
			c.Tick(100*time.Millisecond, 50*time.Millisecond)
		}
		assert.Equal(t, before, c.Now())
		assert.False(t, r.State().Ran)
	})

	t.Run("a step moves it one step", func(t *testing.T) {
		before := c.Target()
		c.Step()
		for i := 0; i < 10; i++ {
			c.Tick(0, 50*time.Millisecond)
		}
		assert.Equal(t, before+c.StepSize(), c.Target())
		assert.LessOrEqual(t, c.Now(), c.Target())
		assert.Greater(t, c.Now(), before-sim.Millisecond)
	})

	t.Run("played at x100 it reaches its end and prints what pagesim script prints", func(t *testing.T) {
		require.NoError(t, c.SetSpeed(100))
		c.Play()
		for i := 0; i < 2000 && !c.Ended(); i++ {
			c.Tick(10*time.Millisecond, 50*time.Millisecond)
			_ = w
		}
		require.True(t, c.Ended())
		v := c.ScriptLive()
		assert.Equal(t, 2, v.Machines)
		assert.Equal(t, 50*sim.Millisecond, v.Offset, "the second machine starts where the first stopped")
		assert.Equal(t, v.Offset+v.M.World.Now(), c.Now())
		assert.False(t, c.Playing())
		st := r.State()
		assert.Empty(t, st.Err)
		assert.Equal(t, want.String(), st.Output)
	})

	t.Run("closing the mode gives the map and the clock back to the scenario", func(t *testing.T) {
		c.ShowScript(false)
		c.Tick(0, time.Millisecond)
		assert.False(t, c.ScriptOn())
		assert.Equal(t, scenarioNow, c.Now())
		assert.True(t, c.Playing(), "the scenario plays as it did")
	})
}

func TestAScriptRunToTheEndIgnoresThePagesClock(t *testing.T) {
	c, _ := newTestController(t, "")
	r := NewScriptRunner()
	c.SetScript(r)
	c.ShowScript(true)
	r.RunToEnd(clockScript, nil)
	for i := 0; i < 2000 && !c.Ended(); i++ {
		c.Tick(0, 20*time.Millisecond) // no wall time passes on the clock
	}
	require.True(t, c.Ended())
	assert.Empty(t, r.State().Err)
	assert.Contains(t, r.State().Output, "nr_free_pages")
	assert.Equal(t, c.Now()-c.Now()%sim.Millisecond+sim.Millisecond*sim.Time(min(1, int(c.Now()%sim.Millisecond))), c.Target(), "the clock stops at the end")
}

func TestStoppingAParkedScriptEndsItAtItsLine(t *testing.T) {
	c, _ := newTestController(t, "")
	r := NewScriptRunner()
	c.SetScript(r)
	c.ShowScript(true)
	done := make(chan struct{})
	r.Run("machine mem=32M layout=simple\nrun 10s\necho never\n", func() { close(done) })
	// The first turn's budget is long enough for the boot on a loaded
	// machine (with a budget shorter than the boot the turn ends inside
	// it and the error names line 1), so the turn ends where the script
	// waits for the page's clock: line 2.
	c.Tick(0, time.Minute)
	c.Pause()
	c.Tick(0, 10*time.Millisecond)
	r.Stop()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("the parked script did not end")
	}
	st := r.State()
	assert.Equal(t, "script.txt:2: run: stopped", st.Err)
	assert.Empty(t, st.Output)
}
