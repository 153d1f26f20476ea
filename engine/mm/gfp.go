package mm

// gfp.go models include/linux/gfp_types.h and include/linux/gfp.h: the GFP
// bits with their kernel values, the composite masks, gfp_zone() and
// gfp_migratetype(), and the way the kernel prints a mask with %pGg
// (lib/vsprintf.c format_flags over include/trace/events/mmflags.h
// __def_gfpflag_names).
//
// The bit values are those of the 2024+ enum ___GFP_*_BIT layout without
// KASAN hardware tags, lockdep or slab object extensions. One bit that never
// existed upstream is modelled: ___GFP_ONLY_COMPACT from seed 003 (Andrea
// Arcangeli's 2018 posting). It takes the first bit above the upstream ones,
// 0x1000000, which is also the value the 2018 patch gave it, and like in that
// patch it has no entry in the name table, so %pGg prints it as a hex
// remainder.

import (
	"fmt"
	"strings"
)

// GFP is gfp_t.
type GFP uint32

// Single GFP bits (include/linux/gfp_types.h, ___GFP_*_BIT order). Inside
// this package they carry the kernel's exact names; other packages use the
// exported __GFP_* aliases below (Go does not export names that start with
// an underscore), so a search for "__GFP_NORETRY" finds both.
const (
	__GFP_DMA            GFP = 1 << 0
	__GFP_HIGHMEM        GFP = 1 << 1
	__GFP_DMA32          GFP = 1 << 2
	__GFP_MOVABLE        GFP = 1 << 3
	__GFP_RECLAIMABLE    GFP = 1 << 4
	__GFP_HIGH           GFP = 1 << 5
	__GFP_IO             GFP = 1 << 6
	__GFP_FS             GFP = 1 << 7
	__GFP_ZERO           GFP = 1 << 8
	___GFP_UNUSED        GFP = 1 << 9
	__GFP_DIRECT_RECLAIM GFP = 1 << 10
	__GFP_KSWAPD_RECLAIM GFP = 1 << 11
	__GFP_WRITE          GFP = 1 << 12
	__GFP_NOWARN         GFP = 1 << 13
	__GFP_RETRY_MAYFAIL  GFP = 1 << 14
	__GFP_NOFAIL         GFP = 1 << 15
	__GFP_NORETRY        GFP = 1 << 16
	__GFP_MEMALLOC       GFP = 1 << 17
	__GFP_COMP           GFP = 1 << 18
	__GFP_NOMEMALLOC     GFP = 1 << 19
	__GFP_HARDWALL       GFP = 1 << 20
	__GFP_THISNODE       GFP = 1 << 21
	__GFP_ACCOUNT        GFP = 1 << 22
	__GFP_ZEROTAGS       GFP = 1 << 23

	// ___GFP_ONLY_COMPACT is seed 003's bit (never merged upstream).
	___GFP_ONLY_COMPACT GFP = 1 << 24

	__GFP_RECLAIM = __GFP_DIRECT_RECLAIM | __GFP_KSWAPD_RECLAIM

	// __GFP_ONLY_COMPACT is seed 003's flag: its own bit plus ___GFP_NORETRY,
	// exactly as the patch defines it ("set ___GFP_NORETRY too so that
	// ___GFP_ONLY_COMPACT only needs to be checked in a slow path").
	__GFP_ONLY_COMPACT = ___GFP_ONLY_COMPACT | __GFP_NORETRY

	gfpMovableMask = __GFP_RECLAIMABLE | __GFP_MOVABLE // GFP_MOVABLE_MASK
	gfpZoneMask    = __GFP_DMA | __GFP_HIGHMEM | __GFP_DMA32 | __GFP_MOVABLE
)

// Composite masks (include/linux/gfp_types.h). GFP_NOWAIT includes
// __GFP_NOWARN since "mm: make GFP_NOWAIT include __GFP_NOWARN" (2025).
// GFP_HIGHUSER_MOVABLE's __GFP_SKIP_KASAN is 0 without KASAN HW tags.
const (
	GFP_ATOMIC           = __GFP_HIGH | __GFP_KSWAPD_RECLAIM
	GFP_KERNEL           = __GFP_RECLAIM | __GFP_IO | __GFP_FS
	GFP_KERNEL_ACCOUNT   = GFP_KERNEL | __GFP_ACCOUNT
	GFP_NOWAIT           = __GFP_KSWAPD_RECLAIM | __GFP_NOWARN
	GFP_NOIO             = __GFP_RECLAIM
	GFP_NOFS             = __GFP_RECLAIM | __GFP_IO
	GFP_USER             = __GFP_RECLAIM | __GFP_IO | __GFP_FS | __GFP_HARDWALL
	GFP_DMA              = __GFP_DMA
	GFP_DMA32            = __GFP_DMA32
	GFP_HIGHUSER         = GFP_USER | __GFP_HIGHMEM
	GFP_HIGHUSER_MOVABLE = GFP_HIGHUSER | __GFP_MOVABLE
	GFP_TRANSHUGE_LIGHT  = (GFP_HIGHUSER_MOVABLE | __GFP_COMP | __GFP_NOMEMALLOC | __GFP_NOWARN) &^ __GFP_RECLAIM
	GFP_TRANSHUGE        = GFP_TRANSHUGE_LIGHT | __GFP_DIRECT_RECLAIM
)

type gfpName struct {
	mask GFP
	name string
}

// gfpflagNames is __def_gfpflag_names: composites first, then the single
// bits in bit order (TRACE_GFP_FLAGS). Order matters: format_flags takes the
// first entry whose bits are all present and removes them.
var gfpflagNames = []gfpName{
	{GFP_TRANSHUGE, "GFP_TRANSHUGE"},
	{GFP_TRANSHUGE_LIGHT, "GFP_TRANSHUGE_LIGHT"},
	{GFP_HIGHUSER_MOVABLE, "GFP_HIGHUSER_MOVABLE"},
	{GFP_HIGHUSER, "GFP_HIGHUSER"},
	{GFP_USER, "GFP_USER"},
	{GFP_KERNEL_ACCOUNT, "GFP_KERNEL_ACCOUNT"},
	{GFP_KERNEL, "GFP_KERNEL"},
	{GFP_NOFS, "GFP_NOFS"},
	{GFP_ATOMIC, "GFP_ATOMIC"},
	{GFP_NOIO, "GFP_NOIO"},
	{GFP_NOWAIT, "GFP_NOWAIT"},
	{GFP_DMA, "GFP_DMA"},
	{GFP_DMA32, "GFP_DMA32"},
	{__GFP_RECLAIM, "__GFP_RECLAIM"},
	{__GFP_DMA, "__GFP_DMA"},
	{__GFP_HIGHMEM, "__GFP_HIGHMEM"},
	{__GFP_DMA32, "__GFP_DMA32"},
	{__GFP_MOVABLE, "__GFP_MOVABLE"},
	{__GFP_RECLAIMABLE, "__GFP_RECLAIMABLE"},
	{__GFP_HIGH, "__GFP_HIGH"},
	{__GFP_IO, "__GFP_IO"},
	{__GFP_FS, "__GFP_FS"},
	{__GFP_ZERO, "__GFP_ZERO"},
	{__GFP_DIRECT_RECLAIM, "__GFP_DIRECT_RECLAIM"},
	{__GFP_KSWAPD_RECLAIM, "__GFP_KSWAPD_RECLAIM"},
	{__GFP_WRITE, "__GFP_WRITE"},
	{__GFP_NOWARN, "__GFP_NOWARN"},
	{__GFP_RETRY_MAYFAIL, "__GFP_RETRY_MAYFAIL"},
	{__GFP_NOFAIL, "__GFP_NOFAIL"},
	{__GFP_NORETRY, "__GFP_NORETRY"},
	{__GFP_MEMALLOC, "__GFP_MEMALLOC"},
	{__GFP_COMP, "__GFP_COMP"},
	{__GFP_NOMEMALLOC, "__GFP_NOMEMALLOC"},
	{__GFP_HARDWALL, "__GFP_HARDWALL"},
	{__GFP_THISNODE, "__GFP_THISNODE"},
	{__GFP_ACCOUNT, "__GFP_ACCOUNT"},
	{__GFP_ZEROTAGS, "__GFP_ZEROTAGS"},
}

// String prints the mask as the kernel's %pGg does: names joined by '|',
// any unnamed remainder as 0x-prefixed lower-case hex. An empty mask prints
// "none", as show_gfp_flags() does in tracepoints.
func (g GFP) String() string {
	if g == 0 {
		return "none"
	}
	var b strings.Builder
	flags := g
	for _, n := range gfpflagNames {
		if flags == 0 {
			break
		}
		if flags&n.mask != n.mask {
			continue
		}
		b.WriteString(n.name)
		flags &^= n.mask
		if flags != 0 {
			b.WriteByte('|')
		}
	}
	if flags != 0 {
		fmt.Fprintf(&b, "%#x", uint32(flags))
	}
	return b.String()
}

// gfpUnprinted are bits pagesim models that %pGg prints in hex, because
// the kernel's table of names (__def_gfpflag_names in
// include/trace/events/mmflags.h) has none for them: seed 003's
// ___GFP_ONLY_COMPACT, which its patch adds to gfp.h only.
var gfpUnprinted = []gfpName{{___GFP_ONLY_COMPACT, "___GFP_ONLY_COMPACT"}}

// GFPHexName names the bits of a remainder that %pGg printed in hex
// ("0x1000000" -> "___GFP_ONLY_COMPACT"), for a reader beside the
// kernel's text; "" unless every bit of v has a name there.
func GFPHexName(v uint32) string {
	var names []string
	for _, n := range gfpUnprinted {
		if GFP(v)&n.mask == n.mask {
			names = append(names, n.name)
			v &^= uint32(n.mask)
		}
	}
	if v != 0 || len(names) == 0 {
		return ""
	}
	return strings.Join(names, "|")
}

// ParseGFP reads a mask written as %pGg prints it ("GFP_KERNEL|__GFP_NORETRY",
// hex remainders allowed). It also accepts "__GFP_ONLY_COMPACT".
func ParseGFP(s string) (GFP, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "none" {
		return 0, nil
	}
	var g GFP
	for _, part := range strings.Split(s, "|") {
		part = strings.TrimSpace(part)
		found := false
		if part == "__GFP_ONLY_COMPACT" {
			g |= __GFP_ONLY_COMPACT
			continue
		}
		for _, n := range gfpflagNames {
			if n.name == part {
				g |= n.mask
				found = true
				break
			}
		}
		if found {
			continue
		}
		var v uint32
		if _, err := fmt.Sscanf(part, "0x%x", &v); err == nil && strings.HasPrefix(part, "0x") {
			g |= GFP(v)
			continue
		}
		return 0, fmt.Errorf("unknown GFP flag %q", part)
	}
	return g, nil
}

// Has reports whether every bit of f is set in g (gfp_has_flags).
func (g GFP) Has(f GFP) bool { return g&f == f }

// gfpZone is gfp_zone(): the highest zone a request may use, from
// GFP_ZONE_TABLE for a 64-bit kernel with DMA, DMA32 and MOVABLE.
func gfpZone(g GFP) ZoneType {
	switch g & gfpZoneMask {
	case 0, __GFP_HIGHMEM, __GFP_MOVABLE:
		return ZONE_NORMAL
	case __GFP_DMA, __GFP_DMA | __GFP_MOVABLE:
		return ZONE_DMA
	case __GFP_DMA32, __GFP_DMA32 | __GFP_MOVABLE:
		return ZONE_DMA32
	case __GFP_HIGHMEM | __GFP_MOVABLE:
		return ZONE_MOVABLE
	}
	// Invalid combinations (GFP_ZONE_BAD): the kernel BUGs; the model
	// clamps to Normal so a script typo cannot crash the engine.
	return ZONE_NORMAL
}

// GFPZone exports gfp_zone for workloads and tests.
func GFPZone(g GFP) ZoneType { return gfpZone(g) }

// gfpMigratetype is gfp_migratetype().
func gfpMigratetype(g GFP) MigrateType {
	switch g & gfpMovableMask {
	case __GFP_MOVABLE:
		return MIGRATE_MOVABLE
	case __GFP_RECLAIMABLE:
		return MIGRATE_RECLAIMABLE
	}
	return MIGRATE_UNMOVABLE
}

// GFPMigratetype exports gfp_migratetype.
func GFPMigratetype(g GFP) MigrateType { return gfpMigratetype(g) }

// gfpCompactionAllowed is gfp_compaction_allowed(): compaction needs __GFP_IO.
func gfpCompactionAllowed(g GFP) bool { return g&__GFP_IO != 0 }

// AllocFlags are the ALLOC_* flags of mm/internal.h.
type AllocFlags uint32

const (
	ALLOC_WMARK_MIN     AllocFlags = AllocFlags(WMARK_MIN)
	ALLOC_WMARK_LOW     AllocFlags = AllocFlags(WMARK_LOW)
	ALLOC_WMARK_HIGH    AllocFlags = AllocFlags(WMARK_HIGH)
	ALLOC_WMARK_PROMO   AllocFlags = AllocFlags(WMARK_PROMO)
	ALLOC_NO_WATERMARKS AllocFlags = 0x04
	ALLOC_WMARK_MASK    AllocFlags = ALLOC_NO_WATERMARKS - 1
	ALLOC_OOM           AllocFlags = 0x08
	ALLOC_NON_BLOCK     AllocFlags = 0x10
	ALLOC_MIN_RESERVE   AllocFlags = 0x20
	ALLOC_CPUSET        AllocFlags = 0x40
	ALLOC_CMA           AllocFlags = 0x80
	ALLOC_NOFRAGMENT    AllocFlags = 0x100 // CONFIG_ZONE_DMA32 is set on x86-64
	ALLOC_HIGHATOMIC    AllocFlags = 0x200
	ALLOC_NOLOCK        AllocFlags = 0x400
	ALLOC_KSWAPD        AllocFlags = 0x800

	ALLOC_RESERVES = ALLOC_NON_BLOCK | ALLOC_MIN_RESERVE | ALLOC_HIGHATOMIC | ALLOC_OOM
)

var allocFlagNames = []struct {
	f    AllocFlags
	name string
}{
	{ALLOC_NO_WATERMARKS, "ALLOC_NO_WATERMARKS"},
	{ALLOC_OOM, "ALLOC_OOM"},
	{ALLOC_NON_BLOCK, "ALLOC_NON_BLOCK"},
	{ALLOC_MIN_RESERVE, "ALLOC_MIN_RESERVE"},
	{ALLOC_CPUSET, "ALLOC_CPUSET"},
	{ALLOC_CMA, "ALLOC_CMA"},
	{ALLOC_NOFRAGMENT, "ALLOC_NOFRAGMENT"},
	{ALLOC_HIGHATOMIC, "ALLOC_HIGHATOMIC"},
	{ALLOC_NOLOCK, "ALLOC_NOLOCK"},
	{ALLOC_KSWAPD, "ALLOC_KSWAPD"},
}

// String prints the flags with their mm/internal.h names, the watermark
// first (ALLOC_WMARK_MIN is 0 and is always printed when no other watermark
// bit is set), joined by '|'.
func (a AllocFlags) String() string {
	var parts []string
	if a&ALLOC_NO_WATERMARKS == 0 {
		parts = append(parts, [...]string{"ALLOC_WMARK_MIN", "ALLOC_WMARK_LOW", "ALLOC_WMARK_HIGH", "ALLOC_WMARK_PROMO"}[a&ALLOC_WMARK_MASK])
	}
	for _, n := range allocFlagNames {
		if a&n.f != 0 {
			parts = append(parts, n.name)
		}
	}
	return strings.Join(parts, "|")
}

// MustParseGFP is ParseGFP for masks written in the program: outside this
// package a GFP bit is named as %pGg prints it, since Go does not export
// __GFP_*. It panics on a mask ParseGFP refuses.
func MustParseGFP(s string) GFP {
	g, err := ParseGFP(s)
	if err != nil {
		panic(err)
	}
	return g
}
