package mm

import (
	"testing"

	"github.com/pagesim/pagesim/engine/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func smallMachine(t testing.TB, pagesPerNode uint64, nodes, cpus int) *Machine {
	cfg, err := SimpleLayout(pagesPerNode, nodes, cpus)
	require.NoError(t, err)
	m, err := NewMachine(cfg)
	require.NoError(t, err)
	m.MustCheckInvariants()
	return m
}

type chunk struct {
	pfn   PFN
	order Order
}

func TestRandomAllocFreeKeepsEveryInvariant(t *testing.T) {
	m := smallMachine(t, 16384, 2, 2)
	rng := sim.NewRand(1)
	tasks := []*sim.Task{m.testTask(0), m.testTask(1), m.testTask(2), m.testTask(3)}
	masks := []GFP{GFP_KERNEL, GFP_HIGHUSER_MOVABLE, GFP_KERNEL | __GFP_RECLAIMABLE, GFP_NOWAIT, GFP_ATOMIC, GFP_TRANSHUGE_LIGHT}
	var live []chunk
	initialFree := m.NrFreePages()
	for i := 0; i < 3000; i++ {
		tk := tasks[rng.Intn(len(tasks))]
		if len(live) > 0 && rng.Intn(3) == 0 {
			j := rng.Intn(len(live))
			c := live[j]
			live[j] = live[len(live)-1]
			live = live[:len(live)-1]
			m.FreePages(tk, c.pfn, c.order)
		} else {
			order := Order(rng.Intn(4))
			if rng.Intn(10) == 0 {
				order = Order(rng.Intn(NR_PAGE_ORDERS))
			}
			gfp := masks[rng.Intn(len(masks))]
			if order > 0 {
				gfp |= __GFP_COMP
			}
			if pfn := m.allocSync(tk, gfp, order, rng.Intn(2), 0); pfn != NilPFN {
				live = append(live, chunk{pfn, order})
			}
		}
		if err := m.CheckInvariants(); err != nil {
			t.Fatalf("after operation %d: %v", i, err)
		}
	}
	for _, c := range live {
		m.FreePages(tasks[0], c.pfn, c.order)
	}
	for _, tk := range tasks {
		m.DrainLocalPages(tk)
	}
	m.MustCheckInvariants()
	assert.Equal(t, initialFree, m.NrFreePages(), "every page comes back")
	assert.Greater(t, m.Event(PGALLOC_NORMAL), uint64(0))
	assert.Equal(t, m.Event(PGALLOC_NORMAL), m.Event(PGFREE), "pgalloc and pgfree balance once everything is freed")
}

func TestFreeingEverythingMergesBackToMaxOrder(t *testing.T) {
	m := smallMachine(t, 8192, 1, 1)
	z := m.Nodes[0].Zones[ZONE_NORMAL]
	before := [NR_PAGE_ORDERS]uint64{}
	for o := range before {
		before[o] = z.NrFree(Order(o))
	}
	tk := m.testTask(0)
	var got []PFN
	for {
		pfn := m.allocSync(tk, GFP_KERNEL|__GFP_NORETRY, 0, 0, 0)
		if pfn == NilPFN {
			break
		}
		got = append(got, pfn)
	}
	require.NotEmpty(t, got)
	assert.LessOrEqual(t, z.FreePages(), z.WmarkPages(WMARK_MIN), "allocation stops at the min watermark")
	m.MustCheckInvariants()
	for _, pfn := range got {
		m.FreePages(tk, pfn, 0)
	}
	m.DrainLocalPages(tk)
	m.MustCheckInvariants()
	for o := range before {
		assert.Equal(t, before[o], z.NrFree(Order(o)), "order %d", o)
	}
}

func TestUnmovableRequestsClaimAWholeMovableBlockAndTraceIt(t *testing.T) {
	m := smallMachine(t, 4096, 1, 1)
	z := m.Nodes[0].Zones[ZONE_NORMAL]
	require.Equal(t, uint64(0), z.NrBlocks(MIGRATE_UNMOVABLE))
	tk := m.testTask(0)
	pfn := m.allocSync(tk, GFP_KERNEL, 0, 0, 0)
	require.NotEqual(t, NilPFN, pfn)
	assert.Equal(t, MIGRATE_UNMOVABLE, m.PageblockMigratetype(pfn))
	// The only free chunks are of order 10: claiming one retypes both of
	// its pageblocks (change_pageblock_range) in one fallback event.
	assert.Equal(t, uint64(2), z.NrBlocks(MIGRATE_UNMOVABLE))
	assert.Equal(t, uint64(1), m.Frag.ClaimWhole)
	assert.Equal(t, uint64(2), m.Frag.MovableBlocksLost)
	ev := m.Trace.Events()
	require.Len(t, ev, 1)
	assert.Equal(t, "mm_page_alloc_extfrag", ev[0].Name())
	assert.Contains(t, ev[0].Fields(), "alloc_order=0 fallback_order=10 pageblock_order=9 alloc_migratetype=0 fallback_migratetype=1 fragmenting=0 change_ownership=1")
	m.MustCheckInvariants()
}

func TestThisnodeNeverLeavesItsNode(t *testing.T) {
	m := smallMachine(t, 4096, 2, 1)
	tk := m.testTask(0)
	n := 0
	for {
		pfn := m.allocSync(tk, GFP_KERNEL|__GFP_THISNODE, 0, 0, 0)
		if pfn == NilPFN {
			break
		}
		require.Equal(t, 0, m.ZoneOf(pfn).Node.ID)
		n++
	}
	assert.Greater(t, n, 1000)
	// Without __GFP_THISNODE the same request moves on to node 1.
	pfn := m.allocSync(tk, GFP_KERNEL, 0, 0, 0)
	require.NotEqual(t, NilPFN, pfn)
	assert.Equal(t, 1, m.ZoneOf(pfn).Node.ID)
	assert.Greater(t, m.Nodes[1].Zones[ZONE_NORMAL].NumaEvents[NUMA_MISS], uint64(0))
	m.MustCheckInvariants()
}

func TestCompoundPagesHaveHeadAndTails(t *testing.T) {
	m := smallMachine(t, 4096, 1, 1)
	tk := m.testTask(0)
	pfn := m.allocSync(tk, GFP_TRANSHUGE_LIGHT, 9, 0, 0)
	require.NotEqual(t, NilPFN, pfn)
	assert.Equal(t, PFN(0), pfn%512)
	assert.NotZero(t, m.pages[pfn].flags&pgHead)
	assert.NotZero(t, m.pages[pfn+511].flags&pgTail)
	m.MustCheckInvariants()
	m.FreePages(tk, pfn, 9)
	m.MustCheckInvariants()
}

func TestInvariantViolationPanicsWithADump(t *testing.T) {
	m := smallMachine(t, 4096, 1, 1)
	z := m.Nodes[0].Zones[ZONE_NORMAL]
	z.Stat[NR_FREE_PAGES]++
	err := m.CheckInvariants()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "NR_FREE_PAGES")
	assert.Contains(t, err.Error(), "zone 0/Normal")
	assert.Panics(t, m.MustCheckInvariants)
}
