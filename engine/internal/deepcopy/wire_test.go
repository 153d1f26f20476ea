package deepcopy

import (
	"reflect"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// catalog is a shared table known by name (ShareNamed), as a scenario's
// Spec is.
type catalog struct{ id string }

var catalogs = map[string]*catalog{"one": {"one"}}

type withCatalog struct {
	c *catalog
	h *holder
}

// unlisted is a type no one registered.
type unlisted struct{ n int }

func init() {
	Register[*node]()
	Register[boxed]()
	Register[walker]()
	RegisterFunc(topLevel)
	ShareNamed(func(c *catalog) string { return c.id }, func(id string) (*catalog, bool) { c, ok := catalogs[id]; return c, ok })
}

func wireHolder() *holder {
	h := newHolder()
	h.table = nil // shared without a name: Encode refuses it (below)
	return h
}

func TestAGraphWrittenAsBytesReadsBackWithItsShape(t *testing.T) {
	h := wireHolder()
	before, err := Digest(h)
	require.NoError(t, err)
	b, err := Encode(h)
	require.NoError(t, err)
	c, err := Decode[holder](b)
	require.NoError(t, err)
	after, err := Digest(c)
	require.NoError(t, err)
	assert.Equal(t, before, after, "the graph read back digests as the one written")

	assert.Same(t, &c.nodes[0], c.first, "a pointer into an array points into the array read back")
	assert.Same(t, &c.nodes[1], &c.tail[0], "a sub-slice shares its array")
	assert.Same(t, &c.nodes[1], c.nodes[0].next)
	assert.Same(t, &c.nodes[0], c.nodes[2].next)
	assert.Same(t, &c.n, c.field, "a pointer to a field points at the field")
	assert.Same(t, &c.nodes[2], c.any.(*node))
	assert.Same(t, &c.nodes[1], c.iface.(boxed).n)
	assert.Equal(t, 5, cap(c.nodes), "the capacity is kept")
	assert.Equal(t, "zero", c.byPtr[&c.nodes[0]], "map keys are the new pointers")
	assert.Equal(t, "two", c.byPtr[&c.nodes[2]])
	assert.Equal(t, 7, c.fn(), "a registered function is found by its name")
	assert.Nil(t, c.hook, "a field tagged deepcopy:\"-\" is left zero")
	c.nodes[1].vals[0] = 99
	assert.Equal(t, 1, h.nodes[1].vals[0], "the graph read back shares nothing with the one written")
}

func TestASharedTableIsWrittenAsItsName(t *testing.T) {
	w := &withCatalog{c: catalogs["one"], h: wireHolder()}
	b, err := Encode(w)
	require.NoError(t, err)
	got, err := Decode[withCatalog](b)
	require.NoError(t, err)
	assert.Same(t, catalogs["one"], got.c)

	h := newHolder() // its table is shared with no name
	_, err = Encode(h)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "root.table: a shared *deepcopy.table has no name")
}

func TestAGraphHoldingWhatCannotBeReadBackIsRefusedWithThePathToIt(t *testing.T) {
	h := wireHolder()
	h.any = &unlisted{3}
	_, err := Encode(h)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "root.any(*deepcopy.unlisted): type *github.com/pagesim/pagesim/engine/internal/deepcopy.unlisted is not registered")

	h = wireHolder()
	k := 3
	h.fn = func() int { return k }
	_, err = Encode(h)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "root.fn: a closure")
}

func TestBytesThatAreNotAWholeEncodingAreRefused(t *testing.T) {
	b, err := Encode(wireHolder())
	require.NoError(t, err)
	for n := range len(b) {
		_, err := Decode[holder](b[:n])
		require.Error(t, err, "%d of %d bytes", n, len(b))
	}
	_, err = Decode[holder](append(append([]byte(nil), b...), 0))
	require.ErrorContains(t, err, "bytes after the end")
	_, err = Decode[node](b)
	require.ErrorContains(t, err, "not of a *github.com/pagesim/pagesim/engine/internal/deepcopy.node")
	bad := append([]byte(nil), b...)
	bad[0] = 'x'
	_, err = Decode[holder](bad)
	require.ErrorContains(t, err, "not an encoding of this version")
}

// bigs holds a slice of 2^16-byte elements: a capacity of 2^48 of them
// is 2^64 bytes, which wraps around to 0 in a uintptr.
type bigs struct{ s [][1 << 16]byte }

// hostile starts an encoding of a *T by hand: the magic, no flags, the
// root's type and the objects' list, each object a type's name and a
// count, given in pairs, the objects at addresses 1<<20 apart from 1<<20.
func hostile[T any](objs ...any) *encoder {
	e := &encoder{}
	e.buf = append(e.buf, wireMagic...)
	e.uint(0)
	e.str(typeName(reflect.TypeFor[*T]()))
	e.uint(uint64(len(objs) / 2))
	for i := 0; i < len(objs); i += 2 {
		e.str(objs[i].(string))
	}
	e.uint(uint64(len(objs) / 2))
	for i := 0; i < len(objs); i += 2 {
		e.uint(uint64(i / 2))
		e.uint(objs[i+1].(uint64))
		e.uint(1 << 20)
	}
	return e
}

func TestAnObjectLargerThanItsEncodingCanHoldIsRefusedBeforeItIsAllocated(t *testing.T) {
	nodes := typeName(reflect.TypeFor[[]node]())
	var objs []any
	for range 64 {
		objs = append(objs, nodes, uint64(1)<<20) // 48 MiB each, in 40 bytes
	}
	b := hostile[holder](objs...).buf
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := Decode[holder](b)
	runtime.ReadMemStats(&after)
	require.ErrorContains(t, err, "an object larger than its encoding can hold")
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20),
		"%d bytes of input allocate less than 1 MiB", len(b))
}

func TestASliceWhoseSizeWrapsAroundIsRefused(t *testing.T) {
	e := hostile[bigs](typeName(reflect.TypeFor[bigs]()), uint64(0),
		typeName(reflect.TypeFor[[][1 << 16]byte]()), uint64(1))
	e.uint(2)                                     // the bigs' s: length 1,
	e.uint(1 << 48)                               // capacity 2^48,
	e.uint(2 << 20)                               // at the second object
	e.buf = append(e.buf, make([]byte, 1<<16)...) // the array's one element
	e.uint(1 << 20)                               // the root: the first object
	_, err := Decode[bigs](e.buf)
	require.ErrorContains(t, err, "a pointer past its object's end")
}

// aliasing points a *uint64 and a **uint64 into its pair.
type aliasing struct {
	p *pair
	a *uint64
	b **uint64
}

type pair struct{ x, y uint64 }

func TestAPointerIntoAValueOfAnotherTypeIsRefused(t *testing.T) {
	hand := func(a, b uint64) []byte {
		e := hostile[aliasing](typeName(reflect.TypeFor[aliasing]()), uint64(0),
			typeName(reflect.TypeFor[pair]()), uint64(0))
		e.uint(2 << 20)                            // aliasing.p: the pair
		e.uint(a)                                  // aliasing.a
		e.uint(b)                                  // aliasing.b
		e.buf = append(e.buf, make([]byte, 16)...) // the pair
		e.uint(1 << 20)                            // the root: the first object
		return e.buf
	}
	got, err := Decode[aliasing](hand(2<<20+8, 0))
	require.NoError(t, err, "a *uint64 at the pair's y holds a uint64")
	assert.Same(t, &got.p.y, got.a)
	_, err = Decode[aliasing](hand(2<<20+8, 2<<20))
	require.ErrorContains(t, err, "a pointer to a *uint64 into a deepcopy.pair")
	_, err = Decode[aliasing](hand(2<<20+4, 0))
	require.ErrorContains(t, err, "a pointer to a uint64 into a deepcopy.pair", "half-way into x")
}

// FuzzDecode feeds Decode bytes near a real encoding: whatever they
// are, it returns a graph or an error, never panics, and a graph it
// returns encodes again. `go test` runs the seeds; `go test -fuzz
// FuzzDecode ./engine/internal/deepcopy/` searches further.
func FuzzDecode(f *testing.F) {
	b, err := Encode(wireHolder())
	require.NoError(f, err)
	f.Add(b)
	f.Add(b[:len(b)/2])
	f.Add(hostile[aliasing](typeName(reflect.TypeFor[aliasing]()), uint64(0)).buf)
	f.Fuzz(func(t *testing.T, in []byte) {
		h, err := Decode[holder](in)
		if err != nil {
			require.Nil(t, h)
			return
		}
		_, err = Encode(h)
		require.NoError(t, err)
	})
}

// planeArray is a graph with a large pointer-free array, written as
// planes by EncodePlanes.
type planeArray struct {
	pages []pair
	names []string
}

// A decode that yields between pieces of its work reads back the graph
// Decode reads, calling yield once per yieldEvery bytes or so (a large
// array in pieces), and one whose yield says stop is refused.
func TestADecodeThatYieldsReadsTheSameGraphInPieces(t *testing.T) {
	g := &planeArray{pages: make([]pair, 200_000)}
	for i := range g.pages {
		g.pages[i] = pair{uint64(i / 3), uint64(i * i)}
	}
	for i := range 5000 {
		g.names = append(g.names, string(rune('a'+i%26)))
	}
	want, err := Digest(g)
	require.NoError(t, err)
	b, _, err := EncodePlanes(g)
	require.NoError(t, err)
	calls := 0
	c, err := DecodeYield[planeArray](b, func() bool { calls++; return true })
	require.NoError(t, err)
	got, err := Digest(c)
	require.NoError(t, err)
	assert.Equal(t, want, got, "the graph read back in pieces digests as the one written")
	// 3.2 MB of pages allocated at once (one piece) and read in 13.
	assert.Greater(t, calls, 10, "yield is called between pieces of about %d bytes", yieldEvery)
	assert.Less(t, calls, 20)

	calls = 0
	_, err = DecodeYield[planeArray](b, func() bool { calls++; return calls < 3 })
	require.Error(t, err)
	assert.Contains(t, err.Error(), "stopped by its caller")
	assert.Equal(t, 3, calls)
}
