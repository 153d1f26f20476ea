package procfs_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/procfs"
)

func fixtureFS(name string) fs.FS { return os.DirFS(filepath.Join("testdata", "fixtures", name)) }

func dumpDir(name string) fs.FS { return os.DirFS(filepath.Join("testdata", "dumps", name)) }

func TestEveryFixtureImportsExceptUnknownMigratetypes(t *testing.T) {
	cases := []struct {
		name    string
		fixture string
		err     string
	}{
		{"bitloli (pagetypeinfo only, six types) imports", "bitloli-x86-6types", ""},
		{"jc-linux-proc (every file) imports", "jc-linux-proc", ""},
		{"myblackhole (buddyinfo and pagetypeinfo) imports", "myblackhole-x86-6types", ""},
		{"node-exporter (buddyinfo and a 4.x zoneinfo) imports", "node-exporter", ""},
		{"pcp 001 (pre-4.6 zoneinfo, buddyinfo from another moment) imports", "pcp-meminfo-root-001", ""},
		{"pcp 002 (two nodes, zoneinfo only) imports", "pcp-meminfo-root-002", ""},
		{"pcp 004 imports", "pcp-meminfo-root-004", ""},
		{"pcp 005 imports", "pcp-meminfo-root-005", ""},
		{"pcp 006 (a counter without a name) imports", "pcp-meminfo-root-006", ""},
		{"pcp 007 (two nodes with empty zones) imports", "pcp-meminfo-root-007", ""},
		{"prometheus-procfs imports", "prometheus-procfs", ""},
		{"the mirror patch's Mirror type is refused with its line", "linux-mm-mirror-numa2",
			`pagetypeinfo:8: unknown migratetype "Mirror"`},
		{"an old kernel's Reserve type is refused with its line", "novelinux-arm32-highmem-cma",
			`pagetypeinfo:8: unknown migratetype "Reserve"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, _, err := procfs.Import(fixtureFS(c.fixture), procfs.ImportOptions{})
			if c.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), c.err)
				assert.Nil(t, m)
				return
			}
			require.NoError(t, err)
			require.NoError(t, m.CheckInvariants())
		})
	}
}

func TestImportKeepsTheDumpsGeometryAndComputesWatermarks(t *testing.T) {
	d, err := procfs.Load(fixtureFS("jc-linux-proc"))
	require.NoError(t, err)
	m, _, err := procfs.Import(fixtureFS("jc-linux-proc"), procfs.ImportOptions{})
	require.NoError(t, err)
	var cfg mm.Config
	cfg.Nodes = []mm.NodeSpec{{CPUs: m.NrCPUs()}}
	for _, zi := range d.Zoneinfo {
		zt, _ := mm.ParseZoneType(zi.Zone)
		z := m.Nodes[zi.Node].Zones[zt]
		assert.Equal(t, zi.Spanned, z.SpannedPages, zi.Zone)
		assert.Equal(t, zi.Present, z.PresentPages, zi.Zone)
		assert.Equal(t, zi.Managed, z.ManagedPages, zi.Zone)
		if zi.HasStartPFN {
			assert.Equal(t, zi.StartPFN, uint64(z.StartPFN), zi.Zone)
			cfg.Nodes[0].Zones = append(cfg.Nodes[0].Zones, mm.ZoneSpec{Type: zt, StartPFN: mm.PFN(zi.StartPFN),
				Spanned: zi.Spanned, Present: zi.Present, Managed: zi.Managed})
		}
	}
	assert.Equal(t, 2, m.NrCPUs(), "jc's zoneinfo lists two CPUs")
	// The watermarks are pagesim's, the ones a machine booted with the
	// same zones gets, not the dump's.
	booted, err := mm.NewMachine(cfg)
	require.NoError(t, err)
	for i, z := range m.Zones() {
		b := booted.Zones()[i]
		for w := mm.WMARK_MIN; w < mm.NR_WMARK; w++ {
			assert.Equal(t, b.WmarkPages(w), z.WmarkPages(w))
		}
		assert.Equal(t, b.LowmemReserve, z.LowmemReserve)
		assert.Equal(t, b.Pageset(0), z.Pageset(0))
	}
	assert.Equal(t, booted.MinFreeKbytes(), m.MinFreeKbytes())
	assert.Equal(t, 67584, m.MinFreeKbytes(), "x86 with three zones and THP: the khugepaged value")
}

func TestImportAppliesSysctlsInOrder(t *testing.T) {
	t.Run("the dump's sys_vm files are applied", func(t *testing.T) {
		m, warnings, err := procfs.Import(dumpDir("jc-with-sysctls"), procfs.ImportOptions{})
		require.NoError(t, err)
		assert.Equal(t, 90112, m.MinFreeKbytes())
		v, err := m.GetSysctl("vm.watermark_scale_factor")
		require.NoError(t, err)
		assert.Equal(t, "100", v)
		v, err = m.GetSysctl("vm.lowmem_reserve_ratio")
		require.NoError(t, err)
		assert.Equal(t, "256\t256\t32\t0\t0", v, "a four-zone file sets the first four ratios")
		v, err = m.GetSysctl("vm.dirty_ratio")
		require.NoError(t, err)
		assert.Equal(t, "30", v, "the node dirty limits use vm.dirty_ratio")
		assert.Contains(t, warnings, "sys_vm/vfs_cache_pressure: pagesim does not model vm.vfs_cache_pressure; ignored")
	})
	t.Run("explicit settings win over the dump's files", func(t *testing.T) {
		m, _, err := procfs.Import(dumpDir("jc-with-sysctls"), procfs.ImportOptions{
			Sysctl: []mm.SysctlSetting{{Name: "vm.min_free_kbytes", Value: "45056"}},
		})
		require.NoError(t, err)
		assert.Equal(t, 45056, m.MinFreeKbytes())
	})
	t.Run("without files or settings the kernel defaults hold", func(t *testing.T) {
		m, _, err := procfs.Import(fixtureFS("jc-linux-proc"), procfs.ImportOptions{})
		require.NoError(t, err)
		v, err := m.GetSysctl("vm.watermark_scale_factor")
		require.NoError(t, err)
		assert.Equal(t, "10", v)
	})
	t.Run("dirty_bytes of 0, as the kernel shows it while the ratio is in use, leaves the ratio", func(t *testing.T) {
		fsys := fstest.MapFS{
			"buddyinfo":                     {Data: fixture(t, "jc-linux-proc", "buddyinfo")},
			"sys_vm/dirty_background_bytes": {Data: []byte("0\n")},
			"sys_vm/dirty_bytes":            {Data: []byte("0\n")},
			"sys_vm/dirty_ratio":            {Data: []byte("30\n")},
		}
		m, _, err := procfs.Import(fsys, procfs.ImportOptions{})
		require.NoError(t, err)
		v, err := m.GetSysctl("vm.dirty_ratio")
		require.NoError(t, err)
		assert.Equal(t, "30", v)
		v, err = m.GetSysctl("vm.dirty_bytes")
		require.NoError(t, err)
		assert.Equal(t, "0", v)
	})
	t.Run("a sys_vm value out of range is an error naming the file", func(t *testing.T) {
		fsys := fstest.MapFS{
			"buddyinfo":                     {Data: fixture(t, "jc-linux-proc", "buddyinfo")},
			"sys_vm/watermark_scale_factor": {Data: []byte("0\n")},
		}
		_, _, err := procfs.Import(fsys, procfs.ImportOptions{})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "sys_vm/watermark_scale_factor:1: vm.watermark_scale_factor: 0 is out of range")
	})
}

func TestImportWarnsAboutWhatItGuesses(t *testing.T) {
	cases := []struct {
		name string
		fsys fs.FS
		want string
	}{
		{"buddyinfo alone puts everything on Movable", dumpDir("buddyinfo-only"),
			"buddyinfo has no migratetypes and there is no pagetypeinfo: every free chunk is on the Movable lists, every pageblock Movable"},
		{"without zoneinfo the CPU count is the default", dumpDir("buddyinfo-only"),
			"no zoneinfo pagesets: 4 CPUs per node"},
		{"a capped list without buddyinfo uses the cap", fixtureFS("bitloli-x86-6types"),
			"pagetypeinfo:18: Movable order-0 list printed as >100000; using 100000"},
		{"zoneinfo alone turns its free pages into the largest chunks", fixtureFS("pcp-meminfo-root-004"),
			"no free lists for node 0 zone DMA, node 0 zone DMA32, node 0 zone Normal (no buddyinfo or pagetypeinfo line): zoneinfo's free pages become the largest chunks on the Movable lists"},
		{"two nodes split the CPUs evenly", fixtureFS("pcp-meminfo-root-007"),
			"zoneinfo does not say which node a CPU is on: its 8 CPUs are split evenly over the 2 nodes"},
		{"free pages beyond managed raise managed", fixtureFS("prometheus-procfs"),
			"node 0 zone DMA: its free lists hold 3973 pages, more than its 3956 managed pages; managed pages raised to 3973"},
		{"files from different moments are noticed", fixtureFS("jc-linux-proc"),
			"buddyinfo:2: node 0 zone DMA32: buddyinfo and pagetypeinfo differ (order 0: 78 and 23 chunks); using pagetypeinfo"},
		{"too few blocks for a type's free chunks take blocks from the largest type", dumpDir("blocks-too-few"),
			"node 0 zone Normal: its free Unmovable chunks fill"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, warnings, err := procfs.Import(c.fsys, procfs.ImportOptions{})
			require.NoError(t, err)
			require.NoError(t, m.CheckInvariants())
			found := false
			for _, w := range warnings {
				if strings.Contains(w, c.want) {
					found = true
				}
			}
			assert.True(t, found, "no warning contains %q; got %q", c.want, warnings)
		})
	}
}

func TestImportWithoutZoneinfoSynthesisesAContiguousLayout(t *testing.T) {
	m, _, err := procfs.Import(dumpDir("buddyinfo-only"), procfs.ImportOptions{CPUsPerNode: 3})
	require.NoError(t, err)
	assert.Equal(t, 3, m.NrCPUs())
	var end mm.PFN = 0x1000
	for _, z := range m.Zones() {
		if !z.Populated() {
			continue
		}
		assert.GreaterOrEqual(t, z.StartPFN, end, z.Name())
		assert.Zero(t, z.StartPFN%1024, "zones start on a MAX_ORDER boundary")
		assert.Equal(t, z.SpannedPages, z.ManagedPages, "everything is managed")
		end = z.EndPFN()
		for mt := mm.MigrateType(0); mt < mm.MIGRATE_TYPES; mt++ {
			if mt != mm.MIGRATE_MOVABLE {
				assert.Zero(t, z.NrBlocks(mt))
			}
		}
	}
}

func TestImportRefusesWhatPagesimCannotModel(t *testing.T) {
	jcZoneinfo := func(t *testing.T) []byte { return fixture(t, "jc-linux-proc", "zoneinfo") }
	cases := []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"a HighMem zone", map[string]string{"buddyinfo": "Node 0, zone  HighMem      1      2\n"},
			`buddyinfo:1: unknown zone "HighMem"`},
		{"a pageblock order other than 9",
			map[string]string{"pagetypeinfo": "Page block order: 10\nPages per block:  1024\n"},
			"pagetypeinfo:1: page block order 10; pagesim models 9"},
		{"more orders than MAX_PAGE_ORDER",
			map[string]string{"buddyinfo": "Node 0, zone Normal 1 1 1 1 1 1 1 1 1 1 1 1 1\n"},
			"buddyinfo:1: 13 orders; pagesim models orders 0-10"},
		{"a buddyinfo zone that zoneinfo says is empty",
			map[string]string{"buddyinfo": "Node 0, zone  Movable 1\n", "zoneinfo": "zoneinfo"},
			"buddyinfo:1: node 0 zone Movable has free pages but zoneinfo gives it no memory"},
		{"a folder with none of the files", map[string]string{"meminfo": "MemTotal: 1 kB\n"},
			"the dump has none of buddyinfo, pagetypeinfo, zoneinfo"},
		{"a malformed file", map[string]string{"vmstat": "x\n", "buddyinfo": "Node 0, zone DMA 1\n"},
			`vmstat:1: expected "name value", got "x"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fsys := fstest.MapFS{}
			for name, text := range c.files {
				if text == "zoneinfo" {
					fsys[name] = &fstest.MapFile{Data: jcZoneinfo(t)}
					continue
				}
				fsys[name] = &fstest.MapFile{Data: []byte(text)}
			}
			_, _, err := procfs.Import(fsys, procfs.ImportOptions{})
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
			assert.NotContains(t, err.Error(), "\n", "one line")
		})
	}
}
