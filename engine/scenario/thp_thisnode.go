package scenario

// thp_thisnode.go is the scenario of seed 003 (Andrea Arcangeli, "mm: thp:
// fix transparent_hugepage/defrag = madvise || always", 2018): qemu maps
// and vfio-pins a guest larger than one NUMA node with THP defrag=always.
//
// The machine is a two-node x86-64 host (2 x 32 GiB, so that ~31 GiB of
// guest fits on node 0, which is what the seed's upstream times imply; the
// seed gives no size, docs/FIDELITY.md says why this one) with 8 GiB of
// swap and 1 GiB of clean page cache per node. Each guest size is a phase
// on a freshly booted host.
// qemu runs on a CPU of node 0 and faults the guest RAM in address order,
// each fault taken by vfio's long-term pin.
//
// The variants switch the engine, nothing else:
//   - upstream: the 2018 alloc_pages_vma() (Kernel.THPLegacyThisnode): a
//     THP fault allocates on the local node with __GFP_THISNODE and gets no
//     second attempt, so when node 0 is full of pinned guest memory every
//     2 MiB fault runs direct reclaim on node 0 alone before falling back
//     to base pages; and the 2018 slow path (Kernel.LegacyCostlyNoretry),
//     where even a __GFP_NORETRY THP fault (defrag=always without
//     MADV_HUGEPAGE, madvise=false) goes on to one round of reclaim after
//     COMPACT_SKIPPED; and 2018 reclaim (Kernel.LegacyReclaim,
//     Kernel.LegacyPinnedReclaim: no full cgroup-walk retry, and pinned
//     THPs activated instead of kept), and no ALLOC_NOFRAGMENT on the
//     fast path (Kernel.NoAllocNofragment, before v5.0), which every 2018
//     variant shares;
//   - only-compact: fix 1, Patches.OnlyCompact (__GFP_ONLY_COMPACT): one
//     compaction attempt, never reclaim;
//   - drop-thisnode: fix 2, Patches.THPDropThisnode: no __GFP_THISNODE
//     when the mask may reclaim, so node 1's free memory serves THPs;
//   - modern (optional): today's alloc_pages_mpol() and PF_MEMALLOC_PIN.
//
// Nothing here sets a number: elapsed time is the qemu task's simulated
// clock, THP coverage and node placement are counted by the region's
// faults, and the counters are vmstat's.

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/sim"
	"github.com/pagesim/pagesim/engine/workload"
)

func init() {
	register(&Spec{
		ID:    "thp-thisnode",
		Title: "THP faults with __GFP_THISNODE and direct reclaim on a NUMA host",
		Seed:  "003",
		Patch: "mm: thp: fix transparent_hugepage/defrag = madvise || always (Andrea Arcangeli, 2018)",
		Lore:  []string{"https://lore.kernel.org/linux-mm/20180820032204.9591-3-aarcange@redhat.com/"},
		Summary: "With transparent_hugepage/defrag=always, or madvise for a MADV_HUGEPAGE region such as qemu's guest RAM, " +
			"THP faults may direct-reclaim, and mempolicy adds __GFP_THISNODE: the huge page must come from the local node. " +
			"When a VM is bigger than one node and vfio pins all of its memory, every 2 MiB fault beyond the local node's free " +
			"memory runs a futile reclaim of the local node (everything there is pinned) before falling back to 4 KiB pages: " +
			"mapping a 42 GB guest took 1188 s instead of 14 s. Fix 1 allows one compaction attempt and never reclaim " +
			"(__GFP_ONLY_COMPACT); fix 2 drops __GFP_THISNODE when the caller may reclaim, so the other node's free memory " +
			"provides huge pages.",
		SeedMachine: "x86-64 NUMA host running qemu with a vfio-assigned device; node size not stated (~31 GiB of guest fits on one node)",
		Params: []Param{
			{Name: "guest_gb", Help: "guest RAM sizes to map, GiB at the seed's scale (a comma list)", Kind: KindFloatList, Default: "30,34,38,42", Min: fptr(1), Max: fptr(4096)},
			rangeParam("nodes", "NUMA nodes", KindInt, "2", 2, 8),
			rangeParam("node_gb", "memory per node, GiB at the seed's scale", KindFloat, "32", 2, 1024),
			rangeParam("cpus", "CPUs per node", KindInt, "8", 1, 128),
			boolParam("vfio", "pin guest RAM with vfio (FOLL_LONGTERM) as it is faulted; false = plain touching", "true"),
			boolParam("madvise", "qemu madvises guest RAM (MADV_HUGEPAGE)", "true"),
			{Name: "mempolicy", Help: "qemu's memory policy for guest RAM, MODE[:NODES] as tmpfs's mpol= takes it: default, local, " +
				"preferred[:N], bind:NODES (bind:0, bind:0-1), interleave[:NODES]", Kind: KindMempolicy, Default: "default"},
			rangeParam("swap_gb", "swap space, GiB at the seed's scale", KindFloat, "8", 0, 4096),
			rangeParam("host_gb", "clean page cache per node before the VM starts, GiB at the seed's scale", KindFloat, "1", 0, 1024),
			rangeParam("scale", "memory scale against the seed's machine (1 = the seed's sizes)", KindFloat, "0.25", 0.01, 1),
		},
		Variants: []Variant{
			{Name: "upstream", Help: "Linux 4.18: THP faults allocate with __GFP_THISNODE on the local node, no second attempt"},
			{Name: "only-compact", Help: "fix 1 (this patch): __GFP_ONLY_COMPACT, one compaction attempt and never reclaim"},
			{Name: "drop-thisnode", Help: "fix 2: no __GFP_THISNODE when __GFP_DIRECT_RECLAIM is set; THP from any node"},
			{Name: "modern", Help: "today's kernel (labelled as such): local __GFP_THISNODE|__GFP_NORETRY attempt, then any node", Optional: true},
		},
		// The largest scale measured at which the three variants play to
		// their end within about 30 s at the top speed in a browser tab on
		// a 2-core machine (docs/PERFORMANCE.md, "The page's scale").
		PageParams: map[string]string{"scale": "0.05"},
		MetricsOf:  thpThisnodeMetrics,
		// The stalls the patch is about first (the page charts the first
		// two events): direct reclaim of node 0 for a THP fault counts
		// allocstall_movable, its futile scan pgscan_direct; compact_stall
		// stays 0 (the 2018 kernel counts no skipped compaction).
		Counters: []string{"allocstall_movable", "pgscan_direct", "thp_fault_alloc", "thp_fault_fallback", "allocstall_normal",
			"pgsteal_direct", "compact_stall", "pswpout", "nr_free_pages"},
		// The cover letter's "Finished:" lines, in GB/s: fix 1 and fix 2
		// ran twice, upstream once.
		SeedResults: []SeedTable{{
			Title:    "GB/s mapped (seed: upstream one run; each fix two runs)",
			Variants: []string{"upstream", "only-compact", "drop-thisnode"},
			Rows: []SeedRow{
				{Label: "30 GB", Metric: "gb_per_s_30", Values: []string{"3.40", "2.94 / 3.37", "2.95 / 3.64"}},
				{Label: "34 GB", Metric: "gb_per_s_34", Values: []string{"0.10", "2.77 / 3.17", "2.88 / 2.81"}},
				{Label: "38 GB", Metric: "gb_per_s_38", Values: []string{"0.05", "2.74 / 2.66", "3.66 / 3.21"}},
				{Label: "42 GB", Metric: "gb_per_s_42", Values: []string{"0.04", "2.94 / 3.02", "3.40 / 2.63"}},
			},
			Scale: "A smaller host shortens node 0's LRU lists and each guest's excess over the node, so upstream's collapse " +
				"time grows with the scale to the power 1.5 and its slowdown against the fixes shrinks at small scales " +
				"(docs/FIDELITY.md, Scaling); the fixes' GB/s barely move.",
		}},
		Machine: func(v Values) string {
			sc := v.Float("scale")
			return fmt.Sprintf("%d nodes x %s GiB, %d CPUs per node, swap %s GiB; scale %g of the seed's %g GiB nodes",
				v.Int("nodes"), fmtGB(v.Float("node_gb")*sc), v.Int("cpus"), fmtGB(v.Float("swap_gb")*sc), sc, v.Float("node_gb"))
		},
		Layout: layoutTHPThisnode,
		Knobs: []Knob{
			{"transparent_hugepage.enabled", "always"},
			{"transparent_hugepage.defrag", "always"},
		},
		Start:  startTHPThisnode,
		Report: reportTHPThisnode,
	})
}

func fptr(f float64) *float64 { return &f }

func fmtGB(f float64) string { return strconv.FormatFloat(f, 'g', 4, 64) }

// sizeLabel names a guest size in metric names: "34", "34.5".
func sizeLabel(gb float64) string { return strconv.FormatFloat(gb, 'g', -1, 64) }

func thpThisnodeMetrics(v Values) []Metric {
	var out []Metric
	for _, g := range v.FloatList("guest_gb") {
		l := sizeLabel(g)
		out = append(out,
			Metric{Name: "elapsed_s_" + l, Help: "seconds to map and pin the " + l + " GB guest"},
			Metric{Name: "gb_per_s_" + l, Help: "GiB mapped per second (scaled size / elapsed)", Headline: true},
			Metric{Name: "thp_pct_" + l, Help: "percent of guest RAM on PMD THPs", Headline: true},
			Metric{Name: "node0_pct_" + l, Help: "percent of guest RAM on node 0", Headline: true},
			Metric{Name: "oom_" + l, Help: "1 if mapping the " + l + " GB guest failed (out of memory), else 0"},
		)
	}
	out = append(out,
		Metric{Name: "compact_stall", Help: "/proc/vmstat compact_stall, summed over the guest sizes"},
		Metric{Name: "allocstall_normal", Help: "/proc/vmstat allocstall_normal, summed"},
		Metric{Name: "allocstall_movable", Help: "/proc/vmstat allocstall_movable, summed (GFP_TRANSHUGE reclaims for ZONE_MOVABLE)"},
		Metric{Name: "pgscan_direct", Help: "/proc/vmstat pgscan_direct, summed"},
		Metric{Name: "pswpout", Help: "/proc/vmstat pswpout, summed"},
		Metric{Name: "thp_fault_fallback", Help: "/proc/vmstat thp_fault_fallback, summed"},
	)
	return out
}

// thpThisnodeRun maps each guest size on a freshly booted host: one phase
// per size.
type thpThisnodeRun struct {
	cfg     Config
	sizes   []float64
	metrics map[string]float64
	totals  [6]uint64
	// qemu maps the current phase's guest.
	qemu *workload.QemuVfio
}

func startTHPThisnode(cfg Config) (Phases, error) {
	v := cfg.Params
	sc := v.Float("scale")
	nodeBytes := uint64(v.Float("node_gb") * sc * float64(1<<30))
	if nodeBytes < 256<<20 {
		return nil, fmt.Errorf("node_gb x scale gives %d MiB per node; at least 256 MiB are needed", nodeBytes>>20)
	}
	if _, err := mm.ParseMempolicy(v.String("mempolicy"), v.Int("nodes")); err != nil {
		return nil, err
	}
	lay, err := layoutTHPThisnode(v)
	if err != nil {
		return nil, err
	}
	// The memory the kernel manages (RAM less the memmap and the kernel
	// image); a guest beyond it cannot be mapped. Pinned guest RAM cannot
	// be swapped; plain touching may swap.
	var managed uint64
	for _, n := range lay.Nodes {
		for _, z := range n.Zones {
			managed += z.Managed * mm.PAGE_SIZE
		}
	}
	swap := uint64(v.Float("swap_gb") * sc * float64(1<<30))
	if v.Bool("vfio") {
		swap = 0
	}
	for _, g := range v.FloatList("guest_gb") {
		if guest := uint64(g * sc * float64(1<<30)); guest > managed+swap {
			return nil, fmt.Errorf("guest_gb %g does not fit: the host has %d nodes x %g GiB, %s of it managed by the kernel",
				g, v.Int("nodes"), v.Float("node_gb"), mm.FormatBytes(managed))
		}
	}
	return &thpThisnodeRun{cfg: cfg, sizes: v.FloatList("guest_gb"), metrics: map[string]float64{}}, nil
}

// configureTHPThisnode applies a variant's switches.
func configureTHPThisnode(m *mm.Machine, variant string) {
	switch variant {
	case "upstream", "only-compact", "drop-thisnode":
		m.Kernel.THPLegacyThisnode = true
		m.Kernel.NoMemallocPin = true
		m.Kernel.LegacyCostlyNoretry = true
		m.Kernel.LegacyCompactStall = true
		m.Kernel.LegacyReclaim = true
		m.Kernel.LegacyPinnedReclaim = true
		m.Kernel.NoAllocNofragment = true
	}
	m.Patches.OnlyCompact = variant == "only-compact"
	m.Patches.THPDropThisnode = variant == "drop-thisnode"
}

// layoutTHPThisnode is the host: nodes x node_gb x scale, x86-64 zones.
func layoutTHPThisnode(v Values) (mm.Config, error) {
	nodes := v.Int("nodes")
	nodeBytes := uint64(v.Float("node_gb") * v.Float("scale") * float64(1<<30))
	return mm.X86Layout(nodeBytes*uint64(nodes), nodes, v.Int("cpus"))
}

func (r *thpThisnodeRun) Len() int { return len(r.sizes) }

// Boot boots the host for guest size i and starts qemu mapping it.
func (r *thpThisnodeRun) Boot(i int) (*Phase, error) {
	v := r.cfg.Params
	sc := v.Float("scale")
	lay, err := layoutTHPThisnode(v)
	if err != nil {
		return nil, err
	}
	// One boot per run: every guest size of a run sees the same host.
	m, err := newMachine(lay, r.cfg, r.cfg.Variant != "modern")
	if err != nil {
		return nil, err
	}
	configureTHPThisnode(m, r.cfg.Variant)
	if err := ApplyKnobs(m, r.cfg.Knobs); err != nil {
		return nil, err
	}
	if err := m.SetSwap(uint64(v.Float("swap_gb") * sc * float64(1<<30))); err != nil {
		return nil, err
	}
	// The host: clean page cache on every node, written by a task there.
	var setupEnd sim.Time
	for _, n := range m.Nodes {
		tk := m.World.NewTask("setup", n.CPUs[0], nil, sim.Never)
		workload.FillPageCache(m, tk, "host-cache", nil, uint64(v.Float("host_gb")*sc*float64(1<<30)))
		if tk.Now > setupEnd {
			setupEnd = tk.Now
		}
	}
	guest := uint64(r.sizes[i] * sc * float64(1<<30) / mm.PAGE_SIZE)
	region := m.NewAnonRegion("qemu-guest", nil, guest)
	region.Madvised = v.Bool("madvise")
	region.Policy, _ = mm.ParseMempolicy(v.String("mempolicy"), v.Int("nodes")) // validated at start
	qemu := &workload.QemuVfio{M: m, Region: region, Pin: v.Bool("vfio")}
	r.qemu = qemu
	tk := m.World.Fork("qemu-kvm", 0, qemu, setupEnd)
	tk.AllowedCPUs = m.Nodes[0].CPUs
	p := &thpThisnodePhase{r: r, i: i, m: m, qemu: qemu}
	return &Phase{Name: sizeLabel(r.sizes[i]) + " GB", M: m, Done: p, Status: p, End: p}, nil
}

// thpThisnodePhase is one guest size's phase: the guest mapper qemu on
// machine m.
type thpThisnodePhase struct {
	r    *thpThisnodeRun
	i    int
	m    *mm.Machine
	qemu *workload.QemuVfio
}

// Done reports whether the guest is mapped.
func (p *thpThisnodePhase) Done() bool { return p.qemu.Done }

// Status says how much of the guest is mapped.
func (p *thpThisnodePhase) Status() string {
	region := p.qemu.Region
	return fmt.Sprintf("guest %s GB: %.2f of %.2f GiB mapped, %.1f s", sizeLabel(p.r.sizes[p.i]),
		float64(region.Cursor)*mm.PAGE_SIZE/float64(1<<30), float64(region.Pages)*mm.PAGE_SIZE/float64(1<<30), p.qemu.Elapsed(p.m.World.Now()).Seconds())
}

// End reads the guest size's results.
func (p *thpThisnodePhase) End(stuck bool) PhaseResult {
	if stuck {
		// Nothing left to run and the guest is not mapped.
		p.qemu.Failed, p.qemu.Done, p.qemu.Finish = 1, true, p.m.World.Now()
	}
	return p.r.finishSize(p.i, p.m, p.qemu)
}

func (r *thpThisnodeRun) Metrics() map[string]float64 {
	out := map[string]float64{}
	for k, v := range r.metrics {
		out[k] = v
	}
	return out
}

// finishSize reads guest size i's results once qemu has mapped it.
func (r *thpThisnodeRun) finishSize(i int, m *mm.Machine, qemu *workload.QemuVfio) PhaseResult {
	reg := qemu.Region
	sc := r.cfg.Params.Float("scale")
	l := sizeLabel(r.sizes[i])
	el := qemu.Elapsed(m.World.Now()).Seconds()
	gb := r.sizes[i] * sc
	mapped := float64(reg.Cursor)
	mappedGB := mapped * mm.PAGE_SIZE / float64(1<<30)
	// A guest that ran out of memory reports the rate at which it
	// mapped what it mapped, never its full size over that time.
	rate := 0.0
	if el > 0 {
		rate = mappedGB / el
	}
	r.metrics["elapsed_s_"+l] = el
	r.metrics["gb_per_s_"+l] = rate
	r.metrics["oom_"+l] = float64(min(qemu.Failed, 1))
	r.metrics["thp_pct_"+l] = pct(float64(reg.PMDPages), mapped)
	r.metrics["node0_pct_"+l] = pct(float64(reg.NodePages[0]), mapped)
	for i, e := range []mm.VMEventItem{mm.COMPACTSTALL, mm.ALLOCSTALL_NORMAL, mm.ALLOCSTALL_MOVABLE, mm.PGSCAN_DIRECT, mm.PSWPOUT, mm.THP_FAULT_FALLBACK} {
		r.totals[i] += m.Event(e)
	}
	for i, name := range []string{"compact_stall", "allocstall_normal", "allocstall_movable", "pgscan_direct", "pswpout", "thp_fault_fallback"} {
		r.metrics[name] = float64(r.totals[i])
	}
	if qemu.Failed > 0 {
		return PhaseResult{
			Line:     fmt.Sprintf("Failed: out of memory after %s of %s GB mapped, %.6fs elapsed", fmtGB(mappedGB), fmtGB(gb), el),
			Headline: l + " GB: out of memory",
		}
	}
	return PhaseResult{
		Line:     fmt.Sprintf("Finished: %s GB mapped, %.6fs elapsed, %.2fGB/s", fmtGB(gb), el, rate),
		Headline: fmt.Sprintf("%s GB: %.2f GB/s", l, rate),
	}
}

func pct(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return 100 * a / b
}

func reportTHPThisnode(res *Result) string {
	var b strings.Builder
	v := res.values
	for _, vr := range res.Variants {
		fmt.Fprintf(&b, "%s:\n", vr.Name)
		for _, l := range vr.Lines {
			b.WriteString("  " + l + "\n")
		}
		b.WriteByte('\n')
	}
	b.WriteString("GB/s mapped (higher is better)")
	if res.Runs > 1 {
		b.WriteString(", mean ± stddev")
	}
	b.WriteString(":\n\n")
	head := []string{"guest"}
	for _, vr := range res.Variants {
		head = append(head, vr.Name)
	}
	rows := [][]string{head}
	for _, g := range v.FloatList("guest_gb") {
		l := sizeLabel(g)
		row := []string{l + " GB"}
		for i := range res.Variants {
			vr := &res.Variants[i]
			if vr.Mean["oom_"+l] > 0 {
				// Out of memory in some runs: no rate to report.
				row = append(row, fmt.Sprintf("OOM %d/%d", int(math.Round(vr.Mean["oom_"+l]*float64(len(vr.Runs)))), len(vr.Runs)))
				continue
			}
			row = append(row, res.cell(vr, "gb_per_s_"+l, "%.2f"))
		}
		rows = append(rows, row)
	}
	b.WriteString(table(rows))
	b.WriteString("\nTHP coverage and node-0 share of guest RAM (%):\n\n")
	rows = [][]string{head}
	for _, g := range v.FloatList("guest_gb") {
		l := sizeLabel(g)
		row := []string{l + " GB"}
		for i := range res.Variants {
			vr := &res.Variants[i]
			if _, ok := vr.Mean["thp_pct_"+l]; !ok {
				row = append(row, NotYet)
				continue
			}
			row = append(row, fmt.Sprintf("%.0f/%.0f", vr.Mean["thp_pct_"+l], vr.Mean["node0_pct_"+l]))
		}
		rows = append(rows, row)
	}
	b.WriteString(table(rows))
	b.WriteString("\nCounters over all guest sizes:\n\n")
	rows = [][]string{append([]string{"counter"}, head[1:]...)}
	for _, c := range []string{"compact_stall", "allocstall_movable", "allocstall_normal", "pgscan_direct", "pswpout", "thp_fault_fallback"} {
		row := []string{c}
		for i := range res.Variants {
			if _, ok := res.Variants[i].Mean[c]; !ok {
				row = append(row, NotYet)
				continue
			}
			row = append(row, fmt.Sprintf("%.0f", res.Variants[i].Mean[c]))
		}
		rows = append(rows, row)
	}
	b.WriteString(table(rows))
	return b.String()
}
