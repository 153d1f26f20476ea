package scenario

// nofrag_watermark.go is the scenario of seed 001 (Kiryl Shutsemau, "mm:
// make watermark checks honour ALLOC_NOFRAGMENT" v2, 2026): Dev Jain's
// benchmark, a process write-faulting about 1.3 GiB of anonymous memory in
// 64 KiB mTHP folios in a 7 GiB VM under memory pressure, with
// vm.defrag_mode=0 and =1, with and without the series.
//
// The machine is one node with an arm64 QEMU guest's zones (Dev Jain
// reported from arm.com): ZONE_DMA from 1 GiB to the 4 GiB line, ZONE_NORMAL
// above it; at a scale below 1 the line moves down in proportion, so a
// small VM keeps both big zones. arch=x86_64 gives an x86-64 guest's zones
// instead (a 16 MiB ZONE_DMA, ZONE_DMA32 below the PCI hole, ZONE_NORMAL
// above it). Only the 64 KiB mTHP size is enabled; THP defrag is the default (madvise) and the benchmark's
// region is MADV_HUGEPAGE, so its faults ask GFP_TRANSHUGE at order 4
// (docs/FIDELITY.md says why this mask).
//
// The pressure is two modelled workloads, started once page cache fills
// memory:
//   - a page-cache hog: `readers` tasks read files bigger than memory at
//     random, `read_kb` (64 KiB) at a time (workload.RandomReader), so reclaim is busy
//     and what it frees in movable pageblocks comes in small pieces;
//   - slab churn: a reclaimable cache (ext4_inode_cache: 1152-byte
//     objects) and an unmovable one (kmalloc-256) whose objects grow to a
//     peak and shrink to half of it, the objects dying in random order
//     (workload.ObjectCycler), as dentry and inode caches do when files
//     are created and deleted. The slabs have the order SLUB picks for
//     the size (order 3 and order 1 on 8 vCPUs), and a slab goes back to
//     the page allocator only when its last object is freed
//     (__slab_free), so a shrinking cache leaves half-used slabs more
//     than free pages. The reclaimable cache's objects are also unused
//     inodes on the superblock's LRU list (`shrinker`, default true):
//     reclaim's shrink_slab frees them oldest first, as
//     super_cache_scan does, which empties the oldest slabs whole.
//     Under defrag_mode those caches take whole pageblocks; what they
//     free inside unmovable and reclaimable blocks movable requests
//     below pageblock_order cannot take.
//
// The benchmark starts once the readers have read `warmup` times the VM's
// memory from disk, and the metrics are counted from then to its end.
//
// The variants switch the engine, nothing else: vm.defrag_mode, and the
// series' three switches (Patches.WatermarkCheckKnowsMigratetype is patch
// 1, Patches.HighOrderCheckHonoursNofragment patch 2,
// Patches.DirectReclaimToldNofragment patch 3). Every variant runs on the seed's
// v7.4-rc1 base: seed 000's costly __GFP_NORETRY rule is merged there
// (Patches.CostlyNoretryNoDirectReclaim), and a deferred direct compaction
// counts no compact_stall (Kernel.DeferredCompactNoStall).

import (
	"fmt"
	"strings"

	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/sim"
	"github.com/pagesim/pagesim/engine/workload"
)

func init() {
	register(&Spec{
		ID:    "nofrag-watermark",
		Title: "64K mTHP faults under pressure with vm.defrag_mode, and watermark checks that honour ALLOC_NOFRAGMENT",
		Seed:  "001",
		Patch: "mm: make watermark checks honour ALLOC_NOFRAGMENT v2, 3 patches (Kiryl Shutsemau, 2026)",
		Lore: []string{
			"https://lore.kernel.org/all/20261028132638.2560361-1-kirill@shutemov.name/",
			"https://lore.kernel.org/all/4aa14b41-9b89-494c-8825-55fffd5a541c@arm.com/",
			"https://lore.kernel.org/all/auCDnqJc7fsBpUW2@thinkstation/",
		},
		Summary: "With vm.defrag_mode=1 every allocation is ALLOC_NOFRAGMENT: a request below pageblock_order may not take " +
			"free pages from another migratetype's pageblock, only whole free blocks. Under memory pressure the large free " +
			"chunks sit in unmovable and reclaimable blocks, yet the high-order watermark check counts them: a 64K mTHP " +
			"fault's direct compaction returns COMPACT_SUCCESS from its up-front check without compacting (so it never " +
			"defers), and its direct reclaim stops at once (compaction_ready), so the fault falls back to 4K. In Dev Jain's " +
			"7G VM the faults stalled in compaction 18 times as often as with defrag_mode=0 and got a third of the folios. " +
			"Patches 1-2 give the check the request's migratetype and skip the lists it cannot take; patch 3 tells direct " +
			"reclaim the allocation is ALLOC_NOFRAGMENT.",
		SeedMachine: "a 7 GiB VM (Dev Jain's; likely arm64) with only 64K mTHP enabled, memory pressure, v7.4-rc1; medians of 15 runs",
		Params: []Param{
			rangeParam("mem_gb", "VM memory, GiB at the seed's scale", KindFloat, "7", 2, 64),
			choiceParam("arch", "the guest's zones: arm64 (ZONE_DMA below 4 GiB, ZONE_NORMAL above) or x86_64 (16 MiB ZONE_DMA, ZONE_DMA32 below the PCI hole, ZONE_NORMAL above)", "arm64", "arm64", "x86_64"),
			rangeParam("cpus", "vCPUs", KindInt, "8", 4, 64),
			rangeParam("fault_mb", "anonymous memory the benchmark write-faults, MiB at the seed's scale (64K chunks)", KindFloat, "1342", 64, 32768),
			boolParam("pressure", "run the page-cache hog and the slab churn (false: the benchmark alone on a machine full of clean page cache)", "true"),
			rangeParam("readers", "page-cache hog tasks reading at random", KindInt, "2", 1, 16),
			rangeParam("read_kb", "size of each of the hog's random reads, KiB", KindInt, "64", 4, 1024),
			rangeParam("hog_mbps", "the hog's read rate in all, MB/s (0: as fast as the disk serves it)", KindFloat, "300", 0, 100000),
			rangeParam("slab_pct", "peak of the churning slab caches, percent of memory (reclaimable; the unmovable one is half of it)", KindFloat, "3", 0, 20),
			boolParam("shrinker", "the reclaimable cache's objects are unused inodes on the superblock's LRU, which reclaim's shrink_slab frees oldest first (false: only the churn's deletions, at random, free them)", "true"),
			rangeParam("warmup", "the benchmark starts after the hog has read this many times the VM's memory from disk", KindFloat, "2", 0.1, 10),
			boolParam("madvise", "the benchmark madvises its region (MADV_HUGEPAGE)", "true"),
			rangeParam("swap_gb", "swap space, GiB at the seed's scale", KindFloat, "0", 0, 64),
			rangeParam("scale", "memory scale against the seed's VM (1 = the seed's 7 GiB)", KindFloat, "0.25", 0.02, 1),
		},
		Variants: []Variant{
			{Name: "defrag0", Help: "v7.4-rc1, vm.defrag_mode=0"},
			{Name: "defrag1", Help: "v7.4-rc1, vm.defrag_mode=1"},
			{Name: "defrag1-series", Help: "vm.defrag_mode=1 with the series (patches 1-3)"},
			{Name: "defrag0-series", Help: "vm.defrag_mode=0 with the series (the seed: unchanged)"},
			{Name: "defrag1-patches12", Help: "vm.defrag_mode=1 with patches 1-2 only (patch 3's changelog)"},
			{Name: "defrag1-patch1", Help: "vm.defrag_mode=1 with patch 1 only (the check that knows the migratetype, which no caller uses yet)", Optional: true},
			{Name: "defrag1-patches13", Help: "vm.defrag_mode=1 with patches 1 and 3: direct reclaim told of ALLOC_NOFRAGMENT, the allocator's checks as before", Optional: true},
		},
		PageParams: map[string]string{"scale": "0.02"},
		MetricsOf:  nofragMetrics,
		// The page charts the first two: the table's compact_stall and
		// how many of them failed.
		Counters: []string{"compact_stall", "compact_fail", "compact_success", "allocstall_movable", "pgsteal_direct",
			"pgsteal_kswapd", "compact_daemon_wake", "nr_free_pages", "nr_free_pages_blocks"},
		SeedResults: []SeedTable{{
			Title:    "Dev Jain's benchmark, medians of 15 runs (cover letter)",
			Variants: []string{"defrag0", "defrag1", "defrag1-series", "defrag0-series"},
			Rows: []SeedRow{
				{Label: "compact_stall", Metric: "compact_stall", Values: []string{"1690", "30669", "7366", "-"}},
				{Label: "64K faults allocated", Metric: "mthp_64k_alloc", Values: []string{"20750", "7391", "20129", "20698"}},
				{Label: "64K faults falling back to 4K", Metric: "mthp_64k_fallback", Values: []string{"725", "13832", "1339", "-"}},
			},
			Scale: "A smaller VM faults the same share of its memory, so the counts are about the scale times the seed's; " +
				"compare the ratios between the columns (docs/FIDELITY.md has scale 0.25 and 1).",
		}, {
			Title:    "Patch 3's changelog: with patches 1-2, pages an order-4 direct reclaim frees on average",
			Variants: []string{"defrag0", "defrag1-patches12"},
			Rows: []SeedRow{
				{Label: "pages per order-4 direct reclaim", Metric: "reclaim_per_order4", Values: []string{"45", "16"}},
			},
		}},
		Machine: func(v Values) string {
			sc := v.Float("scale")
			p := "under pressure"
			if !v.Bool("pressure") {
				p = "no pressure"
			}
			return fmt.Sprintf("1 node, %s GiB (%s VM zones), %d vCPUs, swap %s GiB; only 64K mTHP; %s MiB faulted, %s; "+
				"scale %g of the seed's %g GiB", fmtGB(v.Float("mem_gb")*sc), v.String("arch"), v.Int("cpus"), fmtGB(v.Float("swap_gb")*sc),
				fmtGB(v.Float("fault_mb")*sc), p, sc, v.Float("mem_gb"))
		},
		Layout: layoutNofrag,
		Knobs: []Knob{
			{"transparent_hugepage.enabled", "never"},
			{"transparent_hugepage.hugepages-64kB.enabled", "always"},
			{"transparent_hugepage.defrag", "madvise"},
		},
		UseMedian: true,
		Start:     startNofrag,
		Report:    reportNofrag,
	})
}

func nofragMetrics(Values) []Metric {
	return []Metric{
		{Name: "compact_stall", Help: "/proc/vmstat compact_stall during the benchmark", Headline: true},
		{Name: "mthp_64k_alloc", Help: "hugepages-64kB/stats/anon_fault_alloc during the benchmark", Headline: true},
		{Name: "mthp_64k_fallback", Help: "hugepages-64kB/stats/anon_fault_fallback during the benchmark", Headline: true},
		{Name: "compact_fail", Help: "/proc/vmstat compact_fail during the benchmark"},
		{Name: "compact_success", Help: "/proc/vmstat compact_success during the benchmark"},
		{Name: "reclaim_per_order4", Help: "pages reclaimed per order-4 direct reclaim (try_to_free_pages at order 4) during the benchmark"},
		{Name: "order4_reclaims", Help: "order-4 direct reclaims (try_to_free_pages calls) during the benchmark"},
		{Name: "allocstall_movable", Help: "/proc/vmstat allocstall_movable during the benchmark"},
		{Name: "compact_daemon_wake", Help: "/proc/vmstat compact_daemon_wake during the benchmark"},
		{Name: "elapsed_s", Help: "seconds the benchmark took"},
		{Name: "oom", Help: "1 if an allocation reached out_of_memory(), which ends the run where the kernel's OOM killer would kill a task (pagesim has none)"},
	}
}

// layoutNofrag is the VM: mem_gb x scale on one node, with an arm64 or an
// x86-64 guest's zones (the arch parameter), their bounds moved down by
// the scale.
func layoutNofrag(v Values) (mm.Config, error) {
	sc := v.Float("scale")
	mem := uint64(v.Float("mem_gb") * sc * (1 << 30))
	if v.String("arch") == "x86_64" {
		return scaledX86VM(mem, sc, v.Int("cpus"))
	}
	return scaledArm64VM(mem, sc, v.Int("cpus"))
}

// scaledArm64VM is a QEMU "virt" arm64 guest: RAM from 1 GiB physical
// (0x40000000), ZONE_DMA up to the 32-bit limit (4 GiB) and ZONE_NORMAL
// above it; ZONE_DMA32 is empty because ZONE_DMA already ends at 4 GiB
// (linux-mm/linux-mm arch/arm64/mm/init.c @8882d89e: dma_limits_init caps
// zone_dma_limit at U32_MAX when DRAM starts below 4 GiB, and
// arch_zone_limits_init ends ZONE_DMA there and ZONE_DMA32 at the same
// 4 GiB). So a 7 GiB guest has 3 GiB of
// ZONE_DMA and 4 GiB of ZONE_NORMAL, two big zones and no small one. The
// 4 GiB bound is multiplied by holeScale (3 GiB x scale of ZONE_DMA).
func scaledArm64VM(memBytes uint64, holeScale float64, cpus int) (mm.Config, error) {
	pages := memBytes / mm.PAGE_SIZE
	if pages < 16384 {
		return mm.Config{}, fmt.Errorf("the VM needs at least 64 MiB, got %d KiB", pages*4)
	}
	block := uint64(mm.PageblockNrPages)
	const start = 1 << 30 / mm.PAGE_SIZE
	dmaPages := uint64(holeScale*float64(3<<30/mm.PAGE_SIZE)) / block * block
	dmaPages = min(max(dmaPages, 8192), pages)
	memmap := func(present uint64) uint64 { return (present*64 + mm.PAGE_SIZE - 1) / mm.PAGE_SIZE }
	var cfg mm.Config
	n := mm.NodeSpec{CPUs: cpus}
	dma := mm.ZoneSpec{Type: mm.ZONE_DMA, StartPFN: start, Spanned: dmaPages, Present: dmaPages, Managed: dmaPages - memmap(dmaPages)}
	if dma.Managed > 4096+1024 {
		dma.Managed -= 4096
		cfg.KernelImagePages = 4096
	}
	n.Zones = append(n.Zones, dma)
	if left := pages - dmaPages; left > 0 {
		n.Zones = append(n.Zones, mm.ZoneSpec{Type: mm.ZONE_NORMAL, StartPFN: mm.PFN(start + dmaPages), Spanned: left, Present: left, Managed: left - memmap(left)})
	}
	cfg.Nodes = []mm.NodeSpec{n}
	return cfg, nil
}

// scaledX86VM is mm.X86Layout for one node with the PCI hole's bounds
// (3 GiB and 4 GiB) multiplied by holeScale and rounded to pageblocks:
// at holeScale 1 it is X86Layout's node, at 0.25 a 1.75 GiB VM has 768
// MiB below the hole and 1 GiB above it, as a 7 GiB one has 3 and 4.
func scaledX86VM(memBytes uint64, holeScale float64, cpus int) (mm.Config, error) {
	pages := memBytes / mm.PAGE_SIZE
	if pages < 16384 {
		return mm.Config{}, fmt.Errorf("the VM needs at least 64 MiB, got %d KiB", pages*4)
	}
	block := uint64(mm.PageblockNrPages)
	lowEnd := uint64(holeScale*float64(3<<30/mm.PAGE_SIZE)) / block * block
	holeEnd := uint64(holeScale*float64(4<<30/mm.PAGE_SIZE)) / block * block
	lowEnd = max(lowEnd, 8192)
	holeEnd = max(holeEnd, lowEnd)
	memmap := func(present uint64) uint64 { return (present*64 + mm.PAGE_SIZE - 1) / mm.PAGE_SIZE }
	var cfg mm.Config
	n := mm.NodeSpec{CPUs: cpus}
	dmaPresent := uint64(4095 - 97) // PFN 1..4095 minus 0x9f..0xff
	n.Zones = append(n.Zones, mm.ZoneSpec{Type: mm.ZONE_DMA, StartPFN: 1, Spanned: 4095, Present: dmaPresent, Managed: dmaPresent - 22})
	left := pages - 4096
	low := min(left, lowEnd-4096)
	dma32 := mm.ZoneSpec{Type: mm.ZONE_DMA32, StartPFN: 4096, Present: low, Spanned: low}
	dma32.Managed = low - memmap(low)
	if dma32.Managed > 4096+1024 {
		dma32.Managed -= 4096
		cfg.KernelImagePages = 4096
	}
	left -= low
	if left > 0 {
		dma32.Spanned = holeEnd - 4096
		n.Zones = append(n.Zones, dma32, mm.ZoneSpec{Type: mm.ZONE_NORMAL, StartPFN: mm.PFN(holeEnd), Spanned: left, Present: left, Managed: left - memmap(left)})
	} else {
		n.Zones = append(n.Zones, dma32)
	}
	cfg.Nodes = []mm.NodeSpec{n}
	return cfg, nil
}

// configureNofrag applies a variant's switches and the seed's kernel base.
func configureNofrag(m *mm.Machine, variant string) error {
	// v7.4-rc1: seed 000 merged (costly __GFP_NORETRY requests without
	// __GFP_THISNODE do no direct reclaim or compaction), and
	// __alloc_pages_direct_compact returns before counting a deferred
	// attempt.
	m.Patches.CostlyNoretryNoDirectReclaim = true
	m.Kernel.DeferredCompactNoStall = true
	dm := "0"
	if strings.HasPrefix(variant, "defrag1") {
		dm = "1"
	}
	series := strings.HasSuffix(variant, "-series")
	m.Patches.WatermarkCheckKnowsMigratetype = series || strings.HasPrefix(variant, "defrag1-patch")
	m.Patches.HighOrderCheckHonoursNofragment = series || variant == "defrag1-patches12"
	m.Patches.DirectReclaimToldNofragment = series || variant == "defrag1-patches13"
	return m.SetSysctl("vm.defrag_mode", dm)
}

// nofragRun is one variant's run: a single phase.
type nofragRun struct {
	cfg     Config
	metrics map[string]float64
}

func startNofrag(cfg Config) (Phases, error) {
	v := cfg.Params
	lay, err := layoutNofrag(v)
	if err != nil {
		return nil, err
	}
	var managed uint64
	for _, z := range lay.Nodes[0].Zones {
		managed += z.Managed
	}
	sc := v.Float("scale")
	fault := uint64(v.Float("fault_mb")*sc*(1<<20)) / mm.PAGE_SIZE
	if fault < 16 {
		return nil, fmt.Errorf("fault_mb x scale gives less than one 64K chunk")
	}
	if fault > managed*3/4 {
		return nil, fmt.Errorf("fault_mb %g does not fit: the VM has %s GiB, %s of it managed by the kernel; the benchmark may fault at most three quarters of that",
			v.Float("fault_mb"), fmtGB(v.Float("mem_gb")), mm.FormatBytes(managed*mm.PAGE_SIZE))
	}
	return &nofragRun{cfg: cfg, metrics: map[string]float64{}}, nil
}

func (r *nofragRun) Len() int { return 1 }

func (r *nofragRun) Metrics() map[string]float64 {
	out := map[string]float64{}
	for k, v := range r.metrics {
		out[k] = v
	}
	return out
}

// benchStart is what the counters read when the benchmark started.
type benchStart struct {
	at                  sim.Time
	events              [mm.NR_VM_EVENT_ITEMS]uint64
	mthp                mm.MTHPStats
	o4Runs, o4Reclaimed uint64
}

// benchStartAt is where m's counters stand at time at.
func benchStartAt(m *mm.Machine, at sim.Time) benchStart {
	return benchStart{at: at, events: m.Stat.Events, mthp: m.MTHP[4],
		o4Runs: m.Reclaim.DirectRuns[4], o4Reclaimed: m.Reclaim.DirectReclaimed[4]}
}

// Boot boots the VM, fills its memory with clean page cache, and starts the
// pressure and the benchmark.
func (r *nofragRun) Boot(int) (*Phase, error) {
	v := r.cfg.Params
	sc := v.Float("scale")
	lay, err := layoutNofrag(v)
	if err != nil {
		return nil, err
	}
	m, err := newMachine(lay, r.cfg, false)
	if err != nil {
		return nil, err
	}
	if err := configureNofrag(m, r.cfg.Variant); err != nil {
		return nil, err
	}
	if err := ApplyKnobs(m, r.cfg.Knobs); err != nil {
		return nil, err
	}
	if err := m.SetSwap(uint64(v.Float("swap_gb") * sc * float64(1<<30))); err != nil {
		return nil, err
	}
	cpus := m.NrCPUs()
	managed := m.TotalManagedPages()
	readers := v.Int("readers")

	// The hog's files, 1.5 times memory in all. A fill task writes the
	// first 80% of memory of them and writes each 16 MiB back as it goes,
	// so memory starts full of clean page cache; the rest of the
	// workload starts when it is done.
	p := &nofragPhase{r: r, m: m, wouldOOMKill: m.Slow.WouldOOMKill}
	for i := 0; i < readers; i++ {
		p.files = append(p.files, m.NewFile(fmt.Sprintf("data%d", i), nil))
	}
	p.fillEach = managed * 8 / 10 / uint64(readers)
	p.fileSize = managed * 3 / 2 / uint64(readers)
	m.World.NewTask("fill", 0, nofragFill{p}, 0)
	start := sim.Never
	files := p.files
	var later []*sim.Task

	if v.Bool("pressure") {
		for i, f := range files {
			rd := &workload.RandomReader{M: m, File: f, Chunk: uint64(v.Int("read_kb") / 4), Batch: 16, GFP: mm.GFP_HIGHUSER_MOVABLE,
				Rand: m.World.Stream(fmt.Sprintf("workload/reader#%d", i))}
			if mbps := v.Float("hog_mbps"); mbps > 0 {
				// A batch is 16 reads.
				rd.Interval = sim.Time(float64(16*v.Int("read_kb")*1024) / (mbps * 1e6 / float64(readers)) * float64(sim.Second))
			}
			later = append(later, m.World.NewTask(fmt.Sprintf("reader/%d", i), 1+i%(cpus-1), rd, start))
			p.hog = append(p.hog, rd)
		}
		// The caches: peak slab_pct% of memory worth of objects (the
		// unmovable one half), shrinking to half their peak; a cycle
		// takes 2 s at the seed's scale. Objects die at random and a
		// slab goes back only once it is empty (workload.ObjectCycler).
		peak := uint64(v.Float("slab_pct") / 100 * float64(managed))
		for i, c := range []struct {
			name        string
			objSize     uint64
			reclaimable bool
			pages       uint64
		}{{"ext4_inode_cache", ext4InodeSize, true, peak}, {"kmalloc-256", 256, false, peak / 2}} {
			hi := int(c.pages * mm.PAGE_SIZE / c.objSize)
			if hi < 2*int((mm.PAGE_SIZE<<mm.SlubOrder(c.objSize, cpus))/c.objSize) {
				continue
			}
			batch := max(1, hi/32)
			steps := 2 * (hi - hi/2) / batch
			interval := sim.Time(2 * sc * float64(sim.Second) / float64(max(steps, 1)))
			cy := workload.NewObjectCycler(m, c.name, c.objSize, c.reclaimable, mm.GFP_KERNEL, hi/2, hi, batch,
				m.World.Stream("workload/slab#"+c.name), interval, v.Bool("shrinker"))
			later = append(later, m.World.NewTask("slab/"+c.name, 1+(readers+i)%(cpus-1), cy, start))
		}
	}

	// The benchmark: one process write-faulting its region in 64K chunks,
	// once the hog has read warmup x memory from disk.
	pages := uint64(v.Float("fault_mb")*sc*(1<<20)) / mm.PAGE_SIZE &^ 15
	region := m.NewAnonRegion("bench", nil, pages)
	region.Madvised = v.Bool("madvise")
	p.bench = &workload.Faulter{M: m, Region: region, Batch: 16}
	p.need = uint64(v.Float("warmup") * float64(managed))
	later = append(later, m.World.NewTask("bench", cpus-1, nofragBench{p}, start))
	p.later = later
	return &Phase{Name: "64K faults", M: m, Done: p, Status: p, End: p}, nil
}

// ext4InodeSize is the slab churn's reclaimable objects' size (CHOICE,
// an estimate): ext4_inode_cache's object, struct ext4_inode_info with
// its VFS inode, is about 1.0-1.2 KiB on 64-bit kernels of the 5.x-6.x
// years as /proc/slabinfo shows it (1152 bytes, 28 to an order-3 slab, on
// one x86-64 6.x machine read while choosing it).
const ext4InodeSize = 1152

// nofragPhase is the benchmark's phase on machine m: the fill task
// writes files[fi] up to fillEach pages (pos so far), then wakes the
// tasks in later; the hog's readers read; once they have missed need
// pages, bench faults (started, its counters at the start in at).
type nofragPhase struct {
	r                  *nofragRun
	m                  *mm.Machine
	files              []*mm.File
	fi                 int
	pos                uint64
	fillEach, fileSize uint64
	later              []*sim.Task
	hog                []*workload.RandomReader
	bench              *workload.Faulter
	need               uint64
	started            bool
	at                 benchStart
	// wouldOOMKill is m.Slow.WouldOOMKill when the phase began (oom).
	wouldOOMKill uint64
}

// nofragFill writes the hog's files and then wakes the rest of the
// workload.
type nofragFill struct{ p *nofragPhase }

// Step writes up to 4096 pages of the current file.
func (f nofragFill) Step(w *sim.World, t *sim.Task) sim.Time {
	p, m := f.p, f.p.m
	for p.fi < len(p.files) {
		f := p.files[p.fi]
		n := min(4096, p.fillEach-p.pos)
		got := m.FileWrite(t, f, p.pos, n, mm.GFP_HIGHUSER_MOVABLE)
		p.pos += got
		if m.AllocPending(t) {
			return sim.Resched
		}
		m.FileSync(t, f)
		if got < n || p.pos >= p.fillEach {
			f.Size = p.fileSize
			p.fi, p.pos = p.fi+1, 0
		}
		return t.Now
	}
	for _, lt := range p.later {
		w.Wake(lt, t.Now)
	}
	return sim.Exit
}

func (p *nofragPhase) hogRead() uint64 {
	var read uint64
	for _, rd := range p.hog {
		read += rd.Misses
	}
	return read
}

// nofragBench waits for the hog's warm-up, then faults.
type nofragBench struct{ p *nofragPhase }

// Step is one step of the benchmark.
func (b nofragBench) Step(w *sim.World, t *sim.Task) sim.Time {
	p, m := b.p, b.p.m
	if !p.started {
		if p.hogRead() < p.need && len(p.hog) > 0 {
			return t.Now + sim.Millisecond
		}
		p.started = true
		p.at = benchStartAt(m, t.Now)
	}
	return p.bench.Step(w, t)
}

// Done reports whether the benchmark has faulted its region, or an
// allocation reached the OOM killer (oom).
func (p *nofragPhase) Done() bool { return p.bench.Done || p.oom() }

// oom reports whether an allocation of the phase reached out_of_memory():
// __alloc_pages_may_oom() for a request that is not costly, has neither
// __GFP_RETRY_MAYFAIL nor __GFP_THISNODE and may use ZONE_NORMAL, after
// its last attempt at the high watermark (mm/page_alloc.c @00cb34b0),
// with __GFP_FS, so that out_of_memory() selects a victim (mm/oom_kill.c;
// mm.SlowpathStats.WouldOOMKill). Every request of this workload that can
// get there has __GFP_FS (the fill's, the hog's and the benchmark's
// GFP_HIGHUSER_MOVABLE, the caches' GFP_KERNEL), so the kernel's OOM
// killer would kill the hog or the benchmark: the run the seed measured
// is over. pagesim has no OOM killer, and the hog's readers would retry
// for ever (review finding F53: vm.min_free_kbytes=131072 at scale 0.02
// left the page cache no room and the warm-up never ended). So the phase
// ends there, "Failed".
func (p *nofragPhase) oom() bool { return p.m.Slow.WouldOOMKill != p.wouldOOMKill }

// Status says which part of the workload runs.
func (p *nofragPhase) Status() string {
	if p.fi < len(p.files) {
		return fmt.Sprintf("filling the page cache: %d of %d files", p.fi, len(p.files))
	}
	if !p.started {
		return fmt.Sprintf("warm-up: the hog has read %.2f of %.2f GiB", float64(p.hogRead())*mm.PAGE_SIZE/(1<<30), float64(p.need)*mm.PAGE_SIZE/(1<<30))
	}
	s, region := p.m.MTHP[4], p.bench.Region
	return fmt.Sprintf("benchmark: %.2f of %.2f GiB faulted; 64K folios %d, fallbacks %d", float64(region.Cursor)*mm.PAGE_SIZE/(1<<30),
		float64(region.Pages)*mm.PAGE_SIZE/(1<<30), s.AnonFaultAlloc-p.at.mthp.AnonFaultAlloc, s.AnonFaultFallback-p.at.mthp.AnonFaultFallback)
}

// End reads the benchmark's counters.
func (p *nofragPhase) End(stuck bool) PhaseResult {
	if !p.started {
		// The benchmark never faulted: its counters are empty.
		p.at = benchStartAt(p.m, p.m.World.Now())
	}
	res := p.r.finish(p.m, p.bench, &p.at, stuck || p.oom())
	p.r.metrics["oom"] = float64(btoi(p.oom()))
	if p.oom() {
		res.Line = fmt.Sprintf("Failed: at %.3f s (%s) an allocation reached out_of_memory(), where the kernel's OOM killer would kill a task (pagesim has none)",
			p.m.World.Now().Seconds(), p.Status())
	}
	return res
}

// finish reads the benchmark's counters.
func (r *nofragRun) finish(m *mm.Machine, bench *workload.Faulter, at *benchStart, stuck bool) PhaseResult {
	ev := func(e mm.VMEventItem) float64 { return float64(m.Stat.Events[e] - at.events[e]) }
	s := m.MTHP[4]
	runs := m.Reclaim.DirectRuns[4] - at.o4Runs
	perRun := 0.0
	if runs > 0 {
		perRun = float64(m.Reclaim.DirectReclaimed[4]-at.o4Reclaimed) / float64(runs)
	}
	end := bench.Finish
	if !bench.Done {
		end = m.World.Now()
	}
	el := (end - at.at).Seconds()
	r.metrics = map[string]float64{
		"compact_stall":       ev(mm.COMPACTSTALL),
		"compact_fail":        ev(mm.COMPACTFAIL),
		"compact_success":     ev(mm.COMPACTSUCCESS),
		"mthp_64k_alloc":      float64(s.AnonFaultAlloc - at.mthp.AnonFaultAlloc),
		"mthp_64k_fallback":   float64(s.AnonFaultFallback - at.mthp.AnonFaultFallback),
		"reclaim_per_order4":  perRun,
		"order4_reclaims":     float64(runs),
		"allocstall_movable":  ev(mm.ALLOCSTALL_MOVABLE),
		"compact_daemon_wake": ev(mm.KCOMPACTD_WAKE),
		"elapsed_s":           el,
	}
	alloc, fb := r.metrics["mthp_64k_alloc"], r.metrics["mthp_64k_fallback"]
	if stuck || bench.Failed > 0 {
		return PhaseResult{Line: fmt.Sprintf("Failed: out of memory after %d 64K faults", int(alloc+fb)), Headline: "out of memory"}
	}
	return PhaseResult{
		Line: fmt.Sprintf("64K faults: %.0f allocated, %.0f fell back to 4K; compact_stall %.0f; %.3fs",
			alloc, fb, r.metrics["compact_stall"], el),
		Headline: fmt.Sprintf("64K: %.0f allocated, %.0f fell back; %.0f stalls", alloc, fb, r.metrics["compact_stall"]),
	}
}

// reportNofrag prints the cover letter's table, with a column per variant:
// "dm=0" is vm.defrag_mode=0, "+series" patches 1-3, "+p1-2" patches 1-2,
// "+p1,3" patches 1 and 3, "+p1" patch 1.
func reportNofrag(res *Result) string {
	var b strings.Builder
	head := [][]string{{""}, {""}}
	for _, vr := range res.Variants {
		dm, plus := "dm=0", ""
		if strings.HasPrefix(vr.Name, "defrag1") {
			dm = "dm=1"
		}
		switch {
		case strings.HasSuffix(vr.Name, "-series"):
			plus = "+series"
		case strings.HasSuffix(vr.Name, "-patches12"):
			plus = "+p1-2"
		case strings.HasSuffix(vr.Name, "-patches13"):
			plus = "+p1,3"
		case strings.HasSuffix(vr.Name, "-patch1"):
			plus = "+p1"
		}
		head[0] = append(head[0], dm)
		head[1] = append(head[1], plus)
	}
	rows := [][]string{head[0]}
	if strings.Join(head[1], "") != "" {
		rows = append(rows, head[1])
	}
	for _, row := range []struct{ label, metric, format string }{
		{"compact_stall", "compact_stall", "%.0f"},
		{"64K faults allocated", "mthp_64k_alloc", "%.0f"},
		{"64K faults falling back", "mthp_64k_fallback", "%.0f"},
		{"pages/order-4 reclaim", "reclaim_per_order4", "%.0f"},
	} {
		cells := []string{row.label}
		for i := range res.Variants {
			cells = append(cells, res.cell(&res.Variants[i], row.metric, row.format))
		}
		rows = append(rows, cells)
	}
	what := "one run"
	if res.Runs > 1 {
		what = fmt.Sprintf("medians of %d runs", res.Runs)
	}
	v := res.values
	fmt.Fprintf(&b, "Dev's benchmark in a %s GiB VM with only 64K mTHP enabled,\n%s MiB write-faulted in 64K chunks, %s\n(dm: vm.defrag_mode):\n\n",
		fmtGB(v.Float("mem_gb")*v.Float("scale")), fmtGB(v.Float("fault_mb")*v.Float("scale")), what)
	for _, l := range strings.Split(strings.TrimRight(table(rows), "\n"), "\n") {
		b.WriteString("  " + strings.TrimRight(l, " ") + "\n")
	}
	for _, vr := range res.Variants {
		oom := 0
		for _, run := range vr.Runs {
			oom += int(run["oom"])
		}
		if oom > 0 {
			fmt.Fprintf(&b, "\n%s: %d of %d runs ended at out_of_memory(), where the kernel's\nOOM killer would kill a task; the counters are those up to there.\n",
				vr.Name, oom, len(vr.Runs))
		}
	}
	return b.String()
}
