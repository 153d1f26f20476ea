package mm

// import.go builds a machine from a /proc dump: the zone geometry of
// /proc/zoneinfo, the free chunk counts of /proc/pagetypeinfo (or
// /proc/buddyinfo) and the pageblock counts of /proc/pagetypeinfo. Package
// procfs parses the files and fills an ImportSpec; this file turns the spec
// into a Machine whose free lists hold exactly the dump's chunks.
//
// # What a dump says and what it does not
//
// A dump gives, per zone, how many free chunks of each order sit on each
// migratetype's list, and how many pageblocks have each migratetype. It does
// not say where any of them are. pagesim needs an address for every chunk,
// so Import invents a placement. The placement is synthetic but
// deterministic (the same spec gives the same machine, byte for byte) and
// it keeps everything the kernel's invariants and /proc can see: the
// per-(zone, order, migratetype) chunk counts are exact, every chunk is
// aligned to its order, lies inside its zone, sits on the list of its
// pageblock's migratetype, and never has a free buddy of its own order it
// could merge with.
//
// Pages that are not free are in use by the kernel (KindKernel): a dump does
// not say who uses them, and pagesim's memory users (anon, file, slab) carry
// state (LRU position, owner) that a dump does not give. Pages the dump had
// on per-CPU lists are therefore in use too; the per-CPU lists start empty.
// Event counters start at zero: an import reproduces the memory layout, not
// the machine's history.
//
// # Geometry
//
// With zoneinfo, each zone gets the dump's spanned, present and managed
// pages and its start_pfn. A zone whose start_pfn is missing starts after
// the previous zone, aligned to MAX_ORDER_NR_PAGES (1024 pages). Without
// zoneinfo the layout is synthesised: each zone is as large as it must be,
// the larger of its pageblocks times 512 and the room its free chunks need,
// rounded up to 1024 pages, all present and managed; the first zone starts
// at PFN 0x1000 (16 MiB) so that no real DMA zone is implied, and zones
// follow each other in node order, type order.
//
// The span - managed pages that are not managed (holes and reservations; the
// kernel's PageReserved) are placed last: once the free chunks are placed,
// they are the highest pages of the zone that are not free. The kernel puts
// holes where the firmware's memory map has them; pagesim's placement only
// keeps their number.
//
// # Placement (per zone)
//
// The zone's pageblocks are taken in PFN order. A pageblock is "full" when
// all its 512 pages lie in the zone; the first or last block of a zone whose
// boundary is not block-aligned is "partial" and can only hold chunks that
// fit inside the zone; a block another zone also spans is never used.
//
//  1. Order-10 chunks (MAX_PAGE_ORDER), migratetype by migratetype in enum
//     order, each take the lowest pair of full blocks aligned to 1024 pages
//     that nothing holds yet.
//  2. Order-9 chunks (a whole pageblock) each take the lowest free full
//     block whose buddy block (the other half of its 1024-page pair) does
//     not already hold an order-9 chunk, so two order-9 chunks never end up
//     as buddies.
//  3. Smaller chunks, migratetype by migratetype, largest order first, are
//     packed into blocks taken in PFN order and given that migratetype.
//     Each block is a binary buddy tree. Packing keeps two kinds of free
//     space: "open" regions, which may become a free chunk of exactly their
//     order, and "slots", which must keep at least one page in use because
//     their buddy is a free chunk of the same order. A chunk of order j goes
//     into an open region of order j if there is one; otherwise the
//     smallest region (slot first) of a larger order k is split: the chunk
//     takes the lowest 2^j pages, the upper half at each level becomes an
//     open region, except at order j itself, where the upper half is a slot.
//     A slot is only ever split, never filled whole, so every free chunk's
//     buddy keeps a page in use and nothing can merge. Whatever is left of
//     the regions at the end is in use.
//  4. The blocks no chunk needed get migratetypes so that the zone's block
//     counts match the dump's: types in enum order, the type with the most
//     blocks last, each from the lowest blocks left. Blocks beyond the
//     dump's count (the kernel does not count blocks in memory holes,
//     pagesim's pageblock walk does) stay MIGRATE_MOVABLE, the boot default.
//
// If the dump is inconsistent, the free counts are kept exact and the rest
// gives way, with a warning for each adjustment:
//   - free chunks of a migratetype that need more blocks than the dump says
//     that type has, or more blocks than the zone spans: the block types are
//     adjusted as little as possible (other types lose blocks, the type with
//     the most blocks first);
//   - more free pages than managed pages (files copied at different times,
//     or from different machines): managed, and present and spanned if
//     needed, grow to the free pages;
//   - a start_pfn inside the zone before it: the zone moves up to the next
//     1024-page boundary after it.
//
// A chunk that finds no room (an order-10 chunk in a zone without an aligned
// pair of whole blocks left) is an error.
//
// Sysctls come from the spec in order (package procfs puts the dump's
// sys_vm files first and explicit settings after them, so explicit ones
// win); watermarks, lowmem reserves and per-CPU pageset sizes are always
// computed by pagesim from the managed pages and the sysctls, never copied
// from the dump.

import (
	"errors"
	"fmt"
	"sort"
)

// ImportZone describes one zone of a dump.
type ImportZone struct {
	Type ZoneType
	// HasGeometry says Spanned, Present and Managed come from the dump
	// (zoneinfo); without it Import synthesises them.
	HasGeometry               bool
	Spanned, Present, Managed uint64
	// HasStartPFN says StartPFN comes from the dump.
	HasStartPFN bool
	StartPFN    PFN
	// Free[o][mt] is the number of free chunks of order o on mt's lists.
	Free [NR_PAGE_ORDERS][MIGRATE_TYPES]uint64
	// HasBlocks says Blocks comes from the dump (pagetypeinfo).
	HasBlocks bool
	Blocks    [MIGRATE_TYPES]uint64
	// Source names the dump's file and line that sized the zone
	// ("zoneinfo:34", "buddyinfo:2"), for errors.
	Source string
}

// ImportNode describes one NUMA node of a dump.
type ImportNode struct {
	CPUs int
	// CPUsSource names the file and line that gave the CPU count.
	CPUsSource string
	Zones      []ImportZone
}

// ImportSpec describes a machine to build from a dump.
type ImportSpec struct {
	Nodes  []ImportNode
	Seed   uint64
	THP    THPSettings
	Sysctl []SysctlSetting // applied in order; later settings win
	// MaxBytes, if not 0, is the memory budget (see MachineBytes):
	// Import refuses a dump whose machine would cost more, naming the
	// file and line that made it that large.
	MaxBytes uint64
	// Recorder, if set, records the machine (Config.Recorder).
	Recorder *Recorder
}

// The placement treats MAX_PAGE_ORDER chunks as pairs of pageblocks.
var _ = [1]struct{}{}[MAX_PAGE_ORDER-PageblockOrder-1]

// importFirstPFN is where a synthesised layout starts (16 MiB).
const importFirstPFN = 0x1000

// MAX_ORDER_NR_PAGES is MAX_ORDER_NR_PAGES.
const MAX_ORDER_NR_PAGES = 1 << MAX_PAGE_ORDER

// FreePages returns the pages the zone's free chunks hold (saturating at
// math.MaxUint64: the counts come from a file).
func (zs *ImportZone) FreePages() uint64 {
	var n uint64
	for o := range zs.Free {
		for _, c := range zs.Free[o] {
			n = addSat(n, mulSat(c, 1<<o))
		}
	}
	return n
}

// synthSize is the size of a zone without geometry: its pageblocks, or the
// room the placement can need for its chunks (each order-9 chunk may cost
// its buddy block, each smaller chunk at most twice its size), whichever is
// larger, rounded up to 1024 pages. The sum saturates: a size beyond
// importMaxPFN is refused by the caller.
func (zs *ImportZone) synthSize() uint64 {
	var need uint64
	for o := range zs.Free {
		for _, c := range zs.Free[o] {
			switch {
			case o >= PageblockOrder:
				need = addSat(need, mulSat(c, MAX_ORDER_NR_PAGES))
			default:
				need = addSat(need, mulSat(c, 1<<(o+1)))
			}
		}
	}
	need = addSat(need, uint64(MIGRATE_TYPES)*PageblockNrPages) // a partly filled block per type
	var blocks uint64
	if zs.HasBlocks {
		for _, b := range zs.Blocks {
			blocks = addSat(blocks, b)
		}
	}
	size := max(need, mulSat(blocks, PageblockNrPages))
	if size > importMaxPFN {
		return size
	}
	return alignUp(size, MAX_ORDER_NR_PAGES)
}

// importMaxPFN is the highest PFN a machine may reach (8 TiB), the bound
// NewMachine's layout checks too.
const importMaxPFN = 1 << 31

// Import builds a machine from a dump. The warnings say where the dump had
// to be adjusted; see the file comment.
func Import(spec ImportSpec) (*Machine, []string, error) {
	if len(spec.Nodes) == 0 {
		return nil, nil, errors.New("import: the dump has no nodes")
	}
	// Work on a copy: zones get sorted and their geometry filled in.
	nodes := make([]ImportNode, len(spec.Nodes))
	for i, n := range spec.Nodes {
		nodes[i] = n
		nodes[i].Zones = append([]ImportZone(nil), n.Zones...)
	}
	spec.Nodes = nodes
	cfg := Config{Seed: spec.Seed, THP: spec.THP, Sysctl: spec.Sysctl, Recorder: spec.Recorder}
	var warnings []string
	prevEnd := uint64(0)
	for ni := range spec.Nodes {
		n := &spec.Nodes[ni]
		sort.SliceStable(n.Zones, func(i, j int) bool { return n.Zones[i].Type < n.Zones[j].Type })
		ns := NodeSpec{CPUs: n.CPUs}
		for zi := range n.Zones {
			zs := &n.Zones[zi]
			if zs.Type >= MAX_NR_ZONES {
				return nil, nil, fmt.Errorf("import: node %d: zone type %d does not exist", ni, zs.Type)
			}
			free := zs.FreePages()
			if !zs.HasGeometry {
				size := zs.synthSize()
				if size > importMaxPFN {
					return nil, nil, fmt.Errorf("%snode %d zone %s: its free chunks and pageblocks need more than 8 TiB", sourcePrefix(zs.Source), ni, zs.Type)
				}
				zs.Spanned, zs.Present, zs.Managed = size, size, size
			}
			if zs.Spanned == 0 {
				if free > 0 {
					return nil, nil, fmt.Errorf("import: node %d zone %s has %d free pages but spans none", ni, zs.Type, free)
				}
				continue
			}
			if free > zs.Managed {
				// Files taken at different times, or from different
				// machines: the free counts win.
				warnings = append(warnings, fmt.Sprintf("node %d zone %s: its free lists hold %d pages, more than its %d managed pages; managed pages raised to %d",
					ni, zs.Type, free, zs.Managed, free))
				zs.Managed = free
				zs.Present = max(zs.Present, free)
				zs.Spanned = max(zs.Spanned, zs.Present)
			}
			var start uint64
			switch {
			case !zs.HasStartPFN:
				start = alignUp(max(prevEnd, importFirstPFN), MAX_ORDER_NR_PAGES)
			case uint64(zs.StartPFN) < prevEnd:
				start = alignUp(prevEnd, MAX_ORDER_NR_PAGES)
				warnings = append(warnings, fmt.Sprintf("node %d zone %s: start_pfn %d overlaps the zone before it; moved to %d", ni, zs.Type, zs.StartPFN, start))
			default:
				start = uint64(zs.StartPFN)
			}
			if start > importMaxPFN || zs.Spanned > importMaxPFN-start {
				return nil, nil, fmt.Errorf("%snode %d zone %s ends beyond 8 TiB (start_pfn %d, %d pages)", sourcePrefix(zs.Source), ni, zs.Type, start, zs.Spanned)
			}
			zs.StartPFN = PFN(start)
			ns.Zones = append(ns.Zones, ZoneSpec{Type: zs.Type, StartPFN: PFN(start), Spanned: zs.Spanned, Present: zs.Present, Managed: zs.Managed})
			prevEnd = start + zs.Spanned
		}
		cfg.Nodes = append(cfg.Nodes, ns)
	}
	if err := CheckBudget(cfg, 1, spec.MaxBytes); err != nil {
		var be *BudgetError
		if errors.As(err, &be) {
			be.Source = spec.blame(be.Cost)
		}
		return nil, nil, err
	}
	m, err := NewMachine(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("import: %w", err)
	}
	if err := m.importReset(); err != nil {
		return nil, nil, err
	}
	for ni := range spec.Nodes {
		for zi := range spec.Nodes[ni].Zones {
			zs := &spec.Nodes[ni].Zones[zi]
			if zs.Spanned == 0 {
				continue
			}
			w, err := m.importZone(m.Nodes[ni].Zones[zs.Type], zs)
			if err != nil {
				return nil, nil, err
			}
			warnings = append(warnings, w...)
		}
	}
	for _, z := range m.zones {
		z.nrBlocks = m.countZoneBlocks(z)
		z.NrReservedHighatomic = z.nrBlocks[MIGRATE_HIGHATOMIC] * PageblockNrPages
	}
	if err := m.CheckInvariants(); err != nil {
		return nil, nil, fmt.Errorf("import built an inconsistent machine (a pagesim bug): %w", err)
	}
	return m, warnings, nil
}

// blame returns the source of what makes a machine of cost c large: the
// node with the most CPUs when the per-CPU state dominates, else the zone
// that adds the most to the memory map (its pages, and the gap below its
// start_pfn when the dump gave one).
func (spec *ImportSpec) blame(c MachineCost) string {
	if c.PerCPU > c.MemMap {
		best := -1
		for i, n := range spec.Nodes {
			if best < 0 || n.CPUs > spec.Nodes[best].CPUs {
				best = i
			}
		}
		if best >= 0 {
			return spec.Nodes[best].CPUsSource
		}
		return ""
	}
	src, most, prevEnd := "", uint64(0), uint64(0)
	for _, n := range spec.Nodes {
		for _, z := range n.Zones {
			if z.Spanned == 0 {
				continue
			}
			adds := z.Spanned
			if start := uint64(z.StartPFN); start > prevEnd {
				adds = addSat(adds, start-prevEnd)
			}
			if adds > most {
				src, most = z.Source, adds
			}
			prevEnd = max(prevEnd, addSat(uint64(z.StartPFN), z.Spanned))
		}
	}
	return src
}

// sourcePrefix starts an error about a zone: its dump file and line, or
// "import: " when the spec does not say.
func sourcePrefix(src string) string {
	if src == "" {
		return "import: "
	}
	return src + ": "
}

// importReset empties the free lists of a freshly booted machine: every
// managed page becomes in use by the kernel, so the placement starts from a
// blank page. It refuses a machine that is not fresh from boot.
func (m *Machine) importReset() error {
	for _, z := range m.zones {
		if uint64(z.Stat[NR_FREE_PAGES]) != z.ManagedPages {
			return fmt.Errorf("import: zone %d/%s is not fresh from boot (%d of %d managed pages free)", z.Node.ID, z.Name(), z.Stat[NR_FREE_PAGES], z.ManagedPages)
		}
		for c := range z.pcp {
			if z.pcp[c].count != 0 {
				return fmt.Errorf("import: zone %d/%s has pages on CPU %d's list", z.Node.ID, z.Name(), c)
			}
		}
		for o := range z.freeArea {
			for t := range z.freeArea[o].list {
				z.freeArea[o].list[t] = freeList{head: NilPFN, tail: NilPFN}
			}
			z.freeArea[o].nrFree = 0
		}
		z.Stat[NR_FREE_PAGES] = 0
		z.Stat[NR_FREE_PAGES_BLOCKS] = 0
		z.Stat[NR_FREE_CMA_PAGES] = 0
		z.NrFreeHighatomic = 0
		if z.SpannedPages == 0 {
			continue
		}
		for pfn := z.StartPFN; pfn < z.EndPFN(); pfn++ {
			m.pages[pfn] = page{next: NilPFN, prev: NilPFN, kind: KindKernel}
		}
	}
	for b := range m.blocks {
		m.blocks[b].nrFree = 0
	}
	return nil
}

// Block roles during placement.
const (
	impUnused int8 = iota // no chunk yet
	impFree10             // first block of a free order-10 chunk
	impFree10Tail
	impFree9   // a free order-9 chunk
	impPacked  // holds smaller chunks (or was taken for them)
	impForeign // shared with another zone: never used
)

type importBlock struct {
	lo, hi PFN // the block's pages inside the zone
	role   int8
	mt     MigrateType
}

// importPool is the free space of one migratetype's packed blocks (see the
// file comment): open[k] regions may become a free chunk of order k, slot[k]
// regions must keep a page in use.
type importPool struct {
	open, slot [NR_PAGE_ORDERS][]PFN
}

func popFront(l *[]PFN) (PFN, bool) {
	if len(*l) == 0 {
		return 0, false
	}
	pfn := (*l)[0]
	*l = (*l)[1:]
	return pfn, true
}

// take finds room for a chunk of order j and returns its first PFN.
func (p *importPool) take(j Order) (PFN, bool) {
	if pfn, ok := popFront(&p.open[j]); ok {
		return pfn, true
	}
	for k := j + 1; k < NR_PAGE_ORDERS; k++ {
		pfn, ok := popFront(&p.slot[k])
		if !ok {
			pfn, ok = popFront(&p.open[k])
		}
		if !ok {
			continue
		}
		for k > j {
			k--
			upper := pfn + PFN(1)<<k
			if k == j {
				p.slot[k] = append(p.slot[k], upper)
			} else {
				p.open[k] = append(p.open[k], upper)
			}
		}
		return pfn, true
	}
	return 0, false
}

// addBlock adds a block's pages [lo, hi) to the pool as the largest aligned
// open regions (a full block is one region of pageblock_order).
func (p *importPool) addBlock(lo, hi PFN) {
	for pfn := lo; pfn < hi; {
		o := Order(PageblockOrder)
		for o > 0 && (pfn&(PFN(1)<<o-1) != 0 || pfn+PFN(1)<<o > hi) {
			o--
		}
		p.open[o] = append(p.open[o], pfn)
		pfn += PFN(1) << o
	}
}

// importPutChunk puts a free chunk on mt's list of order o.
func (m *Machine) importPutChunk(z *Zone, pfn PFN, o Order, mt MigrateType) {
	for i := PFN(0); i < PFN(1)<<o; i++ {
		m.pages[pfn+i] = page{next: NilPFN, prev: NilPFN, kind: KindNone}
	}
	m.accountFreepages(z, int64(o.Pages()), mt)
	m._addToFreeList(z, pfn, o, mt, true)
}

// importZone places one zone's chunks and sets its pageblock types.
func (m *Machine) importZone(z *Zone, zs *ImportZone) ([]string, error) {
	name := fmt.Sprintf("node %d zone %s", z.Node.ID, z.Name())
	first := z.StartPFN >> PageblockOrder
	last := (z.EndPFN() - 1) >> PageblockOrder
	blocks := make([]importBlock, last-first+1)
	for i := range blocks {
		b := first + PFN(i)
		lo, hi := b<<PageblockOrder, (b+1)<<PageblockOrder
		blk := &blocks[i]
		blk.lo, blk.hi = max(lo, z.StartPFN), min(hi, z.EndPFN())
		blk.mt = MIGRATE_MOVABLE
		if blk.lo != lo || blk.hi != hi {
			for _, o := range m.zones {
				if o != z && o.SpannedPages > 0 && o.StartPFN < hi && o.EndPFN() > lo {
					blk.role = impForeign
				}
			}
		}
	}
	full := func(i int) bool {
		return i >= 0 && i < len(blocks) && blocks[i].role == impUnused &&
			blocks[i].hi-blocks[i].lo == PageblockNrPages
	}
	// The 1024-aligned pair partner of block i (its buddy block).
	buddy := func(i int) int { return int((first+PFN(i))^1) - int(first) }

	// 1. Order-10 chunks: aligned pairs of full blocks.
	{
		cursor := 0
		for mt := MigrateType(0); mt < MIGRATE_TYPES; mt++ {
			for n := zs.Free[MAX_PAGE_ORDER][mt]; n > 0; n-- {
				for cursor < len(blocks) && !((first+PFN(cursor))&1 == 0 && full(cursor) && full(cursor+1)) {
					cursor++
				}
				if cursor >= len(blocks) {
					return nil, fmt.Errorf("import: %s: no room for %d more free order-%d %s chunks", name, n, MAX_PAGE_ORDER, mt)
				}
				blocks[cursor].role, blocks[cursor].mt = impFree10, mt
				blocks[cursor+1].role, blocks[cursor+1].mt = impFree10Tail, mt
				m.importPutChunk(z, blocks[cursor].lo, MAX_PAGE_ORDER, mt)
				cursor += 2
			}
		}
	}
	// 2. Order-9 chunks: full blocks whose buddy block is not one.
	cursor := 0
	for mt := MigrateType(0); mt < MIGRATE_TYPES; mt++ {
		for n := zs.Free[PageblockOrder][mt]; n > 0; n-- {
			for cursor < len(blocks) {
				bi := buddy(cursor)
				if full(cursor) && !(bi >= 0 && bi < len(blocks) && blocks[bi].role == impFree9) {
					break
				}
				cursor++
			}
			if cursor >= len(blocks) {
				return nil, fmt.Errorf("import: %s: no room for %d more free order-%d %s chunks", name, n, PageblockOrder, mt)
			}
			blocks[cursor].role, blocks[cursor].mt = impFree9, mt
			m.importPutChunk(z, blocks[cursor].lo, PageblockOrder, mt)
			cursor++
		}
	}
	// 3. Smaller chunks, packed into blocks of their type.
	cursor = 0
	for mt := MigrateType(0); mt < MIGRATE_TYPES; mt++ {
		var pool importPool
		for o := int(PageblockOrder) - 1; o >= 0; o-- {
			for n := zs.Free[o][mt]; n > 0; n-- {
				pfn, ok := pool.take(Order(o))
				for !ok {
					for cursor < len(blocks) && (blocks[cursor].role != impUnused || blocks[cursor].lo >= blocks[cursor].hi) {
						cursor++
					}
					if cursor >= len(blocks) {
						return nil, fmt.Errorf("import: %s: no room for %d more free order-%d %s chunks", name, n, o, mt)
					}
					blocks[cursor].role, blocks[cursor].mt = impPacked, mt
					pool.addBlock(blocks[cursor].lo, blocks[cursor].hi)
					pfn, ok = pool.take(Order(o))
				}
				m.importPutChunk(z, pfn, Order(o), mt)
			}
		}
	}

	// 4. Types for the blocks no chunk needed.
	var warnings []string
	var used [MIGRATE_TYPES]uint64
	var spare []int
	for i := range blocks {
		switch blocks[i].role {
		case impUnused:
			if int(m.zoneOfBlock[first+PFN(i)]) == z.ID {
				spare = append(spare, i)
			}
		case impForeign:
		default:
			used[blocks[i].mt]++
		}
	}
	if zs.HasBlocks {
		var need [MIGRATE_TYPES]uint64
		var sumNeed uint64
		for mt := MigrateType(0); mt < MIGRATE_TYPES; mt++ {
			if used[mt] > zs.Blocks[mt] {
				warnings = append(warnings, fmt.Sprintf("%s: its free %s chunks fill %d pageblocks, the dump counts %d %s blocks; other types give up the difference",
					name, mt, used[mt], zs.Blocks[mt], mt))
			} else {
				need[mt] = zs.Blocks[mt] - used[mt]
				sumNeed += need[mt]
			}
		}
		// The types that give up blocks when too few are left: the
		// most numerous first.
		order := make([]MigrateType, MIGRATE_TYPES)
		for i := range order {
			order[i] = MigrateType(i)
		}
		sort.SliceStable(order, func(a, b int) bool { return zs.Blocks[order[a]] > zs.Blocks[order[b]] })
		if short := int64(sumNeed) - int64(len(spare)); short > 0 {
			for _, mt := range order {
				cut := min(uint64(short), need[mt])
				if cut == 0 {
					continue
				}
				need[mt] -= cut
				short -= int64(cut)
				warnings = append(warnings, fmt.Sprintf("%s: %d of the dump's %d %s pageblocks do not fit in the zone", name, cut, zs.Blocks[mt], mt))
				if short == 0 {
					break
				}
			}
		}
		// Hand out the spare blocks in enum order, the most numerous
		// type last.
		k := 0
		assign := append([]MigrateType(nil), order[1:]...)
		sort.SliceStable(assign, func(a, b int) bool { return assign[a] < assign[b] })
		assign = append(assign, order[0])
		for _, mt := range assign {
			for ; need[mt] > 0 && k < len(spare); need[mt]-- {
				blocks[spare[k]].mt = mt
				k++
			}
		}
	}
	for i := range blocks {
		if blocks[i].role == impForeign {
			continue
		}
		m.blocks[first+PFN(i)].mt = blocks[i].mt
	}

	// Holes and reservations: the highest pages that are not free.
	reserve := z.SpannedPages - z.ManagedPages
	for pfn := z.EndPFN(); reserve > 0 && pfn > z.StartPFN; {
		pfn--
		if p := &m.pages[pfn]; p.kind == KindKernel {
			*p = page{next: NilPFN, prev: NilPFN, flags: pgReserved}
			reserve--
		}
	}
	if reserve > 0 {
		return nil, fmt.Errorf("import: %s: %d pages could not be reserved (a pagesim bug)", name, reserve)
	}
	return warnings, nil
}
