package mm

// sysctl.go holds the vm.* knobs pagesim models, with the kernel's ranges
// (the proc_handler min/max of each entry in mm/page_alloc.c,
// mm/compaction.c, mm/vmscan.c) and what the kernel recomputes when one is
// written (min_free_kbytes_sysctl_handler and friends). Names are the
// /proc/sys paths with dots, as sysctl(8) prints them.

import (
	"fmt"
	"strconv"
	"strings"
)

// Sysctl holds the vm.* values.
type Sysctl struct {
	WatermarkScaleFactor       int
	WatermarkBoostFactor       int
	LowmemReserveRatio         [MAX_NR_ZONES]int
	DefragMode                 int
	PercpuPagelistHighFraction int
	ExtfragThreshold           int
	CompactionProactiveness    int
	CompactUnevictableAllowed  int
	Swappiness                 int
	ZoneReclaimMode            int
	// DirtyRatio/DirtyBytes and DirtyBackgroundRatio/DirtyBackgroundBytes
	// are vm.dirty_ratio, vm.dirty_bytes, vm.dirty_background_ratio and
	// vm.dirty_background_bytes; of each pair at most one is non-zero
	// (writing one zeroes the other, as their handlers do).
	DirtyRatio, DirtyBackgroundRatio int
	DirtyBytes, DirtyBackgroundBytes uint64
}

func defaultSysctl() Sysctl {
	return Sysctl{
		WatermarkScaleFactor:      10,
		WatermarkBoostFactor:      15000,
		LowmemReserveRatio:        [MAX_NR_ZONES]int{256, 256, 32, 0, 0},
		ExtfragThreshold:          500,
		CompactionProactiveness:   20,
		CompactUnevictableAllowed: 1,
		Swappiness:                60,
		DirtyRatio:                defDirtyRatio,
		DirtyBackgroundRatio:      defDirtyBackgroundRatio,
	}
}

type sysctlEntry struct {
	name string
	help string
	get  func(m *Machine) string
	set  func(m *Machine, v string) error
}

func intKnob(name, help string, min, max int, ptr func(m *Machine) *int, after func(m *Machine)) sysctlEntry {
	return sysctlEntry{
		name: name,
		help: help,
		get:  func(m *Machine) string { return strconv.Itoa(*ptr(m)) },
		set: func(m *Machine, v string) error {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				return fmt.Errorf("%s: %q is not an integer", name, v)
			}
			if n < min || n > max {
				return fmt.Errorf("%s: %d is out of range [%d, %d]", name, n, min, max)
			}
			*ptr(m) = n
			if after != nil {
				after(m)
			}
			return nil
		},
	}
}

const intMax = int(^uint32(0) >> 1)

var sysctlTable = []sysctlEntry{
	{
		name: "vm.min_free_kbytes",
		help: "pages the kernel keeps free, split over the zones as WMARK_MIN (min_free_kbytes_sysctl_handler)",
		get:  func(m *Machine) string { return strconv.Itoa(m.minFreeKbytes) },
		set: func(m *Machine, v string) error {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				return fmt.Errorf("vm.min_free_kbytes: %q is not an integer", v)
			}
			if n < 0 || n > intMax {
				return fmt.Errorf("vm.min_free_kbytes: %d is out of range [0, %d]", n, intMax)
			}
			m.minFreeKbytes = n
			m.userMinFreeKbytes = n
			m.setupPerZoneWmarks()
			return nil
		},
	},
	intKnob("vm.watermark_scale_factor", "gap between the watermarks in 1/10000 of a zone (watermark_scale_factor_sysctl_handler)",
		1, 3000, func(m *Machine) *int { return &m.Sysctl.WatermarkScaleFactor }, (*Machine).setupPerZoneWmarks),
	intKnob("vm.watermark_boost_factor", "boost on fragmentation events in 1/10000 of the high watermark",
		0, intMax, func(m *Machine) *int { return &m.Sysctl.WatermarkBoostFactor }, nil),
	{
		name: "vm.lowmem_reserve_ratio",
		help: "per-zone ratios that protect lower zones (lowmem_reserve_ratio_sysctl_handler)",
		get: func(m *Machine) string {
			var parts []string
			for _, r := range m.Sysctl.LowmemReserveRatio {
				parts = append(parts, strconv.Itoa(r))
			}
			return strings.Join(parts, "\t")
		},
		set: func(m *Machine, v string) error {
			f := strings.Fields(v)
			if len(f) == 0 || len(f) > int(MAX_NR_ZONES) {
				return fmt.Errorf("vm.lowmem_reserve_ratio: want 1 to %d integers, got %q", MAX_NR_ZONES, v)
			}
			var r [MAX_NR_ZONES]int
			copy(r[:], m.Sysctl.LowmemReserveRatio[:])
			for i, s := range f {
				n, err := strconv.Atoi(s)
				if err != nil {
					return fmt.Errorf("vm.lowmem_reserve_ratio: %q is not an integer", s)
				}
				if n < 1 {
					n = 0
				}
				r[i] = n
			}
			m.Sysctl.LowmemReserveRatio = r
			m.setupPerZoneLowmemReserve()
			return nil
		},
	},
	intKnob("vm.defrag_mode", "1 = never fall back into another migratetype's pageblock until reclaim and compaction fail (e3aa7df331bc)",
		0, 1, func(m *Machine) *int { return &m.Sysctl.DefragMode }, nil),
	{
		name: "vm.percpu_pagelist_high_fraction",
		help: "0 = automatic per-CPU list size, else managed/F split over the node's CPUs (percpu_pagelist_high_fraction_sysctl_handler)",
		get:  func(m *Machine) string { return strconv.Itoa(m.Sysctl.PercpuPagelistHighFraction) },
		set: func(m *Machine, v string) error {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				return fmt.Errorf("vm.percpu_pagelist_high_fraction: %q is not an integer", v)
			}
			if n != 0 && (n < minPercpuPagelistHighFraction || n > intMax) {
				return fmt.Errorf("vm.percpu_pagelist_high_fraction: %d is out of range (0 or at least %d)", n, minPercpuPagelistHighFraction)
			}
			m.Sysctl.PercpuPagelistHighFraction = n
			for _, z := range m.zones {
				m.zonePCPUpdate(z)
			}
			return nil
		},
	},
	intKnob("vm.extfrag_threshold", "fragmentation index above which compaction is preferred over reclaim",
		0, 1000, func(m *Machine) *int { return &m.Sysctl.ExtfragThreshold }, nil),
	intKnob("vm.compaction_proactiveness", "how hard kcompactd compacts in the background (0-100)",
		0, 100, func(m *Machine) *int { return &m.Sysctl.CompactionProactiveness }, nil),
	intKnob("vm.compact_unevictable_allowed", "1 = compaction may move unevictable (mlocked) pages",
		0, 1, func(m *Machine) *int { return &m.Sysctl.CompactUnevictableAllowed }, nil),
	intKnob("vm.swappiness", "reclaim balance between anon and file (0-200)",
		0, 200, func(m *Machine) *int { return &m.Sysctl.Swappiness }, nil),
	intKnob("vm.zone_reclaim_mode", "node reclaim before going off-node (pagesim models 0 only)",
		0, 0, func(m *Machine) *int { return &m.Sysctl.ZoneReclaimMode }, nil),
	intKnob("vm.dirty_ratio", "percent of dirtyable memory that may be dirty; each node gets its share (node_dirty_limit); writing it zeroes vm.dirty_bytes",
		0, 100, func(m *Machine) *int { return &m.Sysctl.DirtyRatio }, func(m *Machine) { m.Sysctl.DirtyBytes = 0 }),
	bytesKnob("vm.dirty_bytes", "dirty limit in bytes instead of vm.dirty_ratio (0 = use the ratio); writing it zeroes vm.dirty_ratio",
		dirtyBytesMin, func(m *Machine) *uint64 { return &m.Sysctl.DirtyBytes }, func(m *Machine) { m.Sysctl.DirtyRatio = 0 }),
	intKnob("vm.dirty_background_ratio", "percent of dirtyable memory where background writeback starts; writing it zeroes vm.dirty_background_bytes",
		0, 100, func(m *Machine) *int { return &m.Sysctl.DirtyBackgroundRatio }, func(m *Machine) { m.Sysctl.DirtyBackgroundBytes = 0 }),
	bytesKnob("vm.dirty_background_bytes", "background writeback threshold in bytes instead of the ratio; writing it zeroes vm.dirty_background_ratio",
		1, func(m *Machine) *uint64 { return &m.Sysctl.DirtyBackgroundBytes }, func(m *Machine) { m.Sysctl.DirtyBackgroundRatio = 0 }),
}

// bytesKnob is an unsigned long byte count (proc_doulongvec_minmax) of at
// least min, whose page count must fit in 32 bits (the -ERANGE of
// dirty_bytes_handler), with a hook run after a write that changed it.
func bytesKnob(name, help string, min uint64, ptr func(m *Machine) *uint64, changed func(m *Machine)) sysctlEntry {
	return sysctlEntry{
		name: name,
		help: help,
		get:  func(m *Machine) string { return strconv.FormatUint(*ptr(m), 10) },
		set: func(m *Machine, v string) error {
			n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return fmt.Errorf("%s: %q is not a non-negative integer", name, v)
			}
			if n < min {
				return fmt.Errorf("%s: %d is below the minimum %d", name, n, min)
			}
			if divRoundUpPages(n) > 1<<32-1 {
				return fmt.Errorf("%s: %d is out of range (at most %d pages)", name, n, uint64(1<<32-1))
			}
			old := *ptr(m)
			*ptr(m) = n
			if n != old && changed != nil {
				changed(m)
			}
			return nil
		},
	}
}

// SysctlNames lists the sysctls pagesim models.
func SysctlNames() []string {
	var out []string
	for _, e := range sysctlTable {
		out = append(out, e.name)
	}
	return out
}

// SysctlHelp returns a one-line description of a sysctl.
func SysctlHelp(name string) string {
	for _, e := range sysctlTable {
		if e.name == name {
			return e.help
		}
	}
	return ""
}

func normaliseSysctlName(name string) string {
	name = strings.TrimSpace(name)
	name = strings.TrimPrefix(name, "/proc/sys/")
	return strings.ReplaceAll(name, "/", ".")
}

// IsSysctl reports whether name (vm.x or vm/x) is a modelled sysctl.
func IsSysctl(name string) bool {
	name = normaliseSysctlName(name)
	for _, e := range sysctlTable {
		if e.name == name {
			return true
		}
	}
	return false
}

// SetSysctl writes a sysctl, as `sysctl -w name=value` would, and
// recomputes what the kernel recomputes.
func (m *Machine) SetSysctl(name, value string) error {
	name = normaliseSysctlName(name)
	for _, e := range sysctlTable {
		if e.name == name {
			return e.set(m, value)
		}
	}
	return fmt.Errorf("unknown sysctl %q", name)
}

// GetSysctl reads a sysctl as /proc/sys prints it (without the newline).
func (m *Machine) GetSysctl(name string) (string, error) {
	name = normaliseSysctlName(name)
	for _, e := range sysctlTable {
		if e.name == name {
			return e.get(m), nil
		}
	}
	return "", fmt.Errorf("unknown sysctl %q", name)
}

// ValidateSysctl checks name and value on a machine with no memory, so only
// the syntax and the range are checked.
func ValidateSysctl(name, value string) error {
	m := &Machine{Sysctl: defaultSysctl(), userMinFreeKbytes: -1}
	return m.SetSysctl(name, value)
}
