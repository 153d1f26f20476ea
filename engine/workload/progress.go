package workload

import "github.com/pagesim/pagesim/engine/sim"

// Progress is what every task program of this package reports: when it
// started and finished, how many operations it completed and how many
// failed. Scripts and scenarios read it; a program only writes it.
type Progress struct {
	Started, Done bool
	// Start and Finish are the simulated times of the first step and of
	// the end (Finish is set once Done).
	Start, Finish sim.Time
	// Ops counts completed operations (faults, pages written, slabs
	// allocated...), Failed the ones the kernel refused.
	Ops, Failed uint64
}

// Status returns p, so that programs embedding Progress share a reader.
func (p *Progress) Status() *Progress { return p }

// begin marks the first step.
func (p *Progress) begin(t *sim.Task) {
	if !p.Started {
		p.Started = true
		p.Start = t.Now
	}
}

// finish marks the end and returns sim.Exit for the step.
func (p *Progress) finish(t *sim.Task) sim.Time {
	p.Done = true
	p.Finish = t.Now
	return sim.Exit
}

// Elapsed returns the time from the first step to the end, or to now while
// the program runs.
func (p *Progress) Elapsed(now sim.Time) sim.Time {
	switch {
	case !p.Started:
		return 0
	case p.Done:
		return p.Finish - p.Start
	}
	return now - p.Start
}

// next returns when a program that waits interval between steps runs again.
func next(t *sim.Task, interval sim.Time) sim.Time {
	if interval > 0 {
		return t.Now + interval
	}
	return t.Now
}
