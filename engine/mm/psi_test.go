package mm

// Behaviour tests for PSI: which paths are memory stalls, how the averages
// rise and decay (checked against an independent transcription of the
// kernel's fixed-point arithmetic), and the /proc/pressure/memory format.

import (
	"fmt"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/pagesim/pagesim/engine/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ---------------------------------------------------------------------------
// The kernel's arithmetic, transcribed from kernel/sched/psi.c and
// include/linux/sched/loadavg.h (calc_avgs, calc_load, LOAD_INT and
// LOAD_FRAC) without reference to psi.go.

const (
	refFShift  = 11
	refFixed1  = 1 << refFShift
	refPeriod  = uint64(2*1000+1) * 1000000 // PSI_FREQ = 2*HZ+1 jiffies at HZ=1000, in ns
	refExp10s  = 1677
	refExp60s  = 1981
	refExp300s = 2034
)

// refCalcLoad is calc_load().
func refCalcLoad(load, exp, active uint64) uint64 {
	newload := load*exp + active*(refFixed1-exp)
	if active >= load {
		newload += refFixed1 - 1
	}
	return newload / refFixed1
}

// refFixedPowerInt is fixed_power_int(): x^n in fixed point with rounding.
func refFixedPowerInt(x uint64, fracBits uint, n uint64) uint64 {
	result := uint64(1) << fracBits
	if n != 0 {
		for {
			if n&1 != 0 {
				result = (result*x + 1<<(fracBits-1)) >> fracBits
			}
			n >>= 1
			if n == 0 {
				break
			}
			x = (x*x + 1<<(fracBits-1)) >> fracBits
		}
	}
	return result
}

// refCalcLoadN is calc_load_n().
func refCalcLoadN(load, exp, active, n uint64) uint64 {
	return refCalcLoad(load, refFixedPowerInt(exp, refFShift, n), active)
}

// refAvgs is one state's averages of a psi_group.
type refAvgs struct {
	avg      [3]uint64
	avgTotal uint64
}

// refGroup is the averaging part of struct psi_group for SOME and FULL.
type refGroup struct {
	states               [2]refAvgs
	lastUpdate, nextUpdt uint64
}

func newRefGroup() *refGroup { return &refGroup{lastUpdate: 0, nextUpdt: refPeriod} }

// update is psi_show's "if now >= avg_next_update: update_averages" with
// the current totals (ns) of SOME and FULL.
func (g *refGroup) update(now uint64, totals [2]uint64) {
	if now < g.nextUpdt {
		return
	}
	var missed uint64
	expires := g.nextUpdt
	if now-expires >= refPeriod {
		missed = (now - expires) / refPeriod
	}
	g.nextUpdt = expires + (1+missed)*refPeriod
	period := now - (g.lastUpdate + missed*refPeriod)
	g.lastUpdate = now
	for s := range g.states {
		st := &g.states[s]
		sample := totals[s] - st.avgTotal
		if sample > period {
			sample = period
		}
		st.avgTotal += sample
		if missed > 0 {
			st.avg[0] = refCalcLoadN(st.avg[0], refExp10s, 0, missed)
			st.avg[1] = refCalcLoadN(st.avg[1], refExp60s, 0, missed)
			st.avg[2] = refCalcLoadN(st.avg[2], refExp300s, 0, missed)
		}
		pct := sample * 100 / period * refFixed1
		st.avg[0] = refCalcLoad(st.avg[0], refExp10s, pct)
		st.avg[1] = refCalcLoad(st.avg[1], refExp60s, pct)
		st.avg[2] = refCalcLoad(st.avg[2], refExp300s, pct)
	}
}

// text is psi_show()'s output for the memory resource.
func (g *refGroup) text(totals [2]uint64) string {
	li := func(x uint64) uint64 { return x >> refFShift }
	lf := func(x uint64) uint64 { return li((x & (refFixed1 - 1)) * 100) }
	var b strings.Builder
	for full, name := range []string{"some", "full"} {
		a := g.states[full].avg
		fmt.Fprintf(&b, "%s avg10=%d.%02d avg60=%d.%02d avg300=%d.%02d total=%d\n", name,
			li(a[0]), lf(a[0]), li(a[1]), lf(a[1]), li(a[2]), lf(a[2]), totals[full]/1000)
	}
	return b.String()
}

func pressure(t testing.TB, m *Machine) string {
	t.Helper()
	var b strings.Builder
	require.NoError(t, m.WritePressure(&b))
	return b.String()
}

var pressureLine = regexp.MustCompile(`^(some|full) avg10=\d+\.\d\d avg60=\d+\.\d\d avg300=\d+\.\d\d total=\d+$`)

func TestPressureFileHasTheKernelsTwoLines(t *testing.T) {
	m := newQuietMachine(t, 8192, 1, 2)
	assert.Equal(t, "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n", pressure(t, m))
	// Under a stall the lines keep the format.
	spawn(m, "stall", 1, 0, func(t *sim.Task) sim.Time {
		m.psiMemstallEnter(t)
		t.Charge(3 * sim.Second)
		m.psiMemstallLeave(t)
		return sim.Exit
	})
	runWorld(t, m, 5*sim.Second)
	text := pressure(t, m)
	require.True(t, strings.HasSuffix(text, "\n"))
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	require.Len(t, lines, 2)
	assert.True(t, strings.HasPrefix(lines[0], "some "), lines[0])
	assert.True(t, strings.HasPrefix(lines[1], "full "), lines[1])
	for _, l := range lines {
		assert.Regexp(t, pressureLine, l)
	}
	assert.NotEqual(t, "some avg10=0.00", lines[0][:15], "a 3 s stall shows in avg10")
}

// TestPSIAveragesRiseAndDecayAsTheKernelComputes puts one CPU in a memory
// stall for exactly one averaging period (2.001 s), then leaves the machine
// idle, and reads /proc/pressure/memory at chosen times: on period
// boundaries, and after long idle gaps where update_averages() must fold
// missed periods with calc_load_n().
func TestPSIAveragesRiseAndDecayAsTheKernelComputes(t *testing.T) {
	period := sim.Time(refPeriod)
	m := newQuietMachine(t, 8192, 1, 2)
	// CPU 1 is stalled for [0, period); CPU 0 only runs kcompactd's
	// zero-length first step.
	spawn(m, "stall", 1, 0, func(t *sim.Task) sim.Time {
		m.psiMemstallEnter(t)
		t.Charge(period)
		m.psiMemstallLeave(t)
		return sim.Exit
	})
	ref := newRefGroup()
	// The only non-idle CPU carries all the weight, so the group total is
	// that CPU's stall time, for SOME and (nothing else runnable) FULL.
	totals := [2]uint64{refPeriod, refPeriod}
	reads := []sim.Time{
		period,                   // end of the stalled period: 100%
		2 * period,               // one idle period
		3*period + 1,             // another, read 1 ns late
		10*period + 12345,        // six missed periods
		40*period + 7*sim.Second, // twenty-nine missed periods
		40*period + 8*sim.Second, // the next update is not due yet
		200 * period,             // a long idle gap
	}
	for i, at := range reads {
		runWorld(t, m, at)
		got := pressure(t, m)
		ref.update(uint64(at), totals)
		assert.Equal(t, ref.text(totals), got, "read %d at %s", i, at)
		if i == 0 {
			// Worked by hand from calc_avgs(): 100% of one period from
			// zero is calc_load(0, EXP_10s=1677, 100*FIXED_1) =
			// (204800*(2048-1677) + 1024)/2048 = 37100, which psi_show
			// prints as 37100/2048 = 18.11.
			assert.Equal(t, "some avg10=18.11 avg60=3.27 avg300=0.68 total=2001000\nfull avg10=18.11 avg60=3.27 avg300=0.68 total=2001000\n", got)
		}
	}
}

// psiCPUTimes returns the SOME and FULL time accounted on a CPU so far.
func psiCPUTimes(m *Machine, cpu int) (some, full sim.Time) {
	m.PSIUpdate()
	c := &m.PSI.cpus[cpu]
	return c.times[psiSome], c.times[psiFull]
}

func TestDirectReclaimAndDirectCompactionAreMemoryStalls(t *testing.T) {
	tests := []struct {
		name   string
		layout func(block, off int) role
		gfp    GFP
		order  Order
		allocs int
		// which stall the requests must have taken
		reclaim, compact bool
	}{
		{"order-0 requests that direct reclaim are memory stalls", lowFreeFileLayout, GFP_KERNEL &^ __GFP_KSWAPD_RECLAIM, 0, 400, true, false},
		// After compaction fails it reclaims once (compaction_ready
		// ends try_to_free_pages at once, but the call takes time).
		{"an order-9 request that direct compacts is a memory stall", holesFileLayout, GFP_TRANSHUGE, 9, 1, true, true},
		{"requests that may not reclaim never stall", lowFreeFileLayout, __GFP_NOWARN, 0, 400, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := newQuietMachine(t, 8192, 1, 2)
			carveZone(t, m, nil, tc.layout)
			gfp := tc.gfp
			if tc.order > 0 {
				gfp |= __GFP_COMP
			}
			tk := inWorld(t, m, 1, func(t *sim.Task) {
				for i := 0; i < tc.allocs; i++ {
					m.allocSync(t, gfp, tc.order, 0, 0)
				}
			})
			runWorld(t, m, tk.Now+sim.Millisecond)
			assert.Equal(t, tc.reclaim, m.Slow.DirectReclaimTime > 0, "time in direct reclaim")
			assert.Equal(t, tc.compact, m.Slow.DirectCompactTime > 0, "time in direct compaction")
			some, full := psiCPUTimes(m, 1)
			assert.Equal(t, m.Slow.DirectReclaimTime+m.Slow.DirectCompactTime, some,
				"the stall on the allocating CPU is exactly the time spent in direct reclaim and compaction")
			assert.Equal(t, some, full, "nothing else wanted the CPU: the stall is full")
			other, _ := psiCPUTimes(m, 0)
			assert.Zero(t, other, "no stall on the other CPU")
		})
	}
}

func TestKcompactdWorkIsAMemoryStallButProactiveCompactionIsNot(t *testing.T) {
	tests := []struct {
		name      string
		proactive bool
	}{
		{"kcompactd_do_work after a wakeup is a memory stall", false},
		{"proactive compaction on kcompactd's timer is not a memory stall", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := newQuietMachine(t, 8192, 1, 1)
			carveZone(t, m, nil, pinnedHolesLayout(true))
			if tc.proactive {
				m.Sysctl.CompactionProactiveness = 20
			} else {
				m.wakeupKcompactd(nil, m.Nodes[0], 9, ZONE_NORMAL)
			}
			runWorld(t, m, 2*sim.Second)
			assert.Greater(t, m.Event(KCOMPACTD_MIGRATE_SCANNED), uint64(0), "kcompactd compacted")
			some, full := psiCPUTimes(m, 0)
			if tc.proactive {
				assert.Zero(t, m.Event(KCOMPACTD_WAKE))
				assert.Zero(t, some)
				return
			}
			wake, sleep := traceAt(m, "mm_compaction_kcompactd_wake"), traceAt(m, "mm_compaction_kcompactd_sleep")
			require.Len(t, wake, 1)
			require.NotEmpty(t, sleep)
			require.Greater(t, sleep[0], wake[0])
			assert.Equal(t, sleep[0]-wake[0], some, "the stall is kcompactd_do_work")
			assert.Equal(t, some, full)
		})
	}
}

// TestPSIWeighsEachCPUsStallByItsNonIdleTime checks collect_percpu_times:
// the group's stall time is the mean of the CPUs' stall times weighted by
// each CPU's non-idle time in jiffies.
func TestPSIWeighsEachCPUsStallByItsNonIdleTime(t *testing.T) {
	m := newQuietMachine(t, 8192, 1, 3)
	// CPU 1 stalls for 1 s; CPU 2 works, unstalled, for 0.5 s; CPU 0
	// only runs kcompactd's empty first step.
	spawn(m, "stall", 1, 0, func(t *sim.Task) sim.Time {
		m.psiMemstallEnter(t)
		t.Charge(sim.Second)
		m.psiMemstallLeave(t)
		return sim.Exit
	})
	spawn(m, "work", 2, 0, func(t *sim.Task) sim.Time {
		t.Charge(sim.Second / 2)
		return sim.Exit
	})
	period := sim.Time(refPeriod)
	runWorld(t, m, period)
	// tSOME = (1e9 ns * 1000 jiffies + 0 * 500 jiffies) / 1500 jiffies
	total := uint64(1000000000) * 1000 / 1500
	totals := [2]uint64{total, total}
	ref := newRefGroup()
	ref.update(uint64(period), totals)
	assert.Equal(t, ref.text(totals), pressure(t, m))
	assert.Contains(t, pressure(t, m), "total=666666\n")
}

// psi_group_change: (state_mask & PSI_ONCPU) && cpu_curr(cpu)->in_memstall => MEM_FULL.
func TestAStalledTaskOnTheCPUIsFullPressureEvenWithOthersQueued(t *testing.T) {
	m := newQuietMachine(t, 8192, 1, 1)
	spawn(m, "busy", 0, 0, func(t *sim.Task) sim.Time { t.Charge(10 * sim.Millisecond); return sim.Exit })
	spawn(m, "stall", 0, sim.Millisecond, func(t *sim.Task) sim.Time {
		m.psiMemstallEnter(t)
		t.Charge(sim.Second)
		m.psiMemstallLeave(t)
		return sim.Exit
	})
	spawn(m, "other", 0, sim.Millisecond, func(t *sim.Task) sim.Time { t.Charge(sim.Millisecond); return sim.Exit })
	runWorld(t, m, 2*sim.Second)
	some, full := psiCPUTimes(m, 0)
	assert.Equal(t, sim.Second, some)
	assert.Equal(t, sim.Second, full, "the stalled task was on the CPU the whole second: FULL")
}

// While another task runs and the stalled one waits, test_states gives SOME only.
func TestAStalledTaskWaitingWhileAnotherRunsIsSomePressureOnly(t *testing.T) {
	m := newQuietMachine(t, 8192, 1, 1)
	step := 0
	spawn(m, "stall", 0, 0, func(t *sim.Task) sim.Time {
		step++
		if step == 1 {
			m.psiMemstallEnter(t)
			t.Charge(sim.Millisecond)
			return t.Now + 1
		}
		t.Charge(sim.Millisecond)
		m.psiMemstallLeave(t)
		return sim.Exit
	})
	spawn(m, "other", 0, sim.Millisecond/2, func(t *sim.Task) sim.Time { t.Charge(100 * sim.Millisecond); return sim.Exit })
	runWorld(t, m, sim.Second)
	some, full := psiCPUTimes(m, 0)
	assert.Equal(t, 102*sim.Millisecond, some)
	assert.Equal(t, 2*sim.Millisecond, full, "FULL only while the stalled task itself ran")
}

// test_states: NR_RUNNING == NR_MEMSTALL_RUNNING holds with nothing
// runnable, so a stalled task sleeping on an idle CPU is FULL; once an
// unstalled task runs there it is SOME only.
func TestAStalledTaskSleepingOnAnIdleCPUIsFullPressure(t *testing.T) {
	for _, other := range []bool{false, true} {
		m := newQuietMachine(t, 8192, 1, 1)
		spawn(m, "stall", 0, 0, func(t *sim.Task) sim.Time {
			m.psiMemstallEnter(t)
			t.Sleep(100 * sim.Millisecond)
			m.psiMemstallLeave(t)
			return sim.Exit
		})
		if other {
			spawn(m, "other", 0, 10*sim.Millisecond, func(t *sim.Task) sim.Time { t.Charge(30 * sim.Millisecond); return sim.Exit })
		}
		runWorld(t, m, sim.Second)
		some, full := psiCPUTimes(m, 0)
		assert.Equal(t, 100*sim.Millisecond, some)
		if other {
			assert.Equal(t, 70*sim.Millisecond, full, "not while the other task ran")
		} else {
			assert.Equal(t, 100*sim.Millisecond, full)
		}
	}
}

// psiPending returns the most intervals any CPU holds unaccounted.
func psiPending(m *Machine) int {
	n := 0
	for i := range m.PSI.cpus {
		c := &m.PSI.cpus[i]
		n = max(n, len(c.pending[psiSome])+len(c.pending[psiNonidle])+len(c.unstalled))
	}
	return n
}

// A task allocating every nanosecond used to leave one NONIDLE interval per
// step on its CPU until the next 2-second average (and 3 GB of them in a
// script's 2.5 s run). Folding as it goes keeps the lists short and the
// heap flat.
func TestPSIKeepsMemoryBoundedUnderAnAllocatorWithA1nsInterval(t *testing.T) {
	m := newQuietMachine(t, 8192, 1, 1)
	steps, failed := 0, 0
	spawn(m, "a", 0, 0, func(tk *sim.Task) sim.Time {
		steps++
		pfn := m.allocSync(tk, GFP_KERNEL, 0, -1, 0)
		if pfn == NilPFN {
			failed++
			return sim.Exit
		}
		m.FreePages(tk, pfn, 0)
		tk.Charge(10 * sim.Microsecond) // the rest of the syscall
		return tk.Now + 1
	})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	most := 0
	for m.World.NextEventTime() != sim.Never && m.World.NextEventTime() <= 2500*sim.Millisecond {
		m.World.Step()
		most = max(most, psiPending(m))
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	require.Zero(t, failed)
	require.Greater(t, steps, 200000, "the task ran a step every ~10 us")
	assert.LessOrEqual(t, most, psiFoldAt+4, "pending intervals per CPU")
	grew := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	assert.Less(t, grew, int64(1<<20), "heap growth over %d steps", steps)
	assert.Greater(t, m.PSI.cpus[0].times[psiNonidle], 2*sim.Second, "the CPU was accounted busy")
}

// Folding early is the kernel's accounting at every state change: it gives
// the same state times and averages as folding only at the 2 s averages.
func TestPSIFoldingEarlyGivesTheSameTotals(t *testing.T) {
	run := func(foldAt int) (string, [2]sim.Time, [3]sim.Time) {
		m := newQuietMachine(t, 8192, 1, 2)
		m.PSI.foldAt = foldAt
		for cpu := 0; cpu < 2; cpu++ {
			n := 0
			spawn(m, "stall", cpu, sim.Time(cpu)*7*sim.Microsecond, func(t *sim.Task) sim.Time {
				n++
				if n%3 == 0 {
					m.psiMemstallEnter(t)
				}
				t.Charge(sim.Time(50+n%110) * sim.Microsecond)
				if n%3 == 1 {
					m.psiMemstallLeave(t)
				}
				if n%5 == 0 {
					t.Sleep(30 * sim.Microsecond)
				}
				return t.Now + sim.Time(n%4)*10*sim.Microsecond
			})
		}
		spawn(m, "other", 0, 0, func(t *sim.Task) sim.Time {
			t.Charge(200 * sim.Microsecond)
			return t.Now + 500*sim.Microsecond
		})
		m.World.RunUntil(4100*sim.Millisecond, nil)
		some, full := psiCPUTimes(m, 0)
		return pressure(t, m), m.PSI.Total, [3]sim.Time{some, full, m.PSI.cpus[1].times[psiSome]}
	}
	p1, tot1, cpu1 := run(1)
	pInf, totInf, cpuInf := run(1 << 30)
	assert.Equal(t, pInf, p1)
	assert.Equal(t, totInf, tot1)
	assert.Equal(t, cpuInf, cpu1)
	assert.Positive(t, tot1[psiFull], "the workload stalled")
}
