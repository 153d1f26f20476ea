package mm

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// faultedRegion faults a base-page region of pages pages from CPU 0.
func faultedRegion(t *testing.T, m *Machine, pages uint64) *AnonRegion {
	t.Helper()
	tk := m.testTask(0)
	r := m.NewAnonRegion("heap", nil, pages)
	r.NoHugepage = true
	for r.Cursor < r.Pages {
		require.True(t, m.FaultAnonNext(tk, r, false).OK)
	}
	m.MustCheckInvariants()
	return r
}

func TestMadviseDontneed(t *testing.T) {
	tests := []struct {
		name       string
		every      int
		pinFirst   bool
		wantFreed  uint64
		wantRemain uint64
	}{
		{name: "every one frees the whole region", every: 1, wantFreed: 1024, wantRemain: 0},
		{name: "every two frees half the region", every: 2, wantFreed: 512, wantRemain: 512},
		{name: "every four frees a quarter", every: 4, wantFreed: 256, wantRemain: 768},
		{name: "a pinned folio is never freed", every: 1, pinFirst: true, wantFreed: 1023, wantRemain: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := smallMachine(t, 8192, 1, 1)
			r := faultedRegion(t, m, 1024)
			tk := m.testTask(0)
			if tc.pinFirst {
				require.NoError(t, m.PinFolio(tk, m.ownerFolios(r.Owner)[0]))
			}
			m.DrainLocalPages(tk)
			free := m.NrFreePages()
			freed, err := m.MadviseDontneed(tk, r.Owner, tc.every)
			require.NoError(t, err)
			m.MustCheckInvariants()
			assert.Equal(t, tc.wantFreed, freed)
			assert.Equal(t, tc.wantRemain, r.Owner.Resident)
			m.DrainLocalPages(tk)
			assert.Equal(t, free+freed, m.NrFreePages(), "every freed page is back on the free lists")
		})
	}
}

func TestMadviseDontneedOfEveryOtherPageLeavesNoHighOrderChunkInTheRegion(t *testing.T) {
	m := smallMachine(t, 8192, 1, 1)
	r := faultedRegion(t, m, 2048)
	tk := m.testTask(0)
	folios := m.ownerFolios(r.Owner)
	_, err := m.MadviseDontneed(tk, r.Owner, 2)
	require.NoError(t, err)
	m.DrainLocalPages(tk)
	m.MustCheckInvariants()
	for i, pfn := range folios {
		if i%2 == 0 {
			assert.False(t, m.Folio(pfn).Free, "kept page %#x", pfn)
			continue
		}
		p := &m.pages[pfn]
		require.True(t, m.Folio(pfn).Free, "punched page %#x", pfn)
		assert.True(t, p.flags&pgBuddy != 0 && p.order == 0, "punched page %#x is an order-0 buddy chunk", pfn)
	}
}

func TestMadviseDontneedRefusesWhatIsNotAnonymous(t *testing.T) {
	m := smallMachine(t, 4096, 1, 1)
	c := m.NewSlabCache("dentry", nil, 0, true)
	_, err := m.MadviseDontneed(m.testTask(0), c.Owner, 1)
	assert.ErrorContains(t, err, "not anonymous")
	r := m.NewAnonRegion("heap", nil, 16)
	_, err = m.MadviseDontneed(m.testTask(0), r.Owner, 0)
	assert.ErrorContains(t, err, "at least 1")
}
