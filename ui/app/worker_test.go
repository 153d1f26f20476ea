package app

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pagesim/pagesim/engine/sim"
)

// syncWorkers runs each job when polled, in this goroutine: the page's
// engine workers without the threads. fail, if set, fails every job;
// outside, if set, has the payloads copied as the page's are (Size and
// CopyPayload).
type syncWorkers struct {
	cat      *Catalog
	jobs     []WorkerJob
	canceled []uint64
	fail     string
	outside  bool
	// lastNow is each job's last progress, in the jobs' order.
	lastNow []sim.Time
}

func (w *syncWorkers) Start(job WorkerJob) { w.jobs = append(w.jobs, job) }
func (w *syncWorkers) Cancel(id uint64)    { w.canceled = append(w.canceled, id) }
func (w *syncWorkers) Poll() []WorkerReply {
	var out []WorkerReply
	for _, j := range w.jobs {
		if w.fail != "" {
			out = append(out, WorkerReply{ID: j.ID, Over: true, Err: w.fail})
			continue
		}
		var last sim.Time
		payload, err := RunWorkerJob(w.cat, j, func(now sim.Time) bool { last = now; return true })
		w.lastNow = append(w.lastNow, last)
		rep := WorkerReply{ID: j.ID, Now: last, Over: true, Payload: payload}
		if w.outside {
			rep.Payload, rep.Size = nil, len(payload)
			rep.CopyPayload = func(dst []byte, off int) { copy(dst, payload[off:]) }
		}
		if err != nil {
			rep.Err = err.Error()
		}
		out = append(out, rep)
	}
	w.jobs = nil
	return out
}

// workerLink is thp-thisnode, two variants, small, at 300 ms (a sample at 250 ms; the runs end later).
const workerLink = "v1/thp-thisnode?scale=0.01&guest_gb=30,42&v=upstream,only-compact&seed=3&t=0.3"

func catchUp(t *testing.T, w Workers, link string) *Controller {
	t.Helper()
	cat, err := DefaultCatalog()
	require.NoError(t, err)
	if sw, ok := w.(*syncWorkers); ok {
		sw.cat = cat
	}
	c := NewController(cat, Options{Link: link, Workers: w})
	require.Empty(t, c.Message())
	require.Empty(t, c.RunError())
	for i := 0; c.Restoring() && i < 100000; i++ {
		c.Tick(0, 50*time.Millisecond)
	}
	require.False(t, c.Restoring())
	return c
}

// A link's time reached by the workers gives the runs, series and
// tracepoint logs the main thread's catch-up gives: the same state.
func TestTheWorkersCatchUpToALinksTimeAsTheMainThreadDoes(t *testing.T) {
	main := catchUp(t, nil, workerLink)
	w := &syncWorkers{}
	off := catchUp(t, w, workerLink)
	assert.Equal(t, "workers", off.CaughtUpBy())
	assert.Empty(t, main.CaughtUpBy())
	require.Len(t, off.Runs(), 2)
	for i := range main.Runs() {
		a, b := main.Runs()[i], off.Runs()[i]
		assert.Equal(t, a.Now(), b.Now())
		da, err := a.Digest()
		require.NoError(t, err)
		db, err := b.Digest()
		require.NoError(t, err)
		assert.Equal(t, da, db, "run %d", i)
		assert.Equal(t, main.Samples(i), off.Samples(i), "series %d", i)
		assert.Equal(t, main.traces[i].events(), off.traces[i].events(), "tracepoint log %d", i)
		assert.NotEmpty(t, off.Samples(i))
	}
	assert.Equal(t, main.Fragment(), off.Fragment())
	assert.Equal(t, []sim.Time{300 * sim.Millisecond, 300 * sim.Millisecond}, w.lastNow, "the jobs' last progress is the link's time")

	// A run that ends before the link's time reports the link's time
	// once it has ended: it goes no further.
	w = &syncWorkers{}
	end := catchUp(t, w, "v1/thp-thisnode?scale=0.01&guest_gb=30&v=upstream&seed=3&t=100")
	require.True(t, end.Ended())
	assert.Less(t, end.Now(), 100*sim.Second)
	assert.Equal(t, []sim.Time{100 * sim.Second}, w.lastNow)
	var every []sim.Time
	for at := sim.Time(0); at < end.Now(); at += 100 * sim.Millisecond {
		every = append(every, at)
	}
	require.Greater(t, len(every), 1)
	assert.Equal(t, every, end.Checkpoints(0), "the worker's checkpoints every 100 ms to the run's end at %v", end.Now())
}

// A worker that fails leaves the catch-up to the main thread, which gets
// there all the same; a restart drops the jobs under way.
func TestAFailedWorkerLeavesTheCatchUpToTheMainThread(t *testing.T) {
	w := &syncWorkers{fail: "out of memory"}
	c := catchUp(t, w, workerLink)
	assert.Equal(t, "main thread: a worker failed: out of memory", c.CaughtUpBy())
	assert.Equal(t, 300*sim.Millisecond, c.Now())

	w = &syncWorkers{}
	cat, err := DefaultCatalog()
	require.NoError(t, err)
	w.cat = cat
	c = NewController(cat, Options{Link: workerLink, Workers: w})
	require.Len(t, w.jobs, 2)
	c.Reset()
	assert.Equal(t, []uint64{1, 2}, w.canceled)
	assert.False(t, c.Restoring())
}

// After the workers' catch-up the timeline holds what the main thread's
// gives: the same markers, the checkpoints the workers took on the way
// (so going back restores the nearest one, not the start), and going
// back shows the same page.
func TestTheTimelineGoesBackFromTheWorkersCatchUp(t *testing.T) {
	main := catchUp(t, nil, workerLink)
	off := catchUp(t, &syncWorkers{}, workerLink)
	require.Equal(t, "workers", off.CaughtUpBy())
	require.Empty(t, off.TimelineOff())
	for i := range off.Runs() {
		assert.Subset(t, off.Checkpoints(i), []sim.Time{0, 100 * sim.Millisecond, 200 * sim.Millisecond}, "run %d", i)
	}
	assert.NotEmpty(t, main.Markers())
	assert.Equal(t, main.Markers(), off.Markers())
	for _, c := range []*Controller{main, off} {
		require.NoError(t, c.Seek(120*sim.Millisecond))
		tickUntilCaughtUp(t, c, time.Hour)
	}
	assert.Equal(t, pageOf(t, main), pageOf(t, off))
}

// With a short budget a tick reads the workers' runs back in slices,
// over several ticks (the page draws between them), and they give the
// runs, series and checkpoints the reading at once gives; so do payloads
// held outside Go's memory, copied in pieces.
func TestTheWorkersRunsReadBackOverSeveralTicks(t *testing.T) {
	whole := catchUp(t, &syncWorkers{}, workerLink)
	cat, err := DefaultCatalog()
	require.NoError(t, err)
	var clock time.Duration
	wall := func() time.Duration { clock += 100 * time.Microsecond; return clock }
	for _, outside := range []bool{false, true} {
		c := NewController(cat, Options{Link: workerLink, Workers: &syncWorkers{cat: cat, outside: outside}, Wall: wall})
		ticks := 0
		for ; c.Restoring() && ticks < 100000; ticks++ {
			c.Tick(0, time.Millisecond)
		}
		require.False(t, c.Restoring())
		require.Equal(t, "workers", c.CaughtUpBy())
		// The first tick runs the jobs (syncWorkers) and starts reading.
		assert.Greater(t, ticks, 2, "ticks from the jobs' start to the runs in place (outside %v)", outside)
		assertSameRuns(t, whole, c)
	}
}

// assertSameRuns asserts that b's runs, series and checkpoints are a's.
func assertSameRuns(t *testing.T, a, b *Controller) {
	t.Helper()
	whole, c := a, b
	for i := range whole.Runs() {
		a, b := whole.Runs()[i], c.Runs()[i]
		da, err := a.Digest()
		require.NoError(t, err)
		db, err := b.Digest()
		require.NoError(t, err)
		assert.Equal(t, da, db, "run %d", i)
		assert.Equal(t, whole.Samples(i), c.Samples(i), "series %d", i)
		assert.Equal(t, whole.Checkpoints(i), c.Checkpoints(i), "checkpoints %d", i)
	}
}
