package scenario

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// BenchmarkScenarioRun runs one variant of a scenario to its end, the
// work of one `pagesim run ID --variant V --jobs 1` without the report:
// the engine's whole cost on a scenario's mix of faults, reclaim,
// compaction and workload steps. Each case is small enough to profile in
// seconds (`-cpuprofile`); promoted-order/rc5-storm is rc5's reclaim
// storm, the slow path's retry loop at its hottest: duration_s=124 is
// 15.5 simulated seconds under the pool's time scale (93c9f9d), about
// 1.1M order-9 reclaim runs at seed 1 (at 60, 7.5 s, rc5 did not storm;
// the case fails if its run does not storm).
// docs/PERFORMANCE.md has the figures and the command.
func BenchmarkScenarioRun(b *testing.B) {
	cases := []struct {
		name, id, variant string
		set               []string
	}{
		{"promoted-order/rc5-storm", "promoted-order", "rc5", []string{"duration_s=124"}},
		{"promoted-order/posted", "promoted-order", "posted", []string{"duration_s=124"}},
		{"noretry-compaction/baseline", "noretry-compaction", "baseline", []string{"scale=0.25"}},
		{"nofrag-watermark/defrag1", "nofrag-watermark", "defrag1", nil},
		{"thp-thisnode/upstream", "thp-thisnode", "upstream", nil},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			s, err := Get(c.id)
			require.NoError(b, err)
			st, err := s.Parse(c.set)
			require.NoError(b, err)
			for b.Loop() {
				r, err := s.NewRun(c.variant, st, 1, 0)
				require.NoError(b, err)
				for !r.Done() {
					r.Advance(math.MaxInt64, math.MaxInt)
				}
				require.NoError(b, r.Err())
				require.NotEmpty(b, strings.Join(r.Lines(), ""))
				if strings.HasSuffix(c.name, "-storm") {
					require.Equal(b, 1.0, r.Metrics()["stormed"], "%s storms", c.name)
				}
			}
		})
	}
}
