package scenario

// promoted_order.go is the scenario of seed 002 (Kiryl Shutsemau, "mm:
// page_alloc: make defrag_mode retries follow the promoted order", 2026):
// under vm.defrag_mode, a non-movable order-0 request that finds no free
// page in a block of its type has its reclaim and compaction promoted to
// pageblock order (nofrag_promote_order). On v7.3-rc5 the two retry
// helpers still judge the requested order: compaction_ready() calls the
// order-9 reclaim "progress" as soon as the zone has order-0 pages above
// its watermark, should_reclaim_retry() resets no_progress_loops each
// time, and an allocation whose blocks cannot be made whole loops for as
// long as that lasts (the seed's "storm").
//
// The machine is one x86-64 node of mem_gb x scale GiB with cpus CPUs.
// The workload is the seed's reproducer (workload.PinnedFill,
// workload.BuildFS, workload.BuildWorker): a 4 KiB anon fill in cgroup
// "build" with memory.low = fill + 1 GiB x scale (the fill counted as what
// it holds after the free below, so that page cache past 1 GiB x scale is
// reclaimable as the seed says; low=fill counts all of it), one page pinned
// FOLL_LONGTERM in every pageblock of the fill but producible_pct of
// them, one page in eight freed, defrag_mode on, then workers that build
// on btrfs (or churn empty files on tmpfs) for duration_s x the pool's
// scale simulated seconds (promotedOrderTimeScale), while a monitor reads
// /proc/pressure/memory once a second as oomd does (workload.PSIMonitor).
//
// The variants switch the engine, nothing else:
//   - rc5: the v7.3-rc5 mm tree (Kernel.DeferredCompactNoStall);
//   - posted: the fix as posted, reclaim_order and compaction_order passed
//     to both retry helpers (Patches.PromotedOrderRetries);
//   - requested: the fix with should_compact_retry's priority floor and
//     COMPACT_SUCCESS limit on the requested order, as Weiner asked
//     (Patches.PromotedOrderRequestedFloor).
//
// pin_migrate is the what-if of the thread's end (Patches.PinMigrateMovable,
// engine/mm/gup.go): a long-term pin moves its page out of a movable
// pageblock first.
//
// Nothing here sets a number: operations are the workers' own counts,
// PSI is the engine's, read by the monitor task, and the other metrics
// are the engine's counters taken from the workers' start. "stormed" is
// the rule written in promotedOrderStormRule.

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/sim"
	"github.com/pagesim/pagesim/engine/workload"
)

// promotedOrderStormRule says when a run stormed: in some one second of
// the run (between two of the monitor's reads) the workers' direct reclaim
// ran at pageblock order at least this many times. The rate is per CPU
// time, not per GiB, so it holds at any scale. Chosen with the seed's
// numbers in view: its storm made 3.85M order-9 reclaim runs in 180 s
// (21,000 a second on average, more while it lasted), its fixed kernels
// 16-22k in 180 s (about 100 a second); 10,000 a second is two orders of
// magnitude above the second.
const promotedOrderStormRule = 10000

// promotedOrderPool is the whole pageblocks a machine of gib GiB offers
// the workers' non-movable requests before one must be made by reclaim
// and compaction out of nothing: the free blocks the fill leaves (each
// zone's high watermark and its lowmem reserve against the fault's zone,
// what workload.PinnedFill keeps, from mm.BootWatermarks) and the fill's
// blocks without a pin (producible_pct of them; all of them with
// pins=false), which compaction can empty. The fill's page tables and
// the boot's own allocations are left out (a few blocks either way).
func promotedOrderPool(v Values, gib float64) (float64, error) {
	cfg, err := mm.X86Layout(uint64(gib*float64(1<<30)), 1, v.Int("cpus"))
	if err != nil {
		return 0, err
	}
	zones, err := mm.BootWatermarks(cfg)
	if err != nil {
		return 0, err
	}
	highest := mm.GFPZone(mm.GFP_HIGHUSER_MOVABLE)
	var keep, managed uint64
	for _, z := range zones {
		if z.ManagedPages == 0 {
			continue
		}
		keep += min(z.WmarkPages(mm.WMARK_HIGH)+uint64(max(z.LowmemReserve[highest], 0)), z.ManagedPages)
		managed += z.ManagedPages
	}
	producible := 1.0
	if v.Bool("pins") {
		producible = v.Float("producible_pct") / 100
	}
	return (float64(keep) + float64(managed-keep)*producible) / mm.PageblockNrPages, nil
}

// promotedOrderTimeScale is the run's time against the seed's 180 s:
// what has to be used up before a non-movable request can loop in the
// promoted retry is the pool of whole blocks (promotedOrderPool), and
// the workers use it at a rate per CPU, not per GiB (their operations'
// pace is the CPUs' and the drive's, and the CPUs and workers do not
// scale). A run on mem_gb x scale GiB therefore keeps the seed's balance
// of demand against supply when its time is the seed's times its pool
// over the seed's machine's pool, not times scale: the pool's free
// blocks are a count of pageblocks per zone (set_recommended_min_free_kbytes)
// and do not shrink with the memory. Derived from the mechanism, not
// fitted to the seed's table (docs/FIDELITY.md says what was in view).
func promotedOrderTimeScale(v Values) (float64, error) {
	small, err := promotedOrderPool(v, v.Float("mem_gb")*v.Float("scale"))
	if err != nil {
		return 0, err
	}
	seed, err := promotedOrderPool(v, v.Float("mem_gb"))
	if err != nil {
		return 0, err
	}
	return min(small/seed, 1), nil
}

// promotedOrderFreeEvery is how sparsely the fill frees: one page in
// this many (the seed's "free one page in eight").
const promotedOrderFreeEvery = 8

// promotedOrderTmpfsFiles is the files fs=tmpfs's workers make in all:
// the seed's files times the time scale tsc (they are demand for whole
// blocks, weighed against the same pool as the build's time), at least
// one a worker.
func promotedOrderTmpfsFiles(v Values, tsc float64) uint64 {
	return max(uint64(float64(v.Int("files"))*tsc), uint64(v.Int("workers")))
}

// promotedOrderTmpfsRoom refuses an fs=tmpfs run whose files would not
// fit: tmpfs's dentries and inodes have no shrinker and the fill is
// protected, so once the fallbacks' boosts (boost_watermark(), up to
// vm.watermark_boost_factor of the high watermark) stand on the min
// watermark, kswapd has nothing to reclaim them with and stays hopeless,
// every allocation fails its watermark, and each takes the slow path to
// its end (a give-up, a direct reclaim that finds nothing) and fails:
// where the kernel's OOM killer would act, pagesim, which has none,
// spins for minutes without a file made (docs/FIDELITY.md, seed 002).
// The room is what the fill leaves free (each zone's high watermark and
// lowmem reserve, and one page in promotedOrderFreeEvery of the rest)
// above the min watermark and the largest boost, at the default
// vm.watermark_boost_factor unless a knob sets it. The seed's one million
// files take about 1 GB of the 4 GiB its 32 GiB leave; at 1/16 with every
// block pinned, the time scale makes 283,468 files that need 274 MiB of
// the 170 MiB there is.
//
// The check is a bound, not the run: the pages the workers' slab refills
// hold on the per-CPU lists (rmqueue_bulk takes a batch for the list of
// the request's migratetype, and pcp->high grows with refills towards
// high_max) are out of NR_FREE_PAGES and not yet slab. Once the boosted
// min watermark fails, get_page_from_freelist() checks the watermark
// before it looks at a pcp list, and drain_all_pages() runs only after
// a direct reclaim that made progress (__alloc_pages_direct_reclaim), so
// they stay there until decay_pcp_high() trims them, a second at a time
// (review finding F36: 600,000 files, 170,081 at the time scale, need
// 164 MiB of the 170, and the run failed with 14,743 pages, 58 MiB, on
// six CPUs' UNMOVABLE and RECLAIMABLE lists). A run that gets past the
// check and still runs out ends where the kernel's OOM killer would act
// (promotedOrderPhase.oom).
func promotedOrderTmpfsRoom(cfg Config, tsc float64) error {
	v := cfg.Params
	lay, err := layoutPromotedOrder(v)
	if err != nil {
		return err
	}
	zones, err := mm.BootWatermarks(lay)
	if err != nil {
		return err
	}
	factor := 15000 // vm.watermark_boost_factor's default
	for _, k := range cfg.Knobs {
		if k.Name == "vm.watermark_boost_factor" {
			if n, err := strconv.Atoi(strings.TrimSpace(k.Value)); err == nil {
				factor = n
			}
		}
	}
	highest := mm.GFPZone(mm.GFP_HIGHUSER_MOVABLE)
	var room uint64
	for _, z := range zones {
		if z.ManagedPages == 0 {
			continue
		}
		keep := min(z.WmarkPages(mm.WMARK_HIGH)+uint64(max(z.LowmemReserve[highest], 0)), z.ManagedPages)
		free := keep + (z.ManagedPages-keep)/promotedOrderFreeEvery
		if floor := z.WmarkPages(mm.WMARK_MIN) + z.MaxWatermarkBoost(factor); free > floor {
			room += free - floor
		}
	}
	room *= mm.PAGE_SIZE
	files := promotedOrderTmpfsFiles(v, tsc)
	if need := workload.TmpfsSlab(files, v.Int("cpus")); need > room {
		return fmt.Errorf("fs=tmpfs: %d files need %d MiB of slab that nothing can reclaim, and the fill leaves %d MiB "+
			"above the boosted min watermark; with no OOM killer every allocation would then fail: lower files or raise scale",
			files, need>>20, room>>20)
	}
	return nil
}

func init() {
	register(&Spec{
		ID:    "promoted-order",
		Title: "defrag_mode retries that judge the requested order while reclaim and compaction work at pageblock order",
		Seed:  "002",
		Patch: "mm: page_alloc: make defrag_mode retries follow the promoted order (Kiryl Shutsemau, 2026)",
		Lore: []string{
			"https://lore.kernel.org/linux-mm/20260929174553.175333-1-kirill@shutemov.name/",
			"https://lore.kernel.org/linux-mm/20261006081050.GA234057@cmpxchg.org/",
		},
		Summary: "With vm.defrag_mode=1 a non-movable order-0 request that finds no free page in a block of its type " +
			"reclaims and compacts at pageblock order to make a whole block it may claim. On v7.3-rc5 the retry helpers " +
			"still judge the requested order 0: order-0 pages above the watermark count as reclaim progress, so when " +
			"whole blocks cannot be made (pins in 98% of them) an allocation may loop in order-9 reclaim without end: " +
			"one rc5 run in three stormed with 3.85M order-9 reclaim runs and PSI some above 50% for ten seconds. The fix " +
			"passes the production order to both retry helpers; they give up, drop ALLOC_NOFRAGMENT and fall back.",
		SeedMachine: "32 GiB VM, 8 CPUs; btrfs; io_uring registered buffers as the pins",
		Params: []Param{
			rangeParam("mem_gb", "memory, GiB at the seed's scale", KindFloat, "32", 2, 1024),
			rangeParam("cpus", "CPUs", KindInt, "8", 1, 64),
			rangeParam("workers", "build workers, one per CPU in turn", KindInt, "8", 1, 256),
			rangeParam("duration_s", "seconds the workers run, at the seed's scale", KindFloat, "180", 1, 3600),
			rangeParam("producible_pct", "percent of the fill's pageblocks left without a pin (the blocks that can be made whole)", KindFloat, "2", 0, 100),
			boolParam("pins", "pin one page in the other pageblocks (FOLL_LONGTERM); false = no pins", "true"),
			choiceParam("fs", "btrfs: 1-64 KiB files, read back, 20% unlinked, fdatasync every 50 creates; "+
				"tmpfs: empty files, no I/O, until files are made", "btrfs", "btrfs", "tmpfs"),
			rangeParam("files", "fs=tmpfs: files to create in all, at the seed's scale (the seed's one million)", KindInt, "1000000", 1, 100000000),
			choiceParam("pin_migrate", "what-if: a long-term pin migrates its page out of a movable pageblock first "+
				"(off: every kernel; defrag_mode: while vm.defrag_mode is set; always)", "off", "off", "defrag_mode", "always"),
			choiceParam("low", "memory.low = fill + 1 GiB x scale, the fill counted as resident: what it holds once one page in eight "+
				"is freed, so page cache past 1 GiB x scale is not protected; fill: the whole fill, set before the free, "+
				"which protects more page cache than the free memory holds", "resident", "resident", "fill"),
			rangeParam("scale", "memory scale against the seed's (1 = 32 GiB); the time (duration_s, the btrfs commit interval, "+
				"tmpfs's files) scales by the whole free and producible pageblocks against the seed's machine's", KindFloat, "0.0625", 0.005, 1),
		},
		Variants: []Variant{
			{Name: "rc5", Help: "v7.3-rc5: the retry helpers judge the requested order"},
			{Name: "posted", Help: "the fix as posted: both helpers judge reclaim_order and compaction_order"},
			{Name: "requested", Help: "the fix with should_compact_retry's priority floor and COMPACT_SUCCESS limit on the requested order"},
		},
		Knobs:     []Knob{{"vm.defrag_mode", "1"}},
		MetricsOf: promotedOrderMetrics,
		Counters: []string{"nr_free_pages", "nr_slab_reclaimable", "nr_slab_unreclaimable", "allocstall_normal", "allocstall_movable",
			"pgscan_direct", "pgsteal_direct", "compact_stall", "compact_fail", "compact_success", "pgmigrate_success"},
		SeedResults: []SeedTable{{
			Title:    "btrfs, 2% producible, three runs each, mean ± stddev",
			Variants: []string{"rc5", "posted", "requested"},
			Rows: []SeedRow{
				{Label: "ops/s", Metric: "ops_per_s", Values: []string{"4751 ± 684", "5181 ± 18", "5206 ± 84"}},
				{Label: "PSI some, mean %", Metric: "psi_some_mean_pct", Values: []string{"28.7 ± 11.5", "22.0 ± 0", "22.0 ± 0"}},
				{Label: "PSI some, peak avg10", Metric: "psi_some_peak_avg10", Values: []string{"42.8 ± 30.7", "24.9 ± 0.3", "25.0 ± 0.8"}},
				{Label: "s with some avg10 > 50", Metric: "psi_some_s_over_50", Values: []string{"3.3 ± 5.8", "0", "0"}},
				{Label: "give-ups (NOFRAG off)", Metric: "nofrag_giveups", Values: []string{"0", "222 ± 58", "277 ± 199"}},
				{Label: "movable blocks lost", Metric: "movable_blocks_lost", Values: []string{"641 ± 13", "654 ± 10", "652 ± 14"}},
				{Label: "whole blocks claimed", Metric: "whole_blocks_claimed", Values: []string{"90 ± 8", "81 ± 10", "76 ± 8"}},
				{Label: "order-9 reclaim runs", Metric: "order9_reclaim_runs", Values: []string{"3.85M in the storm", "16-22k", "16-22k"}},
			},
		}},
		Machine: func(v Values) string {
			sc := v.Float("scale")
			tsc, err := promotedOrderTimeScale(v)
			if err != nil {
				tsc = sc // Start refuses the values
			}
			return fmt.Sprintf("1 node x %s GiB, %d CPUs, %d workers on %s for %s s; scale %g (time %.3g) of the seed's %g GiB, %g s",
				fmtGB(v.Float("mem_gb")*sc), v.Int("cpus"), v.Int("workers"), v.String("fs"),
				fmtGB(v.Float("duration_s")*tsc), sc, tsc, v.Float("mem_gb"), v.Float("duration_s"))
		},
		Layout: layoutPromotedOrder,
		Start:  startPromotedOrder,
		Report: reportPromotedOrder,
		// Not on the page: rc5's default run storms, millions of
		// slow-path iterations that take about a minute of CPU
		// natively, far over what the page can run in 20 s
		// (docs/FIDELITY.md, docs/PERFORMANCE.md). `pagesim run
		// promoted-order` runs it.
		Unlisted: true,
	})
}

func promotedOrderMetrics(Values) []Metric {
	return []Metric{
		{Name: "ops_per_s", Help: "build operations per simulated second (create, read back, maybe unlink, sync), all workers", Headline: true},
		{Name: "psi_some_mean_pct", Help: "percent of the run some task stalled on memory (/proc/pressure/memory some total)", Headline: true},
		{Name: "psi_some_peak_avg10", Help: "highest some avg10 read once a second", Headline: true},
		{Name: "psi_some_s_over_50", Help: "seconds (one-second reads) with some avg10 above 50"},
		{Name: "nofrag_giveups", Help: "times defrag_mode dropped ALLOC_NOFRAGMENT and fell back", Headline: true},
		{Name: "movable_blocks_lost", Help: "MIGRATE_MOVABLE pageblocks retyped to another type"},
		{Name: "whole_blocks_claimed", Help: "MIGRATE_MOVABLE pageblocks a non-movable request claimed whole"},
		{Name: "order9_reclaim_runs", Help: "direct reclaim runs at order 9 (try_to_free_pages)", Headline: true},
		{Name: "order0_reclaim_runs", Help: "direct reclaim runs at order 0"},
		{Name: "longest_slowpath_s", Help: "longest time one allocation spent in the slow path"},
		{Name: "order9_peak_per_s", Help: "most order-9 direct reclaim runs in one second of the run"},
		{Name: "stormed", Help: "1 if some second of the run had 10,000 order-9 direct reclaim runs or more, else 0"},
		{Name: "elapsed_s", Help: "simulated seconds the workers ran (fs=tmpfs: until the files were made)"},
		{Name: "pins_migrated", Help: "pages a long-term pin migrated first (pin_migrate)"},
		{Name: "finished", Help: "0 if an allocation reached the OOM killer, which ends the run (pagesim has none); " +
			"fs=tmpfs: else 1 if the workers made their files within duration_s x scale (btrfs: else 1)"},
	}
}

// layoutPromotedOrder is the VM: mem_gb x scale on one node.
func layoutPromotedOrder(v Values) (mm.Config, error) {
	bytes := uint64(v.Float("mem_gb") * v.Float("scale") * float64(1<<30))
	if bytes < 256<<20 {
		return mm.Config{}, fmt.Errorf("mem_gb x scale gives %d MiB; at least 256 MiB are needed", bytes>>20)
	}
	return mm.X86Layout(bytes, 1, v.Int("cpus"))
}

type promotedOrderRun struct {
	cfg     Config
	metrics map[string]float64
}

func startPromotedOrder(cfg Config) (Phases, error) {
	if _, err := layoutPromotedOrder(cfg.Params); err != nil {
		return nil, err
	}
	tsc, err := promotedOrderTimeScale(cfg.Params)
	if err != nil {
		return nil, err
	}
	if cfg.Params.String("fs") == "tmpfs" {
		if err := promotedOrderTmpfsRoom(cfg, tsc); err != nil {
			return nil, err
		}
	}
	return &promotedOrderRun{cfg: cfg, metrics: map[string]float64{}}, nil
}

func (r *promotedOrderRun) Len() int { return 1 }

func (r *promotedOrderRun) Metrics() map[string]float64 {
	out := map[string]float64{}
	for k, v := range r.metrics {
		out[k] = v
	}
	return out
}

// configurePromotedOrder applies a variant's switches: the v7.3-rc5 base
// for all three, and the fix's two switches.
func configurePromotedOrder(m *mm.Machine, variant string) {
	m.Kernel.DeferredCompactNoStall = true
	m.Patches.PromotedOrderRetries = variant != "rc5"
	m.Patches.PromotedOrderRequestedFloor = variant == "requested"
}

// promotedOrderStart is where the engine's counters stood when the
// workers started.
type promotedOrderStart struct {
	giveups, lost, claimed, o9, o0, migrated, wouldOOMKill uint64
}

func (r *promotedOrderRun) Boot(int) (*Phase, error) {
	v := r.cfg.Params
	sc := v.Float("scale")
	lay, err := layoutPromotedOrder(v)
	if err != nil {
		return nil, err
	}
	m, err := newMachine(lay, r.cfg, false)
	if err != nil {
		return nil, err
	}
	configurePromotedOrder(m, r.cfg.Variant)
	pm, err := mm.ParsePinMigrate(v.String("pin_migrate"))
	if err != nil {
		return nil, err
	}
	m.Patches.PinMigrateMovable = pm
	cg := m.NewMemcg("build")
	setup := m.World.NewTask("setup", 0, nil, sim.Never)
	fill := &workload.PinnedFill{Cg: cg, Protect: uint64(sc * float64(1<<30)), FreeEvery: promotedOrderFreeEvery,
		LowAfterFree: v.String("low") == "resident"}
	if v.Bool("pins") {
		fill.PinFraction = 1 - v.Float("producible_pct")/100
	}
	if err := fill.Run(m, setup); err != nil {
		return nil, err
	}
	// The scenario's knobs (vm.defrag_mode=1) and the user's, after the
	// fill as the seed turns defrag_mode on after it.
	if err := ApplyKnobs(m, r.cfg.Knobs); err != nil {
		return nil, err
	}
	tsc, err := promotedOrderTimeScale(v)
	if err != nil {
		return nil, err
	}
	start := setup.Now
	duration := sim.Time(v.Float("duration_s") * tsc * float64(sim.Second))
	kind, _ := workload.ParseFSKind(v.String("fs")) // a choice parameter
	fs := workload.NewBuildFS(m, kind, cg, 0, start, sim.Time(tsc*float64(workload.BtrfsCommitInterval)))
	nw := v.Int("workers")
	var files []uint64
	if kind == workload.FSTmpfs {
		total := promotedOrderTmpfsFiles(v, tsc)
		for i := 0; i < nw; i++ {
			files = append(files, total/uint64(nw)+uint64(btoi(uint64(i) < total%uint64(nw))))
		}
	}
	var ws []*workload.BuildWorker
	for i := 0; i < nw; i++ {
		w := &workload.BuildWorker{FS: fs, Rng: m.World.Stream(fmt.Sprintf("workload/build#%d", i))}
		if files != nil {
			w.Files = files[i]
		}
		ws = append(ws, w)
		m.World.NewTask("build", i%len(m.World.CPUs), w, start)
	}
	mon := &workload.PSIMonitor{M: m, Interval: sim.Second, Threshold: 50, Until: start + duration,
		Counter: directRuns{m, mm.PageblockOrder}}
	m.World.NewTask("oomd", len(m.World.CPUs)-1, mon, start)
	s0 := promotedOrderStart{m.Slow.NofragGiveUps, m.Frag.MovableBlocksLost, m.Frag.WholeBlocksClaimed,
		m.Reclaim.DirectRuns[mm.PageblockOrder], m.Reclaim.DirectRuns[0], m.Pins.Migrated, m.Slow.WouldOOMKill}
	p := &promotedOrderPhase{r: r, m: m, ws: ws, mon: mon, s0: s0, start: start, duration: duration,
		fs: v.String("fs"), tmpfs: kind == workload.FSTmpfs}
	return &Phase{Name: p.fs, M: m, Until: start + duration, Status: p, End: p, Done: p}, nil
}

// directRuns reads the direct reclaim runs of one order.
type directRuns struct {
	m     *mm.Machine
	order mm.Order
}

// Count is m.Reclaim.DirectRuns[order].
func (d directRuns) Count() uint64 { return d.m.Reclaim.DirectRuns[d.order] }

// promotedOrderPhase is the build's phase: the workers ws and the PSI
// monitor mon on machine m, from start for duration.
type promotedOrderPhase struct {
	r               *promotedOrderRun
	m               *mm.Machine
	ws              []*workload.BuildWorker
	mon             *workload.PSIMonitor
	s0              promotedOrderStart
	start, duration sim.Time
	fs              string
	tmpfs           bool
}

// Done reports whether the phase ends before its time: every worker has
// finished (tmpfs's builds end), or an allocation reached the OOM killer
// (oom).
func (p *promotedOrderPhase) Done() bool {
	return p.oom() || (p.tmpfs && p.workersDone())
}

// oom reports whether an allocation since the workers' start reached
// out_of_memory() with a victim to select: __alloc_pages_may_oom() for a
// request that is not costly, has neither __GFP_RETRY_MAYFAIL nor
// __GFP_THISNODE, may use ZONE_NORMAL and has __GFP_FS, after its last
// attempt at the high watermark (linux-mm mm/page_alloc.c @00cb34b0,
// mm/oom_kill.c out_of_memory; mm.SlowpathStats.WouldOOMKill). There the
// kernel kills a task, in the seed's machine the workload that holds the
// fill, and the run the seed measured is over; pagesim has no OOM killer,
// and an allocation that goes on failing would loop to the phase's end,
// each retry a slow path that reclaims nothing (review finding F36:
// fs=tmpfs with files=600000 and every block pinned spun for 2.5 min of
// CPU). So the phase ends at the first such allocation, with finished 0
// and the time it got to. btrfs's GFP_NOFS requests do not end it: for
// them out_of_memory() kills nothing and the slow path retries them
// until a page is freed, or the phase ends (review finding F48). The
// dentries and inodes are GFP_KERNEL (workload.NewBuildFS).
func (p *promotedOrderPhase) oom() bool { return p.m.Slow.WouldOOMKill != p.s0.wouldOOMKill }

// workersDone reports whether every worker has made its files.
func (p *promotedOrderPhase) workersDone() bool {
	for _, w := range p.ws {
		if !w.Done {
			return false
		}
	}
	return true
}

func (p *promotedOrderPhase) ops() uint64 {
	var n uint64
	for _, w := range p.ws {
		n += w.Ops
	}
	return n
}

// Status says how far the build is.
func (p *promotedOrderPhase) Status() string {
	m := p.m
	return fmt.Sprintf("%s: %.1f of %.1f s, %d ops, %d order-9 reclaim runs", p.fs,
		(m.World.Now() - p.start).Seconds(), p.duration.Seconds(), p.ops(), m.Reclaim.DirectRuns[mm.PageblockOrder]-p.s0.o9)
}

// End reads the build's results.
func (p *promotedOrderPhase) End(bool) PhaseResult {
	r, m, mon, s0 := p.r, p.m, p.mon, p.s0
	end := m.World.Now()
	el := (end - p.start).Seconds()
	n := p.ops()
	longest := m.LongestSlowpath(end)
	r.metrics["ops_per_s"] = float64(n) / max(el, 1e-9)
	r.metrics["psi_some_mean_pct"] = mon.MeanPct()
	r.metrics["psi_some_peak_avg10"] = mon.PeakAvg10
	r.metrics["psi_some_s_over_50"] = float64(mon.Over) * mon.Interval.Seconds()
	r.metrics["nofrag_giveups"] = float64(m.Slow.NofragGiveUps - s0.giveups)
	r.metrics["movable_blocks_lost"] = float64(m.Frag.MovableBlocksLost - s0.lost)
	r.metrics["whole_blocks_claimed"] = float64(m.Frag.WholeBlocksClaimed - s0.claimed)
	r.metrics["order9_reclaim_runs"] = float64(m.Reclaim.DirectRuns[mm.PageblockOrder] - s0.o9)
	r.metrics["order0_reclaim_runs"] = float64(m.Reclaim.DirectRuns[0] - s0.o0)
	r.metrics["longest_slowpath_s"] = longest.Seconds()
	r.metrics["order9_peak_per_s"] = mon.PeakRate
	r.metrics["stormed"] = float64(btoi(mon.PeakRate >= promotedOrderStormRule))
	r.metrics["elapsed_s"] = el
	r.metrics["pins_migrated"] = float64(m.Pins.Migrated)
	oom := p.oom()
	r.metrics["finished"] = float64(btoi(!oom && (!p.tmpfs || p.workersDone())))
	line := ""
	if oom {
		line = fmt.Sprintf("ended at %.3f s: an allocation reached out_of_memory(), where the kernel's OOM killer "+
			"would kill a task (pagesim has none); ", el)
	}
	return PhaseResult{
		Line: line + fmt.Sprintf("%d ops in %.1f s, PSI some %.1f%% (peak avg10 %.1f), %d give-ups, %d order-9 reclaim runs",
			n, el, r.metrics["psi_some_mean_pct"], mon.PeakAvg10, m.Slow.NofragGiveUps-s0.giveups, m.Reclaim.DirectRuns[mm.PageblockOrder]-s0.o9),
		Headline: fmt.Sprintf("%.0f ops/s, PSI %.1f%%", r.metrics["ops_per_s"], r.metrics["psi_some_mean_pct"]),
	}
}

// fmtCount prints a count as the seed did ("3.85M", "22k"): whole below
// 10,000, then thousands, then millions, three significant digits.
func fmtCount(v float64) string {
	switch {
	case v < 9999.5:
		return fmt.Sprintf("%.0f", v)
	case v < 999500:
		return strconv.FormatFloat(v/1e3, 'g', 3, 64) + "k"
	}
	return strconv.FormatFloat(v/1e6, 'g', 3, 64) + "M"
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// reportPromotedOrder prints the seed's table: a row per number, a column
// per kernel.
func reportPromotedOrder(res *Result) string {
	var b strings.Builder
	for _, vr := range res.Variants {
		fmt.Fprintf(&b, "%s:\n", vr.Name)
		for _, l := range vr.Lines {
			for _, w := range wrap(l, 70) {
				b.WriteString("  " + w + "\n")
			}
		}
	}
	b.WriteByte('\n')
	head := []string{""}
	for _, vr := range res.Variants {
		head = append(head, vr.Name)
	}
	rows := [][]string{head}
	for _, row := range []struct{ label, metric, format string }{
		{"ops/s", "ops_per_s", "%.0f"},
		{"PSI some, mean %", "psi_some_mean_pct", "%.1f"},
		{"PSI some, peak avg10", "psi_some_peak_avg10", "%.1f"},
		{"s with some avg10 > 50", "psi_some_s_over_50", "%.1f"},
		{"give-ups (NOFRAG off)", "nofrag_giveups", "%.0f"},
		{"movable blocks lost", "movable_blocks_lost", "%.0f"},
		{"whole blocks claimed", "whole_blocks_claimed", "%.0f"},
		{"order-9 reclaim runs", "order9_reclaim_runs", "count"},
		{"order-0 reclaim runs", "order0_reclaim_runs", "count"},
		{"elapsed s", "elapsed_s", "%.1f"},
	} {
		r := []string{row.label}
		for i := range res.Variants {
			vr := &res.Variants[i]
			if row.format != "count" {
				r = append(r, res.cell(vr, row.metric, row.format))
				continue
			}
			c := fmtCount(vr.Mean[row.metric])
			if res.Runs > 1 {
				c += " ± " + fmtCount(vr.Stddev[row.metric])
			}
			r = append(r, c)
		}
		rows = append(rows, r)
	}
	b.WriteString(table(rows))
	var parts []string
	for _, vr := range res.Variants {
		n := 0
		for _, run := range vr.Runs {
			n += int(run["stormed"])
		}
		parts = append(parts, fmt.Sprintf("%s %d/%d", vr.Name, n, len(vr.Runs)))
	}
	b.WriteByte('\n')
	for _, l := range wrap("stormed (10,000 order-9 reclaim runs in a second): "+strings.Join(parts, ", "), 72) {
		b.WriteString(l + "\n")
	}
	return b.String()
}
