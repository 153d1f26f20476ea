package bench

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTheWorkloadsRunAndDoTheSameWorkEveryTime(t *testing.T) {
	a, err := Run()
	require.NoError(t, err)
	b, err := Run()
	require.NoError(t, err)
	require.Len(t, a, len(Workloads))
	for i := range a {
		assert.Equal(t, a[i].Name, b[i].Name)
		assert.Positive(t, a[i].NsPerOp, a[i].Name)
		assert.Positive(t, a[i].Check, a[i].Name)
		assert.Equal(t, a[i].Check, b[i].Check, "%s: the same work", a[i].Name)
	}
	var v struct{ Results []Result }
	require.NoError(t, json.Unmarshal([]byte(RunJSON()), &v))
	require.Len(t, v.Results, len(Workloads))
	assert.Equal(t, a[3].Check, v.Results[3].Check)
}

// BenchmarkWorkloads runs each workload as a Go benchmark (the native
// side of docs/PERFORMANCE.md's browser comparison).
func BenchmarkWorkloads(b *testing.B) {
	for _, w := range Workloads {
		b.Run(w.Name, func(b *testing.B) {
			var total float64
			for i := 0; i < b.N; i++ {
				_, wall, err := w.Run(w.Ops)
				if err != nil {
					b.Fatal(err)
				}
				total += float64(wall.Nanoseconds()) / float64(w.Ops)
			}
			b.ReportMetric(total/float64(b.N), "ns/workload-op")
		})
	}
}
