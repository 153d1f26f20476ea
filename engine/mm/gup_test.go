package mm

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPinBlocksPinsOneFolioInTheGivenShareOfBlocks(t *testing.T) {
	tests := []struct {
		name       string
		fraction   float64
		wantBlocks int
	}{
		{name: "a quarter of sixteen blocks is four", fraction: 0.25, wantBlocks: 4},
		{name: "every block", fraction: 1, wantBlocks: 16},
		{name: "one in eight", fraction: 0.125, wantBlocks: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := smallMachine(t, 16384, 1, 1)
			r := faultedRegion(t, m, 16*PageblockNrPages)
			tk := m.testTask(0)
			blocks, pages, err := m.PinBlocks(tk, r.Owner, tc.fraction)
			require.NoError(t, err)
			m.MustCheckInvariants()
			// The region may straddle one more block than it fills.
			assert.InDelta(t, tc.wantBlocks, blocks, 1)
			assert.Equal(t, uint64(blocks), pages, "one base page per block")
			assert.Equal(t, pages, r.Owner.Pinned)
			perBlock := map[PFN]int{}
			for _, head := range m.ownerFolios(r.Owner) {
				if m.Folio(head).Pinned {
					perBlock[head>>PageblockOrder]++
				}
			}
			for b, n := range perBlock {
				assert.Equal(t, 1, n, "block %d", b)
			}
			assert.Equal(t, pages, m.UnpinAll(tk, r.Owner))
			assert.Zero(t, r.Owner.Pinned)
			m.MustCheckInvariants()
		})
	}
}

func TestPinnedBlocksAreNotFreedByMadvise(t *testing.T) {
	m := smallMachine(t, 8192, 1, 1)
	r := faultedRegion(t, m, 4*PageblockNrPages)
	tk := m.testTask(0)
	_, pinned, err := m.PinBlocks(tk, r.Owner, 1)
	require.NoError(t, err)
	_, err = m.MadviseDontneed(tk, r.Owner, 1)
	require.NoError(t, err)
	m.MustCheckInvariants()
	assert.Equal(t, pinned, r.Owner.Resident)
}

func TestPinBlocksRejectsAFractionOutsideZeroToOne(t *testing.T) {
	m := smallMachine(t, 4096, 1, 1)
	r := m.NewAnonRegion("heap", nil, 16)
	for _, f := range []float64{0, -1, 1.5} {
		_, _, err := m.PinBlocks(m.testTask(0), r.Owner, f)
		assert.Error(t, err, "fraction %g", f)
	}
}

// The what-if of seed 002's thread: a long-term pin migrates its page out of
// a MIGRATE_MOVABLE pageblock first (as out of ZONE_MOVABLE), to a target
// allocated GFP_USER, which lands in a non-movable block; off pins in place.
func TestPinTimeMigrationMovesPinsOutOfMovableBlocksOnlyUnderTheWhatIf(t *testing.T) {
	tests := []struct {
		name       string
		mode       PinMigrate
		defragMode bool
		moved      bool
	}{
		{"off pins every page where it sits (every kernel)", PinMigrateOff, true, false},
		{"defrag_mode moves them while vm.defrag_mode is set", PinMigrateDefragMode, true, true},
		{"defrag_mode does nothing without vm.defrag_mode", PinMigrateDefragMode, false, false},
		{"always moves them regardless", PinMigrateAlways, false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := smallMachine(t, 16384, 1, 1)
			r := faultedRegion(t, m, 8*PageblockNrPages)
			if tc.defragMode {
				require.NoError(t, m.SetSysctl("vm.defrag_mode", "1"))
			}
			m.Patches.PinMigrateMovable = tc.mode
			tk := m.testTask(0)
			before := m.ownerFolios(r.Owner)
			blocks, pages, err := m.PinBlocks(tk, r.Owner, 1)
			require.NoError(t, err)
			m.MustCheckInvariants()
			assert.Equal(t, uint64(blocks), pages)
			assert.Equal(t, pages, r.Owner.Pinned, "every pin is on the owner's memory")
			assert.Equal(t, uint64(len(before)), r.Owner.Resident, "a moved page is still the owner's")
			var inMovable, elsewhere uint64
			for _, head := range m.ownerFolios(r.Owner) {
				if !m.Folio(head).Pinned {
					continue
				}
				if m.PageblockMigratetype(head) == MIGRATE_MOVABLE {
					inMovable++
				} else {
					elsewhere++
				}
			}
			if tc.moved {
				assert.Zero(t, inMovable, "no pinned page left in a movable block")
				assert.Equal(t, pages, elsewhere)
				assert.Equal(t, pages, m.Pins.Migrated)
				assert.Equal(t, pages, m.Event(PGMIGRATE_SUCCESS))
			} else {
				assert.Equal(t, pages, inMovable, "pinned where they sit")
				assert.Zero(t, m.Pins.Migrated)
			}
		})
	}
}
