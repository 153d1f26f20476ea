package mm

// memcontrol.go models the parts of mm/memcontrol.c that reclaim reads:
// cgroups with memory.min and memory.low protection and their usage, and the
// memory users that own pages.
//
// # Memory users
//
// The kernel reaches a page's owner through folio->mapping (an anon_vma or
// an address_space) and its cgroup through folio->memcg_data. pagesim keeps
// one 32-bit owner ID in the page instead: an Owner is an anonymous region
// (a process's heap, a VM's guest RAM), a file (its page cache), or a slab
// cache. The owner knows its cgroup, how many pages it has resident, pinned
// and swapped out, and for files which of its pages are in the page cache.
//
// # Protection
//
// The cgroup tree is flat: the root and its children. A child's effective
// protection is its own memory.min and memory.low (the root's children get
// their configured values when the root has no limit, which is what
// mem_cgroup_calculate_protection gives them). Reclaim skips a cgroup whose
// usage is at or below memory.min, and one at or below memory.low unless a
// first pass reclaimed nothing (memcg_low_reclaim), which is when the kernel
// counts a MEMCG_LOW event.

import "fmt"

// Memcg is a memory cgroup.
type Memcg struct {
	ID   int
	Name string
	// Min and Low are memory.min and memory.low in pages.
	Min, Low uint64
	// Usage is the pages charged to the cgroup (page_counter usage).
	Usage uint64
	// Events counts memory.events entries: low, min(protected skips)...
	EventsLow uint64
	lruvecs   []*lruvec // per node
}

// Owner is a memory user: the owner of in-use pages.
type Owner struct {
	ID    uint32
	Kind  PageKind
	Name  string
	Memcg *Memcg
	// Resident, Pinned and Swapped count pages (base pages).
	Resident uint64
	Pinned   uint64
	Swapped  uint64
	// NoSwap marks memory that reclaim must never swap (not used by the
	// seeds; mlock is modelled as unevictable instead).
	NoSwap bool
	// File state (Kind == KindFile).
	file *fileState
}

// NewMemcg creates a child cgroup of the root.
func (m *Machine) NewMemcg(name string) *Memcg {
	cg := &Memcg{ID: len(m.memcgs), Name: name}
	for _, n := range m.Nodes {
		cg.lruvecs = append(cg.lruvecs, newLruvec(cg, n))
	}
	m.memcgs = append(m.memcgs, cg)
	return cg
}

// RootMemcg returns the root cgroup.
func (m *Machine) RootMemcg() *Memcg { return m.memcgs[0] }

// Memcgs returns every cgroup, the root first.
func (m *Machine) Memcgs() []*Memcg { return m.memcgs }

// MemcgByName returns a cgroup by name.
func (m *Machine) MemcgByName(name string) *Memcg {
	for _, c := range m.memcgs {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// NewOwner creates a memory user of the given kind in a cgroup.
func (m *Machine) NewOwner(kind PageKind, name string, cg *Memcg) *Owner {
	if cg == nil {
		cg = m.RootMemcg()
	}
	var o *Owner
	if k := len(m.freeOwners); k > 0 {
		// Reuse a retired owner's ID (last retired, first reused).
		o = m.freeOwners[k-1]
		m.freeOwners = m.freeOwners[:k-1]
		fs := o.file
		*o = Owner{ID: o.ID, Kind: kind, Name: name, Memcg: cg}
		if kind == KindFile {
			if fs == nil {
				fs = &fileState{}
			}
			*fs = fileState{}
			o.file = fs
		}
		return o
	}
	o = &Owner{ID: uint32(len(m.owners)), Kind: kind, Name: name, Memcg: cg}
	if kind == KindFile {
		o.file = &fileState{}
	}
	m.owners = append(m.owners, o)
	return o
}

// freeOwner retires an owner with no page left; NewOwner reuses its ID.
func (m *Machine) freeOwner(o *Owner) {
	o.Kind = KindKernel
	o.Name = ""
	m.freeOwners = append(m.freeOwners, o)
}

// OwnerOf returns the owner of an in-use page (nil for the kernel).
func (m *Machine) OwnerOf(pfn PFN) *Owner {
	id := m.pages[m.folioHead(pfn)].owner
	if id == 0 {
		return nil
	}
	return m.owners[id]
}

// Owners returns every memory user; index 0 is the kernel placeholder.
func (m *Machine) Owners() []*Owner { return m.owners }

func (m *Machine) initMemcg() {
	m.owners = []*Owner{{ID: 0, Kind: KindKernel, Name: "kernel"}}
	root := &Memcg{ID: 0, Name: "/"}
	for _, n := range m.Nodes {
		root.lruvecs = append(root.lruvecs, newLruvec(root, n))
	}
	m.memcgs = []*Memcg{root}
	m.owners[0].Memcg = root
}

// belowMin is mem_cgroup_below_min(): reclaim skips cg always.
func (cg *Memcg) belowMin() bool { return cg.ID != 0 && cg.Min > 0 && cg.Usage <= cg.Min }

// belowLow is mem_cgroup_below_low(): reclaim skips cg unless the pass is a
// retry after one that reclaimed nothing (sc.memcgLowReclaim).
func (cg *Memcg) belowLow() bool { return cg.ID != 0 && cg.Low > 0 && cg.Usage <= cg.Low }

// SetKnob sets memory.min or memory.low (in bytes, like the cgroup
// files, "max" allowed).
func (cg *Memcg) SetKnob(name string, bytes uint64) error {
	switch name {
	case "memory.min":
		cg.Min = bytes / PAGE_SIZE
	case "memory.low":
		cg.Low = bytes / PAGE_SIZE
	default:
		return fmt.Errorf("unknown cgroup file %q (memory.min, memory.low)", name)
	}
	return nil
}
