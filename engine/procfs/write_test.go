package procfs_test

import (
	"bytes"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/procfs"
	"github.com/pagesim/pagesim/engine/sim"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// writers are the files the package prints, in the order the tests walk them.
var writers = []struct {
	name  string
	write func(io.Writer, *mm.Machine) error
}{
	{"buddyinfo", procfs.Buddyinfo},
	{"pagetypeinfo", procfs.Pagetypeinfo},
	{"zoneinfo", procfs.Zoneinfo},
	{"vmstat", procfs.Vmstat},
}

type machineCase struct {
	name  string // a sentence
	dir   string // under testdata/golden
	build func(t *testing.T) *mm.Machine
}

func booted(t *testing.T, mem uint64, nodes, cpus int) *mm.Machine {
	t.Helper()
	cfg, err := mm.X86Layout(mem, nodes, cpus)
	require.NoError(t, err)
	m, err := mm.NewMachine(cfg)
	require.NoError(t, err)
	return m
}

func imported(t *testing.T, fixture string) *mm.Machine {
	t.Helper()
	m, _, err := procfs.Import(os.DirFS(filepath.Join("testdata", "fixtures", fixture)), procfs.ImportOptions{})
	require.NoError(t, err)
	return m
}

// busy boots a machine and makes some allocations of every migratetype and
// several orders, then frees some of them, so that the files show split
// chunks, per-CPU lists and counters.
func busy(t *testing.T) *mm.Machine {
	t.Helper()
	m := booted(t, 2<<30, 1, 2)
	task := m.World.NewTask("test", 0, nil, sim.Never)
	type alloc struct {
		pfn   mm.PFN
		order mm.Order
	}
	var got []alloc
	for i := 0; i < 300; i++ {
		gfp, order := mm.GFP_KERNEL, mm.Order(i%4)
		switch i % 3 {
		case 1:
			gfp = mm.GFP_HIGHUSER_MOVABLE
		case 2:
			gfp = mm.MustParseGFP("GFP_KERNEL|__GFP_RECLAIMABLE")
		}
		if i%50 == 0 {
			order = mm.HPAGE_PMD_ORDER
		}
		pfn := m.AllocPagesLocal(task, gfp, order)
		require.NotEqual(t, mm.NilPFN, pfn)
		got = append(got, alloc{pfn, order})
	}
	for i, a := range got {
		if i%3 == 0 {
			m.FreePages(task, a.pfn, a.order)
		}
	}
	require.NoError(t, m.CheckInvariants())
	return m
}

func machineCases() []machineCase {
	return []machineCase{
		{"a freshly booted 8 GiB x86 machine with one node", "booted-8g-1node",
			func(t *testing.T) *mm.Machine { return booted(t, 8<<30, 1, 4) }},
		{"a freshly booted 16 GiB x86 machine with two nodes", "booted-16g-2nodes",
			func(t *testing.T) *mm.Machine { return booted(t, 16<<30, 2, 2) }},
		{"a 2 GiB machine after some allocations and frees", "busy-2g",
			busy},
		{"the jc-linux-proc dump imported", "import-jc-linux-proc",
			func(t *testing.T) *mm.Machine { return imported(t, "jc-linux-proc") }},
		{"the bitloli dump imported, with a list past the 100000 cap", "import-bitloli",
			func(t *testing.T) *mm.Machine { return imported(t, "bitloli-x86-6types") }},
	}
}

func render(t *testing.T, write func(io.Writer, *mm.Machine) error, m *mm.Machine) string {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, write(&b, m))
	return b.String()
}

func TestWritersPrintTheGoldenFiles(t *testing.T) {
	for _, c := range machineCases() {
		t.Run(c.name, func(t *testing.T) {
			m := c.build(t)
			for _, w := range writers {
				got := render(t, w.write, m)
				path := filepath.Join("testdata", "golden", c.dir, w.name)
				if *update {
					require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
					require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
					continue
				}
				want, err := os.ReadFile(path)
				require.NoError(t, err, "run go test -update to create the golden files")
				assert.Equal(t, string(want), got, "%s differs from %s (go test -update rewrites it)", w.name, path)
			}
		})
	}
}

func TestWritersAreDeterministic(t *testing.T) {
	for _, w := range writers {
		t.Run(w.name+" prints the same bytes for two machines built alike", func(t *testing.T) {
			assert.Equal(t, render(t, w.write, busy(t)), render(t, w.write, busy(t)))
		})
	}
}

// The kernel's text layout, line by line, for the parts that are easy to get
// wrong: trailing blanks, widths, and what unpopulated zones print.
func TestWritersFollowTheKernelLayout(t *testing.T) {
	m := booted(t, 8<<30, 1, 4)
	buddy := render(t, procfs.Buddyinfo, m)
	pti := render(t, procfs.Pagetypeinfo, m)
	zi := render(t, procfs.Zoneinfo, m)
	vm := render(t, procfs.Vmstat, m)
	cases := []struct {
		name string
		text string
		want string
	}{
		{"buddyinfo pads the zone name to 8 and every count to 6, each followed by a blank",
			buddy, "Node 0, zone      DMA "},
		{"pagetypeinfo starts with the pageblock geometry",
			pti, "Page block order: 9\nPages per block:  512\n\nFree pages count per migrate type at order       0      1"},
		{"pagetypeinfo's free rows pad the node to 4 and the type to 12",
			pti, "\nNode    0, zone   Normal, type  Reclaimable "},
		{"pagetypeinfo's block table header is padded to 23 then 12 per type",
			pti, "\n\nNumber of blocks type     Unmovable      Movable  Reclaimable   HighAtomic          CMA      Isolate \n"},
		{"zoneinfo prints the per-node stats on the first populated zone",
			zi, "Node 0, zone      DMA\n  per-node stats\n      nr_inactive_anon 0\n"},
		{"zoneinfo prints an unpopulated zone only through protection",
			zi, "Node 0, zone  Movable\n  pages free     0\n        boost    0\n"},
		{"zoneinfo's pagesets carry high_min and high_max",
			zi, "\n    cpu: 3\n              count:    0\n              high:     "},
		{"zoneinfo ends a populated zone with the highatomic counters",
			zi, "\n  reserved_highatomic: 0\n  free_highatomic:     0\nNode 0, zone    DMA32\n"},
		{"vmstat puts the dirty thresholds between the node items and the events",
			vm, "\nnr_kernel_file_pages 0\nnr_dirty_threshold "},
		{"vmstat ends with the deprecated nr_unstable",
			vm, "\ndirect_map_level3_collapses 0\nnr_unstable 0\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Contains(t, c.text, c.want)
		})
	}
	t.Run("an unpopulated zone has no pagesets", func(t *testing.T) {
		i := strings.Index(zi, "Node 0, zone  Movable")
		require.GreaterOrEqual(t, i, 0)
		rest := zi[i:]
		end := strings.Index(rest, "Node 0, zone   Device")
		require.Greater(t, end, 0)
		assert.NotContains(t, rest[:end], "pagesets")
		assert.True(t, strings.HasSuffix(rest[:end], "protection: (0, 0, 0, 0, 0)\n"), "got %q", rest[:end])
	})
}

func TestThresholdsFollowTheKernelFormulas(t *testing.T) {
	cases := []struct {
		name    string
		managed uint64
		cpus    int
		want    int
	}{
		// The sample table in calculate_normal_threshold().
		{"one CPU and a 1 GiB zone give 8", 250000, 1, 8},
		{"two CPUs and a 2-4 GiB zone give 24", 700000, 2, 24},
		{"four CPUs and an 8-16 GiB zone give 48", 2500000, 4, 48},
		{"sixteen CPUs and a tiny zone give 10", 3956, 16, 10},
		{"1024 CPUs hit the cap of 125", 4000000, 1024, 125},
		// Values seen in the fixtures.
		{"eight CPUs and a 16 MiB DMA zone give 8 (prometheus-procfs)", 3956, 8, 8},
		{"eight CPUs and a 2.8 GiB DMA32 zone give 48 (prometheus-procfs)", 742806, 8, 48},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, procfs.CalculateNormalThreshold(c.managed, c.cpus))
		})
	}
}

func TestDirtyLimitsFollowGlobalDirtyLimits(t *testing.T) {
	m := booted(t, 8<<30, 1, 4)
	bg, dirty := procfs.GlobalDirtyLimits(m)
	free := uint64(m.GlobalZoneState(mm.NR_FREE_PAGES))
	avail := free - min(free, procfs.TotalreservePages(m)) + 1
	assert.Equal(t, 819*avail/4096, dirty, "vm.dirty_ratio 20% in per-PAGE_SIZE units")
	assert.Equal(t, 409*avail/4096, bg, "vm.dirty_background_ratio 10%")
	assert.Less(t, bg, dirty)
}

func TestTotalreservePagesAddsHighWatermarkAndLargestReserve(t *testing.T) {
	m := booted(t, 8<<30, 1, 4)
	var want uint64
	for _, z := range m.Zones() {
		var r int64
		for j := int(z.Type); j < len(z.LowmemReserve); j++ {
			r = max(r, z.LowmemReserve[j])
		}
		want += min(uint64(r)+z.RawWatermark(mm.WMARK_HIGH), z.ManagedPages)
	}
	assert.Equal(t, want, procfs.TotalreservePages(m))
	assert.NotZero(t, want)
}
