package mm

// trace_record.go keeps what a run leaves for the tools kernel people read
// traces in, the way `trace-cmd record` and `perf sched record` keep what
// the kernel emits while a workload runs:
//
//   - every tracepoint hit that was enabled, not only the ring's latest
//     events (trace.go's ring is /sys/kernel/tracing/trace; this is the
//     trace.dat that trace-cmd record streams the per-CPU buffers into);
//   - per task, the spans of the slow path and of the direct reclaim and
//     direct compaction inside it (__alloc_pages_slowpath,
//     __alloc_pages_direct_reclaim, __alloc_pages_direct_compact), with
//     their GFP mask and order, as a function-graph trace of those three
//     functions would show them;
//   - per CPU, which task ran when (what sched_switch records);
//   - the memory counters at fixed simulated times: each zone's free pages
//     and watermarks and free pageblocks, PSI memory some and full avg10,
//     and the vmstat events whose rates matter (pgalloc_*, pgscan_kswapd,
//     pgscan_direct, compact_migrate_scanned, compact_free_scanned).
//
// The recorder only reads: a run with a recorder attached makes the same
// decisions and prints the same bytes as one without. Engine code calls
// its hooks (Trace.Emit, the slow path's span hooks, psiStep, and the
// world's BeforeEvent); engine/tracefmt turns a Recording into Chrome's
// JSON trace event format (Perfetto UI, chrome://tracing) and into the
// text `trace-cmd report` prints. The recorder writes no file.
//
// # Samples
//
// A sample at time T holds the state after every event with a time
// before T (the sample at 0 is the machine as it booted). The world tells
// the recorder the time of each event before running it
// (sim.World.BeforeEvent); the samples due up to that time are taken
// then, from a state no event at or after them has touched, so work done
// at a sample's time counts in the interval that follows it. The last
// sample, at the end of the recording, is the state then. A run's samples therefore
// depend only on its events, never on how a caller sliced its way through
// them (pagesim run, the page and a test give the same recording). A
// sample equal to the one before it is not stored: the exporters know
// the grid and write the flat stretches back.
//
// # Budget
//
// A recording can grow with simulated time and with the tracepoints a
// script enables (mm_page_alloc fires on every allocation). RecordConfig's
// MaxBytes bounds what it keeps: past it the recorder keeps nothing new,
// counts the tracepoint events it drops per CPU (trace-cmd's "EVENTS
// DROPPED") and says when it stopped (Recording.StoppedAt). Spans and
// CPU runs already open still end.

import (
	"slices"
	"unsafe"

	"github.com/pagesim/pagesim/engine/sim"
)

// RecordConfig configures a Recorder.
type RecordConfig struct {
	// SampleEvery is the interval of the counter samples (default
	// DefaultSampleEvery).
	SampleEvery sim.Time
	// MaxBytes bounds the memory the recording keeps (default
	// DefaultRecordBytes).
	MaxBytes uint64
	// Sequential puts each machine after the one before on one clock (a
	// scenario's phases, booted one after another); otherwise every
	// machine's clock starts at 0 (a script's machines).
	Sequential bool
}

const (
	// DefaultSampleEvery is the default interval of the counter samples:
	// fine enough to show a compaction run or a kswapd wakeup (tens of
	// ms), coarse enough that an hour of simulated time is 360,000
	// samples at most (identical ones are not stored).
	DefaultSampleEvery = 10 * sim.Millisecond
	// DefaultRecordBytes is the default budget of a recording.
	DefaultRecordBytes = 256 << 20
)

// SpanKind names the kernel function a span is.
type SpanKind uint8

const (
	SpanSlowpath SpanKind = iota
	SpanDirectReclaim
	SpanDirectCompact
	NrSpanKinds
)

var spanNames = [NrSpanKinds]string{"__alloc_pages_slowpath", "__alloc_pages_direct_reclaim", "__alloc_pages_direct_compact"}

// String returns the kernel function's name.
func (k SpanKind) String() string {
	if k < NrSpanKinds {
		return spanNames[k]
	}
	return "?"
}

// Span is one call of a slow-path function by a task: from Start to End
// on its machine's clock. A span still running when the recording was
// read has Open set and ends at that time.
type Span struct {
	Kind SpanKind
	// Task is the task's ID (its PID is Task+1, as in the tracepoints);
	// CPU the CPU it began on.
	Task int32
	CPU  int16
	// Order is the requested order; WorkOrder the order the work was
	// done at (reclaim_order, compact_order: the same unless
	// ALLOC_NOFRAGMENT promotes it, 7e8756d7ad22).
	Order, WorkOrder Order
	GFP              GFP
	// Priority is direct compaction's COMPACT_PRIO_*.
	Priority   CompactPriority
	Start, End sim.Time
	// Result: the slow path's page (NilPFN: it failed), direct reclaim's
	// pages reclaimed, direct compaction's CompactResult.
	Result int64
	Open   bool
}

// CPURun is a stretch of time one task ran on one CPU: consecutive steps
// of the same task on the same CPU with no gap between them are one run.
type CPURun struct {
	CPU        int16
	Task       int32
	Start, End sim.Time
}

// ZoneSample is one zone's counters in a sample, in pages.
type ZoneSample struct {
	// Free is NR_FREE_PAGES; Min, Low and High the watermarks with the
	// boost (min_wmark_pages() and the others, as zoneinfo prints them).
	Free           int64
	Min, Low, High uint64
	// FreeBlocks counts free pageblocks: the free chunks of
	// pageblock_order and above, in pageblocks.
	FreeBlocks uint64
}

// Sample is the counters at time T.
type Sample struct {
	T     sim.Time
	Zones []ZoneSample
	// PSISome10 and PSIFull10 are /proc/pressure/memory's avg10, in
	// hundredths of a percent (as psi_show prints them, without the
	// point).
	PSISome10, PSIFull10 int64
	// The vmstat events since boot: PgAlloc sums pgalloc_*.
	PgAlloc, PgScanKswapd, PgScanDirect, CompactMigrateScanned, CompactFreeScanned uint64
}

// RecordedZone names a zone of a recorded machine.
type RecordedZone struct {
	Node int
	Type ZoneType
}

// RecordedMachine is what was recorded of one machine.
type RecordedMachine struct {
	// Name names the machine ("2/4: 34 GB", "machine 1").
	Name string
	// Offset is where the machine's clock starts on the recording's
	// clock; End is how far the machine was recorded (its clock).
	Offset, End sim.Time
	// CPUNode is the node of each CPU; Tasks the name of each task by
	// task ID.
	CPUNode []int
	Tasks   []string
	Zones   []RecordedZone
	// Events are the tracepoint events in the order they were emitted;
	// Dropped counts, per CPU, those the budget did not keep.
	Events  []TraceEvent
	Dropped []uint64
	Spans   []Span
	Runs    []CPURun
	// Samples are the counter samples that differ from the one before,
	// in time order; the grid is SampleEvery apart from 0, and the last
	// sample may be off it, at End.
	Samples     []Sample
	SampleEvery sim.Time
}

// Recording is what a Recorder holds, read at one moment.
type Recording struct {
	Machines []RecordedMachine
	// MaxBytes is the budget; StoppedAt, when Stopped, is the time (on
	// the machine's clock, Machines[StoppedMachine]) the budget ran out.
	MaxBytes uint64
	// Sequential is RecordConfig.Sequential: the machines share a clock.
	Sequential     bool
	Stopped        bool
	StoppedMachine int
	StoppedAt      sim.Time
}

// Recorder records machines (attach them with Config.Recorder). It is
// used by the goroutine that runs the machines.
type Recorder struct {
	cfg      RecordConfig
	machines []*recMachine
	// bytes is what the recording holds (an estimate of its memory);
	// stopped is set once it would pass cfg.MaxBytes.
	bytes     uint64
	stopped   bool
	stoppedM  int
	stoppedAt sim.Time
}

// recMachine is one machine's part of the recording. m is nil once the
// machine is retired (the next one attached); its task names are copied
// then.
type recMachine struct {
	rec    *Recorder
	m      *Machine
	name   string
	offset sim.Time
	end    sim.Time
	tasks  []string
	// zones are the machine's zones with pages (nil once retired), ids
	// their names; cpuNode is the node of each CPU.
	zones   []*Zone
	ids     []RecordedZone
	cpuNode []int

	events  []TraceEvent
	dropped []uint64
	spans   []Span
	// open holds, by task ID, the indices of the task's open spans,
	// innermost last.
	open [][]int32
	runs []CPURun
	// lastRun is, by CPU, the index of the CPU's latest run (-1: none).
	lastRun []int32

	// samples are stored flat: stride values per sample (samplePerZone
	// per zone, then sampleMachine), sampleT their times.
	sampleT []sim.Time
	samples []int64
	stride  int
	next    sim.Time
}

const (
	samplePerZone = 5
	sampleMachine = 7
)

// NewRecorder returns an empty recorder.
func NewRecorder(cfg RecordConfig) *Recorder {
	if cfg.SampleEvery <= 0 {
		cfg.SampleEvery = DefaultSampleEvery
	}
	if cfg.MaxBytes == 0 {
		cfg.MaxBytes = DefaultRecordBytes
	}
	return &Recorder{cfg: cfg}
}

// attach starts recording m, which has just booted; the machine recorded
// before it is retired.
func (r *Recorder) attach(m *Machine) {
	var offset sim.Time
	if n := len(r.machines); n > 0 {
		prev := r.machines[n-1]
		prev.retire()
		if r.cfg.Sequential {
			offset = prev.offset + prev.end
		}
	}
	rm := &recMachine{rec: r, m: m, offset: offset, next: 0}
	for _, z := range m.zones {
		if z.SpannedPages > 0 {
			rm.zones = append(rm.zones, z)
			rm.ids = append(rm.ids, RecordedZone{Node: z.Node.ID, Type: z.Type})
		}
	}
	rm.cpuNode = slices.Clone(m.cpuNode)
	rm.stride = len(rm.zones)*samplePerZone + sampleMachine
	rm.dropped = make([]uint64, len(m.cpuNode))
	rm.lastRun = make([]int32, len(m.cpuNode))
	for i := range rm.lastRun {
		rm.lastRun[i] = -1
	}
	r.machines = append(r.machines, rm)
	m.rec = rm
	m.Trace.rec = rm
	m.World.BeforeEvent = rm.before
}

// Name names the machine attached last ("2/4: 34 GB").
func (r *Recorder) Name(name string) {
	if n := len(r.machines); n > 0 {
		r.machines[n-1].name = name
	}
}

// Bytes is an estimate of the memory the recording holds.
func (r *Recorder) Bytes() uint64 { return r.bytes }

// take reports whether n more bytes may be kept, and counts them.
func (r *Recorder) take(rm *recMachine, n uintptr, at sim.Time) bool {
	if r.stopped {
		return false
	}
	if r.bytes+uint64(n) > r.cfg.MaxBytes {
		r.stopped = true
		r.stoppedM = slices.Index(r.machines, rm)
		r.stoppedAt = at
		return false
	}
	r.bytes += uint64(n)
	return true
}

// retire takes the samples up to the machine's end, copies its task
// names and lets the machine go.
func (rm *recMachine) retire() {
	m := rm.m
	if m == nil {
		return
	}
	rm.end = m.World.Now()
	rm.sampleUpTo(rm.end, true)
	rm.tasks = taskNames(m)
	m.World.BeforeEvent = nil
	m.rec, m.Trace.rec, rm.m, rm.zones = nil, nil, nil, nil
}

func taskNames(m *Machine) []string {
	out := make([]string, len(m.World.Tasks))
	for i, t := range m.World.Tasks {
		out[i] = t.Name
	}
	return out
}

// event keeps a tracepoint event.
func (rm *recMachine) event(e *TraceEvent) {
	if !rm.rec.take(rm, unsafe.Sizeof(*e), e.Time) {
		if c := int(e.CPU); c >= 0 && c < len(rm.dropped) {
			rm.dropped[c]++
		}
		return
	}
	rm.events = append(rm.events, *e)
}

// step records that t ran on cpu from start to end.
func (rm *recMachine) step(t *sim.Task, cpu int, start, end sim.Time) {
	if end <= start {
		return
	}
	if i := rm.lastRun[cpu]; i >= 0 {
		r := &rm.runs[i]
		if r.Task == int32(t.ID) && start <= r.End {
			r.End = max(r.End, end)
			return
		}
	}
	if !rm.rec.take(rm, unsafe.Sizeof(CPURun{}), start) {
		return
	}
	rm.lastRun[cpu] = int32(len(rm.runs))
	rm.runs = append(rm.runs, CPURun{CPU: int16(cpu), Task: int32(t.ID), Start: start, End: end})
}

// spanBegin opens a span of kind k for t.
func (rm *recMachine) spanBegin(t *sim.Task, k SpanKind, gfp GFP, order, workOrder Order, prio CompactPriority) {
	for len(rm.open) <= t.ID {
		rm.open = append(rm.open, nil)
	}
	if !rm.rec.take(rm, unsafe.Sizeof(Span{}), t.Now) {
		rm.open[t.ID] = append(rm.open[t.ID], -1)
		return
	}
	rm.open[t.ID] = append(rm.open[t.ID], int32(len(rm.spans)))
	rm.spans = append(rm.spans, Span{Kind: k, Task: int32(t.ID), CPU: int16(t.CPU), Order: order, WorkOrder: workOrder,
		GFP: gfp, Priority: prio, Start: t.Now, End: t.Now, Result: 0, Open: true})
}

// spanEnd closes t's innermost open span of kind k with its result.
func (rm *recMachine) spanEnd(t *sim.Task, k SpanKind, result int64) {
	if t.ID >= len(rm.open) {
		return
	}
	st := rm.open[t.ID]
	for j := len(st) - 1; j >= 0; j-- {
		i := st[j]
		if i >= 0 && rm.spans[i].Kind != k {
			continue
		}
		if i >= 0 {
			s := &rm.spans[i]
			s.End, s.Result, s.Open = t.Now, result, false
		}
		rm.open[t.ID] = append(st[:j], st[j+1:]...)
		return
	}
}

// before takes the samples due up to an event at time at, before it runs.
func (rm *recMachine) before(at sim.Time) {
	if at >= rm.next {
		rm.sampleUpTo(at, false)
	}
}

// sampleUpTo stores the samples of the grid up to at, and with end set
// one at at itself if it is off the grid.
func (rm *recMachine) sampleUpTo(at sim.Time, end bool) {
	every := rm.rec.cfg.SampleEvery
	var cur []int64
	for rm.next <= at {
		if cur == nil {
			cur = rm.read(nil)
		}
		rm.store(rm.next, cur)
		rm.next += every
	}
	if end && rm.next-every < at {
		if cur == nil {
			cur = rm.read(nil)
		}
		rm.store(at, cur)
	}
}

// store keeps a sample unless it equals the one before.
func (rm *recMachine) store(t sim.Time, v []int64) {
	if n := len(rm.sampleT); n > 0 && slices.Equal(rm.samples[(n-1)*rm.stride:], v) {
		return
	}
	if !rm.rec.take(rm, uintptr(8*(rm.stride+1)), t) {
		return
	}
	rm.sampleT = append(rm.sampleT, t)
	rm.samples = append(rm.samples, v...)
}

// read returns the machine's counters now, appended to dst.
func (rm *recMachine) read(dst []int64) []int64 {
	m := rm.m
	for _, z := range rm.zones {
		var blocks uint64
		for o := PageblockOrder; o < NR_PAGE_ORDERS; o++ {
			blocks += z.freeArea[o].nrFree << (o - PageblockOrder)
		}
		dst = append(dst, z.Stat[NR_FREE_PAGES], int64(z.WmarkPages(WMARK_MIN)), int64(z.WmarkPages(WMARK_LOW)),
			int64(z.WmarkPages(WMARK_HIGH)), int64(blocks))
	}
	var alloc uint64
	for e := PGALLOC_DMA; e <= PGALLOC_MOVABLE; e++ {
		alloc += m.Event(e)
	}
	some, full := m.PSI.avg[psiSome][0], m.PSI.avg[psiFull][0]
	return append(dst, int64(loadInt(some)*100+loadFrac(some)), int64(loadInt(full)*100+loadFrac(full)),
		int64(alloc), int64(m.Event(PGSCAN_KSWAPD)), int64(m.Event(PGSCAN_DIRECT)),
		int64(m.Event(COMPACTMIGRATE_SCANNED)), int64(m.Event(COMPACTFREE_SCANNED)))
}

// Recording returns what the recorder holds now: for the machine still
// running, up to its clock (its open spans end there, and the samples
// due up to it are read from it without being stored). It copies what
// the recorder may change later, so the recording stays as it is.
func (r *Recorder) Recording() *Recording {
	out := &Recording{MaxBytes: r.cfg.MaxBytes, Sequential: r.cfg.Sequential, Stopped: r.stopped, StoppedMachine: r.stoppedM, StoppedAt: r.stoppedAt}
	for _, rm := range r.machines {
		out.Machines = append(out.Machines, rm.recorded())
	}
	return out
}

func (rm *recMachine) recorded() RecordedMachine {
	every := rm.rec.cfg.SampleEvery
	out := RecordedMachine{Name: rm.name, Offset: rm.offset, End: rm.end, Tasks: rm.tasks, SampleEvery: every,
		CPUNode: slices.Clone(rm.cpuNode), Zones: slices.Clone(rm.ids),
		Events: slices.Clip(rm.events), Dropped: slices.Clone(rm.dropped), Runs: slices.Clone(rm.runs), Spans: slices.Clone(rm.spans)}
	sampleT, samples := rm.sampleT, rm.samples
	if m := rm.m; m != nil {
		out.End = m.World.Now()
		out.Tasks = taskNames(m)
		// The samples due up to now, from the state now: the grid
		// points after the last stored one, and now itself.
		sampleT, samples = slices.Clip(sampleT), slices.Clip(samples)
		cur := rm.read(nil)
		last := func() []int64 {
			if n := len(sampleT); n > 0 {
				return samples[(n-1)*rm.stride:]
			}
			return nil
		}
		for t := rm.next; t <= out.End; t += every {
			if !slices.Equal(last(), cur) {
				sampleT, samples = append(sampleT, t), append(samples, cur...)
			}
		}
		if n := len(sampleT); n == 0 || sampleT[n-1] < out.End {
			if !slices.Equal(last(), cur) {
				sampleT, samples = append(sampleT, out.End), append(samples, cur...)
			}
		}
	}
	for i := range out.Spans {
		if s := &out.Spans[i]; s.Open {
			s.End = max(s.Start, out.End)
		}
	}
	nz := len(rm.ids)
	for i, t := range sampleT {
		v := samples[i*rm.stride : (i+1)*rm.stride]
		s := Sample{T: t, Zones: make([]ZoneSample, nz)}
		for j := range s.Zones {
			z := v[j*samplePerZone:]
			s.Zones[j] = ZoneSample{Free: z[0], Min: uint64(z[1]), Low: uint64(z[2]), High: uint64(z[3]), FreeBlocks: uint64(z[4])}
		}
		mv := v[nz*samplePerZone:]
		s.PSISome10, s.PSIFull10 = mv[0], mv[1]
		s.PgAlloc, s.PgScanKswapd, s.PgScanDirect = uint64(mv[2]), uint64(mv[3]), uint64(mv[4])
		s.CompactMigrateScanned, s.CompactFreeScanned = uint64(mv[5]), uint64(mv[6])
		out.Samples = append(out.Samples, s)
	}
	return out
}

// spanBegin opens a span for t if the machine is recorded.
func (m *Machine) spanBegin(t *sim.Task, k SpanKind, gfp GFP, order, workOrder Order, prio CompactPriority) {
	if m.rec != nil {
		m.rec.spanBegin(t, k, gfp, order, workOrder, prio)
	}
}

// spanEnd closes t's span of kind k if the machine is recorded.
func (m *Machine) spanEnd(t *sim.Task, k SpanKind, result int64) {
	if m.rec != nil {
		m.rec.spanEnd(t, k, result)
	}
}
