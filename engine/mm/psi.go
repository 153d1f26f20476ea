package mm

// psi.go models kernel/sched/psi.c for the memory resource at system level:
// who is in a memory stall (psi_memstall_enter/leave around direct reclaim,
// direct compaction, kswapd's balance_pgdat, kcompactd's work and thrashing
// refault waits), the per-CPU SOME/FULL/NONIDLE times, their aggregation
// over CPUs weighted by each CPU's non-idle time (collect_percpu_times), the
// 2-second averaging into avg10/avg60/avg300 with the kernel's fixed-point
// exponential decay (update_averages, calc_avgs), and /proc/pressure/memory.
//
// # Model
//
// A task's step runs on one CPU from its start to its end (package sim).
// psi_memstall_enter/leave delimit a stall on the task's CPU; the CPU is
// non-idle while it runs steps and while a task on it is stalled. Per CPU:
//
//	SOME     = union of the memstall intervals of its tasks
//	FULL     = SOME minus the time the CPU ran a task that was not stalled
//	NONIDLE  = union of busy and stalled time
//
// FULL follows psi_group_change()/test_states(): PSI_MEM_FULL holds while
// every runnable task is a stalled one (NR_RUNNING == NR_MEMSTALL_RUNNING,
// so also while a stalled task sleeps on an idle CPU) and, whatever waits
// in the run queue, while the task on the CPU is itself in_memstall
// ("nothing productive could run even if it were runnable"). So a
// reclaimer with others queued behind it is FULL, and a stalled task
// waiting while an unstalled one runs is SOME only. Each CPU keeps the
// intervals in which it ran unstalled work (a step's time outside its
// task's stalls) until they are accounted.
//
// Intervals may end in the simulated future (a step charges its costs up
// front, and a stall may sleep inside one step while other tasks use the
// CPU); each fold consumes them only up to "now", when every step that
// began before now is known, and keeps the rest. The kernel adds state
// time at every task state change (psi_group_change -> record_times); the
// model folds every CPU's intervals into its state times whenever one CPU
// holds more than psiFoldAt of them, so memory stays bounded however many
// steps a 2-second period holds, and the totals are the same as if it
// folded only at the averages. A stall still open is accounted up to now
// at each fold, as the kernel's state times grow while a task stalls. A
// stall that spans steps (an allocation that yields at cond_resched) is
// charged to the CPU of each step it runs and, between steps, to the CPU
// it last ran on. Like the kernel's psi_avgs_work, which stops on an idle
// system and catches up with missed periods, the averages are brought up
// to date lazily, whenever time has passed the next 2-second boundary.

import (
	"fmt"
	"io"

	"github.com/pagesim/pagesim/engine/sim"
)

// PSI constants (include/linux/sched/loadavg.h, kernel/sched/psi.c).
const (
	psiHZ      = 1000                                                 // CONFIG_HZ (jiffies per second)
	psiFreq    = sim.Time(2*psiHZ+1) * sim.Millisecond * 1000 / psiHZ // PSI_FREQ: 2*HZ+1 jiffies
	fshift     = 11
	fixed1     = 1 << fshift
	exp10s     = 1677
	exp60s     = 1981
	exp300s    = 2034
	psiSome    = 0
	psiFull    = 1
	psiNonidle = 2
)

type psiInterval struct {
	start, end sim.Time
}

// psiStalled is a task in a memory stall.
type psiStalled struct {
	t  *sim.Task
	ts *taskStruct
}

// psiCPU holds one CPU's pending intervals and accounted totals.
type psiCPU struct {
	// pending holds, sorted and disjoint, the SOME and NONIDLE intervals
	// not yet accounted (pending[psiFull] is unused: FULL is derived from
	// SOME when it is accounted).
	pending [3][]psiInterval
	// unstalled holds, sorted and disjoint, the intervals in which this
	// CPU ran a task that was not in a memory stall, from the SOME
	// frontier on.
	unstalled []psiInterval
	// frontier[s] is the end of the union accounted so far for state s.
	frontier [3]sim.Time
	// times[s] is the total time accounted to state s (per-CPU
	// psi_group_cpu.times), and last[s] its value at the previous
	// aggregation (times_prev).
	times [3]sim.Time
	last  [3]sim.Time
}

// PSI is one resource's part of the system psi_group: memory (Machine.PSI)
// or I/O (Machine.PSIIO, whose stalls are io_schedule() sleeps and whose
// non-idle weights come from the memory part).
type PSI struct {
	cpus []psiCPU
	// Total is total[PSI_AVGS] for SOME and FULL, in ns.
	Total [2]sim.Time
	// avg[s][w] are the fixed-point avg10/avg60/avg300.
	avg       [2][3]uint64
	avgTotal  [2]sim.Time
	lastUpd   sim.Time
	nextUpd   sim.Time
	collected sim.Time
	// stalled lists the tasks with an open psi_memstall_enter().
	stalled []psiStalled
	// foldAt is psiFoldAt (tests raise it to compare).
	foldAt int
	// stepStalls are the stalls that ended during the step now running
	// (steps run one at a time), for OnStep to split the step's time.
	stepStalls []psiInterval
}

func (m *Machine) initPSI() {
	for _, p := range []*PSI{&m.PSI, &m.PSIIO} {
		p.cpus = make([]psiCPU, len(m.cpuNode))
		p.nextUpd = psiFreq
		p.foldAt = psiFoldAt
	}
	m.World.Observer = psiObserver{m}
}

// psiObserver accounts every step of the machine's world (psiStep).
type psiObserver struct{ m *Machine }

// TaskStepped is psiStep.
func (p psiObserver) TaskStepped(t *sim.Task, cpu *sim.CPU, start, end sim.Time) {
	p.m.psiStep(t, cpu, start, end)
}

// psiStep accounts one task step [start, end) on cpu: non-idle time, and
// the parts in which the task was not stalled as unstalled running time.
// A stall still open at the end of the step is recorded on cpu up to end.
// Then, as the kernel's psi_group_change() adds state time at every task
// state change, the CPU's intervals are folded into its state times up
// to start once they number more than psiFoldAt, so they stay bounded
// between averaging periods however many steps a period holds.
func (m *Machine) psiStep(t *sim.Task, cpu *sim.CPU, start, end sim.Time) {
	p := &m.PSI
	ts := m.current(t)
	if end > start {
		p.record(cpu.ID, psiNonidle, start, end)
		// The stalled parts of the step: stalls that ended in it,
		// then the one still open.
		stalls := p.stepStalls
		if ts.memstall > 0 {
			stalls = append(stalls, psiInterval{ts.memstallStart, end})
		}
		from := start
		for _, s := range stalls {
			if s.end <= from {
				continue
			}
			if s.start > from {
				p.addUnstalled(cpu.ID, from, min(s.start, end))
			}
			from = max(from, s.end)
			if from >= end {
				break
			}
		}
		if from < end {
			p.addUnstalled(cpu.ID, from, end)
		}
	}
	if ts.memstall > 0 {
		p.recordOpenStall(ts, start)
		if end > ts.memstallRecorded {
			p.recordStall(cpu.ID, ts.memstallRecorded, end)
			ts.memstallRecorded = end
		}
		ts.memstallCPU = cpu.ID
	}
	p.stepStalls = p.stepStalls[:0]
	if c := &p.cpus[cpu.ID]; len(c.pending[psiSome])+len(c.pending[psiNonidle])+len(c.unstalled) > p.foldAt {
		p.consume(start)
	}
	// I/O pressure: any task running on the CPU keeps it from PSI_IO_FULL
	// (NR_IOWAIT && !NR_RUNNING), so the whole step is "unstalled" there.
	io := &m.PSIIO
	if end > start {
		io.addUnstalled(cpu.ID, start, end)
	}
	if c := &io.cpus[cpu.ID]; len(c.pending[psiSome])+len(c.unstalled) > io.foldAt {
		io.consume(start)
	}
	m.psiMaybeUpdate(start)
	if m.rec != nil {
		m.rec.step(t, cpu.ID, start, end)
	}
}

// psiIOWait records that t sleeps in io_schedule() on its CPU over
// [start, end): PSI_IO_SOME (tasks[NR_IOWAIT]) and, as the kernel's
// PSI_NONIDLE counts iowait tasks for every resource, non-idle time on the
// CPU, which weighs the CPU in the memory averages too.
func (m *Machine) psiIOWait(t *sim.Task, start, end sim.Time) {
	if end > start {
		m.PSIIO.record(t.CPU, psiSome, start, end)
		m.PSI.record(t.CPU, psiNonidle, start, end)
	}
}

// psiFoldAt is how many pending intervals a CPU may hold before every
// CPU's are folded into their state times. (Folding all CPUs at once keeps
// every CPU's frontier at the same time, so the totals do not depend on
// when the folds happen.)
const psiFoldAt = 64

// insertInterval adds [start, end) to a sorted list of disjoint intervals,
// merging what it touches. Additions come mostly near the end.
func insertInterval(q []psiInterval, start, end sim.Time) []psiInterval {
	i := len(q)
	for i > 0 && q[i-1].end >= start {
		i--
	}
	j := i
	for j < len(q) && q[j].start <= end {
		start = min(start, q[j].start)
		end = max(end, q[j].end)
		j++
	}
	if i == j {
		q = append(q, psiInterval{})
		copy(q[i+1:], q[i:])
		q[i] = psiInterval{start, end}
		return q
	}
	q[i] = psiInterval{start, end}
	return append(q[:i+1], q[j:]...)
}

func (p *PSI) record(cpu, state int, start, end sim.Time) {
	if end > start {
		c := &p.cpus[cpu]
		c.pending[state] = insertInterval(c.pending[state], start, end)
	}
}

// recordOpenStall records ts's open stall up to until on the CPU the
// stall was last recorded on: where the task waited, queued or asleep,
// since its last step there.
func (p *PSI) recordOpenStall(ts *taskStruct, until sim.Time) {
	if until > ts.memstallRecorded {
		p.recordStall(ts.memstallCPU, ts.memstallRecorded, until)
		ts.memstallRecorded = until
	}
}

// recordStall records [start, end) of a memory stall on cpu: SOME, and
// NONIDLE since a stalled task keeps its CPU non-idle.
func (p *PSI) recordStall(cpu int, start, end sim.Time) {
	p.record(cpu, psiSome, start, end)
	p.record(cpu, psiNonidle, start, end)
}

func (p *PSI) addUnstalled(cpu int, start, end sim.Time) {
	c := &p.cpus[cpu]
	start = max(start, c.frontier[psiSome])
	if end > start {
		c.unstalled = insertInterval(c.unstalled, start, end)
	}
}

// psiMemstallEnter is psi_memstall_enter(): nesting-safe.
func (m *Machine) psiMemstallEnter(t *sim.Task) {
	ts := m.current(t)
	ts.memstall++
	if ts.memstall == 1 {
		ts.memstallStart, ts.memstallRecorded, ts.memstallCPU = t.Now, t.Now, t.CPU
		m.PSI.stalled = append(m.PSI.stalled, psiStalled{t, ts})
	}
}

// psiMemstallLeave is psi_memstall_leave(): the stall [memstallStart, Now)
// is SOME and NONIDLE on the task's CPU (what psiStep and consume have
// not recorded of it yet).
func (m *Machine) psiMemstallLeave(t *sim.Task) {
	ts := m.current(t)
	if ts.memstall == 0 {
		return
	}
	ts.memstall--
	if ts.memstall > 0 {
		return
	}
	p := &m.PSI
	for i, s := range p.stalled {
		if s.t == t {
			p.stalled = append(p.stalled[:i], p.stalled[i+1:]...)
			break
		}
	}
	start, end := ts.memstallStart, t.Now
	if end <= start {
		return
	}
	p.stepStalls = append(p.stepStalls, psiInterval{start, end})
	// Up to this step on the CPU the stall was on, then on this one.
	p.recordOpenStall(ts, m.World.Now())
	if end > ts.memstallRecorded {
		p.recordStall(t.CPU, ts.memstallRecorded, end)
	}
}

// overlap returns how much of [start, end) the sorted intervals q cover,
// scanning from *k on (callers move through [start, end) in order).
func overlap(q []psiInterval, k *int, start, end sim.Time) sim.Time {
	var d sim.Time
	for *k < len(q) && q[*k].end <= start {
		*k++
	}
	for i := *k; i < len(q) && q[i].start < end; i++ {
		if lo, hi := max(start, q[i].start), min(end, q[i].end); hi > lo {
			d += hi - lo
		}
	}
	return d
}

// consume accounts the pending intervals of every CPU up to now (every
// step that starts before now has run): open stalls first join SOME and
// NONIDLE up to now; FULL is the accounted SOME time the CPU did not spend
// running unstalled work.
func (p *PSI) consume(now sim.Time) {
	for _, s := range p.stalled {
		p.recordOpenStall(s.ts, now)
	}
	for i := range p.cpus {
		p.consumeCPU(i, now)
	}
}

// consumeCPU accounts CPU cpu's pending intervals up to now.
func (p *PSI) consumeCPU(cpu int, now sim.Time) {
	c := &p.cpus[cpu]
	for _, s := range [2]int{psiSome, psiNonidle} {
		q := c.pending[s]
		k, u := 0, 0
		for ; k < len(q); k++ {
			iv := q[k]
			if iv.start >= now {
				break
			}
			start, end := max(iv.start, c.frontier[s]), min(iv.end, now)
			if end > start {
				c.times[s] += end - start
				if s == psiSome {
					c.times[psiFull] += end - start - overlap(c.unstalled, &u, start, end)
				}
				c.frontier[s] = end
			}
			if iv.end > now {
				q[k].start = now
				break
			}
		}
		c.pending[s] = append(q[:0], q[k:]...)
	}
	// Unstalled time before now can no longer meet a stall.
	q := c.unstalled
	k := 0
	for k < len(q) && q[k].end <= now {
		k++
	}
	c.unstalled = append(q[:0], q[k:]...)
}

// collectPercpuTimes is collect_percpu_times(): per-CPU deltas weighted
// by each CPU's non-idle jiffies. PSI_NONIDLE is one state of the group
// for every resource: the memory part tracks it (busy, memory stalls and
// I/O waits), and the I/O part is weighted with the jiffies the memory
// part returns (weights) instead of its own.
func (p *PSI) collectPercpuTimes(now sim.Time, weights []uint64) []uint64 {
	p.consume(now)
	var deltas [2]uint64
	var nonidleTotal uint64
	var out []uint64
	if weights == nil {
		out = make([]uint64, len(p.cpus))
	}
	for i := range p.cpus {
		c := &p.cpus[i]
		var d [3]sim.Time
		for s := 0; s < 3; s++ {
			d[s] = c.times[s] - c.last[s]
			c.last[s] = c.times[s]
		}
		nonidle := uint64(d[psiNonidle]) * psiHZ / uint64(sim.Second) // nsecs_to_jiffies
		if weights != nil {
			nonidle = weights[i]
		} else {
			out[i] = nonidle
		}
		nonidleTotal += nonidle
		deltas[psiSome] += uint64(d[psiSome]) * nonidle
		deltas[psiFull] += uint64(d[psiFull]) * nonidle
	}
	if nonidleTotal == 0 {
		nonidleTotal = 1
	}
	for s := 0; s < 2; s++ {
		p.Total[s] += sim.Time(deltas[s] / nonidleTotal)
	}
	p.collected = now
	return out
}

// psiCollect collects both resources' per-CPU times.
func (m *Machine) psiCollect(now sim.Time) {
	w := m.PSI.collectPercpuTimes(now, nil)
	m.PSIIO.collectPercpuTimes(now, w)
}

// calcLoad is calc_load().
func calcLoad(load, exp, active uint64) uint64 {
	newload := load*exp + active*(fixed1-exp)
	if active >= load {
		newload += fixed1 - 1
	}
	return newload / fixed1
}

// calcLoadN is calc_load_n() for n periods of zero activity: one
// calc_load() with exp^n from fixed_power_int(), not n calc_load() steps
// (their truncations differ).
func calcLoadN(load, exp uint64, n uint64) uint64 {
	return calcLoad(load, fixedPowerInt(exp, fshift, n), 0)
}

// fixedPowerInt is fixed_power_int(): x^n in fixed point with frac bits,
// rounding every product.
func fixedPowerInt(x uint64, frac uint, n uint64) uint64 {
	result := uint64(1) << frac
	for n != 0 {
		if n&1 != 0 {
			result = (result*x + 1<<(frac-1)) >> frac
		}
		n >>= 1
		if n != 0 {
			x = (x*x + 1<<(frac-1)) >> frac
		}
	}
	return result
}

// updateAverages is update_averages().
func (p *PSI) updateAverages(now sim.Time) {
	expires := p.nextUpd
	var missed uint64
	if now-expires >= psiFreq {
		missed = uint64((now - expires) / psiFreq)
	}
	p.nextUpd = expires + sim.Time(1+missed)*psiFreq
	period := now - (p.lastUpd + sim.Time(missed)*psiFreq)
	p.lastUpd = now
	for s := 0; s < 2; s++ {
		sample := p.Total[s] - p.avgTotal[s]
		if sample > period {
			sample = period
		}
		p.avgTotal[s] += sample
		a := &p.avg[s]
		if missed > 0 {
			a[0] = calcLoadN(a[0], exp10s, missed)
			a[1] = calcLoadN(a[1], exp60s, missed)
			a[2] = calcLoadN(a[2], exp300s, missed)
		}
		if period <= 0 {
			continue
		}
		pct := uint64(sample) * 100 / uint64(period) * fixed1
		a[0] = calcLoad(a[0], exp10s, pct)
		a[1] = calcLoad(a[1], exp60s, pct)
		a[2] = calcLoad(a[2], exp300s, pct)
	}
}

// psiMaybeUpdate runs psi_avgs_work if a period boundary has passed.
func (m *Machine) psiMaybeUpdate(now sim.Time) {
	p := &m.PSI
	if now < p.nextUpd {
		return
	}
	m.psiCollect(now)
	p.updateAverages(now)
	m.PSIIO.updateAverages(now)
}

// PSIUpdate brings the averages up to the world's current time, as a read
// of /proc/pressure/memory does (psi_show: collect, then update if due).
func (m *Machine) PSIUpdate() {
	now := m.World.Now()
	m.psiCollect(now)
	if now >= m.PSI.nextUpd {
		m.PSI.updateAverages(now)
		m.PSIIO.updateAverages(now)
	}
}

// PSIAvg returns some (full=false) or full avg10/avg60/avg300 as
// percentages with two decimals, as /proc/pressure/memory prints them.
func (m *Machine) PSIAvg(full bool) [3]float64 {
	s := psiSome
	if full {
		s = psiFull
	}
	var out [3]float64
	for w := 0; w < 3; w++ {
		v := m.PSI.avg[s][w]
		out[w] = float64(loadInt(v)) + float64(loadFrac(v))/100
	}
	return out
}

func loadInt(x uint64) uint64  { return x >> fshift }
func loadFrac(x uint64) uint64 { return loadInt((x & (fixed1 - 1)) * 100) }

// WritePressure writes /proc/pressure/memory (psi_show).
func (m *Machine) WritePressure(w io.Writer) error {
	m.PSIUpdate()
	return m.PSI.write(w)
}

// WritePressureIO writes /proc/pressure/io (psi_show for PSI_IO).
func (m *Machine) WritePressureIO(w io.Writer) error {
	m.PSIUpdate()
	return m.PSIIO.write(w)
}

func (p *PSI) write(w io.Writer) error {
	for full := 0; full < 2; full++ {
		name := "some"
		if full == 1 {
			name = "full"
		}
		a := p.avg[full]
		total := uint64(p.Total[full]) / uint64(sim.Microsecond)
		if _, err := fmt.Fprintf(w, "%s avg10=%d.%02d avg60=%d.%02d avg300=%d.%02d total=%d\n", name,
			loadInt(a[0]), loadFrac(a[0]), loadInt(a[1]), loadFrac(a[1]), loadInt(a[2]), loadFrac(a[2]), total); err != nil {
			return err
		}
	}
	return nil
}
