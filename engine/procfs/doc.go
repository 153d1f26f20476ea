// Package procfs reads and writes the /proc files of the Linux page
// allocator: /proc/buddyinfo, /proc/pagetypeinfo, /proc/zoneinfo,
// /proc/vmstat and the one-number files under /proc/sys/vm.
//
// # Writing
//
// Buddyinfo, Pagetypeinfo, Zoneinfo and Vmstat print a simulated machine's
// state byte for byte the way the kernel prints it. The layout follows
// linux-mm/linux-mm mm/vmstat.c @251c25cde91e (a 2026 mm tree):
// frag_show_print, pagetypeinfo_show with pagetypeinfo_showfree_print (whose
// per-list walk stops at 100000 and prints ">100000") and
// pagetypeinfo_showblockcount_print, zoneinfo_show_print (per-node stats on
// the first populated zone of a node, boost/min/low/high/promo/spanned/
// present/managed/cma, protection, and for populated zones the zone and NUMA
// items, the pagesets with high_min/high_max, "vm stats threshold",
// node_unreclaimable, start_pfn, reserved_highatomic, free_highatomic), and
// vmstat_start/vmstat_show (zone items, NUMA items, node items, the
// vm_stat_item values, the events, then the deprecated "nr_unstable 0").
// The item names and their order live in engine/mm/vmstat.go.
//
// Values the kernel computes when the file is read are computed here the
// same way: "vm stats threshold" is calculate_normal_threshold(), the dirty
// thresholds are global_dirty_limits() with the machine's vm.dirty_ratio
// (or _bytes) and vm.dirty_background_ratio (or _bytes) over
// global_dirtyable_memory() (engine/mm page_writeback.go), and
// nr_memmap_boot_pages counts the memmap of every 128 MiB section that holds
// present pages (SPARSEMEM_VMEMMAP, 64-byte struct page). node_unreclaimable
// is kswapd_test_hopeless() over the node's kswapd failure count. What the
// engine does not model prints 0: nr_memmap_pages (memmap from hotplug), and
// every counter nothing in the engine moves.
//
// # Reading
//
// ParseBuddyinfo, ParsePagetypeinfo, ParseZoneinfo, ParseVmstat and
// ParseSysctl read what real kernels printed from 4.x to today: legacy
// zoneinfo layouts (stats before "protection:", all_unreclaimable,
// inactive_ratio, node_scanned, pagesets without high_min/high_max), missing
// boost/promo/cma lines, Device zones, 5 to 7 migratetype columns with any
// names, the ">100000" cap, one header block per node, and missing trailing
// spaces. They return plain structs that keep the file's names as strings
// and the line each row came from; a malformed file gives an error of the
// form "zoneinfo:12: ..." and never a panic.
//
// # Importing
//
// Load reads a folder of such files from an fs.FS and Dump.Spec turns it into
// an mm.ImportSpec; names the model lacks (a Reserve or Mirror migratetype, a
// HighMem zone) fail there with the file and line. Import does both and
// builds the machine with mm.Import. Nothing here opens a path: callers hand
// in an fs.FS or an io.Reader.
package procfs
