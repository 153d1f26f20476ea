package app

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/scenario"
	"github.com/pagesim/pagesim/engine/sim"
)

// playground is the playground scenario.
func playground(t testing.TB) *scenario.Spec {
	t.Helper()
	s, err := scenario.Get("playground")
	require.NoError(t, err)
	return s
}

// fakeSpec is a second scenario, with one optional variant and a choice
// parameter whose values need escaping in a link; its runs are the
// playground's on a small machine.
func fakeSpec(t testing.TB) *scenario.Spec {
	t.Helper()
	pg := playground(t)
	f := *pg
	f.ID, f.Title, f.Unlisted = "fake", "Fake", false
	f.Variants = []scenario.Variant{{Name: "a"}, {Name: "b", Optional: true}}
	f.Params = []scenario.Param{{Name: "label", Kind: scenario.KindChoice, Default: "x", Choices: []string{"x", "a b&c=d/é"}}}
	f.PageParams = nil
	f.Machine = func(scenario.Values) string { return "the playground's, small" }
	f.Start = func(cfg scenario.Config) (scenario.Phases, error) {
		st, err := pg.Parse([]string{"mem=32", "duration=2"})
		if err != nil {
			return nil, err
		}
		return pg.Start(scenario.Config{Variant: "baseline", Params: st.Values, Seed: cfg.Seed})
	}
	return &f
}

// fakeWall is a wall clock that moves step on every reading, so budgets
// run out after a known number of readings.
type fakeWall struct {
	now, step time.Duration
}

func (w *fakeWall) read() time.Duration { w.now += w.step; return w.now }

func newTestController(t *testing.T, frag string) (*Controller, *fakeWall) {
	t.Helper()
	cat, err := NewCatalog(playground(t), fakeSpec(t))
	require.NoError(t, err)
	w := &fakeWall{step: 10 * time.Microsecond}
	c := NewController(cat, Options{Wall: w.read, MaxChunk: 64, Link: frag})
	require.Empty(t, c.Message())
	require.Empty(t, c.RunError())
	return c, w
}

// viewDigest prints everything a view can read of a run.
func viewDigest(v scenario.View) string {
	var b strings.Builder
	for _, bv := range v.BlockViews(nil) {
		fmt.Fprintf(&b, "%v ", bv)
	}
	for _, z := range v.ZoneViews() {
		fmt.Fprintf(&b, "%+v\n", z)
	}
	fmt.Fprintf(&b, "%+v\n", v.NodeViews())
	ps := v.PageStates(0, make([]mm.PageState, v.MaxPFN()))
	fmt.Fprintf(&b, "%x\n", ps)
	for _, n := range DefaultVmstat {
		val, _ := v.VMStat(n)
		fmt.Fprintf(&b, "%s %d\n", n, val)
	}
	fmt.Fprintf(&b, "now %d %v %d %q\n", v.Now(), v.PSIAvg(false), v.TraceWritten(), v.TraceLines(5))
	return b.String()
}

func runDigests(c *Controller) []string {
	var out []string
	for i, v := range c.Views() {
		out = append(out, c.Runs()[i].Variant()+"\n"+viewDigest(v)+fmt.Sprint(c.Runs()[i].Metrics()))
	}
	return out
}

// tickUntilCaughtUp ticks with no wall time passing until the runs reach
// the target.
func tickUntilCaughtUp(t *testing.T, c *Controller, budget time.Duration) int {
	t.Helper()
	ticks := 0
	for !c.CaughtUp() {
		c.Tick(0, budget)
		ticks++
		require.Less(t, ticks, 100000)
	}
	return ticks
}

func TestTheControllerOpensOnTheDefaultsPaused(t *testing.T) {
	c, _ := newTestController(t, "")
	assert.False(t, c.Playing())
	assert.EqualValues(t, 0, c.Now())
	require.Len(t, c.Runs(), 2)
	assert.Equal(t, "baseline", c.Runs()[0].Variant())
	assert.Equal(t, "small_pcp", c.Runs()[1].Variant())
	c.Tick(time.Second, time.Second)
	assert.EqualValues(t, 0, c.Now(), "paused: the clock does not move")
}

func TestPlayingMovesTheClockBySpeedTimesWallTimeInLockstep(t *testing.T) {
	c, _ := newTestController(t, "v1/playground?mem=32&x=0.5")
	c.Play()
	c.Tick(100*time.Millisecond, time.Hour)
	assert.Equal(t, 50*sim.Millisecond, c.Target())
	for _, r := range c.Runs() {
		assert.Equal(t, 50*sim.Millisecond, r.Now(), r.Variant())
	}
	c.Pause()
	c.Tick(100*time.Millisecond, time.Hour)
	assert.Equal(t, 50*sim.Millisecond, c.Now())
}

func TestTheClockNeverRunsFarAheadOfTheRuns(t *testing.T) {
	c, _ := newTestController(t, "v1/playground?mem=32&x=1000")
	c.Play()
	for i := 0; i < 20; i++ {
		c.Tick(16*time.Millisecond, 30*time.Microsecond) // budget: a few readings
		lag := time.Duration(float64(c.Target()-c.Now()) / 1000)
		assert.LessOrEqual(t, lag, MaxLag+16*time.Millisecond)
	}
	assert.Greater(t, int64(c.Now()), int64(0))
}

func TestATickStopsWhenItsBudgetIsSpent(t *testing.T) {
	c, w := newTestController(t, "v1/playground?mem=32")
	c.Step()
	c.Step()
	c.Step()
	before := w.now
	c.Tick(0, 200*time.Microsecond)
	// Each chunk reads the clock a few times; the budget allows a handful.
	assert.Less(t, w.now-before, 400*time.Microsecond)
}

func TestSlicingDoesNotChangeTheOutcome(t *testing.T) {
	const frag = "v1/playground?mem=32&v=baseline,small_pcp,high_wmark&seed=5"
	a, _ := newTestController(t, frag)
	b, _ := newTestController(t, frag)
	a.setTarget(300 * sim.Millisecond)
	b.setTarget(300 * sim.Millisecond)
	tickUntilCaughtUp(t, a, time.Hour)
	ticks := tickUntilCaughtUp(t, b, 25*time.Microsecond)
	assert.Greater(t, ticks, 10, "the small budget should need many ticks")
	assert.Equal(t, runDigests(a), runDigests(b))
}

func TestVariantsDivergeButEachIsReproducible(t *testing.T) {
	a, _ := newTestController(t, "v1/playground?mem=32&v=baseline,high_wmark")
	a.setTarget(500 * sim.Millisecond)
	tickUntilCaughtUp(t, a, time.Hour)
	d := runDigests(a)
	assert.NotEqual(t, d[0][len("baseline"):], d[1][len("high_wmark"):], "high_wmark behaves like baseline")
	a.LoadFragment("v1/playground?mem=32&v=baseline,small_pcp")
	a.setTarget(500 * sim.Millisecond)
	tickUntilCaughtUp(t, a, time.Hour)
	d = runDigests(a)
	assert.NotEqual(t, d[0][len("baseline"):], d[1][len("small_pcp"):], "small_pcp behaves like baseline")
}

func TestPauseStopsOnAWholeMillisecondAndTheLinkRestoresTheSameMachines(t *testing.T) {
	c, _ := newTestController(t, "v1/playground?mem=32&seed=9&x=2")
	c.Play()
	for i := 0; i < 7; i++ {
		c.Tick(17*time.Millisecond+123*time.Microsecond, 40*time.Microsecond)
	}
	c.Pause()
	tickUntilCaughtUp(t, c, time.Hour)
	assert.Zero(t, c.Now()%sim.Millisecond)
	assert.Greater(t, int64(c.Now()), int64(0))
	link := c.Fragment()
	assert.Contains(t, link, "t="+FormatSeconds(c.Now()))

	d, _ := newTestController(t, "#"+link)
	assert.True(t, d.Restoring())
	tickUntilCaughtUp(t, d, 50*time.Microsecond)
	d.Tick(0, time.Hour)
	assert.False(t, d.Restoring())
	assert.False(t, d.Playing())
	assert.Equal(t, c.Now(), d.Now())
	assert.Equal(t, runDigests(c), runDigests(d))
	assert.Equal(t, link, d.Fragment())
}

// A variant that got further than the others within its budget must not
// end up beyond the time Pause settles on.
func TestPauseWaitsForTheRunFurthestAhead(t *testing.T) {
	c, _ := newTestController(t, "v1/playground?mem=32&x=20&v=baseline,high_wmark")
	c.Play()
	c.Tick(100*time.Millisecond, time.Hour)
	c.Tick(100*time.Millisecond, time.Hour)
	// Let only the first run reach the target, as a spent budget would.
	r0 := c.Runs()[0]
	for r0.Now() < c.Target() {
		r0.Advance(c.Target(), 1)
	}
	c.Runs()[1].Advance(c.Target()-500*sim.Millisecond, 1<<30)
	c.Pause()
	tickUntilCaughtUp(t, c, time.Hour)
	for _, r := range c.Runs() {
		assert.Equal(t, c.Target(), r.Now(), r.Variant())
	}
	d, _ := newTestController(t, c.Fragment())
	tickUntilCaughtUp(t, d, time.Hour)
	assert.Equal(t, runDigests(c), runDigests(d))
}

func TestStepMovesOneFrameAtTheCurrentSpeed(t *testing.T) {
	c, _ := newTestController(t, "v1/playground?mem=32&x=10")
	c.Play()
	c.Step()
	assert.False(t, c.Playing())
	assert.Equal(t, 166*sim.Millisecond, c.Target())
	require.NoError(t, c.SetSpeed(0.25))
	assert.Equal(t, 4*sim.Millisecond, c.StepSize())
	require.NoError(t, c.SetSpeed(1000))
	assert.Equal(t, 16666*sim.Millisecond, c.StepSize())
	assert.Error(t, c.SetSpeed(3))
}

func TestTheRunsStopAtTheirDuration(t *testing.T) {
	c, _ := newTestController(t, "v1/playground?mem=32&duration=1&x=1000")
	c.Play()
	for i := 0; i < 100 && !c.Ended(); i++ {
		c.Tick(50*time.Millisecond, time.Hour)
	}
	assert.True(t, c.Ended())
	assert.False(t, c.Playing())
	assert.Equal(t, sim.Second, c.Now())
	c.Play()
	assert.False(t, c.Playing(), "a finished run does not play")
}

func TestChangingSettingsRestartsTheRuns(t *testing.T) {
	c, _ := newTestController(t, "v1/playground?mem=32")
	step := func() {
		c.Step()
		tickUntilCaughtUp(t, c, time.Hour)
		require.NotZero(t, c.Now())
	}
	step()
	g := c.Generation()
	c.SetSeed(2)
	assert.Zero(t, c.Now())
	assert.Greater(t, c.Generation(), g)
	assert.Contains(t, c.Fragment(), "seed=2")

	step()
	require.NoError(t, c.SetVariant("high_wmark", true))
	assert.Zero(t, c.Now())
	assert.Len(t, c.Runs(), 3)
	require.NoError(t, c.SetVariant("baseline", false))
	require.NoError(t, c.SetVariant("small_pcp", false))
	assert.Error(t, c.SetVariant("high_wmark", false), "the last variant stays")
	assert.Error(t, c.SetVariant("nosuch", true))

	step()
	require.NoError(t, c.SetParam("nodes", "2"))
	assert.Zero(t, c.Now())
	assert.Len(t, c.Views()[0].NodeViews(), 2)
	assert.Error(t, c.SetParam("nodes", "5"))
	assert.Equal(t, "5 is above the maximum 4", c.ParamErrors()["nodes"])
	assert.Equal(t, "2", c.State().Params["nodes"], "a refused value is not applied")
	require.NoError(t, c.SetParam("nodes", "1"))
	assert.Empty(t, c.ParamErrors())

	step()
	c.Reset()
	assert.Zero(t, c.Now())

	require.NoError(t, c.SelectScenario("fake"))
	assert.Equal(t, "fake", c.Spec().ID)
	assert.Equal(t, []string{"a"}, c.State().Variants)
	c.Step()
	for i := 0; i < 50 && !c.CaughtUp(); i++ {
		c.Tick(0, time.Second)
	}
	assert.Empty(t, c.RunError(), "the second scenario boots")
	assert.Positive(t, c.Now(), "and runs")
	assert.Len(t, c.Views(), 1)
	assert.Error(t, c.SelectScenario("nosuch"))
}

// watermarks are the zones' min, low and high watermarks as a view shows
// them.
func watermarks(v scenario.View) [][3]uint64 {
	var out [][3]uint64
	for _, z := range v.ZoneViews() {
		out = append(out, [3]uint64{z.Min, z.Low, z.High})
	}
	return out
}

func TestKnobsReachEveryVariantsMachine(t *testing.T) {
	// high_wmark sets vm.watermark_scale_factor=300; the user's 250 comes
	// after it, so both variants get baseline's watermarks at 250.
	c, _ := newTestController(t, "v1/playground?mem=32&v=baseline,high_wmark&vm.watermark_scale_factor=250")
	d, _ := newTestController(t, "v1/playground?mem=32&v=baseline,high_wmark")
	at250 := watermarks(c.Views()[0])
	assert.Equal(t, at250, watermarks(c.Views()[1]), "the user's knob comes after the variant's settings")
	assert.NotEqual(t, at250, watermarks(d.Views()[0]), "the knob moved the watermarks")
	assert.NotEqual(t, at250, watermarks(d.Views()[1]))
	g := c.Generation()
	never := []scenario.Knob{{Name: "transparent_hugepage.enabled", Value: "never"}}
	require.NoError(t, c.SetKnobs(never))
	assert.Greater(t, c.Generation(), g)
	assert.Equal(t, never, c.State().Knobs)
	assert.Contains(t, c.Fragment(), "&transparent_hugepage.enabled=never")
	assert.Error(t, c.SetKnobs([]scenario.Knob{{Name: "vm.nosuch", Value: "1"}}))
	assert.Error(t, c.SetKnobs([]scenario.Knob{{Name: "vm.defrag_mode", Value: "1"}, {Name: "vm.defrag_mode", Value: "0"}}))
	assert.Equal(t, never, c.State().Knobs, "a refused list changes nothing")
}

func TestABrokenLinkShowsAMessageAndTheDefaults(t *testing.T) {
	cat, err := NewCatalog(playground(t))
	require.NoError(t, err)
	c := NewController(cat, Options{})
	c.LoadFragment("#v2/playground?nodes=2")
	assert.Contains(t, c.Message(), "This link could not be read")
	assert.Contains(t, c.Message(), "Showing the defaults")
	assert.True(t, c.State().Equal(cat.Defaults("")))
	assert.True(t, c.takeKeepAddress(), "the address bar keeps the link as written")
	assert.Len(t, c.Runs(), 2)
	c.DismissMessage()
	assert.Empty(t, c.Message())

	d := NewController(cat, Options{Link: "v1/nosuch"})
	assert.Contains(t, d.Message(), `unknown scenario "nosuch"`)
	assert.Equal(t, uint64(1), d.Generation(), "the defaults boot once")
}

func TestALinkBeyondTheEndRestoresTheEnd(t *testing.T) {
	c, _ := newTestController(t, "v1/playground?mem=32&duration=1&t=5")
	assert.Equal(t, sim.Second, c.Target())
	tickUntilCaughtUp(t, c, time.Hour)
	assert.True(t, c.Ended())
}

func TestASnapshotCarriesWhatThePanelShows(t *testing.T) {
	c, _ := newTestController(t, "v1/playground?mem=32")
	c.setTarget(600 * sim.Millisecond)
	tickUntilCaughtUp(t, c, time.Hour)
	s := c.Snapshot(7)
	assert.EqualValues(t, 7, s.Seq)
	assert.Equal(t, []ScenarioItem{{"playground", "Playground: allocation churn (no patch)"}, {"fake", "Fake"}}, s.Scenarios)
	assert.Equal(t, c.Fragment(), s.Link)
	require.Len(t, s.Live, 2)
	var names []string
	for _, c := range s.Live[0].Vmstat {
		names = append(names, c.Name)
	}
	assert.Equal(t, []string{"compact_stall", "pgalloc (all zones)", "pgfree", "allocstall_normal", "compact_success",
		"compact_fail", "thp_fault_alloc", "thp_fault_fallback", "nr_free_pages"}, names)
	assert.Positive(t, s.Live[0].Vmstat[1].Value)
	assert.Positive(t, s.Live[0].Vmstat[8].Value)
	assert.Equal(t, []string{"compact_stall", "pgalloc (all zones)"}, s.Charts)
	assert.Equal(t, 600*sim.Millisecond, s.Shown)
	require.Len(t, s.Toggles, 3)
	assert.True(t, s.Toggles[0].Selected)
	assert.False(t, s.Toggles[2].Selected)
	lines := strings.Split(s.Result.Text, "\n")
	require.Greater(t, len(lines), 5)
	assert.Equal(t, "partial, at t = 0.600 s: the runs have not finished, … marks what is still to come", lines[0],
		"a table copied before the end says so")
	assert.Equal(t, "pagesim "+scenario.Version+": playground, seed 1, 1 run", lines[1])
	assert.Equal(t, "machine: 1 x 32 MiB nodes, 2 CPUs per node; 60 s of churn", lines[2])
	assert.Regexp(t, `^  metric +baseline +small_pcp$`, lines[4])
	assert.Regexp(t, `^  allocations +\d+ +\d+$`, lines[5])
	assert.Contains(t, s.Result.JSON, `"scenario": "playground"`)
	assert.Contains(t, s.Result.JSON, `"allocations": `)
	assert.False(t, s.ResultFinal)
	assert.Equal(t, "pagesim run playground --seed 1 --set mem=32", s.Command)
	for _, l := range s.Live {
		require.NotEmpty(t, l.Samples, "samples every %v", SampleEvery)
		assert.Equal(t, SampleEvery, l.Samples[0].T)
		require.Len(t, l.Nodes, 1)
		assert.Equal(t, "sleeping", l.Nodes[0].Kcompactd)
	}
}

func TestTheLoopRunsCommandsOnTheOwnerAndPublishesSnapshots(t *testing.T) {
	c, w := newTestController(t, "v1/playground?mem=32")
	l := NewLoop(c)
	var links []string
	l.OnLink = func(s string, push bool) {
		assert.False(t, push, "stepping is no history entry")
		links = append(links, s)
	}
	first := l.Snapshot()
	require.NotNil(t, first)
	<-l.Updated()
	l.Do(func(c *Controller) { c.Step() })
	assert.Same(t, first, l.Snapshot(), "nothing happens before the owner ticks")
	l.Tick(0, time.Hour)
	s := l.Snapshot()
	assert.Greater(t, s.Seq, first.Seq)
	assert.Equal(t, 16*sim.Millisecond, s.Now)
	select {
	case <-l.Updated():
	default:
		t.Fatal("no update signal")
	}
	require.Len(t, links, 1)
	assert.Contains(t, links[0], "t=0.016")

	// Paused and settled: no new snapshot.
	seq := s.Seq
	w.now += time.Second
	l.Tick(0, time.Hour)
	assert.Equal(t, seq, l.Snapshot().Seq)

	// Catching up slowly: the last state is published once settled.
	l.Do(func(c *Controller) { c.setTarget(300 * sim.Millisecond) })
	for i := 0; i < 100000 && l.Snapshot().Now < 300*sim.Millisecond; i++ {
		l.Tick(0, 20*time.Microsecond)
	}
	assert.Equal(t, 300*sim.Millisecond, l.Snapshot().Now)
}

func TestACatalogRefusesABrokenScenario(t *testing.T) {
	_, err := NewCatalog()
	assert.Error(t, err)
	_, err = NewCatalog(playground(t), playground(t))
	assert.ErrorContains(t, err, "listed twice")
	bad := *fakeSpec(t)
	bad.ID = "Bad"
	_, err = NewCatalog(&bad)
	assert.ErrorContains(t, err, "not a valid name")
	bad = *fakeSpec(t)
	bad.Variants = []scenario.Variant{{Name: "a", Optional: true}}
	_, err = NewCatalog(&bad)
	assert.ErrorContains(t, err, "no variant that runs by default")
	bad = *fakeSpec(t)
	bad.Params = []scenario.Param{{Name: "seed", Kind: scenario.KindChoice, Default: "x", Choices: []string{"x"}}}
	_, err = NewCatalog(&bad)
	assert.ErrorContains(t, err, "reserved")
}

// overBudgetLink is the seed-003 link that once killed the tab: 8 nodes x 64 GiB at scale 1,
// each parameter in its range, three variants of 2.6 GiB each to simulate.
const overBudgetLink = "v1/thp-thisnode?scale=1&nodes=8&node_gb=64"

func TestALinkOverThePagesMemoryBudgetIsRefusedBeforeBooting(t *testing.T) {
	cat, err := DefaultCatalog()
	require.NoError(t, err)
	c := NewController(cat, Options{Link: overBudgetLink})
	assert.Contains(t, c.Message(), "This link asks for more than a browser tab can simulate: 3 machines (each ")
	assert.Contains(t, c.Message(), "over the limit of 1 GiB")
	assert.Regexp(t, `\(pagesim run thp-thisnode --seed 1( --set [a-z_]+=[0-9.]+)+ simulates it natively\)`, c.Message(), "the link's own command, so its reader can run it")
	assert.Contains(t, c.Message(), "--set nodes=8")
	assert.Contains(t, c.Message(), "Showing the defaults instead.")
	assert.True(t, c.State().Equal(cat.Opening("")), "the page opens the defaults")
	assert.Equal(t, uint64(1), c.Generation(), "only the defaults boot")
	require.NotEmpty(t, c.Runs())
	assert.True(t, c.takeRelink(), "the address bar gets the defaults' link")
	assert.False(t, c.takeRelink())

	// On a page already showing something, the state is kept.
	c.DismissMessage()
	require.NoError(t, c.SetParam("scale", "0.04"))
	shown, gen := c.Fragment(), c.Generation()
	c.LoadFragment(overBudgetLink)
	assert.Contains(t, c.Message(), "The page keeps what it showed.")
	assert.Equal(t, shown, c.Fragment())
	assert.Equal(t, gen, c.Generation(), "nothing restarted")
	assert.True(t, c.takeRelink())
}

func TestAParameterThatMakesTheMachinesTooLargeIsRefused(t *testing.T) {
	cat, err := DefaultCatalog()
	require.NoError(t, err)
	c := NewController(cat, Options{Link: "v1/thp-thisnode?guest_gb=30&scale=0.03"})
	require.Empty(t, c.Message())
	// Each step is in range; 8 x 64 GiB at scale 1 is not, for three
	// variants side by side.
	require.NoError(t, c.SetParam("nodes", "8"))
	require.NoError(t, c.SetParam("node_gb", "64"))
	shown, gen := c.Fragment(), c.Generation()
	err = c.SetParam("scale", "1")
	var be *mm.BudgetError
	require.ErrorAs(t, err, &be)
	assert.Equal(t, 3, be.Machines)
	assert.Contains(t, c.ParamErrors()["scale"], "over the limit of 1 GiB")
	assert.Equal(t, shown, c.Fragment(), "the state is kept")
	assert.Equal(t, gen, c.Generation())

	// The seed's own size (2 x 32 GiB, 342 MiB a machine) fits two
	// variants side by side, not a third (checked without booting them).
	st, err := cat.Decode("v1/thp-thisnode?scale=1&v=upstream,only-compact")
	require.NoError(t, err)
	assert.NoError(t, c.checkBudget(st))
	st.Variants = append(st.Variants, "drop-thisnode")
	assert.ErrorAs(t, c.checkBudget(st), &be)
}

func TestTheUsersChangesAreHistoryEntriesAndPlayingIsNot(t *testing.T) {
	c, _ := newTestController(t, "v1/playground?mem=32")
	l := NewLoop(c)
	type entry struct {
		link string
		push bool
	}
	var got []entry
	l.OnLink = func(s string, push bool) { got = append(got, entry{s, push}) }
	l.Tick(0, time.Hour)
	require.Len(t, got, 1)
	assert.False(t, got[0].push, "the page's first link replaces the address")

	step := func(what string, f func(c *Controller), push bool) {
		t.Helper()
		n := len(got)
		l.Do(f)
		l.Tick(0, time.Hour)
		require.Len(t, got, n+1, what)
		assert.Equal(t, push, got[n].push, what)
	}
	step("a step moves t", func(c *Controller) { c.Step() }, false)
	step("a parameter", func(c *Controller) { require.NoError(t, c.SetParam("fill", "90")) }, true)
	step("a variant", func(c *Controller) { require.NoError(t, c.SetVariant("high_wmark", true)) }, true)
	step("knobs", func(c *Controller) {
		require.NoError(t, c.SetKnobs([]scenario.Knob{{Name: "vm.watermark_scale_factor", Value: "200"}}))
	}, true)
	step("the seed", func(c *Controller) { c.SetSeed(9) }, true)
	step("the speed", func(c *Controller) { require.NoError(t, c.SetSpeed(10)) }, false)
	step("presentation mode", func(c *Controller) { c.SetPresent(true) }, false)
	step("the scenario", func(c *Controller) { require.NoError(t, c.SelectScenario("fake")) }, true)
	assert.Contains(t, got[len(got)-1].link, "present", "a view mode outlives a change of scenario")

	// Back: the browser gives the previous entry's link; loading it adds
	// no entry of its own.
	n := len(got)
	prev := got[n-2].link
	l.Do(func(c *Controller) { c.LoadFragment(prev) })
	l.Tick(0, time.Hour)
	for _, e := range got[n:] {
		assert.False(t, e.push)
	}
	assert.Equal(t, prev, l.Snapshot().Link)
}

func TestALinkReadInPartKeepsTheRestAndMarksTheBadParameter(t *testing.T) {
	c, _ := newTestController(t, "v1/playground?mem=32")
	l := NewLoop(c)
	var got []string
	l.OnLink = func(s string, push bool) { got = append(got, s) }
	l.Do(func(c *Controller) { c.LoadFragment("v1/playground?mem=32&nodes=9&fill=90&bogus=1") })
	l.Tick(0, time.Hour)
	s := l.Snapshot()
	assert.Equal(t, "32", s.State.Params["mem"])
	assert.Equal(t, "90", s.State.Params["fill"])
	assert.Equal(t, "1", s.State.Params["nodes"], "the refused value is left at its default")
	assert.Equal(t, "9 is above the maximum 4", s.ParamErrors["nodes"])
	assert.Equal(t, "9", s.BadValues["nodes"])
	assert.Equal(t, `Part of this link could not be used: nodes: 9 is above the maximum 4; scenario playground has no parameter "bogus". `+
		`The page kept the rest of it; fix the value in the panel, or in the address bar, which keeps the link as written.`, s.Message)
	assert.Equal(t, 1, strings.Count(s.Message, "nodes"), "the parameter is named once")
	assert.Empty(t, got, "the address bar keeps the link as the user wrote it")

	// Fixing the value clears the mark and publishes the new link.
	l.Do(func(c *Controller) { require.NoError(t, c.SetParam("nodes", "2")) })
	l.Tick(0, time.Hour)
	s = l.Snapshot()
	assert.Empty(t, s.ParamErrors)
	assert.Empty(t, s.BadValues)
	require.Len(t, got, 1)
	assert.Equal(t, "v1/playground?seed=1&nodes=2&mem=32&fill=90", got[0])
}
