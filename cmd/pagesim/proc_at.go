package main

// proc_at.go is `pagesim proc FILE --scenario ID --at TIME`: a /proc file
// of a scenario's machine at a time of its run. The run is the one
// `pagesim run ID` makes with the same variant, seed and settings; a run's
// state at a time depends only on that time (engine/scenario/run.go), so
// the file is what that run's machine held then, whatever else asks for
// it (the page's timeline reaches the same state from its checkpoints).

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/pagesim/pagesim/engine/scenario"
	"github.com/pagesim/pagesim/engine/sim"
)

type procAtArgs struct {
	id, variant, seed, at string
	sets                  []string
	limit                 uint64
}

// maxAt bounds --at: an hour of simulated time is far past every
// scenario's end at any scale.
const maxAt = time.Hour

// parseAt reads --at: a Go duration from the run's start.
func parseAt(s string) (sim.Time, error) {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		if _, nerr := strconv.ParseFloat(strings.TrimSpace(s), 64); nerr == nil {
			return 0, fmt.Errorf("--at %q has no unit: give a duration such as %ss", s, strings.TrimSpace(s))
		}
		return 0, fmt.Errorf("--at %q is not a duration (30s, 1.5s, 250ms, 2m)", s)
	}
	if d < 0 {
		return 0, fmt.Errorf("--at %s is before the run's start", s)
	}
	if d > maxAt {
		return 0, fmt.Errorf("--at %s is past every scenario's end (at most %v)", s, maxAt)
	}
	return sim.Time(d.Nanoseconds()), nil
}

func procAt(stdout, stderr io.Writer, file *procFile, a procAtArgs) int {
	fail := func(err error) int {
		fmt.Fprintf(stderr, "pagesim proc: %s\n", strings.SplitN(err.Error(), "\n", 2)[0])
		return exitInput
	}
	at, err := parseAt(a.at)
	if err != nil {
		return fail(err)
	}
	s, err := scenario.Get(a.id)
	if err != nil {
		return fail(err)
	}
	variant := a.variant
	if variant == "" {
		variant = s.DefaultVariants()[0]
	} else if !s.HasVariant(variant) {
		var names []string
		for _, v := range s.Variants {
			names = append(names, v.Name)
		}
		return fail(fmt.Errorf("%s has no variant %q (have: %s)", s.ID, variant, strings.Join(names, ", ")))
	}
	seed, err := strconv.ParseUint(a.seed, 10, 64)
	if err != nil {
		return fail(fmt.Errorf("--seed %q is not a non-negative integer", a.seed))
	}
	if err := refuseRepeats(a.sets); err != nil {
		return fail(err)
	}
	st, err := s.Parse(a.sets)
	if err != nil {
		return fail(err)
	}
	if err := s.CheckBudget(st.Values, 1, a.limit); err != nil {
		return fail(budgetHint(err))
	}
	r, err := s.NewRun(variant, st, seed, a.limit)
	if err != nil {
		return fail(budgetHint(err))
	}
	r.Advance(at, math.MaxInt)
	if r.Err() != nil {
		return fail(r.Err())
	}
	if r.Now() < at {
		return fail(fmt.Errorf("--at %s is past the run's end: %s %s ends at %ss", a.at, s.ID, variant, r.Now()))
	}
	if err := file.write(stdout, r.Machine()); err != nil {
		return fail(fmt.Errorf("writing %s: %w", file.name, err))
	}
	return exitOK
}
