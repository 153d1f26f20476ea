package mm_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/procfs"
)

// fixtureDir is the folder of a /proc sample: they live with package
// procfs, which parses them.
func fixtureDir(name string) string {
	return filepath.Join("..", "procfs", "testdata", "fixtures", name)
}

// importFixture loads a fixture, turns it into a spec and imports it.
func importFixture(t *testing.T, name string) (*procfs.Dump, mm.ImportSpec, *mm.Machine) {
	t.Helper()
	d, err := procfs.Load(os.DirFS(fixtureDir(name)))
	require.NoError(t, err)
	spec, _, err := d.Spec(procfs.ImportOptions{})
	require.NoError(t, err)
	want := copySpec(spec)
	m, _, err := mm.Import(spec)
	require.NoError(t, err)
	return d, want, m
}

// copySpec copies a spec deeply, so a test can compare against it.
func copySpec(s mm.ImportSpec) mm.ImportSpec {
	out := s
	out.Nodes = make([]mm.ImportNode, len(s.Nodes))
	for i, n := range s.Nodes {
		out.Nodes[i] = n
		out.Nodes[i].Zones = append([]mm.ImportZone(nil), n.Zones...)
	}
	return out
}

func TestImportedFixturesHoldExactlyTheDumpsFreeChunks(t *testing.T) {
	cases := []struct {
		name    string
		fixture string
	}{
		{"bitloli: six migratetypes and a capped list", "bitloli-x86-6types"},
		{"jc-linux-proc: five migratetypes with zoneinfo geometry", "jc-linux-proc"},
		{"myblackhole: HighAtomic blocks with free pages", "myblackhole-x86-6types"},
		{"node-exporter: buddyinfo only, Movable lists", "node-exporter"},
		{"pcp 001: a buddyinfo larger than its zoneinfo", "pcp-meminfo-root-001"},
		{"pcp 007: two nodes from zoneinfo alone", "pcp-meminfo-root-007"},
		{"prometheus-procfs: a 5.x zoneinfo", "prometheus-procfs"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, spec, m := importFixture(t, c.fixture)
			require.NoError(t, m.CheckInvariants())

			// Every (zone, order, migratetype) cell is the spec's.
			for ni, n := range spec.Nodes {
				for _, zs := range n.Zones {
					z := m.Nodes[ni].Zones[zs.Type]
					for o := mm.Order(0); o < mm.NR_PAGE_ORDERS; o++ {
						for mt := mm.MigrateType(0); mt < mm.MIGRATE_TYPES; mt++ {
							assert.Equal(t, zs.Free[o][mt], z.FreeChunks(o, mt), "node %d %s order %d %s", ni, zs.Type, o, mt)
						}
					}
				}
			}

			// Printed and parsed again, the counts are the dump's.
			var b bytes.Buffer
			require.NoError(t, procfs.Pagetypeinfo(&b, m))
			back, err := procfs.ParsePagetypeinfo(&b)
			require.NoError(t, err)
			got := map[string][]uint64{}
			for _, r := range back.Free {
				got[r.Zone+"/"+r.Type] = r.Counts
			}
			if d.Pagetypeinfo != nil {
				for _, r := range d.Pagetypeinfo.Free {
					assert.Equal(t, r.Counts, got[r.Zone+"/"+r.Type], "pagetypeinfo line %d", r.Line)
				}
			}
			b.Reset()
			require.NoError(t, procfs.Buddyinfo(&b, m))
			buddy, err := procfs.ParseBuddyinfo(&b)
			require.NoError(t, err)
			if d.Pagetypeinfo == nil && d.Buddyinfo != nil {
				require.Len(t, buddy, len(d.Buddyinfo))
				for i, r := range d.Buddyinfo {
					assert.Equal(t, r.NrFree, buddy[i].NrFree, "buddyinfo line %d", r.Line)
				}
			}
			for _, r := range buddy {
				zt, _ := mm.ParseZoneType(r.Zone)
				z := m.Nodes[r.Node].Zones[zt]
				var pages uint64
				for o, c := range r.NrFree {
					pages += c << o
				}
				assert.LessOrEqual(t, pages, z.ManagedPages)
			}
		})
	}
}

func TestImportedBlockCountsMatchTheDump(t *testing.T) {
	for _, fixture := range []string{"bitloli-x86-6types", "jc-linux-proc", "myblackhole-x86-6types"} {
		t.Run(fixture+" keeps every type's pageblocks, Movable gaining the hole blocks", func(t *testing.T) {
			d, _, m := importFixture(t, fixture)
			for _, r := range d.Pagetypeinfo.Blocks {
				zt, _ := mm.ParseZoneType(r.Zone)
				z := m.Nodes[r.Node].Zones[zt]
				for i, name := range r.Types {
					mt, _ := mm.ParseMigrateType(name)
					if mt == mm.MIGRATE_MOVABLE {
						assert.GreaterOrEqual(t, z.NrBlocks(mt), r.Counts[i], "%s %s", r.Zone, name)
					} else {
						assert.Equal(t, r.Counts[i], z.NrBlocks(mt), "%s %s", r.Zone, name)
					}
				}
				assert.Equal(t, z.NrBlocks(mm.MIGRATE_HIGHATOMIC)*mm.PageblockNrPages, z.NrReservedHighatomic)
			}
		})
	}
}

func normalZone(free [mm.NR_PAGE_ORDERS][mm.MIGRATE_TYPES]uint64) mm.ImportZone {
	return mm.ImportZone{Type: mm.ZONE_NORMAL, Free: free}
}

func TestImportPlacesHandMadeDumps(t *testing.T) {
	var mixed [mm.NR_PAGE_ORDERS][mm.MIGRATE_TYPES]uint64
	for o := range mixed {
		for mt := range mixed[o] {
			mixed[o][mt] = uint64(3 + o + mt)
		}
	}
	var order0 [mm.NR_PAGE_ORDERS][mm.MIGRATE_TYPES]uint64
	order0[0][mm.MIGRATE_MOVABLE] = 5000 // each needs its buddy in use
	var order9 [mm.NR_PAGE_ORDERS][mm.MIGRATE_TYPES]uint64
	order9[9][mm.MIGRATE_UNMOVABLE] = 7
	order9[9][mm.MIGRATE_MOVABLE] = 7 // never two free buddies of order 9
	var isolated [mm.NR_PAGE_ORDERS][mm.MIGRATE_TYPES]uint64
	isolated[3][mm.MIGRATE_ISOLATE] = 4
	isolated[10][mm.MIGRATE_CMA] = 2
	isolated[2][mm.MIGRATE_HIGHATOMIC] = 9

	cases := []struct {
		name string
		spec mm.ImportSpec
	}{
		{"every order of every migratetype in a synthesised zone",
			mm.ImportSpec{Nodes: []mm.ImportNode{{CPUs: 2, Zones: []mm.ImportZone{normalZone(mixed)}}}}},
		{"thousands of order-0 chunks",
			mm.ImportSpec{Nodes: []mm.ImportNode{{CPUs: 1, Zones: []mm.ImportZone{normalZone(order0)}}}}},
		{"order-9 chunks of two mergeable types",
			mm.ImportSpec{Nodes: []mm.ImportNode{{CPUs: 1, Zones: []mm.ImportZone{normalZone(order9)}}}}},
		{"Isolate, CMA and HighAtomic lists",
			mm.ImportSpec{Nodes: []mm.ImportNode{{CPUs: 1, Zones: []mm.ImportZone{normalZone(isolated)}}}}},
		{"a zone starting at PFN 1 like x86's DMA", mm.ImportSpec{Nodes: []mm.ImportNode{{CPUs: 1, Zones: []mm.ImportZone{{
			Type: mm.ZONE_DMA, HasGeometry: true, Spanned: 4095, Present: 3998, Managed: 3976, HasStartPFN: true, StartPFN: 1,
			Free: func() (f [mm.NR_PAGE_ORDERS][mm.MIGRATE_TYPES]uint64) {
				f[10][mm.MIGRATE_MOVABLE] = 3
				for o := 0; o < 9; o++ {
					f[o][mm.MIGRATE_UNMOVABLE] = 1
				}
				return
			}(),
		}}}}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := copySpec(c.spec)
			m, warnings, err := mm.Import(c.spec)
			require.NoError(t, err)
			assert.Empty(t, warnings)
			require.NoError(t, m.CheckInvariants())
			zs := want.Nodes[0].Zones[0]
			z := m.Nodes[0].Zones[zs.Type]
			for o := mm.Order(0); o < mm.NR_PAGE_ORDERS; o++ {
				for mt := mm.MigrateType(0); mt < mm.MIGRATE_TYPES; mt++ {
					assert.Equal(t, zs.Free[o][mt], z.FreeChunks(o, mt), "order %d %s", o, mt)
				}
			}
		})
	}
}

func TestImportIsDeterministic(t *testing.T) {
	spec := func() mm.ImportSpec {
		d, err := procfs.Load(os.DirFS(fixtureDir("myblackhole-x86-6types")))
		require.NoError(t, err)
		s, _, err := d.Spec(procfs.ImportOptions{})
		require.NoError(t, err)
		return s
	}
	a, _, err := mm.Import(spec())
	require.NoError(t, err)
	b, _, err := mm.Import(spec())
	require.NoError(t, err)
	assert.Equal(t, a.BlockViews(nil), b.BlockViews(nil))
	pa := a.PageStates(0, make([]mm.PageState, a.MaxPFN()))
	pb := b.PageStates(0, make([]mm.PageState, b.MaxPFN()))
	assert.Equal(t, pa, pb)
}

func TestImportAdjustsInconsistentDumps(t *testing.T) {
	t.Run("free chunks that need more blocks than the dump counts keep their counts", func(t *testing.T) {
		var free [mm.NR_PAGE_ORDERS][mm.MIGRATE_TYPES]uint64
		free[8][mm.MIGRATE_RECLAIMABLE] = 10 // ten blocks' worth at least
		free[10][mm.MIGRATE_MOVABLE] = 4
		zs := mm.ImportZone{Type: mm.ZONE_NORMAL, HasGeometry: true, Spanned: 32 * 512, Present: 32 * 512, Managed: 32 * 512,
			HasStartPFN: true, StartPFN: 0x10000, Free: free, HasBlocks: true}
		zs.Blocks[mm.MIGRATE_RECLAIMABLE] = 2
		zs.Blocks[mm.MIGRATE_MOVABLE] = 28
		zs.Blocks[mm.MIGRATE_UNMOVABLE] = 2
		m, warnings, err := mm.Import(mm.ImportSpec{Nodes: []mm.ImportNode{{CPUs: 1, Zones: []mm.ImportZone{zs}}}})
		require.NoError(t, err)
		require.NoError(t, m.CheckInvariants())
		z := m.Nodes[0].Zones[mm.ZONE_NORMAL]
		assert.Equal(t, uint64(10), z.FreeChunks(8, mm.MIGRATE_RECLAIMABLE))
		assert.Equal(t, uint64(10), z.NrBlocks(mm.MIGRATE_RECLAIMABLE))
		assert.Equal(t, uint64(2), z.NrBlocks(mm.MIGRATE_UNMOVABLE), "the smaller types keep their blocks")
		assert.Equal(t, uint64(20), z.NrBlocks(mm.MIGRATE_MOVABLE), "the largest type gives up the difference")
		assert.Equal(t, []string{
			"node 0 zone Normal: its free Reclaimable chunks fill 10 pageblocks, the dump counts 2 Reclaimable blocks; other types give up the difference",
			"node 0 zone Normal: 8 of the dump's 28 Movable pageblocks do not fit in the zone",
		}, warnings)
	})
	t.Run("more free pages than managed pages raise the managed count", func(t *testing.T) {
		var free [mm.NR_PAGE_ORDERS][mm.MIGRATE_TYPES]uint64
		free[10][mm.MIGRATE_MOVABLE] = 8
		zs := mm.ImportZone{Type: mm.ZONE_NORMAL, HasGeometry: true, Spanned: 16384, Present: 6000, Managed: 5000, Free: free}
		m, warnings, err := mm.Import(mm.ImportSpec{Nodes: []mm.ImportNode{{CPUs: 1, Zones: []mm.ImportZone{zs}}}})
		require.NoError(t, err)
		require.NoError(t, m.CheckInvariants())
		z := m.Nodes[0].Zones[mm.ZONE_NORMAL]
		assert.Equal(t, uint64(8192), z.ManagedPages)
		assert.Equal(t, uint64(8192), z.PresentPages)
		assert.Equal(t, uint64(8192), z.FreePages())
		assert.Len(t, warnings, 1)
	})
	t.Run("a zone that overlaps the one before it moves up", func(t *testing.T) {
		a := mm.ImportZone{Type: mm.ZONE_DMA32, HasGeometry: true, Spanned: 4096, Present: 4096, Managed: 4096, HasStartPFN: true, StartPFN: 4096}
		b := mm.ImportZone{Type: mm.ZONE_NORMAL, HasGeometry: true, Spanned: 4096, Present: 4096, Managed: 4096, HasStartPFN: true, StartPFN: 6000}
		m, warnings, err := mm.Import(mm.ImportSpec{Nodes: []mm.ImportNode{{CPUs: 1, Zones: []mm.ImportZone{b, a}}}})
		require.NoError(t, err)
		assert.Equal(t, mm.PFN(8192), m.Nodes[0].Zones[mm.ZONE_NORMAL].StartPFN)
		assert.Equal(t, []string{"node 0 zone Normal: start_pfn 6000 overlaps the zone before it; moved to 8192"}, warnings)
	})
}

func TestImportRefusesImpossibleDumps(t *testing.T) {
	var free [mm.NR_PAGE_ORDERS][mm.MIGRATE_TYPES]uint64
	free[10][mm.MIGRATE_MOVABLE] = 1
	cases := []struct {
		name string
		spec mm.ImportSpec
		want string
	}{
		{"no nodes", mm.ImportSpec{}, "import: the dump has no nodes"},
		{"free pages in a zone that spans nothing",
			mm.ImportSpec{Nodes: []mm.ImportNode{{CPUs: 1, Zones: []mm.ImportZone{{Type: mm.ZONE_NORMAL, HasGeometry: true, Free: free}}}}},
			"import: node 0 zone Normal has 1024 free pages but spans none"},
		{"no CPUs", mm.ImportSpec{Nodes: []mm.ImportNode{{Zones: []mm.ImportZone{normalZone(free)}}}},
			"import: a machine needs at least one CPU"},
		{"an order-10 chunk with no aligned room",
			mm.ImportSpec{Nodes: []mm.ImportNode{{CPUs: 1, Zones: []mm.ImportZone{{Type: mm.ZONE_NORMAL, HasGeometry: true,
				Spanned: 1024, Present: 1024, Managed: 1024, HasStartPFN: true, StartPFN: 512, Free: free}}}}},
			"import: node 0 zone Normal: no room for 1 more free order-10 Movable chunks"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := mm.Import(c.spec)
			require.Error(t, err)
			assert.Equal(t, c.want, err.Error())
		})
	}
}
