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

func TestTheStripsRowsHoldTheirNamesAndLanes(t *testing.T) {
	for _, px := range []float64{11, 16} {
		assert.GreaterOrEqual(t, TimelineRowH(px), px+2, "a name of %g px fits its row", px)
		assert.GreaterOrEqual(t, (TimelineRowH(px)-2)/5, 2.0, "each of the five lanes is 2 px at the least")
	}
	// nofrag-watermark's five variants at 11 px: 5 rows of 13 px, not
	// the 5.4 px a 44-pixel strip gave them.
	assert.Equal(t, 3.0+5*13+14, TimelineStripH(5, 11, 3, 14))
	assert.Equal(t, 3.0+5*18+14, TimelineStripH(5, 16, 3, 14))
	assert.Equal(t, TimelineStripH(1, 11, 3, 14), TimelineStripH(0, 11, 3, 14))
}

func TestTheTimeLabelKeepsClearOfTheEndLabels(t *testing.T) {
	b := TimelineBar{Left: 112, Width: 1156}
	right := b.Left + b.Width
	// Presenting at 16 px: "t = 0.300 s" ~90 px, "0.300 s" ~55 px, t at
	// the end (the link's paused t is the strip's end).
	cx, end := b.TimelineTimeLabel(right, 90, 25, 55, 8)
	assert.True(t, end)
	assert.LessOrEqual(t, cx+45, right-55-8, "the time label ends before the end label starts")
	cx, _ = b.TimelineTimeLabel(b.Left, 90, 25, 55, 8)
	assert.GreaterOrEqual(t, cx-45, b.Left+25+8, "and starts after the start label")
	cx, _ = b.TimelineTimeLabel(600, 90, 25, 55, 8)
	assert.Equal(t, 600.0, cx, "in the middle it sits at the time")
	narrow := TimelineBar{Left: 112, Width: 150}
	cx, end = narrow.TimelineTimeLabel(200, 90, 25, 55, 8)
	assert.False(t, end, "too short for three labels: the end label goes")
	assert.LessOrEqual(t, cx+45, narrow.Left+narrow.Width)
}
