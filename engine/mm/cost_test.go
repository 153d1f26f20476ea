package mm

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAWhatIfMaySetACostToZeroButNotCondReschedNorPastTheSoftLockupThreshold(t *testing.T) {
	tests := []struct {
		name, cost string
		ns         int64
		err        string
	}{
		{"work can be made free, to see what it costs", "MigratePage", 0, ""},
		{"a negative time is refused", "MigratePage", -1, "cost MigratePage: -1 ns is negative"},
		{"cond_resched() takes time: it is what moves a looping allocation's clock", "CondResched", 0,
			"cost CondResched: 0 ns would let an allocation loop in the slow path without its clock moving; at least 1 ns"},
		{"one nanosecond is enough", "condresched", 1, ""},
		{"an unknown name is refused", "CondReschedule", 5, `unknown cost "CondReschedule"`},
		{"up to the soft-lockup threshold is a cost", "MigratePage", int64(MaxCost), ""},
		{"past it a charge could wrap the clock: refused", "MigratePage", int64(MaxCost) + 1,
			"cost MigratePage: 20000000001 ns is longer than 20 s, the most one unit of kernel work may cost (the soft-lockup threshold, 2 x kernel.watchdog_thresh)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultCosts()
			err := c.Set(tc.cost, tc.ns)
			if tc.err != "" {
				require.EqualError(t, err, tc.err)
				assert.Equal(t, DefaultCosts(), c, "nothing changed")
				return
			}
			require.NoError(t, err)
			got, ok := c.Get(tc.cost)
			require.True(t, ok)
			assert.EqualValues(t, tc.ns, got)
		})
	}
}
