package workload

import (
	"fmt"
	"testing"
	"time"

	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/sim"
)

func boot(b *testing.B, bytes uint64, nodes, cpus int) *mm.Machine {
	b.Helper()
	cfg, err := mm.X86Layout(bytes, nodes, cpus)
	if err != nil {
		b.Fatal(err)
	}
	m, err := mm.NewMachine(cfg)
	if err != nil {
		b.Fatal(err)
	}
	return m
}

// BenchmarkPageCacheFillReclaim: an 8-CPU machine whose eight writers
// stream files through the page cache at the disk's bandwidth for 30
// simulated seconds; the cache fills memory (a 32 GiB machine in ~16 s)
// and kswapd then reclaims it. Reports simulated seconds per wall second,
// allocator events per wall second and wall time per unit of engine work.
// The writers do the same work per simulated second on every size, so
// equal wall-ns/work-unit across sizes shows the cost is linear in the
// work done and not in the memory simulated.
func BenchmarkPageCacheFillReclaim(b *testing.B) {
	for _, gib := range []uint64{8, 16, 32} {
		b.Run(fmt.Sprintf("%dGiB", gib), func(b *testing.B) { benchPageCache(b, gib<<30) })
	}
}

func benchPageCache(b *testing.B, bytes uint64) {
	const simTime = 30 * sim.Second
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		m := boot(b, bytes, 1, 8)
		var ws []*PageCacheWriter
		for c := 0; c < 8; c++ {
			w := &PageCacheWriter{M: m}
			ws = append(ws, w)
			m.World.NewTask("writer", c, w, 0)
		}
		w0 := work(m)
		b.StartTimer()
		start := time.Now()
		m.World.RunUntil(simTime, nil)
		wall := time.Since(start)
		b.StopTimer()
		var written uint64
		for _, w := range ws {
			written += w.Written
		}
		if m.Event(mm.PGSTEAL_KSWAPD) == 0 {
			b.Fatal("kswapd never reclaimed: the benchmark did not reach reclaim")
		}
		allocs := m.Event(mm.PGALLOC_NORMAL) + m.Event(mm.PGALLOC_DMA32) + m.Event(mm.PGALLOC_DMA)
		b.ReportMetric(simTime.Seconds()/wall.Seconds(), "sim-s/wall-s")
		b.ReportMetric(float64(allocs)/wall.Seconds(), "allocs/wall-s")
		b.ReportMetric(float64(wall.Nanoseconds())/float64(work(m)-w0), "wall-ns/work-unit")
		b.ReportMetric(float64(m.Event(mm.PGSTEAL_KSWAPD)), "pgsteal_kswapd")
		b.ReportMetric(float64(written*mm.PAGE_SIZE)/simTime.Seconds()/1e9, "GB/sim-s")
	}
}

// BenchmarkCompactionScan: whole-zone sync compaction of a 4 GiB zone in
// which every pageblock has a quarter of its pages free, in runs of 128
// pages: four regions fault in turn, 128 pages each, and the fourth is
// dropped. (With every fourth page free instead, the kernel's free scanner,
// whose stride has grown to COMPACT_CLUSTER_MAX over the memmap's full
// blocks at the zone's top, samples none of the holes and the run ends
// after 256 pages.) Reports pages scanned (migrate + free scanner) and
// pages migrated per wall second.
func BenchmarkCompactionScan(b *testing.B) {
	const run = 128
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		cfg, _ := mm.SimpleLayout(1<<20, 1, 1)
		m, err := mm.NewMachine(cfg)
		if err != nil {
			b.Fatal(err)
		}
		t := m.World.NewTask("fill", 0, nil, sim.Never)
		fill := m.NrFreePages() - m.Nodes[0].Zones[mm.ZONE_NORMAL].WmarkPages(mm.WMARK_HIGH) - 4096
		var regions [4]*mm.AnonRegion
		for k := range regions {
			regions[k] = m.NewAnonRegion(fmt.Sprintf("fill%d", k), nil, fill/4)
			regions[k].NoHugepage = true
		}
	faults:
		for {
			for _, r := range regions {
				for j := 0; j < run; j++ {
					if r.Cursor >= r.Pages || !m.FaultAnonNext(t, r, false).OK {
						break faults
					}
				}
			}
		}
		if _, err := m.MadviseDontneed(t, regions[3].Owner, 1); err != nil {
			b.Fatal(err)
		}
		before := m.Event(mm.COMPACTMIGRATE_SCANNED) + m.Event(mm.COMPACTFREE_SCANNED)
		b.StartTimer()
		start := time.Now()
		m.CompactMemory(t)
		wall := time.Since(start)
		b.StopTimer()
		scanned := m.Event(mm.COMPACTMIGRATE_SCANNED) + m.Event(mm.COMPACTFREE_SCANNED) - before
		b.ReportMetric(float64(scanned)/wall.Seconds(), "pages-scanned/wall-s")
		b.ReportMetric(float64(m.Event(mm.PGMIGRATE_SUCCESS))/wall.Seconds(), "pages-migrated/wall-s")
		b.ReportMetric(float64(m.Event(mm.PGMIGRATE_SUCCESS)), "pages-migrated")
	}
}

// seed002Machine sets up seed 002's reproducer on a 32 GiB, 8-CPU machine:
// 4K anon fill in a cgroup protected by memory.low, one page pinned in 98%
// of pageblocks, one page in eight freed, vm.defrag_mode=1, and eight
// build-like workers on btrfs in the cgroup.
func seed002Machine(b *testing.B, fixed bool) (*mm.Machine, []*BuildWorker, sim.Time) {
	m := boot(b, 32<<30, 1, 8)
	m.Patches.PromotedOrderRetries = fixed
	m.Kernel.DeferredCompactNoStall = true
	cg := m.NewMemcg("build")
	t := m.World.NewTask("setup", 0, nil, sim.Never)
	fill := &PinnedFill{Cg: cg, Protect: 1 << 30, PinFraction: 0.98, FreeEvery: 8}
	if err := fill.Run(m, t); err != nil {
		b.Fatal(err)
	}
	fs := NewBuildFS(m, FSBtrfs, cg, 0, t.Now, 0)
	var ws []*BuildWorker
	for c := 0; c < 8; c++ {
		w := &BuildWorker{FS: fs, Rng: m.World.Stream(fmt.Sprintf("workload/build#%d", c))}
		ws = append(ws, w)
		m.World.NewTask("build", c, w, t.Now)
	}
	// Setup ran in one task's clock; the machine starts at its end.
	m.World.RunUntil(t.Now, nil)
	return m, ws, t.Now
}

// work is the engine work a run did: pages the allocator handed out, pages
// reclaim and compaction looked at.
func work(m *mm.Machine) uint64 {
	return m.Event(mm.PGALLOC_NORMAL) + m.Event(mm.PGALLOC_DMA32) + m.Event(mm.PGFREE) +
		m.Event(mm.PGSCAN_DIRECT) + m.Event(mm.PGSCAN_KSWAPD) +
		m.Event(mm.COMPACTMIGRATE_SCANNED) + m.Event(mm.COMPACTFREE_SCANNED)
}

func benchSeed002(b *testing.B, fixed bool) {
	simTime := seed002SimTime
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		m, ws, start0 := seed002Machine(b, fixed)
		w0, s0 := work(m), m.World.Steps
		b.StartTimer()
		start := time.Now()
		m.World.RunUntil(start0+simTime, nil)
		wall := time.Since(start)
		b.StopTimer()
		var ops uint64
		for _, w := range ws {
			ops += w.Ops
		}
		done := work(m) - w0
		b.ReportMetric(simTime.Seconds()/wall.Seconds(), "sim-s/wall-s")
		b.ReportMetric(float64(wall.Nanoseconds())/float64(done), "wall-ns/work-unit")
		b.ReportMetric(float64(wall.Nanoseconds())/float64(m.World.Steps-s0), "wall-ns/step")
		b.ReportMetric(float64(m.Reclaim.DirectRuns[mm.PageblockOrder])/simTime.Seconds(), "order9-runs/sim-s")
		b.ReportMetric(float64(ops)/simTime.Seconds(), "ops/sim-s")
		b.ReportMetric(float64(m.Reclaim.DirectRuns[mm.PageblockOrder]), "order9-reclaim-runs")
		b.ReportMetric(float64(m.Slow.NofragGiveUps), "give-ups")
	}
}

// seed002SimTime is how long the seed-002 benchmarks run (the seed ran 180 s).
var seed002SimTime = 60 * sim.Second

// BenchmarkSeed002Fixed: seed 002's workload with the posted fix (no storm).
func BenchmarkSeed002Fixed(b *testing.B) { benchSeed002(b, true) }

// BenchmarkSeed002RC5: the same on v7.3-rc5, where the retry loop can storm.
func BenchmarkSeed002RC5(b *testing.B) { benchSeed002(b, false) }

// BenchmarkSeed002IO runs the first 2 simulated seconds of seed 002's
// workload (the posted fix) on the default block device and on one with
// unlimited bandwidth and no latency, and reports the operations done and
// the workers' I/O wait: what the device does to the workload's pace.
func BenchmarkSeed002IO(b *testing.B) {
	for _, dev := range []struct {
		name  string
		ideal bool
	}{{"nvme", false}, {"ideal", true}} {
		b.Run(dev.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				m, ws, start0 := seed002Machine(b, true)
				if dev.ideal {
					m.Blk.Props = mm.BlockDeviceProps{ReadBandwidth: 1 << 50, WriteBandwidth: 1 << 50}
				}
				b.StartTimer()
				m.World.RunUntil(start0+2*sim.Second, nil)
				b.StopTimer()
				var ops uint64
				for _, w := range ws {
					ops += w.Ops
				}
				b.ReportMetric(float64(ops), "ops")
				b.ReportMetric(m.IOWait.Seconds(), "iowait-s")
				b.ReportMetric(float64(m.Blk.Stat.Writes), "write-requests")
			}
		})
	}
}
