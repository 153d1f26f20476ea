package script

// cmd_run.go: tasks and time (task, run, invariants, check).

import (
	"fmt"
	"strings"

	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/sim"
	"github.com/pagesim/pagesim/engine/workload"
)

// program is a workload a task can run.
type program struct {
	name string
	help string
	args []param
	// check is an extra static check of the program's arguments.
	check func(c *call) error
	// start builds the program from the call.
	start func(in *Interp, c *call) (sim.Program, func() workload.Progress, func() []field, error)
}

var taskParams = []param{
	{name: "cpu", typ: tCount, help: "run on this CPU only"},
	{name: "cpus", typ: tList, help: "run on these CPUs, such as 0-3"},
	{name: "node", typ: tCount, help: "run on this node's CPUs"},
	{name: "start", typ: tDuration, help: "start this long from now (default: now)"},
}

func runCommands() []*command {
	return []*command{
		{
			name:   "task",
			syntax: "task NAME PROGRAM [ARG=VALUE]... [cpu=N|cpus=LIST|node=N] [start=DURATION]",
			help: "Starts a task that runs a workload program in the background, interleaved with kswapd, kcompactd " +
				"and the other tasks once time runs. Programs: " + programNames() + ".",
			pos: []param{
				{name: "NAME", typ: tName, required: true},
				{name: "PROGRAM", typ: tText, required: true},
			},
			keys:    taskParams,
			keysFor: programParams,
			check: func(c *call) error {
				n := 0
				for _, k := range []string{"cpu", "cpus", "node"} {
					if c.has(k) {
						n++
					}
				}
				if n > 1 {
					return fmt.Errorf("give one of cpu=, cpus= and node=")
				}
				if p := lookupProgram(c.pos[1]); p.check != nil {
					return p.check(c)
				}
				return nil
			},
			run: runTask,
		},
		{
			name:   "run",
			syntax: "run DURATION | run until=TASK-done|all-done [max=DURATION]",
			help: "Advances simulated time: by DURATION, or until the named task (or every task started with task) " +
				"has ended, at most max (default 1h) later; not ending by then is an error.",
			pos: []param{{name: "DURATION", typ: tDuration}},
			keys: []param{
				{name: "until", typ: tText, help: "TASK-done or all-done"},
				{name: "max", typ: tDuration, help: "give up after this long (default 1h)"},
			},
			check: func(c *call) error {
				if (len(c.pos) == 1) == c.has("until") {
					return fmt.Errorf("give a DURATION or until=")
				}
				if c.has("max") && !c.has("until") {
					return fmt.Errorf("max= goes with until=")
				}
				asked := c.kv["max"]
				if len(c.pos) == 1 {
					asked = c.pos[0]
				}
				if d, err := parseDuration(asked); err == nil && d > maxRunAhead {
					return fmt.Errorf("%s is longer than %s, the most one run advances (an idle machine costs about 2 ms of CPU a simulated hour, a busy one far more): split it", asked, formatDuration(maxRunAhead))
				}
				if c.has("until") {
					u := c.str("until", "")
					if u != "all-done" && (!strings.HasSuffix(u, "-done") || checkName(strings.TrimSuffix(u, "-done")) != nil) {
						return fmt.Errorf("until=%s: want TASK-done or all-done", u)
					}
				}
				return nil
			},
			run: runRun,
		},
		{
			name:   "invariants",
			syntax: "invariants on|off",
			help: "With on, the machine's consistency check (every page accounted for once, buddy alignment, " +
				"free-list and LRU counters) runs after every simulated event; a broken invariant stops the script.",
			pos: []param{{name: "on|off", typ: tBool, required: true}},
			run: func(in *Interp, c *call) error {
				in.invariants, _ = parseBool(c.pos[0])
				return nil
			},
		},
		{
			name:   "check",
			syntax: "check",
			help:   "Runs the machine's consistency check now; a broken invariant stops the script.",
			run: func(in *Interp, c *call) error {
				if err := in.m.CheckInvariants(); err != nil {
					return in.invariantError("at check", err)
				}
				return nil
			},
		},
	}
}

var programs = []*program{
	{
		name: "fault",
		help: "faults a region in address order, batch pages per step (default: to the next 2 MiB), optionally pinned",
		args: []param{
			{name: "region", typ: tName, required: true, help: "the region to fault"},
			{name: "size", typ: tSize, help: "how much to fault (default: the rest of the region)"},
			{name: "pin", typ: tBool, help: "fault through FOLL_LONGTERM pins"},
			{name: "batch", typ: tCount, help: "pages per step"},
			{name: "interval", typ: tDuration, help: "pause between steps"},
		},
		start: startFault,
	},
	{
		name: "qemu",
		help: "qemu mapping guest RAM with vfio: faults the region 2 MiB at a time, pinning it (pin=off: only touching)",
		args: []param{
			{name: "region", typ: tName, required: true, help: "the guest RAM"},
			{name: "pin", typ: tBool, help: "vfio pins every page (default on)"},
		},
		start: startQemu,
	},
	{
		name: "write",
		help: "writes a file through the page cache, chunk bytes per step; loop=on repeats, unlink=on removes it after each pass",
		args: []param{
			{name: "file", typ: tName, required: true, help: "the file (created if new)"},
			{name: "size", typ: tSize, required: true, help: "bytes per pass"},
			{name: "chunk", typ: tSize, help: "bytes per step (default 1M)"},
			gfpMapping,
			{name: "sync", typ: tBool, help: "fdatasync after each pass"},
			{name: "unlink", typ: tBool, help: "truncate the file after each pass"},
			{name: "loop", typ: tBool, help: "start over after each pass"},
			{name: "interval", typ: tDuration, help: "pause between steps"},
			{name: "cgroup", typ: tCgroup, help: "the cgroup charged, when the file is new"},
		},
		start: startWrite,
	},
	{
		name: "read",
		help: "reads a file through the page cache, chunk bytes per step; loop=on keeps reading it",
		args: []param{
			{name: "file", typ: tName, required: true, help: "the file"},
			{name: "chunk", typ: tSize, help: "bytes per step (default 1M)"},
			gfpMapping,
			{name: "loop", typ: tBool, help: "start over at the end"},
			{name: "interval", typ: tDuration, help: "pause between steps"},
		},
		start: startRead,
	},
	{
		name: "randread",
		help: "reads a file at random, as fio's randread or a database's buffer reads over a data set larger than memory: each step reads batch chunks at chunk-aligned offsets drawn at random, one after the other; missing pages are read from disk into new page-cache pages",
		args: []param{
			{name: "file", typ: tName, required: true, help: "the file"},
			{name: "chunk", typ: tSize, help: "bytes per read (default 64K)"},
			{name: "batch", typ: tCount, help: "reads per step (default 1)"},
			gfpMapping,
			{name: "interval", typ: tDuration, help: "pause between steps"},
		},
		start: startRandRead,
	},
	{
		name: "slab",
		help: "grows a slab cache to size (or slabs) and then turns it over, freeing the oldest batch and allocating a new one each step",
		args: append([]param{
			{name: "cache", typ: tName, required: true, help: "the slab cache (created if new)"},
			{name: "size", typ: tSize, help: "the cache's working size"},
			{name: "slabs", typ: tCount, help: "the cache's working size in slabs"},
			{name: "batch", typ: tCount, help: "slabs per step (default 1)"},
			gfpDefault("GFP_KERNEL"),
			{name: "steps", typ: tCount, help: "stop after this many steps (default: never)"},
			{name: "interval", typ: tDuration, help: "pause between steps"},
		}, slabCacheParams...),
		check: sizeOrSlabs,
		start: startSlab,
	},
	{
		name: "slabcycle",
		help: "grows a slab cache to size (or slabs), then frees slabs drawn at random until low of it is left, and again, as the dentry and inode caches do while files are created, deleted and shrunk: the freed slabs leave free chunks inside the unmovable and reclaimable pageblocks the cache took. " +
			"With objsize=, the cache holds objects and the churn allocates and frees objects (kmem_cache_alloc, kmem_cache_free): they die at random, and a slab goes back only when its last object is gone and the partial list holds min_partial slabs (__slab_free), so a cache shrunk to half its objects keeps most of its slabs",
		args: append([]param{
			{name: "cache", typ: tName, required: true, help: "the slab cache (created if new; new with objsize=)"},
			{name: "size", typ: tSize, help: "the cache's peak (of objects with objsize=)"},
			{name: "slabs", typ: tCount, help: "the cache's peak in slabs"},
			{name: "low", typ: tFraction, help: "the share of the peak it shrinks to (default 0.5)"},
			{name: "batch", typ: tCount, help: "slabs (objects with objsize=) allocated or freed per step (default 1)"},
			{name: "objsize", typ: tSize, help: "the objects' size, 8 bytes to 32K: churn objects in a new cache whose slab order SLUB picks for the size on the machine's CPUs (calculate_order; order= is refused)"},
			{name: "shrinker", typ: tBool, help: "with objsize= and reclaimable=on: the objects are unused inodes on the superblock's LRU, which reclaim (shrink_slab) frees oldest first; needs __GFP_FS"},
			gfpDefault("GFP_KERNEL"),
			{name: "interval", typ: tDuration, help: "pause between steps"},
		}, slabCacheParams...),
		check: sizeOrSlabs,
		start: startSlabCycle,
	},
	{
		name: "pin",
		help: "pins one folio in a fraction of a region's pageblocks, holds the pins, then unpins them",
		args: []param{
			{name: "region", typ: tName, required: true, help: "the region whose pages to pin"},
			{name: "fraction", typ: tFraction, required: true, help: "share of its pageblocks to pin"},
			{name: "hold", typ: tHold, help: "how long to keep the pins (default forever)"},
		},
		start: startPin,
	},
	{
		name: "build",
		help: "seed 002's build-like worker on a file system the workers share: create a 1-64K file (empty on tmpfs), read an earlier one back, unlink one in five, fdatasync every 50 creates (btrfs)",
		args: []param{
			{name: "fs", typ: tName, required: true, help: "the file system (created if new)"},
			{name: "type", typ: tChoice, choices: []string{"btrfs", "tmpfs"}, help: "the file system's type, when it is created (default btrfs)"},
			{name: "cgroup", typ: tCgroup, help: "the cgroup its dentries, inodes and data are charged to, when it is created (default /)"},
			{name: "commit", typ: tDuration, help: "btrfs's transaction interval, when it is created (default 30s)"},
			{name: "files", typ: tCount, help: "stop after this many creates (default: never)"},
		},
		start: startBuild,
	},
	{
		name: "pgbench",
		help: "seed 000's PostgreSQL under pgbench simple-update, one process of a server the tasks share: a client's backend (its transaction's CPU, page-table faults, 8 KiB data-file reads and writes, WAL inserted and flushed by group commit through iomap's folio order loop), the checkpointer or the background writer",
		args: []param{
			{name: "server", typ: tName, required: true, help: "the server (created if new)"},
			{name: "role", typ: tChoice, choices: []string{"session", "checkpointer", "bgwriter"}, help: "the process (default session)"},
			{name: "txns", typ: tCount, help: "a session ends after this many commits (default: never); the checkpointer and the background writer end with the server's last session"},
			{name: "accounts", typ: tSize, help: "pgbench_accounts' size, when the server is created (default 16M)"},
			{name: "shared_buffers", typ: tSize, help: "shared_buffers, when the server is created (default 32M; not allocated: a region can stand for it)"},
			{name: "txn", typ: tDuration, help: "a transaction's CPU time, when the server is created (default 600us, an estimate)"},
			{name: "max_write", typ: tSize, help: "the largest WAL pwrite, when the server is created (default 64M)"},
		},
		start: startPgBench,
	},
	{
		name: "alloc",
		help: "raw allocations of one mask and order, one per step, each freed hold later",
		args: []param{
			gfpRequired(),
			{name: "order", typ: tOrder, help: "the chunk order (default 0)"},
			{name: "count", typ: tCount, help: "how many allocations (default: until stopped)"},
			{name: "hold", typ: tHold, help: "how long each chunk is kept (default 0: until the next step)"},
			{name: "interval", typ: tDuration, help: "pause between allocations"},
			{name: "nid", typ: tCount, help: "the preferred node"},
		},
		start: startAllocTask,
	},
}

func programNames() string {
	var out []string
	for _, p := range programs {
		out = append(out, p.name)
	}
	return strings.Join(out, ", ")
}

func lookupProgram(name string) *program {
	for _, p := range programs {
		if p.name == name {
			return p
		}
	}
	return nil
}

func programParams(pos []string) ([]param, error) {
	if len(pos) < 2 {
		return nil, nil
	}
	p := lookupProgram(pos[1])
	if p == nil {
		var names []string
		for _, p := range programs {
			names = append(names, p.name)
		}
		msg := fmt.Sprintf("unknown program %q (have %s)", pos[1], programNames())
		if s := suggest(pos[1], names); s != "" {
			msg = fmt.Sprintf("unknown program %q (did you mean %q?)", pos[1], s)
		}
		return nil, fmt.Errorf("%s", msg)
	}
	return p.args, nil
}

func runTask(in *Interp, c *call) error {
	name := c.pos[0]
	if err := in.canDefine(name); err != nil {
		return err
	}
	p := lookupProgram(c.pos[1])
	prog, status, extra, err := p.start(in, c)
	if err != nil {
		return err
	}
	cpu := 0
	var allowed []int
	switch {
	case c.has("cpu"):
		cpu = int(c.uint("cpu"))
		if cpu >= in.m.NrCPUs() {
			return fmt.Errorf("cpu=%d: the machine has CPUs 0 to %d", cpu, in.m.NrCPUs()-1)
		}
		allowed = []int{cpu}
	case c.has("cpus"):
		list, err := parseList(c.str("cpus", ""), in.m.NrCPUs())
		if err != nil {
			return fmt.Errorf("cpus=%v", err)
		}
		allowed, cpu = list, list[0]
	case c.has("node"):
		n, err := in.node(c.uint("node"))
		if err != nil {
			return err
		}
		if len(n.CPUs) == 0 {
			return fmt.Errorf("node=%d has no CPUs", n.ID)
		}
		allowed, cpu = n.CPUs, n.CPUs[0]
	}
	start := in.m.World.Now() + sim.Time(c.duration("start"))
	t := in.m.World.NewTask(name, cpu, prog, start)
	t.AllowedCPUs = allowed
	return in.define(name, &taskObj{t: t, program: p.name, status: status, extra: extra})
}

func progressOf(p *workload.Progress) func() workload.Progress {
	return func() workload.Progress { return *p }
}

func startFault(in *Interp, c *call) (sim.Program, func() workload.Progress, func() []field, error) {
	ro, err := in.region(c.str("region", ""))
	if err != nil {
		return nil, nil, nil, err
	}
	f := &workload.Faulter{M: in.m, Region: ro.r, Pin: c.flag("pin"), Batch: c.uint("batch"), Interval: sim.Time(c.duration("interval"))}
	if c.has("size") {
		f.Pages = max(sizePages(c.size("size")), 1)
	}
	return f, progressOf(&f.Progress), nil, nil
}

func startQemu(in *Interp, c *call) (sim.Program, func() workload.Progress, func() []field, error) {
	ro, err := in.region(c.str("region", ""))
	if err != nil {
		return nil, nil, nil, err
	}
	pin := true
	if c.has("pin") {
		pin = c.flag("pin")
	}
	q := &workload.QemuVfio{M: in.m, Region: ro.r, Pin: pin}
	return q, func() workload.Progress { return q.Progress }, nil, nil
}

func startWrite(in *Interp, c *call) (sim.Program, func() workload.Progress, func() []field, error) {
	f, err := in.file(c.str("file", ""), true, c)
	if err != nil {
		return nil, nil, nil, err
	}
	w := &workload.CacheWriter{M: in.m, File: f, Pages: max(sizePages(c.size("size")), 1), GFP: c.gfp("gfp", mm.GFP_HIGHUSER_MOVABLE),
		Sync: c.flag("sync"), Unlink: c.flag("unlink"), Loop: c.flag("loop"), Interval: sim.Time(c.duration("interval"))}
	if c.has("chunk") {
		w.Chunk = max(sizePages(c.size("chunk")), 1)
	}
	extra := func() []field { return []field{{"passes", uintNum(w.Passes)}} }
	return w, progressOf(&w.Progress), extra, nil
}

func startRead(in *Interp, c *call) (sim.Program, func() workload.Progress, func() []field, error) {
	f, err := in.file(c.str("file", ""), false, c)
	if err != nil {
		return nil, nil, nil, err
	}
	r := &workload.CacheReader{M: in.m, File: f, GFP: c.gfp("gfp", mm.GFP_HIGHUSER_MOVABLE), Loop: c.flag("loop"),
		Interval: sim.Time(c.duration("interval"))}
	if c.has("chunk") {
		if c.size("chunk") == 0 {
			return nil, nil, nil, fmt.Errorf("chunk=0: give at least one byte")
		}
		r.Chunk = sizePages(c.size("chunk"))
	}
	extra := func() []field { return []field{{"passes", uintNum(r.Passes)}, {"misses", uintNum(r.Misses)}} }
	return r, progressOf(&r.Progress), extra, nil
}

func startRandRead(in *Interp, c *call) (sim.Program, func() workload.Progress, func() []field, error) {
	f, err := in.file(c.str("file", ""), false, c)
	if err != nil {
		return nil, nil, nil, err
	}
	chunk, chunkBytes := uint64(16), uint64(64<<10)
	if c.has("chunk") {
		chunkBytes = c.size("chunk")
		if chunkBytes == 0 {
			return nil, nil, nil, fmt.Errorf("chunk=0: give at least one byte")
		}
		chunk = sizePages(chunkBytes)
	}
	if f.Size < chunk {
		return nil, nil, nil, fmt.Errorf("file %s holds %s, less than one chunk of %s", c.str("file", ""), mm.FormatBytes(f.Size*mm.PAGE_SIZE), mm.FormatBytes(chunkBytes))
	}
	batch, err := c.batch()
	if err != nil {
		return nil, nil, nil, err
	}
	r := &workload.RandomReader{M: in.m, File: f, Chunk: chunk, Batch: batch,
		GFP: c.gfp("gfp", mm.GFP_HIGHUSER_MOVABLE), Rand: in.m.World.Stream("workload/randread#" + c.pos[0]),
		Interval: sim.Time(c.duration("interval"))}
	extra := func() []field { return []field{{"misses", uintNum(r.Misses)}} }
	return r, progressOf(&r.Progress), extra, nil
}

func startSlabCycle(in *Interp, c *call) (sim.Program, func() workload.Progress, func() []field, error) {
	batch, err := c.batch()
	if err != nil {
		return nil, nil, nil, err
	}
	if c.has("objsize") {
		return in.startObjectCycle(c, batch)
	}
	if c.has("shrinker") {
		return nil, nil, nil, fmt.Errorf("shrinker= needs objsize=: a shrinker frees objects, and whole slabs have none")
	}
	cache, hi, err := in.slabsOf(c)
	if err != nil {
		return nil, nil, nil, err
	}
	lo, err := cycleLow(c, hi, "slabs")
	if err != nil {
		return nil, nil, nil, err
	}
	s := &workload.SlabCycler{M: in.m, Cache: cache, GFP: c.gfp("gfp", mm.GFP_KERNEL), Lo: lo, Hi: hi,
		Batch: batch, Rand: in.m.World.Stream("workload/slabcycle#" + c.pos[0]),
		Interval: sim.Time(c.duration("interval"))}
	extra := func() []field {
		return []field{{"cycles", uintNum(s.Cycles)}, {"slabs", intNum(int64(cache.NrSlabs()))}}
	}
	return s, progressOf(&s.Progress), extra, nil
}

// cycleLow is a slabcycle's low end: low= (default 0.5) of its peak hi,
// counted in what (slabs or objects); an error if it leaves nothing to
// free.
func cycleLow(c *call, hi int, what string) (int, error) {
	low := 0.5
	if c.has("low") {
		low = c.fraction("low")
	}
	lo := int(float64(hi) * low)
	if lo >= hi {
		return 0, fmt.Errorf("low=%g leaves nothing to free from a peak of %d %s", low, hi, what)
	}
	return lo, nil
}

// maxObjects is the most objects an object churn keeps (a record of 16
// bytes and an index each on the host, 80 MiB at most): far more than the
// caches of any machine the memory budget boots hold at the sizes the
// scenarios use (seed 001's two caches hold 600,000 at the seed's 7 GiB).
const maxObjects = 1 << 22

// startObjectCycle is slabcycle with objsize=: a workload.ObjectCycler on
// a new cache.
func (in *Interp) startObjectCycle(c *call, batch int) (sim.Program, func() workload.Progress, func() []field, error) {
	name := c.str("cache", "")
	objSize := c.size("objsize")
	switch {
	case objSize < 8 || objSize > mm.PAGE_SIZE<<mm.PAGE_ALLOC_COSTLY_ORDER:
		return nil, nil, nil, fmt.Errorf("objsize=%s: give 8 bytes to %s (one object in a slab of order %d)", c.str("objsize", ""),
			mm.FormatBytes(mm.PAGE_SIZE<<mm.PAGE_ALLOC_COSTLY_ORDER), mm.PAGE_ALLOC_COSTLY_ORDER)
	case c.has("order"):
		return nil, nil, nil, fmt.Errorf("order= and objsize= do not go together: SLUB picks the slab order for the object size (calculate_order)")
	case c.has("cgroup"):
		return nil, nil, nil, fmt.Errorf("cgroup= and objsize= do not go together: an object churn's cache is the root's")
	case c.flag("shrinker") && !c.flag("reclaimable"):
		return nil, nil, nil, fmt.Errorf("shrinker=on needs reclaimable=on: only SLAB_RECLAIM_ACCOUNT caches (dentries, inodes) have a superblock shrinker")
	}
	if o, ok := in.objects[name]; ok {
		return nil, nil, nil, fmt.Errorf("%q is already a %s: objsize= makes a new cache", name, o.kind())
	}
	if err := in.canDefine(name); err != nil {
		return nil, nil, nil, err
	}
	perSlab := (mm.PAGE_SIZE << mm.SlubOrder(objSize, in.m.NrCPUs())) / objSize
	var hi uint64
	what := "slabs=" + c.str("slabs", "")
	if c.has("size") {
		what = "size=" + c.str("size", "")
		hi = c.size("size") / objSize
	} else {
		hi = c.uint("slabs")
		if hi > maxObjects/perSlab {
			hi = maxObjects + 1
		} else {
			hi *= perSlab
		}
	}
	switch {
	case hi == 0:
		return nil, nil, nil, fmt.Errorf("%s holds no object of %s: give at least one", what, mm.FormatBytes(objSize))
	case hi > maxObjects:
		return nil, nil, nil, fmt.Errorf("%s is more than %d objects of %s; give a smaller peak or larger objects", what, maxObjects, mm.FormatBytes(objSize))
	}
	lo, err := cycleLow(c, int(hi), "objects")
	if err != nil {
		return nil, nil, nil, err
	}
	s := workload.NewObjectCycler(in.m, name, objSize, c.flag("reclaimable"), c.gfp("gfp", mm.GFP_KERNEL), lo, int(hi), batch,
		in.m.World.Stream("workload/slabcycle#"+c.pos[0]), sim.Time(c.duration("interval")), c.flag("shrinker"))
	if err := in.define(name, &slabObj{c: s.SlabCache(), objs: s}); err != nil {
		return nil, nil, nil, err
	}
	extra := func() []field {
		return []field{{"cycles", uintNum(s.Cycles)}, {"slabs", intNum(int64(s.SlabCache().NrSlabs()))}, {"objects", intNum(int64(s.Objects()))}}
	}
	return s, progressOf(&s.Progress), extra, nil
}

// slabsOf is a slab task's cache and its count of slabs (slabCount).
func (in *Interp) slabsOf(c *call) (*mm.SlabCache, int, error) {
	cache, err := in.slabCache(c, c.str("cache", ""))
	if err != nil {
		return nil, 0, err
	}
	n, err := slabCount(c, cache)
	return cache, int(n), err
}

// maxSlabs is the most slabs a slab command or task takes: 2^30, far
// beyond any machine the memory budget boots, and small enough that a
// task's slice of them cannot overflow an int.
const maxSlabs = 1 << 30

// slabCount is slabs=, or size= in slabs of the cache's order rounded
// up. No slab at all (slabs=0, size=0) and more than maxSlabs are
// refused rather than turned into 1 or maxSlabs.
func slabCount(c *call, cache *mm.SlabCache) (uint64, error) {
	n, what := c.uint("slabs"), "slabs="+c.str("slabs", "")
	if c.has("size") {
		// Rounded up without adding per-1 first, which wraps near 2^64.
		per, size := cache.Order.Pages()*mm.PAGE_SIZE, c.size("size")
		n, what = size/per, "size="+c.str("size", "")
		if size%per != 0 {
			n++
		}
	}
	switch {
	case n == 0:
		return 0, fmt.Errorf("%s: give at least one slab", what)
	case n > maxSlabs:
		return 0, fmt.Errorf("%s is %d slabs of order %d; at most %d are taken", what, n, cache.Order, maxSlabs)
	}
	return n, nil
}

// batch is a task's batch=: 1 when not given; 0 and more than 2^20 are
// refused rather than turned into 1 or 2^20.
func (c *call) batch() (int, error) {
	if !c.has("batch") {
		return 1, nil
	}
	n := c.uint("batch")
	if n == 0 || n > 1<<20 {
		return 0, fmt.Errorf("batch=%s: give 1 to %d", c.str("batch", ""), 1<<20)
	}
	return int(n), nil
}

func startSlab(in *Interp, c *call) (sim.Program, func() workload.Progress, func() []field, error) {
	batch, err := c.batch()
	if err != nil {
		return nil, nil, nil, err
	}
	cache, slabs, err := in.slabsOf(c)
	if err != nil {
		return nil, nil, nil, err
	}
	s := &workload.SlabChurner{M: in.m, Cache: cache, GFP: c.gfp("gfp", mm.GFP_KERNEL), Slabs: slabs,
		Batch: batch, Steps: c.uint("steps"), Interval: sim.Time(c.duration("interval"))}
	return s, progressOf(&s.Progress), nil, nil
}

func startPin(in *Interp, c *call) (sim.Program, func() workload.Progress, func() []field, error) {
	ro, err := in.region(c.str("region", ""))
	if err != nil {
		return nil, nil, nil, err
	}
	p := &workload.Pinner{M: in.m, Owner: ro.r.Owner, Fraction: c.fraction("fraction")}
	if h := c.str("hold", "forever"); h != "forever" {
		d, _ := parseDuration(h)
		if d == 0 {
			return nil, nil, nil, fmt.Errorf("hold=0: give a positive duration or forever")
		}
		p.Hold = d
	}
	extra := func() []field { return []field{{"pages", uintNum(p.Pages)}} }
	return p, progressOf(&p.Progress), extra, nil
}

func startBuild(in *Interp, c *call) (sim.Program, func() workload.Progress, func() []field, error) {
	fs, err := in.buildFS(c, c.str("fs", ""))
	if err != nil {
		return nil, nil, nil, err
	}
	w := &workload.BuildWorker{FS: fs, Rng: in.m.World.Stream("workload/build#" + c.pos[0]), Files: c.uint("files")}
	return w, progressOf(&w.Progress), nil, nil
}

// buildFS returns the build workers' file system of that name, mounting it
// on first use.
func (in *Interp) buildFS(c *call, name string) (*workload.BuildFS, error) {
	if o, ok := in.objects[name]; ok {
		fo, isFS := o.(*fsObj)
		if !isFS {
			return nil, fmt.Errorf("%q is a %s, not a file system", name, o.kind())
		}
		for _, a := range []string{"type", "cgroup", "commit"} {
			if c.has(a) {
				return nil, fmt.Errorf("%s= is taken only when the file system is created", a)
			}
		}
		return fo.fs, nil
	}
	if err := in.canDefine(name); err != nil {
		return nil, err
	}
	kind, err := workload.ParseFSKind(c.str("type", "btrfs"))
	if err != nil {
		return nil, err
	}
	cg, err := in.cgroup(c.str("cgroup", "/"))
	if err != nil {
		return nil, err
	}
	commit := sim.Time(c.duration("commit"))
	if c.has("commit") && commit <= 0 {
		return nil, fmt.Errorf("commit=0: give a positive interval")
	}
	now := in.m.World.Now()
	fs := workload.NewBuildFS(in.m, kind, cg, 0, now, commit)
	return fs, in.define(name, &fsObj{fs: fs})
}

func startPgBench(in *Interp, c *call) (sim.Program, func() workload.Progress, func() []field, error) {
	b, err := in.pgServer(c, c.str("server", ""))
	if err != nil {
		return nil, nil, nil, err
	}
	switch c.str("role", "session") {
	case "checkpointer":
		if c.has("txns") {
			return nil, nil, nil, fmt.Errorf("txns= is for role=session")
		}
		p := b.Checkpointer()
		return p, progressOf(workload.WriterProgress(p)), nil, nil
	case "bgwriter":
		if c.has("txns") {
			return nil, nil, nil, fmt.Errorf("txns= is for role=session")
		}
		p := b.BgWriter()
		return p, progressOf(workload.WriterProgress(p)), nil, nil
	}
	p, prog := b.SessionFor(0, c.uint("txns"))
	return p, progressOf(prog), nil, nil
}

// pgServer returns the pgbench server of that name, opening it on first
// use.
func (in *Interp) pgServer(c *call, name string) (*workload.PgBench, error) {
	if o, ok := in.objects[name]; ok {
		po, isPG := o.(*pgObj)
		if !isPG {
			return nil, fmt.Errorf("%q is a %s, not a pgbench server", name, o.kind())
		}
		for _, a := range []string{"accounts", "shared_buffers", "txn", "max_write"} {
			if c.has(a) {
				return nil, fmt.Errorf("%s= is taken only when the server is created", a)
			}
		}
		return po.b, nil
	}
	if err := in.canDefine(name); err != nil {
		return nil, err
	}
	accounts, shared, maxWrite := uint64(16<<20), uint64(32<<20), uint64(64<<20)
	if c.has("accounts") {
		accounts = c.size("accounts")
	}
	if c.has("shared_buffers") {
		shared = c.size("shared_buffers")
	}
	if c.has("max_write") {
		maxWrite = c.size("max_write")
	}
	const block = workload.BlockPages * mm.PAGE_SIZE
	if accounts < block || shared < block || maxWrite < block {
		return nil, fmt.Errorf("accounts=, shared_buffers= and max_write= take at least one 8K block")
	}
	if accounts > 1<<40 || shared > 1<<40 {
		return nil, fmt.Errorf("accounts= and shared_buffers= take at most 1T")
	}
	b := workload.OpenPgBench(in.m, in.m.World.Stream("workload/pgbench#"+name), accounts/block, shared/block)
	b.TxnCPU = workload.SimpleUpdateCPU
	if c.has("txn") {
		if b.TxnCPU = sim.Time(c.duration("txn")); b.TxnCPU <= 0 {
			return nil, fmt.Errorf("txn=0: give a positive time")
		}
	}
	b.WALRecordBytes = workload.SimpleUpdateWALBytes
	b.MaxWritePages = maxWrite / mm.PAGE_SIZE
	b.TouchesPerTxn = workload.SimpleUpdateTouches
	return b, in.define(name, &pgObj{b: b})
}

func startAllocTask(in *Interp, c *call) (sim.Program, func() workload.Progress, func() []field, error) {
	a := &workload.Allocator{M: in.m, GFP: c.gfp("gfp", 0), Order: c.order("order", 0), Nid: -1, Count: c.uint("count"),
		Interval: sim.Time(c.duration("interval"))}
	if c.has("nid") {
		n, err := in.node(c.uint("nid"))
		if err != nil {
			return nil, nil, nil, err
		}
		a.Nid = n.ID
	}
	if h := c.str("hold", "0s"); h == "forever" {
		a.Hold = -1
	} else {
		a.Hold, _ = parseDuration(h)
	}
	extra := func() []field { return []field{{"held", intNum(int64(a.Held()))}} }
	return a, progressOf(&a.Progress), extra, nil
}

// defaultRunMax bounds run until= when max= is not given.
const defaultRunMax = 3600 * sim.Second

// maxRunAhead bounds the simulated time one run command may ask for (its
// DURATION or max=), so that a typo such as 2500000h is refused before it
// runs instead of costing hours of CPU; longer runs are several commands.
const maxRunAhead = 1000 * 3600 * sim.Second

func runRun(in *Interp, c *call) error {
	w := in.m.World
	if len(c.pos) == 1 {
		d, _ := parseDuration(c.pos[0])
		_, err := in.advance(w.Now()+d, nil)
		return err
	}
	limit := defaultRunMax
	if c.has("max") {
		limit = sim.Time(c.duration("max"))
	}
	until := c.str("until", "")
	var tasks []*taskObj
	if until == "all-done" {
		for _, n := range in.namesOf("task") {
			tasks = append(tasks, in.objects[n].(*taskObj))
		}
	} else {
		o, err := in.lookup(strings.TrimSuffix(until, "-done"), "task")
		if err != nil {
			return err
		}
		tasks = append(tasks, o.(*taskObj))
	}
	done := func() bool {
		for _, t := range tasks {
			if !t.t.Exited() {
				return false
			}
		}
		return true
	}
	if done() {
		return nil
	}
	end := w.Now() + limit
	stopped, err := in.advance(end, done)
	if err != nil {
		return err
	}
	if !stopped {
		if until == "all-done" {
			return fmt.Errorf("until=all-done: tasks still running at %s s (max=%s)", w.Now(), formatDuration(limit))
		}
		return fmt.Errorf("until=%s: task %s is still running at %s s (max=%s)", until, strings.TrimSuffix(until, "-done"), w.Now(), formatDuration(limit))
	}
	return nil
}
