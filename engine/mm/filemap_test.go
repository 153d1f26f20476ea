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
