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
// psi_memstall_enter/leave record an interval on the task's CPU; the CPU is
// non-idle while it runs steps and while a task on it is stalled. Per CPU:
//
//	SOME     = union of the memstall intervals of its tasks
//	FULL     = those intervals during which no other task waited for the CPU
//	           (test_state: NR_RUNNING == NR_MEMSTALL_RUNNING)
//	NONIDLE  = union of busy and stalled time
//
// Intervals may end in the simulated future (a step charges its costs up
// front); each update consumes them only up to "now" and keeps the rest.
// Like the kernel's psi_avgs_work, which stops on an idle system and
// catches up with missed periods, the averages are brought up to date
// lazily, whenever time has passed the next 2-second boundary.

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

// psiCPU holds one CPU's pending intervals and accounted totals.
type psiCPU struct {
	pending [3][]psiInterval // SOME, FULL, NONIDLE
	// frontier[s] is the end of the union accounted so far for state s.
	frontier [3]sim.Time
	// times[s] is the total time accounted to state s (per-CPU
	// psi_group_cpu.times), and last[s] its value at the previous
	// aggregation (times_prev).
	times [3]sim.Time
	last  [3]sim.Time
}

// PSI is the system psi_group's memory part.
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
}

func (m *Machine) initPSI() {
	m.PSI.cpus = make([]psiCPU, len(m.cpuNode))
	m.PSI.nextUpd = psiFreq
	m.World.OnStep = func(t *sim.Task, cpu *sim.CPU, start, end sim.Time) {
		if end > start {
			m.PSI.record(cpu.ID, psiNonidle, start, end)
		}
		m.psiMaybeUpdate(start)
	}
}

func (p *PSI) record(cpu, state int, start, end sim.Time) {
	c := &p.cpus[cpu]
	q := c.pending[state]
	// Merge with the last pending interval when they touch.
	if n := len(q); n > 0 && start <= q[n-1].end {
		if end > q[n-1].end {
			q[n-1].end = end
		}
		if start < q[n-1].start {
			q[n-1].start = start
		}
		return
	}
	c.pending[state] = append(q, psiInterval{start, end})
}

// psiMemstallEnter is psi_memstall_enter(): nesting-safe.
func (m *Machine) psiMemstallEnter(t *sim.Task) {
	t.Memstall++
	if t.Memstall == 1 {
		t.MemstallStart = t.Now
	}
}

// psiMemstallLeave is psi_memstall_leave().
func (m *Machine) psiMemstallLeave(t *sim.Task) {
	if t.Memstall == 0 {
		return
	}
	t.Memstall--
	if t.Memstall > 0 || t.Now <= t.MemstallStart {
		return
	}
	cpu := t.CPU
	m.PSI.record(cpu, psiSome, t.MemstallStart, t.Now)
	m.PSI.record(cpu, psiNonidle, t.MemstallStart, t.Now)
	if m.World.CPUs[cpu].Waiters == 0 {
		m.PSI.record(cpu, psiFull, t.MemstallStart, t.Now)
	}
}

// consume accounts the pending intervals of every CPU up to now.
func (p *PSI) consume(now sim.Time) {
	for i := range p.cpus {
		c := &p.cpus[i]
		for s := 0; s < 3; s++ {
			q := c.pending[s]
			k := 0
			for ; k < len(q); k++ {
				iv := q[k]
				if iv.start >= now {
					break
				}
				end := iv.end
				if end > now {
					end = now
				}
				start := iv.start
				if start < c.frontier[s] {
					start = c.frontier[s]
				}
				if end > start {
					c.times[s] += end - start
				}
				if end > c.frontier[s] {
					c.frontier[s] = end
				}
				if iv.end > now {
					q[k].start = now
					break
				}
			}
			c.pending[s] = append(q[:0], q[k:]...)
		}
	}
}

// collectPercpuTimes is collect_percpu_times(): per-CPU deltas weighted
// by each CPU's non-idle jiffies.
func (p *PSI) collectPercpuTimes(now sim.Time) {
	p.consume(now)
	var deltas [2]uint64
	var nonidleTotal uint64
	for i := range p.cpus {
		c := &p.cpus[i]
		var d [3]sim.Time
		for s := 0; s < 3; s++ {
			d[s] = c.times[s] - c.last[s]
			c.last[s] = c.times[s]
		}
		nonidle := uint64(d[psiNonidle]) * psiHZ / uint64(sim.Second) // nsecs_to_jiffies
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
	p.collectPercpuTimes(now)
	p.updateAverages(now)
}

// PSIUpdate brings the averages up to the world's current time, as a read
// of /proc/pressure/memory does (psi_show: collect, then update if due).
func (m *Machine) PSIUpdate() {
	now := m.World.Now()
	m.PSI.collectPercpuTimes(now)
	if now >= m.PSI.nextUpd {
		m.PSI.updateAverages(now)
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
	for full := 0; full < 2; full++ {
		name := "some"
		if full == 1 {
			name = "full"
		}
		a := m.PSI.avg[full]
		total := uint64(m.PSI.Total[full]) / uint64(sim.Microsecond)
		if _, err := fmt.Fprintf(w, "%s avg10=%d.%02d avg60=%d.%02d avg300=%d.%02d total=%d\n", name,
			loadInt(a[0]), loadFrac(a[0]), loadInt(a[1]), loadFrac(a[1]), loadInt(a[2]), loadFrac(a[2]), total); err != nil {
			return err
		}
	}
	return nil
}
