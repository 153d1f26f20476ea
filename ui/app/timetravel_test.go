package app

import (
	"crypto/sha256"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pagesim/pagesim/engine/sim"
)

// smallTHP is thp-thisnode small enough for a unit test, with both of its
// default variants: its guests stall within the first tenth of a second,
// and the run ends at 368 ms.
const smallTHP = "v1/thp-thisnode?scale=0.01&guest_gb=30,42&seed=5"

func newTHPController(t *testing.T, frag string) *Controller {
	t.Helper()
	cat, err := DefaultCatalog()
	require.NoError(t, err)
	w := &fakeWall{step: 10 * time.Microsecond}
	c := NewController(cat, Options{Wall: w.read, Link: frag})
	require.Empty(t, c.Message())
	require.Empty(t, c.RunError())
	require.Empty(t, c.TimelineOff())
	return c
}

// pageOf is what the page shows of a controller: the link, the status,
// the result table, each variant's live numbers and series, and a hash of
// every run's machines.
func pageOf(t *testing.T, c *Controller) map[string]string {
	t.Helper()
	s := c.Snapshot(0)
	out := map[string]string{"link": s.Link, "shown": fmt.Sprint(s.Shown, s.Now, s.Playing), "table": s.Result.Text}
	for i, d := range runDigests(c) {
		out[fmt.Sprint("machines ", i)] = fmt.Sprintf("%x", sha256.Sum256([]byte(d)))
	}
	for i, l := range s.Live {
		out[fmt.Sprint("live ", i)] = fmt.Sprint(l.Now, l.Phase, l.Status, l.Vmstat, l.Results, l.PSISome10, l.Done)
		out[fmt.Sprint("samples ", i)] = fmt.Sprint(l.Samples)
	}
	return out
}

// Scrubbing back and forward shows what a page opened at that time shows:
// the same link, table, live numbers, charts and machines, every variant
// at the same time; a paused page stays paused, a playing one plays on.
func TestGoingBackOrForwardShowsWhatAPageOpenedThereShows(t *testing.T) {
	c := newTHPController(t, smallTHP+"&t=0.3")
	tickUntilCaughtUp(t, c, time.Hour)
	c.Tick(0, time.Hour)
	require.Equal(t, 300*sim.Millisecond, c.Shown())
	for _, at := range []sim.Time{137 * sim.Millisecond, 0, 251 * sim.Millisecond, 300 * sim.Millisecond, 45 * sim.Millisecond} {
		require.NoError(t, c.Seek(at))
		tickUntilCaughtUp(t, c, time.Hour)
		c.Tick(0, time.Hour)
		assert.False(t, c.Playing(), "paused stays paused")
		assert.Equal(t, at, c.Shown())
		for _, r := range c.Runs() {
			if !r.Done() {
				assert.Equal(t, at, r.Now(), "lockstep")
			}
		}
		fresh := newTHPController(t, "#"+c.Fragment())
		tickUntilCaughtUp(t, fresh, time.Hour)
		fresh.Tick(0, time.Hour)
		assert.Equal(t, pageOf(t, fresh), pageOf(t, c), "at %v", at)
	}
	c.Play()
	require.NoError(t, c.Seek(200*sim.Millisecond))
	assert.True(t, c.Playing(), "playing plays on from there")
}

// The markers are the same however the page got to a time (played in
// large or small slices, or gone back and played again), they mark
// stalls in this run, and going back keeps what lies ahead marked.
func TestTheMarkersDoNotDependOnHowThePageGotThere(t *testing.T) {
	a := newTHPController(t, smallTHP+"&t=0.3")
	tickUntilCaughtUp(t, a, time.Hour)
	b := newTHPController(t, smallTHP)
	b.st.Speed = 1
	b.Play()
	for i := 0; b.Now() < 300*sim.Millisecond; i++ {
		b.Tick(7*time.Millisecond, time.Hour)
		require.Less(t, i, 1000)
	}
	b.Pause()
	require.NoError(t, b.Seek(300*sim.Millisecond))
	tickUntilCaughtUp(t, b, time.Hour)
	ma := a.Markers()
	assert.Equal(t, ma, b.Markers())
	stalls := 0
	for _, m := range ma {
		if m.Kind == MarkStall {
			stalls++
		}
		assert.LessOrEqual(t, m.T, 300*sim.Millisecond)
	}
	assert.Positive(t, stalls)
	require.NoError(t, a.Seek(50*sim.Millisecond))
	assert.Equal(t, ma, a.Markers(), "the markers past t stay")
	assert.Equal(t, 300*sim.Millisecond, a.Span())
}

// `,` steps back by the step size as `.` steps forward; n and N go to
// the next and the previous stall's marker.
func TestStepBackAndNextStall(t *testing.T) {
	c := newTHPController(t, smallTHP+"&t=0.2")
	tickUntilCaughtUp(t, c, time.Hour)
	c.Step()
	tickUntilCaughtUp(t, c, time.Hour)
	stepped := c.Shown()
	require.Equal(t, 200*sim.Millisecond+c.StepSize(), stepped)
	require.NoError(t, c.StepBack())
	tickUntilCaughtUp(t, c, time.Hour)
	assert.Equal(t, 200*sim.Millisecond, c.Shown())
	require.NoError(t, c.StepBack())
	assert.Equal(t, 200*sim.Millisecond-c.StepSize(), c.Shown())

	var stalls []sim.Time
	for _, m := range c.Markers() {
		if m.Kind == MarkStall && (len(stalls) == 0 || stalls[len(stalls)-1] < m.T) {
			stalls = append(stalls, m.T)
		}
	}
	require.GreaterOrEqual(t, len(stalls), 2)
	require.NoError(t, c.Seek(0))
	next := func(dir int) bool {
		ok, err := c.NextStall(dir)
		require.NoError(t, err)
		tickUntilCaughtUp(t, c, time.Hour)
		assert.False(t, c.Playing())
		return ok
	}
	require.True(t, next(1))
	assert.Equal(t, stalls[0], c.Shown())
	next(1)
	assert.Equal(t, stalls[1], c.Shown())
	next(-1)
	assert.Equal(t, stalls[0], c.Shown())
	assert.False(t, next(-1), "none before the first")
	assert.Equal(t, stalls[0], c.Shown())
}

// A link whose t alone changed moves the timeline there: the runs are not
// booted again, and the page equals one opened at that link.
func TestALinksTimeFollowsWithoutARestart(t *testing.T) {
	c := newTHPController(t, smallTHP+"&t=0.3")
	tickUntilCaughtUp(t, c, time.Hour)
	gen := c.Generation()
	c.LoadFragment(smallTHP + "&t=0.12")
	assert.Equal(t, gen, c.Generation(), "no restart")
	tickUntilCaughtUp(t, c, time.Hour)
	assert.Equal(t, 120*sim.Millisecond, c.Shown())
	fresh := newTHPController(t, smallTHP+"&t=0.12")
	tickUntilCaughtUp(t, fresh, time.Hour)
	assert.Equal(t, pageOf(t, fresh), pageOf(t, c))
	c.LoadFragment(smallTHP + "&t=0.12&seed=6")
	assert.NotEqual(t, gen, c.Generation(), "another seed boots again")
}

// The Script mode has no timeline: a script runs forward only.
func TestTheScriptModeHasNoTimeline(t *testing.T) {
	c := newTHPController(t, smallTHP)
	r := NewScriptRunner()
	c.SetScript(r)
	c.ShowScript(true)
	r.Run(clockScript, nil)
	c.Tick(0, 50*time.Millisecond)
	require.True(t, c.ScriptOn())
	assert.ErrorIs(t, c.Seek(0), errScriptTimeline)
	assert.ErrorIs(t, c.StepBack(), errScriptTimeline)
	assert.Equal(t, errScriptTimeline.Error(), c.TimelineOff())
	assert.Empty(t, c.Markers())
}
