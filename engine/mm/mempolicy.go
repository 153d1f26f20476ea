package mm

// mempolicy.go models the NUMA memory policies of mm/mempolicy.c
// (linux-mm/linux-mm @01cec79d): MPOL_DEFAULT/LOCAL, MPOL_PREFERRED,
// MPOL_BIND and MPOL_INTERLEAVE, policy_nodemask(), and the allocation entry
// points for VMA faults: today's alloc_pages_mpol() with its local-node-first
// THP attempt (__GFP_THISNODE|__GFP_NORETRY, then every allowed node when the
// mask may reclaim), and the 2018 alloc_pages_vma() that seed 003 patches
// (local node with __GFP_THISNODE and no second attempt), with the seed's two
// fixes where their diffs put them.

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/pagesim/pagesim/engine/internal/enum"
	"github.com/pagesim/pagesim/engine/sim"
)

// MempolicyMode is enum mempolicy_mode (the modes pagesim models).
type MempolicyMode uint8

const (
	MPOL_DEFAULT MempolicyMode = iota
	MPOL_PREFERRED
	MPOL_BIND
	MPOL_INTERLEAVE
	MPOL_LOCAL
)

var mpolNames = []string{"default", "preferred", "bind", "interleave", "local"}

// String returns the mode as mpol= spells it.
func (mode MempolicyMode) String() string { return enum.Name(mpolNames, mode) }

// ParseMempolicyMode reads "default", "bind", ...
func ParseMempolicyMode(s string) (MempolicyMode, error) {
	if mode, ok := enum.Parse[MempolicyMode](mpolNames, strings.TrimSpace(s)); ok {
		return mode, nil
	}
	return 0, fmt.Errorf("unknown mempolicy %q (want %s)", s, strings.Join(mpolNames, ", "))
}

// Mempolicy is struct mempolicy.
type Mempolicy struct {
	Mode  MempolicyMode
	Nodes NodeMask
}

// ParseMempolicy reads a policy as mpol_parse_str() (mm/mempolicy.c) reads
// tmpfs's mpol= option: MODE[:NODELIST], the list as nodelist_parse()
// takes it ("0", "0-1", "0,2-3"), on a machine of nrNodes nodes. As there,
// bind needs a list; prefer (or preferred) takes one node, and none means
// local allocation (mpol_new turns an empty MPOL_PREFERRED into
// MPOL_LOCAL); interleave defaults to every node; default and local take
// none. Every error is one line.
func ParseMempolicy(s string, nrNodes int) (Mempolicy, error) {
	s = strings.TrimSpace(s)
	nrNodes = min(nrNodes, 64) // NodeMask's width
	name, list, hasList := strings.Cut(s, ":")
	if name == "prefer" {
		name = "preferred" // the kernel's policy_modes[] spelling
	}
	mode, err := ParseMempolicyMode(name)
	if err != nil {
		return Mempolicy{}, err
	}
	pol := Mempolicy{Mode: mode}
	if hasList {
		if pol.Nodes, err = parseNodelist(list, nrNodes); err != nil {
			return Mempolicy{}, fmt.Errorf("mempolicy %s: %v", s, err)
		}
	}
	switch mode {
	case MPOL_DEFAULT, MPOL_LOCAL:
		if hasList {
			return Mempolicy{}, fmt.Errorf("mempolicy %s: takes no node list", s)
		}
	case MPOL_BIND:
		if !hasList {
			return Mempolicy{}, fmt.Errorf("mempolicy %s: needs a node list, such as bind:0 or bind:0-1", s)
		}
	case MPOL_PREFERRED:
		if !hasList {
			pol.Mode = MPOL_LOCAL
		} else if popcount(pol.Nodes, nrNodes) != 1 {
			return Mempolicy{}, fmt.Errorf("mempolicy %s: takes one node", s)
		}
	case MPOL_INTERLEAVE:
		if !hasList {
			pol.Nodes = NodeMask(1)<<nrNodes - 1
		}
	}
	return pol, nil
}

// parseNodelist is nodelist_parse() (bitmap_parselist): comma-separated
// nodes and ranges, each below nrNodes (nodes_subset of N_MEMORY).
func parseNodelist(list string, nrNodes int) (NodeMask, error) {
	var nm NodeMask
	for _, part := range strings.Split(list, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		b := a
		if err == nil && isRange {
			b, err = strconv.Atoi(hi)
		}
		if err != nil || a < 0 || b < a || lo == "" || lo[0] == '+' || (isRange && (hi == "" || hi[0] == '+')) {
			return 0, fmt.Errorf("%q is not a node list such as 0 or 0-1", list)
		}
		if b >= nrNodes {
			return 0, fmt.Errorf("node %d does not exist (nodes 0 to %d)", b, nrNodes-1)
		}
		for n := a; n <= b; n++ {
			nm |= NodeMask(1) << n
		}
	}
	return nm, nil
}

// String prints the policy as ParseMempolicy reads it ("bind:0-1").
func (pol Mempolicy) String() string {
	if pol.Nodes == 0 || pol.Mode == MPOL_DEFAULT || pol.Mode == MPOL_LOCAL {
		return pol.Mode.String()
	}
	var parts []string
	for n := 0; n < 64; {
		if !pol.Nodes.Has(n) {
			n++
			continue
		}
		end := n
		for end+1 < 64 && pol.Nodes&(NodeMask(1)<<(end+1)) != 0 {
			end++
		}
		if end == n {
			parts = append(parts, strconv.Itoa(n))
		} else {
			parts = append(parts, strconv.Itoa(n)+"-"+strconv.Itoa(end))
		}
		n = end + 1
	}
	return pol.Mode.String() + ":" + strings.Join(parts, ",")
}

// noInterleaveIndex is NO_INTERLEAVE_INDEX: not a VMA fault.
const noInterleaveIndex = -1

// policyNodemask is policy_nodemask(): the nodemask to allocate from and
// the node to prefer.
func (m *Machine) policyNodemask(gfp GFP, pol *Mempolicy, ilx int, nid int) (NodeMask, int) {
	switch pol.Mode {
	case MPOL_PREFERRED:
		return 0, firstNode(pol.Nodes, nid)
	case MPOL_BIND:
		return pol.Nodes, nid
	case MPOL_INTERLEAVE:
		n := popcount(pol.Nodes, len(m.Nodes))
		if n == 0 || ilx < 0 {
			return 0, nid
		}
		target := ilx % n
		for node := 0; node < len(m.Nodes); node++ {
			if pol.Nodes.Has(node) {
				if target == 0 {
					return 0, node
				}
				target--
			}
		}
	}
	return 0, nid
}

func firstNode(nm NodeMask, def int) int {
	for i := 0; i < 64; i++ {
		if nm&(1<<uint(i)) != 0 {
			return i
		}
	}
	return def
}

func popcount(nm NodeMask, nodes int) int {
	if nm == 0 {
		return nodes
	}
	n := 0
	for i := 0; i < nodes; i++ {
		if nm.Has(i) {
			n++
		}
	}
	return n
}

// allocPagesMpol is alloc_pages_mpol() for a VMA fault (ilx >= 0) or a
// plain allocation (ilx = noInterleaveIndex), with the 2018
// alloc_pages_vma() THP placement when the kernel base asks for it. Like
// AllocPages it may leave the allocation pending (AllocPending).
func (m *Machine) allocPagesMpol(t *sim.Task, gfp GFP, order Order, pol *Mempolicy, ilx int, nid int) PFN {
	if pol == nil {
		pol = &Mempolicy{}
	}
	if m.Kernel.THPLegacyThisnode && order == HPAGE_PMD_ORDER && ilx >= 0 {
		return m.allocPagesVMA2018(t, gfp, order, pol, ilx, nid)
	}
	nodemask, nid := m.policyNodemask(gfp, pol, ilx, nid)
	if order == HPAGE_PMD_ORDER && ilx >= 0 && pol.Mode != MPOL_INTERLEAVE && nodemask.Has(nid) {
		local := gfp | __GFP_THISNODE | __GFP_NORETRY
		// Resuming the second attempt skips the first.
		if pgfp, _, ok := m.pendingAlloc(t); !ok || pgfp == local {
			pfn := m.AllocPages(t, local, order, nid, 0)
			if pfn != NilPFN || gfp&__GFP_DIRECT_RECLAIM == 0 || m.AllocPending(t) {
				return pfn
			}
		}
	}
	pfn := m.AllocPages(t, gfp, order, nid, nodemask)
	if pol.Mode == MPOL_INTERLEAVE && pfn != NilPFN && m.ZoneOf(pfn).Node.ID == nid {
		m.ZoneOf(pfn).NumaEvents[NUMA_INTERLEAVE_HIT]++
	}
	return pfn
}

// allocPagesVMA2018 is alloc_pages_vma() of Linux 4.18 for a hugepage
// fault, with seed 003's fixes.
func (m *Machine) allocPagesVMA2018(t *sim.Task, gfp GFP, order Order, pol *Mempolicy, ilx int, nid int) PFN {
	if pol.Mode == MPOL_INTERLEAVE {
		_, inid := m.policyNodemask(gfp, pol, ilx, nid)
		return m.AllocPages(t, gfp, order, inid, 0)
	}
	hpageNode := nid
	if pol.Mode == MPOL_PREFERRED {
		hpageNode = firstNode(pol.Nodes, nid)
	}
	var nmask NodeMask
	if pol.Mode == MPOL_BIND {
		nmask = pol.Nodes
	}
	if nmask.Has(hpageNode) {
		switch {
		case m.Patches.THPDropThisnode:
			// Fix 2: no __GFP_THISNODE when the caller may reclaim.
			if gfp&__GFP_DIRECT_RECLAIM == 0 {
				gfp |= __GFP_THISNODE
			}
		case m.Patches.OnlyCompact:
			// Fix 1: at most one compaction attempt, never reclaim.
			gfp |= __GFP_THISNODE | __GFP_ONLY_COMPACT
		default:
			gfp |= __GFP_THISNODE
		}
		return m.AllocPages(t, gfp, order, hpageNode, 0)
	}
	return m.AllocPages(t, gfp, order, nid, nmask)
}
