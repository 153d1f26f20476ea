package mm

import (
	"testing"

	"github.com/pagesim/pagesim/engine/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestZoneViewShowsTheLatestCompactionRunAndTheCachedScanners(t *testing.T) {
	m := newQuietMachine(t, 8192, 1, 1)
	carveZone(t, m, nil, evenHolesLayout)
	zv := m.ZoneViews()
	require.Len(t, zv, 1)
	assert.Zero(t, zv[0].LastCompaction.Runs, "nothing compacted yet")
	z := m.Nodes[0].Zones[ZONE_NORMAL]
	assert.Equal(t, z.StartPFN, zv[0].CachedMigratePFN[1])

	inWorld(t, m, 0, func(tk *sim.Task) { m.CompactMemory(tk) })
	zv = m.ZoneViews()
	last := zv[0].LastCompaction
	assert.Equal(t, uint64(1), last.Runs, "compact_memory: one compact_zone() run")
	assert.Equal(t, m.Event(COMPACTMIGRATE_SCANNED), last.MigrateScanned)
	assert.Equal(t, m.Event(COMPACTFREE_SCANNED), last.FreeScanned)
	assert.Equal(t, "complete", last.Result, "a whole-zone run ends when the scanners meet")
	assert.False(t, last.Async)
	assert.False(t, last.Daemon)
	assert.LessOrEqual(t, last.FreePFN>>PageblockOrder, last.MigratePFN>>PageblockOrder, "the scanners met")
}

func TestNodeViewFollowsKswapd(t *testing.T) {
	m := newQuietMachine(t, 8192, 1, 2)
	carveZone(t, m, nil, lowFreeFileLayout)
	nv := m.NodeViews()
	require.Len(t, nv, 1)
	assert.Equal(t, "sleeping", nv[0].Kswapd)
	assert.Equal(t, "sleeping", nv[0].Kcompactd)
	// An allocation below the low watermark wakes kswapd, which then
	// balances the node on its CPU.
	tk := m.testTask(0)
	require.NotEqual(t, NilPFN, m.allocSync(tk, GFP_KERNEL, 0, 0, 0))
	seen := map[string]bool{}
	for i := 0; i < 10000 && m.World.Step(); i++ {
		mustCheck(t, m, "event %d", i)
		seen[m.NodeViews()[0].Kswapd] = true
	}
	assert.True(t, seen["balancing"], "kswapd was seen in balance_pgdat: %v", seen)
	assert.Equal(t, "sleeping", m.NodeViews()[0].Kswapd, "and went back to sleep")
}
