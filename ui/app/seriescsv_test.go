package app

import (
	"bytes"
	"encoding/csv"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTheSeriesCSVHasAHeaderAndOneRowPerSampleWithThePagesValues(t *testing.T) {
	c, _ := newTestController(t, "v1/playground?mem=32&duration=2&x=1000")
	c.Play()
	for i := 0; !c.Ended(); i++ {
		c.Tick(time.Second, time.Hour)
		require.Less(t, i, 1000)
	}
	var b bytes.Buffer
	require.NoError(t, c.WriteSeriesCSV(&b))
	rows, err := csv.NewReader(&b).ReadAll()
	require.NoError(t, err)
	names := ChartNames(c.Spec())
	require.Len(t, names, 2)
	assert.Equal(t, []string{"variant", "t_s", "psi_some_avg10", names[0] + "_per_s", names[0], names[1] + "_per_s", names[1]}, rows[0])
	assert.Equal(t, "playground-series.csv", c.SeriesName())
	rows = rows[1:]
	n := 0
	for i, r := range c.Runs() {
		s := c.Samples(i)
		require.NotEmpty(t, s)
		for _, p := range s {
			row := rows[n]
			n++
			assert.Equal(t, r.Variant(), row[0])
			num := func(k int) float64 {
				x, err := strconv.ParseFloat(row[k], 64)
				require.NoError(t, err)
				return x
			}
			assert.Equal(t, p.T.Seconds(), num(1))
			assert.Equal(t, p.PSISome10, num(2))
			for k := range names {
				assert.Equal(t, p.Rates[k], num(3+2*k))
				assert.Equal(t, strconv.FormatUint(p.Totals[k], 10), row[4+2*k])
			}
		}
	}
	assert.Len(t, rows, n, "one row per sample, no more")

}
