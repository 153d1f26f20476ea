package mm

// vmstat.go models the counters of include/linux/mmzone.h (enum
// zone_stat_item, enum node_stat_item, enum numa_stat_item),
// include/linux/vmstat.h (enum vm_stat_item), include/linux/vm_event_item.h
// (enum vm_event_item) and their names in mm/vmstat.c vmstat_text[], for an
// x86-64 distribution configuration (NUMA, NUMA_BALANCING, MIGRATION,
// COMPACTION, HUGETLB_PAGE, CMA, TRANSPARENT_HUGEPAGE with
// HAVE_ARCH_TRANSPARENT_HUGEPAGE_PUD, SWAP, ZSWAP, ZSMALLOC, KSM, BALLOON,
// BALLOON_MIGRATION, IOMMU_SUPPORT, UNACCEPTED_MEMORY, ZONE_DMA, ZONE_DMA32,
// ZONE_DEVICE; no HIGHMEM, SHADOW_CALL_STACK, DEBUG_TLBFLUSH,
// PER_VMA_LOCK_STATS or DEBUG_STACK_USAGE).
//
// Matched against linux-mm/linux-mm mm/vmstat.c @251c25cde91e: its
// vmstat_text[] (designated initialisers in enum order) and its /proc
// printers. Later snapshots of that tree (mm/vmstat.c @4425f4916b86,
// include/linux/mmzone.h @c98520ab2541) move pgsteal_*, pgscan_* and
// pgrefill from the events to the node items and add pgrotate_*, nr_gpu_*
// and nrswpin/nrswpout; pagesim keeps the @251c25cd layout, in which the
// reclaim counters are vm events, as the reclaim code counts them.
//
// Every enum here lists the kernel's items in the kernel's order, including
// the ones pagesim never changes, so /proc/vmstat and /proc/zoneinfo print
// the same lines in the same order as the real files. The kernel keeps
// per-CPU deltas and folds them; pagesim counts exactly, so
// zone_page_state_snapshot() and zone_page_state() agree.
//
// The vmstat worker (mm/vmstat.c vmstat_update, refresh_cpu_vm_stats,
// vmstat_shepherd, linux-mm @251c25cde91e) is modelled for the one thing
// it does that pagesim's state shows: refresh_cpu_vm_stats(true) calls
// decay_pcp_high() on its CPU's pcp of every populated zone, which trims
// a pcp->high that refills grew and frees the pages above it. The kernel
// runs it as a deferrable delayed work per CPU on mm_percpu_wq, requeued
// with round_jiffies_relative(sysctl_stat_interval) (vm.stat_interval,
// HZ: one second) while refresh_cpu_vm_stats() reports work done, and
// queued again by vmstat_shepherd (every second) for a CPU whose
// need_update() finds counter deltas. pagesim keeps no per-CPU deltas, so
// the work runs exactly while the decay has something to do: a refill or
// a free that leaves pcp->high above high_min, or pages above pcp->high,
// queues it (queueVmstatWork) for the CPU's next whole second of jiffies
// (round_jiffies() skews CPU n by 3n jiffies), on the timer wheel as a
// timer armed a second before, as the work of a busy CPU, requeued every
// second, stands; the work runs on the CPU's kworker task ("kworker/N:1",
// made when first queued) and requeues itself the kernel's way while
// decay_pcp_high() reports work left, and parks otherwise (the kernel's
// work would go on running for the counters, but its pcp part is then a
// no-op). Its cost is free_pcppages_bulk's under zone->lock, the cost a
// drain charges. Simplified: the timer is not deferrable (a CPU with
// pcp pages above high_min has been busy), the shepherd's own phase for a
// CPU whose work had stopped is not modelled, and drain_zone_pages() of a
// remote node's pcp after three idle refreshes (pcp->expire) is not.

import (
	"github.com/pagesim/pagesim/engine/internal/enum"
	"github.com/pagesim/pagesim/engine/sim"
)

// ZoneStatItem is enum zone_stat_item.
type ZoneStatItem int

const (
	NR_FREE_PAGES ZoneStatItem = iota
	NR_FREE_PAGES_BLOCKS
	NR_ZONE_INACTIVE_ANON
	NR_ZONE_ACTIVE_ANON
	NR_ZONE_INACTIVE_FILE
	NR_ZONE_ACTIVE_FILE
	NR_ZONE_UNEVICTABLE
	NR_ZONE_WRITE_PENDING
	NR_MLOCK
	NR_ZSPAGES
	NR_FREE_CMA_PAGES
	NR_UNACCEPTED
	NR_VM_ZONE_STAT_ITEMS
)

// ZoneStatNames is the zone part of vmstat_text[].
var ZoneStatNames = [NR_VM_ZONE_STAT_ITEMS]string{
	"nr_free_pages",
	"nr_free_pages_blocks",
	"nr_zone_inactive_anon",
	"nr_zone_active_anon",
	"nr_zone_inactive_file",
	"nr_zone_active_file",
	"nr_zone_unevictable",
	"nr_zone_write_pending",
	"nr_mlock",
	"nr_zspages",
	"nr_free_cma",
	"nr_unaccepted",
}

// NumaEventItem is enum numa_stat_item.
type NumaEventItem int

const (
	NUMA_HIT NumaEventItem = iota
	NUMA_MISS
	NUMA_FOREIGN
	NUMA_INTERLEAVE_HIT
	NUMA_LOCAL
	NUMA_OTHER
	NR_VM_NUMA_EVENT_ITEMS
)

// NumaEventNames is the NUMA part of vmstat_text[].
var NumaEventNames = [NR_VM_NUMA_EVENT_ITEMS]string{
	"numa_hit", "numa_miss", "numa_foreign", "numa_interleave", "numa_local", "numa_other",
}

// NodeStatItem is enum node_stat_item.
type NodeStatItem int

const (
	NR_INACTIVE_ANON NodeStatItem = iota
	NR_ACTIVE_ANON
	NR_INACTIVE_FILE
	NR_ACTIVE_FILE
	NR_UNEVICTABLE
	NR_SLAB_RECLAIMABLE_B
	NR_SLAB_UNRECLAIMABLE_B
	NR_ISOLATED_ANON
	NR_ISOLATED_FILE
	WORKINGSET_NODES
	WORKINGSET_REFAULT_ANON
	WORKINGSET_REFAULT_FILE
	WORKINGSET_ACTIVATE_ANON
	WORKINGSET_ACTIVATE_FILE
	WORKINGSET_RESTORE_ANON
	WORKINGSET_RESTORE_FILE
	WORKINGSET_NODERECLAIM
	NR_ANON_MAPPED
	NR_FILE_MAPPED
	NR_FILE_PAGES
	NR_FILE_DIRTY
	NR_WRITEBACK
	NR_SHMEM
	NR_SHMEM_THPS
	NR_SHMEM_PMDMAPPED
	NR_FILE_THPS
	NR_FILE_PMDMAPPED
	NR_ANON_THPS
	NR_VMSCAN_WRITE
	NR_VMSCAN_IMMEDIATE
	NR_DIRTIED
	NR_WRITTEN
	NR_THROTTLED_WRITTEN
	NR_KERNEL_MISC_RECLAIMABLE
	NR_FOLL_PIN_ACQUIRED
	NR_FOLL_PIN_RELEASED
	NR_VMALLOC
	NR_KERNEL_STACK_KB
	NR_PAGETABLE
	NR_SECONDARY_PAGETABLE
	NR_IOMMU_PAGES
	NR_SWAPCACHE
	PGPROMOTE_SUCCESS
	PGPROMOTE_CANDIDATE
	PGPROMOTE_CANDIDATE_NRL
	PGDEMOTE_KSWAPD
	PGDEMOTE_DIRECT
	PGDEMOTE_KHUGEPAGED
	PGDEMOTE_PROACTIVE
	NR_HUGETLB
	NR_BALLOON_PAGES
	NR_KERNEL_FILE_PAGES
	NR_VM_NODE_STAT_ITEMS
)

// NodeStatNames is the node part of vmstat_text[].
var NodeStatNames = [NR_VM_NODE_STAT_ITEMS]string{
	"nr_inactive_anon",
	"nr_active_anon",
	"nr_inactive_file",
	"nr_active_file",
	"nr_unevictable",
	"nr_slab_reclaimable",
	"nr_slab_unreclaimable",
	"nr_isolated_anon",
	"nr_isolated_file",
	"workingset_nodes",
	"workingset_refault_anon",
	"workingset_refault_file",
	"workingset_activate_anon",
	"workingset_activate_file",
	"workingset_restore_anon",
	"workingset_restore_file",
	"workingset_nodereclaim",
	"nr_anon_pages",
	"nr_mapped",
	"nr_file_pages",
	"nr_dirty",
	"nr_writeback",
	"nr_shmem",
	"nr_shmem_hugepages",
	"nr_shmem_pmdmapped",
	"nr_file_hugepages",
	"nr_file_pmdmapped",
	"nr_anon_transparent_hugepages",
	"nr_vmscan_write",
	"nr_vmscan_immediate_reclaim",
	"nr_dirtied",
	"nr_written",
	"nr_throttled_written",
	"nr_kernel_misc_reclaimable",
	"nr_foll_pin_acquired",
	"nr_foll_pin_released",
	"nr_vmalloc",
	"nr_kernel_stack",
	"nr_page_table_pages",
	"nr_sec_page_table_pages",
	"nr_iommu_pages",
	"nr_swapcached",
	"pgpromote_success",
	"pgpromote_candidate",
	"pgpromote_candidate_nrl",
	"pgdemote_kswapd",
	"pgdemote_direct",
	"pgdemote_khugepaged",
	"pgdemote_proactive",
	"nr_hugetlb",
	"nr_balloon_pages",
	"nr_kernel_file_pages",
}

// VMStatItem is enum vm_stat_item (include/linux/vmstat.h): system-wide
// values computed when /proc/vmstat is read (global_dirty_limits, the memmap
// page counts), printed between the node items and the events.
type VMStatItem int

const (
	NR_DIRTY_THRESHOLD VMStatItem = iota
	NR_DIRTY_BG_THRESHOLD
	NR_MEMMAP_PAGES
	NR_MEMMAP_BOOT_PAGES
	NR_VM_STAT_ITEMS
)

// VMStatNames is the vm_stat_item part of vmstat_text[].
var VMStatNames = [NR_VM_STAT_ITEMS]string{
	"nr_dirty_threshold",
	"nr_dirty_background_threshold",
	"nr_memmap_pages",
	"nr_memmap_boot_pages",
}

// NodeStatInTHP reports items kept in pages but printed in THPs
// (vmstat_item_print_in_thp).
func NodeStatInTHP(i NodeStatItem) bool {
	switch i {
	case NR_ANON_THPS, NR_FILE_THPS, NR_SHMEM_THPS, NR_SHMEM_PMDMAPPED, NR_FILE_PMDMAPPED:
		return true
	}
	return false
}

// NodeStatInBytes reports items kept in bytes and printed in pages
// (vmstat_item_in_bytes: the slab items).
func NodeStatInBytes(i NodeStatItem) bool {
	return i == NR_SLAB_RECLAIMABLE_B || i == NR_SLAB_UNRECLAIMABLE_B
}

// VMEventItem is enum vm_event_item.
type VMEventItem int

// FOR_ALL_ZONES expands to DMA, DMA32, NORMAL, MOVABLE, DEVICE on x86-64.
// PGPGIN and PGPGOUT count 512-byte sectors, as the kernel's do; /proc/vmstat
// prints them halved (kilobytes).
const (
	PGPGIN VMEventItem = iota
	PGPGOUT
	PSWPIN
	PSWPOUT
	PGALLOC_DMA
	PGALLOC_DMA32
	PGALLOC_NORMAL
	PGALLOC_MOVABLE
	PGALLOC_DEVICE
	ALLOCSTALL_DMA
	ALLOCSTALL_DMA32
	ALLOCSTALL_NORMAL
	ALLOCSTALL_MOVABLE
	ALLOCSTALL_DEVICE
	PGSCAN_SKIP_DMA
	PGSCAN_SKIP_DMA32
	PGSCAN_SKIP_NORMAL
	PGSCAN_SKIP_MOVABLE
	PGSCAN_SKIP_DEVICE
	PGFREE
	PGACTIVATE
	PGDEACTIVATE
	PGLAZYFREE
	PGFAULT
	PGMAJFAULT
	PGLAZYFREED
	PGREFILL
	PGREUSE
	PGSTEAL_KSWAPD
	PGSTEAL_DIRECT
	PGSTEAL_KHUGEPAGED
	PGSTEAL_PROACTIVE
	PGSCAN_KSWAPD
	PGSCAN_DIRECT
	PGSCAN_KHUGEPAGED
	PGSCAN_PROACTIVE
	PGSCAN_DIRECT_THROTTLE
	PGSCAN_ANON
	PGSCAN_FILE
	PGSTEAL_ANON
	PGSTEAL_FILE
	PGSCAN_ZONE_RECLAIM_SUCCESS
	PGSCAN_ZONE_RECLAIM_FAILED
	PGINODESTEAL
	SLABS_SCANNED
	KSWAPD_INODESTEAL
	KSWAPD_LOW_WMARK_HIT_QUICKLY
	KSWAPD_HIGH_WMARK_HIT_QUICKLY
	PAGEOUTRUN
	PGROTATED
	DROP_PAGECACHE
	DROP_SLAB
	OOM_KILL
	NUMA_PTE_UPDATES
	NUMA_HUGE_PTE_UPDATES
	NUMA_HINT_FAULTS
	NUMA_HINT_FAULTS_LOCAL
	NUMA_PAGE_MIGRATE
	PGMIGRATE_SUCCESS
	PGMIGRATE_FAIL
	THP_MIGRATION_SUCCESS
	THP_MIGRATION_FAIL
	THP_MIGRATION_SPLIT
	COMPACTMIGRATE_SCANNED
	COMPACTFREE_SCANNED
	COMPACTISOLATED
	COMPACTSTALL
	COMPACTFAIL
	COMPACTSUCCESS
	KCOMPACTD_WAKE
	KCOMPACTD_MIGRATE_SCANNED
	KCOMPACTD_FREE_SCANNED
	HTLB_BUDDY_PGALLOC
	HTLB_BUDDY_PGALLOC_FAIL
	CMA_ALLOC_SUCCESS
	CMA_ALLOC_FAIL
	UNEVICTABLE_PGCULLED
	UNEVICTABLE_PGSCANNED
	UNEVICTABLE_PGRESCUED
	UNEVICTABLE_PGMLOCKED
	UNEVICTABLE_PGMUNLOCKED
	UNEVICTABLE_PGCLEARED
	UNEVICTABLE_PGSTRANDED
	THP_FAULT_ALLOC
	THP_FAULT_FALLBACK
	THP_FAULT_FALLBACK_CHARGE
	THP_COLLAPSE_ALLOC
	THP_COLLAPSE_ALLOC_FAILED
	THP_FILE_ALLOC
	THP_FILE_FALLBACK
	THP_FILE_FALLBACK_CHARGE
	THP_FILE_MAPPED
	THP_SPLIT_PAGE
	THP_SPLIT_PAGE_FAILED
	THP_DEFERRED_SPLIT_PAGE
	THP_UNDERUSED_SPLIT_PAGE
	THP_SPLIT_PMD
	THP_SCAN_EXCEED_NONE_PTE
	THP_SCAN_EXCEED_SWAP_PTE
	THP_SCAN_EXCEED_SHARED_PTE
	THP_SPLIT_PUD
	THP_ZERO_PAGE_ALLOC
	THP_ZERO_PAGE_ALLOC_FAILED
	THP_SWPOUT
	THP_SWPOUT_FALLBACK
	BALLOON_INFLATE
	BALLOON_DEFLATE
	BALLOON_MIGRATE
	SWAP_RA
	SWAP_RA_HIT
	SWPIN_ZERO
	SWPOUT_ZERO
	KSM_SWPIN_COPY
	COW_KSM
	ZSWPIN
	ZSWPOUT
	ZSWPWB
	DIRECT_MAP_LEVEL2_SPLIT
	DIRECT_MAP_LEVEL3_SPLIT
	DIRECT_MAP_LEVEL2_COLLAPSE
	DIRECT_MAP_LEVEL3_COLLAPSE
	NR_VM_EVENT_ITEMS
)

// VMEventNames is the event part of vmstat_text[].
var VMEventNames = [NR_VM_EVENT_ITEMS]string{
	"pgpgin", "pgpgout", "pswpin", "pswpout",
	"pgalloc_dma", "pgalloc_dma32", "pgalloc_normal", "pgalloc_movable", "pgalloc_device",
	"allocstall_dma", "allocstall_dma32", "allocstall_normal", "allocstall_movable", "allocstall_device",
	"pgskip_dma", "pgskip_dma32", "pgskip_normal", "pgskip_movable", "pgskip_device",
	"pgfree", "pgactivate", "pgdeactivate", "pglazyfree",
	"pgfault", "pgmajfault", "pglazyfreed",
	"pgrefill", "pgreuse",
	"pgsteal_kswapd", "pgsteal_direct", "pgsteal_khugepaged", "pgsteal_proactive",
	"pgscan_kswapd", "pgscan_direct", "pgscan_khugepaged", "pgscan_proactive",
	"pgscan_direct_throttle",
	"pgscan_anon", "pgscan_file", "pgsteal_anon", "pgsteal_file",
	"zone_reclaim_success", "zone_reclaim_failed",
	"pginodesteal", "slabs_scanned", "kswapd_inodesteal",
	"kswapd_low_wmark_hit_quickly", "kswapd_high_wmark_hit_quickly",
	"pageoutrun", "pgrotated",
	"drop_pagecache", "drop_slab", "oom_kill",
	"numa_pte_updates", "numa_huge_pte_updates", "numa_hint_faults", "numa_hint_faults_local", "numa_pages_migrated",
	"pgmigrate_success", "pgmigrate_fail",
	"thp_migration_success", "thp_migration_fail", "thp_migration_split",
	"compact_migrate_scanned", "compact_free_scanned", "compact_isolated",
	"compact_stall", "compact_fail", "compact_success",
	"compact_daemon_wake", "compact_daemon_migrate_scanned", "compact_daemon_free_scanned",
	"htlb_buddy_alloc_success", "htlb_buddy_alloc_fail",
	"cma_alloc_success", "cma_alloc_fail",
	"unevictable_pgs_culled", "unevictable_pgs_scanned", "unevictable_pgs_rescued",
	"unevictable_pgs_mlocked", "unevictable_pgs_munlocked", "unevictable_pgs_cleared",
	"unevictable_pgs_stranded",
	"thp_fault_alloc", "thp_fault_fallback", "thp_fault_fallback_charge",
	"thp_collapse_alloc", "thp_collapse_alloc_failed",
	"thp_file_alloc", "thp_file_fallback", "thp_file_fallback_charge", "thp_file_mapped",
	"thp_split_page", "thp_split_page_failed", "thp_deferred_split_page", "thp_underused_split_page",
	"thp_split_pmd",
	"thp_scan_exceed_none_pte", "thp_scan_exceed_swap_pte", "thp_scan_exceed_share_pte",
	"thp_split_pud",
	"thp_zero_page_alloc", "thp_zero_page_alloc_failed",
	"thp_swpout", "thp_swpout_fallback",
	"balloon_inflate", "balloon_deflate", "balloon_migrate",
	"swap_ra", "swap_ra_hit", "swpin_zero", "swpout_zero",
	"ksm_swpin_copy", "cow_ksm",
	"zswpin", "zswpout", "zswpwb",
	"direct_map_level2_splits", "direct_map_level3_splits",
	"direct_map_level2_collapses", "direct_map_level3_collapses",
}

// String returns the /proc/vmstat name of the event.
func (e VMEventItem) String() string { return enum.Name(VMEventNames[:], e) }

// pgallocEvent returns PGALLOC_<zone>.
func pgallocEvent(z ZoneType) VMEventItem { return PGALLOC_DMA + VMEventItem(z) }

// allocstallEvent returns ALLOCSTALL_<zone>.
func allocstallEvent(z ZoneType) VMEventItem { return ALLOCSTALL_DMA + VMEventItem(z) }

// VMStat is the machine-wide event counters (the kernel's per-CPU
// vm_event_states summed).
type VMStat struct {
	Events [NR_VM_EVENT_ITEMS]uint64
}

// countVMEvents is count_vm_events().
func (m *Machine) countVMEvents(e VMEventItem, n uint64) { m.Stat.Events[e] += n }

// countVMEvent is count_vm_event().
func (m *Machine) countVMEvent(e VMEventItem) { m.Stat.Events[e]++ }

// Event returns an event counter's value.
func (m *Machine) Event(e VMEventItem) uint64 { return m.Stat.Events[e] }

// _modZonePageState is __mod_zone_page_state().
func (z *Zone) _modZonePageState(i ZoneStatItem, delta int64) { z.Stat[i] += delta }

// _modNodePageState is __mod_node_page_state().
func (n *Node) _modNodePageState(i NodeStatItem, delta int64) { n.Stat[i] += delta }

// GlobalZoneState sums a zone item over all zones (global_zone_page_state).
func (m *Machine) GlobalZoneState(i ZoneStatItem) int64 {
	var s int64
	for _, z := range m.zones {
		s += z.Stat[i]
	}
	return s
}

// GlobalNodeState sums a node item over all nodes (global_node_page_state).
func (m *Machine) GlobalNodeState(i NodeStatItem) int64 {
	var s int64
	for _, n := range m.Nodes {
		s += n.Stat[i]
	}
	return s
}

// GlobalNumaEvent sums a NUMA event over all zones.
func (m *Machine) GlobalNumaEvent(i NumaEventItem) uint64 {
	var s uint64
	for _, z := range m.zones {
		s += z.NumaEvents[i]
	}
	return s
}

// VMStatValue returns the value /proc/vmstat prints for a name, and false if
// the name is not a counter.
func (m *Machine) VMStatValue(name string) (int64, bool) {
	for i, n := range ZoneStatNames {
		if n == name {
			return m.GlobalZoneState(ZoneStatItem(i)), true
		}
	}
	for i, n := range NumaEventNames {
		if n == name {
			return int64(m.GlobalNumaEvent(NumaEventItem(i))), true
		}
	}
	for i, n := range NodeStatNames {
		if n == name {
			v := m.GlobalNodeState(NodeStatItem(i))
			if NodeStatInTHP(NodeStatItem(i)) {
				v /= HPAGE_PMD_NR
			}
			if NodeStatInBytes(NodeStatItem(i)) {
				v /= PAGE_SIZE
			}
			return v, true
		}
	}
	for i, n := range VMEventNames {
		if n == name {
			return int64(m.Stat.Events[i]), true
		}
	}
	return 0, false
}

// sysctlStatInterval is sysctl_stat_interval in seconds (HZ jiffies, the
// default of vm.stat_interval; pagesim does not offer the knob).
const sysctlStatInterval = 1

// vmstatWork is one CPU's vmstat_work (a delayed_work on mm_percpu_wq)
// and the kworker that runs it.
type vmstatWork struct {
	// task is the CPU's kworker, nil until the work is first queued.
	task *sim.Task
	// pending is delayed_work_pending(): queued and not yet run out.
	// While it is set the kworker is woken at its time or is running.
	pending bool
}

// vmstatProgram is a CPU's kworker running vmstat_update.
type vmstatProgram struct {
	m   *Machine
	cpu int
}

// Step is vmstat_update(): refresh_cpu_vm_stats(true) and, if it did
// something, the requeue round_jiffies_relative(sysctl_stat_interval)
// ahead; otherwise the work is no longer pending.
func (p vmstatProgram) Step(w *sim.World, t *sim.Task) sim.Time {
	m := p.m
	if !m.refreshCPUVMStats(t, p.cpu) {
		m.vmstat[p.cpu].pending = false
		return sim.Never
	}
	hz := uint64(w.HZ())
	now := w.Jiffies(t.Now)
	return w.JiffyTime(roundJiffies(now+hz*sysctlStatInterval, p.cpu, hz, now))
}

// refreshCPUVMStats is refresh_cpu_vm_stats(true) on cpu: its pcp part,
// decay_pcp_high() for each populated zone (pagesim folds no deltas).
func (m *Machine) refreshCPUVMStats(t *sim.Task, cpu int) bool {
	changed := false
	for _, z := range m.zones {
		if z.Populated() && m.decayPCPHigh(t, z, &z.pcp[cpu]) {
			changed = true
		}
	}
	return changed
}

// roundJiffies is round_jiffies_common(j, cpu, false) at jiffies now
// (kernel/time/timer.c): j rounded to a whole second of jiffies, skewed
// by 3 jiffies a CPU, down if less than a quarter second past it; j
// itself if the rounded value is not after now.
func roundJiffies(j uint64, cpu int, hz, now uint64) uint64 {
	original := j
	j += uint64(cpu) * 3
	rem := j % hz
	if rem < hz/4 {
		j -= rem
	} else {
		j = j - rem + hz
	}
	j -= uint64(cpu) * 3
	if j <= now {
		return original
	}
	return j
}

// queueVmstatWork queues cpu's vmstat_update at at, if it is not
// pending, for the CPU's next whole second of jiffies (see the top of
// this file).
func (m *Machine) queueVmstatWork(at sim.Time, cpu int) {
	if m.vmstat == nil {
		m.vmstat = make([]vmstatWork, len(m.cpuNode))
	}
	v := &m.vmstat[cpu]
	if v.pending {
		return
	}
	v.pending = true
	w := m.World
	if v.task == nil {
		v.task = w.NewTask("kworker/"+itoa(cpu)+":1", cpu, vmstatProgram{m, cpu}, sim.Never)
		m.current(v.task).flags = PF_KTHREAD
		v.task.JiffiesTimeouts = true
		v.task.AllowedCPUs = []int{cpu}
	}
	hz := uint64(w.HZ())
	interval := hz * sysctlStatInterval
	now := w.Jiffies(at)
	// The first jiffy after now at the CPU's phase of round_jiffies().
	j := now + 1
	j += (hz - (j+uint64(cpu)*3)%hz) % hz
	w.Wake(v.task, w.WheelExpiry(j, interval))
}
