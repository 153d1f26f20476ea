package mm

import (
	"strconv"
	"testing"

	"github.com/pagesim/pagesim/engine/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// filePagesOn counts the file's cached pages on each node.
func filePagesOn(m *Machine, f *File) []uint64 {
	out := make([]uint64, len(m.Nodes))
	for _, o := range f.extents {
		if o == nil {
			continue
		}
		for i, head := range o.file.pages {
			if head != NilPFN && (i == 0 || o.file.pages[i-1] != head) {
				out[m.ZoneOf(head).Node.ID] += m.folioNr(head)
			}
		}
	}
	return out
}

func TestNodeDirtyLimitIsTheNodesShareOfItsDirtyableMemory(t *testing.T) {
	m := newQuietMachine(t, 8192, 2, 1)
	inWorld(t, m, 0, func(tk *sim.Task) {
		require.Equal(t, uint64(1000), m.FileWrite(tk, m.NewFile("f", nil), 0, 1000, GFP_HIGHUSER_MOVABLE))
	})
	var reserve [2]uint64
	var total uint64
	for _, z := range m.Zones() {
		var max int64
		for j := int(z.Type); j < len(z.LowmemReserve); j++ {
			if z.LowmemReserve[j] > max {
				max = z.LowmemReserve[j]
			}
		}
		r := min(uint64(max)+z.RawWatermark(WMARK_HIGH), z.ManagedPages)
		reserve[z.Node.ID] += r
		total += r
	}
	require.Equal(t, total, m.TotalreservePages(), "calculate_totalreserve_pages")
	dirtyable := func(n *Node) uint64 {
		var free uint64
		for _, z := range n.Zones {
			if z != nil {
				free += uint64(z.Stat[NR_FREE_PAGES])
			}
		}
		return free - min(free, reserve[n.ID]) + uint64(n.Stat[NR_INACTIVE_FILE]+n.Stat[NR_ACTIVE_FILE])
	}
	n0, n1 := m.Nodes[0], m.Nodes[1]
	assert.Equal(t, 20*dirtyable(n0)/100, m.nodeDirtyLimit(m.Nodes[0]), "vm.dirty_ratio=20 of node 0's dirtyable memory")
	assert.Equal(t, 20*dirtyable(n1)/100, m.nodeDirtyLimit(m.Nodes[1]))
	require.NoError(t, m.SetSysctl("vm.dirty_bytes", "4194304"))
	v, _ := m.GetSysctl("vm.dirty_ratio")
	assert.Equal(t, "0", v, "writing vm.dirty_bytes zeroes vm.dirty_ratio")
	global := dirtyable(n0) + dirtyable(n1) + 1
	assert.Equal(t, 1024*dirtyable(n0)/global, m.nodeDirtyLimit(m.Nodes[0]), "node 0's share of 4 MiB, 1024 pages")
	require.NoError(t, m.SetSysctl("vm.dirty_ratio", "10"))
	v, _ = m.GetSysctl("vm.dirty_bytes")
	assert.Equal(t, "0", v, "writing vm.dirty_ratio zeroes vm.dirty_bytes")
	assert.Equal(t, 10*dirtyable(n0)/100, m.nodeDirtyLimit(m.Nodes[0]))
	assert.Error(t, m.SetSysctl("vm.dirty_bytes", "4096"), "at least two pages")
	assert.Error(t, m.SetSysctl("vm.dirty_ratio", "101"))
}

// dirtyOkOracle is node_dirty_ok computed from the counters with the
// test's own arithmetic (vm.dirty_ratio of free pages above
// calculate_totalreserve_pages plus the file LRU).
func dirtyOkOracle(m *Machine, n *Node, ratio uint64) bool {
	var free, reserve uint64
	for _, z := range n.Zones {
		if z == nil || z.PresentPages == 0 {
			continue
		}
		free += uint64(z.Stat[NR_FREE_PAGES])
		var max int64
		for j := int(z.Type); j < len(z.LowmemReserve); j++ {
			if z.LowmemReserve[j] > max {
				max = z.LowmemReserve[j]
			}
		}
		reserve += min(uint64(max)+z.RawWatermark(WMARK_HIGH), z.ManagedPages)
	}
	dirtyable := free - min(free, reserve) + uint64(n.Stat[NR_INACTIVE_FILE]+n.Stat[NR_ACTIVE_FILE])
	return uint64(n.Stat[NR_FILE_DIRTY]+n.Stat[NR_WRITEBACK]) <= ratio*dirtyable/100
}

func TestWritesSpreadToNodesWithinTheirDirtyLimits(t *testing.T) {
	tests := []struct {
		name  string
		ratio uint64
		pages uint64
		// want is where the pages went, node 0 then node 1.
		wantNode1, wantSlow bool
	}{
		{"past node 0's limit, writes go to node 1", 20, 2000, true, false},
		{"past both nodes' limits, the slow path writes locally again", 1, 400, true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := newQuietMachine(t, 8192, 2, 1)
			require.NoError(t, m.SetSysctl("vm.dirty_ratio", strconv.FormatUint(tc.ratio, 10)))
			f := m.NewFile("log", nil)
			r := m.NewFile("data", nil)
			r.Size = 100
			var want [2]uint64
			var wantSlow uint64
			inWorld(t, m, 0, func(tk *sim.Task) {
				for i := uint64(0); i < tc.pages; i++ {
					// The page goes to the first node within its
					// limit; with none, the slow path takes node 0.
					switch {
					case dirtyOkOracle(m, m.Nodes[0], tc.ratio):
						want[0]++
					case dirtyOkOracle(m, m.Nodes[1], tc.ratio):
						want[1]++
					default:
						want[0]++
						wantSlow++
					}
					require.Equal(t, uint64(1), m.FileWrite(tk, f, i, 1, GFP_HIGHUSER_MOVABLE))
					require.Equal(t, want[:], filePagesOn(m, f), "page %d", i)
				}
				_, missing := m.FileRead(tk, r, 0, 100, GFP_HIGHUSER_MOVABLE)
				require.Equal(t, uint64(100), missing)
			})
			assert.Equal(t, tc.wantNode1, want[1] > 0, "node 1 took pages")
			assert.Equal(t, tc.wantSlow, wantSlow > 0, "some writes found every node over its limit")
			assert.Equal(t, wantSlow, m.Slow.Entered, "one slow-path entry per page written with every node over its limit")
			assert.Equal(t, []uint64{100, 0}, filePagesOn(m, r), "reads carry no __GFP_WRITE and stay local")
		})
	}
}
