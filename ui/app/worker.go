package app

// worker.go is the work an engine worker does for the page, and the
// page's side of it: a variant's run advanced flat out to a time off the
// main thread (the engine-only binary in wasm/engine runs RunWorkerJob in
// a Web Worker), then sent whole to the main thread, which takes it in
// place of its own run (takeWorkerRuns). What crosses is bytes: the
// run as engine/scenario's Run.Encode writes it, its series and
// tracepoint log as the sampler and the trace ring kept them while it
// ran, and the checkpoints the worker's timeline took on the way
// (scenario.Past), so that the page goes back from the nearest of them. The worker takes the samples at the same simulated times as the
// controller does (stopAt, observe), so the series, like the run, are
// those of a run advanced on the main thread.

import (
	"bytes"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"fmt"
	"iter"
	"time"

	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/scenario"
	"github.com/pagesim/pagesim/engine/sim"
)

// WorkerJob asks an engine worker for one variant's run at a time.
type WorkerJob struct {
	ID       uint64            `json:"id"`
	Scenario string            `json:"scenario"`
	Params   map[string]string `json:"params"`
	Knobs    []scenario.Knob   `json:"knobs"`
	Variant  string            `json:"variant"`
	Seed     uint64            `json:"seed"`
	MaxBytes uint64            `json:"maxBytes"`
	// Until is the simulated time (ns) to run to; the run stops
	// earlier if it ends.
	Until sim.Time `json:"until"`
}

// WorkerReply is what a worker says about a job: how far it is (Now),
// and once it is over, the run (Payload) or why not (Err). A payload
// held outside Go's memory (the page's: a worker's transferred
// ArrayBuffer) comes as its Size and CopyPayload instead, which copies
// its bytes from off into dst: the controller copies it in pieces over
// several ticks.
type WorkerReply struct {
	ID          uint64
	Now         sim.Time
	Over        bool
	Err         string
	Payload     []byte
	Size        int
	CopyPayload func(dst []byte, off int)
}

// Workers runs jobs off the main thread: the page's engine workers
// (jsbridge). Start and Cancel return at once; Poll returns the replies
// that arrived since the last call. All three are called by the
// controller's owner goroutine.
type Workers interface {
	Start(job WorkerJob)
	Cancel(id uint64)
	Poll() []WorkerReply
}

// workerSeries is a sampler and a trace ring as they cross.
type workerSeries struct {
	Every, Next, Last sim.Time
	Done              bool
	Totals            []uint64
	Samples           []Sample
	Read              uint64
	Trace             []mm.TraceEvent
	// Readings are the sampler's readings and Marks the marker grid's
	// points (timetravel.go): what the timeline goes back with.
	Readings []wireReading
	Marks    []wireMark
	// Past is the worker's checkpoints (none if its timeline failed).
	Past *scenario.Past
}

// workerTakeBytes bounds what a worker's checkpoints write over a
// catch-up (scenario.TimelineOptions.TakeBytes): each writes the whole
// run, so a run of the page's scale (thp-thisnode at 0.05: 14.5 MB)
// gets one every 100 ms of simulated time for its first 1.7 s, then
// sparser ones, about 35 in all, and one at scale 1 (276 MB) two, at 0
// and 200 ms, where more would add more than the catch-up's own time;
// then, beyond the bound, the one where the run stands.
const workerTakeBytes = 512 << 20

// wireReading is a reading as it crosses.
type wireReading struct {
	T      sim.Time
	PSI    float64
	Totals []uint64
}

// wireMark is a marker grid's point as it crosses.
type wireMark struct {
	T          sim.Time
	N          [nrMarkKinds - 1]uint64
	PhaseStart sim.Time
	Phase      string
}

// errJobStopped is RunWorkerJob's error when its caller stopped it.
var errJobStopped = errors.New("stopped")

// RunWorkerJob boots the job's run and advances it to job.Until (or its
// end), sampling its series as the controller does, and returns the
// payload the page takes it from. yield is called between slices of
// about 64k events with the run's time (job.Until once the run has
// ended: it will go no further); when it returns false the job stops
// with an error.
func RunWorkerJob(cat *Catalog, job WorkerJob, yield func(now sim.Time) bool) ([]byte, error) {
	spec, ok := cat.Lookup(job.Scenario)
	if !ok {
		return nil, fmt.Errorf("no scenario %q", job.Scenario)
	}
	st, err := spec.ParseMap(job.Params, job.Knobs)
	if err != nil {
		return nil, err
	}
	r, err := spec.NewRun(job.Variant, st, job.Seed, job.MaxBytes)
	if err != nil {
		return nil, err
	}
	// The timeline's checkpoints as the page's would take them, fewer
	// where the run is large (workerTakeBytes); a run it cannot keep
	// still runs, without them.
	tl, tlErr := scenario.NewTimeline(r, scenario.TimelineOptions{TakeBytes: workerTakeBytes})
	sp := newSampler(chartRefs(spec))
	var tr traceRing
	var marks markGrid
	v := r.View()
	tr.fill(v)
	for {
		sp.observe(r)
		marks.observe(r)
		until := job.Until
		if d := r.Duration(); d > 0 && until > d {
			until = d
		}
		until = marks.stopAt(r.Now(), sp.stopAt(until))
		if r.Now() >= until || r.Done() {
			break
		}
		before := r.Now()
		var n int
		if tlErr == nil {
			n, tlErr = tl.Advance(until, 1<<16)
		} else {
			n = r.Advance(until, 1<<16)
		}
		tr.fill(v)
		sp.observe(r)
		marks.observe(r)
		if n == 0 && r.Now() == before && !r.Done() {
			return nil, fmt.Errorf("the run does not move at %v", r.Now())
		}
		// A run that has ended is as far towards Until as it goes.
		now := r.Now()
		if r.Done() {
			now = job.Until
		}
		if !yield(now) {
			return nil, errJobStopped
		}
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	enc, err := r.Encode()
	if err != nil {
		return nil, err
	}
	ws := workerSeries{Every: sp.every, Next: sp.next, Last: sp.last, Done: sp.done,
		Totals: sp.totals, Samples: sp.samples, Read: tr.read, Trace: tr.events()}
	for _, rd := range sp.read {
		ws.Readings = append(ws.Readings, wireReading{rd.t, rd.psi, rd.totals})
	}
	for _, p := range marks.points {
		ws.Marks = append(ws.Marks, wireMark{p.t, p.n, p.phaseStart, p.phase})
	}
	if tlErr == nil {
		// The checkpoint where the run stands is taken here, not by
		// the page that adopts the run (Timeline.Adopt takes none
		// where the latest is): it writes the whole run.
		tlErr = tl.CheckpointNow()
	}
	if tlErr == nil {
		if past, err := tl.Past(); err == nil {
			ws.Past = &past
		}
	}
	var b bytes.Buffer
	b.Write(make([]byte, 8))
	if err := gob.NewEncoder(&b).Encode(&ws); err != nil {
		return nil, err
	}
	out := b.Bytes()
	binary.LittleEndian.PutUint64(out, uint64(len(out)-8))
	return append(out, enc...), nil
}

// workerRun is a worker's run as the page reads it back.
type workerRun struct {
	run     *scenario.Run
	sampler sampler
	trace   traceRing
	marks   markGrid
	past    *scenario.Past
}

// decodeWorkerRun reads a payload of RunWorkerJob: the run, its
// sampler and trace ring for the charts' refs, and its checkpoints. It
// calls yield between pieces of its work (scenario.DecodeRunYield) and
// stops with an error when yield returns false.
func decodeWorkerRun(payload []byte, refs []counterRef, yield func() bool) (workerRun, error) {
	if len(payload) < 8 {
		return workerRun{}, errors.New("a worker's reply is cut short")
	}
	n := binary.LittleEndian.Uint64(payload)
	if n > uint64(len(payload)-8) {
		return workerRun{}, errors.New("a worker's reply is cut short")
	}
	var ws workerSeries
	if err := gob.NewDecoder(bytes.NewReader(payload[8 : 8+n])).Decode(&ws); err != nil {
		return workerRun{}, fmt.Errorf("a worker's series: %w", err)
	}
	if len(ws.Totals) != len(refs) {
		return workerRun{}, errors.New("a worker's series has other counters")
	}
	if !yield() {
		return workerRun{}, errors.New("a worker's run: stopped by its caller")
	}
	r, err := scenario.DecodeRunYield(payload[8+n:], yield)
	if err != nil {
		return workerRun{}, err
	}
	sp := sampler{every: ws.Every, next: ws.Next, last: ws.Last, done: ws.Done, refs: refs, totals: ws.Totals, samples: ws.Samples}
	for _, rd := range ws.Readings {
		if len(rd.Totals) != len(refs) {
			return workerRun{}, errors.New("a worker's readings have other counters")
		}
		sp.read = append(sp.read, reading{rd.T, rd.PSI, rd.Totals})
	}
	var marks markGrid
	for _, p := range ws.Marks {
		marks.points = append(marks.points, markPoint{p.T, p.N, p.PhaseStart, p.Phase})
	}
	var tr traceRing
	for i := range ws.Trace {
		tr.push(&ws.Trace[i])
	}
	tr.read = ws.Read
	return workerRun{r, sp, tr, marks, ws.Past}, nil
}

// events returns the kept events, oldest first.
func (r *traceRing) events() []mm.TraceEvent {
	l := r.log(0)
	out := make([]mm.TraceEvent, l.Len())
	for i := range out {
		out[i] = *l.At(i)
	}
	return out
}

// startRemote hands the catch-up to the goal to the workers, a job per
// run, when there are workers and the runs can cross (a recorded run
// cannot: its recorder is outside it).
func (c *Controller) startRemote() {
	if c.opt.Workers == nil || c.record || len(c.runs) == 0 || c.goal <= 0 {
		return
	}
	c.readBack = 0
	c.remote = make([]remoteJob, len(c.runs))
	for i := range c.runs {
		c.jobSeq++
		c.remote[i] = remoteJob{id: c.jobSeq}
		c.opt.Workers.Start(WorkerJob{ID: c.jobSeq, Scenario: c.st.Scenario, Params: copyParams(c.st.Params),
			Knobs: append([]scenario.Knob(nil), c.st.Knobs...), Variant: c.st.Variants[i], Seed: c.st.Seed,
			MaxBytes: PageMaxBytes / uint64(len(c.runs)), Until: c.goal})
	}
}

// cancelRemote drops the jobs under way (the runs restart).
func (c *Controller) cancelRemote() {
	for _, j := range c.remote {
		if !j.over && !j.arrived {
			c.opt.Workers.Cancel(j.id)
		}
	}
	if c.reader != nil {
		c.reader.stop()
		c.reader = nil
	}
	c.remote = nil
}

// runReader reads a worker's run back over as many ticks as it takes:
// the decoding runs as a coroutine (iter.Pull) that gives the tick back
// once the tick's budget is spent (deadline), so that the main thread
// draws its frames meanwhile (a run at scale 1 is 276 MB of bytes).
type runReader struct {
	job      int
	deadline time.Duration
	next     func() (struct{}, bool)
	stop     func()
	wr       workerRun
	err      error
}

// newReader starts reading job i's payload back: copying it first, in
// pieces of payloadPiece bytes, if it is held outside Go's memory.
func (c *Controller) newReader(i int) *runReader {
	rd := &runReader{job: i}
	j, refs, wall := c.remote[i], chartRefs(c.spec), c.opt.Wall
	rd.next, rd.stop = iter.Pull(func(yield func(struct{}) bool) {
		pause := func() bool { return wall() < rd.deadline || yield(struct{}{}) }
		payload := j.payload
		if j.copyPayload != nil {
			payload = make([]byte, j.size)
			for off := 0; off < j.size; off += payloadPiece {
				if !pause() {
					rd.err = errors.New("stopped by its caller")
					return
				}
				j.copyPayload(payload[off:min(off+payloadPiece, j.size)], off)
			}
		}
		rd.wr, rd.err = decodeWorkerRun(payload, refs, pause)
	})
	return rd
}

// payloadPiece is how much of a payload held outside Go's memory is
// copied between two looks at the tick's budget.
const payloadPiece = 1 << 20

// pollRemote reads the workers' replies and reads each run back as it
// arrives, one at a time, within the tick's budget (runReader: a run
// takes as many ticks as it needs; its bytes are dropped once read);
// once every run is read it puts them in place of the controller's, all
// at once, or, if one failed, leaves the catch-up to the main thread
// (the runs are still at their start).
func (c *Controller) pollRemote(budget time.Duration) {
	start := c.opt.Wall()
	defer func() { c.readBack = max(c.readBack, c.opt.Wall()-start) }()
	for _, rep := range c.opt.Workers.Poll() {
		for i := range c.remote {
			j := &c.remote[i]
			if j.id != rep.ID || j.over || j.arrived {
				continue
			}
			j.now = max(j.now, rep.Now)
			if !rep.Over {
				continue
			}
			if rep.Err != "" {
				c.giveUpRemote("a worker failed: " + rep.Err)
				return
			}
			j.arrived, j.payload, j.size, j.copyPayload = true, rep.Payload, rep.Size, rep.CopyPayload
		}
	}
	for {
		if c.reader == nil {
			for i, j := range c.remote {
				if j.arrived && !j.over && c.reader == nil {
					c.reader = c.newReader(i)
				}
			}
			if c.reader == nil {
				break
			}
		}
		rd := c.reader
		rd.deadline = start + budget
		if _, more := rd.next(); more {
			return
		}
		c.reader = nil
		if rd.err != nil {
			c.giveUpRemote("a worker's run does not read back: " + rd.err.Error())
			return
		}
		j, wr := &c.remote[rd.job], rd.wr
		j.payload, j.copyPayload = nil, nil
		j.over, j.run, j.sampler, j.trace, j.marks, j.past = true, wr.run, wr.sampler, wr.trace, wr.marks, wr.past
		if c.opt.Wall() >= rd.deadline {
			return
		}
	}
	for _, j := range c.remote {
		if !j.over {
			return
		}
	}
	pasts := make([]*scenario.Past, len(c.remote))
	for i, j := range c.remote {
		pasts[i] = j.past
		c.runs[i], c.views[i] = j.run, j.run.View()
		c.samplers[i], c.traces[i], c.marks[i] = j.sampler, j.trace, j.marks
		if j.run.Done() {
			c.ends[i] = j.run.Now()
		}
	}
	c.adoptRuns(pasts)
	c.remote = nil
	c.caughtUpBy = "workers"
	c.version++
}

func (c *Controller) giveUpRemote(why string) {
	c.cancelRemote()
	c.caughtUpBy = "main thread: " + why
}

// ReadBack is the longest the main thread spent in one tick on the
// workers' replies in the last catch-up by workers: reading their runs
// back (in slices of the tick's budget) and taking them in.
func (c *Controller) ReadBack() time.Duration { return c.readBack }

// CaughtUpBy says how the last catch-up to a link's time was done:
// "workers", or "main thread" and why not by the workers ("" before
// any, or when the page has no workers).
func (c *Controller) CaughtUpBy() string { return c.caughtUpBy }
