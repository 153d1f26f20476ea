package procfs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/bits"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/pagesim/pagesim/engine/mm"
)

// Dump is a folder of /proc files from one machine. A nil field means the
// file was not there.
type Dump struct {
	Buddyinfo    []BuddyinfoZone
	Pagetypeinfo *PagetypeinfoData
	Zoneinfo     []ZoneinfoZone
	Vmstat       []VmstatEntry
	// SysVM holds sys_vm/<name> files, sorted by name.
	SysVM []SysVMFile

	hasBuddyinfo, hasZoneinfo, hasVmstat bool
}

// SysVMFile is one /proc/sys/vm file.
type SysVMFile struct {
	Name   string // "min_free_kbytes"
	Values []int64
}

// DumpFiles are the files Load looks for at the root of a dump folder.
var DumpFiles = []string{"buddyinfo", "pagetypeinfo", "zoneinfo", "vmstat"}

// Input limits of Load. A real zoneinfo of a 4-socket machine with 192
// CPUs is about 0.5 MiB (a pageset block per CPU per zone); the limit
// leaves room for ten times that.
const (
	// MaxFileBytes bounds one file of a dump.
	MaxFileBytes = 16 << 20
	// MaxSysVMFiles bounds the files under sys_vm/ (the kernel has
	// about 50 vm sysctls).
	MaxSysVMFiles = 1024
)

// Load reads a dump folder: any of buddyinfo, pagetypeinfo, zoneinfo and
// vmstat at the root of fsys, and the one-number files under sys_vm/. Other
// files are ignored. At least one of buddyinfo, pagetypeinfo and zoneinfo
// must be there.
//
// Only regular files are read (a FIFO or a device would block or never
// end), each up to MaxFileBytes; a symbolic link is followed, and one whose
// target is missing is an error, not an absent file.
func Load(fsys fs.FS) (*Dump, error) {
	d := &Dump{}
	open := func(name string, parse func(io.Reader) error) error {
		info, err := fs.Stat(fsys, name)
		if errors.Is(err, fs.ErrNotExist) {
			if li, lerr := fs.Lstat(fsys, name); lerr == nil && li.Mode()&fs.ModeSymlink != 0 {
				return &ParseError{File: name, Msg: "a symbolic link to a file that does not exist"}
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", name, unwrapPath(err))
		}
		if !info.Mode().IsRegular() {
			return &ParseError{File: name, Msg: fmt.Sprintf("not a regular file (%s)", fileKind(info.Mode()))}
		}
		if info.Size() > MaxFileBytes {
			return &ParseError{File: name, Msg: fmt.Sprintf("%d bytes, more than a /proc file pagesim reads (%d)", info.Size(), MaxFileBytes)}
		}
		f, err := fsys.Open(name)
		if err != nil {
			return fmt.Errorf("%s: %w", name, unwrapPath(err))
		}
		defer f.Close()
		// The file may grow after Stat (or be a /proc file, which
		// reports size 0): the limit holds for what is read.
		lr := &limitedReader{r: f, n: MaxFileBytes}
		if err := parse(lr); err != nil {
			return err
		}
		if lr.over {
			return &ParseError{File: name, Msg: fmt.Sprintf("more than %d bytes, more than a /proc file pagesim reads", MaxFileBytes)}
		}
		return nil
	}
	for _, step := range []struct {
		name  string
		parse func(io.Reader) error
	}{
		{"buddyinfo", func(r io.Reader) (err error) {
			d.Buddyinfo, err = ParseBuddyinfo(r)
			d.hasBuddyinfo = err == nil
			return err
		}},
		{"pagetypeinfo", func(r io.Reader) (err error) {
			d.Pagetypeinfo, err = ParsePagetypeinfo(r)
			return err
		}},
		{"zoneinfo", func(r io.Reader) (err error) {
			d.Zoneinfo, err = ParseZoneinfo(r)
			d.hasZoneinfo = err == nil
			return err
		}},
		{"vmstat", func(r io.Reader) (err error) {
			d.Vmstat, err = ParseVmstat(r)
			d.hasVmstat = err == nil
			return err
		}},
	} {
		if err := open(step.name, step.parse); err != nil {
			return nil, err
		}
	}
	entries, err := fs.ReadDir(fsys, "sys_vm")
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("sys_vm: %w", err)
	}
	if len(entries) > MaxSysVMFiles {
		return nil, &ParseError{File: "sys_vm", Msg: fmt.Sprintf("%d files; the kernel has about 50 vm sysctls (at most %d are read)", len(entries), MaxSysVMFiles)}
	}
	for _, e := range entries {
		if e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		var vals []int64
		err := open(path.Join("sys_vm", e.Name()), func(r io.Reader) (err error) {
			vals, err = ParseSysctl(e.Name(), r)
			return err
		})
		if err != nil {
			return nil, err
		}
		d.SysVM = append(d.SysVM, SysVMFile{Name: e.Name(), Values: vals})
	}
	if !d.hasBuddyinfo && d.Pagetypeinfo == nil && !d.hasZoneinfo {
		return nil, errors.New("the dump has none of buddyinfo, pagetypeinfo, zoneinfo")
	}
	return d, nil
}

// limitedReader reads at most n bytes of r and records whether r had more.
type limitedReader struct {
	r    io.Reader
	n    int64
	over bool
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		// One more byte tells a file of exactly n bytes from a longer one.
		var b [1]byte
		if k, _ := l.r.Read(b[:]); k > 0 {
			l.over = true
		}
		return 0, io.EOF
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	k, err := l.r.Read(p)
	l.n -= int64(k)
	return k, err
}

// fileKind names a file mode that is not a regular file.
func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a folder"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "mode " + m.String()
}

// unwrapPath drops a *fs.PathError's own path and operation: the caller
// names the file relative to the dump.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// ImportOptions are the settings an import takes besides the dump.
type ImportOptions struct {
	// Sysctl are explicit settings ("vm.min_free_kbytes"), applied after
	// the dump's sys_vm files, so they win.
	Sysctl []mm.SysctlSetting
	// CPUsPerNode is used when the dump has no zoneinfo pagesets;
	// 0 means DefaultCPUsPerNode.
	CPUsPerNode int
	Seed        uint64
	THP         mm.THPSettings
	// MaxBytes is the memory budget (mm.MachineBytes); 0 means none.
	MaxBytes uint64
}

// DefaultCPUsPerNode is the CPU count per node of a machine whose dump does
// not list its CPUs (no zoneinfo), and of a freshly booted pagesim machine
// on the command line.
const DefaultCPUsPerNode = 4

type zoneKey struct {
	node int
	zone mm.ZoneType
}

// where names a file and line for errors and warnings.
func where(file string, line int) string { return file + ":" + strconv.Itoa(line) }

// Spec turns the dump into an mm.ImportSpec, with warnings about what it
// had to guess. Names the model lacks (migratetypes other than pagesim's
// six, zones other than DMA, DMA32, Normal, Movable and an empty Device)
// are errors naming the file and line.
func (d *Dump) Spec(opt ImportOptions) (mm.ImportSpec, []string, error) {
	var warnings []string
	warn := func(format string, args ...any) { warnings = append(warnings, fmt.Sprintf(format, args...)) }
	zones := map[zoneKey]*mm.ImportZone{}
	var keys []zoneKey
	// sized[k] is how many pages zone k's Source line accounts for: a
	// zone without zoneinfo geometry is blamed on its largest line.
	sized := map[zoneKey]uint64{}
	size := func(k zoneKey, src string, pages uint64) {
		if z := zones[k]; !z.HasGeometry && (z.Source == "" || pages > sized[k]) {
			z.Source, sized[k] = src, pages
		}
	}
	get := func(k zoneKey) *mm.ImportZone {
		z, ok := zones[k]
		if !ok {
			z = &mm.ImportZone{Type: k.zone}
			zones[k] = z
			keys = append(keys, k)
		}
		return z
	}
	zoneType := func(file string, line int, name string) (mm.ZoneType, error) {
		t, ok := mm.ParseZoneType(name)
		if !ok {
			return 0, errorf(file, line, "unknown zone %q (pagesim models DMA, DMA32, Normal, Movable, Device)", name)
		}
		return t, nil
	}
	checkNode := func(file string, line, node int) error {
		if node >= 64 {
			return errorf(file, line, "node %d: pagesim models at most 64 nodes", node)
		}
		return nil
	}

	// Migratetypes first: an old kernel's Reserve (or a patched one's
	// Mirror) is the first thing to report about its files.
	if p := d.Pagetypeinfo; p != nil {
		for _, row := range p.Free {
			if _, ok := mm.ParseMigrateType(row.Type); !ok {
				return mm.ImportSpec{}, nil, errorf("pagetypeinfo", row.Line, "unknown migratetype %q (pagesim models %s)", row.Type, migratetypeList())
			}
		}
		for _, row := range p.Blocks {
			for _, name := range row.Types {
				if _, ok := mm.ParseMigrateType(name); !ok {
					return mm.ImportSpec{}, nil, errorf("pagetypeinfo", row.TypesLine, "unknown migratetype %q (pagesim models %s)", name, migratetypeList())
				}
			}
		}
	}

	// Geometry from zoneinfo.
	var zoneinfoFree = map[zoneKey]uint64{}
	nrCPUs, cpuSource := 0, ""
	for i := range d.Zoneinfo {
		zi := &d.Zoneinfo[i]
		if err := checkNode("zoneinfo", zi.Line, zi.Node); err != nil {
			return mm.ImportSpec{}, nil, err
		}
		t, err := zoneType("zoneinfo", zi.Line, zi.Zone)
		if err != nil {
			return mm.ImportSpec{}, nil, err
		}
		if !zi.HasSpanned || !zi.HasPresent || !zi.HasManaged {
			return mm.ImportSpec{}, nil, errorf("zoneinfo", zi.Line, "node %d zone %s lacks spanned, present or managed", zi.Node, zi.Zone)
		}
		if zi.Spanned == 0 && zi.Present == 0 && zi.Managed == 0 {
			continue
		}
		if t == mm.ZONE_DEVICE {
			return mm.ImportSpec{}, nil, errorf("zoneinfo", zi.Line, "node %d zone Device holds memory; pagesim's Device zones are empty", zi.Node)
		}
		k := zoneKey{zi.Node, t}
		if _, dup := zones[k]; dup {
			return mm.ImportSpec{}, nil, errorf("zoneinfo", zi.Line, "node %d zone %s appears twice", zi.Node, zi.Zone)
		}
		if zi.Present > zi.Spanned || zi.Managed > zi.Present {
			return mm.ImportSpec{}, nil, errorf("zoneinfo", zi.Line, "node %d zone %s: spanned %d, present %d, managed %d are not nested", zi.Node, zi.Zone, zi.Spanned, zi.Present, zi.Managed)
		}
		z := get(k)
		z.HasGeometry, z.Source = true, where("zoneinfo", zi.Line)
		z.Spanned, z.Present, z.Managed = zi.Spanned, zi.Present, zi.Managed
		if zi.HasStartPFN {
			if zi.StartPFN >= 1<<31 {
				return mm.ImportSpec{}, nil, errorf("zoneinfo", zi.Line, "node %d zone %s: start_pfn %d is beyond 8 TiB", zi.Node, zi.Zone, zi.StartPFN)
			}
			z.HasStartPFN, z.StartPFN = true, mm.PFN(zi.StartPFN)
		}
		zoneinfoFree[k] = zi.Free
		if len(zi.Pagesets) > nrCPUs {
			nrCPUs, cpuSource = len(zi.Pagesets), where("zoneinfo", zi.Line)
		}
	}

	// Free chunks: pagetypeinfo, else buddyinfo, else zoneinfo's count.
	buddy := map[zoneKey]*BuddyinfoZone{}
	for i := range d.Buddyinfo {
		b := &d.Buddyinfo[i]
		if err := checkNode("buddyinfo", b.Line, b.Node); err != nil {
			return mm.ImportSpec{}, nil, err
		}
		t, err := zoneType("buddyinfo", b.Line, b.Zone)
		if err != nil {
			return mm.ImportSpec{}, nil, err
		}
		if len(b.NrFree) > mm.NR_PAGE_ORDERS {
			return mm.ImportSpec{}, nil, errorf("buddyinfo", b.Line, "%d orders; pagesim models orders 0-%d", len(b.NrFree), mm.MAX_PAGE_ORDER)
		}
		// The kernel prints every order on every line: a line shorter
		// than the first was cut.
		if first := &d.Buddyinfo[0]; len(b.NrFree) != len(first.NrFree) {
			return mm.ImportSpec{}, nil, errorf("buddyinfo", b.Line, "%d orders, line %d has %d (a truncated line?)", len(b.NrFree), first.Line, len(first.NrFree))
		}
		k := zoneKey{b.Node, t}
		if _, dup := buddy[k]; dup {
			return mm.ImportSpec{}, nil, errorf("buddyinfo", b.Line, "node %d zone %s appears twice", b.Node, b.Zone)
		}
		if d.hasZoneinfo && zones[k] == nil {
			return mm.ImportSpec{}, nil, errorf("buddyinfo", b.Line, "node %d zone %s has free pages but zoneinfo gives it no memory", b.Node, b.Zone)
		}
		buddy[k] = b
	}
	if len(d.Buddyinfo) > 0 && len(d.Buddyinfo[0].NrFree) < mm.NR_PAGE_ORDERS {
		b := &d.Buddyinfo[0]
		warn("%s: %d orders (0-%d); orders %d-%d are taken as empty", where("buddyinfo", b.Line), len(b.NrFree), len(b.NrFree)-1, len(b.NrFree), mm.MAX_PAGE_ORDER)
	}
	if p := d.Pagetypeinfo; p != nil && len(p.Free) > 0 && len(p.Free[0].Counts) < mm.NR_PAGE_ORDERS {
		r := &p.Free[0]
		warn("%s: %d orders (0-%d); orders %d-%d are taken as empty", where("pagetypeinfo", r.Line), len(r.Counts), len(r.Counts)-1, len(r.Counts), mm.MAX_PAGE_ORDER)
	}
	hasFree := map[zoneKey]bool{}
	if p := d.Pagetypeinfo; p != nil {
		for _, row := range p.Free {
			if err := checkNode("pagetypeinfo", row.Line, row.Node); err != nil {
				return mm.ImportSpec{}, nil, err
			}
			mt, _ := mm.ParseMigrateType(row.Type)
			t, err := zoneType("pagetypeinfo", row.Line, row.Zone)
			if err != nil {
				return mm.ImportSpec{}, nil, err
			}
			if len(row.Counts) > mm.NR_PAGE_ORDERS {
				return mm.ImportSpec{}, nil, errorf("pagetypeinfo", row.Line, "%d orders; pagesim models orders 0-%d", len(row.Counts), mm.MAX_PAGE_ORDER)
			}
			k := zoneKey{row.Node, t}
			if d.hasZoneinfo && zones[k] == nil {
				return mm.ImportSpec{}, nil, errorf("pagetypeinfo", row.Line, "node %d zone %s has free pages but zoneinfo gives it no memory", row.Node, row.Zone)
			}
			z := get(k)
			hasFree[k] = true
			var pages uint64
			for o, c := range row.Counts {
				z.Free[o][mt] = c
				pages = satAdd(pages, satMul(c, 1<<o))
			}
			size(k, where("pagetypeinfo", row.Line), pages)
		}
		for _, row := range p.Blocks {
			t, err := zoneType("pagetypeinfo", row.Line, row.Zone)
			if err != nil {
				return mm.ImportSpec{}, nil, err
			}
			k := zoneKey{row.Node, t}
			if d.hasZoneinfo && zones[k] == nil {
				return mm.ImportSpec{}, nil, errorf("pagetypeinfo", row.Line, "node %d zone %s has pageblocks but zoneinfo gives it no memory", row.Node, row.Zone)
			}
			z := get(k)
			z.HasBlocks = true
			var blocks uint64
			for i, name := range row.Types {
				mt, _ := mm.ParseMigrateType(name)
				z.Blocks[mt] = row.Counts[i]
				blocks = satAdd(blocks, row.Counts[i])
			}
			size(k, where("pagetypeinfo", row.Line), satMul(blocks, mm.PageblockNrPages))
		}
		if p.PageblockOrderLine != 0 && p.PageblockOrder != mm.PageblockOrder {
			return mm.ImportSpec{}, nil, errorf("pagetypeinfo", p.PageblockOrderLine, "page block order %d; pagesim models %d", p.PageblockOrder, mm.PageblockOrder)
		}
		// Lists the kernel stopped counting at 100000.
		for _, row := range p.Free {
			mt, _ := mm.ParseMigrateType(row.Type)
			t, _ := mm.ParseZoneType(row.Zone)
			k := zoneKey{row.Node, t}
			for o, capped := range row.Capped {
				if !capped {
					continue
				}
				z := zones[k]
				b := buddy[k]
				if b != nil && o < len(b.NrFree) {
					var others uint64
					for omt := mm.MigrateType(0); omt < mm.MIGRATE_TYPES; omt++ {
						if omt != mt {
							others = satAdd(others, z.Free[o][omt])
						}
					}
					if b.NrFree[o] >= satAdd(others, row.Counts[o]) {
						z.Free[o][mt] = b.NrFree[o] - others
						warn("%s: %s order-%d list printed as >%d; buddyinfo gives %d", where("pagetypeinfo", row.Line), row.Type, o, row.Counts[o], z.Free[o][mt])
						continue
					}
				}
				warn("%s: %s order-%d list printed as >%d; using %d", where("pagetypeinfo", row.Line), row.Type, o, row.Counts[o], row.Counts[o])
			}
		}
		for _, k := range keys {
			b := buddy[k]
			if b == nil || !hasFree[k] {
				continue
			}
			z := zones[k]
			for o := range b.NrFree {
				var sum uint64
				for _, c := range z.Free[o] {
					sum = satAdd(sum, c)
				}
				if sum != b.NrFree[o] {
					warn("%s: node %d zone %s: buddyinfo and pagetypeinfo differ (order %d: %d and %d chunks); using pagetypeinfo",
						where("buddyinfo", b.Line), k.node, k.zone, o, b.NrFree[o], sum)
					break
				}
			}
		}
	} else if len(d.Buddyinfo) > 0 {
		for _, b := range d.Buddyinfo {
			t, _ := mm.ParseZoneType(b.Zone)
			k := zoneKey{b.Node, t}
			z := get(k)
			hasFree[k] = true
			var pages uint64
			for o, c := range b.NrFree {
				z.Free[o][mm.MIGRATE_MOVABLE] = c
				pages = satAdd(pages, satMul(c, 1<<o))
			}
			size(k, where("buddyinfo", b.Line), pages)
		}
		warn("buddyinfo has no migratetypes and there is no pagetypeinfo: every free chunk is on the Movable lists, every pageblock Movable")
	}
	var guessed []string
	for _, k := range keys {
		if hasFree[k] {
			continue
		}
		free, ok := zoneinfoFree[k]
		if !ok {
			continue
		}
		z := zones[k]
		// The largest chunks that make up the free page count.
		z.Free[mm.MAX_PAGE_ORDER][mm.MIGRATE_MOVABLE] = free >> mm.MAX_PAGE_ORDER
		for o := 0; o < mm.MAX_PAGE_ORDER; o++ {
			if free&(1<<o) != 0 {
				z.Free[o][mm.MIGRATE_MOVABLE] = 1
			}
		}
		guessed = append(guessed, fmt.Sprintf("node %d zone %s", k.node, k.zone))
	}
	if len(guessed) > 0 {
		warn("no free lists for %s (no buddyinfo or pagetypeinfo line): zoneinfo's free pages become the largest chunks on the Movable lists", strings.Join(guessed, ", "))
	}
	for _, k := range keys {
		z := zones[k]
		if free, ok := zoneinfoFree[k]; ok && hasFree[k] {
			var lists uint64
			for o := range z.Free {
				for mt, c := range z.Free[o] {
					if mm.MigrateType(mt) != mm.MIGRATE_ISOLATE {
						lists = satAdd(lists, satMul(c, 1<<o))
					}
				}
			}
			if lists != free {
				warn("node %d zone %s: zoneinfo says %d pages free, the free lists hold %d (files taken at different times?); using the free lists", k.node, k.zone, free, lists)
			}
		}
	}

	// Nodes and CPUs.
	nrNodes := 0
	for _, k := range keys {
		nrNodes = max(nrNodes, k.node+1)
	}
	if nrNodes == 0 {
		return mm.ImportSpec{}, nil, errors.New("the dump has no zone with memory")
	}
	spec := mm.ImportSpec{Nodes: make([]mm.ImportNode, nrNodes), Seed: opt.Seed, THP: opt.THP, MaxBytes: opt.MaxBytes}
	if nrCPUs > 0 {
		for i := range spec.Nodes {
			spec.Nodes[i].CPUs = nrCPUs / nrNodes
			if i < nrCPUs%nrNodes {
				spec.Nodes[i].CPUs++
			}
			spec.Nodes[i].CPUsSource = cpuSource
		}
		if nrNodes > 1 {
			warn("zoneinfo does not say which node a CPU is on: its %d CPUs are split evenly over the %d nodes", nrCPUs, nrNodes)
		}
	} else {
		per := opt.CPUsPerNode
		if per <= 0 {
			per = DefaultCPUsPerNode
		}
		for i := range spec.Nodes {
			spec.Nodes[i].CPUs = per
		}
		warn("no zoneinfo pagesets: %d CPUs per node", per)
	}
	sort.Slice(keys, func(a, b int) bool {
		if keys[a].node != keys[b].node {
			return keys[a].node < keys[b].node
		}
		return keys[a].zone < keys[b].zone
	})
	for _, k := range keys {
		spec.Nodes[k.node].Zones = append(spec.Nodes[k.node].Zones, *zones[k])
	}

	// Sysctls: the dump's files, then the explicit settings.
	for _, f := range d.SysVM {
		name := "vm." + f.Name
		if !mm.IsSysctl(name) {
			warn("sys_vm/%s: pagesim does not model %s; ignored", f.Name, name)
			continue
		}
		parts := make([]string, len(f.Values))
		for i, v := range f.Values {
			parts[i] = strconv.FormatInt(v, 10)
		}
		value := strings.Join(parts, "\t")
		if (f.Name == "dirty_bytes" || f.Name == "dirty_background_bytes") && value == "0" {
			// 0 is what the kernel shows while the matching ratio is in
			// use (mm/page-writeback.c: dirty_ratio_handler and
			// dirty_background_ratio_handler zero the bytes), not a
			// value one can write (the table's extra1 is
			// SYSCTL_LONG_ONE): the ratio file says the setting.
			continue
		}
		if err := mm.ValidateSysctl(name, value); err != nil {
			return mm.ImportSpec{}, nil, errorf("sys_vm/"+f.Name, 1, "%v", err)
		}
		spec.Sysctl = append(spec.Sysctl, mm.SysctlSetting{Name: name, Value: value})
	}
	spec.Sysctl = append(spec.Sysctl, opt.Sysctl...)

	if d.hasVmstat {
		if v, ok := VmstatValue(d.Vmstat, "nr_free_pages"); ok && d.hasZoneinfo {
			var sum uint64
			for _, f := range zoneinfoFree {
				sum = satAdd(sum, f)
			}
			if sum != v {
				warn("vmstat says %d pages free, zoneinfo %d (files taken at different times?)", v, sum)
			}
		}
	}
	return spec, warnings, nil
}

func migratetypeList() string {
	var names []string
	for mt := mm.MigrateType(0); mt < mm.MIGRATE_TYPES; mt++ {
		names = append(names, mt.String())
	}
	return strings.Join(names, ", ")
}

// Import loads a dump folder and builds its machine (Load, Dump.Spec,
// mm.Import). The warnings say what the import had to guess or adjust.
func Import(fsys fs.FS, opt ImportOptions) (*mm.Machine, []string, error) {
	d, err := Load(fsys)
	if err != nil {
		return nil, nil, err
	}
	spec, warnings, err := d.Spec(opt)
	if err != nil {
		return nil, nil, err
	}
	m, more, err := mm.Import(spec)
	if err != nil {
		return nil, nil, err
	}
	return m, append(warnings, more...), nil
}

// satAdd and satMul are a+b and a*b saturating at math.MaxUint64: counts
// come from files.
func satAdd(a, b uint64) uint64 {
	s, carry := bits.Add64(a, b, 0)
	if carry != 0 {
		return math.MaxUint64
	}
	return s
}

func satMul(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	if hi != 0 {
		return math.MaxUint64
	}
	return lo
}
