package mm

// cost.go is pagesim's one cost table: the simulated time each piece of
// kernel work takes. The engine charges these to the task that does the work
// (see package sim); nothing else in the engine decides how long anything
// takes.
//
// The values are physics: each comes from a hardware fact or a published
// kernel measurement, written next to it, and none was fitted to a seed's
// result table. Where the source is an estimate from first principles the
// comment says so. Scenarios never change them; a what-if can (the script
// language's `cost` command), and the report then says so.

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/pagesim/pagesim/engine/sim"
)

// CostTable lists the cost of each unit of kernel work, in simulated ns.
type CostTable struct {
	// AllocFastPath is one page allocation through the per-CPU lists:
	// the figure of 115-185 cycles for an alloc+free pair on the
	// kernel's pcp path (about 60 ns at 3 GHz), split about evenly.
	AllocFastPath sim.Time
	// FreeFastPath is the free half of that pair.
	FreeFastPath sim.Time
	// BuddyOp is one __rmqueue or __free_one_page under zone->lock: a
	// list unlink and a few struct page updates, two to three cache
	// misses that the lock holder mostly takes (estimate: 3 x 20 ns of
	// partly-prefetched DRAM access).
	BuddyOp sim.Time

	// ClearPage4K is clearing one 4 KiB page (clear_page_erms, one page
	// at a time): about 4.5 GB/s on x86 server cores, the page-at-a-time
	// figure reported with the 2024-25 multi-page clearing series for
	// folio_zero_user (estimate from those postings).
	ClearPage4K sim.Time
	// CopyPage4K is copying a 4 KiB page during migration (copy_page):
	// read and write traffic, about twice the clearing cost.
	CopyPage4K sim.Time
	// AnonFault is the rest of an anonymous page fault (exception entry
	// and exit, page-table walk, memcg charge, rmap and LRU add, PTE
	// install): about 0.5 us, the order of lmbench's page-fault latency
	// on current x86 (estimate).
	AnonFault sim.Time
	// HugeFault is the rest of a PMD THP fault (deposit a page table,
	// charge 512 pages to the memcg, install the PMD): estimate 5 us.
	HugeFault sim.Time
	// PinPage is pinning one 4 KiB page for FOLL_LONGTERM (follow the
	// page table, take the pin reference, vfio's accounting): about
	// 0.15 us per page (estimate: a page-table walk that hits the cache).
	PinPage sim.Time
	// IOMMUMap is one iommu_map() call for a contiguous range
	// (vfio_iommu_type1 maps physically contiguous runs in one call):
	// about 1 us of IOTLB and page-table updates (estimate).
	IOMMUMap sim.Time

	// LRUScanPage is isolating one folio from an LRU list and deciding
	// to keep it (isolate_lru_folios + shrink_folio_list with a
	// folio_referenced rmap walk of one mapping): half a DRAM miss per
	// touched line with the list walk's prefetch, about 40 ns (estimate
	// from ~80 ns DRAM latency).
	LRUScanPage sim.Time
	// ReclaimCleanPage is unmapping and freeing a clean page-cache folio
	// (try_to_unmap, __remove_mapping, free): about 1 us, kswapd's
	// ~1 GB/s clean-cache reclaim rate per core (estimate).
	ReclaimCleanPage sim.Time
	// SwapOutPage is the CPU part of swapping out one anon page
	// (add_to_swap, unmap, submit the write): about 2 us (estimate).
	SwapOutPage sim.Time
	// IOLatency is one 4 KiB read from an NVMe SSD: about 80 us
	// (datasheet read latency of data-centre NVMe drives).
	IOLatency sim.Time
	// DiskWritePage is the device time to write one 4 KiB page at a
	// data-centre NVMe drive's ~2 GB/s sequential write bandwidth
	// (datasheet figure): 2 us. Writeback holds the device for it.
	DiskWritePage sim.Time

	// RemotePCPDrain is draining one remote CPU's per-CPU lists in
	// drain_all_pages() (since 5.19 done by the drainer under the remote
	// pcp lock, no IPI): taking a remote lock and walking the remote
	// lists' cache lines, about 1 us (estimate: a handful of cross-core
	// cache-line transfers at ~100 ns); the buddy work it causes is
	// charged separately (BuddyOp under zone->lock).
	RemotePCPDrain sim.Time

	// FolioRefWalk is folio_referenced() on a mapped folio during reclaim:
	// the reverse-map walk (anon_vma or i_mmap lock, interval tree
	// lookup, page-table walk to the PTE or PMD) and the MMU notifiers'
	// clear_young, about 0.5 us (estimate: a shared lock's cache-line
	// transfer plus 3-4 dependent DRAM misses at ~100 ns).
	FolioRefWalk sim.Time

	// CompactScanPage is the compaction migrate or free scanner looking
	// at one PFN: a struct page read, about 10 ns (spec B 1.14).
	CompactScanPage sim.Time
	// MigratePage is migrating one 4 KiB page besides the copy (isolate,
	// unmap with TLB shootdown, allocate the target, remap): about 3 us
	// (spec B 1.14 gives 2-10 us per page including the copy).
	MigratePage sim.Time
}

// DefaultCosts returns the cost table pagesim uses.
func DefaultCosts() CostTable {
	return CostTable{
		AllocFastPath:    35,
		FreeFastPath:     30,
		BuddyOp:          60,
		ClearPage4K:      910,
		CopyPage4K:       1800,
		AnonFault:        500,
		HugeFault:        5 * sim.Microsecond,
		PinPage:          150,
		IOMMUMap:         1 * sim.Microsecond,
		LRUScanPage:      40,
		ReclaimCleanPage: 1 * sim.Microsecond,
		SwapOutPage:      2 * sim.Microsecond,
		IOLatency:        80 * sim.Microsecond,
		DiskWritePage:    2 * sim.Microsecond,
		RemotePCPDrain:   1 * sim.Microsecond,
		FolioRefWalk:     500,
		CompactScanPage:  10,
		MigratePage:      3 * sim.Microsecond,
	}
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

// Set changes one cost by field name (a what-if).
func (c *CostTable) Set(name string, ns int64) error {
	if ns < 0 {
		return fmt.Errorf("cost %s: %d ns is negative", name, ns)
	}
	v := reflect.ValueOf(c).Elem()
	for i := 0; i < v.NumField(); i++ {
		if strings.EqualFold(v.Type().Field(i).Name, name) {
			v.Field(i).SetInt(ns)
			return nil
		}
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
