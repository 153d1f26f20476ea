package app

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/pagesim/pagesim/engine/sim"
)

// A point of the track means the time that sits there, to the
// millisecond and within the run; a click within a few pixels of a
// marker lands on it, a stall before a kswapd run at the same place.
func TestTheTimelinesTrackMapsPixelsToTimesAndMarkers(t *testing.T) {
	b := TimelineBar{Left: 100, Width: 1000, Span: 4 * sim.Second}
	assert.Equal(t, 100.0, b.X(0))
	assert.Equal(t, 600.0, b.X(2*sim.Second))
	assert.Equal(t, 2*sim.Second, b.T(600))
	assert.Equal(t, 1234*sim.Millisecond, b.T(100+308.5))
	assert.Equal(t, sim.Time(0), b.T(10), "left of the track is 0")
	assert.Equal(t, 4*sim.Second, b.T(5000), "right of it the end")

	ms := []Marker{
		{Variant: 0, Kind: MarkKswapd, T: 1 * sim.Second, N: 1},
		{Variant: 1, Kind: MarkStall, T: 1 * sim.Second, N: 3},
		{Variant: 0, Kind: MarkPhase, T: 3 * sim.Second, N: 1, Label: "1/2: 30 GB"},
	}
	m, ok := b.Nearest(ms, 352, 4)
	assert.True(t, ok)
	assert.Equal(t, MarkStall, m.Kind)
	assert.Equal(t, "only-compact: 3 x allocation stall by 1.000 s", m.Describe([]string{"upstream", "only-compact"}))
	_, ok = b.Nearest(ms, 360, 4)
	assert.False(t, ok, "10 px away is no click on it")
	m, _ = b.Nearest(ms, 849, 4)
	assert.Equal(t, "upstream: phase 1/2: 30 GB ended at 3.000 s", m.Describe([]string{"upstream", "only-compact"}))
}
