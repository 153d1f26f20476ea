package mm

import (
	"testing"

	"github.com/pagesim/pagesim/engine/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pinnedGuestMachine is seed 003's node 0 in small: one 128 MiB node with
// swap, filled by a vfio-pinned guest faulted in THPs until THP faults
// fail, with the given kernel base.
func pinnedGuestMachine(t *testing.T, kernel KernelBase) (*Machine, *AnonRegion) {
	t.Helper()
	m := newQuietMachine(t, 32768, 1, 2)
	m.Kernel = kernel
	require.NoError(t, m.SetSwap(64<<20))
	require.NoError(t, m.SetTHPKnob("transparent_hugepage.enabled", "always"))
	require.NoError(t, m.SetTHPKnob("transparent_hugepage.defrag", "never"))
	r := m.NewAnonRegion("guest", nil, 32768)
	inWorld(t, m, 0, func(tk *sim.Task) {
		for r.Cursor+HPAGE_PMD_NR <= r.Pages {
			if res := m.FaultAnonNext(tk, r, true); !res.OK || res.Order != HPAGE_PMD_ORDER {
				break
			}
		}
	})
	require.Greater(t, r.PMDPages, uint64(20*HPAGE_PMD_NR), "the guest holds pinned THPs")
	resetCounters(m)
	return m, r
}

// reclaimState is what a reclaim run leaves behind.
type reclaimState struct {
	events     [NR_VM_EVENT_ITEMS]uint64
	count      [2][2][MAX_NR_ZONES]uint64
	folios     [2][2][MAX_NR_ZONES]uint64
	anon, file uint64
	clock      sim.Time
}

func (m *Machine) reclaimStateOf(tk *sim.Task) reclaimState {
	lv := m.memcgs[0].lruvecs[0]
	return reclaimState{events: m.Stat.Events, count: lv.pinnedCount, folios: lv.pinnedFolios,
		anon: lv.anonCost, file: lv.fileCost, clock: tk.Now}
}

func TestFastForwardedPinnedScansEqualTheBatchByBatchScans(t *testing.T) {
	tests := []struct {
		name   string
		kernel KernelBase
		cycles bool // pinned THPs go to the active list and come back
	}{
		{"today's reclaim keeps pinned THPs on the inactive list", KernelBase{}, false},
		{"v4.18's reclaim activates pinned THPs and ages them back", KernelBase{LegacyReclaim: true, LegacyPinnedReclaim: true}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			run := func(noFF bool) (reclaimState, uint64) {
				m, _ := pinnedGuestMachine(t, tc.kernel)
				m.noFastForward = noFF
				var st reclaimState
				tk := inWorld(t, m, 0, func(tk *sim.Task) {
					for i := 0; i < 3; i++ {
						require.Equal(t, NilPFN, m.allocSync(tk, GFP_TRANSHUGE|__GFP_THISNODE, HPAGE_PMD_ORDER, 0, 0))
					}
				})
				st = m.reclaimStateOf(tk)
				return st, m.Reclaim.FastForwardedBatches
			}
			batch, none := run(true)
			fast, ff := run(false)
			require.Zero(t, none)
			require.Greater(t, ff, uint64(1000), "the scans were fast-forwarded")
			assert.Equal(t, batch, fast)
			assert.Greater(t, batch.events[PGSCAN_DIRECT], uint64(0))
			assert.Equal(t, tc.cycles, batch.events[PGACTIVATE] > 0, "pgactivate")
			assert.Equal(t, tc.cycles, batch.events[PGDEACTIVATE] > 0, "pgdeactivate")
			t.Logf("pgscan_direct %d pgactivate %d pgdeactivate %d batches %d clock %v", batch.events[PGSCAN_DIRECT],
				batch.events[PGACTIVATE], batch.events[PGDEACTIVATE], ff, batch.clock)
		})
	}
}

func TestTheV418BaseReclaimsPinnedGuestMemoryAsV418Did(t *testing.T) {
	tests := []struct {
		name   string
		kernel KernelBase
		// allocstalls per failed THP fault: one per do_try_to_free_pages
		// pass, the retry included.
		stalls    uint64
		activates bool
	}{
		{"today: a fruitless pass is retried with a full cgroup walk, pinned THPs stay inactive", KernelBase{}, 2, false},
		{"v4.18: no full-walk retry (do_try_to_free_pages had only the memory.low one)", KernelBase{LegacyReclaim: true}, 1, false},
		{"v4.18: pinned THPs fail can_split_huge_page and are activated, never swapped",
			KernelBase{LegacyReclaim: true, LegacyPinnedReclaim: true}, 1, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, _ := pinnedGuestMachine(t, tc.kernel)
			inWorld(t, m, 0, func(tk *sim.Task) {
				require.Equal(t, NilPFN, m.allocSync(tk, GFP_TRANSHUGE|__GFP_THISNODE, HPAGE_PMD_ORDER, 0, 0))
			})
			assert.Equal(t, uint64(1), m.Reclaim.DirectRuns[HPAGE_PMD_ORDER], "one try_to_free_pages")
			assert.Equal(t, tc.stalls, allocstalls(m), "allocstall_*")
			lv := m.memcgs[0].lruvecs[0]
			active, _ := lv.pinnedAnonPool(1, MAX_NR_ZONES-1)
			assert.Equal(t, tc.activates, m.Event(PGACTIVATE) > 0, "pgactivate")
			assert.Equal(t, tc.activates, active > 0, "pinned THPs on the active list")
			assert.Zero(t, m.Event(PSWPOUT), "pinned memory is never written to swap")
			assert.Zero(t, m.Swap.UsedPages, "nor given swap slots")
		})
	}
}
