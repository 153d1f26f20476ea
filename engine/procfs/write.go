package procfs

import (
	"bytes"
	"fmt"
	"io"
	"math/bits"

	"github.com/pagesim/pagesim/engine/mm"
)

// pagetypeinfoListCap is where pagetypeinfo_showfree_print() stops walking a
// free list: it prints ">100000" for any list that long.
const pagetypeinfoListCap = 100000

// Buddyinfo writes /proc/buddyinfo (frag_show_print): one line per populated
// zone, free_area[order].nr_free for every order.
func Buddyinfo(w io.Writer, m *mm.Machine) error {
	var b bytes.Buffer
	for _, n := range m.Nodes {
		for _, z := range n.Zones {
			if !z.Populated() {
				continue
			}
			fmt.Fprintf(&b, "Node %d, zone %8s ", n.ID, z.Name())
			for o := mm.Order(0); o < mm.NR_PAGE_ORDERS; o++ {
				fmt.Fprintf(&b, "%6d ", z.NrFree(o))
			}
			b.WriteByte('\n')
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

// Pagetypeinfo writes /proc/pagetypeinfo (pagetypeinfo_show): for every node
// with memory, the pageblock geometry, the free chunks per order and
// migratetype of each populated zone, and the zone's pageblocks per
// migratetype. CONFIG_PAGE_OWNER is off, so there is no "mixed blocks" table.
func Pagetypeinfo(w io.Writer, m *mm.Machine) error {
	var b bytes.Buffer
	for _, n := range m.Nodes {
		if n.PresentPages == 0 { // !node_state(nid, N_MEMORY)
			continue
		}
		fmt.Fprintf(&b, "Page block order: %d\n", mm.PageblockOrder)
		fmt.Fprintf(&b, "Pages per block:  %d\n", mm.PageblockNrPages)
		b.WriteByte('\n')

		fmt.Fprintf(&b, "%-43s ", "Free pages count per migrate type at order")
		for o := 0; o < mm.NR_PAGE_ORDERS; o++ {
			fmt.Fprintf(&b, "%6d ", o)
		}
		b.WriteByte('\n')
		for _, z := range n.Zones {
			if !z.Populated() {
				continue
			}
			for mt := mm.MigrateType(0); mt < mm.MIGRATE_TYPES; mt++ {
				fmt.Fprintf(&b, "Node %4d, zone %8s, type %12s ", n.ID, z.Name(), mt)
				for o := mm.Order(0); o < mm.NR_PAGE_ORDERS; o++ {
					c := z.FreeChunks(o, mt)
					if c >= pagetypeinfoListCap {
						fmt.Fprintf(&b, ">%6d ", pagetypeinfoListCap)
					} else {
						fmt.Fprintf(&b, "%6d ", c)
					}
				}
				b.WriteByte('\n')
			}
		}

		fmt.Fprintf(&b, "\n%-23s", "Number of blocks type ")
		for mt := mm.MigrateType(0); mt < mm.MIGRATE_TYPES; mt++ {
			fmt.Fprintf(&b, "%12s ", mt)
		}
		b.WriteByte('\n')
		for _, z := range n.Zones {
			if !z.Populated() {
				continue
			}
			fmt.Fprintf(&b, "Node %d, zone %8s ", n.ID, z.Name())
			for mt := mm.MigrateType(0); mt < mm.MIGRATE_TYPES; mt++ {
				fmt.Fprintf(&b, "%12d ", z.NrBlocks(mt))
			}
			b.WriteByte('\n')
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

// Zoneinfo writes /proc/zoneinfo (zoneinfo_show_print) for every zone of
// every node, populated or not.
func Zoneinfo(w io.Writer, m *mm.Machine) error {
	var b bytes.Buffer
	nrCPUs := m.NrCPUs()
	for _, n := range m.Nodes {
		first := firstPopulatedZone(n)
		for _, z := range n.Zones {
			fmt.Fprintf(&b, "Node %d, zone %8s", n.ID, z.Name())
			if z == first {
				b.WriteString("\n  per-node stats")
				for i := mm.NodeStatItem(0); i < mm.NR_VM_NODE_STAT_ITEMS; i++ {
					fmt.Fprintf(&b, "\n      %-12s %d", mm.NodeStatNames[i], nodeStatPrinted(n.Stat[i], i))
				}
			}
			fmt.Fprintf(&b, "\n  pages free     %d", zoneState(z, mm.NR_FREE_PAGES))
			fmt.Fprintf(&b, "\n        boost    %d", z.WatermarkBoost)
			fmt.Fprintf(&b, "\n        min      %d", z.WmarkPages(mm.WMARK_MIN))
			fmt.Fprintf(&b, "\n        low      %d", z.WmarkPages(mm.WMARK_LOW))
			fmt.Fprintf(&b, "\n        high     %d", z.WmarkPages(mm.WMARK_HIGH))
			fmt.Fprintf(&b, "\n        promo    %d", z.WmarkPages(mm.WMARK_PROMO))
			fmt.Fprintf(&b, "\n        spanned  %d", z.SpannedPages)
			fmt.Fprintf(&b, "\n        present  %d", z.PresentPages)
			fmt.Fprintf(&b, "\n        managed  %d", z.ManagedPages)
			fmt.Fprintf(&b, "\n        cma      %d", zoneCMAPages(z))
			fmt.Fprintf(&b, "\n        protection: (%d", z.LowmemReserve[0])
			for i := 1; i < len(z.LowmemReserve); i++ {
				fmt.Fprintf(&b, ", %d", z.LowmemReserve[i])
			}
			b.WriteByte(')')
			if !z.Populated() {
				// If unpopulated, no other information is useful.
				b.WriteByte('\n')
				continue
			}
			for i := mm.ZoneStatItem(0); i < mm.NR_VM_ZONE_STAT_ITEMS; i++ {
				fmt.Fprintf(&b, "\n      %-12s %d", mm.ZoneStatNames[i], zoneState(z, i))
			}
			for i := mm.NumaEventItem(0); i < mm.NR_VM_NUMA_EVENT_ITEMS; i++ {
				fmt.Fprintf(&b, "\n      %-12s %d", mm.NumaEventNames[i], z.NumaEvents[i])
			}
			b.WriteString("\n  pagesets")
			threshold := CalculateNormalThreshold(z.ManagedPages, nrCPUs)
			for cpu := 0; cpu < nrCPUs; cpu++ {
				p := z.Pageset(cpu)
				fmt.Fprintf(&b, "\n    cpu: %d", cpu)
				fmt.Fprintf(&b, "\n              count:    %d", p.Count)
				fmt.Fprintf(&b, "\n              high:     %d", p.High)
				fmt.Fprintf(&b, "\n              batch:    %d", p.Batch)
				fmt.Fprintf(&b, "\n              high_min: %d", p.HighMin)
				fmt.Fprintf(&b, "\n              high_max: %d", p.HighMax)
				fmt.Fprintf(&b, "\n  vm stats threshold: %d", threshold)
			}
			fmt.Fprintf(&b, "\n  node_unreclaimable:  %d", kswapdTestHopeless(n))
			fmt.Fprintf(&b, "\n  start_pfn:           %d", z.StartPFN)
			fmt.Fprintf(&b, "\n  reserved_highatomic: %d", z.NrReservedHighatomic)
			fmt.Fprintf(&b, "\n  free_highatomic:     %d", z.NrFreeHighatomic)
			b.WriteByte('\n')
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

// Vmstat writes /proc/vmstat (vmstat_start, vmstat_show).
func Vmstat(w io.Writer, m *mm.Machine) error {
	var b bytes.Buffer
	line := func(name string, v uint64) {
		b.WriteString(name)
		fmt.Fprintf(&b, " %d\n", v)
	}
	for i := mm.ZoneStatItem(0); i < mm.NR_VM_ZONE_STAT_ITEMS; i++ {
		line(mm.ZoneStatNames[i], clampPages(m.GlobalZoneState(i)))
	}
	for i := mm.NumaEventItem(0); i < mm.NR_VM_NUMA_EVENT_ITEMS; i++ {
		line(mm.NumaEventNames[i], m.GlobalNumaEvent(i))
	}
	for i := mm.NodeStatItem(0); i < mm.NR_VM_NODE_STAT_ITEMS; i++ {
		var sum int64
		for _, n := range m.Nodes {
			sum += n.Stat[i]
		}
		line(mm.NodeStatNames[i], nodeStatPrinted(sum, i))
	}
	vs := VMStatItems(m)
	for i := mm.VMStatItem(0); i < mm.NR_VM_STAT_ITEMS; i++ {
		line(mm.VMStatNames[i], vs[i])
	}
	for e := mm.VMEventItem(0); e < mm.NR_VM_EVENT_ITEMS; e++ {
		v := m.Stat.Events[e]
		if e == mm.PGPGIN || e == mm.PGPGOUT {
			v /= 2 // sectors -> kbytes
		}
		line(mm.VMEventNames[e], v)
	}
	// Deprecated counters kept for userspace that expects them.
	b.WriteString("nr_unstable 0\n")
	_, err := w.Write(b.Bytes())
	return err
}

// firstPopulatedZone is the zone is_zone_first_populated() picks: the
// lowest populated zone of the node, or nil.
func firstPopulatedZone(n *mm.Node) *mm.Zone {
	for _, z := range n.Zones {
		if z.Populated() {
			return z
		}
	}
	return nil
}

// maxReclaimRetries is MAX_RECLAIM_RETRIES (mm/internal.h).
const maxReclaimRetries = 16

// kswapdTestHopeless is kswapd_test_hopeless(): 1 once kswapd has failed
// MAX_RECLAIM_RETRIES times in a row on the node.
func kswapdTestHopeless(n *mm.Node) int {
	if n.KswapdFailures() >= maxReclaimRetries {
		return 1
	}
	return 0
}

// clampPages is the CONFIG_SMP clamp of zone_page_state() and friends:
// per-CPU drift can make a counter transiently negative, and the readers
// print 0 instead.
func clampPages(v int64) uint64 {
	if v < 0 {
		return 0
	}
	return uint64(v)
}

// zoneState is zone_page_state().
func zoneState(z *mm.Zone, i mm.ZoneStatItem) uint64 { return clampPages(z.Stat[i]) }

// nodeStatPrinted turns a node item's stored value into what zoneinfo and
// vmstat print: bytes to pages for the slab items (pagesim stores them in
// bytes), clamped at 0, and in THPs for the items vmstat_item_print_in_thp()
// names.
func nodeStatPrinted(v int64, i mm.NodeStatItem) uint64 {
	if mm.NodeStatInBytes(i) {
		v /= mm.PAGE_SIZE
	}
	p := clampPages(v)
	if mm.NodeStatInTHP(i) {
		p /= mm.HPAGE_PMD_NR
	}
	return p
}

// zoneCMAPages is zone_cma_pages(): the pages of the zone's CMA areas. CMA
// pageblocks never change type, so that is the CMA pageblocks' pages.
func zoneCMAPages(z *mm.Zone) uint64 {
	return z.NrBlocks(mm.MIGRATE_CMA) * mm.PageblockNrPages
}

// fls is the kernel's fls(): the 1-based index of the highest set bit, 0
// for 0.
func fls(x uint64) int { return bits.Len64(x) }

// CalculateNormalThreshold is calculate_normal_threshold(): the per-CPU
// vmstat drift a zone tolerates before folding, printed as "vm stats
// threshold". It grows with the log of the CPU count and of the zone size
// in 128 MiB units, and is at most 125.
func CalculateNormalThreshold(managedPages uint64, nrCPUs int) int {
	mem := managedPages >> (27 - mm.PAGE_SHIFT)
	threshold := 2 * fls(uint64(nrCPUs)) * (1 + fls(mem))
	return min(threshold, 125)
}

// TotalreservePages is totalreserve_pages (calculate_totalreserve_pages):
// for every zone, its largest lowmem reserve against itself or a higher
// zone plus its high watermark, at most its managed pages. The engine keeps
// it where the kernel recomputes it (engine/mm page_writeback.go).
func TotalreservePages(m *mm.Machine) uint64 { return m.TotalreservePages() }

// GlobalDirtyLimits is global_dirty_limits() for a task that is not
// real-time: domain_dirty_limits() over global_dirtyable_memory(), with the
// machine's vm.dirty_* sysctls (engine/mm page_writeback.go).
func GlobalDirtyLimits(m *mm.Machine) (background, dirty uint64) { return m.GlobalDirtyLimits() }

// pagesPerSection is PAGES_PER_SECTION on x86-64 (SECTION_SIZE_BITS 27).
const pagesPerSection = 1 << (27 - mm.PAGE_SHIFT)

// memmapPagesPerSection is the vmemmap of one section: 64-byte struct pages.
const memmapPagesPerSection = pagesPerSection * 64 / mm.PAGE_SIZE

// NrMemmapBootPages is nr_memmap_boot_pages: the memmap memblock allocated at
// boot, one section's worth for every 128 MiB section holding present pages
// (present pages sit at the start of each zone in pagesim's layout).
func NrMemmapBootPages(m *mm.Machine) uint64 {
	var sections uint64
	last := int64(-1)
	for _, z := range m.Zones() {
		if z.PresentPages == 0 {
			continue
		}
		first := int64(z.StartPFN) / pagesPerSection
		end := (int64(z.StartPFN) + int64(z.PresentPages) - 1) / pagesPerSection
		if first <= last {
			first = last + 1
		}
		if end >= first {
			sections += uint64(end - first + 1)
			last = end
		}
	}
	return sections * memmapPagesPerSection
}

// VMStatItems returns the enum vm_stat_item values /proc/vmstat prints.
func VMStatItems(m *mm.Machine) [mm.NR_VM_STAT_ITEMS]uint64 {
	var v [mm.NR_VM_STAT_ITEMS]uint64
	v[mm.NR_DIRTY_BG_THRESHOLD], v[mm.NR_DIRTY_THRESHOLD] = GlobalDirtyLimits(m)
	v[mm.NR_MEMMAP_PAGES] = 0 // memmap allocated by the buddy allocator: hotplug only
	v[mm.NR_MEMMAP_BOOT_PAGES] = NrMemmapBootPages(m)
	return v
}
