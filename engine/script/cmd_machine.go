package script

// cmd_machine.go: building the machine and setting the kernel's knobs
// (machine, sysctl, thp, patch, kernel, cost, swap, cgroup).

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/procfs"
	"github.com/pagesim/pagesim/engine/sim"
)

func machineCommands() []*command {
	return []*command{
		{
			name:   "machine",
			syntax: "machine mem=SIZE [nodes=N] [cpus=N] [layout=x86|simple] [seed=N]",
			help: "Boots a machine: mem is split evenly over the nodes, each node gets cpus CPUs. " +
				"layout=x86 builds the zones an x86-64 kernel shows (DMA, DMA32 below 4 GiB, Normal); " +
				"layout=simple gives each node one Normal zone. A second machine command starts over: " +
				"every named object and task is forgotten.",
			keys: []param{
				{name: "mem", typ: tSize, required: true, help: "total memory, split evenly over the nodes"},
				{name: "nodes", typ: tCount, help: "NUMA nodes (default 1)"},
				{name: "cpus", typ: tCount, help: "CPUs per node (default 2)"},
				{name: "layout", typ: tChoice, choices: []string{"x86", "simple"}, help: "zone layout (default x86)"},
				{name: "seed", typ: tCount, help: "seed of the machine's random number generator (default 1)"},
			},
			noMachine: true,
			run:       runMachine,
		},
		{
			name:   "import",
			syntax: "import [cpus=N] [seed=N]",
			help: "Boots the machine a real machine's /proc files describe, as pagesim proc --import builds it " +
				"(its zones, free lists, pageblocks, watermarks and vm sysctls): the dump is the folder given to " +
				"pagesim script --import DIR, or in the page the machine of \"Start from a machine\". " +
				"Each of the import's warnings prints as a note: line. Like machine, it starts over.",
			keys: []param{
				{name: "cpus", typ: tCount, help: "CPUs per node when the dump's zoneinfo lists none (default 4)"},
				{name: "seed", typ: tCount, help: "seed of the machine's random number generator (default 1)"},
			},
			noMachine: true,
			run:       runImport,
		},
		{
			name:   "sysctl",
			syntax: "sysctl [NAME[=VALUE]]...",
			help: "Writes vm.* sysctls by their /proc/sys name (vm.defrag_mode=1) and recomputes what the kernel " +
				"recomputes (watermarks, reserves, pcp sizes); a NAME alone prints its value, no NAME prints them all. " +
				"vm.compact_memory=1 compacts every node, like the compact_memory command.",
			free:  true,
			check: checkSysctl,
			run:   runSysctl,
		},
		{
			name:   "thp",
			syntax: "thp [NAME[=VALUE]]...",
			help: "Writes transparent hugepage knobs by their sysfs path under /sys/kernel/mm " +
				"(transparent_hugepage.defrag=always, transparent_hugepage.hugepages-64kB.enabled=inherit); " +
				"a NAME alone prints it the way sysfs does, no NAME prints them all.",
			free:  true,
			check: checkTHP,
			run:   runTHP,
		},
		{
			name:   "patch",
			syntax: "patch [NAME[=on|off]]...",
			help: "Switches a seed patch on or off by its Go name in mm.Patches (OnlyCompact=on); " +
				"a NAME alone prints it, no NAME lists them all.",
			free:  true,
			check: func(c *call) error { return checkSwitches(c, reflect.TypeOf(mm.Patches{})) },
			run: func(in *Interp, c *call) error {
				return runSwitches(in, c, reflect.ValueOf(&in.m.Patches).Elem())
			},
		},
		{
			name:   "kernel",
			syntax: "kernel [NAME[=on|off]]...",
			help: "Switches a kernel-version behaviour by its Go name in mm.KernelBase (THPLegacyThisnode=on); " +
				"a NAME alone prints it, no NAME lists them all.",
			free:  true,
			check: func(c *call) error { return checkSwitches(c, reflect.TypeOf(mm.KernelBase{})) },
			run: func(in *Interp, c *call) error {
				return runSwitches(in, c, reflect.ValueOf(&in.m.Kernel).Elem())
			},
		},
		{
			name:   "cost",
			syntax: "cost [NAME[=DURATION]]...",
			help: "Changes the simulated cost of one unit of kernel work by its name in mm.CostTable " +
				"(MigratePage=5us) for a what-if; a NAME alone prints it, no NAME lists them all.",
			free:  true,
			check: checkCost,
			run:   runCost,
		},
		{
			name:   "blockdev",
			syntax: "blockdev [NAME[=VALUE]]...",
			help: "Changes the block device that swap, writeback and reads use (nvme0n1, a data-centre NVMe SSD): " +
				"its queue attributes by their /sys/block/nvme0n1/queue name (nr_requests=64, max_sectors_kb=64), or its " +
				"hardware for a what-if (write_bandwidth=500M per second, read_bandwidth, read_latency=115us, " +
				"write_latency, read_iops, write_iops, read_sigma and write_sigma in thousandths, 0 for no variation; a latency " +
				"at most 30s, nvme_core.io_timeout, a bandwidth at least 4370 per second, a spread at most 4000); " +
				"a NAME alone prints it, no NAME prints them all.",
			free:  true,
			check: checkBlockdev,
			run:   runBlockdev,
		},
		{
			name:   "swap",
			syntax: "swap SIZE",
			help:   "Sizes the swap device (0 turns swap off); anonymous memory is reclaimable only while swap has room.",
			pos:    []param{{name: "SIZE", typ: tSize, required: true}},
			run: func(in *Interp, c *call) error {
				b, _ := ParseSize(c.pos[0])
				return in.m.SetSwap(b)
			},
		},
		{
			name:   "cgroup",
			syntax: "cgroup NAME [memory.low=SIZE] [memory.min=SIZE]",
			help: "Creates a memory cgroup under the root, or changes an existing one's protection. " +
				"The root is called /; objects are charged to it unless given cgroup=NAME.",
			pos: []param{{name: "NAME", typ: tName, required: true}},
			keys: []param{
				{name: "memory.low", typ: tSize, help: "best-effort protection from reclaim"},
				{name: "memory.min", typ: tSize, help: "hard protection from reclaim"},
			},
			run: runCgroup,
		},
	}
}

func runMachine(in *Interp, c *call) error {
	mem := c.size("mem")
	nodes, cpus := uint64(1), uint64(2)
	if c.has("nodes") {
		nodes = c.uint("nodes")
	}
	if c.has("cpus") {
		cpus = c.uint("cpus")
	}
	if nodes == 0 || nodes > 64 {
		return fmt.Errorf("nodes=%d: want 1 to 64", nodes)
	}
	if cpus == 0 || cpus > 1024 {
		return fmt.Errorf("cpus=%d: want 1 to 1024 per node", cpus)
	}
	var cfg mm.Config
	var err error
	if c.str("layout", "x86") == "simple" {
		cfg, err = mm.SimpleLayout(mem/mm.PAGE_SIZE/nodes, int(nodes), int(cpus))
	} else {
		cfg, err = mm.X86Layout(mem, int(nodes), int(cpus))
	}
	if err != nil {
		return err
	}
	cfg.Seed, cfg.MaxBytes = 1, in.opts.MaxBytes
	if c.has("seed") {
		cfg.Seed = c.uint("seed")
	}
	cfg.Recorder = in.opts.Recorder
	m, err := mm.NewMachine(cfg)
	if err != nil {
		return err
	}
	in.machines++
	if cfg.Recorder != nil {
		cfg.Recorder.Name(fmt.Sprintf("machine%d", in.machines))
	}
	in.m = m
	in.reset()
	in.invariants = in.opts.CheckEveryEvent
	return nil
}

// runImport boots the machine of the dump in Options.Dump.
func runImport(in *Interp, c *call) error {
	if in.opts.Dump == nil {
		return fmt.Errorf("no dump to import: give its folder with pagesim script --import DIR (in the page: Start from a machine)")
	}
	cpus := uint64(0)
	if c.has("cpus") {
		cpus = c.uint("cpus")
		if cpus == 0 || cpus > 1024 {
			return fmt.Errorf("cpus=%d: want 1 to 1024 per node", cpus)
		}
	}
	d, err := procfs.Load(in.opts.Dump)
	if err != nil {
		return err
	}
	seed := uint64(1)
	if c.has("seed") {
		seed = c.uint("seed")
	}
	spec, warnings, err := d.Spec(procfs.ImportOptions{CPUsPerNode: int(cpus), Seed: seed, MaxBytes: in.opts.MaxBytes})
	if err != nil {
		return err
	}
	spec.Recorder = in.opts.Recorder
	m, more, err := mm.Import(spec)
	if err != nil {
		return err
	}
	in.machines++
	if spec.Recorder != nil {
		spec.Recorder.Name(fmt.Sprintf("machine%d", in.machines))
	}
	in.m = m
	in.reset()
	in.invariants = in.opts.CheckEveryEvent
	for _, w := range append(warnings, more...) {
		in.note("import: %s", w)
	}
	return nil
}

// splitNameValue returns a free-form word's name and value.
func splitNameValue(a Arg) (name, value string, set bool) {
	if a.Key != "" {
		return a.Key, a.Value, true
	}
	return a.Value, "", false
}

func checkSysctl(c *call) error {
	for _, a := range c.st.Args {
		name, value, set := splitNameValue(a)
		if normSysctl(name) == "vm.compact_memory" {
			if set && value != "1" {
				return fmt.Errorf("vm.compact_memory: write 1 to compact")
			}
			if !set {
				return fmt.Errorf("vm.compact_memory can only be written")
			}
			continue
		}
		if !mm.IsSysctl(name) {
			msg := fmt.Sprintf("unknown sysctl %q", name)
			if s := suggest(normSysctl(name), mm.SysctlNames()); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			} else {
				msg += fmt.Sprintf(" (pagesim models %s)", strings.Join(mm.SysctlNames(), ", "))
			}
			return fmt.Errorf("%s", msg)
		}
		if set {
			if err := mm.ValidateSysctl(name, value); err != nil {
				return err
			}
		}
	}
	return nil
}

func normSysctl(name string) string {
	return strings.ReplaceAll(strings.TrimPrefix(name, "/proc/sys/"), "/", ".")
}

func runSysctl(in *Interp, c *call) error {
	if len(c.st.Args) == 0 {
		for _, n := range mm.SysctlNames() {
			v, _ := in.m.GetSysctl(n)
			in.printf("%s = %s\n", n, v)
		}
		return nil
	}
	for _, a := range c.st.Args {
		name, value, set := splitNameValue(a)
		if normSysctl(name) == "vm.compact_memory" {
			if err := in.work(c, func(t *sim.Task) error { in.m.CompactMemory(t); return nil }); err != nil {
				return err
			}
			continue
		}
		if !set {
			v, err := in.m.GetSysctl(name)
			if err != nil {
				return err
			}
			in.printf("%s = %s\n", normSysctl(name), v)
			continue
		}
		if err := in.m.SetSysctl(name, value); err != nil {
			return err
		}
	}
	return nil
}

func normTHP(name string) string {
	return strings.ReplaceAll(strings.TrimPrefix(name, "/sys/kernel/mm/"), "/", ".")
}

func checkTHP(c *call) error {
	for _, a := range c.st.Args {
		name, value, set := splitNameValue(a)
		if !mm.IsTHPKnob(name) {
			msg := fmt.Sprintf("unknown THP knob %q", name)
			if s := suggest(normTHP(name), mm.THPKnobNames()); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			}
			return fmt.Errorf("%s (the knobs are transparent_hugepage.enabled, transparent_hugepage.defrag and transparent_hugepage.hugepages-<size>kB.enabled)", msg)
		}
		if set {
			s := mm.DefaultTHPSettings()
			if err := s.SetKnob(name, value); err != nil {
				return err
			}
		}
	}
	return nil
}

func runTHP(in *Interp, c *call) error {
	if len(c.st.Args) == 0 {
		for _, n := range mm.THPKnobNames() {
			v, _ := in.m.THP.GetKnob(n)
			in.printf("%s = %s\n", n, v)
		}
		return nil
	}
	for _, a := range c.st.Args {
		name, value, set := splitNameValue(a)
		if !set {
			v, err := in.m.THP.GetKnob(name)
			if err != nil {
				return err
			}
			in.printf("%s = %s\n", normTHP(name), v)
			continue
		}
		if err := in.m.SetTHPKnob(name, value); err != nil {
			return err
		}
	}
	return nil
}

// switchNames lists the bool fields of a switch struct.
func switchNames(t reflect.Type) []string {
	var out []string
	for i := 0; i < t.NumField(); i++ {
		if t.Field(i).Type.Kind() == reflect.Bool && t.Field(i).IsExported() {
			out = append(out, t.Field(i).Name)
		}
	}
	return out
}

func checkSwitches(c *call, t reflect.Type) error {
	names := switchNames(t)
	for _, a := range c.st.Args {
		name, value, set := splitNameValue(a)
		found := false
		for _, n := range names {
			found = found || n == name
		}
		if !found {
			msg := fmt.Sprintf("unknown switch %q", name)
			if s := suggest(name, names); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			} else {
				msg += fmt.Sprintf(" (have %s)", strings.Join(names, ", "))
			}
			return fmt.Errorf("%s", msg)
		}
		if set {
			if _, err := parseBool(value); err != nil {
				return fmt.Errorf("%s=%v", name, err)
			}
		}
	}
	return nil
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func runSwitches(in *Interp, c *call, v reflect.Value) error {
	if len(c.st.Args) == 0 {
		for _, n := range switchNames(v.Type()) {
			in.printf("%s=%s\n", n, onOff(v.FieldByName(n).Bool()))
		}
		return nil
	}
	for _, a := range c.st.Args {
		name, value, set := splitNameValue(a)
		f := v.FieldByName(name)
		if !set {
			in.printf("%s=%s\n", name, onOff(f.Bool()))
			continue
		}
		b, _ := parseBool(value)
		f.SetBool(b)
	}
	return nil
}

func checkCost(c *call) error {
	costs := mm.DefaultCosts()
	for _, a := range c.st.Args {
		name, value, set := splitNameValue(a)
		if _, ok := costs.Get(name); !ok {
			msg := fmt.Sprintf("unknown cost %q", name)
			if s := suggest(name, costs.Names()); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			}
			return fmt.Errorf("%s", msg)
		}
		if set {
			d, err := parseDuration(value)
			if err != nil {
				return fmt.Errorf("%s=%v", name, err)
			}
			if d > mm.MaxCost {
				return fmt.Errorf("%s=%s: a cost must be at most 20s (the soft-lockup threshold, 2 x kernel.watchdog_thresh: kernel code that runs longer without scheduling is reported stuck)", name, value)
			}
			if err := costs.Set(name, int64(d)); err != nil {
				return err
			}
		}
	}
	return nil
}

func runCost(in *Interp, c *call) error {
	if len(c.st.Args) == 0 {
		for _, n := range in.m.Cost.Names() {
			d, _ := in.m.Cost.Get(n)
			in.printf("%s=%s\n", n, formatDuration(d))
		}
		return nil
	}
	for _, a := range c.st.Args {
		name, value, set := splitNameValue(a)
		if !set {
			d, _ := in.m.Cost.Get(name)
			in.printf("%s=%s\n", name, formatDuration(d))
			continue
		}
		d, _ := parseDuration(value)
		if err := in.m.Cost.Set(name, int64(d)); err != nil {
			return err
		}
	}
	return nil
}

func runCgroup(in *Interp, c *call) error {
	name := c.pos[0]
	var cg *mm.Memcg
	if o, ok := in.objects[name]; ok {
		co, isCg := o.(*cgroupObj)
		if !isCg {
			return fmt.Errorf("%q is already a %s", name, o.kind())
		}
		cg = co.cg
	} else {
		if err := in.canDefine(name); err != nil {
			return err
		}
		cg = in.m.NewMemcg(name)
		if err := in.define(name, &cgroupObj{cg: cg}); err != nil {
			return err
		}
	}
	for _, k := range c.keys {
		if err := cg.SetKnob(k, c.size(k)); err != nil {
			return err
		}
	}
	return nil
}

// blockdevProps names the block device's hardware figures for the
// blockdev command, with their kind: a size per second, a duration or a
// count.
var blockdevProps = []struct {
	name, kind string
	field      func(p *mm.BlockDeviceProps) any
}{
	{"read_bandwidth", "size", func(p *mm.BlockDeviceProps) any { return &p.ReadBandwidth }},
	{"write_bandwidth", "size", func(p *mm.BlockDeviceProps) any { return &p.WriteBandwidth }},
	{"read_latency", "duration", func(p *mm.BlockDeviceProps) any { return &p.ReadLatency }},
	{"write_latency", "duration", func(p *mm.BlockDeviceProps) any { return &p.WriteLatency }},
	{"read_iops", "count", func(p *mm.BlockDeviceProps) any { return &p.ReadIOPS }},
	{"write_iops", "count", func(p *mm.BlockDeviceProps) any { return &p.WriteIOPS }},
	{"read_sigma", "count", func(p *mm.BlockDeviceProps) any { return &p.ReadSigma }},
	{"write_sigma", "count", func(p *mm.BlockDeviceProps) any { return &p.WriteSigma }},
}

var blockdevQueueAttrs = []string{"nr_requests", "max_sectors_kb", "max_hw_sectors_kb", "logical_block_size", "rotational"}

func blockdevNames() []string {
	var out []string
	out = append(out, blockdevQueueAttrs...)
	for _, p := range blockdevProps {
		out = append(out, p.name)
	}
	return out
}

// The bounds of the blockdev command's hardware what-ifs, so that a
// request's completion time stays far inside sim.Time whatever the
// device: maxBlockdevLatency is nvme_core.io_timeout's default, 30 s
// (drivers/nvme/host/core.c: nvme_io_timeout = 30, the io_timeout module
// parameter, in seconds; the driver aborts a request still outstanding
// then); minBlockdevBandwidth
// transfers a request of max_hw_sectors_kb (128 KiB) within it;
// maxBlockdevSigma keeps drawLatency's exponent, s*z - s^2/2 with |z| <=
// 6, inside expRounded's |x| < 40 (s = 4: at most 32).
const (
	maxBlockdevLatency   = 30 * sim.Second
	minBlockdevBandwidth = (128<<10 + 29) / 30
	maxBlockdevSigma     = 4000
)

// setBlockdev sets or (value == "") checks one blockdev name on d.
func setBlockdev(d *mm.BlockDevice, name, value string, set bool) error {
	for _, a := range blockdevQueueAttrs {
		if a == name {
			if !set {
				return nil
			}
			return d.SetQueueAttr(name, value)
		}
	}
	for _, p := range blockdevProps {
		if p.name != name {
			continue
		}
		if !set {
			return nil
		}
		switch f := p.field(&d.Props).(type) {
		case *uint64:
			var v uint64
			var err error
			if p.kind == "size" {
				v, err = ParseSize(value)
				if err == nil && v < minBlockdevBandwidth {
					err = fmt.Errorf("a bandwidth must be at least %d bytes per second (a request of max_hw_sectors_kb within nvme_core.io_timeout, 30 s)", minBlockdevBandwidth)
				}
			} else {
				v, err = strconv.ParseUint(value, 10, 64)
				if err == nil && strings.HasSuffix(name, "_sigma") && v > maxBlockdevSigma {
					err = fmt.Errorf("a spread must be at most %d thousandths", maxBlockdevSigma)
				}
			}
			if err != nil {
				return fmt.Errorf("%s=%s: %v", name, value, err)
			}
			*f = v
		case *sim.Time:
			v, err := parseDuration(value)
			if err == nil && v > maxBlockdevLatency {
				err = fmt.Errorf("a latency must be at most %s (nvme_core.io_timeout: the driver aborts a request that takes longer)", formatDuration(maxBlockdevLatency))
			}
			if err != nil {
				return fmt.Errorf("%s=%s: %v", name, value, err)
			}
			*f = v
		}
		return nil
	}
	msg := fmt.Sprintf("unknown block device setting %q", name)
	if s := suggest(name, blockdevNames()); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	return fmt.Errorf("%s", msg)
}

func checkBlockdev(c *call) error {
	d := mm.DefaultBlockDevice()
	for _, a := range c.st.Args {
		name, value, set := splitNameValue(a)
		if err := setBlockdev(&d, name, value, set); err != nil {
			return err
		}
	}
	return nil
}

func blockdevValue(d *mm.BlockDevice, name string) string {
	if v, err := d.QueueAttr(name); err == nil {
		return v
	}
	for _, p := range blockdevProps {
		if p.name == name {
			switch f := p.field(&d.Props).(type) {
			case *uint64:
				return strconv.FormatUint(*f, 10)
			case *sim.Time:
				return formatDuration(*f)
			}
		}
	}
	return ""
}

func runBlockdev(in *Interp, c *call) error {
	d := &in.m.Blk
	if len(c.st.Args) == 0 {
		for _, n := range blockdevNames() {
			in.printf("%s=%s\n", n, blockdevValue(d, n))
		}
		return nil
	}
	for _, a := range c.st.Args {
		name, value, set := splitNameValue(a)
		if !set {
			in.printf("%s=%s\n", name, blockdevValue(d, name))
			continue
		}
		if err := setBlockdev(d, name, value, true); err != nil {
			return err
		}
	}
	return nil
}
