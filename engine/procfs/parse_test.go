package procfs_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/procfs"
)

// fixtureFiles returns the contents of every fixture and golden file with
// the given name, keyed by path, in path order.
func fixtureFiles(t testing.TB, name string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, pattern := range []string{
		filepath.Join("testdata", "fixtures", "*", name),
		filepath.Join("testdata", "golden", "*", name),
		filepath.Join("testdata", "dumps", "*", name),
	} {
		paths, err := filepath.Glob(pattern)
		require.NoError(t, err)
		for _, p := range paths {
			data, err := os.ReadFile(p)
			require.NoError(t, err)
			out[p] = data
		}
	}
	return out
}

func sortedKeys(m map[string][]byte) []string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func fixture(t *testing.T, dir, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "fixtures", dir, name))
	require.NoError(t, err)
	return data
}

func TestParsersReadEveryFixture(t *testing.T) {
	parsers := map[string]func([]byte) error{
		"buddyinfo": func(b []byte) error { _, err := procfs.ParseBuddyinfo(bytes.NewReader(b)); return err },
		"pagetypeinfo": func(b []byte) error {
			_, err := procfs.ParsePagetypeinfo(bytes.NewReader(b))
			return err
		},
		"zoneinfo": func(b []byte) error { _, err := procfs.ParseZoneinfo(bytes.NewReader(b)); return err },
		"vmstat":   func(b []byte) error { _, err := procfs.ParseVmstat(bytes.NewReader(b)); return err },
	}
	n := 0
	for _, name := range []string{"buddyinfo", "pagetypeinfo", "zoneinfo", "vmstat"} {
		files := fixtureFiles(t, name)
		for _, path := range sortedKeys(files) {
			n++
			t.Run(path+" parses", func(t *testing.T) {
				assert.NoError(t, parsers[name](files[path]))
			})
		}
	}
	assert.Greater(t, n, 40, "the fixtures and golden files are there")
}

func TestBuddyinfoFixturesGiveTheirCounts(t *testing.T) {
	cases := []struct {
		name   string
		dir    string
		zones  int
		row    int
		zone   string
		nrFree []uint64
	}{
		{"jc-linux-proc has three zones and DMA32 ends with 629 order-10 chunks", "jc-linux-proc", 3, 1, "DMA32",
			[]uint64{78, 114, 82, 52, 38, 25, 13, 9, 3, 4, 629}},
		{"the ARM32 phone lists a HighMem zone by name", "novelinux-arm32-highmem-cma", 2, 1, "HighMem",
			[]uint64{1894, 409, 20, 12, 20, 0, 0, 0, 0, 0, 0}},
		{"a file without trailing blanks reads the same", "myblackhole-x86-6types", 3, 0, "DMA",
			[]uint64{4, 3, 4, 0, 0, 0, 0, 0, 0, 0, 0}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			zones, err := procfs.ParseBuddyinfo(bytes.NewReader(fixture(t, c.dir, "buddyinfo")))
			require.NoError(t, err)
			require.Len(t, zones, c.zones)
			assert.Equal(t, c.zone, zones[c.row].Zone)
			assert.Equal(t, c.nrFree, zones[c.row].NrFree)
			assert.Equal(t, c.row+1, zones[c.row].Line)
		})
	}
}

func TestPagetypeinfoFixturesGiveTheirTables(t *testing.T) {
	t.Run("bitloli's capped Movable order-0 list reads as at least 100000", func(t *testing.T) {
		p, err := procfs.ParsePagetypeinfo(bytes.NewReader(fixture(t, "bitloli-x86-6types", "pagetypeinfo")))
		require.NoError(t, err)
		assert.Equal(t, 9, p.PageblockOrder)
		assert.Equal(t, uint64(512), p.PagesPerBlock)
		require.Len(t, p.Free, 18)
		row := p.Free[13]
		assert.Equal(t, "Normal", row.Zone)
		assert.Equal(t, "Movable", row.Type)
		assert.Equal(t, uint64(100000), row.Counts[0])
		assert.True(t, row.Capped[0])
		assert.False(t, row.Capped[1])
		require.Len(t, p.Blocks, 3)
		assert.Equal(t, []string{"Unmovable", "Movable", "Reclaimable", "HighAtomic", "CMA", "Isolate"}, p.Blocks[2].Types)
		assert.Equal(t, []uint64{298, 10165, 288, 1, 0, 0}, p.Blocks[2].Counts)
	})
	t.Run("jc-linux-proc has five migratetype columns", func(t *testing.T) {
		p, err := procfs.ParsePagetypeinfo(bytes.NewReader(fixture(t, "jc-linux-proc", "pagetypeinfo")))
		require.NoError(t, err)
		assert.Len(t, p.Free, 15)
		assert.Equal(t, []string{"Unmovable", "Movable", "Reclaimable", "HighAtomic", "Isolate"}, p.Blocks[0].Types)
	})
	t.Run("the mirror patch's seven types and two node headers read as written", func(t *testing.T) {
		p, err := procfs.ParsePagetypeinfo(bytes.NewReader(fixture(t, "linux-mm-mirror-numa2", "pagetypeinfo")))
		require.NoError(t, err)
		assert.Len(t, p.Free, 28)
		assert.Len(t, p.Blocks, 4)
		assert.Equal(t, "Mirror", p.Free[3].Type)
		assert.Equal(t, 8, p.Free[3].Line)
		assert.Equal(t, 1, p.Blocks[3].Node)
	})
	t.Run("the ARM32 phone has pageblock order 10", func(t *testing.T) {
		p, err := procfs.ParsePagetypeinfo(bytes.NewReader(fixture(t, "novelinux-arm32-highmem-cma", "pagetypeinfo")))
		require.NoError(t, err)
		assert.Equal(t, 10, p.PageblockOrder)
		assert.Equal(t, uint64(1024), p.PagesPerBlock)
	})
}

func TestZoneinfoFixturesGiveTheirZones(t *testing.T) {
	t.Run("a recent file has per-node stats, pagesets and start_pfn", func(t *testing.T) {
		zones, err := procfs.ParseZoneinfo(bytes.NewReader(fixture(t, "jc-linux-proc", "zoneinfo")))
		require.NoError(t, err)
		require.Len(t, zones, 5)
		dma := zones[0]
		assert.Equal(t, "DMA", dma.Zone)
		assert.NotEmpty(t, dma.NodeStats)
		assert.True(t, dma.HasStartPFN)
		assert.Equal(t, uint64(1), dma.StartPFN)
		assert.Equal(t, uint64(4095), dma.Spanned)
		assert.Len(t, dma.Protection, 5)
		assert.Len(t, dma.Pagesets, 2)
		assert.True(t, dma.Pagesets[0].HasStatThreshold)
		assert.Empty(t, zones[1].NodeStats, "per-node stats appear once per node")
		assert.Empty(t, zones[3].Pagesets, "an unpopulated zone prints no pagesets")
		v, ok := zones[1].Stat("nr_free_pages")
		assert.True(t, ok)
		assert.Equal(t, zones[1].Free, v)
	})
	t.Run("a pre-4.6 file has stats before protection and all_unreclaimable", func(t *testing.T) {
		zones, err := procfs.ParseZoneinfo(bytes.NewReader(fixture(t, "pcp-meminfo-root-001", "zoneinfo")))
		require.NoError(t, err)
		require.Len(t, zones, 3, "old kernels skip unpopulated zones")
		z := zones[0]
		assert.False(t, z.HasBoost)
		assert.False(t, z.HasCMA)
		assert.Equal(t, []int64{0, 1584, 15625, 15625}, z.Protection)
		v, ok := z.Stat("nr_alloc_batch")
		assert.True(t, ok)
		assert.Equal(t, uint64(1), v)
		assert.Equal(t, uint64(1), z.Unreclaimable)
		assert.Contains(t, z.Other, procfs.Stat{Name: "scanned", Value: 0})
		assert.Contains(t, z.Other, procfs.Stat{Name: "inactive_ratio", Value: 1})
	})
	t.Run("a 4.8-era file with node_scanned reads", func(t *testing.T) {
		zones, err := procfs.ParseZoneinfo(bytes.NewReader(fixture(t, "pcp-meminfo-root-004", "zoneinfo")))
		require.NoError(t, err)
		assert.Contains(t, zones[0].Other, procfs.Stat{Name: "node_scanned", Value: 0})
	})
	t.Run("a counter printed without its name reads with an empty name", func(t *testing.T) {
		zones, err := procfs.ParseZoneinfo(bytes.NewReader(fixture(t, "pcp-meminfo-root-006", "zoneinfo")))
		require.NoError(t, err)
		assert.Contains(t, zones[0].NodeStats, procfs.Stat{Name: "", Value: 176096})
	})
	t.Run("a two-node file prints per-node stats on each node's first populated zone", func(t *testing.T) {
		zones, err := procfs.ParseZoneinfo(bytes.NewReader(fixture(t, "pcp-meminfo-root-007", "zoneinfo")))
		require.NoError(t, err)
		require.Len(t, zones, 10)
		assert.Equal(t, 1, zones[7].Node)
		assert.Equal(t, "Normal", zones[7].Zone)
		assert.NotEmpty(t, zones[7].NodeStats)
		assert.Empty(t, zones[5].NodeStats, "node 1's DMA is empty")
		assert.Equal(t, uint64(1572864), zones[7].StartPFN)
	})
	t.Run("a 5.x file without boost or promo has pagesets without high_min", func(t *testing.T) {
		zones, err := procfs.ParseZoneinfo(bytes.NewReader(fixture(t, "prometheus-procfs", "zoneinfo")))
		require.NoError(t, err)
		ps := zones[1].Pagesets[0]
		assert.False(t, ps.HasHighMinMax)
		assert.Equal(t, int64(378), ps.High)
		assert.Equal(t, int64(63), ps.Batch)
		assert.Equal(t, int64(48), ps.StatThreshold)
	})
}

func TestVmstatAndSysctlFilesRead(t *testing.T) {
	t.Run("vmstat keeps every line in order", func(t *testing.T) {
		entries, err := procfs.ParseVmstat(bytes.NewReader(fixture(t, "jc-linux-proc", "vmstat")))
		require.NoError(t, err)
		assert.Equal(t, "nr_free_pages", entries[0].Name)
		v, ok := procfs.VmstatValue(entries, "nr_free_pages")
		assert.True(t, ok)
		assert.Equal(t, entries[0].Value, v)
		_, ok = procfs.VmstatValue(entries, "no_such_counter")
		assert.False(t, ok)
	})
	cases := []struct {
		name string
		text string
		want []int64
	}{
		{"a one-number file gives its number", "67584\n", []int64{67584}},
		{"lowmem_reserve_ratio gives one number per zone", "256\t256\t32\t0\t0\n", []int64{256, 256, 32, 0, 0}},
		{"a file without a newline reads", "10", []int64{10}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := procfs.ParseSysctl("x", strings.NewReader(c.text))
			require.NoError(t, err)
			assert.Equal(t, c.want, got)
		})
	}
}

func TestMalformedFilesGiveErrorsWithFileAndLine(t *testing.T) {
	parse := map[string]func(string) error{
		"buddyinfo": func(s string) error { _, err := procfs.ParseBuddyinfo(strings.NewReader(s)); return err },
		"pagetypeinfo": func(s string) error {
			_, err := procfs.ParsePagetypeinfo(strings.NewReader(s))
			return err
		},
		"zoneinfo": func(s string) error { _, err := procfs.ParseZoneinfo(strings.NewReader(s)); return err },
		"vmstat":   func(s string) error { _, err := procfs.ParseVmstat(strings.NewReader(s)); return err },
		"sysctl": func(s string) error {
			_, err := procfs.ParseSysctl("min_free_kbytes", strings.NewReader(s))
			return err
		},
	}
	cases := []struct {
		name string
		file string
		text string
		want string
	}{
		{"a buddyinfo count that is not a number", "buddyinfo",
			"Node 0, zone      DMA      1      x\n", `buddyinfo:1: order-1 count "x" is not a non-negative integer`},
		{"a buddyinfo line that is not a zone", "buddyinfo",
			"Node 0, zone DMA 1\nhello world\n", `buddyinfo:2: expected "Node N, zone NAME"`},
		{"a buddyinfo zone without counts", "buddyinfo",
			"Node 0, zone DMA\n", "buddyinfo:1: zone DMA has no free counts"},
		{"a pagetypeinfo row before any header", "pagetypeinfo",
			"Node    0, zone      DMA, type    Unmovable      0\n", "pagetypeinfo:1: unexpected line"},
		{"a pagetypeinfo row with fewer orders than its header", "pagetypeinfo",
			"Free pages count per migrate type at order       0      1\nNode    0, zone      DMA, type    Unmovable      0\n",
			"pagetypeinfo:2: 1 free counts, the header has 2 orders"},
		{"pagetypeinfo block counts that do not match the header", "pagetypeinfo",
			"\nNumber of blocks type     Unmovable      Movable\nNode 0, zone      DMA            1\n",
			"pagetypeinfo:3: 1 block counts, the header on line 2 has 2 migratetypes"},
		{"two different pageblock orders", "pagetypeinfo",
			"Page block order: 9\nPage block order: 10\n", "pagetypeinfo:2: page block order 10 differs from 9 on line 1"},
		{"zoneinfo that does not start with a zone", "zoneinfo",
			"  pages free     3\n", `zoneinfo:1: expected a "Node N, zone NAME" line first`},
		{"a zoneinfo protection that is not a list", "zoneinfo",
			"Node 0, zone DMA\n  pages free 1\n        protection: 0, 1\n", `zoneinfo:3: protection "0, 1" is not a parenthesised list`},
		{"a zoneinfo pageset value outside pagesets", "zoneinfo",
			"Node 0, zone DMA\n  pages free 1\n              count: 0\n", `zoneinfo:3: "count" outside a pageset`},
		{"a zoneinfo zone without pages free", "zoneinfo",
			"Node 0, zone DMA\n        min 1\n", `zoneinfo:2: "min" outside a zone's counters`},
		{"a zoneinfo line nobody prints", "zoneinfo",
			"Node 0, zone DMA\n  pages free 1\n  what is this\n", `zoneinfo:3: unknown line "what is this"`},
		{"a vmstat line with three fields", "vmstat",
			"nr_free_pages 1\nnr_zone 1 2\n", `vmstat:2: expected "name value", got "nr_zone 1 2"`},
		{"a negative vmstat value", "vmstat",
			"nr_free_pages -1\n", `vmstat:1: nr_free_pages "-1" is not a non-negative integer`},
		{"a sysctl file with words", "sysctl",
			"lots\n", `sys_vm/min_free_kbytes:1: value "lots" is not an integer`},
		{"an empty sysctl file", "sysctl", "", "sys_vm/min_free_kbytes:1: empty"},
		{"a sysctl file with two lines", "sysctl", "1\n2\n", "sys_vm/min_free_kbytes:2: expected one line, found 2"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := parse[c.file](c.text)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
			var pe *procfs.ParseError
			assert.True(t, errors.As(err, &pe), "a *ParseError")
		})
	}
	t.Run("a line longer than a megabyte is an error, not a hang", func(t *testing.T) {
		err := parse["vmstat"](strings.Repeat("x", 2<<20))
		require.Error(t, err)
		assert.Contains(t, err.Error(), "vmstat:1: line longer than")
	})
}

// The parsers read back what the writers print, value for value.
func TestParsersReadBackWhatTheWritersPrint(t *testing.T) {
	for _, c := range machineCases() {
		t.Run(c.name, func(t *testing.T) {
			m := c.build(t)
			buddy, err := procfs.ParseBuddyinfo(strings.NewReader(render(t, procfs.Buddyinfo, m)))
			require.NoError(t, err)
			pti, err := procfs.ParsePagetypeinfo(strings.NewReader(render(t, procfs.Pagetypeinfo, m)))
			require.NoError(t, err)
			zi, err := procfs.ParseZoneinfo(strings.NewReader(render(t, procfs.Zoneinfo, m)))
			require.NoError(t, err)
			vm, err := procfs.ParseVmstat(strings.NewReader(render(t, procfs.Vmstat, m)))
			require.NoError(t, err)

			populated := populatedZones(m)
			require.Len(t, buddy, len(populated))
			for i, z := range populated {
				assert.Equal(t, z.Node.ID, buddy[i].Node)
				assert.Equal(t, z.Name(), buddy[i].Zone)
				for o := mm.Order(0); o < mm.NR_PAGE_ORDERS; o++ {
					assert.Equal(t, z.NrFree(o), buddy[i].NrFree[o])
				}
			}
			require.Len(t, pti.Free, len(populated)*int(mm.MIGRATE_TYPES))
			for _, row := range pti.Free {
				mt, ok := mm.ParseMigrateType(row.Type)
				require.True(t, ok)
				zt, _ := mm.ParseZoneType(row.Zone)
				z := m.Nodes[row.Node].Zones[zt]
				for o := mm.Order(0); o < mm.NR_PAGE_ORDERS; o++ {
					want := z.FreeChunks(o, mt)
					if want >= 100000 {
						assert.True(t, row.Capped[o])
						want = 100000
					}
					assert.Equal(t, want, row.Counts[o])
				}
			}
			for _, row := range pti.Blocks {
				zt, _ := mm.ParseZoneType(row.Zone)
				z := m.Nodes[row.Node].Zones[zt]
				for i, name := range row.Types {
					mt, _ := mm.ParseMigrateType(name)
					assert.Equal(t, z.NrBlocks(mt), row.Counts[i])
				}
			}
			require.Len(t, zi, len(m.Zones()))
			for i, z := range m.Zones() {
				got := zi[i]
				assert.Equal(t, z.Name(), got.Zone)
				assert.Equal(t, z.FreePages(), got.Free)
				assert.Equal(t, z.WmarkPages(mm.WMARK_MIN), got.Min)
				assert.Equal(t, z.WmarkPages(mm.WMARK_LOW), got.Low)
				assert.Equal(t, z.WmarkPages(mm.WMARK_HIGH), got.High)
				assert.Equal(t, z.WmarkPages(mm.WMARK_PROMO), got.Promo)
				assert.Equal(t, z.SpannedPages, got.Spanned)
				assert.Equal(t, z.PresentPages, got.Present)
				assert.Equal(t, z.ManagedPages, got.Managed)
				assert.Equal(t, z.LowmemReserve[:], got.Protection)
				if z.Populated() {
					assert.Len(t, got.Pagesets, m.NrCPUs())
					assert.Equal(t, uint64(z.StartPFN), got.StartPFN)
					assert.Len(t, got.Stats, int(mm.NR_VM_ZONE_STAT_ITEMS)+int(mm.NR_VM_NUMA_EVENT_ITEMS))
				} else {
					assert.Empty(t, got.Pagesets)
				}
			}
			want := int(mm.NR_VM_ZONE_STAT_ITEMS) + int(mm.NR_VM_NUMA_EVENT_ITEMS) + int(mm.NR_VM_NODE_STAT_ITEMS) + int(mm.NR_VM_STAT_ITEMS) + int(mm.NR_VM_EVENT_ITEMS) + 1
			require.Len(t, vm, want)
			assert.Equal(t, mm.ZoneStatNames[0], vm[0].Name)
			assert.Equal(t, "nr_unstable", vm[len(vm)-1].Name)
			v, _ := procfs.VmstatValue(vm, "pgfree")
			assert.Equal(t, m.Event(mm.PGFREE), v)
		})
	}
}

func addSeeds(f *testing.F, name string, extra ...string) {
	files := fixtureFiles(f, name)
	for _, k := range sortedKeys(files) {
		f.Add(files[k])
	}
	for _, e := range extra {
		f.Add([]byte(e))
	}
}

// checkFuzzError is what the fuzz targets check besides not panicking: what
// fails, fails with a located *ParseError.
func checkFuzzError(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	var pe *procfs.ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("error %v is not a *ParseError", err)
	}
}

func FuzzParseBuddyinfo(f *testing.F) {
	addSeeds(f, "buddyinfo", "", "Node 0, zone DMA 1\n", "Node 99999999999, zone X 1\n")
	f.Fuzz(func(t *testing.T, data []byte) {
		zones, err := procfs.ParseBuddyinfo(bytes.NewReader(data))
		checkFuzzError(t, err)
		for _, z := range zones {
			if len(z.NrFree) == 0 {
				t.Fatal("a zone without counts parsed")
			}
		}
	})
}

func FuzzParsePagetypeinfo(f *testing.F) {
	addSeeds(f, "pagetypeinfo", "", "Page block order: 9\n", "Free pages count per migrate type at order 0\nNode 0, zone A, type B >1\n")
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := procfs.ParsePagetypeinfo(bytes.NewReader(data))
		checkFuzzError(t, err)
		if err == nil {
			for _, r := range p.Free {
				if len(r.Counts) != len(r.Capped) {
					t.Fatal("counts and caps differ in length")
				}
			}
		}
	})
}

func FuzzParseZoneinfo(f *testing.F) {
	addSeeds(f, "zoneinfo", "", "Node 0, zone DMA\n  pages free 0\n  pagesets\n    cpu: 0\n")
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := procfs.ParseZoneinfo(bytes.NewReader(data))
		checkFuzzError(t, err)
	})
}

func FuzzParseVmstat(f *testing.F) {
	addSeeds(f, "vmstat", "", "a 1\n", "a\n")
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := procfs.ParseVmstat(bytes.NewReader(data))
		checkFuzzError(t, err)
	})
}

func FuzzParseSysctl(f *testing.F) {
	for _, s := range []string{"67584\n", "256\t256\t32\t0\t0\n", "", "-1", "1\n2\n", "99999999999999999999"} {
		f.Add([]byte(s))
	}
	files := fixtureFiles(f, filepath.Join("sys_vm", "*"))
	for _, k := range sortedKeys(files) {
		f.Add(files[k])
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		vals, err := procfs.ParseSysctl("fuzz", bytes.NewReader(data))
		checkFuzzError(t, err)
		if err == nil && len(vals) == 0 {
			t.Fatal("no values and no error")
		}
	})
}

// populatedZones returns the zones that have memory, node by node: the
// ones buddyinfo lists.
func populatedZones(m *mm.Machine) []*mm.Zone {
	var out []*mm.Zone
	for _, z := range m.Zones() {
		if z.Populated() {
			out = append(out, z)
		}
	}
	return out
}
