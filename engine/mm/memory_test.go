package mm

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func twoNodes(t testing.TB, pagesPerNode uint64) *Machine {
	cfg, err := SimpleLayout(pagesPerNode, 2, 2)
	require.NoError(t, err)
	cfg.THP = DefaultTHPSettings()
	cfg.THP.Defrag = DefragAlways
	m, err := NewMachine(cfg)
	require.NoError(t, err)
	return m
}

// A VM bigger than node 0, pinned with vfio from a CPU on node 0, under the
// 2018 THP placement: once node 0 is full every THP fault runs direct
// reclaim on node 0, which finds only pinned memory.
func TestLegacyThisnodeTHPFaultsReclaimPinnedLocalNode(t *testing.T) {
	m := twoNodes(t, 16384) // 2 x 64 MiB
	m.Kernel.THPLegacyThisnode = true
	require.NoError(t, m.SetSwap(64<<20))
	tk := m.testTask(0)
	r := m.NewAnonRegion("guest", nil, 20000) // ~78 MiB: more than node 0 holds
	r.Madvised = true
	for i := 0; r.Cursor < r.Pages; i++ {
		res := m.FaultAnonNext(tk, r, true)
		require.True(t, res.OK, "fault %d failed", i)
		if i%64 == 0 {
			m.MustCheckInvariants()
		}
	}
	m.MustCheckInvariants()
	assert.Greater(t, r.NodePages[1], uint64(0), "the part beyond node 0 went to node 1")
	assert.Greater(t, m.Event(ALLOCSTALL_NORMAL)+m.Event(ALLOCSTALL_MOVABLE), uint64(0), "THP faults reclaimed")
	assert.Greater(t, m.Event(PGSCAN_DIRECT), uint64(0))
	assert.Equal(t, uint64(0), m.Event(PSWPOUT), "pinned pages are never swapped")
	assert.Greater(t, m.Event(THP_FAULT_FALLBACK), uint64(0))
	s, ok := m.LastStall()
	require.True(t, ok)
	assert.Contains(t, s, "__GFP_THISNODE")
	assert.Contains(t, s, "__alloc_pages_direct_reclaim")
	t.Log(s)
}

func TestOnlyCompactNeverReclaims(t *testing.T) {
	m := twoNodes(t, 16384)
	m.Kernel.THPLegacyThisnode = true
	m.Patches.OnlyCompact = true
	require.NoError(t, m.SetSwap(64<<20))
	tk := m.testTask(0)
	r := m.NewAnonRegion("guest", nil, 20000)
	r.Madvised = true
	for r.Cursor < r.Pages {
		require.True(t, m.FaultAnonNext(tk, r, true).OK)
	}
	m.MustCheckInvariants()
	assert.Equal(t, uint64(0), m.Event(ALLOCSTALL_NORMAL)+m.Event(ALLOCSTALL_MOVABLE), "no direct reclaim")
	assert.Greater(t, r.NodePages[1], uint64(0))
}

func TestDropThisnodeTakesTHPFromTheOtherNode(t *testing.T) {
	m := twoNodes(t, 16384)
	m.Kernel.THPLegacyThisnode = true
	m.Patches.THPDropThisnode = true
	tk := m.testTask(0)
	r := m.NewAnonRegion("guest", nil, 20000)
	r.Madvised = true
	for r.Cursor < r.Pages {
		require.True(t, m.FaultAnonNext(tk, r, true).OK)
	}
	m.MustCheckInvariants()
	assert.Greater(t, r.NodePages[1], uint64(0))
	assert.Greater(t, r.PMDPages, r.BasePages, "mostly THP")
}
