package scenario

// run.go drives a scenario's phases: the one loop that both `pagesim run`
// and the page advance.
//
// A scenario's run is made of phases, each on a freshly booted machine:
// thp-thisnode maps one guest size per phase, most scenarios have a single
// phase. A Run boots phase 0 when it is made and each next phase when the
// one before ends, so that a run of four guest sizes holds one machine at
// a time. It keeps one clock over the phases (the finished phases' end
// times plus the current machine's), sums the vmstat events of the
// machines it has finished with, and keeps each phase's result line.
//
// Advance runs events up to a time and a count. A run's state at a time
// depends only on that time, never on how the calls sliced the way to it:
// a phase ends right after the event that finished its workload (or at its
// fixed end), wherever the slices fall. That is what lets the page, in
// slices of a frame's budget, print the numbers `pagesim run` prints.

import (
	"fmt"
	"strconv"

	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/sim"
)

// Phases is what a scenario's Start returns: the phases of one variant's
// run and the metrics measured over them.
type Phases interface {
	// Len is the number of phases (at least 1).
	Len() int
	// Boot boots phase i (0 <= i < Len): its machine, knobs and tasks.
	// Run calls it once per phase, in order, once the phase before has
	// ended; an error ends the run.
	Boot(i int) (*Phase, error)
	// Metrics returns the metrics measured so far: all of them once the
	// last phase has ended.
	Metrics() map[string]float64
}

// Phase is one machine's part of a run.
type Phase struct {
	// Name names the phase on the page ("34 GB"); Run prefixes its
	// number when there are several ("2/4: 34 GB").
	Name string
	// M is the phase's machine, booted, its tasks created.
	M *mm.Machine
	// Until, if not 0, ends the phase at that time of M's clock (a phase
	// of fixed length, such as the playground's duration).
	Until sim.Time
	// Done, if set, ends the phase as soon as its Done returns true; Run
	// asks after every event. A phase with neither Until nor Done, or
	// whose machine has nothing left to run, ends when its event queue is
	// empty.
	Done PhaseDone
	// Status, if set, says in one line where the phase is ("3.10 of 8.50
	// GiB mapped, 1.2 s").
	Status PhaseStatus
	// End, if set, is called once when the phase ends, on its machine as
	// it stands then. stuck is true when the machine had nothing left to
	// run before Done said so. End reads the phase's results from the
	// counters (for Metrics) and returns the phase's result.
	End PhaseEnd
}

// PhaseDone, PhaseStatus and PhaseEnd are a phase's questions to its
// workload. They are values (usually the scenario's own struct for the
// phase, holding the machine and the workload it reads), never closures:
// a checkpoint (Run.Clone) copies them with the run, and a closure's
// captured variables are out of its reach.
type PhaseDone interface{ Done() bool }

// PhaseStatus says where a phase is (see PhaseDone).
type PhaseStatus interface{ Status() string }

// PhaseEnd ends a phase (see PhaseDone).
type PhaseEnd interface{ End(stuck bool) PhaseResult }

// PhaseResult is what a finished phase leaves.
type PhaseResult struct {
	// Line is the result in the seed's own form ("Finished: 34 GB mapped,
	// 12.274777s elapsed, 2.77GB/s"); reports print it.
	Line string `json:"line"`
	// Headline is the result in a few words for the page's canvas ("34
	// GB: 2.77 GB/s").
	Headline string `json:"headline"`
}

// Run is one variant's run in progress. It is used by one goroutine at a
// time.
type Run struct {
	variant string
	phases  Phases
	n       int // phases in all
	// i is the current phase, cur its state; after the last phase ends,
	// cur stays (its machine is what the page still shows) and done is
	// set.
	i    int
	cur  *Phase
	done bool
	err  error
	// offset is the sum of the finished phases' end times: the run's
	// clock is offset + the current machine's.
	offset sim.Time
	// retired sums the vmstat events of the finished phases' machines,
	// retiredTrace their tracepoint events; retiredStall is the latest
	// stalled allocation on them.
	retired      [mm.NR_VM_EVENT_ITEMS]uint64
	retiredTrace uint64
	retiredStall string
	results      []PhaseResult
	// rec records the run's machines, or is nil (NewRecordedRun).
	rec *mm.Recorder
	// prevTrace is the previous phase's tracepoint ring, kept so that a
	// reader catches the events its machine recorded just before it
	// ended; prevOffset is that machine's offset on the run's clock and
	// prevFirst the run's number of its first event.
	prevTrace  *mm.Trace
	prevOffset sim.Time
	prevFirst  uint64
}

// NewRun starts one variant's run with the given settings and seed: the
// scenario's knobs, then the settings' knobs. maxBytes is the memory
// budget of each machine it boots (0: none; check the whole budget first,
// CheckBudget). It boots the first phase, so a machine that cannot be
// built is an error here.
func (s *Spec) NewRun(variant string, st Settings, seed, maxBytes uint64) (*Run, error) {
	return s.newRun(variant, st, seed, maxBytes, nil)
}

// NewRecordedRun is NewRun with a recorder on every machine the run
// boots (mm.Recorder, rc.Sequential set: the phases on the run's clock),
// for the trace exports; Recording reads it. The recording's budget
// (rc.MaxBytes) comes on top of maxBytes.
func (s *Spec) NewRecordedRun(variant string, st Settings, seed, maxBytes uint64, rc mm.RecordConfig) (*Run, error) {
	rc.Sequential = true
	return s.newRun(variant, st, seed, maxBytes, mm.NewRecorder(rc))
}

func (s *Spec) newRun(variant string, st Settings, seed, maxBytes uint64, rec *mm.Recorder) (*Run, error) {
	if !s.HasVariant(variant) {
		return nil, fmt.Errorf("scenario %s has no variant %q", s.ID, variant)
	}
	knobs := append(append([]Knob(nil), s.Knobs...), st.Knobs...)
	ph, err := s.Start(Config{Variant: variant, Params: st.Values, Knobs: knobs, Seed: seed, MaxBytes: maxBytes, Recorder: rec})
	if err != nil {
		return nil, err
	}
	r := &Run{variant: variant, phases: ph, n: ph.Len(), rec: rec}
	if r.n < 1 {
		return nil, fmt.Errorf("scenario %s has no phase to run", s.ID)
	}
	if r.cur, err = ph.Boot(0); err != nil {
		return nil, err
	}
	r.nameRecorded()
	return r, nil
}

// nameRecorded names the machine the recorder holds last after the
// current phase.
func (r *Run) nameRecorded() {
	if r.rec != nil {
		r.rec.Name(r.Phase())
	}
}

// Recording returns what the run's recorder holds, up to the run's time
// (nil for a run made without one).
func (r *Run) Recording() *mm.Recording {
	if r.rec == nil {
		return nil
	}
	return r.rec.Recording()
}

// Machine is the machine of the phase running now (or of the last, once
// the run has ended), for `pagesim proc --at`'s files. The page reads a
// run through View.
func (r *Run) Machine() *mm.Machine { return r.cur.M }

// Variant is the run's variant.
func (r *Run) Variant() string { return r.variant }

// Now is the simulated time the run has reached, over all its phases.
func (r *Run) Now() sim.Time { return r.offset + r.cur.M.World.Now() }

// Done reports whether the run has ended: its last phase ended, or a
// phase could not boot (Err).
func (r *Run) Done() bool { return r.done }

// Err says why the run ended early: a phase that could not boot.
func (r *Run) Err() error { return r.err }

// Duration is the time at which the run ends, once that is known: Now
// once it has ended, the fixed end of a last phase with one, 0 otherwise.
func (r *Run) Duration() sim.Time {
	switch {
	case r.done:
		return r.Now()
	case r.i == r.n-1 && r.cur.Until > 0:
		return r.offset + r.cur.Until
	}
	return 0
}

// Advance runs the events with times up to until (on the run's clock),
// at most maxEvents of them, and returns how many it ran. When it returns
// fewer than maxEvents, the run has reached until or has ended. A phase
// that ends within the call is followed by the next one's boot, whose
// events count from the same budget.
func (r *Run) Advance(until sim.Time, maxEvents int) int {
	total := 0
	for !r.done && total < maxEvents && r.Now() < until {
		ph, w := r.cur, r.cur.M.World
		local := until - r.offset
		if ph.Until > 0 {
			local = min(local, ph.Until)
		}
		stuck := false
		ended := ph.Until > 0 && w.Now() >= ph.Until
		if !ended && ph.Until == 0 && !w.Pending() {
			ended, stuck = true, ph.Done != nil
		}
		if !ended {
			budget := maxEvents - total
			n := 0
			w.RunUntil(local, func() bool {
				n++
				switch {
				case ph.Done != nil && ph.Done.Done():
					ended = true
				case ph.Until == 0 && !w.Pending():
					ended, stuck = true, ph.Done != nil
				}
				return ended || n >= budget
			})
			total += n
			ended = ended || (ph.Until > 0 && w.Now() >= ph.Until)
		}
		if ended {
			r.endPhase(stuck)
		}
	}
	return total
}

// endPhase records the current phase's result and boots the next one.
func (r *Run) endPhase(stuck bool) {
	ph := r.cur
	if ph.End != nil {
		r.results = append(r.results, ph.End.End(stuck))
	}
	if r.i == r.n-1 {
		r.done = true
		return
	}
	next, err := r.phases.Boot(r.i + 1)
	if err != nil {
		r.err = fmt.Errorf("phase %d of %d (after %s) could not boot: %v", r.i+2, r.n, ph.Name, err)
		r.done = true
		return
	}
	m := ph.M
	if st, ok := m.LastStallAt(r.offset); ok {
		r.retiredStall = st
	}
	r.prevTrace, r.prevOffset, r.prevFirst = m.Trace, r.offset, r.retiredTrace
	r.offset += m.World.Now()
	for e := range r.retired {
		r.retired[e] += m.Event(mm.VMEventItem(e))
	}
	r.retiredTrace += m.Trace.Written
	r.i++
	r.cur = next
	r.nameRecorded()
}

// Metrics returns the metrics measured so far.
func (r *Run) Metrics() map[string]float64 { return r.phases.Metrics() }

// Results returns the results of the phases that have ended, in order.
func (r *Run) Results() []PhaseResult { return r.results }

// Lines returns the result lines of the phases that have ended.
func (r *Run) Lines() []string {
	out := make([]string, len(r.results))
	for i, p := range r.results {
		out[i] = p.Line
	}
	return out
}

// Phase names the current phase, with its number when the run has
// several: "2/4: 34 GB".
func (r *Run) Phase() string {
	if r.n == 1 {
		return r.cur.Name
	}
	return strconv.Itoa(r.i+1) + "/" + strconv.Itoa(r.n) + ": " + r.cur.Name
}

// Status says in one line where the run is: the current phase's own
// account, "done" at the end, or why it stopped.
func (r *Run) Status() string {
	switch {
	case r.err != nil:
		return "failed: " + r.err.Error()
	case r.done:
		return "done"
	case r.cur.Status != nil:
		return r.cur.Status.Status()
	}
	return ""
}

// View returns the run's read-only view.
func (r *Run) View() View { return runView{r} }
