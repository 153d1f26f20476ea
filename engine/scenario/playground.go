package scenario

// playground.go is the playground: a scenario that is not a patch's and
// exists to watch the allocator at work (`pagesim run playground`; it is
// left out of `pagesim scenarios`, the page lists it last). It boots a
// SimpleLayout machine and runs one task per CPU that allocates and frees
// chunks of mixed orders and migratetypes through AllocPages and
// FreePages, keeping memory near a target fill. The mix of unmovable,
// reclaimable and movable requests makes the allocator steal and claim
// pageblocks, which is what the map shows. Its variants each change one
// knob. It boots like every scenario (newMachine: the seed's boot and
// scheduler causes), and each worker draws its choices from its own
// stream (workload/churn#CPU), so a seed and the parameters give the same
// machine everywhere.

import (
	"fmt"

	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/sim"
)

func init() {
	register(&Spec{
		ID:    "playground",
		Title: "Playground: allocation churn (no patch)",
		Summary: "Not a patch scenario: a playground for watching the allocator. " +
			"One task per CPU allocates and frees chunks of order 0 to 4 and order 9, most movable, some unmovable " +
			"(the unmovable percentage) or reclaimable, keeping memory near the fill percentage. Unmovable requests " +
			"that find no unmovable block fall back and steal or claim movable pageblocks, which the map shows as " +
			"blocks changing colour; order-9 requests (GFP_TRANSHUGE_LIGHT: no direct reclaim or compaction) fail once " +
			"free memory is fragmented. The variants change one knob each: baseline keeps the defaults, small_pcp sets " +
			"vm.percpu_pagelist_high_fraction=8 (smaller per-CPU lists), high_wmark sets vm.watermark_scale_factor=300 " +
			"(kswapd wakes earlier and reclaims further). Nothing here is on an LRU, so when memory runs out reclaim " +
			"finds nothing: the stalled allocations below show it. The table counts allocations, failures and fallbacks.",
		Params: []Param{
			rangeParam("nodes", "NUMA nodes", KindInt, "1", 1, 4),
			rangeParam("mem", "MiB of memory per node", KindInt, "256", 16, 4096),
			rangeParam("cpus", "CPUs per node", KindInt, "2", 1, 16),
			rangeParam("fill", "percent of memory the workload keeps allocated", KindInt, "85", 0, 95),
			rangeParam("unmovable", "percent of allocations that are unmovable", KindInt, "20", 0, 100),
			rangeParam("duration", "simulated seconds the run lasts", KindInt, "60", 1, 3600),
		},
		Variants: []Variant{
			{Name: "baseline", Help: "default knobs"},
			{Name: "small_pcp", Help: "vm.percpu_pagelist_high_fraction=8"},
			{Name: "high_wmark", Help: "vm.watermark_scale_factor=300", Optional: true},
		},
		MetricsOf: func(Values) []Metric {
			return []Metric{
				{Name: "allocations", Help: "allocations that succeeded"},
				{Name: "allocation_failures", Help: "allocations that failed", Headline: true},
				{Name: "frees", Help: "chunks freed"},
				{Name: "order9_success_pct", Help: "percent of order-9 requests that succeeded", Headline: true},
				{Name: "claim_whole", Help: "fallbacks that claimed a whole pageblock"},
				{Name: "claim_partial", Help: "fallbacks that claimed part of a pageblock"},
				{Name: "steal", Help: "fallbacks that stole pages without claiming the block"},
				{Name: "movable_blocks_lost", Help: "movable pageblocks claimed by another migratetype", Headline: true},
				{Name: "nr_free_pages", Help: "/proc/vmstat nr_free_pages at the end"},
			}
		},
		Machine: func(v Values) string {
			return fmt.Sprintf("%d x %d MiB nodes, %d CPUs per node; %d s of churn",
				v.Int("nodes"), v.Int("mem"), v.Int("cpus"), v.Int("duration"))
		},
		Layout:   layoutPlayground,
		Start:    startPlayground,
		Unlisted: true,
	})
}

// playground is one variant's run: a single phase of fixed length.
type playground struct {
	cfg          Config
	m            *mm.Machine
	unmovablePct uint64
	allocs       uint64
	failures     uint64
	frees        uint64
	thpAllocs    uint64
	thpFailures  uint64
}

func startPlayground(cfg Config) (Phases, error) {
	return &playground{cfg: cfg, unmovablePct: uint64(cfg.Params.Int("unmovable"))}, nil
}

// layoutPlayground is the machine: nodes of mem MiB, one Normal zone each.
func layoutPlayground(v Values) (mm.Config, error) {
	return mm.SimpleLayout(uint64(v.Int("mem"))<<20/mm.PAGE_SIZE, v.Int("nodes"), v.Int("cpus"))
}

func (p *playground) Len() int { return 1 }

func (p *playground) Boot(int) (*Phase, error) {
	v := p.cfg.Params
	cpus := v.Int("cpus")
	lc, err := layoutPlayground(v)
	if err != nil {
		return nil, err
	}
	switch p.cfg.Variant {
	case "small_pcp":
		lc.Sysctl = append(lc.Sysctl, mm.SysctlSetting{Name: "vm.percpu_pagelist_high_fraction", Value: "8"})
	case "high_wmark":
		lc.Sysctl = append(lc.Sysctl, mm.SysctlSetting{Name: "vm.watermark_scale_factor", Value: "300"})
	}
	m, err := newMachine(lc, p.cfg, false)
	if err != nil {
		return nil, err
	}
	if err := ApplyKnobs(m, p.cfg.Knobs); err != nil {
		return nil, err
	}
	p.m = m
	fill := uint64(v.Int("fill"))
	for cpu := 0; cpu < m.NrCPUs(); cpu++ {
		var managed uint64
		for _, z := range m.Nodes[m.CPUNode(cpu)].Zones {
			managed += z.ManagedPages
		}
		w := &churnWorker{p: p, target: managed * fill / 100 / uint64(cpus), rnd: m.World.Stream(fmt.Sprintf("workload/churn#%d", cpu))}
		t := m.World.NewTask(fmt.Sprintf("churn/%d", cpu), cpu, w, sim.Time(cpu)*10*sim.Microsecond)
		t.AllowedCPUs = []int{cpu}
	}
	return &Phase{M: m, Until: sim.Time(v.Int("duration")) * sim.Second, Status: p}, nil
}

// Status counts the churn's allocations.
func (p *playground) Status() string {
	return fmt.Sprintf("%d allocations, %d failed, %d frees", p.allocs, p.failures, p.frees)
}

// Metrics reads the counters as they stand.
func (p *playground) Metrics() map[string]float64 {
	f := p.m.Frag
	thp := 0.0
	if p.thpAllocs+p.thpFailures > 0 {
		thp = 100 * float64(p.thpAllocs) / float64(p.thpAllocs+p.thpFailures)
	}
	return map[string]float64{
		"allocations":         float64(p.allocs),
		"allocation_failures": float64(p.failures),
		"frees":               float64(p.frees),
		"order9_success_pct":  thp,
		"claim_whole":         float64(f.ClaimWhole),
		"claim_partial":       float64(f.ClaimPartial),
		"steal":               float64(f.Steal),
		"movable_blocks_lost": float64(f.MovableBlocksLost),
		"nr_free_pages":       float64(p.m.NrFreePages()),
	}
}

type churnChunk struct {
	pfn   mm.PFN
	order mm.Order
}

// churnWorker is one CPU's task.
type churnWorker struct {
	p      *playground
	target uint64 // pages this worker keeps allocated
	// rnd is the worker's own stream (workload/churn#CPU).
	rnd   *sim.Rand
	held  []churnChunk
	pages uint64
	// resuming is set while an allocation (gfp, order) is stopped at a
	// cond_resched().
	resuming bool
	gfp      mm.GFP
	order    mm.Order
}

// churnOrders is the order mix, in parts per 100.
var churnOrders = [...]struct {
	order mm.Order
	parts uint64
}{{0, 55}, {1, 12}, {2, 10}, {3, 10}, {4, 5}, {9, 8}}

// Step is one turn of the churn: an allocation or a free.
func (w *churnWorker) Step(wd *sim.World, t *sim.Task) sim.Time {
	p := w.p
	if w.resuming {
		// An allocation that stopped at a cond_resched() goes on.
		return w.alloc(wd, t, w.gfp, w.order)
	}
	rnd := w.rnd
	allocate := rnd.Chance(6, 10)
	if w.pages >= w.target {
		allocate = !allocate
	}
	if allocate || len(w.held) == 0 {
		pick := rnd.Uint64n(100)
		var order mm.Order
		for _, o := range churnOrders {
			if pick < o.parts {
				order = o.order
				break
			}
			pick -= o.parts
		}
		var gfp mm.GFP
		switch kind := rnd.Uint64n(100); {
		case order == mm.HPAGE_PMD_ORDER:
			gfp = mm.GFP_TRANSHUGE_LIGHT
		case kind < p.unmovablePct:
			gfp = mm.GFP_KERNEL
		case kind < p.unmovablePct+(100-p.unmovablePct)/8:
			gfp = gfpKernelReclaimable
		default:
			gfp = mm.GFP_HIGHUSER_MOVABLE
		}
		return w.alloc(wd, t, gfp, order)
	}
	i := rnd.Intn(len(w.held))
	c := w.held[i]
	w.held[i] = w.held[len(w.held)-1]
	w.held = w.held[:len(w.held)-1]
	w.pages -= c.order.Pages()
	p.m.FreePages(t, c.pfn, c.order)
	p.frees++
	return w.pause(wd, t)
}

// alloc makes one allocation of the churn.
func (w *churnWorker) alloc(wd *sim.World, t *sim.Task, gfp mm.GFP, order mm.Order) sim.Time {
	p := w.p
	pfn := p.m.AllocPagesLocal(t, gfp, order)
	if w.resuming = p.m.AllocPending(t); w.resuming {
		w.gfp, w.order = gfp, order
		return sim.Resched
	}
	if pfn == mm.NilPFN {
		p.failures++
		if order == mm.HPAGE_PMD_ORDER {
			p.thpFailures++
		}
	} else {
		p.allocs++
		if order == mm.HPAGE_PMD_ORDER {
			p.thpAllocs++
		}
		w.held = append(w.held, churnChunk{pfn, order})
		w.pages += order.Pages()
	}
	return w.pause(wd, t)
}

// pause returns when the worker runs next: 50-150 us later.
func (w *churnWorker) pause(wd *sim.World, t *sim.Task) sim.Time {
	return t.Now + 50*sim.Microsecond + sim.Time(w.rnd.Uint64n(100))*sim.Microsecond
}

// gfpKernelReclaimable is the mask of the churn's reclaimable allocations
// (a slab cache with SLAB_RECLAIM_ACCOUNT).
var gfpKernelReclaimable = mm.MustParseGFP("GFP_KERNEL|__GFP_RECLAIMABLE")
