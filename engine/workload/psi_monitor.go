package workload

import (
	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/sim"
)

// PSIMonitor reads /proc/pressure/memory every Interval, as a userspace
// monitor such as oomd polls it (oomd's default interval is one second),
// and keeps what seed 002 reports of it: the peak of the "some" avg10, the
// samples at which avg10 was above Threshold (seconds above it, at a
// one-second interval), and the "some" total at the first and the latest
// read, whose difference over the time between them is the share of time
// some task stalled on memory. Each read is one psi_show(): it collects
// the per-CPU times and updates the averages if a period has passed
// (mm.Machine.PSIUpdate); it costs the read's syscall.
type PSIMonitor struct {
	M         *mm.Machine
	Interval  sim.Time
	Threshold float64
	// Until ends the monitor after the read at or past it (0: never).
	Until sim.Time
	// Counter, if set, is read at each read too (a counter of the
	// engine's, such as order-9 direct reclaim runs): PeakRate is its
	// highest increase between two reads, per second.
	Counter  Counter
	PeakRate float64
	last     uint64

	// PeakAvg10 is the highest some avg10 read; Over counts the reads
	// above Threshold; Samples counts every read.
	PeakAvg10     float64
	Over, Samples uint64
	// First and Last are the times of the first and the latest read,
	// FirstTotal and LastTotal the some total (ns) they read.
	First, Last           sim.Time
	FirstTotal, LastTotal sim.Time
}

// Step reads the pressure file once and sleeps until the next read.
func (p *PSIMonitor) Step(w *sim.World, t *sim.Task) sim.Time {
	t.Charge(SyscallCost)
	p.M.PSIUpdate()
	some := p.M.PSIAvg(false)[0]
	total := p.M.PSI.Total[0]
	if p.Counter != nil {
		c := p.Counter.Count()
		if p.Samples > 0 && t.Now > p.Last {
			p.PeakRate = max(p.PeakRate, float64(c-p.last)/(t.Now-p.Last).Seconds())
		}
		p.last = c
	}
	if p.Samples == 0 {
		p.First, p.FirstTotal = t.Now, total
	}
	p.Samples++
	p.Last, p.LastTotal = t.Now, total
	p.PeakAvg10 = max(p.PeakAvg10, some)
	if some > p.Threshold {
		p.Over++
	}
	if p.Until > 0 && t.Now >= p.Until {
		return sim.Exit
	}
	return t.Now + p.Interval
}

// MeanPct is the percentage of the time between the first and the latest
// read during which some task stalled on memory.
func (p *PSIMonitor) MeanPct() float64 {
	if p.Last <= p.First {
		return 0
	}
	return 100 * float64(p.LastTotal-p.FirstTotal) / float64(p.Last-p.First)
}

// Counter is a counter a program reads (PSIMonitor.Counter): a value, not
// a closure, so that a checkpoint copies it with the run.
type Counter interface {
	Count() uint64
}
