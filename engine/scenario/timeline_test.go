package scenario

import (
	"bytes"
	"encoding/gob"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pagesim/pagesim/engine/internal/deepcopy"
	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/sim"
)

func smallTHPRun(t *testing.T) func() *Run {
	t.Helper()
	s, err := Get("thp-thisnode")
	require.NoError(t, err)
	st, err := s.Parse([]string{"scale=0.01", "guest_gb=30,42"})
	require.NoError(t, err)
	return func() *Run {
		r, err := s.NewRun("upstream", st, 5, 0)
		require.NoError(t, err)
		return r
	}
}

// A timeline advanced in uneven slices to the run's end reaches any time
// it has passed in the state the run itself had there, and refuses a
// time it has not reached.
func TestATimelineReachesAnyTimeItHasPassedAsTheRunDid(t *testing.T) {
	newRun := smallTHPRun(t)
	tl, err := NewTimeline(newRun(), TimelineOptions{Every: 20 * sim.Millisecond})
	require.NoError(t, err)
	for _, until := range []sim.Time{7, 33, 61, 250, 1 << 40} {
		for tl.Run().Now() < until*sim.Millisecond && !tl.Run().Done() {
			_, err := tl.Advance(until*sim.Millisecond, 5000)
			require.NoError(t, err)
		}
	}
	require.True(t, tl.Run().Done())
	end := tl.Run().Now()
	rnd := sim.NewRand(7)
	for _, at := range []sim.Time{0, 20 * sim.Millisecond, sim.Time(rnd.Uint64() % uint64(end)), sim.Time(rnd.Uint64() % uint64(end)), end} {
		got, err := tl.At(at)
		require.NoError(t, err)
		want := newRun()
		want.Advance(at, 1<<62)
		assert.Equal(t, want.Now(), got.Now())
		assert.Equal(t, digest(t, want), digest(t, got), "at %v", at)
		assert.Equal(t, observed(t, want), observed(t, got), "at %v", at)
	}
	_, err = tl.At(end + 1)
	assert.ErrorIs(t, err, errAhead)
	_, err = tl.At(-1)
	assert.ErrorIs(t, err, errAhead)
}

// Each plain checkpoint is a copy of the whole run, so a budget of a
// quarter of the run holds none past the minimum: the timeline keeps
// exactly 16, at most two intervals apart, and doubles its interval as
// the run goes on. With room in the budget, it keeps one at every
// multiple of the interval.
func TestTheCheckpointsKeepToTheBudgetButNeverFewerThanTheMinimum(t *testing.T) {
	newRun := smallTHPRun(t)
	tl, err := NewTimeline(newRun(), TimelineOptions{Every: sim.Millisecond, Unpacked: true})
	require.NoError(t, err)
	_, err = tl.Advance(1<<62, 1<<62)
	require.NoError(t, err)
	end := tl.Run().Now()
	cps := tl.Checkpoints()
	assert.Len(t, cps, 16)
	assert.Greater(t, tl.Every(), sim.Millisecond, "the interval grew")
	for i, at := range cps[1:] {
		assert.Zero(t, at%tl.Every(), "checkpoint %d at a multiple of the interval", i+1)
		assert.LessOrEqual(t, at-cps[i], 2*tl.Every(), "checkpoint %d within two intervals of the one before", i+1)
	}
	cpBytes, runBytes := tl.Bytes()
	assert.Positive(t, runBytes)
	assert.Greater(t, cpBytes, runBytes/4, "16 copies of the run are over a quarter of it")

	roomy, err := NewTimeline(newRun(), TimelineOptions{Every: 50 * sim.Millisecond, Budget: 100, Unpacked: true})
	require.NoError(t, err)
	_, err = roomy.Advance(1<<62, 1<<62)
	require.NoError(t, err)
	assert.Equal(t, 50*sim.Millisecond, roomy.Every())
	assert.Len(t, roomy.Checkpoints(), 1+int(end/(50*sim.Millisecond)))
}

// Stored checkpoints (the run as bytes, the pages as byte planes of
// differences, in chunks kept once and compressed) fit the budget: a
// quarter of the run holds at least the minimum of 16, and the timeline
// keeps to it over a whole run, the interval doubling as it goes.
//
// The test runs the first second at 0.03 (the page's scale is 0.05; the
// parts that do not grow with the machine, the event queue, the per-CPU
// lists and the zones, weigh more in a smaller one).
func TestStoredCheckpointsKeepToAQuarterOfTheRunWithAtLeastSixteen(t *testing.T) {
	s, err := Get("thp-thisnode")
	require.NoError(t, err)
	st, err := s.Parse([]string{"scale=0.03"})
	require.NoError(t, err)
	r, err := s.NewRun("upstream", st, 1, 0)
	require.NoError(t, err)
	tl, err := NewTimeline(r, TimelineOptions{Every: 10 * sim.Millisecond})
	require.NoError(t, err)
	_, err = tl.Advance(sim.Second, 1<<62)
	require.NoError(t, err)
	cps := tl.Checkpoints()
	assert.GreaterOrEqual(t, len(cps), 16)
	assert.Greater(t, tl.Every(), sim.Millisecond, "the interval grew")
	cpBytes, runBytes := tl.Bytes()
	assert.LessOrEqual(t, cpBytes, runBytes/4, "%d checkpoints", len(cps))
	for i, at := range cps[1:] {
		assert.LessOrEqual(t, at-cps[i], 2*tl.Every(), "checkpoint %d within two intervals of the one before", i+1)
	}
}

// Stored checkpoints take less than plain ones and reach the same states.
func TestStoredCheckpointsAreSmallerAndReachTheSameStates(t *testing.T) {
	newRun := smallTHPRun(t)
	packed, err := NewTimeline(newRun(), TimelineOptions{Every: 30 * sim.Millisecond, Budget: 100})
	require.NoError(t, err)
	plain, err := NewTimeline(newRun(), TimelineOptions{Every: 30 * sim.Millisecond, Budget: 100, Unpacked: true})
	require.NoError(t, err)
	for _, tl := range []*Timeline{packed, plain} {
		_, err = tl.Advance(1<<62, 1<<62)
		require.NoError(t, err)
	}
	require.Equal(t, plain.Checkpoints(), packed.Checkpoints())
	pb, prun := packed.Bytes()
	cb, crun := plain.Bytes()
	assert.InEpsilon(t, crun, prun, 0.01, "the run's own bytes, measured both ways (a copy counts an object inside another twice)")
	assert.Less(t, pb, cb/20)
	at := 95 * sim.Millisecond
	a, err := packed.At(at)
	require.NoError(t, err)
	b, err := plain.At(at)
	require.NoError(t, err)
	assert.Equal(t, digest(t, b), digest(t, a))
}

// Seek moves the live run back: it is then the run at that time, and
// advanced again it reaches the same end, taking no new checkpoint on
// the way back to where it was.
func TestSeekingBackAndPlayingOnReachesTheSameEnd(t *testing.T) {
	newRun := smallTHPRun(t)
	tl, err := NewTimeline(newRun(), TimelineOptions{Every: 20 * sim.Millisecond})
	require.NoError(t, err)
	_, err = tl.Advance(200*sim.Millisecond, 1<<62)
	require.NoError(t, err)
	at200 := digest(t, tl.Run())
	cps := tl.Checkpoints()

	back := 71 * sim.Millisecond
	require.NoError(t, tl.Seek(back))
	assert.Equal(t, back, tl.Run().Now())
	assert.Equal(t, 200*sim.Millisecond, tl.Frontier())
	want := newRun()
	want.Advance(back, 1<<62)
	assert.Equal(t, digest(t, want), digest(t, tl.Run()))

	_, err = tl.Advance(200*sim.Millisecond, 1<<62)
	require.NoError(t, err)
	assert.Equal(t, at200, digest(t, tl.Run()))
	assert.Equal(t, cps, tl.Checkpoints(), "no checkpoint taken twice")
	_, err = tl.Advance(260*sim.Millisecond, 1<<62)
	require.NoError(t, err)
	assert.Len(t, tl.Checkpoints(), len(cps)+3, "past the frontier, one every 20 ms again")
	assert.ErrorIs(t, tl.Seek(tl.Frontier()+1), errAhead)
}

// A run advanced elsewhere (a worker's) and adopted is the live run: the
// times before it are reached by replaying from the start, the times
// after it as the run goes on, all as the run itself had them.
func TestATimelineAdoptsARunAdvancedElsewhere(t *testing.T) {
	newRun := smallTHPRun(t)
	tl, err := NewTimeline(newRun(), TimelineOptions{Every: 20 * sim.Millisecond})
	require.NoError(t, err)
	far := newRun()
	far.Advance(150*sim.Millisecond, 1<<62)
	require.NoError(t, tl.Adopt(far))
	assert.Equal(t, []sim.Time{0, 150 * sim.Millisecond}, tl.Checkpoints())
	assert.Equal(t, 150*sim.Millisecond, tl.Frontier())
	_, err = tl.Advance(200*sim.Millisecond, 1<<62)
	require.NoError(t, err)
	assertTimelineAt(t, tl, newRun, 0, 97*sim.Millisecond, 150*sim.Millisecond, 171*sim.Millisecond, 200*sim.Millisecond)
	assert.Error(t, tl.Adopt(newRun()), "a run behind the live one")
}

// A stored checkpoint costs what changed since the ones before it: each
// one taken 20 ms of simulated time after the one before adds less than
// half of what it costs alone (the whole run compressed, in a store of
// its own). thp-thisnode at the page's scale (0.05), 1.0-1.1 s into the
// run, with the machine's memory in use (at 0.1 s, the machine mostly
// empty, the whole run compresses to a few times a checkpoint's changes
// and the margin is thin).
func TestAStoredCheckpointCostsWhatChangedSinceTheOnesBefore(t *testing.T) {
	s, err := Get("thp-thisnode")
	require.NoError(t, err)
	st, err := s.Parse([]string{"scale=0.05"})
	require.NoError(t, err)
	newRun := func() *Run {
		r, err := s.NewRun("upstream", st, 1, 0)
		require.NoError(t, err)
		return r
	}
	r := newRun()
	r.Advance(sim.Second, 1<<62)
	tl, err := NewTimeline(r, TimelineOptions{Every: 20 * sim.Millisecond, Budget: 100})
	require.NoError(t, err)
	_, err = tl.Advance(1100*sim.Millisecond, 1<<62)
	require.NoError(t, err)
	require.Len(t, tl.Checkpoints(), 6)
	for _, p := range tl.points[1:] {
		b, err := tl.store.Get(p.stored)
		require.NoError(t, err)
		alone := deepcopy.NewStore().Put(b).New
		assert.Less(t, p.bytes, alone/2, "the checkpoint at %v", p.at)
	}
	assertTimelineAt(t, tl, newRun, sim.Second, 1060*sim.Millisecond, 1100*sim.Millisecond)
}

// A timeline kept elsewhere (an engine worker's, which catches the run
// up) sends its run and its past (as bytes, gob); the timeline that adopts
// them has their checkpoints and reaches every time as the run did, from
// the nearest of them. The worker's timeline, bounded to write four
// runs' worth, doubles its interval as its checkpoints pass two, three
// and three and a half, and takes no more after four (a run's bytes
// written are a little fewer than its memory: five checkpoints) but the
// one where its run stands (CheckpointNow), which the adopting timeline
// then need not take.
func TestATimelineAdoptsTheCheckpointsOfARunAdvancedElsewhere(t *testing.T) {
	newRun := smallTHPRun(t)
	probe, err := NewTimeline(newRun(), TimelineOptions{})
	require.NoError(t, err)
	_, runBytes := probe.Bytes()
	span := 200 * sim.Millisecond
	worker, err := NewTimeline(newRun(), TimelineOptions{Every: 10 * sim.Millisecond, TakeBytes: 4 * runBytes})
	require.NoError(t, err)
	_, err = worker.Advance(span, 1<<62)
	require.NoError(t, err)
	assert.Equal(t, []sim.Time{0, 10 * sim.Millisecond, 20 * sim.Millisecond, 40 * sim.Millisecond, 80 * sim.Millisecond}, worker.Checkpoints())
	// The worker takes one where its run stands, past the bound, once.
	require.NoError(t, worker.CheckpointNow())
	require.NoError(t, worker.CheckpointNow())
	assert.Equal(t, []sim.Time{0, 10 * sim.Millisecond, 20 * sim.Millisecond, 40 * sim.Millisecond, 80 * sim.Millisecond, 200 * sim.Millisecond}, worker.Checkpoints())
	past, err := worker.Past()
	require.NoError(t, err)
	var wire bytes.Buffer
	require.NoError(t, gob.NewEncoder(&wire).Encode(past))
	enc, err := worker.Run().Encode()
	require.NoError(t, err)

	var got Past
	require.NoError(t, gob.NewDecoder(&wire).Decode(&got))
	r, err := DecodeRun(enc)
	require.NoError(t, err)
	tl, err := NewTimeline(newRun(), TimelineOptions{Every: 20 * sim.Millisecond})
	require.NoError(t, err)
	written := tl.written
	require.NoError(t, tl.AdoptPast(r, got))
	assert.Equal(t, []sim.Time{0, 10 * sim.Millisecond, 20 * sim.Millisecond, 40 * sim.Millisecond, 80 * sim.Millisecond, 200 * sim.Millisecond}, tl.Checkpoints())
	assert.Equal(t, written, tl.written, "the adopting timeline writes no checkpoint of its own: the worker's at 200 ms is there")
	assert.Equal(t, 80*sim.Millisecond, tl.Every())
	_, err = tl.Advance(260*sim.Millisecond, 1<<62)
	require.NoError(t, err)
	assertTimelineAt(t, tl, newRun, 0, 97*sim.Millisecond, 170*sim.Millisecond, 200*sim.Millisecond, 250*sim.Millisecond)

	// The page's timeline takes its start late (LateStart): adopting the
	// worker's past, which starts where it stands, it writes nothing.
	late, err := NewTimeline(newRun(), TimelineOptions{Every: 20 * sim.Millisecond, LateStart: true})
	require.NoError(t, err)
	r2, err := DecodeRun(enc)
	require.NoError(t, err)
	require.NoError(t, late.AdoptPast(r2, got))
	assert.Equal(t, tl.Checkpoints()[:6], late.Checkpoints())
	assert.Zero(t, late.written, "no checkpoint written: the worker's start is there")
	assertTimelineAt(t, late, newRun, 0, 97*sim.Millisecond, 200*sim.Millisecond)

	bad := got
	bad.At = []sim.Time{0, 20 * sim.Millisecond, 10 * sim.Millisecond, 40 * sim.Millisecond, 80 * sim.Millisecond, 200 * sim.Millisecond}
	fresh, err := NewTimeline(newRun(), TimelineOptions{})
	require.NoError(t, err)
	assert.ErrorContains(t, fresh.AdoptPast(r, bad), "out of order")
}

// With LateStart a timeline writes its start when the run first moves or
// is adopted or a time is asked of it, not when it is made: until then it
// writes nothing and lists the start (the live run stands there);
// afterwards it holds the checkpoints of a timeline that took it at once,
// and reaches the same states.
func TestATimelineTakesItsStartLateWhenAsked(t *testing.T) {
	newRun := smallTHPRun(t)
	for _, how := range []string{"advance", "adopt", "seek"} {
		now, err := NewTimeline(newRun(), TimelineOptions{Every: 20 * sim.Millisecond})
		require.NoError(t, err)
		late, err := NewTimeline(newRun(), TimelineOptions{Every: 20 * sim.Millisecond, LateStart: true})
		require.NoError(t, err)
		assert.Zero(t, late.written, how)
		assert.Equal(t, []sim.Time{0}, late.Checkpoints(), how)
		_, err = late.Advance(0, 1<<62)
		require.NoError(t, err)
		assert.Zero(t, late.written, "%s: an Advance that does not move takes nothing", how)
		for _, tl := range []*Timeline{now, late} {
			switch how {
			case "advance":
				_, err = tl.Advance(70*sim.Millisecond, 1<<62)
			case "adopt":
				far := newRun()
				far.Advance(70*sim.Millisecond, 1<<62)
				err = tl.Adopt(far)
			case "seek":
				err = tl.Seek(0)
			}
			require.NoError(t, err, how)
		}
		// Two runs booted alike encode to a few bytes more or less, so
		// the count of checkpoints is compared, not the bytes written.
		assert.Positive(t, late.written, how)
		assert.Len(t, late.points, len(now.points), how)
		assert.Equal(t, now.Checkpoints(), late.Checkpoints(), how)
		assertTimelineAt(t, late, newRun, 0, late.Frontier()/2, late.Frontier())
	}
	rec, err := Get("thp-thisnode")
	require.NoError(t, err)
	st, err := rec.Parse([]string{"scale=0.01", "guest_gb=30,42"})
	require.NoError(t, err)
	r, err := rec.NewRecordedRun("upstream", st, 5, 0, mm.RecordConfig{})
	require.NoError(t, err)
	_, err = NewTimeline(r, TimelineOptions{LateStart: true})
	assert.ErrorIs(t, err, errRecorded, "a recorded run is refused at once")
}

// assertTimelineAt asserts that tl reaches each time in ats in the state
// (digest) of a fresh run from newRun advanced to it.
func assertTimelineAt(t *testing.T, tl *Timeline, newRun func() *Run, ats ...sim.Time) {
	t.Helper()
	for _, at := range ats {
		got, err := tl.At(at)
		require.NoError(t, err)
		want := newRun()
		want.Advance(at, 1<<62)
		assert.Equal(t, digest(t, want), digest(t, got), "at %v", at)
	}
}
