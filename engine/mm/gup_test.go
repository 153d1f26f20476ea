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
			for _, head := range m.OwnerFolios(r.Owner) {
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
