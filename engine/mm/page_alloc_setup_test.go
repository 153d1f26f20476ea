package mm

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func oneZone(managed uint64, thp THPEnabled) Config {
	s := DefaultTHPSettings()
	s.Enabled = thp
	return Config{
		Nodes: []NodeSpec{{CPUs: 8, Zones: []ZoneSpec{{Type: ZONE_NORMAL, StartPFN: 0x100000, Spanned: managed, Present: managed, Managed: managed}}}},
		THP:   s,
	}
}

// The cases are worked by hand from the kernel's formulas, for one Normal
// zone, 4 KiB pages and pageblock order 9. mm/page_alloc.c:
// calculate_min_free_kbytes gives int_sqrt(lowmem_kbytes * 16) (7 GiB:
// int_sqrt(117,440,512) = 10,836); __setup_per_zone_wmarks gives min =
// min_free_kbytes / 4 in pages and adds max(min / 4, managed *
// watermark_scale_factor / 10000) three times for low, high and promo (7
// GiB with THP: 5,632 + 1,835 = 7,467, 9,302, 11,137). mm/khugepaged.c:
// set_recommended_min_free_kbytes raises min_free_kbytes to
// pageblock_nr_pages * nr_zones * (2 + MIGRATE_PCPTYPES^2) = 512 * 1 * 11
// pages = 22,528 KiB when that is larger (at 32 GiB the square root,
// 23,170, is larger).
func TestWatermarksMatchTheKernelArithmetic(t *testing.T) {
	cases := []struct {
		name                    string
		managed                 uint64
		thp                     THPEnabled
		minFree                 int
		min, low, high, promo   uint64
		batch, highMin, highMax int
	}{
		{"7 GiB with THP takes the khugepaged raise", 1835008, THPAlways, 22528, 5632, 7467, 9302, 11137, 63, 933, 28672},
		// Without THP, khugepaged's start-up still calls
		// set_recommended_min_free_kbytes(), which recalculates the
		// square-root rule now that the high watermarks exist (they
		// are subtracted by nr_free_buffer_pages): 10818, not the
		// 10836 a first boot-time calculation gives.
		{"7 GiB without THP recalculates the square-root rule", 1835008, THPNever, 10818, 2704, 4539, 6374, 8209, 63, 567, 28672},
		{"32 GiB: the square root beats the raise", 8388608, THPAlways, 23170, 5792, 14180, 22568, 30956, 63, 1772, 131072},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := NewMachine(oneZone(c.managed, c.thp))
			require.NoError(t, err)
			z := m.Nodes[0].Zones[ZONE_NORMAL]
			assert.Equal(t, c.minFree, m.MinFreeKbytes())
			assert.Equal(t, c.min, z.WmarkPages(WMARK_MIN))
			assert.Equal(t, c.low, z.WmarkPages(WMARK_LOW))
			assert.Equal(t, c.high, z.WmarkPages(WMARK_HIGH))
			assert.Equal(t, c.promo, z.WmarkPages(WMARK_PROMO))
			ps := z.Pageset(0)
			assert.Equal(t, c.batch, ps.Batch)
			assert.Equal(t, c.highMin, ps.HighMin)
			assert.Equal(t, c.highMax, ps.HighMax)
			m.MustCheckInvariants()
		})
	}
}

func TestSysctlWritesRecomputeWhatTheKernelRecomputes(t *testing.T) {
	m, err := NewMachine(oneZone(1835008, THPNever))
	require.NoError(t, err)
	z := m.Nodes[0].Zones[ZONE_NORMAL]

	require.NoError(t, m.SetSysctl("vm.min_free_kbytes", "65536"))
	assert.Equal(t, uint64(16384), z.WmarkPages(WMARK_MIN))
	assert.Equal(t, uint64(16384+4096), z.WmarkPages(WMARK_LOW), "gap is min/4 once it beats the scale factor")

	require.NoError(t, m.SetSysctl("vm.watermark_scale_factor", "100"))
	assert.Equal(t, uint64(16384+18350), z.WmarkPages(WMARK_LOW))

	require.NoError(t, m.SetSysctl("vm.percpu_pagelist_high_fraction", "8"))
	ps := z.Pageset(3)
	assert.Equal(t, 1835008/8/8, ps.HighMin)
	assert.Equal(t, ps.HighMin, ps.HighMax, "a fixed fraction disables auto-tuning")

	assert.Error(t, m.SetSysctl("vm.percpu_pagelist_high_fraction", "4"))
	assert.Error(t, m.SetSysctl("vm.watermark_scale_factor", "0"))
	assert.Error(t, m.SetSysctl("vm.defrag_mode", "2"))
	assert.Error(t, m.SetSysctl("vm.nonsense", "1"))
	v, err := m.GetSysctl("vm/lowmem_reserve_ratio")
	require.NoError(t, err)
	assert.Equal(t, "256\t256\t32\t0\t0", v)
}

func TestLowmemReserveProtectsLowerZones(t *testing.T) {
	cfg, err := X86Layout(32<<30, 1, 4)
	require.NoError(t, err)
	m, err := NewMachine(cfg)
	require.NoError(t, err)
	n := m.Nodes[0]
	dma32, normal := n.Zones[ZONE_DMA32], n.Zones[ZONE_NORMAL]
	assert.Equal(t, int64(normal.ManagedPages/256), dma32.LowmemReserve[ZONE_NORMAL])
	assert.Equal(t, int64(0), normal.LowmemReserve[ZONE_NORMAL])
	assert.Equal(t, int64((dma32.ManagedPages+normal.ManagedPages)/256), n.Zones[ZONE_DMA].LowmemReserve[ZONE_NORMAL])
	// x86 with three populated zones and THP: 16,896 pages = 67,584 KB.
	assert.Equal(t, 67584, m.MinFreeKbytes())
	m.MustCheckInvariants()
}

func TestIntSqrtIsTheFloorSquareRoot(t *testing.T) {
	for _, x := range []uint64{0, 1, 2, 3, 4, 15, 16, 17, 117440512, 536870912, 1 << 40} {
		r := intSqrt(x)
		assert.LessOrEqual(t, r*r, x)
		assert.Greater(t, (r+1)*(r+1), x)
	}
}

// BootWatermarks sizes a machine without booting it: its zones carry the
// watermarks and lowmem reserves NewMachine gives the same layout, at
// every size from one zone to DMA, DMA32 and Normal.
func TestBootWatermarksAreTheBootedMachinesWithoutItsMemory(t *testing.T) {
	for _, tc := range []struct {
		name string
		gib  uint64
	}{
		{"512 MiB has DMA and DMA32", 0},
		{"2 GiB has DMA and DMA32", 2},
		{"5 GiB has DMA, DMA32 and Normal", 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bytes := max(tc.gib<<30, 512<<20)
			cfg, err := X86Layout(bytes, 1, 8)
			require.NoError(t, err)
			m, err := NewMachine(cfg)
			require.NoError(t, err)
			zones, err := BootWatermarks(cfg)
			require.NoError(t, err)
			require.Len(t, zones, len(m.zones))
			for i, z := range zones {
				booted := m.zones[i]
				assert.Equal(t, booted.Type, z.Type)
				assert.Equal(t, booted.ManagedPages, z.ManagedPages)
				for _, w := range []Watermark{WMARK_MIN, WMARK_LOW, WMARK_HIGH} {
					assert.Equal(t, booted.WmarkPages(w), z.WmarkPages(w), "%s %v", z.Type, w)
				}
				assert.Equal(t, booted.LowmemReserve, z.LowmemReserve, "%s", z.Type)
			}
			var high uint64
			for _, z := range zones {
				high += z.WmarkPages(WMARK_HIGH)
			}
			assert.Greater(t, high, uint64(0), "the watermarks were computed")
		})
	}
	_, err := BootWatermarks(Config{})
	assert.Error(t, err, "no node, no machine")
}
