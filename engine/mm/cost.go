package mm

// cost.go is pagesim's one cost table: the simulated time each piece of
// kernel work takes on the CPU. The engine charges these to the task that
// does the work (see package sim); the block device's times are the
// device's own (blk_mq.go), and nothing else in the engine decides how long
// anything takes.
//
// The values are physics: each cites a measurement (a posting, paper or
// benchmark, with its machine) or says "estimate" and what it was made
// from, and none was fitted to a seed's result table. The reference
// machine is a two-socket Xeon of 2017-2018 (Skylake-SP or Broadwell-EP),
// the hosts of seed 003's time. Scenarios never change them; a what-if can
// (the script language's `cost` command), and the report then says so.
//
// Sources named below:
//   - [Jordan18] Daniel Jordan, "[RFC PATCH v4 09/13] vfio: relieve
//     mmap_sem reader cacheline bouncing by holding it longer" (linux-mm,
//     2018-11-05): qemu invocation to guest boot with a vfio device, a
//     320G THP-backed guest, one thread, 65.0 s on a 2-node Xeon Platinum
//     8160 (Skylake-SP, 2.1 GHz), kernel mmotm of 2018-10-30.
//   - [Jordan21] Daniel Jordan, "[PATCH 3/3] vfio/type1: batch page
//     pinning" (kvm, 2021-02-03; commit 4d83de6da265): qemu pinning a
//     guest on a two-node Broadwell with 128G per node, 120G in 32.45 s
//     one page at a time, 29.69 s in batches of 512; perf puts 78.63% of
//     the time in clear_page_erms.
//   - [Arora] Ankur Arora, "x86/clear_huge_page: multi-page clearing"
//     (v2, 2023-08-30) and "mm/folio_zero_user: add multi-page clearing"
//     (v3-v6, 2025): demand-faulting 64GB with 2MB pages page-at-a-time,
//     8.76 GB/s on an Icelake Platinum 8358 (no turbo), 11.8-14.6 GB/s on
//     AMD Milan; figures for CPUs newer than the reference machine.
//   - [CSIT] FD.io CSIT report, "Calibration Data - Skylake": Intel MLC
//     v3.5 on a two-socket Xeon Platinum 8180: idle latency 81.4 ns local,
//     131.1 ns remote; cache-to-cache HITM 53.7 ns in a socket, 113.9-
//     177.9 ns across sockets.
//   - [Wang17] Kemi Wang, "mm: Add numa_stat sysctl" (2017): Jesper
//     Brouer's page_bench01, one order-0 alloc+free in 185 cycles on a
//     two-socket Broadwell; [Tosatti23] Marcelo Tosatti, "mm/vmstat: switch
//     counter modification to cmpxchg" (2023): 115-159 cycles on a Core
//     i7-11850H.

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/pagesim/pagesim/engine/sim"
)

// CostTable lists the cost of each unit of kernel work, in simulated ns.
type CostTable struct {
	// AllocFastPath is one page allocation through the per-CPU lists and
	// FreeFastPath the free: 65 ns for the pair, 150 cycles at 2.3 GHz,
	// within the 115-185 cycles of page_bench01 [Wang17, Tosatti23],
	// split about evenly.
	AllocFastPath sim.Time
	FreeFastPath  sim.Time
	// BuddyOp is one __rmqueue or __free_one_page under zone->lock: a
	// list unlink and a few struct page updates. Estimate: three cache
	// misses of 81 ns local latency [CSIT], partly prefetched, 60 ns.
	BuddyOp sim.Time

	// ClearPage4K is clearing one 4 KiB page with clear_page_erms, one
	// page at a time as clear_huge_page and folio_zero_user did until
	// 2025. Estimate from [Jordan18] and [Jordan21]: 65.0 s for 320 GiB
	// is 775 ns per 4 KiB page for the whole fault-clear-pin-map path on
	// Skylake-SP, of which clearing takes 78.63% as [Jordan21] profiled
	// the same path: 610 ns, 6.7 GB/s. (The Broadwell of [Jordan21]
	// clears at 25.5 s per 120 GiB, 811 ns or 5.1 GB/s; newer CPUs clear
	// at 8.8-14.6 GB/s page at a time [Arora].)
	ClearPage4K sim.Time
	// CopyPage4K is copying one 4 KiB page (copy_page, copy_from_user):
	// estimate, twice ClearPage4K's memory traffic (a read and a write
	// stream) at the same single-core bandwidth.
	CopyPage4K sim.Time
	// AnonFault is the rest of an order-0 anonymous fault besides the
	// clearing (exception entry and exit, page-table walk, memcg charge,
	// rmap and LRU add, PTE install). Estimate: about 1,000 cycles of
	// kernel path plus two local misses [CSIT], 0.5 us.
	AnonFault sim.Time
	// HugeFault is the rest of a PMD THP fault (deposit a page table,
	// charge 512 pages, install the PMD). Estimate: [Jordan18]'s path
	// leaves 165 ns per 4 KiB page (85 us per 2 MiB) beside the clearing
	// for fault, pin and IOMMU map together; PinPage and IOMMUMap take
	// 78 us of it, leaving about 5 us for the fault.
	HugeFault sim.Time
	// PinPage is pinning one 4 KiB page for FOLL_LONGTERM as the 2018
	// vfio_pin_pages_remote did, one page per get_user_pages call with
	// mmap_sem taken for each (follow_page_mask, the pin reference,
	// vfio's locked_vm accounting). Estimate: batching the pins 512 at a
	// time saved 8.2-8.6% of [Jordan21]'s run, 88 ns per page, and
	// [Jordan18]'s mmap_sem patch removed an atomic per page; 150 ns.
	PinPage sim.Time
	// IOMMUMap is one iommu_map() call for a physically contiguous run
	// (vfio_iommu_map; intel-iommu writes one 2 MiB superpage entry for an
	// aligned 2 MiB run, one PTE per page otherwise). Estimate: a few
	// IOMMU page-table cache misses and the IOTLB flush of the range,
	// 1 us; in [Jordan21]'s profile no IOMMU function reaches the top
	// ten, which bounds it to well under 1% of 512 pages' time.
	IOMMUMap sim.Time

	// LocalMemLatency and RemoteMemLatency are the idle latency of a
	// cache-line miss to the local node and to a node at SLIT distance 21
	// (the two sockets of an Intel two-socket server): 81 and 131 ns
	// [CSIT]. Work on memory of another node costs more by their ratio
	// (1.61): a single core's clearing and copying is bound by the misses
	// it can keep in flight, so its bandwidth falls as the latency rises.
	// Other distances interpolate linearly (remoteCost).
	LocalMemLatency  sim.Time
	RemoteMemLatency sim.Time

	// LRUScanPage is isolating one folio from an LRU list and deciding
	// to keep it (isolate_lru_folios + shrink_folio_list). Estimate: half
	// a local miss [CSIT] per folio with the list walk's prefetch, 40 ns.
	LRUScanPage sim.Time
	// ReclaimCleanPage is unmapping and freeing a clean folio page
	// (try_to_unmap, __remove_mapping, free). Estimate: kswapd reclaims
	// clean page cache at about 1 GB/s per core, 1 us per page.
	ReclaimCleanPage sim.Time
	// SwapOutPage is the CPU part of swapping out one anon page
	// (add_to_swap, try_to_unmap's rmap walk and TLB flush, building the
	// bio). Estimate: four times FolioRefWalk's walk, 2 us; the write
	// itself is the block device's (blk_mq.go).
	SwapOutPage sim.Time
	// WritebackPage is the CPU part of writing back one dirty page-cache
	// page (folio_clear_dirty_for_io, __folio_start_writeback with its
	// xarray tag updates, adding it to a bio). Estimate: three local
	// misses [CSIT], 250 ns; the write itself is the block device's.
	WritebackPage sim.Time

	// RemotePCPDrain is draining one remote CPU's per-CPU lists in
	// drain_all_pages() (since 5.19 done by the drainer under the remote
	// pcp lock, no IPI): taking a remote lock and walking the remote
	// lists' cache lines. Estimate: a handful of cache-line transfers at
	// 54-178 ns [CSIT], 1 us; the buddy work it causes is charged
	// separately (BuddyOp under zone->lock).
	RemotePCPDrain sim.Time

	// FolioRefWalk is folio_referenced() on a mapped folio during reclaim:
	// the reverse-map walk (anon_vma or i_mmap lock, interval tree
	// lookup, page-table walk to the PTE or PMD) and the MMU notifiers'
	// clear_young. Estimate: a shared lock's cache-line transfer (54 ns)
	// plus 3-4 dependent misses at 81-131 ns [CSIT], 0.5 us.
	FolioRefWalk sim.Time

	// CompactScanPage is the compaction migrate or free scanner looking
	// at one PFN: reading its 64-byte struct page in memmap order.
	// Estimate: 64 bytes at ClearPage4K's single-core bandwidth, 10 ns.
	CompactScanPage sim.Time
	// PageblockFlags is a compaction walk passing one pageblock on its
	// flags: isolate_migratepages' and isolate_freepages' loops over
	// blocks marked skipped or of the wrong migratetype, and
	// __reset_isolation_suitable's walk (pageblock_pfn_to_page on a
	// contiguous zone, get_pfnblock_flags_mask's section lookup and
	// bitmap word, the loop's bounds and cond_resched() test).
	// Estimate: about 15 instructions on cached data (one bitmap word
	// holds the flags of 16 pageblocks and the walk is sequential), 5 ns
	// at 3 GHz. It is what a direct compaction whose cached positions
	// were reset costs besides its scans: a walk of every pageblock
	// marked skipped from the zone start to the free scanner.
	PageblockFlags sim.Time
	// FreeListEntry is compaction's fast searches (fast_isolate_freepages,
	// fast_find_migrateblock) visiting one entry of a free list under
	// zone->lock. Estimate: one local miss [CSIT] per entry, 81 ns: the
	// next entry's address is in the struct page just read, so unlike
	// LRUScanPage's walk no prefetch hides it.
	FreeListEntry sim.Time
	// ZoneCheck is one zone of a zonelist walk outside the fast path
	// (get_page_from_freelist's zone_watermark_fast in the slow path,
	// should_reclaim_retry's and shrink_zones' per-zone checks): the
	// zone's free count, watermark and lowmem_reserve, cache lines other
	// CPUs keep writing under allocation churn, about 20 ns (estimate:
	// one cross-core cache-line transfer on a current server part).
	ZoneCheck sim.Time
	// PerCPUStatRead is reading one CPU's per-CPU counter line from
	// another CPU (zone_page_state_snapshot's sum over vm_stat_diff,
	// drain_all_pages' has_pcps check): about 10 ns (estimate: a shared,
	// mostly clean line from L2/L3).
	PerCPUStatRead sim.Time
	// CondResched is a cond_resched() call that does not schedule (the
	// preempt count and TIF_NEED_RESCHED test): about 5 ns (estimate:
	// a few instructions on hot per-CPU data). A context switch when it
	// does schedule is not charged. Set refuses less than 1 ns: it is
	// what moves the clock of an allocation looping in the slow path.
	CondResched sim.Time
	// MigratePage is migrating one 4 KiB page besides the copy (isolate,
	// unmap with a TLB shootdown IPI, allocate the target, remap).
	// Estimate: an IPI round trip to the CPUs that ran the task plus two
	// rmap walks (FolioRefWalk), 3 us; Huang Ying's "migrate_pages():
	// batch TLB flushing" (2023) cut the IPIs by 99.1% and raised the
	// pages migrated per second 3.9x on a two-socket Intel server, so
	// the unbatched flush dominates, as this estimate has it.
	MigratePage sim.Time

	// File-system operations of seed 002's build-like workers, the CPU
	// part only (the I/O is the block device's). All estimates, from the
	// work each call does on a warm cache:
	//   - BtrfsCreate is open(O_CREAT) on btrfs (btrfs_create): joining a
	//     transaction and four btree insertions (inode item, inode ref,
	//     dir item, dir index), each a locked search of a few levels at
	//     about 5 us, plus the VFS inode and dentry setup: 30 us.
	//   - BtrfsUnlink is unlink(2) on btrfs: four btree deletions, the
	//     orphan item and inode eviction: 25 us.
	//     (A cross-check, not the source: the linux-btrfs posting of the
	//     delayed directory index patch, 2010, mail-archive.com
	//     linux-btrfs msg07164, timed 50,000 creates and deletions of
	//     empty files at 21-24 us and 28-33 us each; its machine is not
	//     given.)
	//   - BtrfsIget is reading an inode that is not cached (btrfs_iget: a
	//     btree search for the inode item): 5 us, besides any metadata
	//     read.
	//   - TmpfsCreate and TmpfsUnlink are the same calls on tmpfs
	//     (shmem_mknod, simple_unlink): no btree, 3 us and 2 us.
	//   - VFSLookup is a path walk over cached dentries with the open and
	//     close around a read: three syscalls, 1 us.
	//   - ShrinkObject is the inode or dentry shrinker freeing one object
	//     (the list_lru walk and lock, __dentry_kill or evict, the RCU
	//     free to the slab): a few cache misses [CSIT], 0.5 us.
	BtrfsCreate, BtrfsUnlink, BtrfsIget sim.Time
	TmpfsCreate, TmpfsUnlink            sim.Time
	VFSLookup, ShrinkObject             sim.Time
}

// DefaultCosts returns the cost table pagesim uses.
func DefaultCosts() CostTable {
	return CostTable{
		AllocFastPath:    35,
		FreeFastPath:     30,
		BuddyOp:          60,
		ClearPage4K:      610,
		CopyPage4K:       1220,
		AnonFault:        500,
		HugeFault:        5 * sim.Microsecond,
		PinPage:          150,
		IOMMUMap:         1 * sim.Microsecond,
		LocalMemLatency:  81,
		RemoteMemLatency: 131,
		LRUScanPage:      40,
		ReclaimCleanPage: 1 * sim.Microsecond,
		SwapOutPage:      2 * sim.Microsecond,
		WritebackPage:    250,
		RemotePCPDrain:   1 * sim.Microsecond,
		FolioRefWalk:     500,
		CompactScanPage:  10,
		FreeListEntry:    81,
		PageblockFlags:   5,
		MigratePage:      3 * sim.Microsecond,
		ZoneCheck:        20,
		PerCPUStatRead:   10,
		CondResched:      5,
		BtrfsCreate:      30 * sim.Microsecond,
		BtrfsUnlink:      25 * sim.Microsecond,
		BtrfsIget:        5 * sim.Microsecond,
		TmpfsCreate:      3 * sim.Microsecond,
		TmpfsUnlink:      2 * sim.Microsecond,
		VFSLookup:        1 * sim.Microsecond,
		ShrinkObject:     500,
	}
}

// remoteCost scales c, the cost of memory work done locally, for memory on
// node nid done by a CPU of node cpuNode: by the ratio of the miss latency
// at their SLIT distance to the local one, the latency rising linearly
// from LocalMemLatency at LOCAL_DISTANCE (10) to RemoteMemLatency at 21.
func (m *Machine) remoteCost(cpuNode, nid int, c sim.Time) sim.Time {
	if cpuNode == nid || m.Cost.LocalMemLatency <= 0 {
		return c
	}
	d := sim.Time(m.distance[cpuNode][nid] - LOCAL_DISTANCE)
	lat := m.Cost.LocalMemLatency + (m.Cost.RemoteMemLatency-m.Cost.LocalMemLatency)*d/(x86SocketDistance-LOCAL_DISTANCE)
	return c * lat / m.Cost.LocalMemLatency
}

// Names lists the cost fields by name.
func (c CostTable) Names() []string {
	t := reflect.TypeOf(c)
	var out []string
	for i := 0; i < t.NumField(); i++ {
		out = append(out, t.Field(i).Name)
	}
	return out
}

// MaxCost is the most a what-if may make one unit of kernel work cost:
// the soft-lockup threshold, 2 x watchdog_thresh (10 s by default), after
// which the kernel reports a CPU stuck in kernel code without scheduling
// ("BUG: soft lockup", kernel/watchdog.c, get_softlockup_thresh()). A
// charge is added to a task's clock (sim.Task.Charge), so without a bound
// a cost of years would wrap simulated time and give a wrong answer, not
// an error.
const MaxCost = 20 * sim.Second

// Set changes one cost by field name (a what-if).
func (c *CostTable) Set(name string, ns int64) error {
	if ns < 0 {
		return fmt.Errorf("cost %s: %d ns is negative", name, ns)
	}
	if ns > int64(MaxCost) {
		return fmt.Errorf("cost %s: %d ns is longer than 20 s, the most one unit of kernel work may cost (the soft-lockup threshold, 2 x kernel.watchdog_thresh)", name, ns)
	}
	v := reflect.ValueOf(c).Elem()
	for i := 0; i < v.NumField(); i++ {
		f := v.Type().Field(i).Name
		if !strings.EqualFold(f, name) {
			continue
		}
		// Every pass of the slow path's retry loop stops at a
		// cond_resched() (page_alloc_slowpath.go), and its cost is the
		// one charge such a pass is sure to make: at 0 a __GFP_NOFAIL
		// request with nothing to reclaim would loop at one instant.
		if f == "CondResched" && ns < 1 {
			return fmt.Errorf("cost %s: %d ns would let an allocation loop in the slow path without its clock moving; at least 1 ns", f, ns)
		}
		v.Field(i).SetInt(ns)
		return nil
	}
	return fmt.Errorf("unknown cost %q", name)
}

// Get returns one cost by field name.
func (c CostTable) Get(name string) (sim.Time, bool) {
	v := reflect.ValueOf(c)
	for i := 0; i < v.NumField(); i++ {
		if strings.EqualFold(v.Type().Field(i).Name, name) {
			return sim.Time(v.Field(i).Int()), true
		}
	}
	return 0, false
}
