package app

// churn.go is the playground: a scenario that is not a patch's (`pagesim
// run` does not know it) and exists to watch the allocator at work. It
// boots SimpleLayout machines and runs one task per CPU that allocates and
// frees chunks of mixed orders and migratetypes through mm.AllocPages and
// mm.FreePages, keeping memory near a target fill. The mix of unmovable,
// reclaimable and movable requests makes the allocator steal and claim
// pageblocks, which is what the map shows. Its variants each change one
// knob. Everything random comes from the machine's seeded RNG, so a seed
// and the parameters give the same machine everywhere.

import (
	"fmt"
	"strconv"

	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/sim"
)

// Churn is the playground scenario.
type Churn struct{}

func intParam(name, def, help string, lo, hi int) Param {
	return Param{Name: name, Default: def, Help: help, Check: func(v string) error {
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("must be a whole number between %d and %d", lo, hi)
		}
		if n < lo || n > hi {
			return fmt.Errorf("must be between %d and %d", lo, hi)
		}
		return nil
	}}
}

var churnInfo = Info{
	Name:  "churn",
	Title: "Playground: allocation churn (no patch)",
	Summary: "Not a patch scenario (pagesim run does not know it): a playground for watching the allocator. " +
		"One task per CPU allocates and frees chunks of order 0 to 4 and order 9, most movable, some unmovable " +
		"(the unmovable percentage) or reclaimable, keeping memory near the fill percentage. Unmovable requests " +
		"that find no unmovable block fall back and steal or claim movable pageblocks, which the map shows as " +
		"blocks changing colour; order-9 requests (GFP_TRANSHUGE_LIGHT: no direct reclaim or compaction) fail once " +
		"free memory is fragmented. The variants change one knob each: baseline keeps the defaults, small_pcp sets " +
		"vm.percpu_pagelist_high_fraction=8 (smaller per-CPU lists), high_wmark sets vm.watermark_scale_factor=300 " +
		"(kswapd wakes earlier and reclaims further). Nothing here is on an LRU, so when memory runs out reclaim " +
		"finds nothing: the stalled allocations below show it. The table counts allocations, failures and fallbacks.",
	Params: []Param{
		intParam("nodes", "1", "NUMA nodes", 1, 4),
		intParam("mem", "256", "MiB of memory per node", 16, 4096),
		intParam("cpus", "2", "CPUs per node", 1, 16),
		intParam("fill", "85", "percent of memory the workload keeps allocated", 0, 95),
		intParam("unmovable", "20", "percent of allocations that are unmovable", 0, 100),
		intParam("duration", "60", "simulated seconds the run lasts", 1, 3600),
	},
	Variants: []VariantInfo{
		{Name: "baseline", Summary: "default knobs", Default: true},
		{Name: "small_pcp", Summary: "vm.percpu_pagelist_high_fraction=8", Default: true},
		{Name: "high_wmark", Summary: "vm.watermark_scale_factor=300"},
	},
	CheckKnob: checkMMKnob,
}

// checkMMKnob accepts the sysctls and THP settings engine/mm models.
func checkMMKnob(name, value string) (string, error) {
	switch {
	case mm.IsSysctl(name):
		return name, mm.ValidateSysctl(name, value)
	case mm.IsTHPKnob(name):
		t := mm.DefaultTHPSettings()
		return name, t.SetKnob(name, value)
	}
	return "", fmt.Errorf("no such sysctl or transparent_hugepage setting")
}

// Info implements Scenario.
func (Churn) Info() Info { return churnInfo }

// NewRun implements Scenario.
func (Churn) NewRun(cfg RunConfig) (Run, error) {
	geti := func(name string) int {
		n, _ := strconv.Atoi(cfg.Params[name])
		return n
	}
	nodes, memMiB, cpus := geti("nodes"), geti("mem"), geti("cpus")
	lc, err := mm.SimpleLayout(uint64(memMiB)<<20/mm.PageSize, nodes, cpus)
	if err != nil {
		return nil, err
	}
	lc.Seed = cfg.Seed
	switch cfg.Variant {
	case "baseline":
	case "small_pcp":
		lc.Sysctl = append(lc.Sysctl, mm.SysctlSetting{Name: "vm.percpu_pagelist_high_fraction", Value: "8"})
	case "high_wmark":
		lc.Sysctl = append(lc.Sysctl, mm.SysctlSetting{Name: "vm.watermark_scale_factor", Value: "300"})
	default:
		return nil, fmt.Errorf("churn has no variant %q", cfg.Variant)
	}
	for _, k := range cfg.Knobs {
		if mm.IsSysctl(k.Name) {
			lc.Sysctl = append(lc.Sysctl, mm.SysctlSetting{Name: k.Name, Value: k.Value})
		}
	}
	m, err := mm.NewMachine(lc)
	if err != nil {
		return nil, err
	}
	for _, k := range cfg.Knobs {
		if mm.IsTHPKnob(k.Name) {
			if err := m.SetTHPKnob(k.Name, k.Value); err != nil {
				return nil, err
			}
		}
	}
	r := &churnRun{m: m, dur: sim.Time(geti("duration")) * sim.Second, unmovablePct: uint64(geti("unmovable"))}
	fill := uint64(geti("fill"))
	for cpu := 0; cpu < m.NrCPUs(); cpu++ {
		node := m.CPUNode(cpu)
		var managed uint64
		for _, z := range m.Nodes[node].Zones {
			managed += z.ManagedPages
		}
		w := &churnWorker{run: r, target: managed * fill / 100 / uint64(cpus)}
		t := m.World.NewTask(fmt.Sprintf("churn/%d", cpu), cpu, sim.ProgramFunc(w.step), sim.Time(cpu)*10*sim.Microsecond)
		t.AllowedCPUs = []int{cpu}
	}
	return r, nil
}

type churnRun struct {
	m            *mm.Machine
	dur          sim.Time
	unmovablePct uint64
	allocs       uint64
	failures     uint64
	frees        uint64
	thpAllocs    uint64
	thpFailures  uint64
}

type churnChunk struct {
	pfn   mm.PFN
	order mm.Order
}

type churnWorker struct {
	run    *churnRun
	target uint64 // pages this worker keeps allocated
	held   []churnChunk
	pages  uint64
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

func (w *churnWorker) step(wd *sim.World, t *sim.Task) sim.Time {
	r := w.run
	if w.resuming {
		// An allocation that stopped at a cond_resched() goes on.
		return w.alloc(wd, t, w.gfp, w.order)
	}
	if t.Now >= r.dur {
		return sim.Exit
	}
	rnd := wd.Rand
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
		case order == mm.HPagePMDOrder:
			gfp = mm.GFP_TRANSHUGE_LIGHT
		case kind < r.unmovablePct:
			gfp = mm.GFP_KERNEL
		case kind < r.unmovablePct+(100-r.unmovablePct)/8:
			gfp = mm.GFP_KERNEL | mm.G__GFP_RECLAIMABLE
		default:
			gfp = mm.GFP_HIGHUSER_MOVABLE
		}
		return w.alloc(wd, t, gfp, order)
	} else {
		i := rnd.Intn(len(w.held))
		c := w.held[i]
		w.held[i] = w.held[len(w.held)-1]
		w.held = w.held[:len(w.held)-1]
		w.pages -= c.order.Pages()
		r.m.FreePages(t, c.pfn, c.order)
		r.frees++
	}
	return w.pause(wd, t)
}

// alloc makes one allocation of the churn.
func (w *churnWorker) alloc(wd *sim.World, t *sim.Task, gfp mm.GFP, order mm.Order) sim.Time {
	r := w.run
	pfn := r.m.AllocPagesLocal(t, gfp, order)
	if w.resuming = r.m.AllocPending(t); w.resuming {
		w.gfp, w.order = gfp, order
		return sim.Resched
	}
	if pfn == mm.NilPFN {
		r.failures++
		if order == mm.HPagePMDOrder {
			r.thpFailures++
		}
	} else {
		r.allocs++
		if order == mm.HPagePMDOrder {
			r.thpAllocs++
		}
		w.held = append(w.held, churnChunk{pfn, order})
		w.pages += order.Pages()
	}
	return w.pause(wd, t)
}

// pause returns when the worker runs next: 50-150 us later.
func (w *churnWorker) pause(wd *sim.World, t *sim.Task) sim.Time {
	return t.Now + 50*sim.Microsecond + sim.Time(wd.Rand.Uint64n(100))*sim.Microsecond
}

func (r *churnRun) Machine() *mm.Machine { return r.m }
func (r *churnRun) Now() sim.Time        { return r.m.World.Now() }
func (r *churnRun) Duration() sim.Time   { return r.dur }

func (r *churnRun) Advance(until sim.Time, maxEvents int) int {
	if until > r.dur {
		until = r.dur
	}
	if maxEvents <= 0 {
		return 0
	}
	n := 0
	return r.m.World.RunUntil(until, func() bool { n++; return n >= maxEvents })
}

func (r *churnRun) Results() []Metric {
	f := r.m.Frag
	thp := 0.0
	if r.thpAllocs+r.thpFailures > 0 {
		thp = 100 * float64(r.thpAllocs) / float64(r.thpAllocs+r.thpFailures)
	}
	return []Metric{
		{Name: "allocations", Value: float64(r.allocs)},
		{Name: "allocation failures", Value: float64(r.failures)},
		{Name: "frees", Value: float64(r.frees)},
		{Name: "order-9 success", Value: thp, Text: strconv.FormatFloat(thp, 'f', 1, 64), Unit: "%"},
		{Name: "fallbacks claiming a whole block", Value: float64(f.ClaimWhole)},
		{Name: "fallbacks claiming part of a block", Value: float64(f.ClaimPartial)},
		{Name: "fallbacks stealing pages", Value: float64(f.Steal)},
		{Name: "movable blocks lost", Value: float64(f.MovableBlocksLost)},
		{Name: "free pages", Value: float64(r.m.NrFreePages())},
	}
}
