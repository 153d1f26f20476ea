package scenario

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/sim"
)

// steps is a test scenario's run: phase i boots a 32 MiB machine whose one
// task allocates an order-0 page at every whole millisecond, allocs[i]
// times, and then exits; bootErr fails the boot of that phase.
type steps struct {
	allocs  []int
	bootErr int
	trace   bool   // record mm_page_alloc
	ended   []bool // stuck flag of each phase's End, in order
	metrics map[string]float64
}

func (s *steps) Len() int { return len(s.allocs) }

func (s *steps) Boot(i int) (*Phase, error) {
	if i == s.bootErr {
		return nil, errors.New("no memory for phase " + strconv.Itoa(i))
	}
	lay, err := mm.SimpleLayout(32<<20/mm.PAGE_SIZE, 1, 1)
	if err != nil {
		return nil, err
	}
	m, err := mm.NewMachine(lay)
	if err != nil {
		return nil, err
	}
	if s.trace {
		require := m.Trace.Enable("mm_page_alloc", true)
		if require != nil {
			return nil, require
		}
	}
	done := 0
	m.World.NewTask("allocator", 0, sim.ProgramFunc(func(w *sim.World, t *sim.Task) sim.Time {
		if done == s.allocs[i] {
			return sim.Exit
		}
		m.AllocPagesLocal(t, mm.GFP_KERNEL, 0)
		done++
		return sim.Time(done) * sim.Millisecond
	}), 0)
	f := phaseFuncs{
		done:   func() bool { return done == s.allocs[i] },
		status: func() string { return strconv.Itoa(done) + " allocated" },
		end: func(stuck bool) PhaseResult {
			s.ended = append(s.ended, stuck)
			s.metrics["allocated_"+strconv.Itoa(i)] = float64(m.Event(mm.PGALLOC_NORMAL))
			return PhaseResult{Line: fmt.Sprintf("phase %d: %d pages at %d ns", i, done, m.World.Now()), Headline: strconv.Itoa(done)}
		},
	}
	return &Phase{Name: fmt.Sprintf("%d pages", s.allocs[i]), M: m, Done: f, Status: f, End: f}, nil
}

// phaseFuncs is a test phase's questions as functions (a run made of
// them cannot be checkpointed).
type phaseFuncs struct {
	done   func() bool
	status func() string
	end    func(stuck bool) PhaseResult
}

func (f phaseFuncs) Done() bool                 { return f.done() }
func (f phaseFuncs) Status() string             { return f.status() }
func (f phaseFuncs) End(stuck bool) PhaseResult { return f.end(stuck) }

func (s *steps) Metrics() map[string]float64 { return s.metrics }

func stepsSpec(p *steps) *Spec {
	return &Spec{
		ID: "steps", Variants: []Variant{{Name: "only"}},
		MetricsOf: func(Values) []Metric { return nil },
		Machine:   func(Values) string { return "one 32 MiB node per phase" },
		Layout:    func(Values) (mm.Config, error) { return mm.SimpleLayout(32<<20/mm.PAGE_SIZE, 1, 1) },
		Start: func(Config) (Phases, error) {
			p.metrics = map[string]float64{}
			return p, nil
		},
	}
}

func newStepsRun(t *testing.T, p *steps) *Run {
	t.Helper()
	s := stepsSpec(p)
	require.NoError(t, s.Check())
	st, err := s.Parse(nil)
	require.NoError(t, err)
	r, err := s.NewRun("only", st, 1, 0)
	require.NoError(t, err)
	return r
}

func TestARunKeepsOneClockAndSumsTheCountersOverItsPhases(t *testing.T) {
	p := &steps{allocs: []int{10, 20}, bootErr: -1}
	r := newStepsRun(t, p)
	v := r.View()
	assert.Equal(t, "1/2: 10 pages", v.Phase())
	assert.Equal(t, "0 allocated", v.Status())
	assert.Zero(t, r.Duration(), "the end is not known before it is reached")

	r.Advance(5*sim.Millisecond+1, math.MaxInt)
	assert.Equal(t, 5*sim.Millisecond+1, r.Now(), "short of the phase's end, the run stands where it was asked to")
	assert.Equal(t, "6 allocated", v.Status())

	// The first phase's task allocates at 0..9 ms: the phase ends with
	// that event and the second phase's clock starts from there.
	r.Advance(15*sim.Millisecond, math.MaxInt)
	assert.Equal(t, "2/2: 20 pages", v.Phase())
	assert.Equal(t, 15*sim.Millisecond, r.Now())
	require.Len(t, v.Results(), 1)
	assert.Equal(t, "phase 0: 10 pages at 9000000 ns", v.Results()[0].Line)
	assert.Equal(t, uint64(10+7), v.Event(mm.PGALLOC_NORMAL), "the first machine's ten and the second's seven (at its 0..6 ms)")

	r.Advance(sim.Second, math.MaxInt)
	assert.True(t, r.Done())
	assert.NoError(t, r.Err())
	assert.Equal(t, 9*sim.Millisecond+19*sim.Millisecond, r.Now())
	assert.Equal(t, r.Now(), r.Duration())
	assert.Equal(t, "done", v.Status())
	assert.Equal(t, []string{"phase 0: 10 pages at 9000000 ns", "phase 1: 20 pages at 19000000 ns"}, r.Lines())
	assert.Equal(t, map[string]float64{"allocated_0": 10, "allocated_1": 20}, r.Metrics())
	assert.Equal(t, uint64(30), v.Event(mm.PGALLOC_NORMAL))
	assert.Equal(t, []bool{false, false}, p.ended)
	assert.Zero(t, r.Advance(2*sim.Second, math.MaxInt), "a finished run does not move")
}

// The page reads a run's tracepoints as they come, over its phases: the
// events a machine recorded just before its phase ended are still there
// after the next one booted, and every time is on the run's clock.
func TestTheTraceGoesOnOverThePhasesOnTheRunsClock(t *testing.T) {
	p := &steps{allocs: []int{10, 20}, bootErr: -1, trace: true}
	r := newStepsRun(t, p)
	v := r.View()
	r.Advance(4*sim.Millisecond, math.MaxInt)
	seen := v.TraceWritten()
	r.Advance(15*sim.Millisecond, math.MaxInt)
	assert.Equal(t, 9*sim.Millisecond, v.PhaseStart(), "the second machine booted when the first ended")
	ev := v.TraceEvents(seen, nil)
	assert.Len(t, ev, int(v.TraceWritten()-seen), "nothing is lost at the phase's end")
	var times []sim.Time
	for _, e := range ev {
		if e.Name() == "mm_page_alloc" {
			times = append(times, e.Time/sim.Millisecond)
		}
	}
	// The first machine's allocations after its 4th ms (seen already),
	// the second's in its 0..6th, which is the run's 9..15th.
	assert.Equal(t, []sim.Time{5, 6, 7, 8, 9, 9, 10, 11, 12, 13, 14, 15}, times)
	assert.Equal(t, "mm_page_alloc_extfrag", ev[5].Name(), "the second machine's first allocation claims a block")
	lines := v.TraceLines(2)
	require.Len(t, lines, 2)
	assert.Contains(t, lines[1], " 0.015000: mm_page_alloc: ")
	assert.Empty(t, v.TraceEvents(v.TraceWritten(), nil))
}

func TestARunsOutcomeDoesNotDependOnItsSlicing(t *testing.T) {
	type outcome struct {
		lines   []string
		metrics map[string]float64
		now     sim.Time
	}
	run := func(advance func(r *Run)) outcome {
		r := newStepsRun(t, &steps{allocs: []int{7, 3, 12}, bootErr: -1})
		for i := 0; !r.Done(); i++ {
			advance(r)
			require.Less(t, i, 100000)
		}
		return outcome{r.Lines(), r.Metrics(), r.Now()}
	}
	whole := run(func(r *Run) { r.Advance(math.MaxInt64, math.MaxInt) })
	byEvent := run(func(r *Run) {
		assert.LessOrEqual(t, r.Advance(math.MaxInt64, 1), 1)
	})
	byTime := run(func(r *Run) { r.Advance(r.Now()+777*sim.Microsecond, math.MaxInt) })
	assert.Equal(t, whole, byEvent)
	assert.Equal(t, whole, byTime)
	assert.Len(t, whole.lines, 3)
}

func TestAPhaseThatCannotBootEndsTheRun(t *testing.T) {
	p := &steps{allocs: []int{2, 5, 5}, bootErr: 1}
	r := newStepsRun(t, p)
	r.Advance(sim.Second, math.MaxInt)
	assert.True(t, r.Done())
	assert.ErrorContains(t, r.Err(), "phase 2 of 3 (after 2 pages) could not boot: no memory for phase 1")
	assert.Contains(t, r.View().Status(), "failed: ")

	s := stepsSpec(&steps{allocs: []int{2, 5, 5}, bootErr: 1})
	_, err := s.RunAll(Options{Runs: 1})
	assert.ErrorContains(t, err, "could not boot", "pagesim run reports it")
	s = stepsSpec(&steps{allocs: []int{2}, bootErr: 0})
	_, err = s.RunAll(Options{Runs: 1})
	assert.ErrorContains(t, err, "no memory for phase 0", "a first phase that cannot boot is an error at once")
}

func TestAFixedLengthPhaseEndsAtItsTimeWhateverTheSlicing(t *testing.T) {
	s, err := Get("playground")
	require.NoError(t, err)
	st, err := s.Parse([]string{"mem=32", "duration=1"})
	require.NoError(t, err)
	a, err := s.NewRun("baseline", st, 3, 0)
	require.NoError(t, err)
	assert.Equal(t, sim.Second, a.Duration(), "known from the start")
	a.Advance(5*sim.Second, math.MaxInt)
	assert.True(t, a.Done())
	assert.Equal(t, sim.Second, a.Now())
	b, err := s.NewRun("baseline", st, 3, 0)
	require.NoError(t, err)
	for !b.Done() {
		b.Advance(b.Now()+3*sim.Millisecond, 50)
	}
	assert.Equal(t, a.Metrics(), b.Metrics())
	assert.Positive(t, a.Metrics()["allocations"])
}

func TestEveryScenarioKeepsTheModelsRules(t *testing.T) {
	require.NotEmpty(t, All())
	for _, s := range append(All(), mustGet(t, "playground")) {
		t.Run(s.ID, func(t *testing.T) {
			require.NoError(t, s.Check())
			st, err := s.Parse(nil)
			require.NoError(t, err)
			metrics := map[string]bool{}
			for _, m := range s.MetricsOf(st.Values) {
				metrics[m.Name] = true
			}
			for _, tb := range s.SeedResults {
				for _, row := range tb.Rows {
					assert.True(t, metrics[row.Metric], "the seed's row %q compares with %s, which the run reports", row.Label, row.Metric)
				}
			}
			if s.Seed != "" {
				assert.NotEmpty(t, s.Lore, "a seed's scenario links its thread")
				assert.NotEmpty(t, s.SeedResults, "and carries the seed's numbers")
				headline := false
				for _, m := range s.MetricsOf(st.Values) {
					headline = headline || m.Headline
				}
				assert.True(t, headline, "and says which metrics are its headline")
			}
		})
	}
}

func TestCheckRefusesAScenarioThatBreaksTheModel(t *testing.T) {
	good := func() *Spec {
		s := *mustGet(t, "playground")
		return &s
	}
	require.NoError(t, good().Check())
	for _, tc := range []struct {
		name string
		edit func(s *Spec)
		want string
	}{
		{"a bad name", func(s *Spec) { s.ID = "Play ground" }, "not a valid name"},
		{"no default variant", func(s *Spec) { s.Variants = []Variant{{Name: "a", Optional: true}} }, "no variant that runs by default"},
		{"a repeated variant", func(s *Spec) { s.Variants = []Variant{{Name: "a"}, {Name: "a"}} }, "repeated variant"},
		{"a default that fails its check", func(s *Spec) { s.Params = []Param{rangeParam("n", "", KindInt, "9", 1, 4)} }, "the default of n fails"},
		{"a page value that fails its check", func(s *Spec) { s.PageParams = map[string]string{"mem": "1"} }, "the page's mem=1 fails"},
		{"a page value of no parameter", func(s *Spec) { s.PageParams = map[string]string{"nope": "1"} }, "unknown parameter"},
		{"a bad knob", func(s *Spec) { s.Knobs = []Knob{{Name: "vm.nosuch", Value: "1"}} }, "its knob vm.nosuch"},
		{"a counter /proc/vmstat lacks", func(s *Spec) { s.Counters = []string{"nr_free_pages", "free_pages"} }, `"free_pages" is not a /proc/vmstat counter`},
		{"a seed table of no variant", func(s *Spec) { s.SeedResults = []SeedTable{{Title: "t", Variants: []string{"nope"}}} }, `names no variant "nope"`},
		{"a short seed row", func(s *Spec) {
			s.SeedResults = []SeedTable{{Title: "t", Variants: []string{"baseline"}, Rows: []SeedRow{{Label: "r", Metric: "frees"}}}}
		}, "has 0 values for 1 variants"},
		{"no Start", func(s *Spec) { s.Start = nil }, "lacks Start"},
		{"no Layout", func(s *Spec) { s.Layout = nil }, "or Layout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := good()
			tc.edit(s)
			assert.ErrorContains(t, s.Check(), tc.want)
		})
	}
}

func TestThePlaygroundRunsFromTheCommandLineWithAMetricTable(t *testing.T) {
	s := mustGet(t, "playground")
	assert.NotContains(t, All(), s, "unlisted")
	res, err := s.RunAll(Options{Seed: 2, Runs: 2, Variants: []string{"baseline", "high_wmark"}, Settings: []string{"mem=32", "duration=1"}, CheckEvery: checkEvery})
	require.NoError(t, err)
	text := res.Text()
	lines := splitLines(text)
	assert.Equal(t, "pagesim "+Version+": playground, seed 2, 2 runs", lines[0])
	assert.Equal(t, "machine: 1 x 32 MiB nodes, 2 CPUs per node; 1 s of churn", lines[1])
	assert.Regexp(t, `\n  metric +baseline +high_wmark\n`, text)
	num := `\d+(\.\d{3})?`
	assert.Regexp(t, `\n  allocations +`+num+` ± `+num+` +`+num+` ± `+num+`\n`, text)
}

func mustGet(t *testing.T, id string) *Spec {
	t.Helper()
	s, err := Get(id)
	require.NoError(t, err)
	return s
}
