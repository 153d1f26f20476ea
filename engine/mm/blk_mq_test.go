package mm

import (
	"strings"
	"testing"

	"github.com/pagesim/pagesim/engine/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// steadyDevice makes every request take the typical latency, so that times
// can be computed exactly.
func steadyDevice(m *Machine) {
	m.Blk.Props.ReadSigma, m.Blk.Props.WriteSigma = 0, 0
}

// dirtyFile writes pages of a new file from t.
func dirtyFile(t *testing.T, m *Machine, tk *sim.Task, name string, pages uint64) *File {
	t.Helper()
	f := m.NewFile(name, nil)
	require.Equal(t, pages, m.FileWrite(tk, f, 0, pages, GFP_HIGHUSER_MOVABLE|__GFP_WRITE))
	return f
}

func TestBlockDeviceContention(t *testing.T) {
	const pages = 4096 // 16 MiB per writer, far beyond what latency hides
	elapsed := func(t *testing.T, writers int) sim.Time {
		m := newQuietMachine(t, 65536, 1, 2)
		steadyDevice(m)
		var files []*File
		for i := 0; i < writers; i++ {
			files = append(files, dirtyFile(t, m, m.testTask(i), "w", pages))
		}
		var end sim.Time
		for i := 0; i < writers; i++ {
			f := files[i]
			spawn(m, "sync", i, 0, func(tk *sim.Task) sim.Time {
				m.FileSync(tk, f)
				end = max(end, tk.Now)
				return sim.Exit
			})
		}
		runWorld(t, m, 2*sim.Second)
		assert.Zero(t, m.Nodes[0].Stat[NR_WRITEBACK], "every write completed")
		assert.Equal(t, uint64(writers)*pages*PAGE_SIZE/sectorSize, m.Blk.Stat.SectorsWritten)
		return end
	}
	one, two := elapsed(t, 1), elapsed(t, 2)
	// 16 MiB at 1.8 GB/s is 9.3 ms; the latency and submission add little.
	want := sim.Time(pages * PAGE_SIZE * uint64(sim.Second) / DefaultBlockDevice().Props.WriteBandwidth)
	assert.InDelta(t, float64(want), float64(one), float64(want)/20, "one writer runs at the device's bandwidth")
	assert.InDelta(t, 2.0, float64(two)/float64(one), 0.1, "two writers share the bandwidth: twice the time")
}

func TestFdatasyncWaitsForQueuedWriteback(t *testing.T) {
	m := newQuietMachine(t, 65536, 1, 2)
	steadyDevice(m)
	f := dirtyFile(t, m, m.testTask(0), "log", 8192)
	var startEnd, syncEnd sim.Time
	var wrote uint64
	// One task starts writeback without waiting (sync_file_range); another
	// fdatasyncs a moment later and finds nothing dirty, but must still wait.
	spawn(m, "flusher", 0, 0, func(tk *sim.Task) sim.Time {
		require.Equal(t, uint64(8192), m.FileFdatawrite(tk, f))
		startEnd = tk.Now
		return sim.Exit
	})
	spawn(m, "syncer", 1, 3*sim.Millisecond, func(tk *sim.Task) sim.Time {
		wrote = m.FileSync(tk, f)
		syncEnd = tk.Now
		return sim.Exit
	})
	runWorld(t, m, sim.Second)
	xfer := sim.Time(8192 * PAGE_SIZE * uint64(sim.Second) / m.Blk.Props.WriteBandwidth)
	assert.Less(t, startEnd, xfer/4, "starting writeback does not wait for the device")
	assert.Zero(t, wrote, "nothing was left dirty for fdatasync to write")
	assert.GreaterOrEqual(t, syncEnd, xfer, "fdatasync returned only after the queued writeback completed")
	assert.Greater(t, m.IOWait, sim.Time(0))
	m.PSIUpdate()
	assert.Zero(t, m.PSI.Total[psiSome], "plain I/O wait is not a memory stall")
	assert.Greater(t, m.PSIIO.Total[psiSome], sim.Time(0), "it is I/O pressure")
	assert.Greater(t, m.PSIIO.Total[psiFull], sim.Time(0), "with nothing else to run on the waiter's CPU, full I/O pressure")
	assert.LessOrEqual(t, m.PSIIO.Total[psiFull], m.PSIIO.Total[psiSome])
	assert.Zero(t, m.Nodes[0].Stat[NR_WRITEBACK])
	assert.Equal(t, int64(8192), m.Nodes[0].Stat[NR_WRITTEN])
}

func TestSwapOutTakesDeviceTime(t *testing.T) {
	tests := []struct {
		name       string
		nrRequests string
		wantWait   bool
	}{
		{"with the default queue depth the reclaimer submits and goes on", "1023", false},
		{"with four tags the reclaimer sleeps for the device", "4", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := newQuietMachine(t, 16384, 1, 2)
			steadyDevice(m)
			require.NoError(t, m.SetSwap(64<<20))
			require.NoError(t, m.SetBlockKnob("block.nvme0n1.queue.nr_requests", tc.nrRequests))
			r := m.NewAnonRegion("hog", nil, 15000)
			tk := m.testTask(0)
			for r.Cursor < r.Pages {
				require.True(t, m.FaultAnonNext(tk, r, false).OK)
				mustCheck(t, m, "fault at %d", r.Cursor)
			}
			var start, end sim.Time
			spawn(m, "swapper", 1, tk.Now, func(tk *sim.Task) sim.Time {
				start = tk.Now
				for i := 0; i < 2000; i++ {
					require.NotEqual(t, NilPFN, m.allocSync(tk, GFP_KERNEL, 0, 0, 0))
				}
				end = tk.Now
				return sim.Exit
			})
			cpuBefore := m.World.CPUs[1].Busy
			runWorld(t, m, tk.Now+sim.Second)
			out := m.Event(PSWPOUT)
			require.Greater(t, out, uint64(0), "reclaim swapped anon out")
			assert.Equal(t, out*PAGE_SIZE/sectorSize, m.Blk.Stat.SectorsWritten, "every swapped page was written to the device")
			assert.LessOrEqual(t, m.Event(PGSTEAL_ANON), out, "a folio is freed only after its write")
			if tc.wantWait {
				assert.Greater(t, m.Blk.Stat.TagWaits, uint64(0), "the reclaimer waited for a tag")
				assert.Greater(t, m.IOWait, sim.Time(0))
				// It slept: its CPU was busy for less than its clock ran.
				assert.Less(t, m.World.CPUs[1].Busy-cpuBefore, end-start)
			} else {
				assert.Zero(t, m.Blk.Stat.TagWaits)
			}
			m.blkRetire(m.World.Now())
			assert.Zero(t, m.Nodes[0].Stat[NR_WRITEBACK], "every swap write completed")
			mustCheck(t, m, "the end")
		})
	}
}

func TestSwapWritesBoundTheReclaimRate(t *testing.T) {
	// The same reclaim on a device ten times slower takes longer by the
	// device time it adds, not by CPU work.
	run := func(t *testing.T, bw uint64) sim.Time {
		m := newQuietMachine(t, 16384, 1, 2)
		steadyDevice(m)
		m.Blk.Props.WriteBandwidth = bw
		require.NoError(t, m.SetSwap(64<<20))
		r := m.NewAnonRegion("hog", nil, 15000)
		tk := m.testTask(0)
		for r.Cursor < r.Pages {
			require.True(t, m.FaultAnonNext(tk, r, false).OK)
		}
		start := tk.Now
		for i := 0; i < 2000; i++ {
			require.NotEqual(t, NilPFN, m.AllocPages(tk, GFP_KERNEL, 0, 0, 0))
		}
		return tk.Now - start
	}
	fast, slow := run(t, 1_800_000_000), run(t, 180_000_000)
	assert.Greater(t, slow, 2*fast, "freeing anon memory waits for its swap writes")
}

func TestRemoteMemoryCostsTheLatencyRatio(t *testing.T) {
	cfg, err := X86Layout(2<<30, 2, 1)
	require.NoError(t, err)
	m, err := NewMachine(cfg)
	require.NoError(t, err)
	require.NoError(t, m.SetTHPKnob("transparent_hugepage.enabled", "never"))
	fault := func(node int) sim.Time {
		r := m.NewAnonRegion("r", nil, 1)
		r.Policy = Mempolicy{Mode: MPOL_BIND, Nodes: 1 << node}
		tk := m.testTask(0) // CPU 0 is on node 0
		res := m.FaultAnonNext(tk, r, false)
		require.True(t, res.OK)
		require.Equal(t, node, m.Folio(res.Head).Node)
		return tk.Now
	}
	local, remote := fault(0), fault(1)
	c := m.Cost
	want := c.ClearPage4K*c.RemoteMemLatency/c.LocalMemLatency - c.ClearPage4K
	assert.Equal(t, want, remote-local, "a remote clear costs 131/81 of a local one")
	assert.Equal(t, 21, m.Distance(0, 1))
	// Distances between 10 and 21 interpolate the latency.
	m.distance[0][1] = 15
	assert.Equal(t, c.ClearPage4K*(81+50*5/11)/81, m.remoteCost(0, 1, c.ClearPage4K))
	assert.Equal(t, c.ClearPage4K, m.remoteCost(1, 1, c.ClearPage4K))
}

func TestNodeDistanceTable(t *testing.T) {
	cfg, err := X86Layout(4<<30, 2, 1)
	require.NoError(t, err)
	m, err := NewMachine(cfg)
	require.NoError(t, err)
	assert.Equal(t, "node distances:\nnode   0   1 \n  0:  10  21 \n  1:  21  10 \n", m.NumactlDistances())
	assert.Equal(t, "10 21\n", m.NodeDistanceLine(0))
	assert.Equal(t, "21 10\n", m.NodeDistanceLine(1))

	simple, err := SimpleLayout(8192, 3, 1)
	require.NoError(t, err)
	m, err = NewMachine(simple)
	require.NoError(t, err)
	assert.Equal(t, "20 20 10\n", m.NodeDistanceLine(2), "no SLIT: the kernel's REMOTE_DISTANCE")

	simple.Distance = [][]int{{10, 9, 20}, {20, 10, 20}, {20, 20, 10}}
	_, err = NewMachine(simple)
	assert.ErrorContains(t, err, "node distance 0->1 is 9")
	simple.Distance = [][]int{{12, 20, 20}, {20, 10, 20}, {20, 20, 10}}
	_, err = NewMachine(simple)
	assert.ErrorContains(t, err, "local distance must be 10")
}

func TestDeviceLatencyVariesWithTheSeed(t *testing.T) {
	draw := func(seed uint64, n int) []sim.Time {
		d := DefaultBlockDevice()
		d.rand = sim.NewRand(seed)
		out := make([]sim.Time, n)
		for i := range out {
			out[i] = d.drawLatency(d.Props.WriteLatency, d.Props.WriteSigma)
		}
		return out
	}
	assert.Equal(t, draw(7, 50), draw(7, 50), "the same seed gives the same latencies")
	assert.NotEqual(t, draw(7, 50), draw(8, 50), "another seed gives others")
	const n = 200000
	xs := draw(1, n)
	var sum sim.Time
	over := 0
	median := 20 * sim.Microsecond * 676 / 1000 // typical * exp(-sigma^2/2)
	for _, x := range xs {
		sum += x
		if x > 800*median/52*1000/1000 { // the S4500's p99.9/typical ratio from the median
			over++
		}
	}
	assert.InDelta(t, float64(20*sim.Microsecond), float64(sum)/n, float64(sim.Microsecond), "the mean is the datasheet's typical latency")
	// 99.9th percentile: about 0.1% of draws lie beyond it.
	assert.InDelta(t, 0.001, float64(over)/n, 0.0008)
	assert.InDelta(t, 1.0, expRounded(0), 1e-15)
	assert.InDelta(t, 2.718281828459045, expRounded(1), 1e-14)
	assert.InDelta(t, 0.049787068367863944, expRounded(-3), 1e-16)
}

func TestQueueAttributes(t *testing.T) {
	m := newQuietMachine(t, 8192, 1, 1)
	for _, tc := range []struct {
		name, value, want, err string
	}{
		{name: "block.nvme0n1.queue.nr_requests", want: "1023"},
		{name: "block/nvme0n1/queue/max_sectors_kb", want: "128"},
		{name: "block.nvme0n1.queue.rotational", want: "0"},
		{name: "block.nvme0n1.queue.nr_requests", value: "64", want: "64"},
		{name: "block.nvme0n1.queue.nr_requests", value: "2", err: "from 4 to 2048"},
		{name: "block.nvme0n1.queue.max_sectors_kb", value: "256", err: "max_hw_sectors_kb (128)"},
		{name: "block.nvme0n1.queue.max_hw_sectors_kb", value: "256", err: "read-only"},
		{name: "block.nvme0n1.queue.scheduler", value: "none", err: "unknown queue attribute"},
	} {
		if tc.value != "" {
			err := m.SetBlockKnob(tc.name, tc.value)
			if tc.err != "" {
				assert.ErrorContains(t, err, tc.err, tc.name)
				continue
			}
			require.NoError(t, err)
		}
		got, err := m.Blk.QueueAttr(tc.name)
		require.NoError(t, err)
		assert.Equal(t, tc.want, got, tc.name)
	}
	assert.True(t, IsBlockKnob("block.nvme0n1.queue.nr_requests"))
	assert.True(t, IsBlockKnob("/sys/block/nvme0n1/queue/nr_requests"))
	assert.False(t, IsBlockKnob("block.sda.queue.nr_requests"))
	assert.False(t, IsBlockKnob("vm.swappiness"))
}

func TestReclaimWithoutProgressWaitsForWriteback(t *testing.T) {
	// Page cache under writeback on a slow device: reclaim can free none
	// of it, reaches priority 1 with nothing reclaimed, and sleeps a
	// jiffy (consider_reclaim_throttle) since more than half the node's
	// reclaimable pages are pending writeback. With clean page cache it
	// never sleeps (skip_throttle_noprogress): nothing is pending.
	tests := []struct {
		name      string
		writeback bool
	}{
		{"with writeback in flight the reclaimer sleeps a jiffy", true},
		{"with the page cache clean it does not", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := newQuietMachine(t, 16384, 1, 2)
			steadyDevice(m)
			m.Blk.Props.WriteBandwidth = 18_000_000
			tk := m.testTask(0)
			f := dirtyFile(t, m, tk, "log", 14000)
			if tc.writeback {
				m.FileFdatawrite(tk, f)
			} else {
				m.FileSync(tk, f)
			}
			// Unmovable pins fill the rest, so reclaim is all that is left.
			for m.AllocPages(tk, GFP_KERNEL|__GFP_NORETRY|__GFP_NOWARN, 0, 0, 0) != NilPFN {
			}
			mustCheck(t, m, "the allocations")
			ev := m.Trace.Events()
			var line string
			for _, e := range ev {
				if e.ID == TraceMmVmscanThrottled {
					line = e.String()
					break
				}
			}
			if !tc.writeback {
				assert.Zero(t, m.Reclaim.Throttled)
				return
			}
			assert.Greater(t, m.Reclaim.Throttled, uint64(0), "reclaim throttled on writeback")
			assert.Contains(t, line, "mm_vmscan_throttled: nid=0 usec_timeout=1000 usect_delayed=1000 reason=VMSCAN_THROTTLE_NOPROGRESS")
		})
	}
}

func TestARequestTakesATagAheadOfRequestsSubmittedLater(t *testing.T) {
	m := newQuietMachine(t, 8192, 1, 2)
	steadyDevice(m)
	m.Blk.Queue.NrRequests = 4
	// A step that ran ahead submitted four requests at 10 ms: every tag
	// is taken from then on.
	for i := 0; i < 4; i++ {
		_, dispatch := m.blkSubmit(10*sim.Millisecond, REQ_OP_WRITE, 128<<10, nil)
		require.Equal(t, 10*sim.Millisecond, dispatch)
	}
	// A request submitted at 1 ms by a step that ran later found no
	// request in flight at its time: it takes a tag at once.
	_, dispatch := m.blkSubmit(sim.Millisecond, REQ_OP_WRITE, 4096, nil)
	assert.Equal(t, sim.Millisecond, dispatch, "the requests submitted at 10 ms are not in flight at 1 ms")
	assert.Zero(t, m.Blk.Stat.TagWaits)
	// A fifth at 10 ms finds the four ahead of it and waits for the
	// first of them to complete.
	_, dispatch = m.blkSubmit(10*sim.Millisecond, REQ_OP_WRITE, 4096, nil)
	assert.Greater(t, dispatch, 10*sim.Millisecond)
	assert.Equal(t, uint64(1), m.Blk.Stat.TagWaits)
	inFlight := func(at sim.Time) string { return strings.Fields(m.Blk.DiskstatsLine(at))[11] }
	assert.Equal(t, "1", inFlight(sim.Millisecond), "in_flight at 1 ms: the request submitted then")
	assert.Equal(t, "0", inFlight(2*sim.Millisecond), "in_flight at 2 ms: none")
	assert.Equal(t, "5", inFlight(10*sim.Millisecond), "in_flight at 10 ms: the five submitted then")
}

func TestAnEarlierTransferIsNotDelayedByOneAskedLater(t *testing.T) {
	m := newQuietMachine(t, 8192, 1, 2)
	steadyDevice(m)
	p := m.Blk.Props
	lat := p.WriteLatency
	const bytes = 128 << 10
	x := sim.Time((bytes*uint64(sim.Second) + p.WriteBandwidth - 1) / p.WriteBandwidth)
	require.Greater(t, x, 20*sim.Microsecond)
	// A step that ran ahead submits at 100 us, then a step that ran
	// later submits at 90 us: on the device the one asked at 90 us
	// transfers first, the one at 100 us after it.
	a, _ := m.blkSubmit(100*sim.Microsecond, REQ_OP_WRITE, bytes, nil)
	assert.Equal(t, 100*sim.Microsecond+lat+x, a)
	b, _ := m.blkSubmit(90*sim.Microsecond, REQ_OP_WRITE, bytes, nil)
	assert.Equal(t, 90*sim.Microsecond+lat+x, b, "the earlier transfer does not wait for the later one")
	// The pipe's busy time is conserved: a third request, asked while
	// both are on the pipe, waits for both, and ends where a device
	// serving them in turn would end it.
	c, _ := m.blkSubmit(120*sim.Microsecond, REQ_OP_WRITE, bytes, nil)
	assert.Equal(t, 90*sim.Microsecond+lat+3*x, c)
	assert.Equal(t, 3*x, m.Blk.pipe.Held, "three transfers' time booked")
}

func TestTheFirstRequestInTimeIsServedAsOnAnIdleDeviceWhateverRanAhead(t *testing.T) {
	// The invariant: whatever steps that ran ahead submitted for later
	// times, the request submitted first in simulated time takes a tag
	// at once and transfers right after its access latency, and the pipe
	// books every transfer's time once. Writes only, so that every
	// request's transfer is asked in the order of the submit times.
	rng := sim.NewRand(11)
	for round := 0; round < 20; round++ {
		m := newQuietMachine(t, 8192, 1, 2)
		steadyDevice(m)
		m.Blk.Queue.NrRequests = 4
		p := m.Blk.Props
		type req struct {
			at    sim.Time
			bytes uint64
		}
		reqs := make([]req, 40)
		first := 0
		var xfers sim.Time
		for i := range reqs {
			// Distinct times: 40 of 2000 microseconds.
			reqs[i] = req{sim.Time(rng.Intn(50)*40+i) * sim.Microsecond, uint64(1+rng.Intn(32)) * PAGE_SIZE}
			if reqs[i].at < reqs[first].at {
				first = i
			}
			x := sim.Time((reqs[i].bytes*uint64(sim.Second) + p.WriteBandwidth - 1) / p.WriteBandwidth)
			xfers += max(x, sim.Time(uint64(sim.Second)/p.WriteIOPS))
		}
		// The first request in time goes in at a random place of the
		// wall order.
		order := make([]int, 0, len(reqs))
		for i := range reqs {
			if i != first {
				order = append(order, i)
			}
		}
		at := rng.Intn(len(order) + 1)
		order = append(order[:at], append([]int{first}, order[at:]...)...)
		var complete, dispatch sim.Time
		for _, i := range order {
			c, d := m.blkSubmit(reqs[i].at, REQ_OP_WRITE, reqs[i].bytes, nil)
			if i == first {
				complete, dispatch = c, d
			}
		}
		r := reqs[first]
		x := sim.Time((r.bytes*uint64(sim.Second) + p.WriteBandwidth - 1) / p.WriteBandwidth)
		x = max(x, sim.Time(uint64(sim.Second)/p.WriteIOPS))
		assert.Equal(t, r.at, dispatch, "round %d: the first request takes a tag at once", round)
		assert.Equal(t, r.at+p.WriteLatency+x, complete, "round %d: submitted %d-th in wall order", round, at+1)
		assert.Equal(t, xfers, m.Blk.pipe.Held, "round %d: every transfer booked once", round)
	}
}

// A file system that writes and waits for the blocks it marked
// (filemap_write_and_wait_range) writes only the dirty folios of the
// range, however large the file, and waits for those requests, not for
// writeback queued elsewhere in the file.
func TestFileSyncRangeWritesAndWaitsForItsRangeOnly(t *testing.T) {
	m := newQuietMachine(t, 65536, 1, 2)
	steadyDevice(m)
	f := dirtyFile(t, m, m.testTask(0), "btree", 8192)
	var syncEnd sim.Time
	var wrote uint64
	spawn(m, "flusher", 0, 0, func(tk *sim.Task) sim.Time {
		n, _ := m.writebackRange(tk, f, 0, 4096)
		require.Equal(t, uint64(4096), n)
		return sim.Exit
	})
	spawn(m, "syncer", 1, sim.Microsecond, func(tk *sim.Task) sim.Time {
		wrote = m.FileSyncRange(tk, f, 6000, 4)
		syncEnd = tk.Now
		return sim.Exit
	})
	runWorld(t, m, sim.Second)
	xfer := sim.Time(4096 * PAGE_SIZE * uint64(sim.Second) / m.Blk.Props.WriteBandwidth)
	assert.Equal(t, uint64(4), wrote, "the range's four pages")
	assert.Less(t, syncEnd, xfer/2, "not behind the other range's writeback")
	assert.Equal(t, uint64(8192-4096-4), m.FileFdatawrite(m.testTask(1), f), "the rest stayed dirty")
}
