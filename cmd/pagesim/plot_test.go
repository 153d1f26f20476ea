package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestThePlotsYAxisLeavesRoomAboveTheHighestBand(t *testing.T) {
	line := func(lo, hi []float64) *plotLine {
		l := &plotLine{lo: lo, hi: hi}
		for i := range lo {
			l.x = append(l.x, float64(i))
			l.mean = append(l.mean, (lo[i]+hi[i])/2)
		}
		return l
	}
	for _, tc := range []struct {
		name   string
		lines  []*plotLine
		lo, hi float64
		ok     bool
	}{
		{"a rate starts from zero and ends a twentieth above its highest band",
			[]*plotLine{line([]float64{10, 20}, []float64{12, 30}), line([]float64{15}, []float64{40})}, 0, 42, true},
		{"a metric that goes below zero starts from its lowest band",
			[]*plotLine{line([]float64{-10, 0}, []float64{-5, 30})}, -10, 32, true},
		{"a count that is zero everywhere is one unit tall from zero",
			[]*plotLine{line([]float64{0, 0}, []float64{0, 0})}, 0, 1, true},
		{"lines without a point leave the axis to gonum",
			[]*plotLine{{label: "upstream"}}, 0, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lo, hi, ok := yRange(tc.lines)
			assert.Equal(t, tc.ok, ok)
			assert.InDelta(t, tc.lo, lo, 1e-9)
			assert.InDelta(t, tc.hi, hi, 1e-9)
		})
	}
}
