package mm

// budget.go is what simulating a machine costs in the simulator's own
// memory, so that every entry point (the command line, scripts, /proc
// imports, the page) can refuse a machine before allocating it. An
// allocation the Go runtime cannot satisfy is a fatal error, not a panic:
// nothing can catch it, so the only defence is to compute first.
//
// The kernel has the same arithmetic for its own memmap: every page frame
// costs a struct page (64 bytes on x86-64; mm_init.c's
// calc_memmap_size() sizes it per zone), every pageblock a few bits of
// pageblock_flags (usemap_size()), and every zone one per_cpu_pages per
// possible CPU (alloc_percpu(struct per_cpu_pages) in setup_zone_pageset()).
// pagesim's versions of those structures are smaller than the kernel's but
// scale the same way, and MachineBytes adds them up from a Config, exactly
// as NewMachine will allocate them:
//
//   - the memory map: one page per PFN from 0 to the highest zone end
//     (holes and the range below the first zone included, as m.pages is
//     indexed by PFN);
//   - the pageblock state: one pageblock and one zone index per 512 PFNs;
//   - the per-CPU state: every zone of every node (MAX_NR_ZONES per node,
//     empty ones included) has a perCPUPages for every CPU of the machine,
//     so this term grows as nodes x CPUs x (nodes x CPUs per node); each
//     CPU also has its PSI state and its sim.CPU;
//   - the nodes and zones themselves, node_distance and the zonelists;
//   - what a run grows with memory: at most one file-extent slot per page
//     (every page in the page cache), and the invariant check's one byte
//     per page of scratch;
//   - fixed costs: the tracepoint ring.
//
// Everything else a run allocates (tasks, owners, cgroups, the event queue)
// grows with the workload, not with the machine, and stays small.
// docs/RELIABILITY.md compares MachineBytes with measured peak RSS.
//
// The arithmetic saturates instead of wrapping: a Config with a start_pfn
// of 2^64-1 costs math.MaxUint64 bytes, which is over any limit.

import (
	"fmt"
	"math"
	"math/bits"
	"unsafe"

	"github.com/pagesim/pagesim/engine/sim"
)

// Bytes per unit of each part of a machine (unsafe.Sizeof is the same on
// amd64 and wasm: Go's wasm port has 64-bit ints and pointers).
const (
	pageBytes       = uint64(unsafe.Sizeof(page{}))
	pageblockBytes  = uint64(unsafe.Sizeof(pageblock{}) + unsafe.Sizeof(int16(0))) // + zoneOfBlock
	pcpBytes        = uint64(unsafe.Sizeof(perCPUPages{}))
	cpuBytes        = uint64(unsafe.Sizeof(psiCPU{}) + unsafe.Sizeof(sim.CPU{}) + unsafe.Sizeof(&sim.CPU{}) + unsafe.Sizeof(int(0)))
	nodeStructBytes = uint64(unsafe.Sizeof(Node{}) + uintptr(MAX_NR_ZONES)*(unsafe.Sizeof(Zone{})+unsafe.Sizeof(&Zone{})))
	// runPageBytes is what a run can grow per page: a file-extent slot
	// (every page in the page cache) and CheckInvariants' scratch byte.
	runPageBytes = uint64(unsafe.Sizeof(PFN(0))) + 1
	fixedBytes   = uint64(unsafe.Sizeof(Machine{}) + traceRingSize*unsafe.Sizeof(TraceEvent{}))
)

// traceRingSize is the tracepoint ring's length (events).
const traceRingSize = 4096

// MachineCost is what a machine costs, by part, in bytes.
type MachineCost struct {
	MemMap     uint64 // struct pages, PFN 0 to the highest zone end
	Pageblocks uint64 // pageblock state
	PerCPU     uint64 // per-CPU pagesets of every zone, PSI and CPU state
	Nodes      uint64 // nodes, zones, distances, zonelists, fixed costs
	Run        uint64 // what a run can grow per page
	// Pages is the PFN range the memory map covers, Present the pages
	// of memory; CPUs and NrNodes count the machine's CPUs and nodes.
	Pages, Present uint64
	CPUs, NrNodes  int
}

// Total returns the sum of the parts (saturating).
func (c MachineCost) Total() uint64 {
	return addSat(addSat(addSat(c.MemMap, c.Pageblocks), addSat(c.PerCPU, c.Nodes)), c.Run)
}

// CostOf returns what booting cfg and running it will cost, as NewMachine
// allocates it. It never allocates in proportion to cfg and never
// overflows; an invalid cfg (which NewMachine refuses) still gets a cost.
func CostOf(cfg Config) MachineCost {
	var end, present uint64
	cpus := uint64(0)
	for _, n := range cfg.Nodes {
		cpus = addSat(cpus, uint64(max(n.CPUs, 0)))
		for _, z := range n.Zones {
			if z.Spanned > 0 {
				end = max(end, addSat(uint64(z.StartPFN), z.Spanned))
				present = addSat(present, z.Present)
			}
		}
	}
	nodes := uint64(len(cfg.Nodes))
	nblocks := end/PageblockNrPages + min(end%PageblockNrPages, 1)
	zones := mulSat(nodes, uint64(MAX_NR_ZONES))
	c := MachineCost{
		MemMap:     mulSat(end, pageBytes),
		Pageblocks: mulSat(nblocks, pageblockBytes),
		PerCPU:     addSat(mulSat(mulSat(zones, cpus), pcpBytes), mulSat(cpus, cpuBytes)),
		// node_distance and two zonelists per node, each at most every
		// zone of every node.
		Nodes: addSat(addSat(mulSat(nodes, nodeStructBytes), mulSat(mulSat(nodes, nodes), 8)),
			addSat(mulSat(mulSat(nodes, zones), 2*8), fixedBytes)),
		Run:     mulSat(end, runPageBytes),
		Pages:   end,
		Present: present,
		NrNodes: len(cfg.Nodes),
		CPUs:    int(min(cpus, math.MaxInt32)),
	}
	return c
}

// MachineBytes returns CostOf(cfg).Total(): the one number every entry
// point compares with its limit before booting.
func MachineBytes(cfg Config) uint64 { return CostOf(cfg).Total() }

// FileIndexBytes is what a file's page-cache index costs before a page of
// it is cached, once a write reaches index end (in pages): one extent
// pointer per fileExtentPages pages from the file's start, however few are
// cached (a write of 1 MiB at an offset of 16 EiB would need 2^43 of them;
// the script refuses it against its memory budget before writing).
func FileIndexBytes(end uint64) uint64 {
	return (end/fileExtentPages + 1) * uint64(unsafe.Sizeof((*Owner)(nil)))
}

// BudgetError is a machine, or several machines simulated at once, that
// would cost more memory than the limit.
type BudgetError struct {
	// Machines is how many machines are simulated at once (the page's
	// variants side by side), each costing Cost.
	Machines int
	Cost     MachineCost
	// Need is Machines x Cost.Total(); Limit the budget.
	Need, Limit uint64
	// Source, if set, names what made the machine that large (an
	// imported file and line: "zoneinfo:34").
	Source string
}

func (e *BudgetError) Error() string {
	what := fmt.Sprintf("%s over %d node(s) with %d CPU(s)", FormatBytes(mulSat(e.Cost.Present, PAGE_SIZE)), e.Cost.NrNodes, e.Cost.CPUs)
	if e.Cost.Pages/2 > e.Cost.Present {
		// The memory map, not the memory, is what is large.
		what += fmt.Sprintf(" and PFNs up to %d", e.Cost.Pages)
	}
	src := ""
	if e.Source != "" {
		src = e.Source + ": "
	}
	if e.Machines > 1 {
		// The total is the machines' together, each machine's cost
		// beside it (review finding F44: "4 machines of 64.0 GiB ...
		// each needs 1.3 GiB" read as 1.3 GiB a machine).
		return fmt.Sprintf("%s%d machines (each %s, %s to simulate) need %s together, over the limit of %s",
			src, e.Machines, what, FormatBytes(e.Cost.Total()), FormatBytes(e.Need), FormatBytes(e.Limit))
	}
	return fmt.Sprintf("%sa machine of %s needs %s of memory to simulate, over the limit of %s", src, what, FormatBytes(e.Need), FormatBytes(e.Limit))
}

// CheckBudget returns a *BudgetError when machines copies of cfg, run at
// once, cost more than limit bytes. A limit of 0 means no limit.
func CheckBudget(cfg Config, machines int, limit uint64) error {
	c := CostOf(cfg)
	need := mulSat(c.Total(), uint64(max(machines, 1)))
	if limit == 0 || need <= limit {
		return nil
	}
	return &BudgetError{Machines: max(machines, 1), Cost: c, Need: need, Limit: limit}
}

// FormatBytes prints a byte count in binary units ("1.5 GiB", "512 MiB").
func FormatBytes(b uint64) string {
	if b == math.MaxUint64 {
		return "more than 16 EiB"
	}
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	f := float64(b)
	u := 0
	for f >= 1024 && u < len(units)-1 {
		f /= 1024
		u++
	}
	if u == 0 || f == math.Trunc(f) {
		return fmt.Sprintf("%.0f %s", f, units[u])
	}
	return fmt.Sprintf("%.1f %s", f, units[u])
}

// addSat and mulSat are a+b and a*b, saturating at math.MaxUint64.
func addSat(a, b uint64) uint64 {
	s, carry := bits.Add64(a, b, 0)
	if carry != 0 {
		return math.MaxUint64
	}
	return s
}

func mulSat(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	if hi != 0 {
		return math.MaxUint64
	}
	return lo
}
