package mm

// blk_mq.go models the machine's one block device the way the multi-queue
// block layer (block/blk-mq.c, block/blk-merge.c, block/genhd.c) and an NVMe
// SSD behind it make its requests take time: swap-out (page_io.go), page-
// cache writeback and fdatasync (page_writeback.go, filemap.go) and reads
// (filemap.go) submit requests here and get back when each one completes.
//
// # What the kernel does
//
// submit_bio() hands a bio to blk_mq_submit_bio(), which merges it into a
// plugged request for the adjacent sectors (blk_attempt_plug_merge) up to
// the queue's max_sectors_kb, takes a tag for it (blk_mq_get_tag, which
// sleeps in io_schedule() while all nr_requests tags of the hardware queue
// are in use) and dispatches it to the device. The device works on many
// requests at once; each completes after its access latency and its share
// of the device's bandwidth, and the completion interrupt ends the bio
// (end_swap_bio_write, the filesystem's end_io: folio_end_writeback). A
// task that waits for I/O (folio_wait_writeback, filemap_fdatawait, a read
// of a folio that is not uptodate) sleeps in io_schedule(): its CPU is free
// for others, it counts in iowait and in the I/O pressure of PSI
// (TSK_IOWAIT), but not in memory pressure unless it is also inside
// psi_memstall_enter() (kernel/sched/psi.c: test_state() counts only
// NR_MEMSTALL for PSI_MEM_SOME, and a sleeping task keeps TSK_MEMSTALL only
// while in_memstall). pagesim records the sleep as PSI_IO_SOME on the
// task's CPU, PSI_IO_FULL where no task ran there meanwhile, and non-idle
// time for both resources (psi.go: Machine.PSIIO, /proc/pressure/io).
//
// # The model
//
// A request of n bytes submitted at time s:
//
//   - waits for a tag: the requests submitted at or before s and not
//     complete at s hold the tags or wait for them ahead of it; with
//     nr_requests of them or more, it is dispatched when enough of them
//     have completed (the submitter sleeps until then);
//   - is accessed after the device's latency for its direction, drawn per
//     request (below);
//   - then transfers through the device's one pipe: n / bandwidth, or the
//     device's per-request time at its random IOPS if that is longer,
//     after the transfer time asked for before it and not over (the pipe
//     serves transfers first come, first served), so requests from
//     several tasks share the bandwidth: two writers beyond the
//     bandwidth take twice as long, and writeback and swap-out contend.
//
// Tasks submit in the order their steps run while their clocks differ: a
// task whose step ran ahead (a long reclaim, a sleep inside the step)
// submits in the future, before a request that another task's later step
// submits for an earlier time. So the tags count only the requests
// submitted at or before a request's time, and the pipe is a sim.Lock
// timeline (Book): each transfer keeps the time it was asked for, waits
// for the transfer time asked before it and not over by then, and is
// booked in the pipe's free time from its start on, so the bookings never
// overlap and add up to the transfer time (the pipe's busy time is the
// device's), while a transfer booked by a step that ran ahead and asked
// later does not delay it. Completion times are therefore not in
// submission order; in-flight requests are kept sorted by completion.
//
// (Until December 2026 the pipe took each transfer into its first idle
// time in the order the steps submitted them, around the bookings of
// steps that ran ahead, and the tags counted every request not complete
// at a request's time, those submitted later by such steps too.)
//
// # The device
//
// Defaults are those of a data-centre NVMe SSD of the seeds' era, the Intel
// SSD DC P4500 4.0 TB (PCIe 3.0 x4, 32-layer TLC 3D NAND, 2017), from the
// technical specifications in Lenovo's ThinkSystem Intel P4500 product
// guide: sequential read 3.2 GB/s, sequential write 1.8 GB/s, 645,000
// random 4 KiB read IOPS and 62,500 write IOPS, random access latency
// 115 us read and 20 us write (typical). CHOICE: the largest capacity of
// the series, whose writes are least limited by its number of NAND dies.
// Queue attributes follow what Linux shows for such a drive under
// /sys/block/nvme0n1/queue: nr_requests 1023 (the nvme driver's default
// io_queue_depth of 1024, less one), max_hw_sectors_kb 128 (the drive's
// MDTS, a 128 KiB transfer; estimate: what Intel's P45xx drives report)
// and max_sectors_kb equal to it, rotational 0, logical_block_size 512.
//
// # Variation
//
// A request's access latency varies because NAND dies are shared: a read
// that lands on a die busy with a program or an erase, or that needs a read
// retry, waits. Datasheets give the typical latency and a high percentile
// (quality of service). The P4500's guide gives no percentile; the same
// vendor's same-generation TLC SATA drive (Intel SSD DC S4500 product
// specification) gives random latency 110 us read, 52 us write typical and
// 300 us read, 800 us write at the 99.9th percentile. pagesim draws each
// request's latency from a lognormal distribution whose mean is the
// device's typical latency and whose 99.9th-to-median ratio is the S4500's
// (sigma = ln(p99.9 / typical) / 3.09: 0.325 for reads, 0.885 for
// writes), from the world's seeded RNG (sim.Rand), so the same seed gives
// the same completion times. The normal deviate is the Irwin-Hall sum of
// twelve uniforms (tails cut at 6 sigma) and exp is computed with rounding
// forced after every operation, so native and wasm builds agree bit for
// bit.
//
// # What is left out
//
// One device serves both swap and files (no separate swap partition
// timeline; they would share the drive's bandwidth anyway). No I/O
// scheduler (NVMe runs with "none"), no cache flush cost (the P4500 has
// power-loss-protected write cache, so a FLUSH does not wait for NAND), no
// per-CPU hardware queues (nr_requests bounds requests in flight device-
// wide), no CPU time for completion interrupts, and no sequential-read
// latency: every read pays the random latency (readahead would hide some).

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/pagesim/pagesim/engine/sim"
)

// BlockDeviceProps are the device's hardware figures (what a datasheet
// gives; no sysfs file holds them). Bandwidths are in bytes per second,
// latencies are typical (mean) access latencies of one request.
type BlockDeviceProps struct {
	ReadBandwidth, WriteBandwidth uint64
	ReadIOPS, WriteIOPS           uint64
	ReadLatency, WriteLatency     sim.Time
	// ReadSigma and WriteSigma are the lognormal spread of the access
	// latency, in thousandths (325 = 0.325); 0 gives every request the
	// typical latency.
	ReadSigma, WriteSigma uint64
}

// RequestQueue holds the queue attributes of /sys/block/<dev>/queue.
type RequestQueue struct {
	// NrRequests is nr_requests: the most requests in flight (tags).
	NrRequests uint64
	// MaxSectorsKB is max_sectors_kb: the largest request the block layer
	// builds by merging bios (at most MaxHWSectorsKB).
	MaxSectorsKB uint64
	// Read-only attributes.
	MaxHWSectorsKB   uint64
	LogicalBlockSize uint64
	Rotational       bool
}

// DiskStats are the device's /proc/diskstats counters (block/genhd.c
// diskstats_show), times in ns (printed in ms).
type DiskStats struct {
	Reads, Writes               uint64 // requests completed
	ReadMerges, WriteMerges     uint64 // bios merged into a request
	SectorsRead, SectorsWritten uint64 // 512-byte sectors
	ReadTicks, WriteTicks       sim.Time
	// IOTicks is the time with at least one request in flight.
	IOTicks sim.Time
	// TagWaits counts submissions that slept for a tag, TagWaitTime the
	// time they slept.
	TagWaits    uint64
	TagWaitTime sim.Time
}

// BlockDevice is the machine's block device (struct gendisk and its
// request_queue).
type BlockDevice struct {
	Name  string
	Queue RequestQueue
	Props BlockDeviceProps
	Stat  DiskStats

	// pipe is the device's transfer pipe: each transfer booked with the
	// time it was asked for (the end of its access latency), disjoint,
	// adding up to the transfer time booked. A transfer asked earlier
	// than one already booked (its step ran later) is not delayed by it,
	// and the later one's completion, already returned, cannot move: the
	// two completions may overlap by up to one transfer, so for that
	// stretch the device moves data faster than its bandwidth.
	pipe sim.Lock
	// tags holds the requests that may still be in flight (completing
	// after the world's clock), sorted by completion.
	tags []blkTag
	// ioBusy holds, sorted and disjoint, the intervals with a request in
	// flight not yet counted in IOTicks (counted as the world's clock
	// passes them).
	ioBusy []psiInterval
	// inflight holds submitted requests not yet retired, sorted by
	// completion time (blkRetire ends their folios' writeback).
	inflight []*bioRequest
	rand     *sim.Rand
}

type blkOp uint8

const (
	REQ_OP_READ blkOp = iota
	REQ_OP_WRITE
)

// bioRequest is one request: when it completes and which folios it ends
// writeback for (nil for reads, whose waiter is the submitter).
type bioRequest struct {
	op       blkOp
	complete sim.Time
	// folios under writeback that this request carries.
	folios []PFN
}

// blkTag is a request holding or waiting for a tag: when it was
// submitted and when it completes (submit <= complete).
type blkTag struct{ submit, complete sim.Time }

// inflightAt counts the requests submitted at or before x and not
// complete at x, and returns the k-th smallest completion among them
// (k from 1) if there are at least k, else 0.
func (d *BlockDevice) inflightAt(x sim.Time, k int) (int, sim.Time) {
	first, _ := slices.BinarySearchFunc(d.tags, x+1, func(g blkTag, c sim.Time) int { return cmp.Compare(g.complete, c) })
	n := 0
	var kth sim.Time
	for _, g := range d.tags[first:] {
		if g.submit <= x {
			n++
			if n == k {
				kth = g.complete
			}
		}
	}
	return n, kth
}

// sectorSize is SECTOR_SIZE.
const sectorSize = 512

// DefaultBlockDevice returns the P4500-like NVMe drive described above.
func DefaultBlockDevice() BlockDevice {
	return BlockDevice{
		Name: "nvme0n1",
		Queue: RequestQueue{
			NrRequests:       1023,
			MaxSectorsKB:     128,
			MaxHWSectorsKB:   128,
			LogicalBlockSize: 512,
		},
		Props: BlockDeviceProps{
			ReadBandwidth:  3_200_000_000,
			WriteBandwidth: 1_800_000_000,
			ReadIOPS:       645_000,
			WriteIOPS:      62_500,
			ReadLatency:    115 * sim.Microsecond,
			WriteLatency:   20 * sim.Microsecond,
			ReadSigma:      325,
			WriteSigma:     885,
		},
	}
}

// blkSubmit submits one request of bytes at time now and returns its
// completion time and the time it was dispatched (later than now when it
// had to wait for a tag). Callers that submit on behalf of a task sleep
// until dispatch (blkSubmitBios does).
func (m *Machine) blkSubmit(now sim.Time, op blkOp, bytes uint64, folios []PFN) (complete, dispatch sim.Time) {
	d := &m.Blk
	d.prune(m.World.Now())
	dispatch = now
	// Tags: the requests submitted by now and still in flight at now
	// (a request submitted later by a step that ran ahead queues behind
	// this one); with nr of them, wait for enough to complete. Fewer
	// than nr requests complete after now: no count needed.
	nr := int(max(d.Queue.NrRequests, 1))
	if first, _ := slices.BinarySearchFunc(d.tags, now+1, func(g blkTag, c sim.Time) int { return cmp.Compare(g.complete, c) }); len(d.tags)-first >= nr {
		// The inflight-nr+1'th completion frees the tag this request
		// gets: inflight is not known before the count, so count
		// first.
		if inflight, _ := d.inflightAt(now, 0); inflight >= nr {
			_, freeAt := d.inflightAt(now, inflight-nr+1)
			d.Stat.TagWaits++
			d.Stat.TagWaitTime += freeAt - dispatch
			dispatch = freeAt
		}
	}
	p := &d.Props
	lat, bw, iops, sigma := p.ReadLatency, p.ReadBandwidth, p.ReadIOPS, p.ReadSigma
	if op == REQ_OP_WRITE {
		lat, bw, iops, sigma = p.WriteLatency, p.WriteBandwidth, p.WriteIOPS, p.WriteSigma
	}
	lat = d.drawLatency(lat, sigma)
	var xfer sim.Time
	if bw > 0 {
		xfer = sim.Time((bytes*uint64(sim.Second) + bw - 1) / bw)
	}
	if iops > 0 {
		xfer = max(xfer, sim.Time(uint64(sim.Second)/iops))
	}
	complete = dispatch + lat
	if xfer > 0 {
		complete = d.pipe.Book(m.World.Now(), complete, xfer)
	}
	i, _ := slices.BinarySearchFunc(d.tags, complete, func(g blkTag, c sim.Time) int { return cmp.Compare(g.complete, c) })
	d.tags = slices.Insert(d.tags, i, blkTag{now, complete})
	// Accounting (part_stat_add at completion, summed here).
	sectors := bytes / sectorSize
	if op == REQ_OP_WRITE {
		d.Stat.Writes++
		d.Stat.SectorsWritten += sectors
		d.Stat.WriteTicks += complete - now
	} else {
		d.Stat.Reads++
		d.Stat.SectorsRead += sectors
		d.Stat.ReadTicks += complete - now
	}
	if complete > now {
		d.ioBusy = insertInterval(d.ioBusy, now, complete)
	}
	if len(folios) > 0 {
		rq := &bioRequest{op: op, complete: complete, folios: folios}
		i, _ := slices.BinarySearchFunc(d.inflight, complete, func(r *bioRequest, c sim.Time) int {
			return cmp.Compare(r.complete, c+1) // after every request completing at the same time
		})
		d.inflight = slices.Insert(d.inflight, i, rq)
		m.World.AtTimer(complete, blkRetireTimer{m})
	}
	return complete, dispatch
}

// blkRetireTimer completes the requests due when it fires (the device's
// interrupt, blk_mq_complete_request()).
type blkRetireTimer struct{ m *Machine }

// Fire retires the requests complete by now.
func (b blkRetireTimer) Fire(w *sim.World) { b.m.blkRetire(w.Now()) }

// prune forgets what lies before now, the world's clock, which no task's
// clock is behind: completed tags, and busy time, which it counts in
// IOTicks (the pipe forgets its ended bookings itself, in Book).
func (d *BlockDevice) prune(now sim.Time) {
	// Shift only when something is forgotten: a setup that submits
	// before the world's clock moves would otherwise copy every
	// request onto itself at each request.
	if j, _ := slices.BinarySearchFunc(d.tags, now+1, func(g blkTag, c sim.Time) int { return cmp.Compare(g.complete, c) }); j > 0 {
		d.tags = append(d.tags[:0], d.tags[j:]...)
	}
	k := 0
	for ; k < len(d.ioBusy) && d.ioBusy[k].start < now; k++ {
		end := min(d.ioBusy[k].end, now)
		d.Stat.IOTicks += end - d.ioBusy[k].start
		if d.ioBusy[k].end > now {
			d.ioBusy[k].start = now
			break
		}
	}
	if k > 0 {
		d.ioBusy = append(d.ioBusy[:0], d.ioBusy[k:]...)
	}
}

// blkSubmitBios submits pages contiguous pages as bios merged into requests
// of at most max_sectors_kb (a plugged submission), on behalf of t: t
// sleeps in io_schedule() whenever it has to wait for a tag. folios are the
// folio heads the pages belong to, in order, ended by the request that
// carries their last page. cpuPerPage is the submitter's CPU work per page
// (building the bio), charged before each request is dispatched, so the
// device works while the submitter prepares the next one. It returns when
// the last request completes.
func (m *Machine) blkSubmitBios(t *sim.Task, op blkOp, pages uint64, folios []PFN, folioPages func(PFN) uint64, cpuPerPage sim.Time) sim.Time {
	d := &m.Blk
	maxPages := max(d.Queue.MaxSectorsKB*1024/PAGE_SIZE, 1)
	var last sim.Time
	fi := 0
	for pages > 0 {
		n := min(pages, maxPages)
		// The folios whose last page is in this request.
		var carried []PFN
		if folios != nil {
			var acc uint64
			for fi < len(folios) && acc+folioPages(folios[fi]) <= n {
				acc += folioPages(folios[fi])
				carried = append(carried, folios[fi])
				fi++
			}
			if pages == n { // the last request carries the rest
				carried = append(carried, folios[fi:]...)
				fi = len(folios)
			}
		}
		if n > 1 {
			if op == REQ_OP_WRITE {
				d.Stat.WriteMerges += n - 1
			} else {
				d.Stat.ReadMerges += n - 1
			}
		}
		t.Charge(cpuPerPage * sim.Time(n))
		c, dispatch := m.blkSubmit(t.Now, op, n*PAGE_SIZE, carried)
		if dispatch > t.Now {
			m.ioSchedule(t, dispatch)
		}
		last = c
		pages -= n
	}
	return last
}

// ioSchedule is io_schedule() until the given time: the task sleeps (its
// CPU is free for others) and the time counts as iowait. It is not a
// memory stall unless the caller is inside psi_memstall_enter().
func (m *Machine) ioSchedule(t *sim.Task, until sim.Time) {
	if until > t.Now {
		d := until - t.Now
		m.IOWait += d
		m.psiIOWait(t, t.Now, until)
		t.Sleep(d)
	}
	m.blkRetire(t.Now)
}

// blkRetire completes every request that has completed by now, in order:
// the bio's end_io ends its folios' writeback (end_swap_bio_write,
// folio_end_writeback). It runs from the completion event and, because a
// step's clock runs ahead of the world's, from any task that looks at
// writeback state at its own time (reclaim, fdatasync, truncate).
func (m *Machine) blkRetire(now sim.Time) {
	d := &m.Blk
	i := 0
	for ; i < len(d.inflight) && d.inflight[i].complete <= now; i++ {
		for _, head := range d.inflight[i].folios {
			m.folioEndWriteback(head)
		}
		d.inflight[i] = nil
	}
	if i > 0 {
		d.inflight = append(d.inflight[:0], d.inflight[i:]...)
	}
}

// drawLatency draws one request's access latency: lognormal with mean
// typical and spread sigma (thousandths), from the world's RNG.
func (d *BlockDevice) drawLatency(typical sim.Time, sigma uint64) sim.Time {
	if sigma == 0 || d.rand == nil {
		return typical
	}
	s := float64(sigma) / 1000
	// Irwin-Hall: the sum of twelve uniforms minus 6 is close to a
	// standard normal deviate.
	z := -6.0
	for i := 0; i < 12; i++ {
		z = float64(z + d.rand.Float64())
	}
	// mean = median * exp(s^2/2), so median = typical * exp(-s^2/2).
	f := expRounded(float64(float64(s*z) - float64(float64(s*s)/2)))
	return sim.Time(float64(float64(typical) * f))
}

// expRounded is e^x for |x| < 40 using only operations whose results Go
// rounds to float64 (an explicit conversion after each forbids fused
// multiply-adds), so every platform computes the same bits.
func expRounded(x float64) float64 {
	const ln2 = 0.6931471805599453
	k := math.Round(x / ln2)
	r := float64(x - float64(k*ln2))
	sum, term := 1.0, 1.0
	for i := 1; i <= 16; i++ {
		term = float64(float64(term*r) / float64(i))
		sum = float64(sum + term)
	}
	return math.Ldexp(sum, int(k))
}

// DiskstatsLine prints the device's /proc/diskstats line (block/genhd.c
// diskstats_show, the 20-field form of Linux 5.5 and later; nvme's major
// is 259). Discard and flush counters are zero: pagesim issues neither.
func (d *BlockDevice) DiskstatsLine(now sim.Time) string {
	ms := func(t sim.Time) uint64 { return uint64(t / sim.Millisecond) }
	s := &d.Stat
	inflight, _ := d.inflightAt(now, 0)
	ioTicks := s.IOTicks
	for _, iv := range d.ioBusy {
		if iv.start < now {
			ioTicks += min(iv.end, now) - iv.start
		}
	}
	return fmt.Sprintf("%4d %7d %s %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d\n",
		259, 0, d.Name,
		s.Reads, s.ReadMerges, s.SectorsRead, ms(s.ReadTicks),
		s.Writes, s.WriteMerges, s.SectorsWritten, ms(s.WriteTicks),
		inflight, ms(ioTicks), ms(s.ReadTicks+s.WriteTicks),
		0, 0, 0, 0, 0, 0)
}

// blockQueueAttrs lists the queue attributes by name, in sysfs order.
var blockQueueAttrs = []string{"nr_requests", "max_sectors_kb", "max_hw_sectors_kb", "logical_block_size", "rotational"}

// BlockKnobPrefix starts the dotted name of a queue attribute:
// block.nvme0n1.queue.nr_requests is /sys/block/nvme0n1/queue/nr_requests.
const BlockKnobPrefix = "block."

// IsBlockKnob reports whether name is a queue attribute of the machine's
// block device, by its sysfs path under /sys (block.nvme0n1.queue.NAME or
// block/nvme0n1/queue/NAME).
func IsBlockKnob(name string) bool {
	_, ok := blockKnobAttr(name)
	return ok
}

func blockKnobAttr(name string) (string, bool) {
	name = strings.TrimPrefix(strings.TrimSpace(name), "/sys/")
	name = strings.ReplaceAll(name, "/", ".")
	rest, ok := strings.CutPrefix(name, BlockKnobPrefix+DefaultBlockDevice().Name+".queue.")
	if !ok {
		return "", false
	}
	for _, a := range blockQueueAttrs {
		if a == rest {
			return a, true
		}
	}
	return "", false
}

// ValidateBlockKnob checks a value for a queue attribute without a machine.
func ValidateBlockKnob(name, value string) error {
	d := DefaultBlockDevice()
	return d.SetQueueAttr(name, value)
}

// SetQueueAttr writes a queue attribute as sysfs does (queue_attr_store):
// nr_requests from 4 (BLKDEV_MIN_RQ) up to 2048 (the nvme driver's largest
// queue depth pagesim accepts), max_sectors_kb from a page up to
// max_hw_sectors_kb; the others are read-only.
func (d *BlockDevice) SetQueueAttr(name, value string) error {
	attr, ok := blockKnobAttr(name)
	if !ok {
		attr = name
	}
	v, err := strconv.ParseUint(strings.TrimSpace(value), 10, 64)
	switch attr {
	case "nr_requests":
		if err != nil || v < 4 || v > 2048 {
			return fmt.Errorf("%s: %q is not a number from 4 to 2048", name, value)
		}
		d.Queue.NrRequests = v
	case "max_sectors_kb":
		if err != nil || v < PAGE_SIZE/1024 || v > d.Queue.MaxHWSectorsKB {
			return fmt.Errorf("%s: %q is not a number from %d to max_hw_sectors_kb (%d)", name, value, PAGE_SIZE/1024, d.Queue.MaxHWSectorsKB)
		}
		d.Queue.MaxSectorsKB = v
	case "max_hw_sectors_kb", "logical_block_size", "rotational":
		return fmt.Errorf("%s is read-only", name)
	default:
		return fmt.Errorf("unknown queue attribute %q", name)
	}
	return nil
}

// QueueAttr prints a queue attribute as sysfs does.
func (d *BlockDevice) QueueAttr(name string) (string, error) {
	attr, ok := blockKnobAttr(name)
	if !ok {
		attr = name
	}
	switch attr {
	case "nr_requests":
		return strconv.FormatUint(d.Queue.NrRequests, 10), nil
	case "max_sectors_kb":
		return strconv.FormatUint(d.Queue.MaxSectorsKB, 10), nil
	case "max_hw_sectors_kb":
		return strconv.FormatUint(d.Queue.MaxHWSectorsKB, 10), nil
	case "logical_block_size":
		return strconv.FormatUint(d.Queue.LogicalBlockSize, 10), nil
	case "rotational":
		if d.Queue.Rotational {
			return "1", nil
		}
		return "0", nil
	}
	return "", fmt.Errorf("unknown queue attribute %q", name)
}

// SetBlockKnob writes a queue attribute of the machine's device.
func (m *Machine) SetBlockKnob(name, value string) error { return m.Blk.SetQueueAttr(name, value) }
