package scenario

import (
	"os"
	"testing"

	"github.com/pagesim/pagesim/engine/sim"
)

// BenchmarkTimelineJump measures a jump on a timeline of thp-thisnode at
// the page's scale (its PageParams), kept with the default policy over the whole
// run: each jump restores the checkpoint before a time drawn at random
// and replays up to it. Reported: the checkpoints kept, their interval
// (ms) and their bytes against the run's.
//
//	go test -run '^$' -bench TimelineJump -benchtime 20x ./engine/scenario/
//
// PAGESIM_UNPACKED=1 measures plain copies instead of packed ones.
func BenchmarkTimelineJump(b *testing.B) {
	s, err := Get("thp-thisnode")
	if err != nil {
		b.Fatal(err)
	}
	var sets []string
	for k, v := range s.PageParams {
		sets = append(sets, k+"="+v)
	}
	st, err := s.Parse(sets)
	if err != nil {
		b.Fatal(err)
	}
	r, err := s.NewRun("upstream", st, 1, 0)
	if err != nil {
		b.Fatal(err)
	}
	tl, err := NewTimeline(r, TimelineOptions{Unpacked: os.Getenv("PAGESIM_UNPACKED") != ""})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := tl.Advance(1<<62, 1<<62); err != nil {
		b.Fatal(err)
	}
	span := tl.Run().Now()
	rnd := sim.NewRand(1)
	for b.Loop() {
		if _, err := tl.At(sim.Time(rnd.Uint64() % uint64(span))); err != nil {
			b.Fatal(err)
		}
	}
	cp, run := tl.Bytes()
	b.ReportMetric(float64(len(tl.Checkpoints())), "checkpoints")
	b.ReportMetric(float64(tl.Every())/float64(sim.Millisecond), "every_ms")
	b.ReportMetric(float64(cp), "checkpoints_B")
	b.ReportMetric(float64(run), "run_B")
}
