package app

// scenarioscript.go is "this scenario as a script": where a scenario's
// workload can be written in the script language, a script that starts
// from it, on a small machine of the scenario's shape or on the machine
// "Start from a machine" imported; where it cannot yet, or where the
// imported machine cannot hold it, the reason.

import (
	"fmt"
	"strings"

	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/scenario"
	"github.com/pagesim/pagesim/engine/script"
)

// MachineShape is what a starting point needs to know of an imported
// machine: each node's managed pages.
type MachineShape struct {
	Managed []uint64 // per node, in pages
	// Free is the pages free on the whole machine (an imported machine
	// comes with its memory in use).
	Free uint64
}

// shapeOf reads a machine's shape.
func shapeOf(m *mm.Machine) *MachineShape {
	s := &MachineShape{Managed: make([]uint64, len(m.Nodes))}
	for _, z := range m.ZoneViews() {
		s.Managed[z.Node] += z.Managed
		s.Free += uint64(max(z.Free, 0))
	}
	return s
}

func (s *MachineShape) total() uint64 {
	var n uint64
	for _, x := range s.Managed {
		n += x
	}
	return n
}

// ScenarioScript returns the script that starts from spec's workload:
// on the scenario's own small machine when on is nil, on the imported
// machine (the script's import command) otherwise. It refuses, with the
// reason, a scenario whose workload the language cannot write yet and
// one whose workload does not make sense on the imported machine.
func ScenarioScript(spec *scenario.Spec, on *MachineShape) (string, error) {
	switch spec.ID {
	case "thp-thisnode":
		if on == nil {
			return seedExample(spec)
		}
		if len(on.Managed) < 2 {
			return "", fmt.Errorf("%s maps a guest bigger than node 0 on a host with two NUMA nodes: the imported machine has %d node", spec.ID, len(on.Managed))
		}
		return thpThisnodeScript(on), nil
	case "promoted-order", "noretry-compaction":
		src, err := seedExample(spec)
		if err != nil || on == nil {
			return src, err
		}
		// The build workers and a pgbench server make sense on any
		// machine.
		lines := strings.SplitN(src, "\n", 2)
		return "import\n" + lines[1], nil
	case "playground":
		if on != nil && on.Free <= on.total()*15/100 {
			return "", fmt.Errorf("%s keeps 85%% of memory in use, and the imported machine has %d%% in use already", spec.ID, 100-on.Free*100/max(on.total(), 1))
		}
		return playgroundScript(on), nil
	case "nofrag-watermark":
		if on == nil {
			return seedExample(spec)
		}
		if on.Free*10 < on.total() {
			return "", fmt.Errorf("%s fills memory with the hog's page cache, and the imported machine has %d%% in use already", spec.ID, 100-on.Free*100/max(on.total(), 1))
		}
		return nofragScript(on), nil
	}
	return "", fmt.Errorf("%s has no script form", spec.ID)
}

// seedExample is docs/SCRIPT.md's example for spec's seed ("Seed 003:
// ...").
func seedExample(spec *scenario.Spec) (string, error) {
	for _, e := range script.Examples {
		if spec.Seed != "" && strings.HasPrefix(e.Title, "Seed "+spec.Seed+":") {
			return e.Src, nil
		}
	}
	return "", fmt.Errorf("docs/SCRIPT.md has no example for seed %s", spec.Seed)
}

// thpThisnodeScript is seed 003's example on an imported machine of two
// nodes or more: a guest of node 0's memory and a quarter of node 1's,
// mapped by qemu on node 0 under the 2018 kernel, then with fix 2.
func thpThisnodeScript(on *MachineShape) string {
	guest := (on.Managed[0] + on.Managed[1]/4) * mm.PAGE_SIZE
	run := func(patch string) string {
		return "import\n" +
			"thp transparent_hugepage.enabled=always transparent_hugepage.defrag=always\n" +
			"kernel THPLegacyThisnode=on NoMemallocPin=on\n" + patch +
			fmt.Sprintf("swap %dM\n", max(guest/4>>20, 1)) +
			fmt.Sprintf("region guest size=%dM madvise=hugepage\n", guest>>20) +
			"task qemu qemu region=guest node=0\n" +
			"run until=qemu-done\n" +
			"print qemu.elapsed guest.thp guest.base allocstall_movable pgscan_direct\n"
	}
	return "# seed 003 on the imported machine: a guest of node 0's memory and a\n" +
		"# quarter of node 1's, the 2018 kernel, then with fix 2\n" +
		run("") + "print stall\n\n" + run("patch THPDropThisnode=on\n")
}

// playgroundScript is the playground's churn in the language: movable
// order-4 and unmovable order-3 chunks (the largest of the playground's
// orders below 9: the fewest allocations to fill a large machine) held so that memory stays near
// 85% used (a fifth of what they hold unmovable), and order-9 requests
// that fail once free memory is fragmented; on 256 MiB, or on the
// imported machine, whose memory in use counts towards the 85%.
func playgroundScript(on *MachineShape) string {
	var b strings.Builder
	pages := uint64(256<<20/mm.PAGE_SIZE) * 85 / 100
	if on == nil {
		b.WriteString("# the playground's churn: allocations held so that memory stays near\n# 85% used, a fifth of it unmovable\nmachine mem=256M layout=simple cpus=2\n")
	} else {
		b.WriteString("# the playground's churn on the imported machine: allocations held so\n# that memory stays near 85% used, a fifth of them unmovable\nimport\n")
		pages = on.Free - on.total()*15/100
	}
	// One allocation a millisecond each: a chunk held h ms keeps h
	// chunks allocated.
	movable := pages * 80 / 100 / 16
	unmovable := pages * 20 / 100 / 8
	fmt.Fprintf(&b, "task movable alloc gfp=GFP_HIGHUSER_MOVABLE order=4 hold=%dms interval=1ms\n", max(movable, 1))
	fmt.Fprintf(&b, "task unmovable alloc gfp=GFP_KERNEL order=3 hold=%dms interval=1ms\n", max(unmovable, 1))
	b.WriteString("task huge alloc gfp=GFP_TRANSHUGE_LIGHT order=9 hold=20ms interval=10ms\n")
	fmt.Fprintf(&b, "run %dms\n", 2*max(movable, unmovable))
	b.WriteString("print buddyinfo\nprint nr_free_pages compact_stall pgalloc_normal\n")
	return b.String()
}

// nofragScript is seed 001's example on an imported machine, its sizes
// from pagesim run nofrag-watermark's rules for a VM of the machine's
// memory: two files three quarters of memory each, four fifths of the
// free memory cached, the hog reading 64K at random at 300 MB/s in all,
// the caches' peaks 3% (reclaimable, order-3 slabs) and 1.5% (unmovable,
// order-1) of memory on a cycle of 2 s x memory/7G, the benchmark after
// the hog has read twice memory, faulting 1342 MiB x memory/7G; with
// vm.defrag_mode=0, =1, and =1 with the series. The tasks go where the
// scheduler puts them (the imported machine's CPUs are its own).
func nofragScript(on *MachineShape) string {
	total := on.total() * mm.PAGE_SIZE
	sc := float64(total) / float64(7<<30)
	kib := func(b uint64) uint64 { return max(b>>10, 4) }
	fill := on.Free * mm.PAGE_SIZE * 8 / 10 / 2
	end := total * 3 / 4
	// The caches churn objects (slabcycle objsize=), a thirty-second of
	// the peak a step, as the scenario's do; the reclaimable one has
	// its superblock shrinker. A peak is held to the 4,194,304 objects
	// the script's churn keeps records for (a machine of 256 GiB and
	// more).
	slab := func(task, name string, objSize uint64, reclaimable bool, peak uint64) string {
		hi := min(max(peak/objSize, 2), 1<<22)
		batch := max(hi/32, 1)
		steps := max(2*(hi-hi/2)/batch, 1)
		us := uint64(2 * sc * 1e6 / float64(steps))
		r := ""
		if reclaimable {
			r = " reclaimable=on shrinker=on"
		}
		return fmt.Sprintf("task %s slabcycle cache=%s objsize=%d size=%dK%s batch=%d interval=%dus\n",
			task, name, objSize, kib(hi*objSize), r, batch, max(us, 1))
	}
	warm := uint64(float64(2*total) / 300e6 * 1000)
	fault := uint64(1342*sc*(1<<20)) &^ (64<<10 - 1)
	block := func(dm, patch string) string {
		var b strings.Builder
		b.WriteString("import\n" +
			"thp transparent_hugepage.enabled=never transparent_hugepage.hugepages-64kB.enabled=always\n" +
			"patch CostlyNoretryNoDirectReclaim=on\nkernel DeferredCompactNoStall=on\n" + patch +
			"sysctl vm.defrag_mode=" + dm + "\n")
		for i := 0; i < 2; i++ {
			fmt.Fprintf(&b, "file write data%d size=%dK sync=on\n", i, kib(fill))
			fmt.Fprintf(&b, "file write data%d size=64K offset=%dK sync=on\n", i, kib(end))
		}
		for i := 0; i < 2; i++ {
			fmt.Fprintf(&b, "task hog%d randread file=data%d chunk=64K batch=16 interval=7ms\n", i, i)
		}
		b.WriteString(slab("inodes", "ext4_inode_cache", 1152, true, total*3/100))
		b.WriteString(slab("kmalloc", "kmalloc-256", 256, false, total*3/200))
		fmt.Fprintf(&b, "run %dms\n", max(warm, 1))
		fmt.Fprintf(&b, "region bench size=%dK madvise=hugepage\n", kib(max(fault, 64<<10)))
		b.WriteString("task dev fault region=bench batch=16\nrun until=dev-done\n" +
			"print thp.64kB.anon_fault_alloc thp.64kB.anon_fault_fallback compact_stall\n")
		return b.String()
	}
	return "# seed 001 on the imported machine: 64K mTHP faults under a page-cache\n" +
		"# hog and slab churn, vm.defrag_mode=0, =1, and =1 with the series\n" +
		block("0", "") + "\n" + block("1", "") + "\n" +
		block("1", "patch WatermarkCheckKnowsMigratetype=on HighOrderCheckHonoursNofragment=on DirectReclaimToldNofragment=on\n")
}
