package app

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/sim"
)

func TestTheTraceLogKeepsTheLatestTenThousandAndASnapshotNeverChanges(t *testing.T) {
	var r traceRing
	ev := func(i int) *mm.TraceEvent {
		return &mm.TraceEvent{Time: sim.Time(i), Comm: "t", PID: int32(i % 3), ID: mm.TraceMmVmscanKswapdWake}
	}
	for i := 0; i < 2500; i++ {
		r.push(ev(i))
	}
	early := r.log(2500)
	require.Equal(t, 2500, early.Len())
	for i := 2500; i < 25500; i++ {
		r.push(ev(i))
	}
	late := r.log(25500)
	require.Equal(t, TraceKeep, late.Len())
	assert.Equal(t, sim.Time(25500-TraceKeep), late.At(0).Time, "the oldest kept")
	assert.Equal(t, sim.Time(25499), late.At(TraceKeep-1).Time)
	assert.LessOrEqual(t, len(r.chunks), TraceKeep/traceChunk+1, "old chunks are let go")
	// The early snapshot still reads what it was given.
	assert.Equal(t, sim.Time(0), early.At(0).Time)
	assert.Equal(t, sim.Time(2499), early.At(2499).Time)

	idx, n := late.Select(TraceFilter{Task: "t-2"}, 5)
	assert.Equal(t, TraceKeep/3+1, n)
	require.Len(t, idx, 5)
	assert.Equal(t, sim.Time(25499), late.At(idx[4]).Time, "the latest last")
	_, n = late.Select(TraceFilter{Event: "mm_compaction_begin"}, 5)
	assert.Zero(t, n)
}

func TestTheDownloadIsTheTraceFile(t *testing.T) {
	c, _ := newTestController(t, "v1/playground?mem=32&unmovable=60&fill=95")
	c.setTarget(3 * sim.Second)
	tickUntilCaughtUp(t, c, time.Hour)
	l := c.Snapshot(1).Live[0]
	require.Positive(t, l.Trace.Len())
	file := l.Trace.File(TraceFilter{}, 2)
	lines := strings.Split(strings.TrimSuffix(file, "\n"), "\n")
	assert.Equal(t, "# tracer: nop", lines[0])
	assert.Regexp(t, `^# entries-in-buffer/entries-written: \d+/\d+   #P:2$`, lines[2])
	assert.Equal(t, "#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION", lines[10])
	assert.Len(t, lines, 12+l.Trace.Len())
	assert.Equal(t, l.Trace.At(l.Trace.Len()-1).String(), lines[len(lines)-1])
	assert.Regexp(t, `^ +[a-z0-9_/-]+-\d+ +\[\d{3}\] \.{5} +\d+\.\d{6}: [a-z_]+: `, lines[12])
}

func TestTheShownTimeIsTheLinksTime(t *testing.T) {
	assert.Equal(t, "7.791", FormatTime(7790222030))
	assert.Equal(t, "7.790", FormatTime(7790*sim.Millisecond))
	assert.Equal(t, "0.000", FormatTime(0))
	assert.Equal(t, "0.001", FormatTime(1))

	c, _ := newTestController(t, "v1/playground?mem=32&duration=1&x=1000")
	c.Play()
	for i := 0; !c.Ended(); i++ {
		c.Tick(time.Second, time.Hour)
		require.Less(t, i, 1000)
	}
	s := c.Snapshot(1)
	st, err := c.Catalog().Decode(s.Link)
	require.NoError(t, err)
	assert.Equal(t, FormatTime(st.Time), FormatTime(s.Shown), "the link's t is the t shown")
	assert.Equal(t, FormatTime(s.Duration), FormatTime(s.Shown))
}
