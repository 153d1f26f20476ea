package scenario

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/sim"
)

// Run with -race, this is also the check that runs share no mutable state
// (package-level variables of engine/ written by a run): two scenarios'
// runs go on four goroutines at once.
func TestParallelRunsGiveTheBytesOfOneCore(t *testing.T) {
	for _, tc := range []struct {
		id       string
		settings []string
	}{
		{"thp-thisnode", []string{"scale=0.02", "guest_gb=30,42"}},
		{"playground", []string{"mem=32", "duration=1"}},
	} {
		t.Run(tc.id, func(t *testing.T) {
			s := mustGet(t, tc.id)
			o := Options{Seed: 5, Runs: 3, Settings: tc.settings, Slice: 50 * sim.Millisecond}
			one, err := s.RunAll(o)
			require.NoError(t, err)
			o.Jobs = 4
			calls := 0
			o.Progress = func(string, int, *Run) { calls++ } // a data race unless RunAll serialises the calls
			var dones []int
			o.RunDone = func(done, total int) {
				dones = append(dones, done)
				assert.Equal(t, 3*len(s.DefaultVariants()), total)
			}
			four, err := s.RunAll(o)
			require.NoError(t, err)
			assert.Equal(t, one.Text(), four.Text())
			a, err := one.JSON()
			require.NoError(t, err)
			b, err := four.JSON()
			require.NoError(t, err)
			assert.Equal(t, string(a), string(b))
			assert.Positive(t, calls)
			want := []int{0}
			for i := range 3 * len(s.DefaultVariants()) {
				want = append(want, i+1)
			}
			assert.Equal(t, want, dones, "none done at the start, then counted up to all")
		})
	}
}

func TestFitJobsLowersTheRunsInFlightToWhatTheBudgetHolds(t *testing.T) {
	s := mustGet(t, "thp-thisnode")
	small, err := s.Parse([]string{"scale=0.02"})
	require.NoError(t, err)
	big, err := s.Parse([]string{"scale=0.04"})
	require.NoError(t, err)
	cfg, err := s.Layout(big.Values)
	require.NoError(t, err)
	one := mm.MachineBytes(cfg)
	for _, tc := range []struct {
		name             string
		jobs, runs       int
		limit            uint64
		want             int
		wantBudgetRefuse bool
	}{
		{"without a limit every job asked for runs", 8, 12, 0, 8, false},
		{"never more goroutines than runs", 8, 3, 0, 3, false},
		{"no jobs asked is one", 0, 3, 0, 1, false},
		{"two and a half of the largest machine hold two", 8, 12, 5 * one / 2, 2, false},
		{"exactly three hold three", 8, 12, 3 * one, 3, false},
		{"one machine's worth runs one at a time", 8, 12, one, 1, false},
		{"less than one is refused", 8, 12, one - 1, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.FitJobs([]Values{small.Values, big.Values}, tc.jobs, tc.runs, tc.limit)
			if tc.wantBudgetRefuse {
				var be *mm.BudgetError
				require.ErrorAs(t, err, &be)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestParallelRunsReportTheFirstFailedRunInOrder(t *testing.T) {
	s := mustGet(t, "thp-thisnode")
	for _, jobs := range []int{1, 4} {
		o := Options{Seed: 1, Runs: 4, Jobs: jobs, Variants: []string{"drop-thisnode"}, Settings: []string{"scale=0.02", "guest_gb=30"},
			CheckEvery: 20, Slice: 10 * sim.Millisecond,
			// Runs 2, 3 and 4 break their machine's free page count.
			Progress: func(_ string, run int, r *Run) {
				if run >= 1 {
					r.cur.M.Nodes[0].Zones[mm.ZONE_NORMAL].Stat[mm.NR_FREE_PAGES]++
				}
			}}
		_, err := s.RunAll(o)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "drop-thisnode run 2, event ", "with %d jobs", jobs)
	}
}

func TestAPanicInAParallelRunIsTheCallersPanic(t *testing.T) {
	s := mustGet(t, "thp-thisnode")
	o := Options{Seed: 1, Runs: 3, Jobs: 3, Variants: []string{"upstream"}, Settings: []string{"scale=0.02", "guest_gb=30"},
		Slice: 10 * sim.Millisecond,
		Progress: func(_ string, run int, _ *Run) {
			if run == 1 {
				panic("boom in run 2")
			}
		}}
	assert.PanicsWithValue(t, "boom in run 2", func() { _, _ = s.RunAll(o) }, "recovered on the caller's goroutine, where the command line turns it into one line")
}
