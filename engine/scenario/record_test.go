package scenario

import (
	"bytes"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/sim"
	"github.com/pagesim/pagesim/engine/tracefmt"
)

// recordedBytes runs a recorded thp-thisnode at a small scale with two
// guest sizes (two phases), advancing it with advance, and returns its
// Chrome trace, its report and its result lines.
func recordedBytes(t *testing.T, advance func(r *Run)) (chrome, report string, lines []string) {
	t.Helper()
	s, err := Get("thp-thisnode")
	require.NoError(t, err)
	st, err := s.Parse([]string{"scale=0.02", "guest_gb=30,38"})
	require.NoError(t, err)
	r, err := s.NewRecordedRun("upstream", st, 3, 0, mm.RecordConfig{})
	require.NoError(t, err)
	for i := 0; !r.Done(); i++ {
		advance(r)
		require.Less(t, i, 1<<22)
	}
	rec := r.Recording()
	var c, p bytes.Buffer
	require.NoError(t, tracefmt.WriteChrome(&c, rec, tracefmt.Meta{Title: "t"}))
	require.NoError(t, tracefmt.WriteReport(&p, rec))
	return c.String(), p.String(), r.Lines()
}

func TestARecordingDoesNotDependOnHowTheRunWasSliced(t *testing.T) {
	whole, wholeReport, lines := recordedBytes(t, func(r *Run) { r.Advance(math.MaxInt64, math.MaxInt) })
	byTime, byTimeReport, _ := recordedBytes(t, func(r *Run) { r.Advance(r.Now()+7*sim.Millisecond+3, math.MaxInt) })
	byEvents, _, _ := recordedBytes(t, func(r *Run) { r.Advance(math.MaxInt64, 97) })
	assert.Len(t, lines, 2)
	assert.Equal(t, whole, byTime)
	assert.Equal(t, whole, byEvents)
	assert.Equal(t, wholeReport, byTimeReport)
	assert.Contains(t, whole, `"name":"boot 2/2: 38 GB"`, "the second phase's boot is marked")
}

func TestARecordedRunPrintsWhatAnUnrecordedOnePrints(t *testing.T) {
	s, err := Get("thp-thisnode")
	require.NoError(t, err)
	o := Options{Seed: 2, Runs: 1, Settings: []string{"scale=0.02", "guest_gb=34"}}
	plain, err := s.RunAll(o)
	require.NoError(t, err)
	var recorded []*mm.Recording
	o.Record = &mm.RecordConfig{}
	o.Recorded = func(variant string, run int, r *Run) error {
		rec := r.Recording()
		require.Len(t, rec.Machines, 1)
		assert.Equal(t, "34 GB", rec.Machines[0].Name, "a one-phase run's machine is named after its phase")
		recorded = append(recorded, rec)
		return nil
	}
	withRec, err := s.RunAll(o)
	require.NoError(t, err)
	assert.Equal(t, plain.Text(), withRec.Text())
	assert.Len(t, recorded, len(s.DefaultVariants()), "one recording per variant and run")
	for _, rec := range recorded {
		assert.NotEmpty(t, rec.Machines[0].Samples)
		assert.False(t, rec.Stopped)
	}
}

func TestEachRecordingInFlightCountsInTheBudget(t *testing.T) {
	s, err := Get("thp-thisnode")
	require.NoError(t, err)
	st, err := s.Parse([]string{"scale=0.02"})
	require.NoError(t, err)
	cfg, err := s.Layout(st.Values)
	require.NoError(t, err)
	machine := mm.MachineBytes(cfg)
	limit := 4 * machine
	jobs, err := s.FitJobs([]Values{st.Values}, 8, 8, limit)
	require.NoError(t, err)
	assert.Equal(t, 4, jobs, "four machines fit")
	jobs, err = s.FitJobsWith([]Values{st.Values}, 8, 8, limit, machine)
	require.NoError(t, err)
	assert.Equal(t, 2, jobs, "with a recording as large as a machine, two runs fit")
	_, err = s.FitJobsWith([]Values{st.Values}, 8, 8, limit, 4*machine)
	var be *mm.BudgetError
	assert.ErrorAs(t, err, &be, "a recording that leaves no room for the machine is refused before anything runs")
}
