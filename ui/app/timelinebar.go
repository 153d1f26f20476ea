package app

// timelinebar.go is the geometry of the page's timeline strip (drawn by
// ui/jsbridge under the maps): where a time sits on it, which time a
// point of it means, and which marker a click lands on. Plain Go, so the
// page's arithmetic is tested natively.

import (
	"fmt"
	"math"

	"github.com/pagesim/pagesim/engine/sim"
)

// TimelineBar is the timeline's track: Width pixels from Left, spanning
// 0 to Span.
type TimelineBar struct {
	Left, Width float64
	Span        sim.Time
}

// X is where time t sits on the track.
func (b TimelineBar) X(t sim.Time) float64 {
	if b.Span <= 0 {
		return b.Left
	}
	return b.Left + b.Width*float64(t)/float64(b.Span)
}

// T is the time at x on the track, within 0 to Span, rounded to a
// millisecond (the times a link carries).
func (b TimelineBar) T(x float64) sim.Time {
	if b.Width <= 0 || b.Span <= 0 {
		return 0
	}
	f := min(max((x-b.Left)/b.Width, 0), 1)
	t := sim.Time(math.Round(f * float64(b.Span) / float64(sim.Millisecond)))
	return min(t*sim.Millisecond, b.Span-b.Span%sim.Millisecond)
}

// Nearest returns the marker nearest x within tol pixels (a click on a
// marker jumps to it), preferring stalls, OOM and give-ups to the rest
// where several are as near.
func (b TimelineBar) Nearest(ms []Marker, x, tol float64) (Marker, bool) {
	var best Marker
	bestD := math.Inf(1)
	for _, m := range ms {
		d := math.Abs(b.X(m.T) - x)
		if d > tol {
			continue
		}
		if d < bestD || d == bestD && markRank(m.Kind) < markRank(best.Kind) {
			best, bestD = m, d
		}
	}
	return best, !math.IsInf(bestD, 1)
}

func markRank(k MarkKind) int {
	switch k {
	case MarkOOM, MarkGiveUp:
		return 0
	case MarkStall:
		return 1
	}
	return 2
}

// Describe says what a marker marks, for its tooltip: "upstream: 3
// allocation stalls by 0.240 s".
func (m Marker) Describe(variants []string) string {
	v := "?"
	if m.Variant >= 0 && m.Variant < len(variants) {
		v = variants[m.Variant]
	}
	if m.Kind == MarkPhase {
		return fmt.Sprintf("%s: phase %s ended at %s s", v, m.Label, FormatTime(m.T))
	}
	return fmt.Sprintf("%s: %d x %s by %s s", v, m.N, MarkNames[m.Kind], FormatTime(m.T))
}
