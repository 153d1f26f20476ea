package mm

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFilemapOrderLoopFallsBackOneOrderAtATime(t *testing.T) {
	m := smallMachine(t, 8192, 1, 1)
	tk := m.testTask(0)
	f := m.NewFile("wal", nil)
	// A 64 KiB write at index 0 asks for an order-4 folio.
	got := m.FileWriteOrder(tk, f, 0, 16, GFP_NOFS|G__GFP_HIGHMEM|G__GFP_MOVABLE|G__GFP_WRITE, 4)
	require.Equal(t, uint64(16), got)
	m.MustCheckInvariants()
	o, slot := m.fileExtent(f, 0)
	head := o.file.pages[slot]
	assert.Equal(t, Order(4), m.Folio(head).Order)
	for k := 0; k < 16; k++ {
		assert.Equal(t, head, o.file.pages[k])
	}
	// An unaligned index lowers the order to its alignment.
	m.FileWriteOrder(tk, f, 18, 4, GFP_NOFS|G__GFP_MOVABLE, 4)
	o, slot = m.fileExtent(f, 18)
	assert.Equal(t, Order(1), m.Folio(o.file.pages[slot]).Order)
	assert.Equal(t, uint64(22), f.Size)
	m.FileSync(tk, f)
	m.FileTruncate(tk, f)
	assert.Equal(t, uint64(0), f.Resident())
	m.MustCheckInvariants()
}

// Files come and go (a build tree): an extent emptied by truncation or by
// reclaim gives its Owner ID back, so the owner table stays as large as
// what is cached, not as large as everything ever written; refaults are
// still counted from the file's shadow entries.
func TestEmptiedExtentsReturnTheirOwnersAndShadowsSurvive(t *testing.T) {
	m := newQuietMachine(t, 8192, 1, 1)
	tk := m.testTask(0)
	base := len(m.owners)
	for i := 0; i < 200; i++ {
		f := m.NewFile("tmp", nil)
		require.Equal(t, uint64(3), m.FileWrite(tk, f, 0, 3, GFP_HIGHUSER_MOVABLE))
		m.FileUnlink(tk, f)
		mustCheck(t, m, "file %d", i)
	}
	assert.LessOrEqual(t, len(m.owners), base+1, "unlinked files' extents were reused")

	// Reclaim empties a file's extent: its pages leave shadows, and the
	// read-back counts them as refaults.
	l := carveZone(t, m, nil, lowFreeFileLayout)
	f := l.file
	before := f.Resident()
	for i := 0; i < 3000 && f.Resident() > 0; i++ {
		m.AllocPages(tk, GFP_KERNEL, 0, 0, 0)
	}
	mustCheck(t, m, "pressure")
	evicted := before - f.Resident()
	require.Greater(t, evicted, uint64(0))
	assert.Equal(t, evicted, f.shadows)
	ownersBefore := len(m.owners)
	m.FileRead(tk, f, 0, f.Size, GFP_HIGHUSER_MOVABLE)
	mustCheck(t, m, "read back")
	assert.Greater(t, m.Nodes[0].Stat[WORKINGSET_REFAULT_FILE], int64(0))
	assert.LessOrEqual(t, len(m.owners), ownersBefore+int(f.Size/fileExtentPages)+1)
}
