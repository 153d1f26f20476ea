package scenario

// timeline.go keeps a run's checkpoints as it goes, so that any time it
// has reached can be reached again: restore the latest checkpoint at or
// before that time and advance the copy to it (checkpoint.go says why the
// copy then holds exactly what the run held).
//
// How many to keep is a trade between memory and the time a jump takes:
// a jump replays at most one interval. Checkpoints are taken at the
// multiples of an interval of simulated time. Each is everything the run
// holds written as bytes (deepcopy.EncodePlanes: the large pointer-free
// arrays, a machine's pages and pageblocks, as byte planes of
// differences) and kept in the timeline's deepcopy.Store, which cuts the
// bytes into chunks and keeps each distinct chunk once, compressed: a
// checkpoint costs what changed since the ones before it, not its whole
// size. With Unpacked a checkpoint is a plain copy instead, as large as
// the run and ready to run without decoding. The budget is a
// fraction of the run's own memory (TimelineOptions.Budget, 0.25), but
// never fewer than MinCheckpoints (16) over the run: while the
// checkpoints' bytes pass the budget and there are more than the
// minimum, the earliest checkpoint at an odd multiple of the interval is
// dropped, and when none is left the interval doubles, so the interval
// adapts to the run's length and size and no two checkpoints are more
// than twice it apart. Where one checkpoint is larger than the budget
// over the minimum (a plain copy is as large as the run, so 16 of them
// are 16 times it), the minimum wins and the budget is exceeded;
// docs/PERFORMANCE.md has the figures of stored ones.

import (
	"errors"
	"fmt"
	"slices"

	"github.com/pagesim/pagesim/engine/internal/deepcopy"
	"github.com/pagesim/pagesim/engine/sim"
)

// TimelineOptions are a timeline's policy; the zero value takes the
// defaults.
type TimelineOptions struct {
	// Budget is the checkpoints' memory as a fraction of the run's own
	// (default 0.25).
	Budget float64
	// MinCheckpoints is the fewest checkpoints kept over the run, the
	// start's included (default 16).
	MinCheckpoints int
	// Every is the first interval (default 100 ms of simulated time);
	// it doubles as the budget asks.
	Every sim.Time
	// Unpacked keeps each checkpoint as a plain copy (Run.Clone),
	// ready to run but as large as the run, instead of stored bytes.
	Unpacked bool
	// TakeBytes bounds the work of taking checkpoints (the engine
	// workers' catch-up to a link's time, which must not take much
	// longer for them): each checkpoint writes the whole run, so once
	// the checkpoints taken have written half of TakeBytes the interval
	// doubles, and again at each half of what is left, and once they
	// have written TakeBytes no more are taken (0: no bound). The
	// checkpoints are dense early in the run and sparser later, for a
	// run whose end is not known in advance.
	TakeBytes int64
	// LateStart takes the first checkpoint, the run's start, when the
	// run first moves or is adopted, not in NewTimeline. The run stands
	// at its start until then, so it is the same checkpoint; and a run
	// that is adopted first (the page's engine workers catch up to a
	// link's time and send their checkpoints, the start's among them)
	// never writes it: the page's boot wrote three runs' starts, 73% of
	// its NewController on thp-thisnode, for the workers' copies to
	// replace. A page opened and never played writes none.
	LateStart bool
}

// packMinBytes is the smallest array a packed copy (deepcopy.Pack, which
// the tests and benchmarks compare with the stored checkpoints)
// compresses: 512 bytes, as EncodePlanes' planes.
const packMinBytes = 512

func (o *TimelineOptions) defaults() {
	if o.Budget <= 0 {
		o.Budget = 0.25
	}
	if o.MinCheckpoints <= 0 {
		o.MinCheckpoints = 16
	}
	if o.Every <= 0 {
		o.Every = 100 * sim.Millisecond
	}
}

// Timeline is a run going forward and its checkpoints. It is used by one
// goroutine at a time.
type Timeline struct {
	opt  TimelineOptions
	live *Run
	// points are the checkpoints at increasing times, points[0] at the
	// run's start; every point but the first is at a multiple of every.
	// It is empty only while the start is still to be taken
	// (TimelineOptions.LateStart; the live run stands there).
	points []checkpoint
	every  sim.Time
	// store holds the stored checkpoints' bytes.
	store *deepcopy.Store
	// bytes is the checkpoints' memory (the store's, or the plain
	// copies' sum); runBytes is the run's own memory as the latest
	// checkpoint measured it.
	bytes, runBytes int64
	// frontier is the furthest time the live run has reached (a Seek
	// moves the live run back, not the frontier).
	frontier sim.Time
	// written is what the checkpoints taken have written (each its
	// whole run), and doubleAt what makes the interval double next
	// (TimelineOptions.TakeBytes).
	written, doubleAt int64
}

type checkpoint struct {
	at sim.Time
	// run is a plain copy, stored the bytes in the store (one of the
	// two).
	run    *Run
	stored *deepcopy.Stored
	// bytes is a plain copy's size, or what storing it added.
	bytes int64
}

// NewTimeline starts keeping checkpoints of r (a run at its start, not
// recorded), taking the first one now, or, with LateStart, when r first
// moves or is adopted.
func NewTimeline(r *Run, opt TimelineOptions) (*Timeline, error) {
	opt.defaults()
	tl := &Timeline{opt: opt, live: r, every: opt.Every, store: deepcopy.NewStore(), doubleAt: opt.TakeBytes / 2}
	if opt.LateStart {
		if !opt.Unpacked && r.rec != nil {
			return nil, errRecorded
		}
		return tl, nil
	}
	if err := tl.take(false); err != nil {
		return nil, err
	}
	return tl, nil
}

// start takes the first checkpoint where the live run stands, its start,
// if it is still to be taken (LateStart).
func (tl *Timeline) start() error {
	if len(tl.points) > 0 {
		return nil
	}
	return tl.take(false)
}

// Run is the live run, the one Advance moves forward (a Seek replaces
// it). Its state is the
// timeline's latest; read it, do not advance it.
func (tl *Timeline) Run() *Run { return tl.live }

// Every is the interval between checkpoints now.
func (tl *Timeline) Every() sim.Time { return tl.every }

// Checkpoints lists the checkpoints' times (the start's, still to be
// taken with LateStart, among them: the live run stands there).
func (tl *Timeline) Checkpoints() []sim.Time {
	if len(tl.points) == 0 {
		return []sim.Time{tl.live.Now()}
	}
	out := make([]sim.Time, len(tl.points))
	for i, p := range tl.points {
		out[i] = p.at
	}
	return out
}

// Bytes is the checkpoints' memory, and the run's own as last measured.
func (tl *Timeline) Bytes() (checkpoints, run int64) { return tl.bytes, tl.runBytes }

// take takes a checkpoint where the live run stands; forced, it does not
// count towards the interval's doubling by TakeBytes.
func (tl *Timeline) take(forced bool) error {
	cp := checkpoint{at: tl.live.Now()}
	if tl.opt.Unpacked {
		c, n, err := tl.live.Clone()
		if err != nil {
			return err
		}
		cp.run, cp.bytes, tl.runBytes = c, n, n
		tl.bytes += n
	} else {
		if tl.live.rec != nil {
			return errRecorded
		}
		enc, graph, err := deepcopy.EncodePlanes(tl.live)
		if err != nil {
			return err
		}
		tl.written += int64(len(enc))
		if !forced && tl.opt.TakeBytes > 0 && tl.written >= tl.doubleAt && tl.doubleAt < tl.opt.TakeBytes {
			tl.every *= 2
			tl.doubleAt += (tl.opt.TakeBytes - tl.doubleAt + 1) / 2
		}
		cp.stored = tl.store.Put(enc)
		cp.bytes, tl.runBytes = cp.stored.New, graph
		tl.bytes = tl.store.Bytes()
	}
	tl.points = append(tl.points, cp)
	tl.fit()
	return nil
}

// fit thins the checkpoints while their bytes pass the budget and there
// are more than the minimum.
func (tl *Timeline) fit() {
	for tl.bytes > int64(tl.opt.Budget*float64(tl.runBytes)) && len(tl.points) > tl.opt.MinCheckpoints {
		tl.thin()
	}
}

// drop removes point i.
func (tl *Timeline) drop(i int) {
	p := tl.points[i]
	if p.stored != nil {
		tl.store.Drop(p.stored)
		tl.bytes = tl.store.Bytes()
	} else {
		tl.bytes -= p.bytes
	}
	tl.points = slices.Delete(tl.points, i, i+1)
}

// thin drops the earliest checkpoint at an odd multiple of the interval
// (one the doubled interval would not keep); when none is left, the
// interval doubles. Dropping one at a time keeps the count at the
// minimum or above and the bytes within the budget wherever the minimum
// fits in it, and no two kept checkpoints are more than twice the
// interval apart.
func (tl *Timeline) thin() {
	for i, p := range tl.points {
		if i > 0 && p.at%(2*tl.every) != 0 {
			tl.drop(i)
			return
		}
	}
	tl.every *= 2
}

// Advance moves the live run forward to until, by at most maxEvents
// events, as Run.Advance does, taking a checkpoint at every multiple of
// the interval it reaches. It returns the events run.
func (tl *Timeline) Advance(until sim.Time, maxEvents int) (int, error) {
	total := 0
	if tl.live.Now() < until && !tl.live.Done() && maxEvents > 0 {
		if err := tl.start(); err != nil {
			return 0, err
		}
	}
	for !tl.live.Done() && total < maxEvents && tl.live.Now() < until {
		next := (tl.live.Now()/tl.every + 1) * tl.every
		total += tl.live.Advance(min(until, next), maxEvents-total)
		// After a Seek back, the checkpoints up to the frontier are
		// there already (the run goes the same way again).
		spent := tl.opt.TakeBytes > 0 && tl.written >= tl.opt.TakeBytes
		if tl.live.Now() >= next && !tl.live.Done() && next > tl.points[len(tl.points)-1].at && !spent {
			if err := tl.take(false); err != nil {
				return total, err
			}
		}
		tl.frontier = max(tl.frontier, tl.live.Now())
	}
	return total, nil
}

// Seek makes the live run the run at time t (0 <= t <= the furthest time
// the timeline has reached; At says how): the way back in time. The
// checkpoints stay: a run advanced again from t passes through the same
// states, so Advance takes none until it goes past them.
func (tl *Timeline) Seek(t sim.Time) error {
	r, err := tl.At(t)
	if err != nil {
		return err
	}
	tl.live = r
	return nil
}

// Adopt makes r the live run: the same run as the live one (same
// scenario, settings, variant and seed), advanced elsewhere to a later
// time (the page's engine workers catch up to a link's time and send the
// run back). A checkpoint is taken where r stands; a time between the
// live run's and r's is then reached from the checkpoint before it, the
// start if none, by replaying.
func (tl *Timeline) Adopt(r *Run) error {
	if r.Now() < tl.live.Now() {
		return fmt.Errorf("the run to adopt is at %v, behind the live run's %v", r.Now(), tl.live.Now())
	}
	if err := tl.start(); err != nil {
		return err
	}
	tl.frontier = max(tl.frontier, tl.live.Now())
	tl.live = r
	if r.Now() > tl.points[len(tl.points)-1].at && !r.Done() {
		if err := tl.take(false); err != nil {
			return err
		}
	}
	tl.frontier = max(tl.frontier, r.Now())
	return nil
}

// CheckpointNow takes a checkpoint where the live run stands, unless the
// latest one is there or the run has ended, whatever TakeBytes says: the
// page's engine worker takes one where its catch-up ends, so that the
// page, which adopts the run there, does not (a checkpoint writes the
// whole run: at scale 1, seconds of the main thread's time).
func (tl *Timeline) CheckpointNow() error {
	if err := tl.start(); err != nil {
		return err
	}
	if tl.live.Now() <= tl.points[len(tl.points)-1].at || tl.live.Done() {
		return nil
	}
	return tl.take(true)
}

// Past is a timeline's stored checkpoints as they cross from one process
// to another (gob): the page's engine worker keeps a timeline as it
// catches a run up and sends its past with the run, so that the page's
// timeline goes back from the nearest checkpoint, not from the start.
type Past struct {
	Every sim.Time
	// At are the checkpoints' times; Lists and Sizes their bytes as
	// chunks of Chunks (deepcopy.Store's Export).
	At     []sim.Time
	Lists  [][]uint32
	Sizes  []int
	Chunks []deepcopy.WireChunk
}

// Past returns the timeline's checkpoints to send (stored ones only).
func (tl *Timeline) Past() (Past, error) {
	if err := tl.start(); err != nil {
		return Past{}, err
	}
	p := Past{Every: tl.every}
	var sts []*deepcopy.Stored
	for _, cp := range tl.points {
		if cp.stored == nil {
			return Past{}, errors.New("a timeline of plain copies has no past to send")
		}
		p.At = append(p.At, cp.at)
		sts = append(sts, cp.stored)
	}
	p.Chunks, p.Lists, p.Sizes = tl.store.Export(sts)
	return p, nil
}

// AdoptPast adopts r as Adopt does, with the checkpoints past holds (the
// same run's, sent with it): those after the timeline's latest
// checkpoint join it, so a time before r's is reached from the nearest
// of them. The interval becomes the larger of the two, and the budget
// thins them as it thins its own.
func (tl *Timeline) AdoptPast(r *Run, past Past) error {
	if tl.opt.Unpacked {
		return errors.New("a timeline of plain copies cannot adopt stored checkpoints")
	}
	if r.Now() < tl.live.Now() {
		return fmt.Errorf("the run to adopt is at %v, behind the live run's %v", r.Now(), tl.live.Now())
	}
	if len(past.At) != len(past.Lists) || past.Every <= 0 {
		return errors.New("a past whose times and checkpoints do not match")
	}
	for i, at := range past.At {
		if at < 0 || at > r.Now() || i > 0 && at <= past.At[i-1] {
			return errors.New("a past whose times are out of order or past its run's")
		}
	}
	sts, err := tl.store.Import(past.Chunks, past.Lists, past.Sizes)
	if err != nil {
		return err
	}
	// A timeline whose start is still to be taken (LateStart) takes
	// the past's, when the past starts where the live run stands.
	last := sim.Time(-1)
	if len(tl.points) > 0 {
		last = tl.points[len(tl.points)-1].at
	} else if len(past.At) == 0 || past.At[0] != tl.live.Now() {
		if err := tl.start(); err != nil {
			return err
		}
		last = tl.points[0].at
	}
	for i, st := range sts {
		if past.At[i] <= last {
			tl.store.Drop(st)
			continue
		}
		tl.points = append(tl.points, checkpoint{at: past.At[i], stored: st, bytes: st.New})
	}
	tl.bytes = tl.store.Bytes()
	tl.every = max(tl.every, past.Every)
	if err := tl.Adopt(r); err != nil {
		return err
	}
	tl.fit()
	return nil
}

// Frontier is the furthest time the timeline's live run has reached.
func (tl *Timeline) Frontier() sim.Time { return max(tl.frontier, tl.live.Now()) }

// errAhead refuses a time the live run has not reached.
var errAhead = errors.New("the run has not reached that time")

// At returns a new run in the state the run had at time t (0 <= t <=
// Frontier): a copy of the latest checkpoint at or before t, advanced to
// t. The copy is the caller's.
func (tl *Timeline) At(t sim.Time) (*Run, error) {
	if t < 0 || t > tl.Frontier() {
		return nil, fmt.Errorf("%w: %v is outside 0 to %v", errAhead, t, tl.Frontier())
	}
	if err := tl.start(); err != nil {
		return nil, err
	}
	i := len(tl.points) - 1
	for i > 0 && tl.points[i].at > t {
		i--
	}
	var r *Run
	var err error
	if p := tl.points[i]; p.stored != nil {
		var b []byte
		if b, err = tl.store.Get(p.stored); err == nil {
			r, err = DecodeRun(b)
		}
	} else {
		r, _, err = p.run.Clone()
	}
	if err != nil {
		return nil, err
	}
	for r.Now() < t && !r.Done() {
		r.Advance(t, 1<<62)
	}
	return r, nil
}
