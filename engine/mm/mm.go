// Package mm is pagesim's model of the Linux memory-management core: NUMA
// nodes, zones, pageblocks, the buddy free lists, the per-CPU pagesets, the
// watermarks, the allocator's fast and slow paths, compaction, reclaim,
// kswapd and kcompactd, the LRU, long-term pins, PSI accounting, vmstat and
// tracepoints.
//
// # What the kernel does and what the model keeps
//
// Physical memory is an array of 4 KiB page frames numbered by PFN. The
// kernel describes every frame with a 64-byte struct page; pagesim keeps a
// 16-byte page (see mmzone.go) that holds exactly the state the allocator,
// compaction and reclaim look at: whether the frame is a free buddy chunk
// (and of which order), on a per-CPU list, a folio head or tail on an LRU
// list, pinned, dirty or under writeback, and which memory user owns it.
//
// Frames are grouped in pageblocks of 512 pages (pageblock_order 9, 2 MiB).
// Each pageblock carries a migratetype and the compaction skip bit, as in the
// kernel's pageblock bitmap, plus counters the kernel computes by walking the
// block (free pages, LRU pages, pinned pages). The counters let the model
// answer "can this block ever be emptied?" without visiting 512 pages, which
// is what keeps futile scans of pinned memory cheap in wall time while the
// simulated task is still charged the kernel's per-page cost.
//
// Every file in this package is named after the kernel file whose behaviour
// it models, and functions carry the kernel's names in Go case
// (rmqueue -> rmqueue, __rmqueue_smallest -> _rmqueueSmallest,
// __zone_watermark_ok -> _zoneWatermarkOK). Where the model simplifies, the
// essay at the top of the file says so.
//
// # Determinism
//
// Nothing here reads the wall clock, the global math/rand, or iterates a Go
// map where order matters. Time is simulated nanoseconds carried by the
// running task (package sim); randomness comes from the machine's seeded RNG.
package mm

import (
	"github.com/pagesim/pagesim/engine/internal/enum"
	"github.com/pagesim/pagesim/engine/sim"
)

// Page geometry of x86-64 with 4 KiB pages and THP configured.
const (
	PAGE_SHIFT = 12
	PAGE_SIZE  = 1 << PAGE_SHIFT

	// PageblockOrder is pageblock_order: min(HPAGE_PMD_ORDER, MAX_PAGE_ORDER).
	PageblockOrder   = 9
	PageblockNrPages = 1 << PageblockOrder

	// MAX_PAGE_ORDER is MAX_PAGE_ORDER (CONFIG_ARCH_FORCE_MAX_ORDER default 10).
	MAX_PAGE_ORDER = 10
	// NR_PAGE_ORDERS is NR_PAGE_ORDERS: orders 0..MAX_PAGE_ORDER.
	NR_PAGE_ORDERS = MAX_PAGE_ORDER + 1

	// PAGE_ALLOC_COSTLY_ORDER is PAGE_ALLOC_COSTLY_ORDER: orders above it are
	// "costly" and get the reduced retry and compaction rules.
	PAGE_ALLOC_COSTLY_ORDER = 3

	// HPAGE_PMD_ORDER is HPAGE_PMD_ORDER, the order of a PMD-mapped THP.
	HPAGE_PMD_ORDER = 9
	HPAGE_PMD_NR    = 1 << HPAGE_PMD_ORDER

	// SWAP_CLUSTER_MAX is SWAP_CLUSTER_MAX, the reclaim and isolation batch.
	SWAP_CLUSTER_MAX = 32
)

// Machine is the simulated computer: memory, CPUs, the kernel's settings and
// counters. NewMachine (mm_init.go) boots it; after that its state changes
// only through the kernel functions of this package, called from a task's
// step, and the exported settings only before the first task runs or
// through SetSysctl and the THP knobs. Drawing reads it through the views of
// snapshot.go.
type Machine struct {
	// World is the discrete-event world whose CPUs are this machine's
	// (CPU i on node cpuNode[i]); every task of the machine runs in it.
	World *sim.World
	// Nodes is indexed by node ID (Nodes[i].ID == i); every node has a
	// Zone for every ZoneType, empty ones included.
	Nodes []*Node
	// zones lists every zone, node by node, lowest type first.
	zones []*Zone
	// pages and blocks are indexed by PFN and PFN >> PageblockOrder.
	pages  []page
	blocks []pageblock
	// zoneOfBlock maps a pageblock to its zone ID (-1 outside any zone).
	zoneOfBlock []int16
	// maxPFN is one past the highest PFN any zone spans.
	maxPFN PFN

	// cpuNode is cpu_to_node(): the node of each CPU.
	cpuNode []int
	// vmstat is each CPU's vmstat_work (vmstat.go), indexed by CPU, nil
	// until a CPU's work is first queued.
	vmstat []vmstatWork
	// distance is node_distance().
	distance [][]int
	// boot is the Config's BootConfig; kernelImage is where KASLR put the
	// kernel image (nr == 0: counted among node 0's DMA32 reservations).
	// Its pages are PageReserved inside a zone's managed span, which has
	// that many fewer managed pages.
	boot        BootConfig
	kernelImage pfnRange

	// Sysctl holds the vm.* sysctls. Written through SetSysctl, which
	// recomputes what depends on them (watermarks, lowmem reserves, pcp
	// high), as the sysctl handlers do.
	Sysctl Sysctl
	// THP holds /sys/kernel/mm/transparent_hugepage.
	THP THPSettings
	// Patches and Kernel are the seed patches' switches and the kernel
	// base's: set before the first task runs, never changed during a run.
	Patches Patches
	Kernel  KernelBase
	// MTHP holds the per-size hugepages-<size>kB/stats counters by order.
	MTHP [HPAGE_PMD_ORDER + 1]MTHPStats
	// Stat is /proc/vmstat plus the zone and node counters; Frag the
	// fragmentation counters. Only the engine adds to them.
	Stat VMStat
	Frag FragStats
	// Trace is the tracepoint ring; Cost the cost of each piece of work
	// (cost.go), fixed once the machine runs.
	Trace *Trace
	Cost  CostTable

	// memcgs is indexed by cgroup ID; memcgs[0] is the root.
	memcgs []*Memcg
	// slotPool holds free file extent slot arrays (cap fileExtentPages).
	slotPool [][]PFN
	// owners is indexed by owner ID; freeOwners are retired owners (no
	// page left) whose IDs NewOwner reuses.
	owners     []*Owner
	freeOwners []*Owner
	// Swap is the swap space (UsedPages <= TotalPages; written through
	// SetSwap); PSI and PSIIO are the system psi_group's memory and io
	// states.
	Swap  SwapDevice
	PSI   PSI
	PSIIO PSI

	// Slow, Reclaim, Compact, Pins and Filemap count work the kernel has no
	// vmstat counter for.
	Slow    SlowpathStats
	Reclaim ReclaimStats
	Compact CompactStats
	Pins    PinStats
	Filemap FilemapStats

	// slowTrace keeps the slow path's decision traces (LastStall);
	// pcpuDrainMutex is pcpu_drain_mutex, which drain_all_pages holds.
	slowTrace      slowTraces
	pcpuDrainMutex sim.Lock
	// Blk is the block device that swap, writeback and reads use
	// (blk_mq.go); IOWait sums the time tasks slept in io_schedule().
	Blk    BlockDevice
	IOWait sim.Time
	// capc is current->capture_control of the task running direct
	// compaction (capcTask), if any.
	capc     *captureControl
	capcTask *sim.Task
	// capcBuf is the captureControl direct compaction uses when none is
	// in use (it lived on the kernel's stack; here it would be an
	// allocation per attempt). lruBatch is isolateLRUFolios' batch
	// between passes and shrinkCtl shrink_slab's ShrinkControl between
	// calls (nil while one is in use), for the same reason.
	capcBuf   captureControl
	lruBatch  []PFN
	shrinkCtl *ShrinkControl
	// tasks holds each world task's task_struct part by task ID (nil
	// until the memory code first touches the task).
	tasks []*taskStruct

	// minFreeKbytes is min_free_kbytes; userMinFreeKbytes is
	// user_min_free_kbytes (-1 until the sysctl is written).
	minFreeKbytes     int
	userMinFreeKbytes int
	// totalreservePages is totalreserve_pages, the sum of the nodes'
	// (calculateTotalreservePages keeps both).
	totalreservePages uint64
	// rec is the recorder's part for this machine (trace_record.go), nil
	// when nothing records it; it only reads the machine.
	rec *recMachine
	// noFastForward makes reclaim scan pinned-only lists batch by batch
	// instead of in closed form (tests compare the two).
	noFastForward bool
	// shrinkers are the registered shrinkers (shrinker_list), in
	// registration order; a shrinker is never removed. slabReclaimed
	// counts every slab page FreeSlab freed (what
	// current->reclaim_state->reclaimed collects while a shrinker runs);
	// it only grows.
	shrinkers     []*Shrinker
	slabReclaimed uint64
}

// PFN is a page frame number: the index of a 4 KiB frame in the machine's
// physical address space.
type PFN uint32

// NilPFN marks the end of an intrusive list and "no page".
const NilPFN PFN = ^PFN(0)

// Order is a buddy order: a chunk of order n holds 2^n pages.
type Order uint8

// Pages returns the number of 4 KiB pages in a chunk of this order.
func (o Order) Pages() uint64 { return 1 << o }

// MigrateType is enum migratetype (include/linux/mmzone.h).
type MigrateType uint8

const (
	MIGRATE_UNMOVABLE MigrateType = iota
	MIGRATE_MOVABLE
	MIGRATE_RECLAIMABLE
	MIGRATE_HIGHATOMIC // == MIGRATE_PCPTYPES
	MIGRATE_CMA
	MIGRATE_ISOLATE
	MIGRATE_TYPES // MIGRATE_TYPES
)

// MIGRATE_PCPTYPES is MIGRATE_PCPTYPES: the types that have per-CPU lists.
const MIGRATE_PCPTYPES = 3

var migratetypeNames = [MIGRATE_TYPES]string{
	"Unmovable", "Movable", "Reclaimable", "HighAtomic", "CMA", "Isolate",
}

// String returns the kernel's migratetype_names[] spelling.
func (mt MigrateType) String() string { return enum.Name(migratetypeNames[:], mt) }

// ParseMigrateType maps a /proc/pagetypeinfo name to a MigrateType.
func ParseMigrateType(s string) (MigrateType, bool) {
	return enum.Parse[MigrateType](migratetypeNames[:], s)
}

// ZoneType is enum zone_type for x86-64 with CONFIG_ZONE_DMA,
// CONFIG_ZONE_DMA32 and CONFIG_ZONE_DEVICE (no HIGHMEM on 64-bit).
type ZoneType uint8

const (
	ZONE_DMA ZoneType = iota
	ZONE_DMA32
	ZONE_NORMAL
	ZONE_MOVABLE
	ZONE_DEVICE  // always empty in pagesim; present so /proc layouts match
	MAX_NR_ZONES // MAX_NR_ZONES
)

var zoneNames = [MAX_NR_ZONES]string{"DMA", "DMA32", "Normal", "Movable", "Device"}

// String returns the kernel's zone_names[] spelling.
func (z ZoneType) String() string { return enum.Name(zoneNames[:], z) }

// ParseZoneType maps a zone name from /proc to a ZoneType.
func ParseZoneType(s string) (ZoneType, bool) { return enum.Parse[ZoneType](zoneNames[:], s) }

// Watermark indexes zone._watermark[] (enum zone_watermarks).
type Watermark uint8

const (
	WMARK_MIN Watermark = iota
	WMARK_LOW
	WMARK_HIGH
	WMARK_PROMO
	NR_WMARK
)
