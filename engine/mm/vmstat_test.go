package mm

import (
	"testing"

	"github.com/pagesim/pagesim/engine/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDecayPCPHighTrimsAHighThatRefillsGrewByAnEighthASecond grows CPU
// 0's pcp->high with refills (order-0 allocations), fills the list with
// frees, then lets the vmstat worker run: once a second pcp->high falls to
// max(count - batch<<5, high - high/8, high_min), the pages above it go
// back to the buddy lists (at most batch<<5 a second: the first seconds
// here), and at high_min with nothing above it the
// worker parks (no event a second).
func TestDecayPCPHighTrimsAHighThatRefillsGrewByAnEighthASecond(t *testing.T) {
	m := newQuietMachine(t, 1<<19, 1, 2)
	z := m.Nodes[0].Zones[ZONE_NORMAL]
	p := &z.pcp[0]
	inWorld(t, m, 0, func(tk *sim.Task) {
		var held []PFN
		for range 60000 {
			pfn := m.allocSync(tk, GFP_KERNEL, 0, 0, 0)
			require.NotEqual(t, NilPFN, pfn)
			held = append(held, pfn)
		}
		// Frees fill the list up to pcp->high: the decay's drain.
		for _, pfn := range held[:30000] {
			m.FreePages(tk, pfn, 0)
		}
	})
	require.Greater(t, p.high, p.highMin+p.batch<<3, "refills grew pcp->high")
	require.NotNil(t, m.vmstat, "a refill above high_min queued the CPU's vmstat_work")
	require.True(t, m.vmstat[0].pending)
	seconds, capped := 0, 0
	for sec := sim.Time(1); p.high > p.highMin || p.count > p.high; sec++ {
		require.Less(t, sec, sim.Time(60), "pcp->high reaches high_min")
		high, count, free := p.high, p.count, z.Stat[NR_FREE_PAGES]
		runWorld(t, m, sec*sim.Second+sim.Millisecond)
		want := max(count-p.batch<<pcpBatchScaleMax, high-high>>3, p.highMin)
		assert.Equal(t, want, p.high, "second %d: pcp->high decays by an eighth", sec)
		assert.Equal(t, min(count, want), p.count, "second %d: the pages above pcp->high are freed", sec)
		assert.Equal(t, free+int64(count-p.count), z.Stat[NR_FREE_PAGES], "second %d: to the buddy lists", sec)
		if want == count-p.batch<<pcpBatchScaleMax && want > high-high>>3 {
			capped++
		}
		seconds++
	}
	assert.Greater(t, seconds, 5)
	assert.Greater(t, capped, 0, "some seconds free no more than batch << CONFIG_PCP_BATCH_SCALE_MAX")
	runWorld(t, m, m.World.Now()+sim.Second)
	assert.False(t, m.vmstat[0].pending, "nothing to decay: the work is not requeued")
	assert.True(t, m.vmstat[0].task.Sleeping())
	assert.Equal(t, "kworker/0:1", m.vmstat[0].task.Name)
	assert.False(t, m.vmstat[1].pending, "CPU 1 allocated nothing")
	assert.Nil(t, m.vmstat[1].task)
}

// TestRoundJiffiesPutsEachCPUOnItsOwnWholeSecond checks
// round_jiffies_common(): a whole second of jiffies less 3 a CPU, down
// within a quarter second past it, and the value itself if rounding
// would not leave it in the future.
func TestRoundJiffiesPutsEachCPUOnItsOwnWholeSecond(t *testing.T) {
	for _, c := range []struct {
		name         string
		j, now, want uint64
		cpu          int
	}{
		{"a second after a whole second stays on it", 1250, 1000, 1250, 0},
		{"CPU 1 is 3 jiffies early", 1250, 1000, 1247, 1},
		{"a little past the second rounds down", 1260, 1010, 1250, 0},
		{"more than a quarter past rounds up", 1320, 1070, 1500, 0},
		{"rounding into the past keeps j", 1010, 1005, 1010, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, roundJiffies(c.j, c.cpu, 250, c.now))
		})
	}
}
