package scenario

import (
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/pagesim/pagesim/engine/sim"
)

// BenchmarkTimelineJump measures a jump on a timeline of thp-thisnode
// (or PAGESIM_SCENARIO; its first default variant) at the page's scale
// (its PageParams), kept with
// the default policy over the whole run: each jump restores the
// checkpoint before a time drawn at random and replays up to it.
// Reported: the checkpoints kept, their interval (ms), their bytes
// against the run's, the wall time of the run with them (run_ms; the run
// alone is BenchmarkScenarioRun's work), and a restore's alone (a jump to
// a checkpoint's own time, restore_ms: the rest of a jump is replaying).
//
//	go test -run '^$' -bench TimelineJump -benchtime 20x ./engine/scenario/
//
// PAGESIM_UNPACKED=1 measures plain copies instead of stored ones;
// PAGESIM_UNTIL=20 stops the run at 20 s of simulated time.
func BenchmarkTimelineJump(b *testing.B) {
	id := os.Getenv("PAGESIM_SCENARIO")
	if id == "" {
		id = "thp-thisnode"
	}
	s, err := Get(id)
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
	r, err := s.NewRun(s.DefaultVariants()[0], st, 1, 0)
	if err != nil {
		b.Fatal(err)
	}
	tl, err := NewTimeline(r, TimelineOptions{Unpacked: os.Getenv("PAGESIM_UNPACKED") != ""})
	if err != nil {
		b.Fatal(err)
	}
	until := sim.Time(1 << 62)
	if u, err := strconv.ParseFloat(os.Getenv("PAGESIM_UNTIL"), 64); err == nil {
		until = sim.Time(u * float64(sim.Second))
	}
	start := time.Now()
	if _, err := tl.Advance(until, 1<<62); err != nil {
		b.Fatal(err)
	}
	runMs := float64(time.Since(start).Milliseconds())
	span := tl.Run().Now()
	rnd := sim.NewRand(1)
	for b.Loop() {
		if _, err := tl.At(sim.Time(rnd.Uint64() % uint64(span))); err != nil {
			b.Fatal(err)
		}
	}
	// A jump to a checkpoint's own time is its restore alone.
	cps := tl.Checkpoints()
	start = time.Now()
	for _, at := range cps {
		if _, err := tl.At(at); err != nil {
			b.Fatal(err)
		}
	}
	restoreMs := float64(time.Since(start).Microseconds()) / 1e3 / float64(len(cps))
	// The restore's parts: reading the chunks back and inflating them,
	// then decoding the run.
	var inflate, decode time.Duration
	for _, p := range tl.points {
		if p.stored == nil {
			continue
		}
		t0 := time.Now()
		enc, err := tl.store.Get(p.stored)
		if err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if _, err := DecodeRun(enc); err != nil {
			b.Fatal(err)
		}
		inflate, decode = inflate+t1.Sub(t0), decode+time.Since(t1)
	}
	cp, run := tl.Bytes()
	b.ReportMetric(float64(len(tl.Checkpoints())), "checkpoints")
	b.ReportMetric(float64(tl.Every())/float64(sim.Millisecond), "every_ms")
	b.ReportMetric(float64(cp), "checkpoints_B")
	b.ReportMetric(float64(run), "run_B")
	b.ReportMetric(runMs, "run_ms")
	b.ReportMetric(restoreMs, "restore_ms")
	b.ReportMetric(float64(inflate.Microseconds())/1e3/float64(len(cps)), "inflate_ms")
	b.ReportMetric(float64(decode.Microseconds())/1e3/float64(len(cps)), "decode_ms")
}
