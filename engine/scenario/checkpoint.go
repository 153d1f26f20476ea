package scenario

// checkpoint.go makes a run's checkpoints: copies of everything a run
// holds at one time, from which any later time is reached by running
// forward, with the same bytes as the run that went there directly.
//
// A run is a pure function of its scenario, settings, variant, seed and
// the simulated time reached (run.go), so "the state at t" is well
// defined, and a copy of the run at t1 advanced to t2 is in the state the
// run itself reaches at t2. What a copy must hold is everything the run
// holds: the machine (pages, pageblocks, free lists, pcp lists, zones,
// nodes, LRU, owners, files, slab caches, the block device, swap, PSI,
// every counter, the tracepoint ring, the slow path's traces), the world
// (the clock, the event queue, CPUs and their run queues, every task and
// its program's state, locks, the RNG streams), the scenario's own state
// for the phase (its workers, its snapshots of counters, its results so
// far) and the run's (phase, offset, retired counters). engine/internal/
// deepcopy copies the whole graph by reflection, so a field added to any
// of these types is copied without anyone listing it; what it cannot copy
// (a closure, whose captured variables are out of its reach) it refuses
// with the path to it, and the tests below every scenario's run would
// fail. See docs/ARCHITECTURE.md, "Checkpoints", for the rules that keep
// a run copyable.

import (
	"errors"

	"github.com/pagesim/pagesim/engine/internal/deepcopy"
)

func init() {
	// A scenario's description is immutable once registered; written
	// as bytes (Encode), it is its ID.
	deepcopy.ShareNamed(func(s *Spec) string { return s.ID }, func(id string) (*Spec, bool) {
		s, err := Get(id)
		return s, err == nil
	})
	// The scenarios' own values a run holds behind an interface: their
	// phases, programs and timers (Encode).
	deepcopy.Register[*thpThisnodeRun]()
	deepcopy.Register[*thpThisnodePhase]()
	deepcopy.Register[*nofragRun]()
	deepcopy.Register[*nofragPhase]()
	deepcopy.Register[*nofragFill]()
	deepcopy.Register[*nofragBench]()
	deepcopy.Register[*noretryRun]()
	deepcopy.Register[*noretryPhase]()
	deepcopy.Register[*noretryWarmEnd]()
	deepcopy.Register[*promotedOrderRun]()
	deepcopy.Register[*promotedOrderPhase]()
	deepcopy.Register[*directRuns]()
	deepcopy.Register[*playground]()
	deepcopy.Register[*churnWorker]()
}

// errRecorded refuses to copy a recorded run: its recorder is outside the
// run (it only reads it) and a copy would have to split the recording.
var errRecorded = errors.New("a recorded run (--trace) cannot be checkpointed")

// Clone returns a copy of the run in its present state that shares no
// mutable state with it: advancing either leaves the other as it was.
// It also returns the bytes the copy took (the run's own memory, which
// the checkpoints' budget is measured against).
func (r *Run) Clone() (*Run, int64, error) {
	if r.rec != nil {
		return nil, 0, errRecorded
	}
	return deepcopy.Copy(r)
}

// Digest hashes everything the run holds (deepcopy.Digest): two runs in
// the same state have the same digest.
func (r *Run) Digest() (uint64, error) {
	if r.rec != nil {
		return 0, errRecorded
	}
	return deepcopy.Digest(r)
}

// Encode writes everything the run holds as bytes (deepcopy.Encode) that
// DecodeRun, in this process or another one built from the same source
// (the page's engine worker and its main thread), turns into the run in
// the same state.
func (r *Run) Encode() ([]byte, error) {
	if r.rec != nil {
		return nil, errRecorded
	}
	return deepcopy.Encode(r)
}

// DecodeRun returns the run Encode wrote.
func DecodeRun(b []byte) (*Run, error) { return deepcopy.Decode[Run](b) }

// DecodeRunYield is DecodeRun calling yield between pieces of its work
// (deepcopy.DecodeYield): the page's main thread reads a worker's run
// back over several frames. It stops with an error when yield returns
// false.
func DecodeRunYield(b []byte, yield func() bool) (*Run, error) {
	return deepcopy.DecodeYield[Run](b, yield)
}
