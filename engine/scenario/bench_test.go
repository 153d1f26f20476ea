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
// storm (about 1.2M order-9 reclaim runs), the slow path's retry loop at
// its hottest. docs/PERFORMANCE.md has the figures and the command.
func BenchmarkScenarioRun(b *testing.B) {
	cases := []struct {
		name, id, variant string
		set               []string
	}{
		{"promoted-order/rc5-storm", "promoted-order", "rc5", []string{"duration_s=60"}},
		{"promoted-order/posted", "promoted-order", "posted", []string{"duration_s=60"}},
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
			}
		})
	}
}
