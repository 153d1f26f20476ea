package workload

import (
	"testing"

	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// small boots a 64 MiB single-node machine with two CPUs.
func small(t *testing.T) *mm.Machine {
	t.Helper()
	cfg, err := mm.SimpleLayout(16384, 1, 2)
	require.NoError(t, err)
	m, err := mm.NewMachine(cfg)
	require.NoError(t, err)
	return m
}

// runToEnd runs the world until the task exits, checking the machine after
// every event, and fails if it has not ended within limit.
func runToEnd(t *testing.T, m *mm.Machine, tk *sim.Task, limit sim.Time) {
	t.Helper()
	for !tk.Exited() {
		next := m.World.NextEventTime()
		require.True(t, next != sim.Never && next <= limit, "task %s did not end by %s s", tk.Name, limit)
		m.World.Step()
		require.NoError(t, m.CheckInvariants())
	}
}

func TestProgramsRunToTheirEnd(t *testing.T) {
	tests := []struct {
		name  string
		build func(m *mm.Machine) (sim.Program, *Progress)
		check func(t *testing.T, m *mm.Machine, p *Progress)
	}{
		{
			name: "a faulter maps the pages it was asked for in batches",
			build: func(m *mm.Machine) (sim.Program, *Progress) {
				r := m.NewAnonRegion("heap", nil, 2048)
				r.NoHugepage = true
				f := &Faulter{M: m, Region: r, Pages: 1000, Batch: 100, Interval: sim.Millisecond}
				return f, &f.Progress
			},
			check: func(t *testing.T, m *mm.Machine, p *Progress) {
				assert.Equal(t, uint64(1000), p.Ops)
				assert.GreaterOrEqual(t, p.Elapsed(0), 9*sim.Millisecond, "ten batches, nine pauses")
				assert.Equal(t, int64(1000), m.GlobalNodeState(mm.NR_ANON_MAPPED))
			},
		},
		{
			name: "a pinning faulter pins everything it maps",
			build: func(m *mm.Machine) (sim.Program, *Progress) {
				r := m.NewAnonRegion("ring", nil, 1024)
				f := &Faulter{M: m, Region: r, Pin: true}
				return f, &f.Progress
			},
			check: func(t *testing.T, m *mm.Machine, p *Progress) {
				assert.Equal(t, uint64(1024), m.Owners()[len(m.Owners())-1].Pinned)
			},
		},
		{
			name: "a writer writes, syncs and truncates its file each pass",
			build: func(m *mm.Machine) (sim.Program, *Progress) {
				w := &CacheWriter{M: m, File: m.NewFile("log", nil), Pages: 512, Chunk: 64, GFP: mm.GFP_HIGHUSER_MOVABLE, Sync: true, Unlink: true}
				return w, &w.Progress
			},
			check: func(t *testing.T, m *mm.Machine, p *Progress) {
				assert.Equal(t, uint64(512), p.Ops)
				assert.Zero(t, m.GlobalNodeState(mm.NR_FILE_PAGES), "truncated after the pass")
				assert.Equal(t, int64(512), m.GlobalNodeState(mm.NR_WRITTEN))
			},
		},
		{
			name: "a reader reads a file it finds cached without misses",
			build: func(m *mm.Machine) (sim.Program, *Progress) {
				f := m.NewFile("data", nil)
				m.FileWrite(m.World.NewTask("setup", 0, nil, sim.Never), f, 0, 300, mm.GFP_HIGHUSER_MOVABLE)
				r := &CacheReader{M: m, File: f, Chunk: 100}
				return r, &r.Progress
			},
			check: func(t *testing.T, m *mm.Machine, p *Progress) {
				assert.Equal(t, uint64(300), p.Ops)
			},
		},
		{
			name: "a slab churner keeps its cache at the working size",
			build: func(m *mm.Machine) (sim.Program, *Progress) {
				c := m.NewSlabCache("dentry", nil, 1, true)
				s := &SlabChurner{M: m, Cache: c, GFP: mm.GFP_KERNEL, Slabs: 40, Batch: 8, Steps: 20}
				return s, &s.Progress
			},
			check: func(t *testing.T, m *mm.Machine, p *Progress) {
				assert.Equal(t, uint64(160), p.Ops)
				assert.Equal(t, int64(40*2*mm.PAGE_SIZE), m.GlobalNodeState(mm.NR_SLAB_RECLAIMABLE_B))
			},
		},
		{
			name: "qemu with vfio maps and pins guest RAM 2 MiB at a time, THPs first",
			build: func(m *mm.Machine) (sim.Program, *Progress) {
				r := m.NewAnonRegion("guest", nil, 8*mm.HPAGE_PMD_NR+100)
				r.Madvised = true
				q := &QemuVfio{M: m, Region: r, Pin: true}
				return q, &q.Progress
			},
			check: func(t *testing.T, m *mm.Machine, p *Progress) {
				assert.Equal(t, uint64(8*mm.HPAGE_PMD_NR+100), p.Ops, "every guest page")
				guest := m.Owners()[len(m.Owners())-1]
				assert.Equal(t, p.Ops, guest.Pinned, "all of it pinned")
				assert.Positive(t, m.Event(mm.THP_FAULT_ALLOC), "madvised ranges start as THPs")
				assert.Positive(t, p.Elapsed(0))
			},
		},
		{
			name: "qemu without vfio only touches guest RAM",
			build: func(m *mm.Machine) (sim.Program, *Progress) {
				q := &QemuVfio{M: m, Region: m.NewAnonRegion("guest", nil, 3000)}
				return q, &q.Progress
			},
			check: func(t *testing.T, m *mm.Machine, p *Progress) {
				assert.Equal(t, uint64(3000), p.Ops)
				assert.Zero(t, m.Owners()[len(m.Owners())-1].Pinned)
			},
		},
		{
			name: "a page-cache writer fills files in chunks and writes each back when full",
			build: func(m *mm.Machine) (sim.Program, *Progress) {
				w := &PageCacheWriter{M: m, FilePages: 512, ChunkPages: 128}
				p := &Progress{}
				return sim.ProgramFunc(func(world *sim.World, t *sim.Task) sim.Time {
					p.begin(t)
					if w.Written >= 2048 {
						p.Ops, p.Failed = w.Written, w.Failed
						return p.finish(t)
					}
					return w.Step(world, t)
				}), p
			},
			check: func(t *testing.T, m *mm.Machine, p *Progress) {
				assert.Equal(t, uint64(2048), p.Ops, "four files of 512 pages")
				assert.Equal(t, int64(2048), m.GlobalNodeState(mm.NR_WRITTEN), "each written back when full")
				assert.Equal(t, int64(2048), m.GlobalNodeState(mm.NR_FILE_PAGES))
			},
		},
		{
			name: "an allocator frees each chunk after its hold",
			build: func(m *mm.Machine) (sim.Program, *Progress) {
				a := &Allocator{M: m, GFP: mm.MustParseGFP("GFP_KERNEL|__GFP_COMP"), Order: 3, Nid: -1, Count: 10, Hold: 5 * sim.Millisecond, Interval: sim.Millisecond}
				return a, &a.Progress
			},
			check: func(t *testing.T, m *mm.Machine, p *Progress) {
				assert.Equal(t, uint64(10), p.Ops)
				assert.Equal(t, m.Event(mm.PGALLOC_NORMAL), m.Event(mm.PGFREE), "everything came back")
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := small(t)
			prog, p := tc.build(m)
			tk := m.World.NewTask("worker", 1, prog, 0)
			runToEnd(t, m, tk, 10*sim.Second)
			assert.True(t, p.Done)
			assert.Zero(t, p.Failed)
			tc.check(t, m, p)
		})
	}
}

func TestPinnerHoldsItsPinsThenLetsGo(t *testing.T) {
	m := small(t)
	setup := m.World.NewTask("setup", 0, nil, sim.Never)
	r := m.NewAnonRegion("heap", nil, 8*mm.PageblockNrPages)
	r.NoHugepage = true
	for r.Cursor < r.Pages {
		require.True(t, m.FaultAnonNext(setup, r, false).OK)
	}
	p := &Pinner{M: m, Owner: r.Owner, Fraction: 0.5, Hold: 100 * sim.Millisecond}
	tk := m.World.NewTask("io_uring", 1, p, 0)
	m.World.RunUntil(50*sim.Millisecond, nil)
	assert.InDelta(t, 4, p.Ops, 1, "half of the region's blocks")
	assert.Equal(t, p.Pages, r.Owner.Pinned)
	runToEnd(t, m, tk, sim.Second)
	assert.Zero(t, r.Owner.Pinned)
}

// A guest larger than memory fails its mapping with the fault that found
// no memory, and ends there.
func TestQemuStopsAtTheFirstFailedFault(t *testing.T) {
	m := small(t)
	r := m.NewAnonRegion("guest", nil, 32768) // twice the machine
	q := &QemuVfio{M: m, Region: r, Pin: true}
	tk := m.World.NewTask("qemu", 1, q, 0)
	runToEnd(t, m, tk, 60*sim.Second)
	assert.True(t, q.Done)
	assert.Equal(t, uint64(1), q.Failed)
	assert.Less(t, q.Ops, r.Pages)
	assert.Equal(t, r.Cursor, q.Ops)
}

// FillPageCache leaves clean page cache in 16 MiB files on the task's node.
func TestFillPageCacheLeavesCleanFiles(t *testing.T) {
	m := small(t)
	tk := m.World.NewTask("fill", 0, nil, sim.Never)
	files := FillPageCache(m, tk, "cache", nil, 40<<20)
	require.Len(t, files, 3, "16 + 16 + 8 MiB")
	var pages uint64
	for _, f := range files {
		pages += f.Resident()
	}
	assert.Equal(t, uint64(40<<20/mm.PAGE_SIZE), pages)
	assert.Equal(t, int64(pages), m.GlobalNodeState(mm.NR_FILE_PAGES))
	assert.Zero(t, m.GlobalNodeState(mm.NR_FILE_DIRTY), "written back")
	require.NoError(t, m.CheckInvariants())

	// More than fits: it stops at the first short write.
	more := FillPageCache(m, tk, "more", nil, 128<<20)
	var got uint64
	for _, f := range more {
		got += f.Resident()
	}
	assert.Less(t, got, uint64(128<<20/mm.PAGE_SIZE))
	require.NoError(t, m.CheckInvariants())
}

func TestARandomReaderReadsTheChunksItsStreamDraws(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		m := small(t)
		f := m.NewFile("data", nil)
		f.Size = 64 // 16 chunks of 4 pages
		r := &RandomReader{M: m, File: f, Chunk: 4, GFP: mm.GFP_HIGHUSER_MOVABLE, Rand: sim.NewRand(seed)}
		m.World.NewTask("reader", 1, r, 0)
		for r.Ops < 12 {
			m.World.Step()
			require.NoError(t, m.CheckInvariants())
		}
		// The same draws, made here: the chunks read, each once from disk.
		want := map[uint64]bool{}
		d := sim.NewRand(seed)
		for i := 0; i < 12; i++ {
			want[d.Uint64n(16)] = true
		}
		assert.Equal(t, uint64(4*len(want)), r.Misses, "seed %d", seed)
		assert.Equal(t, uint64(4*len(want)), f.Resident(), "seed %d", seed)
		assert.Less(t, len(want), 12, "seed %d: 12 draws from 16 chunks repeat some", seed)
	}
}

func TestASlabCyclerGrowsToHiShrinksToLoAndAgain(t *testing.T) {
	m := small(t)
	c := m.NewSlabCache("inode", nil, 3, true)
	s := &SlabCycler{M: m, Cache: c, GFP: mm.GFP_KERNEL, Lo: 20, Hi: 100, Batch: 10, Rand: sim.NewRand(1), Interval: sim.Millisecond}
	m.World.NewTask("cycler", 1, s, 0)
	var sizes []int
	for s.Cycles < 2 {
		m.World.Step()
		require.NoError(t, m.CheckInvariants())
		sizes = append(sizes, c.NrSlabs())
	}
	// From the first time it holds Hi slabs, it stays between Lo and Hi.
	first := 0
	for sizes[first] < 100 {
		first++
	}
	lo, hi := 100, 0
	for _, n := range sizes[first:] {
		lo, hi = min(lo, n), max(hi, n)
	}
	assert.Equal(t, 20, lo)
	assert.Equal(t, 100, hi)
	// 100 to fill, 80 to refill after the first shrink, and the batch of
	// the step that found the second shrink done.
	assert.Equal(t, uint64(190), s.Ops)
	assert.Equal(t, uint64(c.NrSlabs()*8), c.Pages)
}
