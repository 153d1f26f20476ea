package deepcopy

import (
	"bytes"
	"runtime"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type node struct {
	name string
	next *node
	vals []int
}

type holder struct {
	n     int
	nodes []node
	// first points at nodes[0] and tail into the same array: pointers
	// into another object.
	first *node
	tail  []node
	field *int
	any   any
	iface stepper
	byPtr map[*node]string
	fn    func() int
	hook  func() `deepcopy:"-"`
	table *table
}

type stepper interface{ step() int }

// boxed is stored in an interface as a boxed copy; walker is stored
// directly (one pointer).
type boxed struct {
	n *node
	k int
}

func (b boxed) step() int { return b.k + len(b.n.vals) }

type walker struct{ n *node }

func (w walker) step() int { return len(w.n.vals) }

type table struct{ rows []string }

func init() { Share[table]() }

func topLevel() int { return 7 }

func newHolder() *holder {
	h := &holder{n: 3, nodes: make([]node, 3, 5)}
	for i := range h.nodes {
		h.nodes[i] = node{name: string(rune('a' + i)), vals: []int{i, i * 2}}
	}
	h.nodes[0].next = &h.nodes[1]
	h.nodes[2].next = &h.nodes[0]
	h.first = &h.nodes[0]
	h.tail = h.nodes[1:]
	h.field = &h.n
	h.any = &h.nodes[2]
	h.iface = boxed{n: &h.nodes[1], k: 4}
	h.byPtr = map[*node]string{&h.nodes[0]: "zero", &h.nodes[2]: "two"}
	h.fn = topLevel
	h.hook = func() {}
	h.table = &table{rows: []string{"x"}}
	return h
}

func TestACopySharesNothingMutableWithItsOriginalAndKeepsItsShape(t *testing.T) {
	h := newHolder()
	before, err := Digest(h)
	require.NoError(t, err)
	c, n, err := Copy(h)
	require.NoError(t, err)
	assert.Positive(t, n)
	after, err := Digest(c)
	require.NoError(t, err)
	assert.Equal(t, before, after, "a copy digests as its original")

	// The shape: pointers into the copy's own array, in the same places.
	assert.Same(t, &c.nodes[0], c.first)
	assert.Same(t, &c.nodes[1], &c.tail[0])
	assert.Same(t, &c.nodes[1], c.nodes[0].next)
	assert.Same(t, &c.nodes[0], c.nodes[2].next)
	assert.Same(t, &c.n, c.field)
	assert.Same(t, &c.nodes[2], c.any.(*node))
	assert.Same(t, &c.nodes[1], c.iface.(boxed).n)
	assert.Equal(t, 5, cap(c.nodes), "the capacity is kept")
	assert.Len(t, c.byPtr, 2)
	assert.Equal(t, "zero", c.byPtr[&c.nodes[0]], "map keys are the copy's pointers")
	assert.Equal(t, "two", c.byPtr[&c.nodes[2]])
	assert.Equal(t, 7, c.fn(), "a top-level function is shared")
	assert.Nil(t, c.hook, "a field tagged deepcopy:\"-\" is left zero")
	assert.Same(t, h.table, c.table, "a shared type is not copied")

	// Writes to the copy do not reach the original.
	c.nodes[1].vals[0] = 99
	c.tail[1].name = "z"
	*c.field = 42
	c.first.name = "q"
	assert.Equal(t, "q", c.nodes[0].name)
	assert.Equal(t, "z", c.nodes[2].name)
	assert.Equal(t, 99, c.iface.(boxed).n.vals[0])
	got, err := Digest(h)
	require.NoError(t, err)
	assert.Equal(t, before, got, "the original is unchanged")
	assert.Equal(t, 1, h.nodes[1].vals[0])
	assert.Equal(t, 3, h.n)
	changed, err := Digest(c)
	require.NoError(t, err)
	assert.NotEqual(t, before, changed, "a changed copy digests otherwise")
}

func TestAPointerShapedValueInAnInterfaceIsCopiedWithItsTarget(t *testing.T) {
	h := newHolder()
	h.iface = walker{&h.nodes[2]}
	c, _, err := Copy(h)
	require.NoError(t, err)
	assert.Same(t, &c.nodes[2], c.iface.(walker).n)
}

func TestAClosureIsRefusedWithThePathToIt(t *testing.T) {
	h := newHolder()
	k := 3
	h.fn = func() int { return k }
	_, _, err := Copy(h)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "root.fn: a closure")
	_, err = Digest(h)
	require.Error(t, err)

	h = newHolder()
	h.any = []any{1, h.nodes[0].name, stepper(walker{}).step}
	_, _, err = Copy(h)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "root.any([]interface {})[2](func() int): a closure")
}

func TestDigestsDifferWhenAnyFieldDiffers(t *testing.T) {
	base, err := Digest(newHolder())
	require.NoError(t, err)
	for _, tc := range []struct {
		name   string
		change func(h *holder)
	}{
		{"an int", func(h *holder) { h.n++ }},
		{"a string in a slice of structs", func(h *holder) { h.nodes[2].name = "c2" }},
		{"an element past a slice's length", func(h *holder) { h.nodes[:4][3].name = "x" }},
		{"where a pointer points", func(h *holder) { h.first = &h.nodes[1] }},
		{"a map value", func(h *holder) { h.byPtr[&h.nodes[0]] = "nil" }},
		{"an interface's dynamic type", func(h *holder) { h.iface = walker{&h.nodes[1]} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHolder()
			tc.change(h)
			d, err := Digest(h)
			require.NoError(t, err)
			assert.NotEqual(t, base, d)
		})
	}
}

type bigHolder struct {
	pages  []uint64
	prefix []uint64
	boxed  any
	byName map[string][]uint64
	small  []uint64
	inner  *uint64
}

type pagesBox struct{ pages []uint32 }

func newBigHolder() *bigHolder {
	b := &bigHolder{pages: make([]uint64, 1<<14, 1<<15), byName: map[string][]uint64{"a": make([]uint64, 1<<14)}}
	for i := range b.pages {
		b.pages[i] = uint64(i % 7)
	}
	b.prefix = b.pages[:100]
	b.boxed = pagesBox{make([]uint32, 1<<14)}
	b.small = []uint64{1, 2, 3}
	return b
}

// Pack keeps the large pointer-free arrays compressed; Unpack gives back
// a graph in the original's state, as often as asked.
func TestAPackedCopyUnpacksToTheOriginalsState(t *testing.T) {
	b := newBigHolder()
	want, err := Digest(b)
	require.NoError(t, err)
	p, err := Pack(b, 4096)
	require.NoError(t, err)
	assert.Less(t, p.Bytes, p.RunBytes/3, "the arrays outside the map compress")
	for range 2 {
		u, n, err := p.Unpack()
		require.NoError(t, err)
		assert.Positive(t, n)
		got, err := Digest(u)
		require.NoError(t, err)
		assert.Equal(t, want, got)
		assert.Len(t, u.pages, 1<<14)
		assert.Equal(t, 1<<15, cap(u.pages))
		assert.Same(t, &u.pages[0], &u.prefix[0], "one array, as in the original")
		u.pages[5] = 99
		assert.Equal(t, uint64(5), b.pages[5])
	}

	b.inner = &b.pages[3]
	_, err = Pack(b, 4096)
	require.Error(t, err, "a pointer into a packed array")
	assert.Contains(t, err.Error(), "Pack compressed")
}

// An array's byte planes of differences give the array back, whatever
// its element size.
func TestBytePlanesGiveTheArrayBack(t *testing.T) {
	for _, size := range []int{1, 3, 8, 24, 40, 44} {
		for _, n := range []int{1, 9, 17, 40, 1001} {
			b := make([]byte, n*size)
			for i := range b {
				b[i] = byte(i*i + 7*(i%size) + i/size*(i%5))
			}
			pl := planes(b, size)
			got := make([]byte, len(b))
			unplanes(got, pl, size)
			assert.Equal(t, b, got, "%d elements of %d bytes", n, size)
			// In pieces, as DecodeYield reads a large array.
			clear(got)
			for from := 0; from < n; from += 13 {
				unplanesRange(got, pl, size, from, min(from+13, n))
			}
			assert.Equal(t, b, got, "%d elements of %d bytes, in pieces of 13", n, size)
		}
	}
}

type namedEvent struct {
	at   int64
	comm string
}

type eventLog struct{ events []namedEvent }

// An array whose elements hold strings packs too (a machine's tracepoint
// ring: each event's comm): the strings built at run time stay alive
// while only the packed copy holds them, through collections, and the
// unpacked copy reads them back. (Without pack.strs the collector
// finds a bad pointer: GODEBUG=clobberfree=1 makes it certain.)
func TestAPackedArrayKeepsItsStringsAlive(t *testing.T) {
	l := &eventLog{events: make([]namedEvent, 2000)}
	for i := range l.events {
		l.events[i] = namedEvent{at: int64(i), comm: "kworker/" + strconv.Itoa(i%97) + ":" + strconv.Itoa(i)}
	}
	want, err := Digest(l)
	require.NoError(t, err)
	p, err := Pack(l, 512)
	require.NoError(t, err)
	assert.Len(t, p.state.packs, 1, "the array is packed")
	l = nil
	for range 3 {
		runtime.GC()
		garbage := make([][]byte, 0, 1000)
		for i := range 1000 {
			garbage = append(garbage, bytes.Repeat([]byte{byte(i)}, 64))
		}
		_ = garbage
	}
	u, _, err := p.Unpack()
	require.NoError(t, err)
	runtime.GC()
	got, err := Digest(u)
	require.NoError(t, err)
	assert.Equal(t, want, got)
	assert.Equal(t, "kworker/3:1943", u.events[1943].comm)
}
