package scenario

// jobs.go runs many runs at once: the variants x runs of `pagesim run` and
// the grid of `pagesim sweep`, on as many goroutines as the caller asks
// for and the memory budget allows.
//
// A run is a pure function of its scenario, settings, variant and seed: it
// boots its own machines, draws from its own seeded generators and shares
// no mutable state with another run (the engine's package-level variables
// are read-only tables; TestParallelRunsGiveTheBytesOfOneCore runs under
// the race detector in `go test -race`). So the runs can go in any order
// on any number of goroutines, and the results, put back in the order of
// the jobs, are the bytes one goroutine gives.
//
// Memory is what limits how many run at once: each run in flight holds
// its machine (mm.MachineBytes of the scenario's layout), so the runs in
// flight together must fit the budget, and FitJobs lowers the number of
// goroutines to what fits.

import (
	"fmt"
	"sync"

	"github.com/pagesim/pagesim/engine/mm"
)

// job is one run to make: a variant at some settings, from a seed.
type job struct {
	st      Settings
	variant string
	run     int // the run's number at its point, from 0
	seed    uint64
	// label prefixes the run's error ("upstream run 2").
	label string
}

// jobResult is what a finished run leaves: its metrics and its phases'
// result lines.
type jobResult struct {
	metrics map[string]float64
	lines   []string
}

// FitJobs returns how many of the runs of values (one Values per grid
// point; each run holds one machine of the scenario's layout for those
// values) can be in flight together within limit bytes: jobs, or fewer
// when their machines would not fit, and never more than runs. It returns
// the layout's error, or an *mm.BudgetError when not even one machine of
// the largest layout fits. A limit of 0 means no limit.
func (s *Spec) FitJobs(values []Values, jobs, runs int, limit uint64) (int, error) {
	return s.FitJobsWith(values, jobs, runs, limit, 0)
}

// FitJobsWith is FitJobs for runs that each hold perRun bytes besides
// their machine (a recording's budget, Options.Record).
func (s *Spec) FitJobsWith(values []Values, jobs, runs int, limit, perRun uint64) (int, error) {
	jobs = max(1, min(jobs, runs))
	var largest mm.Config
	var cost uint64
	for _, v := range values {
		cfg, err := s.Layout(v)
		if err != nil {
			return 0, err
		}
		if c := mm.MachineBytes(cfg); c > cost {
			largest, cost = cfg, c
		}
	}
	if err := mm.CheckBudget(largest, 1, machineBytes(limit, perRun)); err != nil {
		return 0, err
	}
	if limit > 0 && cost > 0 {
		jobs = min(jobs, int(min(limit/(cost+perRun), uint64(jobs))))
	}
	return max(jobs, 1), nil
}

// machineBytes is what a budget of limit leaves for a machine when the
// run holds perRun bytes besides (1 when nothing is left, so that a
// limit is still a limit).
func machineBytes(limit, perRun uint64) uint64 {
	switch {
	case limit == 0:
		return 0
	case limit <= perRun:
		return 1
	}
	return limit - perRun
}

// recordBytes is what each run's recording may hold.
func (o Options) recordBytes() uint64 {
	if o.Record == nil {
		return 0
	}
	if o.Record.MaxBytes == 0 {
		return mm.DefaultRecordBytes
	}
	return o.Record.MaxBytes
}

// runJobs makes every job on up to o.Jobs goroutines (FitJobs has been
// applied by the caller) and returns their results in the jobs' order.
// When runs fail, it starts no more, waits for those under way and returns
// the error of the first failed job in the jobs' order: the same error
// however the runs were spread over goroutines, since jobs are handed out
// in order and every job before a failed one was handed out too.
func (s *Spec) runJobs(jobs []job, o Options, workers int) ([]jobResult, error) {
	out := make([]jobResult, len(jobs))
	errs := make([]error, len(jobs))
	panics := make([]any, len(jobs))
	var (
		mu     sync.Mutex // serialises o.Progress and o.RunDone, guards next, done, failed
		next   int
		done   int
		failed bool
	)
	take := func() (int, bool) {
		mu.Lock()
		defer mu.Unlock()
		if failed || next == len(jobs) {
			return 0, false
		}
		next++
		return next - 1, true
	}
	one := func(i int) (err error) {
		defer func() {
			// A bug in a run is the caller's panic, as it is with
			// one goroutine (the command line turns it into its
			// one-line internal error).
			if r := recover(); r != nil {
				panics[i], err = r, fmt.Errorf("panic")
			}
		}()
		j := &jobs[i]
		var run *Run
		if o.Record != nil {
			run, err = s.NewRecordedRun(j.variant, j.st, j.seed, machineBytes(o.MaxBytes, o.recordBytes()), *o.Record)
		} else {
			run, err = s.NewRun(j.variant, j.st, j.seed, o.MaxBytes)
		}
		if err != nil {
			return err
		}
		progress := func() {
			if o.Progress != nil {
				mu.Lock()
				defer mu.Unlock()
				o.Progress(j.variant, j.run, run)
			}
		}
		if err := run.advanceAll(o, progress); err != nil {
			return fmt.Errorf("%s, %w", j.label, err)
		}
		if o.Recorded != nil {
			if err := o.Recorded(j.variant, j.run, run); err != nil {
				return err
			}
		}
		out[i] = jobResult{metrics: run.Metrics(), lines: run.Lines()}
		return nil
	}
	if o.RunDone != nil {
		o.RunDone(0, len(jobs))
	}
	var wg sync.WaitGroup
	for range max(1, min(workers, len(jobs))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i, ok := take()
				if !ok {
					return
				}
				err := one(i)
				mu.Lock()
				errs[i] = err
				failed = failed || err != nil
				done++
				if err == nil && o.RunDone != nil {
					o.RunDone(done, len(jobs))
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if panics[i] != nil {
			panic(panics[i])
		}
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}
