package app

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pagesim/pagesim/engine/sim"
)

func TestRecordedRunsDownloadTheirTraceUpToTheCurrentTime(t *testing.T) {
	c, _ := newTestController(t, "v1/playground?mem=32&x=10")
	var b bytes.Buffer
	assert.ErrorContains(t, c.WriteTrace(0, &b), "turn recording on", "nothing is recorded by default")

	c.Play()
	c.Step()
	tickUntilCaughtUp(t, c, 0)
	require.Positive(t, c.Now())
	c.SetRecording(true)
	assert.True(t, c.Recording())
	assert.Equal(t, sim.Time(0), c.Now(), "recording restarts the runs")
	assert.False(t, c.Playing())
	c.Step()
	tickUntilCaughtUp(t, c, 0)
	now := c.Now()
	require.Positive(t, now)

	require.NoError(t, c.WriteTrace(0, &b))
	var doc struct {
		TraceEvents []struct {
			Ph string  `json:"ph"`
			Ts float64 `json:"ts"`
		} `json:"traceEvents"`
	}
	require.NoError(t, json.Unmarshal(b.Bytes(), &doc))
	last, counters := 0.0, 0
	for _, e := range doc.TraceEvents {
		if e.Ph == "M" {
			continue
		}
		assert.GreaterOrEqual(t, e.Ts, last, "time-ordered")
		last = e.Ts
		if e.Ph == "C" {
			counters++
		}
	}
	assert.Positive(t, counters)
	assert.LessOrEqual(t, last, float64(now)/1000, "nothing past the current time")
	assert.Equal(t, "playground-baseline-run1", c.TraceName(0))

	var report bytes.Buffer
	require.NoError(t, c.WriteTraceReport(0, &report))
	assert.Error(t, c.WriteTrace(5, &b))
}
