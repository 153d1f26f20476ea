package script

// objects.go holds the things a script names: cgroups, anonymous regions,
// page-cache files, slab caches, handles of raw allocations and tasks. One
// name space covers them all, so NAME.field in print and expect is never
// ambiguous. Every object lists its fields in a fixed order.

import (
	"fmt"
	"sort"
	"strings"

	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/sim"
	"github.com/pagesim/pagesim/engine/workload"
)

// field is one named value of an object.
type field struct {
	name string
	v    num
}

type object interface {
	kind() string
	fields(in *Interp) []field
}

// reservedNames cannot name objects: they start value names of their own or
// name /proc files.
var reservedNames = []string{"all", "psi", "zone", "thp", "trace", "slowpath", "compact", "filemap", "vm", "time",
	"buddyinfo", "pagetypeinfo", "zoneinfo", "vmstat", "pressure", "stall", "tasks", "objects"}

// checkName validates an object name's syntax.
func checkName(name string) error {
	if name == "" {
		return fmt.Errorf("a name cannot be empty")
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || i > 0 && (c >= '0' && c <= '9' || c == '-')
		if !ok {
			return fmt.Errorf("%q is not a name (letters, digits, _ and -, starting with a letter or _)", name)
		}
	}
	for _, r := range reservedNames {
		if name == r {
			return fmt.Errorf("%q is reserved and cannot name an object", name)
		}
	}
	return nil
}

// canDefine reports why name cannot name a new object, if it cannot.
func (in *Interp) canDefine(name string) error {
	if old, ok := in.objects[name]; ok {
		return fmt.Errorf("%q is already a %s", name, old.kind())
	}
	if _, ok := in.vmstatValue(name); ok {
		return fmt.Errorf("%q is a /proc/vmstat counter and cannot name an object", name)
	}
	return nil
}

// define adds a named object.
func (in *Interp) define(name string, o object) error {
	if err := in.canDefine(name); err != nil {
		return err
	}
	in.objects[name] = o
	in.names = append(in.names, name)
	return nil
}

// lookup returns a named object of the wanted kind ("" for any).
func (in *Interp) lookup(name, kind string) (object, error) {
	o, ok := in.objects[name]
	if !ok {
		what := "object"
		if kind != "" {
			what = kind
		}
		msg := fmt.Sprintf("no %s named %q", what, name)
		if s := suggest(name, in.namesOf(kind)); s != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", s)
		}
		return nil, fmt.Errorf("%s", msg)
	}
	if kind != "" && o.kind() != kind {
		return nil, fmt.Errorf("%q is a %s, not a %s", name, o.kind(), kind)
	}
	return o, nil
}

func (in *Interp) namesOf(kind string) []string {
	var out []string
	for _, n := range in.names {
		if kind == "" || in.objects[n].kind() == kind {
			out = append(out, n)
		}
	}
	return out
}

func (in *Interp) region(name string) (*regionObj, error) {
	o, err := in.lookup(name, "region")
	if err != nil {
		return nil, err
	}
	return o.(*regionObj), nil
}

// cgroup returns a cgroup by name; "/" is the root.
func (in *Interp) cgroup(name string) (*mm.Memcg, error) {
	if name == "/" || name == "" {
		return in.m.RootMemcg(), nil
	}
	o, err := in.lookup(name, "cgroup")
	if err != nil {
		return nil, err
	}
	return o.(*cgroupObj).cg, nil
}

// reset forgets every object (a new machine).
func (in *Interp) reset() {
	in.objects = map[string]object{}
	in.names = nil
	in.scriptTasks = map[int]*sim.Task{}
}

// ---------------------------------------------------------------------------

type cgroupObj struct{ cg *mm.Memcg }

func (*cgroupObj) kind() string { return "cgroup" }
func (o *cgroupObj) fields(*Interp) []field {
	return []field{
		{"usage", uintNum(o.cg.Usage)}, {"min", uintNum(o.cg.Min)}, {"low", uintNum(o.cg.Low)},
		{"low_events", uintNum(o.cg.EventsLow)},
	}
}

type regionObj struct{ r *mm.AnonRegion }

func (*regionObj) kind() string { return "region" }
func (o *regionObj) fields(in *Interp) []field {
	r := o.r
	fs := []field{
		{"pages", uintNum(r.Pages)}, {"faulted", uintNum(r.Cursor)}, {"resident", uintNum(r.Owner.Resident)},
		{"pinned", uintNum(r.Owner.Pinned)}, {"swapped", uintNum(r.Owner.Swapped)},
		{"thp", uintNum(r.PMDPages)}, {"mthp", uintNum(r.MTHPPages)}, {"base", uintNum(r.BasePages)},
	}
	for n, p := range r.NodePages {
		fs = append(fs, field{fmt.Sprintf("node%d", n), uintNum(p)})
	}
	return fs
}

type fileObj struct{ f *mm.File }

func (*fileObj) kind() string { return "file" }
func (o *fileObj) fields(*Interp) []field {
	return []field{{"size", uintNum(o.f.Size)}, {"resident", uintNum(o.f.Resident())}}
}

// slabObj is a slab cache: of whole slabs (slab alloc, task ... slab,
// slabcycle), or of objects churned by objs (slabcycle objsize=), whose
// slabs only objs allocates and frees.
type slabObj struct {
	c    *mm.SlabCache
	objs *workload.ObjectCycler
}

func (*slabObj) kind() string { return "slab" }
func (o *slabObj) fields(*Interp) []field {
	f := []field{
		{"slabs", intNum(int64(o.c.NrSlabs()))}, {"pages", uintNum(o.c.Pages)}, {"order", intNum(int64(o.c.Order))},
		{"order_fallback", uintNum(o.c.OrderFallbacks)}, {"failed", uintNum(o.c.Failed)},
	}
	if o.objs != nil {
		f = append(f, field{"objects", intNum(int64(o.objs.Objects()))}, field{"objects_per_slab", intNum(int64(o.objs.ObjectsPerSlab()))},
			field{"shrunk", uintNum(o.objs.Shrunk)})
	}
	return f
}

// fsObj is the file system of build tasks.
type fsObj struct{ fs *workload.BuildFS }

func (*fsObj) kind() string { return "fs" }
func (o *fsObj) fields(*Interp) []field {
	fs := o.fs
	d, i := fs.Slab()
	return []field{
		{"files", uintNum(fs.Files())}, {"created", uintNum(fs.Created)}, {"unlinked", uintNum(fs.Unlinked)},
		{"dentry_pages", uintNum(d)}, {"inode_pages", uintNum(i)}, {"metadata_pages", uintNum(fs.MetadataPages())},
		{"leaves", uintNum(fs.Leaves)}, {"cows", uintNum(fs.COWs)}, {"commits", uintNum(fs.Commits)},
		{"shrunk_dentries", uintNum(fs.ShrunkDentries)}, {"shrunk_inodes", uintNum(fs.ShrunkInodes)},
		{"inode_reads", uintNum(fs.InodeReads)}, {"leaf_reads", uintNum(fs.LeafReads)},
	}
}

// pgObj is a pgbench server whose processes are tasks (task NAME pgbench
// server=...).
type pgObj struct{ b *workload.PgBench }

func (*pgObj) kind() string { return "pgbench server" }
func (o *pgObj) fields(*Interp) []field {
	st := &o.b.Stats
	return []field{
		{"commits", uintNum(st.Commits)}, {"fpis", uintNum(st.FPIs)}, {"faults", uintNum(st.Faults)},
		{"flushes", uintNum(st.Flushes)}, {"wal_writes", uintNum(st.Writes)}, {"wal_bytes", uintNum(st.WALBytes)},
		{"data_writes", uintNum(st.DataWrites)}, {"data_reads", uintNum(st.DataReads)}, {"extends", uintNum(st.Extends)},
		{"checkpoint_writes", uintNum(st.CheckpointWrites)}, {"bgwriter_writes", uintNum(st.BgWriterWrites)},
		{"clean_taken", uintNum(st.CleanTaken)},
	}
}

// chunksObj is a handle of raw allocations (alloc NAME ...).
type chunksObj struct {
	gfp    mm.GFP
	order  mm.Order
	pfns   []mm.PFN
	failed uint64
}

func (*chunksObj) kind() string { return "allocation" }
func (o *chunksObj) fields(*Interp) []field {
	return []field{
		{"chunks", intNum(int64(len(o.pfns)))}, {"pages", uintNum(uint64(len(o.pfns)) << o.order)},
		{"order", intNum(int64(o.order))}, {"failed", uintNum(o.failed)},
	}
}

// sortPFNs sorts chunks by address.
func sortPFNs(p []mm.PFN) { sort.Slice(p, func(i, j int) bool { return p[i] < p[j] }) }

// taskObj is a task started with `task`.
type taskObj struct {
	t       *sim.Task
	program string
	status  func() workload.Progress
	// extra returns program-specific fields.
	extra func() []field
}

func (*taskObj) kind() string { return "task" }
func (o *taskObj) fields(in *Interp) []field {
	p := o.status()
	fs := []field{
		{"done", boolNum(p.Done)}, {"ops", uintNum(p.Ops)}, {"failed", uintNum(p.Failed)},
		{"elapsed", floatNum(p.Elapsed(in.m.World.Now()).Seconds(), 6)},
	}
	if o.extra != nil {
		fs = append(fs, o.extra()...)
	}
	return fs
}

func boolNum(b bool) num {
	if b {
		return intNum(1)
	}
	return intNum(0)
}

// describe prints an object on one line: "region heap: pages=... ...".
func (in *Interp) describe(name string, o object) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s:", o.kind(), name)
	if t, ok := o.(*taskObj); ok {
		fmt.Fprintf(&b, " program=%s", t.program)
	}
	for _, f := range o.fields(in) {
		fmt.Fprintf(&b, " %s=%s", f.name, f.v)
	}
	return b.String()
}

// suggest returns the candidate closest to s (edit distance at most 2, or
// a prefix), or "".
func suggest(s string, candidates []string) string {
	best, bestD := "", 3
	for _, c := range candidates {
		d := editDistance(s, c)
		if len(s) >= 3 && strings.HasPrefix(c, s) && d > 1 {
			d = 2
		}
		if d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the optimal string alignment distance (Levenshtein with
// transpositions of neighbours), bounded to short words.
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		if a == b {
			return 0
		}
		return 64
	}
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
