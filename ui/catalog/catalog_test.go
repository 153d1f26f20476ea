package catalog

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/scenario"
	"github.com/pagesim/pagesim/engine/sim"
	"github.com/pagesim/pagesim/ui/app"
)

func TestTheCatalogListsEveryScenarioThenThePlayground(t *testing.T) {
	cat, err := New()
	require.NoError(t, err)
	infos := cat.Infos()
	require.Len(t, infos, len(scenario.All())+1)
	assert.Equal(t, "thp-thisnode", infos[0].Name, "the page opens on the first patch scenario")
	assert.Equal(t, "churn", infos[len(infos)-1].Name)
	assert.Contains(t, infos[len(infos)-1].Title, "Playground")
	for i, s := range scenario.All() {
		in := infos[i]
		assert.Equal(t, s.ID, in.Name)
		require.Len(t, in.Params, len(s.Params))
		for j, p := range s.Params {
			assert.Equal(t, p.Name, in.Params[j].Name)
			assert.Equal(t, p.Default, in.Params[j].Default)
		}
		assert.Equal(t, s.DefaultVariants(), cat.Defaults(s.ID).Variants)
	}
}

// The page refuses a value with the words `pagesim run --set` uses.
func TestParametersAreCheckedByTheScenariosOwnParser(t *testing.T) {
	spec, err := scenario.Get("thp-thisnode")
	require.NoError(t, err)
	_, in, ok := mustCatalog(t).Lookup("thp-thisnode")
	require.True(t, ok)
	for _, p := range in.Params {
		if p.Name != "scale" {
			continue
		}
		perr := p.Check("2")
		require.Error(t, perr)
		_, rerr := spec.Parse([]string{"scale=2"})
		assert.Equal(t, rerr.Error(), perr.Error())
		assert.NoError(t, p.Check("0.05"))
	}
	st, err := mustCatalog(t).Decode("v1/thp-thisnode?scale=7")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "scale")
	assert.Equal(t, "thp-thisnode", st.Scenario, "the defaults")
	assert.Equal(t, PageScale, st.Params["scale"], "at the page's scale")
}

func mustCatalog(t *testing.T) *app.Catalog {
	t.Helper()
	cat, err := New()
	require.NoError(t, err)
	return cat
}

// TestThePageRunsAScenarioToTheSameNumbersAsPagesimRun runs thp-thisnode
// at a small scale through the page's controller, in lockstep and in
// small slices, and compares every variant's metrics with RunAll (what
// `pagesim run --format json` prints).
func TestThePageRunsAScenarioToTheSameNumbersAsPagesimRun(t *testing.T) {
	const link = "v1/thp-thisnode?seed=5&scale=0.03&guest_gb=30,42"
	c := app.NewController(mustCatalog(t), app.Options{Link: link, MaxChunk: 64})
	require.Empty(t, c.Message())
	require.Empty(t, c.RunError())
	c.Play()
	require.NoError(t, c.SetSpeed(1000))
	for i := 0; !c.Ended(); i++ {
		c.Tick(50*time.Millisecond, 2*time.Millisecond)
		require.Less(t, i, 100000, "the runs never ended (now %v)", c.Now())
	}
	assert.False(t, c.Playing())

	spec, err := scenario.Get("thp-thisnode")
	require.NoError(t, err)
	res, err := spec.RunAll(scenario.Options{Seed: 5, Runs: 1, Settings: []string{"scale=0.03", "guest_gb=30,42"}})
	require.NoError(t, err)
	require.Len(t, c.Runs(), len(res.Variants))
	for i, vr := range res.Variants {
		run := c.Runs()[i]
		require.Equal(t, vr.Name, run.Variant)
		got := map[string]string{}
		for _, m := range run.Run.Results() {
			got[m.Name] = m.Text
		}
		require.Len(t, got, len(vr.Mean), vr.Name)
		for name, want := range vr.Mean {
			assert.Equal(t, strconv.FormatFloat(want, 'f', -1, 64), got[name], "%s %s", vr.Name, name)
		}
	}
	// The variants finished at different times; the result is the
	// command's, byte for byte.
	s := c.Snapshot(1)
	assert.True(t, s.ResultFinal)
	assert.Empty(t, s.ResultError)
	assert.Equal(t, res.Text(), s.Result.Text)
	js, err := res.JSON()
	require.NoError(t, err)
	assert.Equal(t, string(js)+"\n", s.Result.JSON)
	assert.Equal(t, "pagesim run thp-thisnode --seed 5 --set guest_gb=30,42 --set scale=0.03", s.Command)
	for _, l := range s.Live {
		assert.Equal(t, "done", l.Status)
	}
	assert.True(t, strings.HasPrefix(s.Link, "v1/thp-thisnode?seed=5&x=1000&t="), s.Link)
	assert.Contains(t, s.Link, "&guest_gb=30,42&scale=0.03")
	end := c.Now()
	assert.Equal(t, end-end%sim.Millisecond+sim.Millisecond, c.Target(), "the link's time is the end, to the next millisecond")
}

// A run that boots a machine per guest size counts its events and keeps
// its latest stall over all of them, so the charts' rates add up to the
// scenario's own totals.
func TestAScenarioRunCountsOverEveryMachineItBooted(t *testing.T) {
	c := app.NewController(mustCatalog(t), app.Options{Link: "v1/thp-thisnode?seed=2&scale=0.03&v=upstream,only-compact"})
	require.Empty(t, c.Message())
	c.Play()
	require.NoError(t, c.SetSpeed(1000))
	for i := 0; !c.Ended(); i++ {
		c.Tick(time.Second, time.Hour)
		require.Less(t, i, 100000)
	}
	for i, r := range c.Runs() {
		ec, ok := r.Run.(app.EventCounter)
		require.True(t, ok)
		total := ec.Event(mm.COMPACTSTALL)
		var metrics map[string]float64
		for _, m := range r.Run.Results() {
			if metrics == nil {
				metrics = map[string]float64{}
			}
			metrics[m.Name] = m.Value
		}
		assert.Equal(t, metrics["compact_stall"], float64(total), r.Variant)
		var allocTotal uint64
		for e := mm.PGALLOC_DMA; e <= mm.PGALLOC_MOVABLE; e++ {
			allocTotal += ec.Event(e)
		}
		assert.Greater(t, allocTotal, r.Run.Machine().Event(mm.PGALLOC_NORMAL), "more than the last machine's")
		var stalls, allocs float64
		var last sim.Time
		for _, p := range c.Samples(i) {
			stalls += p.CompactStallRate * (p.T - last).Seconds()
			allocs += p.AllocRate * (p.T - last).Seconds()
			last = p.T
		}
		assert.Equal(t, r.Run.Now(), last, "the last sample is at the end")
		assert.InDelta(t, float64(total), stalls, 1e-6*float64(total)+1e-9, r.Variant)
		assert.InDelta(t, float64(allocTotal), allocs, 1e-6*float64(allocTotal), r.Variant)

		st, ok := r.Run.(app.Staller).LastStall()
		if r.Variant == "upstream" {
			require.True(t, ok, "upstream reclaims on node 0")
			assert.Contains(t, st, "__alloc_pages_direct_reclaim")
		}
	}
}

// Knobs are checked and applied as `pagesim run --set` does.
func TestKnobsGoThroughTheScenariosParser(t *testing.T) {
	cat := mustCatalog(t)
	_, in, _ := cat.Lookup("thp-thisnode")
	require.NotNil(t, in.CheckKnob)
	name, err := in.CheckKnob("/proc/sys/vm/defrag_mode", "1")
	require.NoError(t, err)
	assert.Equal(t, "vm.defrag_mode", name)
	_, err = in.CheckKnob("scale", "0.1")
	assert.ErrorContains(t, err, "is a parameter")
	_, err = in.CheckKnob("vm.nosuch", "1")
	assert.Error(t, err)

	c := app.NewController(cat, app.Options{Link: "v1/thp-thisnode?scale=0.03&v=upstream&vm.watermark_scale_factor=123"})
	require.Empty(t, c.Message())
	require.Empty(t, c.RunError())
	v, err := c.Runs()[0].Run.Machine().GetSysctl("vm.watermark_scale_factor")
	require.NoError(t, err)
	assert.Equal(t, "123", v)
}
