package scenario

import (
	"math"
	"runtime"
	"testing"
	"weak"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/sim"
)

func TestEveryScenarioHasALayoutForTheBudget(t *testing.T) {
	for _, s := range All() {
		st, err := s.Parse(nil)
		require.NoError(t, err)
		require.NotNil(t, s.Layout, s.ID)
		cfg, err := s.Layout(st.Values)
		require.NoError(t, err, s.ID)
		assert.Greater(t, mm.MachineBytes(cfg), uint64(0), s.ID)
	}
}

func TestRunAllRefusesAnOverBudgetMachineBeforeBooting(t *testing.T) {
	s, err := Get("thp-thisnode")
	require.NoError(t, err)
	// Each parameter in its range; together 8 x 900 GiB, a 30 GB
	// allocation that once ended in a fatal error.
	o := Options{Seed: 1, Runs: 1, Settings: []string{"scale=1", "nodes=8", "node_gb=900"}, MaxBytes: 4 << 30}
	res, err := s.RunAll(o)
	require.Error(t, err)
	assert.Nil(t, res)
	var be *mm.BudgetError
	require.ErrorAs(t, err, &be)
	assert.Greater(t, be.Need, uint64(30<<30))
	assert.Contains(t, err.Error(), "over the limit of 4 GiB")
	// The page runs three variants side by side.
	st, err := s.Parse([]string{"scale=0.03"})
	require.NoError(t, err)
	cfg, err := s.Layout(st.Values)
	require.NoError(t, err)
	one := mm.MachineBytes(cfg)
	assert.NoError(t, s.CheckBudget(st.Values, 3, 3*one))
	assert.Error(t, s.CheckBudget(st.Values, 3, 3*one-1))
}

func TestRunAllKeepsNoMachineOfAFinishedRun(t *testing.T) {
	s, err := Get("thp-thisnode")
	require.NoError(t, err)
	var machines []weak.Pointer[mm.Machine]
	var alive []int
	last := -1
	o := Options{Seed: 1, Runs: 4, Variants: []string{"drop-thisnode"}, Settings: []string{"scale=0.02", "guest_gb=30"},
		Slice: 100_000_000, // 0.1 s: several Progress calls per run
		Progress: func(variant string, run int, r *Run) {
			if run == last {
				return
			}
			// The first slice of a new run: every earlier run's
			// machine must be garbage by now.
			last = run
			runtime.GC()
			n := 0
			for _, w := range machines {
				if w.Value() != nil {
					n++
				}
			}
			alive = append(alive, n)
			machines = append(machines, weak.Make(r.cur.M))
		}}
	res, err := s.RunAll(o)
	require.NoError(t, err)
	require.Len(t, res.Variants[0].Runs, 4)
	assert.Equal(t, []int{0, 0, 0, 0}, alive, "machines of finished runs still reachable, by run")
}

func TestRunAllChecksInvariantsEveryNEvents(t *testing.T) {
	s, err := Get("thp-thisnode")
	require.NoError(t, err)
	checks := 0
	o := Options{Seed: 1, Runs: 1, Variants: []string{"upstream"}, Settings: []string{"scale=0.02", "guest_gb=30"}, CheckEvery: 50,
		Progress: func(string, int, *Run) { checks++ }}
	_, err = s.RunAll(o)
	require.NoError(t, err)
	// A machine whose invariants are broken stops the run.
	o.Progress = func(_ string, _ int, r *Run) { r.cur.M.Nodes[0].Zones[mm.ZONE_NORMAL].Stat[mm.NR_FREE_PAGES]++ }
	o.Slice = 10_000_000
	_, err = s.RunAll(o)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "upstream run 1, event ")
}

func TestTHPThisnodeRefusesRepeatedGuestSizesAndPinnedGuestsLargerThanRAM(t *testing.T) {
	s, err := Get("thp-thisnode")
	require.NoError(t, err)
	_, err = s.Parse([]string{"guest_gb=30,30,34"})
	require.Error(t, err)
	assert.Equal(t, "guest_gb: 30 is listed twice", err.Error())
	// 66 GB on 2 x 32 GiB with 8 GiB of swap: pinned memory cannot be
	// swapped, so it does not fit (it used to run out of memory).
	_, err = s.RunAll(Options{Seed: 1, Runs: 1, Settings: []string{"guest_gb=66", "vfio=true"}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "guest_gb 66 does not fit")
}

func TestTHPThisnodeReportsAGuestThatRanOutOfMemoryAsFailed(t *testing.T) {
	s, err := Get("thp-thisnode")
	require.NoError(t, err)
	st, err := s.Parse([]string{"scale=0.02", "guest_gb=30"})
	require.NoError(t, err)
	run, err := s.NewRun("drop-thisnode", st, 1, 0)
	require.NoError(t, err)
	// Start refuses a guest larger than the host; here another process
	// pins 80% of the host's memory before qemu starts.
	m := run.cur.M
	hog := m.NewAnonRegion("hog", nil, m.TotalManagedPages()*8/10)
	tk := m.World.NewTask("hog", 0, nil, sim.Never)
	for hog.Cursor < hog.Pages {
		require.True(t, m.FaultAnonNext(tk, hog, true).OK)
	}
	guest := run.phases.(*thpThisnodeRun).qemu.Region
	for !run.Done() {
		run.Advance(run.Now()+100_000_000, math.MaxInt)
	}
	require.Len(t, run.Lines(), 1)
	line := run.Lines()[0]
	assert.Regexp(t, `^Failed: out of memory after [0-9.]+ of 0\.6 GB mapped, [0-9.]+s elapsed$`, line)
	assert.NotContains(t, line, "Finished")
	assert.Equal(t, "30 GB: out of memory", run.Results()[0].Headline)
	metrics := run.Metrics()
	assert.Equal(t, 1.0, metrics["oom_30"])
	mapped := float64(guest.Cursor) * mm.PAGE_SIZE / float64(1<<30)
	assert.InDelta(t, mapped/metrics["elapsed_s_30"], metrics["gb_per_s_30"], 1e-9, "the rate is of what was mapped")
	res := s.NewResult(1, 1, st)
	res.AddVariant("drop-thisnode", []*Run{run})
	assert.Contains(t, res.Text(), "  30 GB        OOM 1/1\n")
}
