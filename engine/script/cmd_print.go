package script

// cmd_print.go: looking at the machine (print, expect, trace, echo, help)
// and the value names print and expect read.
//
// A value name is one of:
//
//	a /proc/vmstat counter      compact_stall, nr_free_pages, pgscan_direct
//	NAME.FIELD                  heap.resident, qemu.elapsed (see objects.go)
//	time                        the simulated clock in seconds
//	psi.some|full.avg10|avg60|avg300|total   /proc/pressure/memory (total in us)
//	zone.N.ZONE.FIELD           free, min, low, high, boost, managed, spanned, present
//	zone.N.ZONE.nr_free.ORDER   a /proc/buddyinfo cell
//	zone.N.ZONE.blocks.TYPE     pageblocks of a migratetype (/proc/pagetypeinfo)
//	thp.SIZEkB.FIELD            anon_fault_alloc, anon_fault_fallback (per-size stats)
//	trace.EVENT                 how often a tracepoint fired (enabled or not)
//	slowpath.FIELD              entered, failed, would_oom, would_oom_kill, drains, nofrag_giveups, resumed_off_node
//	compact.FIELD               runs, captured
//	filemap.added.ORDER         page-cache folios added of an order
//	vm.NAME                     an integer sysctl

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/procfs"
)

// procFiles are the files print shows whole.
var procFiles = []struct {
	name  string
	write func(in *Interp, w io.Writer) error
}{
	{"buddyinfo", func(in *Interp, w io.Writer) error { return procfs.Buddyinfo(w, in.m) }},
	{"pagetypeinfo", func(in *Interp, w io.Writer) error { return procfs.Pagetypeinfo(w, in.m) }},
	{"zoneinfo", func(in *Interp, w io.Writer) error { return procfs.Zoneinfo(w, in.m) }},
	{"vmstat", func(in *Interp, w io.Writer) error { return procfs.Vmstat(w, in.m) }},
	{"pressure", func(in *Interp, w io.Writer) error { return in.m.WritePressure(w) }},
	{"pressure.io", func(in *Interp, w io.Writer) error { return in.m.WritePressureIO(w) }},
	{"diskstats", func(in *Interp, w io.Writer) error {
		_, err := io.WriteString(w, in.m.Blk.DiskstatsLine(in.m.World.Now()))
		return err
	}},
	{"distance", func(in *Interp, w io.Writer) error {
		_, err := io.WriteString(w, in.m.NumactlDistances())
		return err
	}},
}

func isProcFile(s string) bool {
	for _, f := range procFiles {
		if f.name == s {
			return true
		}
	}
	return false
}

func printCommands() []*command {
	return []*command{
		{
			name:   "print",
			syntax: "print FILE | print vmstat COUNTER... | print trace [last=N] | print stall|tasks|objects | print VALUE...",
			help: "Prints a /proc file as the kernel would (buddyinfo, pagetypeinfo, zoneinfo, vmstat, pressure for " +
				"/proc/pressure/memory, pressure.io for /proc/pressure/io, diskstats for the block device's /proc/diskstats line, distance for the node " +
				"distance table as numactl -H prints it), chosen /proc/vmstat lines, the tracepoint ring as the trace file shows it " +
				"(last=N: only the N newest events), the last slow-path decision trace of an allocation that stalled " +
				"(stall), the tasks, every named object, or values by name, one \"NAME VALUE\" line each; a named " +
				"object alone prints all its fields.",
			free:  true,
			check: checkPrint,
			run:   runPrint,
		},
		{
			name:   "expect",
			syntax: "expect VALUE OP VALUE",
			help: "Fails the script unless the comparison holds: OP is ==, !=, <, <=, > or >=, each VALUE a value name " +
				"or a number. Tests and examples use it to state what a run must show.",
			free:  true,
			check: checkExpect,
			run:   runExpect,
		},
		{
			name:   "trace",
			syntax: "trace enable|disable EVENT... | trace clear",
			help:   "Tracepoints, as under /sys/kernel/tracing.",
			subs: []*command{
				{
					name:   "enable",
					syntax: "trace enable EVENT...",
					help: "Switches tracepoints on by name (mm_compaction_begin), system:name, system (compaction, vmscan, " +
						"kmem) or all. mm_page_alloc, mm_page_free and mm_vmscan_lru_isolate are off by default.",
					pos:      []param{{name: "EVENT", typ: tText, required: true}},
					variadic: true,
					check:    checkEvents,
					run:      func(in *Interp, c *call) error { return enableEvents(in, c, true) },
				},
				{
					name:     "disable",
					syntax:   "trace disable EVENT...",
					help:     "Switches tracepoints off.",
					pos:      []param{{name: "EVENT", typ: tText, required: true}},
					variadic: true,
					check:    checkEvents,
					run:      func(in *Interp, c *call) error { return enableEvents(in, c, false) },
				},
				{
					name:   "clear",
					syntax: "trace clear",
					help:   "Empties the ring (echo > trace).",
					run:    func(in *Interp, c *call) error { in.m.Trace.Clear(); return nil },
				},
			},
		},
		{
			name:      "echo",
			syntax:    "echo [WORD]...",
			help:      "Prints its words, separated by single blanks.",
			free:      true,
			noMachine: true,
			run: func(in *Interp, c *call) error {
				var words []string
				for _, a := range c.st.Args {
					if a.Key != "" {
						words = append(words, a.Key+"="+a.Value)
					} else {
						words = append(words, a.Value)
					}
				}
				in.printf("%s\n", strings.Join(words, " "))
				return nil
			},
		},
		helpCommand(),
	}
}

func checkEvents(c *call) error {
	t := mm.NewTrace(1)
	for _, e := range c.pos {
		if err := t.Enable(e, true); err != nil {
			return err
		}
	}
	return nil
}

func enableEvents(in *Interp, c *call, on bool) error {
	for _, e := range c.pos {
		if err := in.m.Trace.Enable(e, on); err != nil {
			return err
		}
	}
	return nil
}

// checkValueName validates the syntax of a value name.
func checkValueName(s string) error {
	if s == "" {
		return fmt.Errorf("empty value name")
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-' || c == ':') {
			return fmt.Errorf("%q is not a value name", s)
		}
	}
	return nil
}

func checkPrint(c *call) error {
	args := c.st.Args
	if len(args) == 0 {
		return fmt.Errorf("print what? (a /proc file, trace, stall, tasks, objects, or value names)")
	}
	first := args[0]
	if first.Key != "" {
		return fmt.Errorf("unexpected %s= (usage: %s)", first.Key, c.cmd.syntax)
	}
	switch first.Value {
	case "trace":
		for _, a := range args[1:] {
			if a.Key != "last" {
				return fmt.Errorf("print trace takes only last=N")
			}
			if _, err := parseUint(a.Value); err != nil {
				return fmt.Errorf("last=%v", err)
			}
		}
		return nil
	case "vmstat":
		for _, a := range args[1:] {
			if a.Key != "" {
				return fmt.Errorf("print vmstat takes counter names, not %s=", a.Key)
			}
			if err := checkValueName(a.Value); err != nil {
				return err
			}
		}
		return nil
	case "stall", "tasks", "objects", "buddyinfo", "pagetypeinfo", "zoneinfo", "pressure", "pressure.io", "diskstats", "distance":
		if len(args) > 1 {
			return fmt.Errorf("print %s takes nothing more", first.Value)
		}
		return nil
	}
	for _, a := range args {
		if a.Key != "" {
			return fmt.Errorf("unexpected %s= (usage: %s)", a.Key, c.cmd.syntax)
		}
		if isProcFile(a.Value) {
			return fmt.Errorf("print %s must come alone", a.Value)
		}
		if err := checkValueName(a.Value); err != nil {
			return err
		}
	}
	return nil
}

func runPrint(in *Interp, c *call) error {
	args := c.st.Args
	what := args[0].Value
	switch what {
	case "trace":
		if len(args) == 2 {
			n, _ := parseUint(args[1].Value)
			ev := in.m.Trace.Events()
			for i := len(ev) - int(min(n, uint64(len(ev)))); i < len(ev); i++ {
				in.printf("%s\n", ev[i].String())
			}
			return nil
		}
		in.printf("%s", in.m.Trace.Format(in.m.NrCPUs()))
		return nil
	case "stall":
		if s, ok := in.m.LastStall(); ok {
			in.printf("%s\n", s)
		} else {
			in.printf("no allocation has stalled\n")
		}
		return nil
	case "tasks":
		for _, n := range in.namesOf("task") {
			in.printf("%s\n", in.describe(n, in.objects[n]))
		}
		return nil
	case "objects":
		for _, n := range in.names {
			in.printf("%s\n", in.describe(n, in.objects[n]))
		}
		return nil
	case "vmstat":
		if len(args) > 1 {
			lines, err := in.vmstatLines()
			if err != nil {
				return err
			}
			for _, a := range args[1:] {
				v, ok := lines[a.Value]
				if !ok {
					return in.unknownValue(a.Value)
				}
				in.printf("%s %s\n", a.Value, v)
			}
			return nil
		}
	}
	for _, f := range procFiles {
		if f.name == what {
			s, err := capture(func(w io.Writer) error { return f.write(in, w) })
			if err != nil {
				return err
			}
			in.printf("%s", s)
			return nil
		}
	}
	for _, a := range args {
		if o, ok := in.objects[a.Value]; ok {
			in.printf("%s\n", in.describe(a.Value, o))
			continue
		}
		v, err := in.value(a.Value)
		if err != nil {
			return err
		}
		in.printf("%s %s\n", a.Value, v)
	}
	return nil
}

var expectOps = []string{"==", "!=", "<", "<=", ">", ">="}

func checkExpect(c *call) error {
	args := c.st.Args
	if len(args) != 3 || args[0].Key != "" || args[1].Key != "" || args[2].Key != "" {
		return fmt.Errorf("want VALUE OP VALUE with blanks around OP, such as: expect compact_stall > 0")
	}
	ok := false
	for _, op := range expectOps {
		ok = ok || op == args[1].Value
	}
	if !ok {
		return fmt.Errorf("%q is not a comparison (want %s)", args[1].Value, strings.Join(expectOps, " "))
	}
	for _, a := range []string{args[0].Value, args[2].Value} {
		if _, isNum := parseNumber(a); !isNum {
			if err := checkValueName(a); err != nil {
				return err
			}
		}
	}
	return nil
}

func runExpect(in *Interp, c *call) error {
	args := c.st.Args
	operand := func(s string) (num, error) {
		if n, ok := parseNumber(s); ok {
			return n, nil
		}
		return in.value(s)
	}
	a, err := operand(args[0].Value)
	if err != nil {
		return err
	}
	b, err := operand(args[2].Value)
	if err != nil {
		return err
	}
	cmp := a.compare(b)
	var holds bool
	switch args[1].Value {
	case "==":
		holds = cmp == 0
	case "!=":
		holds = cmp != 0
	case "<":
		holds = cmp < 0
	case "<=":
		holds = cmp <= 0
	case ">":
		holds = cmp > 0
	case ">=":
		holds = cmp >= 0
	}
	if holds {
		return nil
	}
	got := fmt.Sprintf("%s is %s", args[0].Value, a)
	if _, isNum := parseNumber(args[2].Value); !isNum {
		got += fmt.Sprintf(", %s is %s", args[2].Value, b)
	}
	return fmt.Errorf("%s %s %s does not hold: %s", args[0].Value, args[1].Value, args[2].Value, got)
}

// ---------------------------------------------------------------------------
// Values

// vmstatLines renders /proc/vmstat and returns its lines by name.
func (in *Interp) vmstatLines() (map[string]string, error) {
	s, err := capture(func(w io.Writer) error { return procfs.Vmstat(w, in.m) })
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, line := range strings.Split(s, "\n") {
		if name, v, ok := strings.Cut(line, " "); ok {
			out[name] = v
		}
	}
	return out, nil
}

// vmstatValue returns a /proc/vmstat counter.
func (in *Interp) vmstatValue(name string) (num, bool) {
	if in.m == nil {
		return num{}, false
	}
	if v, ok := in.m.VMStatValue(name); ok {
		return intNum(v), true
	}
	lines, err := in.vmstatLines()
	if err != nil {
		return num{}, false
	}
	s, ok := lines[name]
	if !ok {
		return num{}, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return num{}, false
	}
	return intNum(n), true
}

func (in *Interp) unknownValue(name string) error {
	msg := fmt.Sprintf("unknown value %q", name)
	var cands []string
	cands = append(cands, in.names...)
	if lines, err := in.vmstatLines(); err == nil {
		for k := range lines {
			cands = append(cands, k)
		}
	}
	sort.Strings(cands)
	if s := suggest(name, cands); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	} else {
		msg += " (a /proc/vmstat counter, NAME.FIELD of a named object, time, psi.*, zone.*, thp.*, trace.*, slowpath.*, compact.*, filemap.* or vm.*)"
	}
	return fmt.Errorf("%s", msg)
}

// value returns a value by name.
func (in *Interp) value(name string) (num, error) {
	if name == "time" {
		return floatNum(in.m.World.Now().Seconds(), 6), nil
	}
	parts := strings.Split(name, ".")
	if len(parts) == 1 {
		if v, ok := in.vmstatValue(name); ok {
			return v, nil
		}
		if o, ok := in.objects[name]; ok {
			var fs []string
			for _, f := range o.fields(in) {
				fs = append(fs, name+"."+f.name)
			}
			return num{}, fmt.Errorf("%s is a %s: name one of its fields, %s", name, o.kind(), strings.Join(fs, ", "))
		}
		return num{}, in.unknownValue(name)
	}
	bad := func() (num, error) { return num{}, in.unknownValue(name) }
	switch parts[0] {
	case "psi":
		if len(parts) != 3 || (parts[1] != "some" && parts[1] != "full") {
			return bad()
		}
		full := parts[1] == "full"
		if parts[2] == "total" {
			in.m.PSIUpdate()
			i := 0
			if full {
				i = 1
			}
			return intNum(int64(in.m.PSI.Total[i] / 1000)), nil
		}
		in.m.PSIUpdate()
		avg := in.m.PSIAvg(full)
		for i, w := range []string{"avg10", "avg60", "avg300"} {
			if parts[2] == w {
				return floatNum(avg[i], 2), nil
			}
		}
		return bad()
	case "zone":
		return in.zoneValue(name, parts)
	case "thp":
		if len(parts) != 3 || !strings.HasSuffix(parts[1], "kB") {
			return bad()
		}
		kb, err := strconv.Atoi(strings.TrimSuffix(parts[1], "kB"))
		if err != nil {
			return bad()
		}
		for o := 2; o <= mm.HPAGE_PMD_ORDER; o++ {
			if 4<<o != kb {
				continue
			}
			s := in.m.MTHP[o]
			switch parts[2] {
			case "anon_fault_alloc":
				return uintNum(s.AnonFaultAlloc), nil
			case "anon_fault_fallback":
				return uintNum(s.AnonFaultFallback), nil
			case "anon_fault_fallback_charge":
				return uintNum(s.AnonFaultFallbackCharge), nil
			}
		}
		return bad()
	case "trace":
		if len(parts) != 2 {
			return bad()
		}
		for i := mm.TraceID(0); i < mm.NrTraceIDs; i++ {
			e := mm.TraceEvent{ID: i}
			if e.Name() == parts[1] {
				return uintNum(in.m.Trace.Hits[i]), nil
			}
		}
		return bad()
	case "slowpath":
		s := in.m.Slow
		if len(parts) != 2 {
			return bad()
		}
		switch parts[1] {
		case "entered":
			return uintNum(s.Entered), nil
		case "failed":
			return uintNum(s.Failed), nil
		case "would_oom":
			return uintNum(s.WouldOOM), nil
		case "would_oom_kill":
			return uintNum(s.WouldOOMKill), nil
		case "drains":
			return uintNum(s.Drains), nil
		case "nofrag_giveups":
			return uintNum(s.NofragGiveUps), nil
		case "resumed_off_node":
			return uintNum(s.ResumedOffNode), nil
		}
		return bad()
	case "compact":
		if len(parts) != 2 {
			return bad()
		}
		switch parts[1] {
		case "runs":
			return uintNum(in.m.Compact.Runs), nil
		case "captured":
			return uintNum(in.m.Compact.Captured), nil
		}
		return bad()
	case "filemap":
		if len(parts) != 3 || parts[1] != "added" {
			return bad()
		}
		o, err := strconv.Atoi(parts[2])
		if err != nil || o < 0 || o >= mm.NR_PAGE_ORDERS {
			return bad()
		}
		return uintNum(in.m.Filemap.FoliosAdded[o]), nil
	case "vm":
		if !mm.IsSysctl(name) {
			return bad()
		}
		s, err := in.m.GetSysctl(name)
		if err != nil {
			return num{}, err
		}
		n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil {
			return num{}, fmt.Errorf("%s is %q, not a number", name, s)
		}
		return intNum(n), nil
	}
	o, ok := in.objects[parts[0]]
	if !ok {
		return bad()
	}
	if len(parts) == 2 {
		for _, f := range o.fields(in) {
			if f.name == parts[1] {
				return f.v, nil
			}
		}
	}
	var fs []string
	for _, f := range o.fields(in) {
		fs = append(fs, f.name)
	}
	return num{}, fmt.Errorf("%s %s has no field %q (have %s)", o.kind(), parts[0], strings.Join(parts[1:], "."), strings.Join(fs, ", "))
}

// zoneValue reads zone.N.ZONE.FIELD values.
func (in *Interp) zoneValue(name string, parts []string) (num, error) {
	bad := func() (num, error) { return num{}, in.unknownValue(name) }
	if len(parts) < 4 {
		return bad()
	}
	nid, err := strconv.Atoi(parts[1])
	if err != nil || nid < 0 || nid >= len(in.m.Nodes) {
		return num{}, fmt.Errorf("%s: no node %s (the machine has nodes 0 to %d)", name, parts[1], len(in.m.Nodes)-1)
	}
	zt, ok := mm.ParseZoneType(parts[2])
	if !ok {
		return num{}, fmt.Errorf("%s: no zone %q (DMA, DMA32, Normal, Movable)", name, parts[2])
	}
	z := in.m.Nodes[nid].Zones[zt]
	if len(parts) == 5 {
		switch parts[3] {
		case "nr_free":
			o, err := strconv.Atoi(parts[4])
			if err != nil || o < 0 || o > mm.MAX_PAGE_ORDER {
				return bad()
			}
			return uintNum(z.NrFree(mm.Order(o))), nil
		case "blocks":
			mt, ok := mm.ParseMigrateType(parts[4])
			if !ok {
				return num{}, fmt.Errorf("%s: no migratetype %q (Unmovable, Movable, Reclaimable, HighAtomic, CMA, Isolate)", name, parts[4])
			}
			return uintNum(z.NrBlocks(mt)), nil
		}
		return bad()
	}
	if len(parts) != 4 {
		return bad()
	}
	switch parts[3] {
	case "free":
		return uintNum(z.FreePages()), nil
	case "min":
		return uintNum(z.WmarkPages(mm.WMARK_MIN)), nil
	case "low":
		return uintNum(z.WmarkPages(mm.WMARK_LOW)), nil
	case "high":
		return uintNum(z.WmarkPages(mm.WMARK_HIGH)), nil
	case "boost":
		return uintNum(z.WatermarkBoost), nil
	case "managed":
		return uintNum(z.ManagedPages), nil
	case "spanned":
		return uintNum(z.SpannedPages), nil
	case "present":
		return uintNum(z.PresentPages), nil
	}
	return bad()
}
