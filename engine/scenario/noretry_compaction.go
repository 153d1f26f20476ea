package scenario

// noretry_compaction.go is the scenario of seed 000 (Salvatore Dipietro,
// "mm/page_alloc: avoid direct compaction for costly __GFP_NORETRY
// allocations", v4): PostgreSQL's pgbench simple-update with 1024 clients
// on a 96-vCPU arm64 machine whose memory is full and fragmented, with
// XFS, whose buffered writes (iomap) ask for large page-cache folios.
//
// The machine is one node of mem_gb x scale GiB and cpus CPUs, with an
// io2-like block device (the seed's 12 x io2 RAID0 behind the instance's
// EBS limit). The server holds memory as the seed's thread describes it:
// shared_buffers (25% of memory), the backends' page tables (~40%: 1024
// processes map shared_buffers with 4 KiB pages, huge_pages=off), the
// rest page cache of pgbench_accounts down to the low watermark; with
// fragmented=true one page-cache page in eight gives its place to a page
// table, the "primary source of unmovable fragmentation in this workload"
// (lore 20260605105826.3337-1-dipiets@amazon.it).
//
// clients sessions (engine/workload/pgbench.go) run transactions whose
// commits flush the WAL through one group-commit leader at a time. The
// measured window begins with a checkpoint, so the first change of each
// accounts page logs a full-page image: the WAL grows by megabytes per
// flush, and each flush is one pwrite of it, whose iomap folios are asked
// for at high orders. On fragmented memory those fail; in the baseline
// each failure runs direct compaction twice, direct reclaim and
// drain_all_pages() before falling back one order, while the leader holds
// WALWriteLock and every other session waits for its commit. The
// server's data files take 8 KiB writes besides (pgbench_history's
// extensions, the checkpointer's and the background writer's writes),
// each asking iomap for an order-1 folio where the block is not cached.
//
// The variants switch the engine only:
//   - baseline: v7.3-rc1 as the seed measured it;
//   - patched: Patches.CostlyNoretryNoDirectReclaim (the patch, v4);
//   - patched-no-thisnode-exempt (optional): the same without the
//     __GFP_THISNODE exemption (v3 review, "Johannes' approach");
//
// The v3 review's filemap.c alternative ("Matthew's approach",
// Patches.FilemapClearReclaimAfterFirst) is not offered yet: measured
// after the data-file writes and the lock fix it gives 12% less than the
// baseline where the thread measured 0.8% less (docs/FIDELITY.md).
//
// Nothing here sets a number: TPS is commits counted by the sessions over
// simulated time, latencies are their clocks, the rest is vmstat and the
// engine's counters, read over the measured window.

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/sim"
	"github.com/pagesim/pagesim/engine/workload"
)

func init() {
	register(&Spec{
		ID:    "noretry-compaction",
		Title: "Costly __GFP_NORETRY page-cache folios and direct compaction under pgbench",
		Seed:  "000",
		Patch: "mm/page_alloc: avoid direct compaction for costly __GFP_NORETRY allocations (Salvatore Dipietro, v4)",
		Lore: []string{
			"https://lore.kernel.org/all/20260403193535.9970-1-dipiets@amazon.it/T/#t",
			"https://lore.kernel.org/linux-mm/20260420161404.642-1-dipiets@amazon.it/T/#u",
			"https://lore.kernel.org/all/20260710143437.12379-1-dipiets@amazon.it/T/#u",
		},
		Summary: "Since \"iomap: Copy larger chunks from userspace\", XFS buffered writes ask the page cache for folios as large " +
			"as the write, and __filemap_get_folio_mpol() asks for every order above the smallest with __GFP_NORETRY, falling " +
			"back one order at a time. On fragmented memory a costly order fails, and in the baseline each failure still runs " +
			"direct compaction, direct reclaim and drain_all_pages() on every CPU first. PostgreSQL writes its WAL at commit " +
			"under WALWriteLock, so while the group-commit leader is in the slow path all 1024 sessions wait: pgbench " +
			"simple-update lost 62% of its throughput on a 96-vCPU machine. The patch clears __GFP_DIRECT_RECLAIM at the top " +
			"of the slow path for costly __GFP_NORETRY requests without __GFP_THISNODE; kswapd and kcompactd are still woken.",
		SeedMachine: "AWS m8g.24xlarge (96 vCPU arm64, 384 GiB), 12 x io2 RAID0 XFS, PostgreSQL 18.4, v7.3-rc1",
		Params: []Param{
			rangeParam("cpus", "CPUs", KindInt, "96", 1, 512),
			rangeParam("clients", "pgbench clients (PostgreSQL backends)", KindInt, "1024", 1, 4096),
			rangeParam("mem_gb", "memory, GiB at the seed's scale", KindFloat, "384", 1, 4096),
			rangeParam("scale", "memory scale against mem_gb (1 = the seed's size); CPUs and clients are not scaled", KindFloat, "0.0625", 0.005, 1),
			boolParam("fragmented", "one page-cache page in eight holds a page table (false: every page table in unmovable pageblocks)", "true"),
			rangeParam("max_write_kb", "largest WAL pwrite, KiB (PostgreSQL writes a flush in one pwrite up to wal_buffers, 64 MiB)", KindInt, "65536", 8, 65536),
			rangeParam("duration_s", "measured simulated seconds (after 0.1 s of warm-up)", KindFloat, "0.4", 0.05, 60),
			rangeParam("pgbench_scale", "pgbench scale factor at the seed's memory (100,000 accounts each); scaled with memory", KindInt, "1000", 1, 100000),
			rangeParam("txn_us", "CPU time of one transaction, us (an estimate: docs/FIDELITY.md)", KindFloat,
				strconv.FormatFloat(float64(workload.SimpleUpdateCPU)/float64(sim.Microsecond), 'g', -1, 64), 10, 100000),
			rangeParam("checkpoint_timeout_s", "checkpoint_timeout: the measured window stands for one checkpoint cycle of this length", KindFloat, "300", 1, 86400),
		},
		Variants: []Variant{
			{Name: "baseline", Help: "v7.3-rc1: costly __GFP_NORETRY folios run direct compaction, reclaim and drain_all_pages"},
			{Name: "patched", Help: "the patch (v4): no direct reclaim or compaction for costly __GFP_NORETRY without __GFP_THISNODE"},
			{Name: "patched-no-thisnode-exempt", Help: "v3 review (Johannes Weiner): the same for every costly __GFP_NORETRY", Optional: true},
		},
		// The page runs the command line's default, the seed's 96 CPUs
		// and 1024 sessions at scale 0.0625: since the block device's
		// prune and book fixes it plays to its end in about 20 s at the
		// top speed (docs/PERFORMANCE.md, "What the page runs").
		PageParams: map[string]string{"scale": "0.0625"},
		MetricsOf:  noretryMetrics,
		Counters: []string{"nr_free_pages", "nr_page_table_pages", "compact_stall", "compact_fail", "allocstall_movable",
			"pgscan_direct", "pgscan_kswapd", "pageoutrun", "compact_daemon_wake"},
		SeedResults: []SeedTable{
			{
				Title:    "TPS, average of 3 runs of 1200 s (v4 cover letter, v7.3-rc1)",
				Variants: []string{"baseline", "patched"},
				Rows:     []SeedRow{{Label: "Avg TPS", Metric: "tps", Values: []string{"59,408", "155,409"}}},
			},
			{
				Title:    "TPS, average of 4 runs (v3 thread, next-20260707)",
				Variants: []string{"baseline", "patched-no-thisnode-exempt"},
				Rows:     []SeedRow{{Label: "Avg TPS", Metric: "tps", Values: []string{"70,735", "156,908"}}},
			},
		},
		Machine: func(v Values) string {
			return fmt.Sprintf("1 node x %s GiB, %d CPUs, %d pgbench clients, io2-like RAID0; scale %g of the seed's %g GiB",
				fmtGB(noretryMemGB(v)), v.Int("cpus"), v.Int("clients"), v.Float("scale"), v.Float("mem_gb"))
		},
		Layout: layoutNoretry,
		Start:  startNoretry,
		Report: reportNoretry,
		// Listed, seed 000 would open the page; its run there takes
		// longer than the opening scenario's (docs/PERFORMANCE.md).
		NotOpening: true,
	})
}

func noretryMemGB(v Values) float64 { return v.Float("mem_gb") * v.Float("scale") }

// noretryOrders are the page-cache folio orders the report counts.
const noretryOrders = 10

func noretryMetrics(Values) []Metric {
	out := []Metric{
		{Name: "tps", Help: "transactions committed per simulated second over the measured window", Headline: true},
		{Name: "write_latency_us", Help: "mean WAL pwrite() latency, us (copy, folio allocations, slow path)", Headline: true},
		{Name: "compact_stall", Help: "/proc/vmstat compact_stall over the window", Headline: true},
		{Name: "compact_fail", Help: "/proc/vmstat compact_fail over the window"},
		{Name: "drain_all_pages_calls", Help: "drain_all_pages() runs over the window (the engine's count; no vmstat line)", Headline: true},
		{Name: "allocstall_normal", Help: "/proc/vmstat allocstall_normal over the window"},
		{Name: "allocstall_movable", Help: "/proc/vmstat allocstall_movable (page-cache direct reclaim counts here)"},
		{Name: "pgscan_direct", Help: "/proc/vmstat pgscan_direct over the window"},
		{Name: "pageoutrun", Help: "/proc/vmstat pageoutrun (kswapd balancing runs) over the window"},
		{Name: "pgscan_kswapd", Help: "/proc/vmstat pgscan_kswapd over the window (kswapd's scanning, also in a run that began before it)"},
		{Name: "compact_daemon_wake", Help: "/proc/vmstat compact_daemon_wake (kcompactd runs) over the window"},
		{Name: "commit_latency_ms", Help: "mean time from a transaction's start to its commit, ms"},
		{Name: "wal_mb_per_s", Help: "WAL flushed per simulated second, MiB"},
		{Name: "direct_compact_ms", Help: "time all tasks spent in direct compaction over the window, ms (the engine's clock; no vmstat line)"},
		{Name: "direct_reclaim_ms", Help: "time all tasks spent in direct reclaim over the window, ms (the engine's clock; no vmstat line)"},
		{Name: "data_writes", Help: "8 KiB data-file pwrites over the window: backends (evictions, pgbench_history extensions), checkpointer, background writer"},
		{Name: "fpi_pct", Help: "percent of transactions that logged a full-page image"},
		{Name: "pagetables_pct", Help: "nr_page_table_pages at the end, percent of managed memory"},
	}
	for o := 0; o < noretryOrders; o++ {
		out = append(out, Metric{Name: "folios_order_" + strconv.Itoa(o), Help: fmt.Sprintf("page-cache folios of order %d added over the window", o)})
	}
	return out
}

// layoutNoretry is the machine: one node with a single Normal zone (the
// arm64 DMA zone is left out).
func layoutNoretry(v Values) (mm.Config, error) {
	pages := uint64(noretryMemGB(v) * float64(1<<30) / mm.PAGE_SIZE)
	return mm.SimpleLayout(pages, 1, v.Int("cpus"))
}

// noretryRun is one variant's run: a single phase.
type noretryRun struct {
	cfg     Config
	metrics map[string]float64
	lines   []string
}

func startNoretry(cfg Config) (Phases, error) {
	v := cfg.Params
	if noretryMemGB(v) < 0.5 {
		return nil, fmt.Errorf("mem_gb x scale gives %s GiB; at least 0.5 GiB is needed", fmtGB(noretryMemGB(v)))
	}
	return &noretryRun{cfg: cfg, metrics: map[string]float64{}}, nil
}

func (r *noretryRun) Len() int { return 1 }

func (r *noretryRun) Metrics() map[string]float64 {
	out := make(map[string]float64, len(r.metrics))
	for k, v := range r.metrics {
		out[k] = v
	}
	return out
}

// The server's memory and costs. Sizes are fractions of the machine, so
// that they scale with it; each is a CHOICE written in docs/FIDELITY.md.
const (
	// noretrySharedBuffersPer1000 is shared_buffers, a quarter of RAM
	// (the thread's figure).
	noretrySharedBuffersPer1000 = 250
	// noretryMappedPer1000 is how much of shared_buffers each backend's
	// page tables map when the window begins: ~40% of memory in page
	// tables at 1024 backends.
	noretryMappedPer1000 = 780
	// noretryScatterPer1000 is one page-cache page in eight holding a page
	// table (fragmented).
	noretryScatterPer1000 = 125
	// noretryWarmup runs before the measured window.
	noretryWarmup = 100 * sim.Millisecond
)

// io2RAID0 is the seed's storage as one device: 12 io2 volumes in RAID0
// behind the instance's EBS limit. Each figure is a CHOICE from AWS's
// documentation (docs/FIDELITY.md): io2 Block Express's average latency
// "under 500 microseconds" for 16 KiB I/O, 12 x 32,000 provisioned IOPS,
// and m8g.24xlarge's 30 Gbps of EBS bandwidth. The latency spread is the
// engine's default (blk_mq.go).
func io2RAID0(d *mm.BlockDevice) {
	d.Name = "md0"
	d.Props.ReadBandwidth = 3_750_000_000
	d.Props.WriteBandwidth = 3_750_000_000
	d.Props.ReadIOPS = 12 * 32_000
	d.Props.WriteIOPS = 12 * 32_000
	d.Props.ReadLatency = 500 * sim.Microsecond
	d.Props.WriteLatency = 500 * sim.Microsecond
}

// configureNoretry applies a variant's switches.
func configureNoretry(m *mm.Machine, variant string) {
	switch variant {
	case "patched":
		m.Patches.CostlyNoretryNoDirectReclaim = true
	case "patched-no-thisnode-exempt":
		m.Patches.CostlyNoretryNoDirectReclaim = true
		m.Patches.CostlyNoretryNoThisnodeExempt = true
	}
}

// noretrySnap is what the window's metrics are differences of.
type noretrySnap struct {
	at           sim.Time
	events       [mm.NR_VM_EVENT_ITEMS]uint64
	drains       uint64
	compactTime  sim.Time
	reclaimTime  sim.Time
	folios       [mm.NR_PAGE_ORDERS]uint64
	stats        workload.PgBenchStats
	commitTime   sim.Time
	commitsTimed uint64
	taken        bool
}

func (r *noretryRun) Boot(int) (*Phase, error) {
	v := r.cfg.Params
	lay, err := layoutNoretry(v)
	if err != nil {
		return nil, err
	}
	m, err := newMachine(lay, r.cfg, false)
	if err != nil {
		return nil, err
	}
	configureNoretry(m, r.cfg.Variant)
	if err := ApplyKnobs(m, r.cfg.Knobs); err != nil {
		return nil, err
	}
	io2RAID0(&m.Blk)
	managed := m.TotalManagedPages()
	sc := v.Float("scale")
	// pgbench_accounts: 100,000 rows per scale unit, 61 rows in each
	// 8 KiB block at fillfactor 100 (a 121-byte tuple and its line
	// pointer): 1640 blocks per unit, scaled with the machine.
	accounts := uint64(float64(v.Int("pgbench_scale"))*sc*1640 + 0.5)
	setup := m.World.NewTask("setup", 0, nil, sim.Never)
	rng := m.World.Stream("workload/pgbench")
	bench, _, err := workload.SetupPgBench(m, setup, rng, workload.PgBenchMemory{
		SharedBuffers:  managed * noretrySharedBuffersPer1000 / 1000,
		AccountBlocks:  max(accounts, 1),
		Sessions:       v.Int("clients"),
		MappedPer1000:  noretryMappedPer1000,
		ScatterPer1000: noretryScatterPer1000,
		Fragmented:     v.Bool("fragmented"),
	})
	if err != nil {
		return nil, err
	}
	bench.TxnCPU = sim.Time(v.Float("txn_us") * float64(sim.Microsecond))
	bench.WALRecordBytes = workload.SimpleUpdateWALBytes
	bench.MaxWritePages = uint64(v.Int("max_write_kb")) * 1024 / mm.PAGE_SIZE
	bench.TouchesPerTxn = workload.SimpleUpdateTouches
	// The window stands for a checkpoint cycle: the seed's table (not
	// scaled with memory), compressed by window / checkpoint_timeout.
	dur := v.Float("duration_s")
	bench.FPIBlocks = max(uint64(float64(v.Int("pgbench_scale"))*1640*dur/v.Float("checkpoint_timeout_s")+0.5), 1)
	start := setup.Now + sim.Millisecond
	for c := 0; c < v.Int("clients"); c++ {
		// The postmaster forks each backend as its client connects.
		m.World.Fork("postgres", 0, bench.Session(noretryMappedPer1000), start+sim.Time(c)*sim.Microsecond)
	}
	// The server's background writers, started with the postmaster.
	m.World.Fork("postgres: checkpointer", 0, bench.Checkpointer(), start)
	m.World.Fork("postgres: background writer", 0, bench.BgWriter(), start)
	warmEnd := start + noretryWarmup
	end := warmEnd + sim.Time(dur*float64(sim.Second))
	p := &noretryPhase{r: r, m: m, bench: bench, warmEnd: warmEnd, dur: v.Float("duration_s")}
	m.World.AtTimer(warmEnd, noretryWarmEnd{p})
	return &Phase{Name: "pgbench", M: m, Until: end, Status: p, End: p}, nil
}

// noretryPhase is pgbench's phase on machine m: the measured window
// starts at warmEnd (snap, taken then) and lasts dur seconds.
type noretryPhase struct {
	r       *noretryRun
	m       *mm.Machine
	bench   *workload.PgBench
	warmEnd sim.Time
	dur     float64
	snap    noretrySnap
}

func (p *noretryPhase) take(s *noretrySnap, at sim.Time) {
	m := p.m
	s.at, s.events, s.drains, s.folios, s.stats = at, m.Stat.Events, m.Slow.Drains, m.Filemap.FoliosAdded, p.bench.Stats
	s.compactTime, s.reclaimTime = m.Slow.DirectCompactTime, m.Slow.DirectReclaimTime
	s.taken = true
}

// noretryWarmEnd ends the warm-up: the window's counters start here, and
// pgbench's checkpoint.
type noretryWarmEnd struct{ p *noretryPhase }

// Fire takes the window's first snapshot.
func (e noretryWarmEnd) Fire(w *sim.World) {
	e.p.take(&e.p.snap, w.Now())
	e.p.bench.Checkpoint()
}

// Status says where the benchmark is.
func (p *noretryPhase) Status() string {
	now := p.m.World.Now()
	if now < p.warmEnd {
		return fmt.Sprintf("warm-up, %d commits", p.bench.Stats.Commits)
	}
	return fmt.Sprintf("%.3f s of %g s measured, %d commits", (now - p.warmEnd).Seconds(), p.dur, p.bench.Stats.Commits-p.snap.stats.Commits)
}

// End reads the window's results.
func (p *noretryPhase) End(bool) PhaseResult {
	var fin noretrySnap
	p.take(&fin, p.m.World.Now())
	return p.r.finish(p.m, &p.snap, &fin)
}

// finish reads the window's results.
func (r *noretryRun) finish(m *mm.Machine, a, b *noretrySnap) PhaseResult {
	secs := (b.at - a.at).Seconds()
	ev := func(e mm.VMEventItem) float64 { return float64(b.events[e] - a.events[e]) }
	st := func(f func(s *workload.PgBenchStats) uint64) float64 { return float64(f(&b.stats) - f(&a.stats)) }
	commits := st(func(s *workload.PgBenchStats) uint64 { return s.Commits })
	writes := st(func(s *workload.PgBenchStats) uint64 { return s.Writes })
	tps := 0.0
	if secs > 0 {
		tps = commits / secs
	}
	met := r.metrics
	met["tps"] = tps
	met["write_latency_us"] = 0
	if writes > 0 {
		met["write_latency_us"] = float64(b.stats.WriteTime-a.stats.WriteTime) / float64(sim.Microsecond) / writes
	}
	met["compact_stall"] = ev(mm.COMPACTSTALL)
	met["compact_fail"] = ev(mm.COMPACTFAIL)
	met["drain_all_pages_calls"] = float64(b.drains - a.drains)
	met["allocstall_normal"] = ev(mm.ALLOCSTALL_NORMAL)
	met["allocstall_movable"] = ev(mm.ALLOCSTALL_MOVABLE)
	met["pgscan_direct"] = ev(mm.PGSCAN_DIRECT)
	met["pageoutrun"] = ev(mm.PAGEOUTRUN)
	met["pgscan_kswapd"] = ev(mm.PGSCAN_KSWAPD)
	met["compact_daemon_wake"] = ev(mm.KCOMPACTD_WAKE)
	// Little's law over the window: sessions / throughput.
	met["commit_latency_ms"] = 0
	if tps > 0 {
		met["commit_latency_ms"] = float64(r.cfg.Params.Int("clients")) / tps * 1000
	}
	met["wal_mb_per_s"] = 0
	if secs > 0 {
		met["wal_mb_per_s"] = st(func(s *workload.PgBenchStats) uint64 { return s.WALBytes }) / (1 << 20) / secs
	}
	met["direct_compact_ms"] = float64(b.compactTime-a.compactTime) / float64(sim.Millisecond)
	met["direct_reclaim_ms"] = float64(b.reclaimTime-a.reclaimTime) / float64(sim.Millisecond)
	met["data_writes"] = st(func(s *workload.PgBenchStats) uint64 { return s.DataWrites + s.CheckpointWrites + s.BgWriterWrites })
	met["fpi_pct"] = pct(st(func(s *workload.PgBenchStats) uint64 { return s.FPIs }), commits)
	met["pagetables_pct"] = pct(float64(m.GlobalNodeState(mm.NR_PAGETABLE)), float64(m.TotalManagedPages()))
	for o := 0; o < noretryOrders; o++ {
		met["folios_order_"+strconv.Itoa(o)] = float64(b.folios[o] - a.folios[o])
	}
	return PhaseResult{
		Line:     fmt.Sprintf("tps = %.6f (%.0f transactions in %.3f s)", tps, commits, secs),
		Headline: fmt.Sprintf("%s TPS", groupThousands(tps)),
	}
}

// groupThousands prints n rounded, with thousands separators ("59,408").
func groupThousands(f float64) string {
	s := strconv.FormatInt(int64(f+0.5), 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// noretryLabels are the cover letter's names for the variants.
var noretryLabels = map[string]string{
	"baseline":                   "baseline (no patch)",
	"patched":                    "With this patch",
	"patched-no-thisnode-exempt": "No THISNODE exemption",
}

func reportNoretry(res *Result) string {
	var b strings.Builder
	runs := "1 run"
	if res.Runs > 1 {
		runs = fmt.Sprintf("average of %d runs", res.Runs)
	}
	fmt.Fprintf(&b, "Results (%s, TPS over %g s of simulated time, standing\nfor a %g s checkpoint cycle):\n\n", runs, res.values.Float("duration_s"), res.values.Float("checkpoint_timeout_s"))
	rows := [][]string{{"Config", "Avg TPS", "% vs Baseline"}}
	var base float64
	for i := range res.Variants {
		if res.Variants[i].Name == "baseline" {
			base = res.Variants[i].Mean["tps"]
		}
	}
	for i := range res.Variants {
		vr := &res.Variants[i]
		label := noretryLabels[vr.Name]
		tps := groupThousands(vr.Mean["tps"])
		if res.Runs > 1 {
			tps += " ± " + groupThousands(vr.Stddev["tps"])
		}
		rel := "-"
		if vr.Name != "baseline" && base > 0 {
			rel = fmt.Sprintf("%+.1f%%", 100*(vr.Mean["tps"]/base-1))
		}
		rows = append(rows, []string{label, tps, rel})
	}
	b.WriteString(table(rows))
	b.WriteString("\nOver the measured window:\n\n")
	head := []string{"counter"}
	for _, vr := range res.Variants {
		head = append(head, vr.Name)
	}
	rows = [][]string{head}
	for _, c := range []string{"write_latency_us", "commit_latency_ms", "compact_stall", "compact_fail", "drain_all_pages_calls",
		"allocstall_normal", "allocstall_movable", "pgscan_direct", "pageoutrun", "pgscan_kswapd", "compact_daemon_wake", "direct_compact_ms", "direct_reclaim_ms", "wal_mb_per_s", "data_writes"} {
		row := []string{c}
		for i := range res.Variants {
			row = append(row, formatMetric(roundTo(res.Variants[i].Mean[c], c)))
		}
		rows = append(rows, row)
	}
	b.WriteString(table(rows))
	b.WriteString("\nPage-cache folios added, by order:\n\n")
	rows = [][]string{head}
	for o := 0; o < noretryOrders; o++ {
		row := []string{"order " + strconv.Itoa(o)}
		for i := range res.Variants {
			row = append(row, formatMetric(roundTo(res.Variants[i].Mean["folios_order_"+strconv.Itoa(o)], "")))
		}
		rows = append(rows, row)
	}
	b.WriteString(table(rows))
	return b.String()
}

// roundTo rounds a counter to a whole number and a latency or rate to one
// decimal.
func roundTo(v float64, metric string) float64 {
	if strings.HasSuffix(metric, "_us") || strings.HasSuffix(metric, "_ms") || strings.HasSuffix(metric, "_per_s") {
		return float64(int64(v*10+0.5)) / 10
	}
	return float64(int64(v + 0.5))
}
