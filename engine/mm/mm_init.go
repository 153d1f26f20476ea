package mm

// mm_init.go models mm/mm_init.c and the boot-time half of mm/page_alloc.c:
// laying out nodes and zones, initialising the memory map (every pageblock
// starts MIGRATE_MOVABLE, memmap_init_range), handing the managed pages to
// the buddy allocator (memblock_free_all), and the first computation of the
// watermarks, the lowmem reserves and the per-CPU pageset sizes
// (init_per_zone_wmark_min, then khugepaged's
// set_recommended_min_free_kbytes when THP is enabled).
//
// # Layout
//
// A machine is described by a Config: per node, its zones with start PFN,
// spanned, present and managed pages, and its CPUs. X86Layout builds the
// layout a kernel shows on an x86-64 box (DMA below 16 MiB, DMA32 below
// 4 GiB with the PCI hole, Normal above; further nodes Normal only);
// SimpleLayout gives every node a single Normal zone, which is what the
// scaled scenarios use. Imported /proc dumps build their own Config.
//
// Within a zone the present pages come first and the holes (spanned minus
// present) last. Of the present pages, the last (present - managed) are
// reserved: memblock allocates the memmap top-down, so the kernel's
// reservations sit at the top of each node. Both holes and reservations are
// PageReserved and never reach the free lists.
//
// # What differs from one boot to the next
//
// Two boots of the same machine do not leave the same memory free in the
// same order. Config.Boot turns on the two causes pagesim models, each
// drawn from its own stream of the world's seed (sim's "Streams"):
//
//   - KASLR (arch/x86/boot/compressed/kaslr.c, choose_random_location):
//     with CONFIG_RANDOMIZE_BASE, default since v4.12, the decompressor
//     loads the kernel at a random physical address. find_random_phys_addr
//     counts every CONFIG_PHYSICAL_ALIGN (2 MiB) slot of usable RAM above
//     min(LOAD_PHYSICAL_ADDR, 512 MiB) = 16 MiB that holds the whole image
//     and slots_fetch_random takes one uniformly; memblock then reserves
//     the image there. So the image's pageblocks, never free, lie anywhere
//     in RAM, on any node. pagesim moves Config.KernelImagePages from where
//     the layout counted them (X86Layout: node 0's DMA32) to a slot drawn
//     from boot/kaslr; slots lie within one zone's managed part (the memmap
//     stays at the zone's top).
//   - Deferred struct page init (mm/mm_init.c, deferred_init_memmap, with
//     CONFIG_DEFERRED_STRUCT_PAGE_INIT, CHOICE: set): memblock_free_all
//     frees the low zones and the first section of each node's highest
//     zone in PFN order at boot; the rest of that zone is freed later by
//     deferred_init_memmap. Since v5.7 that work is split by
//     padata_do_multithreaded over one thread per CPU of the node
//     (deferred_page_init_max_threads): section-aligned chunks of
//     size / (threads x 4) handed out in PFN order, each thread freeing
//     its chunk one MAX_ORDER block at a time to the tail of the free list
//     (__free_pages_core, FPI_TO_TAIL). The free list therefore holds the
//     threads' blocks in the order they happened to take zone->lock: the
//     first allocations after boot come from a different part of the zone
//     on each boot. pagesim interleaves the threads' blocks, each next block
//     from a thread drawn uniformly (an estimate: the threads run at the
//     same speed and nothing orders them) from boot/deferred-init/NID.
//     Before v5.7 one kthread per node freed its zone in PFN order
//     (Boot.DeferredInitMultithreaded false).

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/pagesim/pagesim/engine/sim"
)

// ZoneSpec describes one zone at boot.
type ZoneSpec struct {
	Type     ZoneType
	StartPFN PFN
	Spanned  uint64
	Present  uint64
	Managed  uint64
}

// NodeSpec describes one NUMA node at boot.
type NodeSpec struct {
	Zones []ZoneSpec
	CPUs  int
}

// Config describes a machine to boot.
type Config struct {
	Nodes []NodeSpec
	// Distance is the SLIT table (node_distance); nil gives 10 locally and
	// 20 between nodes (LOCAL_DISTANCE, REMOTE_DISTANCE), as Linux does
	// without a SLIT. X86Layout gives 21 between sockets.
	Distance [][]int
	// Seed seeds the machine's RNG.
	Seed uint64
	// THP holds the transparent_hugepage sysfs settings at boot.
	THP THPSettings
	// Sysctl holds sysctl values written before boot finishes, by name
	// ("vm.min_free_kbytes"); applied in order after the defaults.
	Sysctl []SysctlSetting
	// MaxBytes, if not 0, is the memory budget: NewMachine refuses a
	// machine whose MachineBytes exceed it, before allocating anything.
	MaxBytes uint64
	// KernelImagePages is the kernel image (_text to _end), counted among
	// the reserved pages (present - managed) of node 0's first zone that
	// starts at or above 16 MiB (X86Layout: DMA32). Boot.KASLR moves it.
	KernelImagePages uint64
	// Boot selects the boot-to-boot differences (see the top of the file);
	// the zero value boots the same way every time.
	Boot BootConfig
	// Sched is the scheduler timing of the machine's world (sim.SchedModel:
	// idle-state exits, timer expiry, fork placement); nil: exact.
	Sched *sim.SchedModel
	// Recorder, if set, records the machine from the end of its boot
	// (trace_record.go); a machine booted later with the same recorder
	// retires this one from it.
	Recorder *Recorder
}

// BootConfig selects what differs from one boot of a machine to the next.
type BootConfig struct {
	// KASLR places the kernel image at a random 2 MiB slot of RAM
	// (CONFIG_RANDOMIZE_BASE).
	KASLR bool
	// DeferredInitMultithreaded frees each node's deferred memory with one
	// thread per CPU of the node (v5.7 and later) in an interleaved order;
	// false frees it in PFN order (one pgdatinit thread, v4.x).
	DeferredInitMultithreaded bool
}

// SysctlSetting is one name=value pair.
type SysctlSetting struct {
	Name, Value string
}

const (
	kib = 1024
	mib = 1024 * kib
	gib = 1024 * mib
)

// X86Layout returns the zone layout an x86-64 kernel builds for memBytes of
// RAM split evenly over nodes, with cpusPerNode CPUs on each node. Node 0
// holds DMA (PFN 1-4095, with the 640 KiB-1 MiB legacy hole), DMA32 (RAM
// below 3 GiB; 3-4 GiB is the PCI hole) and Normal; other nodes hold Normal
// only. Reserved pages: the memmap of each zone (64 bytes per page) plus
// 16 MiB of kernel image in node 0's DMA32 (CHOICE: a typical distribution
// kernel; the real figure depends on the kernel and firmware).
func X86Layout(memBytes uint64, nodes, cpusPerNode int) (Config, error) {
	if nodes < 1 || nodes > 64 {
		return Config{}, fmt.Errorf("nodes must be between 1 and 64, got %d", nodes)
	}
	if cpusPerNode < 1 || cpusPerNode > 1024 {
		return Config{}, fmt.Errorf("CPUs per node must be between 1 and 1024, got %d", cpusPerNode)
	}
	perNode := memBytes / uint64(nodes) / PAGE_SIZE
	if perNode < 8192 { // 32 MiB
		return Config{}, fmt.Errorf("memory per node must be at least 32 MiB, got %d KiB", perNode*4)
	}
	if memBytes/PAGE_SIZE > 1<<31 {
		return Config{}, fmt.Errorf("memory must be at most 8 TiB")
	}
	var cfg Config
	memmap := func(present uint64) uint64 { return (present*64 + PAGE_SIZE - 1) / PAGE_SIZE }
	// Node 0.
	n0 := NodeSpec{CPUs: cpusPerNode}
	dmaPresent := uint64(4095 - 97) // PFN 1..4095 minus 0x9f..0xff
	n0.Zones = append(n0.Zones, ZoneSpec{Type: ZONE_DMA, StartPFN: 1, Spanned: 4095, Present: dmaPresent, Managed: dmaPresent - 22})
	left := perNode - 4096
	low := uint64(3*gib/PAGE_SIZE) - 4096 // DMA32 RAM below the PCI hole
	if left < low {
		low = left
	}
	dma32 := ZoneSpec{Type: ZONE_DMA32, StartPFN: 4096, Present: low}
	dma32.Managed = low - memmap(low)
	// The kernel image lives in DMA32 on node 0.
	if dma32.Managed > 4096+1024 {
		dma32.Managed -= 4096
		cfg.KernelImagePages = 4096
	}
	left -= low
	end := PFN(4096 + low)
	if left > 0 {
		dma32.Spanned = uint64(4*gib/PAGE_SIZE) - 4096
		end = PFN(4 * gib / PAGE_SIZE)
	} else {
		dma32.Spanned = low
	}
	n0.Zones = append(n0.Zones, dma32)
	if left > 0 {
		n0.Zones = append(n0.Zones, ZoneSpec{Type: ZONE_NORMAL, StartPFN: end, Spanned: left, Present: left, Managed: left - memmap(left)})
		end += PFN(left)
	}
	cfg.Nodes = append(cfg.Nodes, n0)
	cfg.Distance = make([][]int, nodes)
	for i := range cfg.Distance {
		cfg.Distance[i] = make([]int, nodes)
		for j := range cfg.Distance[i] {
			cfg.Distance[i][j] = x86SocketDistance
		}
		cfg.Distance[i][i] = LOCAL_DISTANCE
	}
	for i := 1; i < nodes; i++ {
		cfg.Nodes = append(cfg.Nodes, NodeSpec{CPUs: cpusPerNode, Zones: []ZoneSpec{{
			Type: ZONE_NORMAL, StartPFN: end, Spanned: perNode, Present: perNode, Managed: perNode - memmap(perNode),
		}}})
		end += PFN(perNode)
	}
	return cfg, nil
}

// SimpleLayout returns nodes with one Normal zone of pagesPerNode pages each,
// reserving the zone's memmap (64 bytes per page) at its top, and
// cpusPerNode CPUs per node. The first zone starts at PFN 0x1000 (16 MiB)
// so that no real machine's DMA zone is implied.
func SimpleLayout(pagesPerNode uint64, nodes, cpusPerNode int) (Config, error) {
	if nodes < 1 || nodes > 64 {
		return Config{}, fmt.Errorf("nodes must be between 1 and 64, got %d", nodes)
	}
	if cpusPerNode < 1 || cpusPerNode > 1024 {
		return Config{}, fmt.Errorf("CPUs per node must be between 1 and 1024, got %d", cpusPerNode)
	}
	if pagesPerNode < 4*PageblockNrPages {
		return Config{}, fmt.Errorf("each node needs at least 8 MiB, got %d KiB", pagesPerNode*4)
	}
	if pagesPerNode > (1<<31)/uint64(nodes) {
		return Config{}, errors.New("memory must be at most 8 TiB")
	}
	// Round down to whole pageblocks: real zones are pageblock-aligned
	// and it keeps every block fully inside its zone.
	pagesPerNode &^= PageblockNrPages - 1
	var cfg Config
	start := PFN(0x1000)
	for i := 0; i < nodes; i++ {
		reserved := (pagesPerNode*64 + PAGE_SIZE - 1) / PAGE_SIZE
		cfg.Nodes = append(cfg.Nodes, NodeSpec{CPUs: cpusPerNode, Zones: []ZoneSpec{{
			Type: ZONE_NORMAL, StartPFN: start, Spanned: pagesPerNode, Present: pagesPerNode, Managed: pagesPerNode - reserved,
		}}})
		start += PFN(pagesPerNode)
	}
	return cfg, nil
}

// NewMachine boots a machine from cfg.
func NewMachine(cfg Config) (*Machine, error) {
	if len(cfg.Nodes) == 0 {
		return nil, errors.New("a machine needs at least one node")
	}
	if err := CheckBudget(cfg, 1, cfg.MaxBytes); err != nil {
		return nil, err
	}
	m := &Machine{
		Sysctl:            defaultSysctl(),
		THP:               cfg.THP,
		Cost:              DefaultCosts(),
		minFreeKbytes:     1024,
		userMinFreeKbytes: -1,
	}
	if m.THP == (THPSettings{}) {
		m.THP = DefaultTHPSettings()
	}
	m.Trace = NewTrace(traceRingSize)
	if err := m.layout(cfg); err != nil {
		return nil, err
	}
	m.World = sim.NewWorld(m.cpuNode, cfg.Seed)
	m.World.Sched = cfg.Sched
	m.Blk = DefaultBlockDevice()
	m.Blk.rand = m.World.Rand
	m.boot = cfg.Boot
	if cfg.Boot.KASLR && cfg.KernelImagePages > 0 {
		m.chooseRandomLocation(cfg.KernelImagePages)
	}
	m.initMemcg()
	m.initPSI()
	m.buildZonelists()
	m.pcpuDrainMutex.Name = "pcpu_drain_mutex"
	m.memmapInit()
	m.freeAllManaged()
	m.initPerZoneWmarkMin()
	m.initKswapd()
	m.initKcompactd()
	for _, s := range cfg.Sysctl {
		if err := m.SetSysctl(s.Name, s.Value); err != nil {
			return nil, err
		}
	}
	if cfg.Recorder != nil {
		cfg.Recorder.attach(m)
	}
	return m, nil
}

func (m *Machine) layout(cfg Config) error {
	var next PFN
	for ni, ns := range cfg.Nodes {
		if ns.CPUs < 0 || ns.CPUs > 1024 {
			return fmt.Errorf("node %d: CPUs must be between 0 and 1024, got %d", ni, ns.CPUs)
		}
		n := &Node{ID: ni, memcgIter: -1}
		for c := 0; c < ns.CPUs; c++ {
			n.CPUs = append(n.CPUs, len(m.cpuNode))
			m.cpuNode = append(m.cpuNode, ni)
		}
		var seen [MAX_NR_ZONES]bool
		for _, zs := range ns.Zones {
			if zs.Type >= ZONE_DEVICE {
				if zs.Spanned == 0 {
					continue
				}
				return fmt.Errorf("node %d: zone %s cannot hold memory in pagesim", ni, zs.Type)
			}
			if seen[zs.Type] {
				return fmt.Errorf("node %d: zone %s given twice", ni, zs.Type)
			}
			seen[zs.Type] = true
			if zs.Present > zs.Spanned {
				return fmt.Errorf("node %d zone %s: present pages (%d) exceed spanned pages (%d)", ni, zs.Type, zs.Present, zs.Spanned)
			}
			if zs.Managed > zs.Present {
				return fmt.Errorf("node %d zone %s: managed pages (%d) exceed present pages (%d)", ni, zs.Type, zs.Managed, zs.Present)
			}
			if zs.Spanned > 0 && zs.StartPFN < next {
				return fmt.Errorf("node %d zone %s: start_pfn %d overlaps the previous zone (ends at %d)", ni, zs.Type, zs.StartPFN, next)
			}
			if uint64(zs.StartPFN) > 1<<31 || zs.Spanned > 1<<31-uint64(zs.StartPFN) {
				return fmt.Errorf("node %d zone %s: ends beyond 8 TiB", ni, zs.Type)
			}
			z := &Zone{Node: n, Type: zs.Type, StartPFN: zs.StartPFN, SpannedPages: zs.Spanned,
				PresentPages: zs.Present, ManagedPages: zs.Managed}
			n.Zones[zs.Type] = z
			if zs.Spanned > 0 {
				next = zs.StartPFN + PFN(zs.Spanned)
			}
		}
		// Empty zones for the types the node does not have: the kernel
		// has a struct zone for every type on every node.
		for t := ZoneType(0); t < MAX_NR_ZONES; t++ {
			if n.Zones[t] == nil {
				n.Zones[t] = &Zone{Node: n, Type: t}
			}
		}
		// Zones of a node must appear in PFN order by type.
		var last PFN
		for t := ZoneType(0); t < MAX_NR_ZONES; t++ {
			z := n.Zones[t]
			if z.SpannedPages == 0 {
				continue
			}
			if z.StartPFN < last {
				return fmt.Errorf("node %d: zone %s starts below the zone before it", ni, t)
			}
			last = z.EndPFN()
		}
		for t := ZoneType(0); t < MAX_NR_ZONES; t++ {
			z := n.Zones[t]
			z.ID = len(m.zones)
			m.zones = append(m.zones, z)
			if z.SpannedPages > 0 {
				if n.SpannedPages == 0 {
					n.StartPFN = z.StartPFN
				}
				n.SpannedPages = uint64(z.EndPFN() - n.StartPFN)
				n.PresentPages += z.PresentPages
			}
		}
		m.Nodes = append(m.Nodes, n)
	}
	if len(m.cpuNode) == 0 {
		return errors.New("a machine needs at least one CPU")
	}
	if next == 0 {
		return errors.New("a machine needs memory")
	}
	m.maxPFN = next
	nr := len(cfg.Nodes)
	m.distance = make([][]int, nr)
	for i := range m.distance {
		m.distance[i] = make([]int, nr)
		for j := range m.distance[i] {
			switch {
			case cfg.Distance != nil && i < len(cfg.Distance) && j < len(cfg.Distance[i]):
				m.distance[i][j] = cfg.Distance[i][j]
			case i == j:
				m.distance[i][j] = LOCAL_DISTANCE
			default:
				m.distance[i][j] = REMOTE_DISTANCE
			}
			d := m.distance[i][j]
			if (i == j && d != LOCAL_DISTANCE) || (i != j && (d <= LOCAL_DISTANCE || d > 254)) {
				return fmt.Errorf("node distance %d->%d is %d: the local distance must be %d and a remote one %d to 254 (ACPI SLIT)", i, j, d, LOCAL_DISTANCE, LOCAL_DISTANCE+1)
			}
		}
	}
	for _, z := range m.zones {
		z.pcp = make([]perCPUPages, len(m.cpuNode))
		for c := range z.pcp {
			for i := range z.pcp[c].lists {
				z.pcp[c].lists[i] = freeList{head: NilPFN, tail: NilPFN}
			}
		}
		for o := range z.freeArea {
			for t := range z.freeArea[o].list {
				z.freeArea[o].list[t] = freeList{head: NilPFN, tail: NilPFN}
			}
		}
		z.Lock.Name = fmt.Sprintf("zone->lock(%d,%s)", z.Node.ID, z.Name())
		z.compact.init(z)
	}
	return nil
}

// buildZonelists is build_zonelists(): for each node, its own zones highest
// type first, then the other nodes by increasing distance (ties broken by
// node number, which is what find_next_best_node's load balancing gives on a
// freshly booted machine), each node's zones highest first.
func (m *Machine) buildZonelists() {
	for _, n := range m.Nodes {
		order := []int{n.ID}
		used := map[int]bool{n.ID: true}
		for len(order) < len(m.Nodes) {
			best := -1
			for _, o := range m.Nodes {
				if used[o.ID] {
					continue
				}
				if best < 0 || m.distance[n.ID][o.ID] < m.distance[n.ID][best] {
					best = o.ID
				}
			}
			used[best] = true
			order = append(order, best)
		}
		var fallback []*Zone
		for _, id := range order {
			for t := int(MAX_NR_ZONES) - 1; t >= 0; t-- {
				if z := m.Nodes[id].Zones[t]; z.Managed() {
					fallback = append(fallback, z)
				}
			}
		}
		var own []*Zone
		for t := int(MAX_NR_ZONES) - 1; t >= 0; t-- {
			if z := n.Zones[t]; z.Managed() {
				own = append(own, z)
			}
		}
		n.zonelist[0] = fallback
		n.zonelist[1] = own
		for l := 0; l < 2; l++ {
			for h := ZoneType(0); h < MAX_NR_ZONES; h++ {
				n.firstZone[l][h] = int16(firstZonesZonelist(n.zonelist[l], h, 0))
			}
		}
	}
}

// memmapInit is memmap_init(): every frame starts reserved, every pageblock
// MIGRATE_MOVABLE.
func (m *Machine) memmapInit() {
	m.pages = make([]page, m.maxPFN)
	nblocks := (int(m.maxPFN) + PageblockNrPages - 1) >> PageblockOrder
	m.blocks = make([]pageblock, nblocks)
	m.zoneOfBlock = make([]int16, nblocks)
	for i := range m.zoneOfBlock {
		m.zoneOfBlock[i] = -1
	}
	for i := range m.pages {
		m.pages[i] = page{next: NilPFN, prev: NilPFN, flags: pgReserved}
	}
	for i := range m.blocks {
		m.blocks[i].mt = MIGRATE_MOVABLE
	}
	for _, z := range m.zones {
		if z.SpannedPages == 0 {
			continue
		}
		for b := z.StartPFN >> PageblockOrder; b <= (z.EndPFN()-1)>>PageblockOrder; b++ {
			m.zoneOfBlock[b] = int16(z.ID)
		}
	}
	// Blocks in a memory section without present pages (a hole such as
	// the PCI hole) have no struct pages: they belong to no zone, which
	// is also what pagetypeinfo's pfn_to_online_page() walk sees.
	for b := range m.zoneOfBlock {
		if m.zoneOfBlock[b] >= 0 && !m.sectionPresent(PFN(b)<<PageblockOrder) {
			m.zoneOfBlock[b] = -1
		}
	}
	for _, z := range m.zones {
		z.nrBlocks = m.countZoneBlocks(z)
	}
}

// freeAllManaged is memblock_free_all() and then deferred_init_memmap():
// the managed part of every zone, less the kernel image, goes to the buddy
// allocator in the largest aligned chunks that fit, in PFN order, except
// the deferred part of each node's highest zone when its threads
// interleave (see the top of the file).
func (m *Machine) freeAllManaged() {
	for _, z := range m.zones {
		if z.ManagedPages == 0 {
			continue
		}
		chunks := m.bootFreeChunks(z)
		if m.boot.DeferredInitMultithreaded && z == z.Node.highestPopulatedZone() {
			chunks = m.deferredInitMemmap(z, chunks)
		}
		for _, c := range chunks {
			mt := m.blocks[c.pfn>>PageblockOrder].mt
			m.accountFreepages(z, int64(c.order.Pages()), mt)
			m._addToFreeList(z, c.pfn, c.order, mt, true)
		}
	}
}

// bootChunk is one __free_pages_core() call at boot.
type bootChunk struct {
	pfn   PFN
	order Order
}

// bootFreeChunks returns z's free memory at boot, in PFN order, as the
// largest aligned chunks that fit: the managed pages from the zone's start
// (the reservations sit above them), skipping the kernel image if it lies
// here. It clears the pages' reserved flag.
func (m *Machine) bootFreeChunks(z *Zone) []bootChunk {
	img := m.kernelImage
	end := z.StartPFN + PFN(z.ManagedPages)
	var ranges [][2]PFN
	if img.nr > 0 && z.SpansPFN(img.start) {
		end += PFN(img.nr)
		ranges = [][2]PFN{{z.StartPFN, img.start}, {img.start + PFN(img.nr), end}}
	} else {
		ranges = [][2]PFN{{z.StartPFN, end}}
	}
	var out []bootChunk
	for _, r := range ranges {
		for pfn := r[0]; pfn < r[1]; pfn++ {
			m.pages[pfn].flags = 0
		}
		for pfn := r[0]; pfn < r[1]; {
			order := Order(MAX_PAGE_ORDER)
			for order > 0 && (pfn&(PFN(1)<<order-1) != 0 || pfn+PFN(1)<<order > r[1]) {
				order--
			}
			out = append(out, bootChunk{pfn, order})
			pfn += PFN(1) << order
		}
	}
	return out
}

// highestPopulatedZone is the zone deferred init works on:
// pgdat->node_zones + pgdat->nr_zones - 1.
func (n *Node) highestPopulatedZone() *Zone {
	for t := int(MAX_NR_ZONES) - 1; t >= 0; t-- {
		if z := n.Zones[t]; z.Managed() {
			return z
		}
	}
	return nil
}

// nrZones is pgdat->nr_zones: the highest zone with spanned pages, plus
// one (init_currently_empty_zone(), called by free_area_init_core() for
// every zone with a span; linux-mm mm/mm_init.c @04e60ad1).
func (n *Node) nrZones() ZoneType {
	for t := MAX_NR_ZONES; t > 0; t-- {
		if z := n.Zones[t-1]; z != nil && z.SpannedPages > 0 {
			return t
		}
	}
	return 0
}

// pagesPerSection is PAGES_PER_SECTION (128 MiB sections on x86-64).
const pagesPerSection = PFN(1) << sectionShift

// pfnRange is nr pages from start.
type pfnRange struct {
	start PFN
	nr    uint64
}

// deferredInitMemmap reorders the chunks of a node's highest zone the way
// v5.7+ deferred init frees them (see the top of the file):
// memblock_free_all frees the first section in PFN order (defer_init: the
// first section-aligned PFN after PAGES_PER_SECTION pages is
// first_deferred_pfn); then, for each free range after it in turn
// (deferred_init_memmap's loop), padata_do_multithreaded splits the range
// into section-aligned chunks handed out in PFN order to min(sections,
// CPUs of the node) threads, which free their chunks one MAX_ORDER block
// (deferred_init_maxorder) at a time, interleaved by draws from the
// node's boot/deferred-init stream.
func (m *Machine) deferredInitMemmap(z *Zone, chunks []bootChunk) []bootChunk {
	threads := len(z.Node.CPUs)
	first := (z.StartPFN + pagesPerSection + pagesPerSection - 1) &^ (pagesPerSection - 1)
	out := make([]bootChunk, 0, len(chunks))
	i := 0
	for ; i < len(chunks) && chunks[i].pfn < first; i++ {
		out = append(out, chunks[i])
	}
	r := m.World.Stream("boot/deferred-init/" + itoa(z.Node.ID))
	for i < len(chunks) {
		// One free range: chunks up to the next gap (the kernel image).
		j := i + 1
		for j < len(chunks) && chunks[j].pfn == chunks[j-1].pfn+PFN(chunks[j-1].order.Pages()) {
			j++
		}
		out = append(out, padataInterleave(chunks[i:j], threads, r)...)
		i = j
	}
	return out
}

// padataInterleave is padata_do_multithreaded() over one free range of
// boot chunks (contiguous, PFN order) with the deferred_init_memmap job's
// parameters: align and min_chunk PAGES_PER_SECTION, max_threads threads.
func padataInterleave(chunks []bootChunk, maxThreads int, r *sim.Rand) []bootChunk {
	const loadBalanceFactor = 4
	start := chunks[0].pfn
	last := chunks[len(chunks)-1]
	epfn := last.pfn + PFN(last.order.Pages())
	size := uint64((epfn+pagesPerSection-1)&^(pagesPerSection-1) - start)
	nworks := max(size/uint64(pagesPerSection), 1)
	nworks = min(nworks, uint64(max(maxThreads, 1)))
	if nworks == 1 {
		return chunks
	}
	chunkSize := size / (nworks * loadBalanceFactor)
	chunkSize = max(chunkSize, uint64(pagesPerSection))
	chunkSize = (chunkSize + uint64(pagesPerSection) - 1) / uint64(pagesPerSection) * uint64(pagesPerSection)
	// jobs[k] is the index range of padata chunk k in chunks.
	var jobs [][2]int
	for i := 0; i < len(chunks); {
		end := start + PFN(uint64(len(jobs)+1)*chunkSize)
		j := i
		for j < len(chunks) && chunks[j].pfn < end {
			j++
		}
		jobs = append(jobs, [2]int{i, j})
		i = j
	}
	type worker struct{ next, end int }
	var workers []*worker
	nextJob := 0
	take := func(w *worker) bool {
		for nextJob < len(jobs) && jobs[nextJob][0] == jobs[nextJob][1] {
			nextJob++
		}
		if nextJob == len(jobs) {
			return false
		}
		w.next, w.end = jobs[nextJob][0], jobs[nextJob][1]
		nextJob++
		return true
	}
	for k := uint64(0); k < nworks; k++ {
		w := &worker{}
		if take(w) {
			workers = append(workers, w)
		}
	}
	out := make([]bootChunk, 0, len(chunks))
	for len(workers) > 0 {
		k := r.Intn(len(workers))
		w := workers[k]
		// deferred_init_maxorder: up to the next MAX_ORDER boundary.
		mo := (chunks[w.next].pfn + MAX_ORDER_NR_PAGES) &^ PFN(MAX_ORDER_NR_PAGES-1)
		for w.next < w.end && chunks[w.next].pfn < mo {
			out = append(out, chunks[w.next])
			w.next++
		}
		if w.next == w.end && !take(w) {
			workers = append(workers[:k], workers[k+1:]...)
		}
	}
	return out
}

// chooseRandomLocation is the decompressor's physical KASLR
// (choose_random_location, find_random_phys_addr, slots_fetch_random):
// the kernel image of nr pages moves from node 0's first zone above 16 MiB,
// where the layout counted it, to a 2 MiB slot drawn from boot/kaslr among
// every slot that holds it in a zone's managed part above 16 MiB. The
// managed counts of the two zones change with it.
func (m *Machine) chooseRandomLocation(nr uint64) {
	const (
		loadPhysicalAddr = PFN(16 * mib / PAGE_SIZE)                // CONFIG_PHYSICAL_START
		physicalAlign    = PFN(2 * mib / PAGE_SIZE)                 // CONFIG_PHYSICAL_ALIGN
		minAddr          = min(loadPhysicalAddr, 512*mib/PAGE_SIZE) // choose_random_location
	)
	var home *Zone
	for _, z := range m.Nodes[0].Zones {
		if z.Managed() && z.StartPFN >= minAddr {
			home = z
			break
		}
	}
	if home == nil {
		return
	}
	home.ManagedPages += nr
	type slotArea struct {
		z    *Zone
		addr PFN
		num  uint64
	}
	var areas []slotArea
	var slotMax uint64
	for _, z := range m.zones {
		if !z.Managed() {
			continue
		}
		start := max(z.StartPFN, minAddr)
		start = (start + physicalAlign - 1) &^ (physicalAlign - 1)
		end := z.StartPFN + PFN(z.ManagedPages)
		if end <= start || uint64(end-start) < nr {
			continue
		}
		num := (uint64(end-start)-nr)/uint64(physicalAlign) + 1
		areas = append(areas, slotArea{z, start, num})
		slotMax += num
	}
	slot := m.World.Stream("boot/kaslr").Uint64n(slotMax)
	for _, a := range areas {
		if slot >= a.num {
			slot -= a.num
			continue
		}
		a.z.ManagedPages -= nr
		m.kernelImage = pfnRange{start: a.addr + PFN(slot)*physicalAlign, nr: nr}
		return
	}
}

// NrCPUs returns the number of CPUs.
func (m *Machine) NrCPUs() int { return len(m.cpuNode) }

// CPUNode returns the node of a CPU (cpu_to_node).
func (m *Machine) CPUNode(cpu int) int { return m.cpuNode[cpu] }

// Zones returns every zone, node by node, lowest type first.
func (m *Machine) Zones() []*Zone { return m.zones }

// MaxPFN returns one past the highest PFN.
func (m *Machine) MaxPFN() PFN { return m.maxPFN }

// Distance returns node_distance(a, b).
func (m *Machine) Distance(a, b int) int { return m.distance[a][b] }

// Node distances (include/linux/topology.h): the ACPI SLIT's local value
// and the kernel's default remote one when firmware gives no SLIT.
const (
	LOCAL_DISTANCE  = 10
	REMOTE_DISTANCE = 20
)

// x86SocketDistance is the SLIT distance between the sockets of the two-
// socket Intel servers pagesim's x86 layout stands for: their firmware
// reports 21, which numactl -H prints as "node distances: 0: 10 21 / 1: 21
// 10" (measured remote latency is 1.61x, not 2.1x: see cost.go).
const x86SocketDistance = 21

// NodeDistanceLine is /sys/devices/system/node/nodeN/distance: the
// distances from node n to every node, space-separated.
func (m *Machine) NodeDistanceLine(n int) string {
	var b strings.Builder
	for j, d := range m.distance[n] {
		if j > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.Itoa(d))
	}
	b.WriteByte('\n')
	return b.String()
}

// NumactlDistances prints the distance table the way numactl -H ends its
// report (numactl's print_distances).
func (m *Machine) NumactlDistances() string {
	var b strings.Builder
	b.WriteString("node distances:\nnode ")
	for i := range m.distance {
		fmt.Fprintf(&b, "% 3d ", i)
	}
	b.WriteByte('\n')
	for i, row := range m.distance {
		fmt.Fprintf(&b, "% 3d: ", i)
		for _, d := range row {
			fmt.Fprintf(&b, "% 3d ", d)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// ZoneOf returns the zone holding pfn, or nil.
func (m *Machine) ZoneOf(pfn PFN) *Zone {
	if pfn >= m.maxPFN {
		return nil
	}
	id := m.zoneOfBlock[pfn>>PageblockOrder]
	if id < 0 {
		return nil
	}
	z := m.zones[id]
	if !z.SpansPFN(pfn) {
		// A pageblock shared by two zones (unaligned boundary).
		for _, o := range z.Node.Zones {
			if o.SpansPFN(pfn) {
				return o
			}
		}
		for _, o := range m.zones {
			if o.SpansPFN(pfn) {
				return o
			}
		}
		return nil
	}
	return z
}

// TotalManagedPages sums managed pages over all zones.
func (m *Machine) TotalManagedPages() uint64 {
	var s uint64
	for _, z := range m.zones {
		s += z.ManagedPages
	}
	return s
}

// NrFreePages sums NR_FREE_PAGES over all zones.
func (m *Machine) NrFreePages() uint64 {
	var s uint64
	for _, z := range m.zones {
		s += z.FreePages()
	}
	return s
}
