package mm

// page_alloc_setup.go models the sizing code of mm/page_alloc.c and
// mm/khugepaged.c: the default vm.min_free_kbytes
// (calculate_min_free_kbytes), the per-zone watermarks
// (__setup_per_zone_wmarks), the lowmem reserves
// (setup_per_zone_lowmem_reserve), the per-CPU pageset batch and high limits
// (zone_batchsize, zone_highsize, zone_set_pageset_high_and_batch) and the
// THP-recommended raise of min_free_kbytes (set_recommended_min_free_kbytes).
//
// The arithmetic is the kernel's, integer for integer, so that the watermarks
// pagesim prints in /proc/zoneinfo are the numbers a kernel would print for
// the same managed pages and sysctls. It was checked against
// linux-mm/linux-mm mm/page_alloc.c @00cb34b0 and mm/khugepaged.c, and
// page_alloc_setup_test.go works its examples by hand.

import (
	"errors"
	"math/bits"
)

// intSqrt is int_sqrt(): the integer square root, rounded down.
func intSqrt(x uint64) uint64 {
	if x < 2 {
		return x
	}
	// Newton's method on integers.
	r := x
	y := (r + x/r) / 2
	for y < r {
		r = y
		y = (r + x/r) / 2
	}
	return r
}

// nrFreeZonePages is nr_free_zone_pages(): over the zonelist of the first
// node with CPUs (numa_node_id() of the booting CPU), the managed pages above
// the high watermark of every zone up to highest.
func (m *Machine) nrFreeZonePages(highest ZoneType) uint64 {
	var sum uint64
	for _, z := range m.Nodes[m.cpuNode[0]].Zonelist(false) {
		if z.Type > highest {
			continue
		}
		size, high := z.ManagedPages, z.WmarkPages(WMARK_HIGH)
		if size > high {
			sum += size - high
		}
	}
	return sum
}

// nrFreeBufferPages is nr_free_buffer_pages(): gfp_zone(GFP_USER) = Normal.
func (m *Machine) nrFreeBufferPages() uint64 { return m.nrFreeZonePages(gfpZone(GFP_USER)) }

// calculateMinFreeKbytes is calculate_min_free_kbytes().
func (m *Machine) calculateMinFreeKbytes() {
	lowmemKbytes := m.nrFreeBufferPages() * (PAGE_SIZE >> 10)
	newMin := int(intSqrt(lowmemKbytes * 16))
	if newMin > m.userMinFreeKbytes {
		m.minFreeKbytes = min(max(newMin, 128), 262144)
	}
}

// setupPerZoneWmarks is setup_per_zone_wmarks(): __setup_per_zone_wmarks()
// then zone_pcp_update() for every zone.
func (m *Machine) setupPerZoneWmarks() {
	pagesMin := uint64(m.minFreeKbytes) >> (PAGE_SHIFT - 10)
	var lowmemPages uint64
	for _, z := range m.zones {
		if z.Type != ZONE_MOVABLE && z.Type != ZONE_DEVICE {
			lowmemPages += z.ManagedPages
		}
	}
	for _, z := range m.zones {
		var tmp uint64
		if lowmemPages > 0 {
			tmp = pagesMin * z.ManagedPages / lowmemPages
		}
		if z.Type == ZONE_MOVABLE {
			// __GFP_HIGH and PF_MEMALLOC allocations usually don't
			// need highmem/movable pages: a small floor (the kernel
			// applies it to highmem and ZONE_MOVABLE, even empty).
			minPages := z.ManagedPages / 1024
			minPages = min(max(minPages, SWAP_CLUSTER_MAX), 128)
			z.watermark[WMARK_MIN] = minPages
		} else {
			z.watermark[WMARK_MIN] = tmp
		}
		// mult_frac(managed, watermark_scale_factor, 10000)
		scaled := multFrac(z.ManagedPages, uint64(m.Sysctl.WatermarkScaleFactor), 10000)
		if tmp>>2 > scaled {
			tmp = tmp >> 2
		} else {
			tmp = scaled
		}
		z.WatermarkBoost = 0
		z.watermark[WMARK_LOW] = z.watermark[WMARK_MIN] + tmp
		z.watermark[WMARK_HIGH] = z.watermark[WMARK_LOW] + tmp
		z.watermark[WMARK_PROMO] = z.watermark[WMARK_HIGH] + tmp
	}
	for _, z := range m.zones {
		m.zonePCPUpdate(z)
	}
	m.calculateTotalreservePages()
}

// multFrac is mult_frac(x, n, d): x*n/d computed without overflow the way
// the kernel's macro does it.
func multFrac(x, n, d uint64) uint64 {
	q := x / d
	r := x % d
	return q*n + r*n/d
}

// setupPerZoneLowmemReserve is setup_per_zone_lowmem_reserve().
func (m *Machine) setupPerZoneLowmemReserve() {
	for _, n := range m.Nodes {
		for i := ZoneType(0); i < MAX_NR_ZONES-1; i++ {
			z := n.Zones[i]
			ratio := m.Sysctl.LowmemReserveRatio[i]
			clear := ratio == 0 || z.ManagedPages == 0
			var managed uint64
			for j := i + 1; j < MAX_NR_ZONES; j++ {
				managed += n.Zones[j].ManagedPages
				if clear {
					z.LowmemReserve[j] = 0
				} else {
					z.LowmemReserve[j] = int64(managed / uint64(ratio))
				}
			}
		}
	}
	m.calculateTotalreservePages()
}

// zoneBatchsize is zone_batchsize().
func zoneBatchsize(z *Zone) int {
	batch := z.ManagedPages >> 10
	if batch > mib/PAGE_SIZE {
		batch = mib / PAGE_SIZE
	}
	batch /= 4
	if batch < 1 {
		batch = 1
	}
	return int(roundDownPow2(batch+batch/2)) - 1
}

// zoneHighsize is zone_highsize() with cpu_online = 0.
func (m *Machine) zoneHighsize(z *Zone, batch int, highFraction int) int {
	var total uint64
	if highFraction == 0 {
		total = z.WmarkPages(WMARK_LOW)
	} else {
		total = z.ManagedPages / uint64(highFraction)
	}
	nrSplit := len(z.Node.CPUs)
	if nrSplit == 0 {
		nrSplit = len(m.cpuNode)
	}
	high := int(total / uint64(nrSplit))
	if high < batch<<2 {
		high = batch << 2
	}
	return high
}

// zonePCPUpdate is zone_pcp_update() / zone_set_pageset_high_and_batch().
func (m *Machine) zonePCPUpdate(z *Zone) {
	batch := zoneBatchsize(z)
	if batch < 1 {
		batch = 1
	}
	var highMin, highMax int
	if f := m.Sysctl.PercpuPagelistHighFraction; f != 0 {
		highMin = m.zoneHighsize(z, batch, f)
		highMax = highMin
	} else {
		highMin = m.zoneHighsize(z, batch, 0)
		highMax = m.zoneHighsize(z, batch, minPercpuPagelistHighFraction)
	}
	for c := range z.pcp {
		p := &z.pcp[c]
		if p.highMin == highMin && p.highMax == highMax && p.batch == batch {
			continue
		}
		// pageset_update() sets batch and the limits; pcp->high is
		// clamped into them on the next use (nr_pcp_high), which
		// pagesim does at once so /proc/zoneinfo shows a settled value.
		p.batch = batch
		p.highMin = highMin
		p.highMax = highMax
		p.high = min(max(p.high, highMin), highMax)
	}
}

// minPercpuPagelistHighFraction is MIN_PERCPU_PAGELIST_HIGH_FRACTION.
const minPercpuPagelistHighFraction = 8

// initPerZoneWmarkMin is init_per_zone_wmark_min() followed, when THP is
// enabled for PMD-size pages, by khugepaged's start-up call to
// set_recommended_min_free_kbytes().
func (m *Machine) initPerZoneWmarkMin() {
	m.calculateMinFreeKbytes()
	m.setupPerZoneWmarks()
	m.setupPerZoneLowmemReserve()
	m.setRecommendedMinFreeKbytes()
}

// setRecommendedMinFreeKbytes is set_recommended_min_free_kbytes().
func (m *Machine) setRecommendedMinFreeKbytes() {
	if !m.THP.hugepagePMDEnabled() {
		m.calculateMinFreeKbytes()
		m.setupPerZoneWmarks()
		return
	}
	nrZones := uint64(0)
	for _, z := range m.zones {
		if z.Populated() && z.Type <= gfpZone(GFP_USER) {
			nrZones++
		}
	}
	// Ensure 2 pageblocks are free to assist fragmentation avoidance.
	rec := uint64(PageblockNrPages) * nrZones * 2
	// Make sure that on average at least two pageblocks are almost free
	// of another type, one for a migratetype to fall back to and a second
	// to avoid subsequent fallbacks of other types.
	rec += uint64(PageblockNrPages) * nrZones * MIGRATE_PCPTYPES * MIGRATE_PCPTYPES
	// Don't ever allow to reserve more than 5% of the lowmem.
	if cap := m.nrFreeBufferPages() / 20; rec > cap {
		rec = cap
	}
	rec <<= PAGE_SHIFT - 10
	if int(rec) > m.minFreeKbytes {
		m.minFreeKbytes = int(rec)
	}
	m.setupPerZoneWmarks()
}

// MinFreeKbytes returns vm.min_free_kbytes as the kernel holds it now.
func (m *Machine) MinFreeKbytes() int { return m.minFreeKbytes }

// roundDownPow2 is rounddown_pow_of_two(): the largest power of two not
// above x, 0 for 0.
func roundDownPow2(x uint64) uint64 {
	if x == 0 {
		return 0
	}
	return 1 << (bits.Len64(x) - 1)
}

// BootWatermarks returns the zones of a machine laid out as cfg with the
// watermarks and lowmem reserves its boot gives them (NewMachine's
// calculate_min_free_kbytes, setup_per_zone_wmarks,
// setup_per_zone_lowmem_reserve and set_recommended_min_free_kbytes, at
// the default sysctls and cfg's THP settings), without building its
// memmap or freeing its memory: the sizing code reads managed pages only,
// so a scenario can size a run by a machine it does not boot (seed 002's
// run length is a ratio of two machines' free pageblocks). Only the zones'
// spans, managed pages, WmarkPages and LowmemReserve are meaningful.
func BootWatermarks(cfg Config) ([]*Zone, error) {
	if len(cfg.Nodes) == 0 {
		return nil, errors.New("a machine needs at least one node")
	}
	m := &Machine{Sysctl: defaultSysctl(), THP: cfg.THP, minFreeKbytes: 1024, userMinFreeKbytes: -1}
	if m.THP == (THPSettings{}) {
		m.THP = DefaultTHPSettings()
	}
	if err := m.layout(cfg); err != nil {
		return nil, err
	}
	m.buildZonelists()
	m.initPerZoneWmarkMin()
	return m.zones, nil
}
