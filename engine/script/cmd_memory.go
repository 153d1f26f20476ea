package script

// cmd_memory.go: the commands that put memory to use and give it back
// (region, fill, fragment, pin, unpin, file, slab, alloc, free, drain,
// compact_memory). Each runs its kernel work as one step of the script task
// on the chosen CPU.

import (
	"fmt"
	"math"
	"strings"

	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/sim"
)

func memoryCommands() []*command {
	where := []param{cpuParam, nodeParam}
	with := func(ps ...param) []param { return append(ps, where...) }
	return []*command{
		{
			name:   "region",
			syntax: "region NAME size=SIZE [cgroup=CG] [madvise=hugepage|nohugepage|none] [policy=MODE[:LIST]] [nodes=LIST]",
			help: "Creates an anonymous memory region (an mmap of size bytes) without touching it. " +
				"madvise=hugepage is MADV_HUGEPAGE, nohugepage MADV_NOHUGEPAGE. policy is the NUMA memory policy " +
				"(default, local, preferred, bind, interleave) over its nodes, written as tmpfs's mpol= takes it " +
				"(policy=bind:0-1) or in nodes=LIST: bind needs nodes, preferred takes one (none: local allocation), " +
				"interleave defaults to every node.",
			pos: []param{{name: "NAME", typ: tName, required: true}},
			keys: []param{
				{name: "size", typ: tSize, required: true, help: "the region's size, rounded up to whole pages"},
				{name: "cgroup", typ: tCgroup, help: "the cgroup charged for its pages (default /)"},
				{name: "madvise", typ: tChoice, choices: []string{"hugepage", "nohugepage", "none"}, help: "MADV_HUGEPAGE or MADV_NOHUGEPAGE"},
				{name: "policy", typ: tMempolicy, help: "the NUMA memory policy (set_mempolicy/mbind), MODE[:LIST] such as bind:0"},
				{name: "nodes", typ: tList, help: "the policy's nodes, such as 0,1 or 0-3"},
			},
			run: runRegion,
		},
		{
			name:   "fill",
			syntax: "fill REGION [size=SIZE] [pin=on] [cpu=N|node=N]",
			help: "Faults the region in address order from where it was left, size bytes of it (default: the rest), " +
				"each fault taking a THP, an mTHP or a base page as the THP settings allow. pin=on takes every fault " +
				"through a FOLL_LONGTERM pin (vfio, io_uring), which pins what it maps. If the kernel runs out of memory " +
				"the fill stops and prints a note.",
			pos: []param{{name: "REGION", typ: tName, required: true}},
			keys: with(
				param{name: "size", typ: tSize, help: "how much more of the region to fault (default: the rest)"},
				param{name: "pin", typ: tBool, help: "pin every folio as it is faulted (FOLL_LONGTERM)"},
			),
			run: runFill,
		},
		{
			name:   "fragment",
			syntax: "fragment REGION every=N [cpu=N|node=N]",
			help: "MADV_DONTNEED of every Nth resident folio of the region in address order (every=2 frees every other " +
				"page of a base-page region, every=1 all of it), leaving holes the size of a folio. Pinned folios stay. " +
				"A THP is freed whole: fault the region with madvise=nohugepage for 4 KiB holes.",
			pos:  []param{{name: "REGION", typ: tName, required: true}},
			keys: with(param{name: "every", typ: tCount, required: true, help: "free one folio in every N"}),
			check: func(c *call) error {
				if c.uint("every") == 0 {
					return fmt.Errorf("every=0: want 1 or more")
				}
				return nil
			},
			run: runFragment,
		},
		{
			name:   "pin",
			syntax: "pin REGION fraction=F [cpu=N|node=N]",
			help: "Takes a long-term pin on one folio in a fraction of the pageblocks that hold the region's pages, " +
				"spread evenly (io_uring fixed buffers, RDMA registrations): fraction=0.1 poisons every tenth block " +
				"for compaction.",
			pos:  []param{{name: "REGION", typ: tName, required: true}},
			keys: with(param{name: "fraction", typ: tFraction, required: true, help: "the share of the region's pageblocks to pin, in (0, 1]"}),
			run:  runPin,
		},
		{
			name:   "unpin",
			syntax: "unpin REGION [cpu=N|node=N]",
			help:   "Drops every long-term pin on the region's folios.",
			pos:    []param{{name: "REGION", typ: tName, required: true}},
			keys:   with(),
			run:    runUnpin,
		},
		{
			name:   "file",
			syntax: "file write|read|sync|unlink NAME ...",
			help:   "Page-cache files: buffered writes and reads, fdatasync and unlink.",
			subs: []*command{
				{
					name:   "write",
					syntax: "file write NAME size=SIZE [offset=SIZE] [gfp=MASK] [iomap=on] [sync=on] [cgroup=CG] [cpu=N|node=N]",
					help: "Writes size bytes at offset through the page cache, creating the file on first use: missing " +
						"pages are allocated with gfp (the mapping's mask, default GFP_HIGHUSER_MOVABLE) plus __GFP_WRITE and __GFP_COMP, as the page cache adds them, and every page written becomes dirty; " +
						"iomap=on asks for large folios as iomap_write_iter() does (fgf_set_order() of the bytes left in the write's 2 MiB chunk, " +
						"lowered to the index's alignment, then __filemap_get_folio_mpol()'s order loop, one order less at a time with __GFP_NORETRY); " +
						"without it every folio is order 0. sync=on then writes them back (fdatasync). A write the kernel cannot serve stops with a note.",
					pos: []param{{name: "NAME", typ: tName, required: true}},
					keys: with(
						param{name: "size", typ: tSize, required: true, help: "bytes to write"},
						param{name: "offset", typ: tSize, help: "where to write (default 0)"},
						gfpMapping,
						param{name: "iomap", typ: tBool, help: "large folios, as an iomap filesystem (XFS) asks for them"},
						param{name: "sync", typ: tBool, help: "fdatasync after writing"},
						param{name: "cgroup", typ: tCgroup, help: "the cgroup charged, when the write creates the file"},
					),
					run: runFileWrite,
				},
				{
					name:   "read",
					syntax: "file read NAME [size=SIZE] [offset=SIZE] [gfp=MASK] [cpu=N|node=N]",
					help: "Reads through the page cache (default: the whole file): cached pages are copied and marked " +
						"accessed, missing ones read from disk into new pages (a refault when reclaim evicted them).",
					pos: []param{{name: "NAME", typ: tName, required: true}},
					keys: with(
						param{name: "size", typ: tSize, help: "bytes to read (default: to the end)"},
						param{name: "offset", typ: tSize, help: "where to start (default 0)"},
						gfpMapping,
					),
					run: runFileRead,
				},
				{
					name:   "sync",
					syntax: "file sync NAME [cpu=N|node=N]",
					help:   "Writes the file's dirty pages back and waits (fdatasync).",
					pos:    []param{{name: "NAME", typ: tName, required: true}},
					keys:   with(),
					run:    runFileSync,
				},
				{
					name:   "unlink",
					syntax: "file unlink NAME [cpu=N|node=N]",
					help:   "Truncates and removes the file: its pages are freed and the name is free again.",
					pos:    []param{{name: "NAME", typ: tName, required: true}},
					keys:   with(),
					run:    runFileUnlink,
				},
			},
		},
		{
			name:   "slab",
			syntax: "slab alloc|free NAME ...",
			help:   "Slab caches as the page allocator sees them: whole slabs taken and given back.",
			subs: []*command{
				{
					name:   "alloc",
					syntax: "slab alloc NAME size=SIZE|slabs=N [order=N] [reclaimable=on] [gfp=MASK] [cgroup=CG] [cpu=N|node=N]",
					help: "Grows a slab cache (created on first use with its slab order, default 0, and " +
						"reclaimable=on for a SLAB_RECLAIM_ACCOUNT cache) by size bytes or by slabs slabs. Each slab is " +
						"allocate_slab(): the cache's order without reclaim first, then order 0 with gfp (default " +
						"GFP_KERNEL). Slab pages are unmovable (reclaimable: Reclaimable). If memory runs out the command " +
						"stops with a note.",
					pos: []param{{name: "NAME", typ: tName, required: true}},
					keys: with(append([]param{
						{name: "size", typ: tSize, help: "bytes of slabs to add"},
						{name: "slabs", typ: tCount, help: "slabs to add"},
						gfpDefault("GFP_KERNEL"),
					}, slabCacheParams...)...),
					check: sizeOrSlabs,
					run:   runSlabAlloc,
				},
				{
					name:   "free",
					syntax: "slab free NAME [every=N] [cpu=N|node=N]",
					help:   "Frees every Nth slab of the cache, oldest first (default every=1: all), which leaves the others' pageblocks half used.",
					pos:    []param{{name: "NAME", typ: tName, required: true}},
					keys:   with(param{name: "every", typ: tCount, help: "free one slab in every N (default 1)"}),
					run:    runSlabFree,
				},
			},
		},
		{
			name:   "alloc",
			syntax: "alloc NAME gfp=MASK [order=N] [count=N|all] [nid=N] [cpu=N|node=N]",
			help: "Raw page allocations (alloc_pages): count chunks (default 1) of 2^order pages with the mask, kept " +
				"under NAME until freed. count=all allocates until the first failure; otherwise a failure stops the " +
				"command with a note. nid prefers a node (alloc_pages_node); by default the CPU's node.",
			pos: []param{{name: "NAME", typ: tName, required: true}},
			keys: with(
				gfpRequired(),
				param{name: "order", typ: tOrder, help: "the chunk order (default 0)"},
				param{name: "count", typ: tCountAll, help: "how many chunks, or all (default 1)"},
				param{name: "nid", typ: tCount, help: "the preferred node"},
			),
			run: runAlloc,
		},
		{
			name:   "free",
			syntax: "free NAME [every=N] [cpu=N|node=N]",
			help:   "Frees every Nth chunk of an alloc handle in address order (default every=1: all).",
			pos:    []param{{name: "NAME", typ: tName, required: true}},
			keys:   with(param{name: "every", typ: tCount, help: "free one chunk in every N (default 1)"}),
			run:    runFree,
		},
		{
			name:   "drain",
			syntax: "drain",
			help:   "drain_all_pages(): every CPU's per-CPU lists go back to the buddy free lists, so /proc shows what is really free.",
			run:    runDrain,
		},
		{
			name:   "compact_memory",
			syntax: "compact_memory [cpu=N|node=N]",
			help:   "Compacts every zone of every node fully, as writing 1 to /proc/sys/vm/compact_memory does.",
			keys:   with(),
			run: func(in *Interp, c *call) error {
				return in.work(c, func(t *sim.Task) error { in.m.CompactMemory(t); return nil })
			},
		},
	}
}

func runRegion(in *Interp, c *call) error {
	name := c.pos[0]
	if err := in.canDefine(name); err != nil {
		return err
	}
	cg, err := in.cgroup(c.str("cgroup", "/"))
	if err != nil {
		return err
	}
	pages := sizePages(c.size("size"))
	if pages == 0 {
		return fmt.Errorf("size=0: a region needs at least one page")
	}
	var pol mm.Mempolicy
	if c.has("nodes") && !c.has("policy") {
		return fmt.Errorf("nodes= needs a policy=")
	}
	if c.has("policy") {
		spec := c.str("policy", "")
		if c.has("nodes") {
			if strings.Contains(spec, ":") {
				return fmt.Errorf("policy=%s names its nodes already; drop nodes=", spec)
			}
			spec += ":" + c.str("nodes", "")
		}
		if pol, err = mm.ParseMempolicy(spec, len(in.m.Nodes)); err != nil {
			return err
		}
	}
	r := in.m.NewAnonRegion(name, cg, pages)
	r.Madvised = c.str("madvise", "") == "hugepage"
	r.NoHugepage = c.str("madvise", "") == "nohugepage"
	r.Policy = pol
	return in.define(name, &regionObj{r: r})
}

func runFill(in *Interp, c *call) error {
	ro, err := in.region(c.pos[0])
	if err != nil {
		return err
	}
	r := ro.r
	want := r.Pages - r.Cursor
	if c.has("size") {
		want = min(want, sizePages(c.size("size")))
	}
	target := r.Cursor + want
	start := r.Cursor
	pin := c.flag("pin")
	oom := false
	err = in.work(c, func(t *sim.Task) error {
		for r.Cursor < target {
			res := in.m.FaultAnonNext(t, r, pin)
			if res.Pending {
				return nil
			}
			if !res.OK {
				oom = true
				break
			}
		}
		return nil
	})
	if oom {
		in.note("fill %s: out of memory after %d of %d pages", c.pos[0], r.Cursor-start, want)
	}
	return err
}

func runFragment(in *Interp, c *call) error {
	ro, err := in.region(c.pos[0])
	if err != nil {
		return err
	}
	return in.work(c, func(t *sim.Task) error {
		_, err := in.m.MadviseDontneed(t, ro.r.Owner, int(min(c.uint("every"), 1<<30)))
		return err
	})
}

func runPin(in *Interp, c *call) error {
	ro, err := in.region(c.pos[0])
	if err != nil {
		return err
	}
	return in.work(c, func(t *sim.Task) error {
		_, _, err := in.m.PinBlocks(t, ro.r.Owner, c.fraction("fraction"))
		return err
	})
}

func runUnpin(in *Interp, c *call) error {
	ro, err := in.region(c.pos[0])
	if err != nil {
		return err
	}
	return in.work(c, func(t *sim.Task) error { in.m.UnpinAll(t, ro.r.Owner); return nil })
}

// file returns a named file, creating it if create is set.
func (in *Interp) file(name string, create bool, c *call) (*mm.File, error) {
	if o, ok := in.objects[name]; ok {
		fo, isFile := o.(*fileObj)
		if !isFile {
			return nil, fmt.Errorf("%q is a %s, not a file", name, o.kind())
		}
		if c.has("cgroup") {
			return nil, fmt.Errorf("cgroup= is taken only when the write creates the file")
		}
		return fo.f, nil
	}
	if !create {
		_, err := in.lookup(name, "file")
		return nil, err
	}
	if err := in.canDefine(name); err != nil {
		return nil, err
	}
	cg, err := in.cgroup(c.str("cgroup", "/"))
	if err != nil {
		return nil, err
	}
	f := in.m.NewFile(name, cg)
	return f, in.define(name, &fileObj{f: f})
}

func runFileWrite(in *Interp, c *call) error {
	f, err := in.file(c.pos[0], true, c)
	if err != nil {
		return err
	}
	off := c.size("offset") / mm.PAGE_SIZE
	pages := sizePages(c.size("size"))
	if index := mm.FileIndexBytes(off + pages); in.opts.MaxBytes > 0 && index > in.opts.MaxBytes {
		return fmt.Errorf("a write ending at %s needs %s for the file's page-cache index, over the memory budget of %s",
			mm.FormatBytes(min(off+pages, math.MaxUint64/mm.PAGE_SIZE)*mm.PAGE_SIZE), mm.FormatBytes(index), mm.FormatBytes(in.opts.MaxBytes))
	}
	gfp := c.gfp("gfp", mm.GFP_HIGHUSER_MOVABLE)
	var done uint64
	err = in.work(c, func(t *sim.Task) error {
		if c.flag("iomap") {
			done += in.m.IomapFileBufferedWrite(t, f, off+done, pages-done, gfp)
		} else {
			done += in.m.FileWrite(t, f, off+done, pages-done, gfp)
		}
		if in.m.AllocPending(t) {
			return nil
		}
		if c.flag("sync") {
			in.m.FileSync(t, f)
		}
		return nil
	})
	if err == nil && done < pages {
		in.note("file write %s: out of memory after %d of %d pages", c.pos[0], done, pages)
	}
	return err
}

func runFileRead(in *Interp, c *call) error {
	f, err := in.file(c.pos[0], false, c)
	if err != nil {
		return err
	}
	off := c.size("offset") / mm.PAGE_SIZE
	pages := f.Size - min(f.Size, off)
	if c.has("size") {
		pages = min(pages, sizePages(c.size("size")))
	}
	gfp := c.gfp("gfp", mm.GFP_HIGHUSER_MOVABLE)
	var done uint64
	return in.work(c, func(t *sim.Task) error {
		d, _ := in.m.FileRead(t, f, off+done, pages-done, gfp)
		done += d
		return nil
	})
}

func runFileSync(in *Interp, c *call) error {
	f, err := in.file(c.pos[0], false, c)
	if err != nil {
		return err
	}
	return in.work(c, func(t *sim.Task) error { in.m.FileSync(t, f); return nil })
}

func runFileUnlink(in *Interp, c *call) error {
	f, err := in.file(c.pos[0], false, c)
	if err != nil {
		return err
	}
	if err := in.work(c, func(t *sim.Task) error { in.m.FileUnlink(t, f); return nil }); err != nil {
		return err
	}
	in.forget(c.pos[0])
	return nil
}

// forget removes a named object.
func (in *Interp) forget(name string) {
	delete(in.objects, name)
	for i, n := range in.names {
		if n == name {
			in.names = append(in.names[:i], in.names[i+1:]...)
			break
		}
	}
}

// slabCache returns the slab cache called name, creating it on first use
// from the call's slabCacheParams; on an existing cache they must agree
// with it.
func (in *Interp) slabCache(c *call, name string) (*mm.SlabCache, error) {
	if o, ok := in.objects[name]; ok {
		so, isSlab := o.(*slabObj)
		if !isSlab {
			return nil, fmt.Errorf("%q is a %s, not a slab cache", name, o.kind())
		}
		if so.objs != nil {
			return nil, fmt.Errorf("slab cache %s holds objects (slabcycle objsize=): only its churn allocates and frees its slabs", name)
		}
		cache := so.c
		if c.has("order") && c.order("order", 0) != cache.Order {
			return nil, fmt.Errorf("slab cache %s has order %d; order= is taken only when it is created", name, cache.Order)
		}
		if c.has("reclaimable") && c.flag("reclaimable") != cache.Reclaimable {
			return nil, fmt.Errorf("slab cache %s has reclaimable=%s; reclaimable= is taken only when it is created", name, onOff(cache.Reclaimable))
		}
		if c.has("cgroup") {
			return nil, fmt.Errorf("cgroup= is taken only when the cache is created")
		}
		return cache, nil
	}
	if err := in.canDefine(name); err != nil {
		return nil, err
	}
	cg, err := in.cgroup(c.str("cgroup", "/"))
	if err != nil {
		return nil, err
	}
	cache := in.m.NewSlabCache(name, cg, c.order("order", 0), c.flag("reclaimable"))
	if err := in.define(name, &slabObj{c: cache}); err != nil {
		return nil, err
	}
	return cache, nil
}

func runSlabAlloc(in *Interp, c *call) error {
	name := c.pos[0]
	cache, err := in.slabCache(c, name)
	if err != nil {
		return err
	}
	n, err := slabCount(c, cache)
	if err != nil {
		return err
	}
	gfp := c.gfp("gfp", mm.GFP_KERNEL)
	var got uint64
	err = in.work(c, func(t *sim.Task) error {
		for ; got < n; got++ {
			pfn := in.m.AllocateSlab(t, cache, gfp, -1)
			if in.m.AllocPending(t) {
				return nil
			}
			if pfn == mm.NilPFN {
				break
			}
		}
		return nil
	})
	if err == nil && got < n {
		in.note("slab alloc %s: out of memory after %d of %d slabs", name, got, n)
	}
	return err
}

func runSlabFree(in *Interp, c *call) error {
	o, err := in.lookup(c.pos[0], "slab")
	if err != nil {
		return err
	}
	if o.(*slabObj).objs != nil {
		return fmt.Errorf("slab cache %s holds objects (slabcycle objsize=): only its churn allocates and frees its slabs", c.pos[0])
	}
	every := 1
	if c.has("every") {
		every = int(min(max(c.uint("every"), 1), 1<<30))
	}
	return in.work(c, func(t *sim.Task) error { in.m.FreeSlabs(t, o.(*slabObj).c, every); return nil })
}

func runAlloc(in *Interp, c *call) error {
	name := c.pos[0]
	order := c.order("order", 0)
	gfp := c.gfp("gfp", 0)
	var h *chunksObj
	if o, ok := in.objects[name]; ok {
		co, isChunks := o.(*chunksObj)
		if !isChunks {
			return fmt.Errorf("%q is a %s, not an allocation handle", name, o.kind())
		}
		if co.order != order {
			return fmt.Errorf("%s holds order-%d chunks; allocate order %d under another name", name, co.order, order)
		}
		h = co
	} else {
		h = &chunksObj{gfp: gfp, order: order}
		if err := in.define(name, h); err != nil {
			return err
		}
	}
	nid := -1
	if c.has("nid") {
		n, err := in.node(c.uint("nid"))
		if err != nil {
			return fmt.Errorf("nid=%d: the machine has nodes 0 to %d", c.uint("nid"), len(in.m.Nodes)-1)
		}
		nid = n.ID
	}
	all := c.str("count", "") == "all"
	count := uint64(1)
	if c.has("count") && !all {
		count = c.uint("count")
	}
	var got uint64
	failed := false
	err := in.work(c, func(t *sim.Task) error {
		for all || got < count {
			pfn := in.m.AllocPages(t, gfp, order, nid, 0)
			if in.m.AllocPending(t) {
				return nil
			}
			if pfn == mm.NilPFN {
				failed = true
				break
			}
			h.pfns = append(h.pfns, pfn)
			got++
		}
		return nil
	})
	if failed && !all {
		h.failed++
		in.note("alloc %s: allocation %d of %d failed (order %d, %s)", name, got+1, count, order, gfp)
	}
	return err
}

func runFree(in *Interp, c *call) error {
	o, err := in.lookup(c.pos[0], "allocation")
	if err != nil {
		return err
	}
	h := o.(*chunksObj)
	every := uint64(1)
	if c.has("every") {
		every = max(c.uint("every"), 1)
	}
	sortPFNs(h.pfns)
	return in.work(c, func(t *sim.Task) error {
		kept := h.pfns[:0]
		for i, pfn := range h.pfns {
			if uint64(i+1)%every != 0 {
				kept = append(kept, pfn)
				continue
			}
			in.m.FreePages(t, pfn, h.order)
		}
		h.pfns = kept
		return nil
	})
}

func runDrain(in *Interp, c *call) error {
	for cpu := 0; cpu < in.m.NrCPUs(); cpu++ {
		if err := in.onCPU(cpu, func(t *sim.Task) error { in.m.DrainLocalPages(t); return nil }); err != nil {
			return err
		}
	}
	return nil
}
