package app

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/scenario"
	"github.com/pagesim/pagesim/engine/sim"
)

func allSamples(c *Controller) [][]Sample {
	var out [][]Sample
	for i := range c.Runs() {
		out = append(out, append([]Sample(nil), c.Samples(i)...))
	}
	return out
}

func TestSamplesAreTakenAtFixedSimulatedTimesWhateverTheSlicing(t *testing.T) {
	const frag = "v1/playground?mem=32&v=baseline,high_wmark&seed=4&unmovable=60"
	// One call per tick with an unbounded budget...
	a, _ := newTestController(t, frag)
	a.setTarget(3 * sim.Second)
	tickUntilCaughtUp(t, a, time.Hour)
	// ...against tiny budgets, odd targets and a pause in between.
	b, _ := newTestController(t, frag)
	for _, target := range []sim.Time{7 * sim.Millisecond, 1234 * sim.Millisecond, 3 * sim.Second} {
		b.setTarget(target)
		tickUntilCaughtUp(t, b, 30*time.Microsecond)
	}
	got, want := allSamples(b), allSamples(a)
	require.Len(t, want, 2)
	assert.Equal(t, want, got)
	for _, s := range want {
		require.Len(t, s, 12, "one sample every %v up to 3 s", SampleEvery)
		for i, p := range s {
			assert.Equal(t, sim.Time(i+1)*SampleEvery, p.T)
			assert.GreaterOrEqual(t, p.PSISome10, 0.0)
		}
	}

	// A permalink to the same time draws the same series.
	c, _ := newTestController(t, a.Fragment())
	tickUntilCaughtUp(t, c, time.Hour)
	assert.Equal(t, want, allSamples(c))
}

func TestRatesAddUpToTheCounters(t *testing.T) {
	c, _ := newTestController(t, "v1/playground?mem=32&unmovable=60&fill=95")
	c.setTarget(2 * sim.Second)
	tickUntilCaughtUp(t, c, time.Hour)
	for i, v := range c.Views() {
		var allocs, stalls float64
		var last sim.Time
		for _, p := range c.Samples(i) {
			sec := float64(p.T-last) / float64(sim.Second)
			stalls += p.Rates[0] * sec
			allocs += p.Rates[1] * sec
			last = p.T
		}
		require.Equal(t, 2*sim.Second, last)
		var want uint64
		for e := mm.PGALLOC_DMA; e <= mm.PGALLOC_MOVABLE; e++ {
			want += v.Event(e)
		}
		assert.Positive(t, want)
		assert.InDelta(t, float64(want), allocs, 1e-6*float64(want), "pgalloc summed over every zone")
		assert.InDelta(t, float64(v.Event(mm.COMPACTSTALL)), stalls, 1e-6)
		assert.Equal(t, []uint64{v.Event(mm.COMPACTSTALL), want}, c.Samples(i)[len(c.Samples(i))-1].Totals)
	}
}

func TestARunThatEndsBetweenSamplesGetsALastSampleAtItsEnd(t *testing.T) {
	c, _ := newTestController(t, "v1/playground?mem=32&duration=1&x=1000")
	c.Play()
	for i := 0; !c.Ended(); i++ {
		c.Tick(time.Second, time.Hour)
		require.Less(t, i, 1000)
	}
	s := c.Samples(0)
	require.Len(t, s, 4)
	assert.Equal(t, sim.Second, s[3].T)

	d, _ := newTestController(t, "v1/playground?mem=32&duration=1&x=1000")
	d.setTarget(1100 * sim.Millisecond) // clipped to the end
	tickUntilCaughtUp(t, d, time.Hour)
	assert.Equal(t, allSamples(c), allSamples(d))
}

func TestAFullSeriesMergesPairsAndKeepsTheTotals(t *testing.T) {
	s := newSampler(nil)
	var want float64
	for i := 1; i <= MaxSamples-1; i++ {
		p := Sample{T: sim.Time(i) * SampleEvery, Rates: []float64{float64(i % 7), float64(i % 3)}, PSISome10: float64(i)}
		s.samples = append(s.samples, p)
		want += p.Rates[0] * SampleEvery.Seconds()
	}
	// The last one ends the run early: a shorter interval.
	end := sim.Time(MaxSamples-1)*SampleEvery + 100*sim.Millisecond
	s.samples = append(s.samples, Sample{T: end, Rates: []float64{50, 0}, PSISome10: 99})
	want += 50 * (100 * sim.Millisecond).Seconds()
	s.halve()
	require.Len(t, s.samples, MaxSamples/2)
	assert.Equal(t, 2*SampleEvery, s.every)
	var got float64
	var last sim.Time
	for i, p := range s.samples {
		got += p.Rates[0] * (p.T - last).Seconds()
		last = p.T
		if i < len(s.samples)-1 {
			assert.Equal(t, sim.Time(2*(i+1))*SampleEvery, p.T)
			assert.Equal(t, float64(2*(i+1)), p.PSISome10, "PSI is the later point's")
		}
	}
	assert.Equal(t, end, last)
	assert.Equal(t, 99.0, s.samples[len(s.samples)-1].PSISome10)
	assert.InDelta(t, want, got, 1e-9)
}

func TestCommandArgsSpellOutWhatDiffersFromTheDefaults(t *testing.T) {
	in := &scenario.Spec{ID: "s", Variants: []scenario.Variant{{Name: "a"}, {Name: "b"}, {Name: "c", Optional: true}},
		Params: []scenario.Param{{Name: "scale", Default: "0.25"}, {Name: "nodes", Default: "2"}}}
	st := State{Scenario: "s", Seed: 7, Variants: []string{"a", "b"}, Params: map[string]string{"scale": "0.05", "nodes": "2"},
		Knobs: []scenario.Knob{{Name: "vm.defrag_mode", Value: "1"}}}
	assert.Equal(t, []string{"run", "s", "--seed", "7", "--set", "scale=0.05", "--set", "vm.defrag_mode=1"}, CommandArgs(in, st))
	st.Variants = []string{"a", "c"}
	assert.Equal(t, []string{"run", "s", "--seed", "7", "--variant", "a", "--variant", "c", "--set", "scale=0.05", "--set", "vm.defrag_mode=1"}, CommandArgs(in, st))
	assert.Equal(t, "x", shellQuote("x"))
	assert.Equal(t, "guest_gb=30,34", shellQuote("guest_gb=30,34"))
	assert.Equal(t, `'a b'`, shellQuote("a b"))
	assert.Equal(t, `'it'\''s'`, shellQuote("it's"))
	assert.Equal(t, `'<img>'`, shellQuote("<img>"))
}
