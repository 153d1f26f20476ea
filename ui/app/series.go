package app

// series.go samples each run's time series for the charts: PSI memory
// "some" avg10, and the scenario's key counters (the first events of its
// Spec.Counters, ChartCounters of them: thp-thisnode's allocstall_movable
// and pgscan_direct) per simulated second, with their totals so far.
//
// Samples are taken at fixed points of simulated time: the controller
// stops every run exactly at its next sample time (see Controller.advance)
// and reads the counters there, never at a wall-clock moment. Because a
// run's state at a time does not depend on how it was sliced, a run played
// at x1000, stepped, or restored from a permalink has the same points. A
// run that ends between two sample times gets a last sample at its end.
//
// The series keeps at most MaxSamples points: when it is full, neighbouring
// pairs merge (rates weighted by their intervals, PSI taken from the later
// point) and the interval doubles, so a long run keeps its whole history at
// a coarser grain. That, too, depends only on the number of samples.

import (
	"github.com/pagesim/pagesim/engine/scenario"
	"github.com/pagesim/pagesim/engine/sim"
)

const (
	// SampleEvery is the first interval between samples.
	SampleEvery = 250 * sim.Millisecond
	// MaxSamples bounds a series (even, so that pairs merge evenly).
	MaxSamples = 240
)

// Sample is one point of a run's time series.
type Sample struct {
	// T is the simulated time of the sample (the run's own clock).
	T sim.Time
	// PSISome10 is /proc/pressure/memory "some" avg10 (percent) at T.
	PSISome10 float64
	// Rates are the charted counters' events per simulated second over
	// the interval that ends at T, and Totals their counts at T (summed
	// over the run's machines, as the result table sums them).
	Rates  []float64
	Totals []uint64
}

// sampler is one run's series and where it stands.
type sampler struct {
	every   sim.Time // interval between samples now
	next    sim.Time // when the next sample is due
	last    sim.Time // time of the latest sample (0 before the first)
	done    bool     // the run ended and its last sample is taken
	refs    []counterRef
	totals  []uint64 // the counters at the latest sample
	samples []Sample
	// read are the readings every sample was made from, none merged,
	// up to the furthest time the run reached (a run put back keeps
	// those past it): what rebuild makes the series at another time
	// from.
	read []reading
}

// reading is what a sample reads from the run.
type reading struct {
	t      sim.Time
	psi    float64
	totals []uint64
}

func newSampler(refs []counterRef) sampler {
	return sampler{every: SampleEvery, next: SampleEvery, refs: refs, totals: make([]uint64, len(refs))}
}

// stopAt returns the time the run may advance to before its next sample.
func (s *sampler) stopAt(until sim.Time) sim.Time {
	if !s.done && until > s.next {
		return s.next
	}
	return until
}

// observe takes the samples that are due: at the sample time the run
// stands on, or at its end.
func (s *sampler) observe(r *scenario.Run) {
	if s.done {
		return
	}
	now := r.Now()
	switch {
	case r.Done():
		if now > s.last {
			s.take(r.View(), now)
		}
		s.done = true
	case now >= s.next:
		s.take(r.View(), now)
	}
}

func (s *sampler) take(v scenario.View, now sim.Time) {
	rd := reading{t: now, psi: v.PSIAvg(false)[0], totals: make([]uint64, len(s.refs))}
	for i, c := range s.refs {
		rd.totals[i] = uint64(c.read(v))
	}
	if n := len(s.read); n == 0 || s.read[n-1].t < now {
		s.read = append(s.read, rd)
	}
	s.add(rd)
}

// add makes the sample of a reading.
func (s *sampler) add(rd reading) {
	now := rd.t
	sec := float64(now-s.last) / float64(sim.Second)
	p := Sample{T: now, PSISome10: rd.psi, Rates: make([]float64, len(s.refs)), Totals: make([]uint64, len(s.refs))}
	for i, n := range rd.totals {
		p.Totals[i] = n
		p.Rates[i] = float64(n-s.totals[i]) / sec
		s.totals[i] = n
	}
	s.samples = append(s.samples, p)
	s.last = now
	if len(s.samples) >= MaxSamples {
		s.halve()
	}
	s.next = s.last + s.every
}

// halve merges neighbouring samples and doubles the interval.
func (s *sampler) halve() {
	out := s.samples[:0]
	var start sim.Time // start of the pair's first interval
	for i := 0; i+1 < len(s.samples); i += 2 {
		a, b := s.samples[i], s.samples[i+1]
		da, db := float64(a.T-start), float64(b.T-a.T)
		m := b
		if da+db > 0 {
			m.Rates = make([]float64, len(b.Rates))
			for k := range b.Rates {
				m.Rates[k] = (a.Rates[k]*da + b.Rates[k]*db) / (da + db)
			}
		}
		out = append(out, m)
		start = b.T
	}
	if len(s.samples)%2 == 1 {
		out = append(out, s.samples[len(s.samples)-1])
	}
	s.samples = out
	s.every *= 2
}

// rebuild returns the series as it stood when the run was where r is
// (a run put at another time within the time reached): made again from
// the readings up to r's time, merged as they were, so it equals the
// series of a run that went there directly.
func (s *sampler) rebuild(refs []counterRef, r *scenario.Run) sampler {
	out := newSampler(refs)
	out.read = s.read
	now := r.Now()
	for _, rd := range s.read {
		if rd.t > now {
			break
		}
		out.add(rd)
	}
	out.observe(r)
	return out
}
