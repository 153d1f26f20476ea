package app

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/scenario"
	"github.com/pagesim/pagesim/engine/sim"
)

func defaultCatalog(t *testing.T) *Catalog {
	t.Helper()
	cat, err := DefaultCatalog()
	require.NoError(t, err)
	return cat
}

// TestThePageRunsAScenarioToTheSameNumbersAsPagesimRun runs thp-thisnode
// at a small scale through the page's controller, in lockstep and in
// small slices, and compares every variant's metrics and the result
// table with RunAll (what `pagesim run` prints).
func TestThePageRunsAScenarioToTheSameNumbersAsPagesimRun(t *testing.T) {
	const link = "v1/thp-thisnode?seed=5&scale=0.03&guest_gb=30,42"
	c := NewController(defaultCatalog(t), Options{Link: link, MaxChunk: 64})
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
		require.Equal(t, vr.Name, run.Variant())
		assert.Equal(t, vr.Runs[0], run.Metrics(), vr.Name)
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
		assert.Equal(t, "2/2: 42 GB", l.Phase)
		require.Len(t, l.Results, 2)
		assert.True(t, strings.HasPrefix(l.Results[1].Headline, "42 GB: "), l.Results[1].Headline)
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
	c := NewController(defaultCatalog(t), Options{Link: "v1/thp-thisnode?seed=2&scale=0.03&v=upstream,only-compact"})
	require.Empty(t, c.Message())
	c.Play()
	require.NoError(t, c.SetSpeed(1000))
	for i := 0; !c.Ended(); i++ {
		c.Tick(time.Second, time.Hour)
		require.Less(t, i, 100000)
	}
	require.Equal(t, []string{"allocstall_movable", "pgscan_direct"}, ChartNames(c.Spec()), "thp-thisnode charts the stalls it is about")
	s := c.Snapshot(1)
	for i, v := range c.Views() {
		r := c.Runs()[i]
		stalls, scans := v.Event(mm.ALLOCSTALL_MOVABLE), v.Event(mm.PGSCAN_DIRECT)
		assert.Equal(t, r.Metrics()["allocstall_movable"], float64(stalls), r.Variant())
		assert.Equal(t, r.Metrics()["pgscan_direct"], float64(scans), r.Variant())
		var allocTotal uint64
		for e := mm.PGALLOC_DMA; e <= mm.PGALLOC_MOVABLE; e++ {
			allocTotal += v.Event(e)
		}
		lastMachine, _ := v.VMStat("pgalloc_normal")
		assert.Greater(t, allocTotal, uint64(lastMachine), "more than the last machine's")
		var got [2]float64
		var last sim.Time
		samples := c.Samples(i)
		for _, p := range samples {
			for k := range got {
				got[k] += p.Rates[k] * (p.T - last).Seconds()
			}
			last = p.T
		}
		assert.Equal(t, v.Now(), last, "the last sample is at the end")
		assert.InDelta(t, float64(stalls), got[0], 1e-6*float64(stalls)+1e-9, r.Variant())
		assert.InDelta(t, float64(scans), got[1], 1e-6*float64(scans)+1e-9, r.Variant())
		end := samples[len(samples)-1]
		assert.Equal(t, []uint64{stalls, scans}, end.Totals, "the chart's totals are the table's counters")
		live := map[string]int64{}
		for _, ctr := range s.Live[i].Vmstat {
			live[ctr.Name] = ctr.Value
		}
		assert.Equal(t, int64(stalls), live["allocstall_movable"], "the live numbers sum over the machines too")
		if r.Variant() == "upstream" {
			assert.Positive(t, stalls)
		}

		st, ok := v.LastStall()
		if r.Variant() == "upstream" {
			require.True(t, ok, "upstream reclaims on node 0")
			assert.Contains(t, st, "__alloc_pages_direct_reclaim")
		}
	}
}

// Knobs are checked and applied as `pagesim run --set` does.
func TestKnobsGoThroughTheScenariosParser(t *testing.T) {
	cat := defaultCatalog(t)
	in, ok := cat.Lookup("thp-thisnode")
	require.True(t, ok)
	k, err := checkKnob(in, "/proc/sys/vm/defrag_mode", "1")
	assert.ErrorContains(t, err, "not a kernel knob name", "a link's key is the dotted name")
	k, err = checkKnob(in, "vm.defrag_mode", " 1")
	require.NoError(t, err)
	assert.Equal(t, scenario.Knob{Name: "vm.defrag_mode", Value: "1"}, k)
	_, err = checkKnob(in, "vm.nosuch", "1")
	assert.ErrorContains(t, err, "no such sysctl")

	c := NewController(cat, Options{Link: "v1/thp-thisnode?scale=0.03&v=upstream&vm.watermark_scale_factor=123"})
	require.Empty(t, c.Message())
	require.Empty(t, c.RunError())
	d := NewController(cat, Options{Link: "v1/thp-thisnode?scale=0.03&v=upstream"})
	assert.NotEqual(t, watermarks(d.Views()[0]), watermarks(c.Views()[0]), "the knob reached the machine")
}
