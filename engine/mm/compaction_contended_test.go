package mm

// Behaviour tests for async compaction's lock contention: a trylock that
// finds zone->lock or an lru_lock held sets cc->contended, and the run ends
// with COMPACT_CONTENDED at the next pageblock boundary with no suitable
// page (compact_lock_irqsave and __compact_finished, mm/compaction.c).

import (
	"testing"

	"github.com/pagesim/pagesim/engine/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pinnedChunksLayout frees every odd page, pins the anonymous page at
// offset 14 of every 16-page (order-4) chunk and fills the other even
// pages with unpinned anon: async direct compaction at order 4 isolates
// seven pages of each chunk under the lru_lock, fails at the pin and puts
// them back, so no chunk is ever emptied and no run succeeds.
func pinnedChunksLayout(block, off int) role {
	switch {
	case off%2 == 1:
		return roleFree
	case off%16 == 14:
		return roleAnonPinned
	}
	return roleAnon
}

// holdLock makes a task on cpu hold l from the world's time for d.
func holdLock(m *Machine, cpu int, l *sim.Lock, d sim.Time) {
	tk := m.testTask(cpu)
	l.Lock(tk)
	tk.Charge(d)
	l.Unlock(tk)
}

func TestAsyncCompactionThatFindsALockHeldEndsAtTheBlocksEndWithCompactContended(t *testing.T) {
	tests := []struct {
		name string
		prio CompactPriority
		held bool
		// contended: the run ends COMPACT_CONTENDED with its migrate
		// scanner at the end of the zone's first pageblock.
		contended bool
	}{
		{"async compaction that finds the lru_lock held ends at the first block's end", COMPACT_PRIO_ASYNC, true, true},
		{"async compaction that finds the lru_lock free scans on past the first block", COMPACT_PRIO_ASYNC, false, false},
		{"sync compaction waits for the held lru_lock and does not abort", COMPACT_PRIO_SYNC_LIGHT, true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := newQuietMachine(t, 8192, 1, 2)
			l := carveZone(t, m, nil, pinnedChunksLayout)
			require.Greater(t, l.blocks, 4)
			if tc.held {
				holdLock(m, 0, &m.lruvecOf(l.pages[roleAnon][0]).Lock, sim.Millisecond)
			}
			tk := m.testTask(1)
			rc := m.compactOnce(tk, GFP_HIGHUSER_MOVABLE, 4, 0, tc.prio)
			mustCheck(t, m, "the compaction")
			ends := traceFields(m, "mm_compaction_end")
			require.Len(t, ends, 1)
			last := l.zone.compact.last
			if tc.contended {
				assert.Equal(t, COMPACT_CONTENDED, rc)
				assert.Contains(t, ends[0], "status=contended")
				assert.Equal(t, l.zone.StartPFN+PageblockNrPages, last.MigratePFN, "the run stops at the first block's end")
				assert.Equal(t, "contended", last.Result)
				return
			}
			assert.NotEqual(t, COMPACT_CONTENDED, rc)
			assert.NotContains(t, ends[0], "status=contended")
			assert.Greater(t, last.MigratePFN, l.zone.StartPFN+PageblockNrPages, "the run goes past the first block")
		})
	}
}

// The free scanner's zone->lock is compact_lock_irqsave's too: an async run
// that finds it held records the contention (and takes the lock after the
// holder, isolating as before); a sync run, or an async run that finds the
// lock free, does not.
func TestTheFreeScannerRecordsContentionOnZoneLockOnlyInAsyncMode(t *testing.T) {
	tests := []struct {
		name      string
		mode      migrateMode
		held      bool
		contended bool
	}{
		{"an async free scan that finds zone->lock held records contention", migrateAsync, true, true},
		{"an async free scan that finds zone->lock free does not", migrateAsync, false, false},
		{"a sync-light free scan that finds zone->lock held waits and does not", migrateSyncLight, true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := newQuietMachine(t, 4096, 1, 2)
			l := carveZone(t, m, nil, evenHolesLayout)
			if tc.held {
				holdLock(m, 0, &l.zone.Lock, sim.Millisecond)
			}
			tk := m.testTask(1)
			cc := &compactControl{zone: l.zone, order: 4, mode: tc.mode, directCompaction: true, nrMigratepages: 1}
			start := l.zone.StartPFN
			_, isolated := m.isolateFreepagesBlock(tk, cc, start, start+PageblockNrPages, 1)
			mustCheck(t, m, "the free scan")
			assert.Equal(t, tc.contended, cc.contended)
			assert.Equal(t, uint64(1), isolated, "the lock is taken either way and one free page isolated")
			if tc.held {
				assert.GreaterOrEqual(t, tk.Now, sim.Millisecond, "the scan waited for the holder")
			}
			m.releaseFreeList(tk, cc)
		})
	}
}
