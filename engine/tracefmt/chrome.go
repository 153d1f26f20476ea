// Package tracefmt writes a recording (mm.Recording) in the formats the
// tools kernel people read traces in already understand:
//
//   - Chrome's JSON trace event format (WriteChrome), which Perfetto UI
//     (ui.perfetto.dev) and chrome://tracing open;
//   - the text `trace-cmd report` prints (WriteReport), so that scripts
//     written against trace-cmd's output parse pagesim's.
//
// Both take the recording and a writer; the package opens no file. The
// same recording gives the same bytes, natively and in the browser.
//
// # The JSON layout
//
// The format is the "JSON Object Format" of the Trace Event Format
// document (Google, 2016): an object whose traceEvents array holds the
// events, timestamps (ts) and durations (dur) in microseconds. pagesim
// writes them with three decimals, so nanoseconds survive. Each recorded
// machine (a scenario phase, a script's machine) becomes three processes:
//
//   - "tasks": one thread per task, its thread ID the task's PID in the
//     tracepoint lines. The slow path, direct reclaim and direct
//     compaction are complete events (ph "X") named after the kernel
//     function, nested as the calls were, with gfp_mask as %pGg prints
//     it, the order and the result in args; every tracepoint is an
//     instant event (ph "i", scope thread) named after it, with its
//     fields (as its TP_printk line prints them) in args and its
//     category the event's system (kmem, compaction, vmscan, oom).
//   - "CPUs": one thread per CPU, whose complete events say which task
//     ran on it when (the view sched_switch gives).
//   - "memory": counter events (ph "C"), one counter per series so that
//     no viewer stacks them: each zone's free pages, its min/low/high
//     watermarks and its free pageblocks, PSI memory some and full
//     avg10, and the rates of pgalloc, pgscan_kswapd, pgscan_direct,
//     compact_migrate_scanned and compact_free_scanned (pages per
//     simulated second over each sample interval).
//
// Thread IDs are unique over the file (Perfetto keys threads by tid), so
// the second machine's tasks are numbered from a higher base. Metadata
// events (ph "M": process and thread names, sort order) come first, then
// every other event in time order. A phase boot and the point where a
// recording ran out of budget are global instant events.
package tracefmt

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/sim"
)

// Meta describes the run a recording is of, for the file's otherData.
type Meta struct {
	// Title names the run ("thp-thisnode upstream, seed 1").
	Title string
	// Command is the pagesim command that reproduces it.
	Command string
}

// ids numbers the processes and threads of one machine.
type ids struct {
	base                 uint64
	memory, tasks, cpus  uint64
	cpuThread0           uint64
	machineName, prefix  string
	offset               sim.Time
	sortMemory, sortTask int
}

// idSpan returns the size of each machine's block of IDs: a power of ten
// above every machine's tasks and CPUs, at least 100000 so that the first
// machine's tasks keep their PIDs and the processes stand apart.
func idSpan(rec *mm.Recording) uint64 {
	need := uint64(0)
	for i := range rec.Machines {
		m := &rec.Machines[i]
		need = max(need, uint64(len(m.Tasks)+len(m.CPUNode)+8))
	}
	span := uint64(100000)
	for span < 2*need {
		span *= 10
	}
	return span
}

func machineIDs(rec *mm.Recording, i int, span uint64) ids {
	m := &rec.Machines[i]
	base := uint64(i) * span
	half := span / 2
	id := ids{base: base, memory: base + half + 1, tasks: base + half + 2, cpus: base + half + 3,
		cpuThread0: base + half + 8, offset: m.Offset}
	id.machineName = m.Name
	if m.Name != "" && len(rec.Machines) > 1 {
		id.prefix = " (" + m.Name + ")"
	}
	return id
}

// taskTid is the thread ID of task (ID) tid's PID.
func (id ids) taskTid(pid int64) uint64 { return id.base + uint64(pid) }

// item is one event of the file, for sorting: the time, the duration (X),
// and where to find it.
type item struct {
	ts, dur sim.Time
	kind    itemKind
	machine int32
	idx     int32
	// val is a counter's value as it is written.
	val string
	// name indexes counterNames for a counter.
	name int32
}

type itemKind uint8

const (
	itemBoot itemKind = iota
	itemSpan
	itemRun
	itemEvent
	itemCounter
	itemStopped
)

// WriteChrome writes rec in Chrome's JSON trace event format.
func WriteChrome(w io.Writer, rec *mm.Recording, meta Meta) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	span := idSpan(rec)
	var machines []ids
	for i := range rec.Machines {
		machines = append(machines, machineIDs(rec, i, span))
	}

	bw.WriteString(`{"displayTimeUnit":"ns","otherData":{`)
	writeKV(bw, "generator", "pagesim")
	bw.WriteByte(',')
	writeKV(bw, "title", meta.Title)
	if meta.Command != "" {
		bw.WriteByte(',')
		writeKV(bw, "command", meta.Command)
	}
	bw.WriteByte(',')
	status := "complete"
	if rec.Stopped {
		status = fmt.Sprintf("stopped at %s s of %s: the recording's budget of %d MiB was reached",
			rec.Machines[rec.StoppedMachine].Offset+rec.StoppedAt, machineLabel(rec, rec.StoppedMachine), rec.MaxBytes>>20)
	}
	writeKV(bw, "recording", status)
	bw.WriteString(`},"traceEvents":[`)
	first := true
	sep := func() {
		if !first {
			bw.WriteString(",\n")
		} else {
			bw.WriteByte('\n')
			first = false
		}
	}

	// Metadata: names and order.
	for i := range rec.Machines {
		m, id := &rec.Machines[i], machines[i]
		for j, p := range []struct {
			pid  uint64
			name string
		}{{id.memory, "memory"}, {id.tasks, "tasks"}, {id.cpus, "CPUs"}} {
			sep()
			fmt.Fprintf(bw, `{"ph":"M","name":"process_name","pid":%d,"tid":%d,"ts":0,"args":{"name":%s}}`, p.pid, p.pid, jsonString(p.name+id.prefix))
			sep()
			fmt.Fprintf(bw, `{"ph":"M","name":"process_sort_index","pid":%d,"tid":%d,"ts":0,"args":{"sort_index":%d}}`, p.pid, p.pid, 3*i+j)
		}
		for t, name := range m.Tasks {
			sep()
			fmt.Fprintf(bw, `{"ph":"M","name":"thread_name","pid":%d,"tid":%d,"ts":0,"args":{"name":%s}}`, id.tasks, id.taskTid(int64(t+1)), jsonString(name))
		}
		if hasIdleEvents(m) {
			sep()
			fmt.Fprintf(bw, `{"ph":"M","name":"thread_name","pid":%d,"tid":%d,"ts":0,"args":{"name":"<idle>"}}`, id.tasks, id.taskTid(0))
		}
		for c, node := range m.CPUNode {
			sep()
			fmt.Fprintf(bw, `{"ph":"M","name":"thread_name","pid":%d,"tid":%d,"ts":0,"args":{"name":"CPU %d (node %d)"}}`, id.cpus, id.cpuThread0+uint64(c), c, node)
			sep()
			fmt.Fprintf(bw, `{"ph":"M","name":"thread_sort_index","pid":%d,"tid":%d,"ts":0,"args":{"sort_index":%d}}`, id.cpus, id.cpuThread0+uint64(c), c)
		}
	}

	// Everything else, in time order.
	var items []item
	var counterNames []string
	counterIndex := map[string]int32{}
	counter := func(name string) int32 {
		if i, ok := counterIndex[name]; ok {
			return i
		}
		i := int32(len(counterNames))
		counterNames = append(counterNames, name)
		counterIndex[name] = i
		return i
	}
	for mi := range rec.Machines {
		m, id := &rec.Machines[mi], machines[mi]
		if len(rec.Machines) > 1 && rec.Machines[mi].Name != "" {
			items = append(items, item{ts: id.offset, kind: itemBoot, machine: int32(mi)})
		}
		for i := range m.Spans {
			s := &m.Spans[i]
			items = append(items, item{ts: id.offset + s.Start, dur: s.End - s.Start, kind: itemSpan, machine: int32(mi), idx: int32(i)})
		}
		for i := range m.Runs {
			r := &m.Runs[i]
			items = append(items, item{ts: id.offset + r.Start, dur: r.End - r.Start, kind: itemRun, machine: int32(mi), idx: int32(i)})
		}
		for i := range m.Events {
			items = append(items, item{ts: id.offset + m.Events[i].Time, kind: itemEvent, machine: int32(mi), idx: int32(i)})
		}
		items = appendCounters(items, m, mi, id.offset, counter)
	}
	if rec.Stopped {
		items = append(items, item{ts: rec.Machines[rec.StoppedMachine].Offset + rec.StoppedAt, kind: itemStopped, machine: int32(rec.StoppedMachine)})
	}
	slices.SortStableFunc(items, func(a, b item) int {
		if a.ts != b.ts {
			return cmpTime(a.ts, b.ts)
		}
		// An enclosing slice before the ones it holds.
		return cmpTime(b.dur, a.dur)
	})

	var buf []byte
	for _, it := range items {
		sep()
		m, id := &rec.Machines[it.machine], machines[it.machine]
		buf = buf[:0]
		switch it.kind {
		case itemBoot:
			buf = fmt.Appendf(buf, `{"ph":"i","s":"g","cat":"pagesim","name":%s,"pid":%d,"tid":%d,"ts":%s}`,
				jsonString("boot "+m.Name), id.memory, id.memory, us(it.ts))
		case itemStopped:
			buf = fmt.Appendf(buf, `{"ph":"i","s":"g","cat":"pagesim","name":"recording stopped: budget of %d MiB reached","pid":%d,"tid":%d,"ts":%s}`,
				rec.MaxBytes>>20, id.memory, id.memory, us(it.ts))
		case itemSpan:
			buf = appendSpan(buf, &m.Spans[it.idx], id, it.ts)
		case itemRun:
			r := &m.Runs[it.idx]
			buf = fmt.Appendf(buf, `{"ph":"X","cat":"sched","name":%s,"pid":%d,"tid":%d,"ts":%s,"dur":%s,"args":{"pid":%d}}`,
				jsonString(taskName(m, r.Task)), id.cpus, id.cpuThread0+uint64(r.CPU), us(it.ts), us(it.dur), r.Task+1)
		case itemEvent:
			buf = appendEvent(buf, &m.Events[it.idx], id, it.ts)
		case itemCounter:
			buf = fmt.Appendf(buf, `{"ph":"C","name":%s,"pid":%d,"tid":%d,"ts":%s,"args":{%s}}`,
				jsonString(counterNames[it.name]), id.memory, id.memory, us(it.ts), it.val)
		}
		bw.Write(buf)
	}
	bw.WriteString("\n]}\n")
	return bw.Flush()
}

func cmpTime(a, b sim.Time) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func machineLabel(rec *mm.Recording, i int) string {
	if n := rec.Machines[i].Name; n != "" {
		return n
	}
	return fmt.Sprintf("machine %d", i+1)
}

func hasIdleEvents(m *mm.RecordedMachine) bool {
	for i := range m.Events {
		if m.Events[i].PID == 0 {
			return true
		}
	}
	return false
}

func taskName(m *mm.RecordedMachine, task int32) string {
	if task >= 0 && int(task) < len(m.Tasks) {
		return m.Tasks[task]
	}
	return "?"
}

func appendSpan(buf []byte, s *mm.Span, id ids, ts sim.Time) []byte {
	buf = fmt.Appendf(buf, `{"ph":"X","cat":"mm","name":"%s","pid":%d,"tid":%d,"ts":%s,"dur":%s,"args":{"gfp_mask":%s,"order":%d`,
		s.Kind, id.tasks, id.taskTid(int64(s.Task)+1), us(ts), us(s.End-s.Start), jsonString(s.GFP.String()), s.Order)
	switch s.Kind {
	case mm.SpanSlowpath:
		if !s.Open {
			if mm.PFN(s.Result) == mm.NilPFN {
				buf = append(buf, `,"page":"NULL"`...)
			} else {
				buf = fmt.Appendf(buf, `,"pfn":"0x%x"`, s.Result)
			}
		}
	case mm.SpanDirectReclaim:
		buf = fmt.Appendf(buf, `,"reclaim_order":%d`, s.WorkOrder)
		if !s.Open {
			buf = fmt.Appendf(buf, `,"progress":%d`, s.Result)
		}
	case mm.SpanDirectCompact:
		buf = fmt.Appendf(buf, `,"compact_order":%d,"priority":"%s"`, s.WorkOrder, s.Priority)
		if !s.Open {
			buf = fmt.Appendf(buf, `,"result":"%s"`, mm.CompactResult(s.Result).Name())
		}
	}
	buf = fmt.Appendf(buf, `,"cpu":%d`, s.CPU)
	if s.Open {
		buf = append(buf, `,"unfinished":true`...)
	}
	return append(buf, "}}"...)
}

func appendEvent(buf []byte, e *mm.TraceEvent, id ids, ts sim.Time) []byte {
	buf = fmt.Appendf(buf, `{"ph":"i","s":"t","cat":"%s","name":"%s","pid":%d,"tid":%d,"ts":%s,"args":{"cpu":%d`,
		e.System(), e.Name(), id.tasks, id.taskTid(int64(e.PID)), us(ts), e.CPU)
	for _, f := range Fields(e.Fields()) {
		buf = append(buf, ',')
		buf = append(buf, jsonString(f.Name)...)
		buf = append(buf, ':')
		if isInt(f.Value) {
			buf = append(buf, f.Value...)
		} else {
			buf = append(buf, jsonString(f.Value)...)
		}
	}
	return append(buf, "}}"...)
}

// appendCounters adds the counter events of machine m: each series at
// its first sample and wherever it changes, the rates over each sample
// interval.
func appendCounters(items []item, m *mm.RecordedMachine, mi int, offset sim.Time, counter func(string) int32) []item {
	if len(m.Samples) == 0 {
		return items
	}
	type series struct {
		name int32
		key  string
		last string
	}
	var zs [][5]series
	for _, z := range m.Zones {
		p := fmt.Sprintf("Node %d %s ", z.Node, z.Type)
		zs = append(zs, [5]series{
			{name: counter(p + "free"), key: "pages"},
			{name: counter(p + "wmark min"), key: "pages"},
			{name: counter(p + "wmark low"), key: "pages"},
			{name: counter(p + "wmark high"), key: "pages"},
			{name: counter(p + "free pageblocks"), key: "count"},
		})
	}
	psi := [2]series{{name: counter("memory some avg10"), key: "%"}, {name: counter("memory full avg10"), key: "%"}}
	rateNames := [5]string{"pgalloc", "pgscan_kswapd", "pgscan_direct", "compact_migrate_scanned", "compact_free_scanned"}
	var rates [5]series
	for i, n := range rateNames {
		rates[i] = series{name: counter(n), key: "pages/s"}
	}
	emit := func(s *series, t sim.Time, v string) {
		if v == s.last {
			return
		}
		s.last = v
		items = append(items, item{ts: offset + t, kind: itemCounter, machine: int32(mi), name: s.name, val: `"` + s.key + `":` + v})
	}
	cums := func(s *mm.Sample) [5]uint64 {
		return [5]uint64{s.PgAlloc, s.PgScanKswapd, s.PgScanDirect, s.CompactMigrateScanned, s.CompactFreeScanned}
	}
	every := m.SampleEvery
	for i := range m.Samples {
		s := &m.Samples[i]
		for j := range s.Zones {
			z := &s.Zones[j]
			emit(&zs[j][0], s.T, strconv.FormatInt(z.Free, 10))
			emit(&zs[j][1], s.T, strconv.FormatUint(z.Min, 10))
			emit(&zs[j][2], s.T, strconv.FormatUint(z.Low, 10))
			emit(&zs[j][3], s.T, strconv.FormatUint(z.High, 10))
			emit(&zs[j][4], s.T, strconv.FormatUint(z.FreeBlocks, 10))
		}
		emit(&psi[0], s.T, hundredths(s.PSISome10))
		emit(&psi[1], s.T, hundredths(s.PSIFull10))
		if i == 0 {
			continue
		}
		// The counters held the previous sample's values on every grid
		// point up to the one before s (identical samples are not
		// stored): the rate is 0 from the previous sample to there,
		// then the change over the last interval.
		prev := &m.Samples[i-1]
		from := max(prev.T, gridBefore(s.T, every))
		a, b := cums(prev), cums(s)
		for k := range rates {
			if from > prev.T {
				emit(&rates[k], prev.T, "0")
			}
			emit(&rates[k], from, rate(b[k]-a[k], s.T-from))
		}
	}
	// The last interval's rate holds until the end; close it there.
	if last := m.Samples[len(m.Samples)-1].T; m.End > last {
		for k := range rates {
			emit(&rates[k], last, "0")
		}
	}
	return items
}

// gridBefore is the last sample time of the grid strictly before t.
func gridBefore(t, every sim.Time) sim.Time {
	if t <= 0 {
		return 0
	}
	return (t - 1) / every * every
}

// rate is n per simulated second over d.
func rate(n uint64, d sim.Time) string {
	if d <= 0 || n == 0 {
		return "0"
	}
	return strconv.FormatFloat(float64(n)*float64(sim.Second)/float64(d), 'f', -1, 64)
}

// hundredths prints v/100 with two decimals, as psi_show does.
func hundredths(v int64) string {
	return fmt.Sprintf("%d.%02d", v/100, v%100)
}

// us prints a time in microseconds with nanoseconds as decimals.
func us(t sim.Time) string {
	neg := ""
	if t < 0 {
		neg, t = "-", -t
	}
	return fmt.Sprintf("%s%d.%03d", neg, int64(t)/1000, int64(t)%1000)
}

func writeKV(bw *bufio.Writer, k, v string) {
	bw.WriteString(jsonString(k))
	bw.WriteByte(':')
	bw.WriteString(jsonString(v))
}

// jsonString quotes s as a JSON string.
func jsonString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r < 0x20:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func isInt(s string) bool {
	if s == "" || s == "-" {
		return false
	}
	if s[0] == '-' {
		s = s[1:]
	}
	if len(s) > 1 && s[0] == '0' {
		return false // JSON numbers have no leading zero
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(s) <= 18
}

// Field is one NAME=VALUE of a tracepoint's line.
type Field struct{ Name, Value string }

// Fields splits a tracepoint's TP_printk text into its NAME=VALUE
// fields: a value runs to the next blank, or to its closing parenthesis
// when it opens one ("range=(0x200 ~ 0x400)"); a comma that ends a value
// separates it from the next. A word without "=" is kept with an empty
// name.
func Fields(text string) []Field {
	var out []Field
	i := 0
	for i < len(text) {
		for i < len(text) && text[i] == ' ' {
			i++
		}
		if i == len(text) {
			break
		}
		start := i
		for i < len(text) && text[i] != '=' && text[i] != ' ' {
			i++
		}
		if i == len(text) || text[i] == ' ' {
			out = append(out, Field{Value: strings.TrimSuffix(text[start:i], ",")})
			continue
		}
		name := text[start:i]
		i++
		vs := i
		if i < len(text) && text[i] == '(' {
			depth := 0
			for i < len(text) {
				if text[i] == '(' {
					depth++
				} else if text[i] == ')' {
					depth--
					if depth == 0 {
						i++
						break
					}
				}
				i++
			}
		} else {
			for i < len(text) && text[i] != ' ' {
				i++
			}
		}
		out = append(out, Field{Name: name, Value: strings.TrimSuffix(text[vs:i], ",")})
	}
	return out
}
