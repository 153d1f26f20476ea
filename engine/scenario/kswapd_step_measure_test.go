package scenario

import (
	"math"
	"os"
	"strings"
	"testing"

	"github.com/pagesim/pagesim/engine/sim"
	"github.com/stretchr/testify/require"
)

// TestMeasureLongestKswapdStep prints, for one seed of each scenario the
// kswapd preemption fix was measured on, the longest step a kswapd task
// ran (the time its CPU could run nothing else) and how many kswapd
// steps there were, and the longest time a kswapd step ran past the
// earliest event that fell due while it ran (what that event waited for). A measurement, not an assertion: it runs only with
// PAGESIM_MEASURE set (docs/FIDELITY.md cites it).
//
//	PAGESIM_MEASURE=1 go test ./engine/scenario -run TestMeasureLongestKswapdStep -v
func TestMeasureLongestKswapdStep(t *testing.T) {
	if os.Getenv("PAGESIM_MEASURE") == "" {
		t.Skip("a measurement: set PAGESIM_MEASURE=1")
	}
	cases := []struct {
		id  string
		set []string
	}{
		{"thp-thisnode", []string{"scale=1"}},
		{"noretry-compaction", []string{"scale=0.25"}},
	}
	for _, c := range cases {
		s, err := Get(c.id)
		require.NoError(t, err)
		st, err := s.Parse(c.set)
		require.NoError(t, err)
		for _, v := range s.DefaultVariants() {
			r, err := s.NewRun(v, st, 1, 0)
			require.NoError(t, err)
			var longest, overrun, total sim.Time
			var steps int
			var hooked *sim.World
			for !r.Done() {
				if w := r.Machine().World; w != hooked {
					hooked = w
					w.OnStep = func(tk *sim.Task, cpu *sim.CPU, start, end sim.Time) {
						if strings.HasPrefix(tk.Name, "kswapd") {
							steps++
							total += end - start
							longest = max(longest, end-start)
							// How far the step ran past the
							// earliest event due meanwhile (a
							// wakeup, a timer, another CPU's
							// step), which waited for it.
							if at := r.Machine().World.NextEventTime(); at != sim.Never && at > start {
								overrun = max(overrun, end-at)
							}
						}
					}
				}
				r.Advance(math.MaxInt64, 1)
			}
			t.Logf("%s %s %s: kswapd steps %d, longest %v, longest past a due event %v, kswapd CPU time %v", c.id, strings.Join(c.set, " "), v, steps, longest, overrun, total)
		}
	}
}
