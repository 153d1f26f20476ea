package mm

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pagesim/pagesim/engine/sim"
)

// movePinnedStepwise is movePinned one folio at a time, as it was written
// before the runs of equal folios: the reference the test compares with.
func (m *Machine) movePinnedStepwise(lv *lruvec, typ int, from, to LRUList, pages uint64, idx ZoneType) uint64 {
	fa, ta := b2i(from.isActive()), b2i(to.isActive())
	var moved uint64
	for z := ZoneType(0); z <= idx && moved < pages; z++ {
		for lv.pinnedCount[typ][fa][z] > 0 && moved < pages {
			per := lv.pinnedCount[typ][fa][z] / lv.pinnedFolios[typ][fa][z]
			lv.pinnedCount[typ][fa][z] -= per
			lv.pinnedFolios[typ][fa][z]--
			lv.pinnedCount[typ][ta][z] += per
			lv.pinnedFolios[typ][ta][z]++
			m.updateLRUSize(lv, from, lv.node.Zones[z], -int64(per))
			m.updateLRUSize(lv, to, lv.node.Zones[z], int64(per))
			moved += per
		}
	}
	return moved
}

// movePinned moves runs of equal folios at once and leaves the pinned
// pool's counts, the LRU sizes and the zone and node counters where
// moving them one at a time leaves them, and returns the same pages
// moved: random pools (folios of mixed sizes in every zone, a count that
// is not a multiple of the folios), random requests (none, fewer pages
// than a folio, about all, more than all), either way between the
// lists, on either type, up to each zone.
func TestMovePinnedMovesWhatMovingOneFolioAtATimeMoves(t *testing.T) {
	a := newQuietMachine(t, 4096, 1, 1)
	b := newQuietMachine(t, 4096, 1, 1)
	la, lb := a.RootMemcg().lruvecs[0], b.RootMemcg().lruvecs[0]
	rnd := sim.NewRand(16)
	nz := ZoneType(len(la.node.Zones))
	for trial := range 20000 {
		for typ := range 2 {
			for act := range 2 {
				for z := ZoneType(0); z < nz; z++ {
					var f, c uint64
					switch rnd.Uint64() % 4 {
					case 0:
					case 1:
						f = 1 + rnd.Uint64()%8
						c = f * (1 + rnd.Uint64()%512)
					default:
						f = 1 + rnd.Uint64()%5000
						c = f + rnd.Uint64()%(f*600)
					}
					la.pinnedFolios[typ][act][z], la.pinnedCount[typ][act][z] = f, c
					lb.pinnedFolios[typ][act][z], lb.pinnedCount[typ][act][z] = f, c
				}
			}
		}
		typ := int(rnd.Uint64() % 2)
		from, to := LRU_INACTIVE_ANON, LRU_ACTIVE_ANON
		if typ == 1 {
			from, to = LRU_INACTIVE_FILE, LRU_ACTIVE_FILE
		}
		if rnd.Uint64()%2 == 0 {
			from, to = to, from
		}
		var pages uint64
		switch rnd.Uint64() % 4 {
		case 0:
		case 1:
			pages = 1 + rnd.Uint64()%600
		case 2:
			pages = rnd.Uint64() % 3_000_000
		default:
			pages = 1 << 40
		}
		idx := ZoneType(rnd.Uint64() % uint64(nz))
		got := a.movePinned(la, typ, from, to, pages, idx)
		want := b.movePinnedStepwise(lb, typ, from, to, pages, idx)
		require.Equal(t, want, got, "trial %d: pages moved", trial)
		require.Equal(t, lb.pinnedCount, la.pinnedCount, "trial %d", trial)
		require.Equal(t, lb.pinnedFolios, la.pinnedFolios, "trial %d", trial)
		require.Equal(t, lb.nrPages, la.nrPages, "trial %d", trial)
		require.Equal(t, lb.zonePages, la.zonePages, "trial %d", trial)
		for z := range la.node.Zones {
			require.Equal(t, lb.node.Zones[z].Stat, la.node.Zones[z].Stat, "trial %d zone %d", trial, z)
		}
		require.Equal(t, lb.node.Stat, la.node.Stat, "trial %d", trial)
	}
}
