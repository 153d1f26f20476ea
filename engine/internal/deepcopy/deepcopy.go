// Package deepcopy copies and digests a run's whole object graph: the
// machine, its world, tasks and programs, the event queue, the RNG
// streams, the trace ring, PSI, every counter. It is what a checkpoint is
// made of (engine/scenario's Run.Clone).
//
// # Why by reflection
//
// A hand-written Clone method per type would be forgotten the day a field
// is added, and the engine gains fields every week. Copy instead walks the
// values themselves, so every field of every type reachable from the root
// is copied whatever its name; nothing can be left out by forgetting it.
// What cannot be copied is refused with an error that names the path to
// it, never copied wrongly:
//
//   - A closure (a func literal or a method value such as m.psiStep)
//     captures variables that reflection cannot see, so a copy would
//     still point at the original's state. Copy refuses it. Top-level
//     functions (no captured state) are shared. Engine code that keeps
//     behaviour in its state keeps it as a value of a type with methods
//     (sim.Program, sim.Timer, sim.StepObserver), which is data and is
//     copied.
//   - Two objects that overlap in memory without one holding the other
//     (which Go code does not make without unsafe) are refused.
//   - Channels and unsafe pointers are refused.
//
// A field tagged `deepcopy:"-"` is left zero in the copy and skipped by
// Digest: it holds something outside the run (a test's hook, a
// recorder), and the code that owns the field sets it again if it wants
// it. Types registered with Share (immutable tables such as a scenario's
// Spec) are shared by the copy, not copied.
//
// Pointers are copied once and their sharing kept: two pointers to one
// object in the original are two pointers to one object in the copy. A
// pointer into another object (to a struct's field, to a slice's
// element) or a sub-slice points into that object's copy: Copy records
// the memory range of every object it copies and, at the end, moves the
// words that point into an enclosing object to the same place in its
// copy (relocate).
// Slices keep their capacity (the elements past the length are copied
// too, since a later append or reslice would see them). Strings are
// immutable and shared.
//
// # Digest
//
// Digest hashes the same graph the same way: every field's bytes, a
// pointer as the number of the object it reaches in the order of the walk
// (so two graphs of the same shape digest alike wherever they sit in
// memory), map entries sorted by their keys' own digests, funcs by their
// code pointer. Two runs in the same state have the same digest; a copy
// has its original's digest; a forgotten field would show as two digests
// that differ.
package deepcopy

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"fmt"
	"hash"
	"hash/crc64"
	"io"
	"math"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unsafe"
)

// shared holds the types whose pointers Copy shares instead of copying.
// Written only by Share at package init time.
var shared sync.Map // reflect.Type -> struct{}

// Share marks T's pointers (values of type *T) as shared immutable data:
// Copy keeps the pointer and Digest hashes the pointer's address. Call it
// from an init function, for tables nothing changes after they are built.
func Share[T any]() { shared.Store(reflect.TypeFor[*T](), struct{}{}) }

func isShared(t reflect.Type) bool { _, ok := shared.Load(t); return ok }

// Error says what could not be copied and where it sits (the path from
// the root: fields, indexes, map keys, interface types).
type Error struct {
	Path   string
	Reason string
}

func (e *Error) Error() string { return "deepcopy: " + e.Path + ": " + e.Reason }

// Copy returns a deep copy of the graph *root reaches, and the number of
// bytes the copy allocated (the objects, slices' backing arrays and maps'
// entries; strings are shared and not counted).
func Copy[T any](root *T) (*T, int64, error) {
	c := &copier{memo: map[objKey]int{}}
	dst, err := copyGraph(c, root)
	if err != nil {
		return nil, 0, err
	}
	return dst, c.bytes, nil
}

// copyGraph copies the graph root reaches with c (a plain copy, a
// packing one or an unpacking one), then points the pointers into other
// objects at their copies and fills the maps.
func copyGraph[T any](c *copier, root *T) (*T, error) {
	src := reflect.ValueOf(root)
	dst := reflect.New(src.Type()).Elem()
	if err := c.run(func() { c.value(dst, src) }); err != nil {
		return nil, err
	}
	if err := c.relocate(); err != nil {
		return nil, err
	}
	for _, e := range c.maps {
		e.m.SetMapIndex(e.k, e.v)
	}
	return dst.Interface().(*T), nil
}

type objKey struct {
	addr uintptr
	t    reflect.Type
}

// region is one object the copy made: a pointer's target or a slice's
// backing array, at [start, end) in the original and at base in the copy.
type region struct {
	start, end uintptr
	t          reflect.Type
	base       unsafe.Pointer
	// copy is the value holding the copy (keeps base alive).
	copy reflect.Value
	// packed marks an array Pack compressed: copy is a one-element
	// placeholder, which nothing may point into.
	packed bool
}

// fix is a word of the copy that holds region reg's base: a pointer, or
// a slice header's data pointer. relocate rewrites it when the region
// turns out to lie inside another.
type fix struct {
	slot unsafe.Pointer
	reg  int
}

// mapEntry is an entry the copy's map gets once every pointer is final
// (a map hashes its keys, and its storage cannot be fixed afterwards).
type mapEntry struct{ m, k, v reflect.Value }

type copier struct {
	memo    map[objKey]int
	regions []region
	fixes   []fix
	maps    []mapEntry
	// bytes counts what the copy holds, raw what the original held.
	bytes, raw int64
	path       pathStack
	// packMin, packs and lens are Pack's: arrays of at least packMin
	// bytes are compressed into packs (by their placeholder), and the
	// length of each slice of one waits in lens (by the word holding
	// it). unpack is the packed copy Unpack reads.
	packMin uintptr
	packs   map[unsafe.Pointer]*pack
	lens    map[unsafe.Pointer]int
	unpack  *packState
	inMap   int
	// fw and fr are Pack's compressor and Unpack's decompressor, reset
	// for each array.
	fw *flate.Writer
	fr io.ReadCloser
}

// abort carries an *Error out of the recursion.
type abort struct{ err *Error }

func (c *copier) run(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			a, ok := r.(abort)
			if !ok {
				panic(r)
			}
			err = a.err
		}
	}()
	f()
	return nil
}

func (c *copier) fail(reason string) {
	panic(abort{&Error{Path: c.path.String(), Reason: reason}})
}

// settable returns v (addressable) as a value that may be set even if it
// was reached through an unexported field.
func settable(v reflect.Value) reflect.Value {
	if v.CanSet() {
		return v
	}
	return reflect.NewAt(v.Type(), unsafe.Pointer(v.UnsafeAddr())).Elem()
}

// open returns v (addressable) without the read-only mark of a value
// reached through an unexported field, so that it can be assigned from
// and its elements read.
func open(v reflect.Value) reflect.Value {
	if v.CanInterface() {
		return v
	}
	return reflect.NewAt(v.Type(), unsafe.Pointer(v.UnsafeAddr())).Elem()
}

// value copies src into dst (both of the same type; dst addressable,
// zero and inside an object of the copy; src addressable).
func (c *copier) value(dst, src reflect.Value) {
	t := src.Type()
	if plain(t) {
		settable(dst).Set(src)
		return
	}
	switch t.Kind() {
	case reflect.Pointer:
		if src.IsNil() {
			return
		}
		if isShared(t) {
			settable(dst).Set(src)
			return
		}
		reg := c.pointer(src)
		settable(dst).Set(c.regions[reg].copy)
		c.fixes = append(c.fixes, fix{unsafe.Pointer(dst.UnsafeAddr()), reg})
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			if f.Tag.Get("deepcopy") == "-" {
				continue
			}
			c.path.push(f.Name, -1)
			c.value(dst.Field(i), open(src.Field(i)))
			c.path.pop()
		}
	case reflect.Array:
		for i := range t.Len() {
			c.path.push("", i)
			c.value(dst.Index(i), src.Index(i))
			c.path.pop()
		}
	case reflect.Slice:
		if src.IsNil() {
			return
		}
		n, capacity := src.Len(), src.Cap()
		if capacity == 0 {
			settable(dst).Set(reflect.MakeSlice(t, 0, 0))
			return
		}
		reg := c.slice(src)
		r := &c.regions[reg]
		switch {
		case r.packed:
			// A placeholder; the length waits in lens for Unpack.
			settable(dst).Set(r.copy)
			c.lens[unsafe.Pointer(dst.UnsafeAddr())] = n
		case c.unpack != nil && c.unpack.packs[src.UnsafePointer()] != nil:
			l, ok := c.unpack.lens[unsafe.Pointer(src.UnsafeAddr())]
			if !ok {
				c.fail("a packed array's slice moved (inside a map?)")
			}
			settable(dst).Set(r.copy.Slice3(0, l, r.copy.Cap()))
			c.fixes = append(c.fixes, fix{unsafe.Pointer(dst.UnsafeAddr()), reg})
		default:
			settable(dst).Set(r.copy.Slice3(0, n, capacity))
			c.fixes = append(c.fixes, fix{unsafe.Pointer(dst.UnsafeAddr()), reg})
		}
	case reflect.Map:
		if src.IsNil() {
			return
		}
		c.inMap++
		settable(dst).Set(c.mapValue(src))
		c.inMap--
	case reflect.Interface:
		if src.IsNil() {
			return
		}
		e := src.Elem()
		et := e.Type()
		c.path.push("("+et.String()+")", -1)
		var tmp reflect.Value
		if directIface(et) {
			tmp = reflect.New(et).Elem()
			tmp.Set(e)
		} else {
			// The boxed value itself, so that the words inside it are
			// read where they are (Unpack looks slices up by where they
			// sit).
			box := *(*unsafe.Pointer)(unsafe.Add(unsafe.Pointer(src.UnsafeAddr()), unsafe.Sizeof(uintptr(0))))
			tmp = reflect.NewAt(et, box).Elem()
		}
		nv := reflect.New(et)
		first := len(c.fixes)
		c.value(nv.Elem(), tmp)
		settable(dst).Set(nv.Elem())
		// The interface's data word: the value itself for a
		// pointer-shaped type, else a pointer to a boxed copy, which is
		// made nv so that the words recorded in nv stay the copy's.
		data := unsafe.Add(unsafe.Pointer(dst.UnsafeAddr()), unsafe.Sizeof(uintptr(0)))
		if directIface(et) {
			for i := first; i < len(c.fixes); i++ {
				if c.fixes[i].slot == nv.UnsafePointer() {
					c.fixes[i].slot = data
				}
			}
		} else {
			*(*unsafe.Pointer)(data) = nv.UnsafePointer()
		}
		c.path.pop()
	case reflect.Func:
		if src.IsNil() {
			return
		}
		if name := funcName(src); isClosure(name) {
			c.fail("a closure (" + name + ") holds state a copy cannot reach: keep it as a value of a type with methods, or tag the field deepcopy:\"-\"")
		}
		settable(dst).Set(src)
	default:
		c.fail("cannot copy a " + t.Kind().String())
	}
}

// directIface reports whether the compiler stores a value of type t in an
// interface's data word itself (a pointer-shaped type) rather than boxed.
func directIface(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Chan, reflect.Func, reflect.UnsafePointer:
		return true
	case reflect.Struct:
		return t.NumField() == 1 && directIface(t.Field(0).Type)
	case reflect.Array:
		return t.Len() == 1 && directIface(t.Elem())
	}
	return false
}

// pointer returns the region of the copy of src's target.
func (c *copier) pointer(src reflect.Value) int {
	t := src.Type()
	addr := src.Pointer()
	key := objKey{addr, t}
	if reg, ok := c.memo[key]; ok {
		return reg
	}
	et := t.Elem()
	nv := reflect.New(et)
	reg := len(c.regions)
	c.memo[key] = reg
	c.regions = append(c.regions, region{start: addr, end: addr + et.Size(), t: et, base: nv.UnsafePointer(), copy: nv})
	c.bytes += int64(et.Size())
	c.raw += int64(et.Size())
	c.path.push("*", -1)
	c.value(nv.Elem(), src.Elem())
	c.path.pop()
	return reg
}

// slice returns the region of the copy of src's backing array, from its
// first element to its capacity.
func (c *copier) slice(src reflect.Value) int {
	t := src.Type()
	capacity := src.Cap()
	addr := src.Pointer()
	key := objKey{addr, t}
	if c.unpack != nil {
		if p := c.unpack.packs[src.UnsafePointer()]; p != nil {
			if reg, ok := c.memo[key]; ok {
				return reg
			}
			return c.inflate(src, p)
		}
	}
	if reg, ok := c.memo[key]; ok {
		r := &c.regions[reg]
		if r.copy.Cap() == capacity || r.packed && c.packs[r.base].capacity == capacity {
			return reg
		}
	}
	full := src.Slice3(0, capacity, capacity)
	sz := t.Elem().Size() * uintptr(capacity)
	c.raw += int64(sz)
	if c.packMin > 0 && sz >= c.packMin && c.inMap == 0 && plain(t.Elem()) {
		return c.deflate(full, sz)
	}
	nv := reflect.MakeSlice(t, capacity, capacity)
	reg := len(c.regions)
	c.memo[key] = reg
	c.regions = append(c.regions, region{start: addr, end: addr + sz, t: t, base: nv.UnsafePointer(), copy: nv})
	c.bytes += int64(sz)
	if plain(t.Elem()) {
		reflect.Copy(nv, full)
	} else {
		for i := range capacity {
			c.path.push("", i)
			c.value(nv.Index(i), full.Index(i))
			c.path.pop()
		}
	}
	return reg
}

func (c *copier) mapValue(src reflect.Value) reflect.Value {
	t := src.Type()
	nv := reflect.MakeMapWithSize(t, src.Len())
	kt, vt := t.Key(), t.Elem()
	// An entry costs at least its key and value.
	c.bytes += int64(src.Len()) * int64(kt.Size()+vt.Size())
	c.raw += int64(src.Len()) * int64(kt.Size()+vt.Size())
	it := src.MapRange()
	for it.Next() {
		k := reflect.New(kt).Elem()
		kk := reflect.New(kt).Elem()
		kk.Set(it.Key())
		c.path.pushKey(kk)
		c.value(k, kk)
		v := reflect.New(vt).Elem()
		vv := reflect.New(vt).Elem()
		vv.Set(it.Value())
		c.value(v, vv)
		c.maps = append(c.maps, mapEntry{nv, k, v})
		c.path.pop()
	}
	return nv
}

// pack is one compressed array.
type pack struct {
	capacity int
	data     []byte
	// strs holds the strings the array's elements hold: compressed,
	// their headers are bytes the collector does not see, so the
	// strings' bytes are kept alive here, for Unpack's copies to point
	// at.
	strs []string
}

// packState is what a packed copy keeps beside its graph.
type packState struct {
	packs map[unsafe.Pointer]*pack
	lens  map[unsafe.Pointer]int
}

// deflate compresses the array of full (a whole pointer-free backing
// array of sz bytes) and returns the region of its placeholder.
func (c *copier) deflate(full reflect.Value, sz uintptr) int {
	t := full.Type()
	var b bytes.Buffer
	if c.fw == nil {
		c.fw, _ = flate.NewWriter(&b, flate.BestSpeed)
	} else {
		c.fw.Reset(&b)
	}
	w := c.fw
	w.Write(planes(unsafe.Slice((*byte)(full.UnsafePointer()), sz), int(t.Elem().Size())))
	w.Close()
	ph := reflect.MakeSlice(t, 1, 1)
	pk := &pack{capacity: full.Cap(), data: b.Bytes()}
	if !pointerFree(t.Elem()) {
		for i := range full.Len() {
			pk.strs = appendStrings(pk.strs, full.Index(i))
		}
	}
	c.packs[ph.UnsafePointer()] = pk
	addr := full.Pointer()
	reg := len(c.regions)
	c.memo[objKey{addr, t}] = reg
	c.regions = append(c.regions, region{start: addr, end: addr + sz, t: t, base: ph.UnsafePointer(), copy: ph, packed: true})
	c.bytes += int64(b.Len()) + int64(t.Elem().Size())
	return reg
}

// planes returns an array of n elements of size bytes each as its byte
// planes: the first byte of every element, then the second, and so on,
// each plane as the differences between consecutive bytes (mod 256).
// An array of structs (a machine's pages: links, owner, flags, order,
// kind) has fields that repeat or count up from one element to the next;
// as planes of differences they are long runs flate compresses, where the
// interleaved fields defeat its matches: a machine's pages pack about 7
// times smaller (docs/PERFORMANCE.md, "Checkpoints"). unplanes undoes it.
func planes(b []byte, size int) []byte {
	out := make([]byte, len(b))
	planesInto(out, b, size)
	return out
}

// planesInto writes b's planes (planes) into out, of b's length. It
// reads b element by element (one pass through memory, where a pass per
// plane read the whole array size times).
func planesInto(out, b []byte, size int) {
	n := len(b) / size
	if n == 0 {
		return
	}
	for j := range size {
		out[j*n] = b[j]
	}
	for i := 1; i < n; i++ {
		cur, prev := b[i*size:(i+1)*size], b[(i-1)*size:i*size]
		for j, v := range cur {
			out[j*n+i] = v - prev[j]
		}
	}
}

// unplanes writes into dst the array whose planes are src.
func unplanes(dst, src []byte, size int) { unplanesRange(dst, src, size, 0, len(dst)/size) }

// unplanesRange writes elements from to to (excluded) of the array whose
// planes are src into dst, whose elements before from are written
// already (each is the one before it plus its differences).
//
// Eight planes of eight elements are read at a time where the machine is
// little-endian (eight words, transposed in registers, each element's
// word added to the one before it bytewise): in WebAssembly, where the
// page restores its checkpoints, a byte at a time ran at about 90 MB/s
// and this at about 300 MB/s (BenchmarkUnplanes, Node.js); natively the
// two are about as fast.
func unplanesRange(dst, src []byte, size, from, to int) {
	n := len(dst) / size
	if from >= to {
		return
	}
	if from == 0 {
		for j := range size {
			dst[j] = src[j*n]
		}
		from = 1
	}
	i := from
	if littleEndian && size >= 8 && to-from >= 8 {
		i = unplanesWords(dst, src, size, from, to)
	}
	for ; i < to; i++ {
		cur, prev := dst[i*size:(i+1)*size], dst[(i-1)*size:i*size]
		for j := range cur {
			cur[j] = prev[j] + src[j*n+i]
		}
	}
}

// littleEndian is whether a word's first byte in memory is its lowest.
var littleEndian = func() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}()

// unplanesWords is unplanesRange's work on whole groups of eight
// elements from from (at least 1) and returns the first element it left.
// Each group's planes are read eight at a time, the planes past the last
// multiple of eight a byte at a time.
func unplanesWords(dst, src []byte, size, from, to int) int {
	n := len(dst) / size
	// The bounds, checked once: every access below is within them.
	_ = dst[to*size-1]
	_ = src[(size-1)*n+to-1]
	d, s := unsafe.Pointer(&dst[0]), unsafe.Pointer(&src[0])
	const hi = 0x8080808080808080
	const m1, m2, m4 = 0x00FF00FF00FF00FF, 0x0000FFFF0000FFFF, 0x00000000FFFFFFFF
	gw := size &^ 7
	i := from
	for ; i+8 <= to; i += 8 {
		for j := 0; j < gw; j += 8 {
			// w_k: plane j+k's bytes of elements i to i+7.
			p := unsafe.Add(s, j*n+i)
			w0 := *(*uint64)(p)
			w1 := *(*uint64)(unsafe.Add(p, n))
			w2 := *(*uint64)(unsafe.Add(p, 2*n))
			w3 := *(*uint64)(unsafe.Add(p, 3*n))
			w4 := *(*uint64)(unsafe.Add(p, 4*n))
			w5 := *(*uint64)(unsafe.Add(p, 5*n))
			w6 := *(*uint64)(unsafe.Add(p, 6*n))
			w7 := *(*uint64)(unsafe.Add(p, 7*n))
			// Transposed: w_e holds element i+e's differences of
			// planes j to j+7.
			t := (w0>>8 ^ w1) & m1
			w0, w1 = w0^t<<8, w1^t
			t = (w2>>8 ^ w3) & m1
			w2, w3 = w2^t<<8, w3^t
			t = (w4>>8 ^ w5) & m1
			w4, w5 = w4^t<<8, w5^t
			t = (w6>>8 ^ w7) & m1
			w6, w7 = w6^t<<8, w7^t
			t = (w0>>16 ^ w2) & m2
			w0, w2 = w0^t<<16, w2^t
			t = (w1>>16 ^ w3) & m2
			w1, w3 = w1^t<<16, w3^t
			t = (w4>>16 ^ w6) & m2
			w4, w6 = w4^t<<16, w6^t
			t = (w5>>16 ^ w7) & m2
			w5, w7 = w5^t<<16, w7^t
			t = (w0>>32 ^ w4) & m4
			w0, w4 = w0^t<<32, w4^t
			t = (w1>>32 ^ w5) & m4
			w1, w5 = w1^t<<32, w5^t
			t = (w2>>32 ^ w6) & m4
			w2, w6 = w2^t<<32, w6^t
			t = (w3>>32 ^ w7) & m4
			w3, w7 = w3^t<<32, w7^t
			// Each element is the one before it plus its differences,
			// byte by byte (no carry from one byte into the next).
			q := unsafe.Add(d, i*size+j)
			a := *(*uint64)(unsafe.Add(q, -size))
			for _, x := range [8]uint64{w0, w1, w2, w3, w4, w5, w6, w7} {
				a = ((a &^ hi) + (x &^ hi)) ^ ((a ^ x) & hi)
				*(*uint64)(q) = a
				q = unsafe.Add(q, size)
			}
		}
		for j := gw; j < size; j++ {
			for e := i; e < i+8; e++ {
				dst[e*size+j] = dst[(e-1)*size+j] + src[j*n+e]
			}
		}
	}
	return i
}

// inflate rebuilds a packed array for Unpack and returns its region.
func (c *copier) inflate(src reflect.Value, p *pack) int {
	t := src.Type()
	nv := reflect.MakeSlice(t, p.capacity, p.capacity)
	sz := t.Elem().Size() * uintptr(p.capacity)
	if c.fr == nil {
		c.fr = flate.NewReader(bytes.NewReader(p.data))
	} else {
		c.fr.(flate.Resetter).Reset(bytes.NewReader(p.data), nil)
	}
	buf := make([]byte, sz)
	if _, err := io.ReadFull(c.fr, buf); err != nil {
		c.fail("a packed array does not inflate: " + err.Error())
	}
	if pointerFree(t.Elem()) {
		unplanes(unsafe.Slice((*byte)(nv.UnsafePointer()), sz), buf, int(t.Elem().Size()))
	} else {
		// Elements with strings: copied as typed values (with the
		// collector's write barriers) from the bytes, whose strings
		// p.strs keeps alive.
		raw := make([]byte, sz)
		unplanes(raw, buf, int(t.Elem().Size()))
		reflect.Copy(nv, reflect.NewAt(reflect.ArrayOf(p.capacity, t.Elem()), unsafe.Pointer(&raw[0])).Elem().Slice(0, p.capacity))
		runtime.KeepAlive(p.strs)
	}
	addr := src.Pointer()
	reg := len(c.regions)
	c.memo[objKey{addr, t}] = reg
	// The placeholder's one element is all the packed graph holds.
	c.regions = append(c.regions, region{start: addr, end: addr + t.Elem().Size(), t: t, base: nv.UnsafePointer(), copy: nv})
	c.bytes += int64(sz)
	c.raw += int64(sz)
	return reg
}

// Packed is a copy of a graph whose large pointer-free arrays (a
// machine's pages and pageblocks, the page cache's slots) are kept
// compressed: a checkpoint that takes a fraction of the run's memory.
// It cannot run; Unpack makes a copy that can.
type Packed[T any] struct {
	root  *T
	state packState
	// Bytes is what the packed copy holds; RunBytes what the graph it
	// was made from held.
	Bytes, RunBytes int64
}

// Pack returns a packed copy of the graph *root reaches: as Copy, but
// each slice array of at least minBytes (not held in a map) whose
// elements hold no pointer at all (a string is a pointer here: its bytes
// would be out of the collector's sight while packed, and freed)
// is compressed with flate at BestSpeed, as byte planes of differences
// (planes). A graph with a pointer or a
// sub-slice into such an array is refused (Copy takes it).
func Pack[T any](root *T, minBytes int) (*Packed[T], error) {
	c := &copier{memo: map[objKey]int{}, packMin: uintptr(max(minBytes, 1)),
		packs: map[unsafe.Pointer]*pack{}, lens: map[unsafe.Pointer]int{}}
	dst, err := copyGraph(c, root)
	if err != nil {
		return nil, err
	}
	return &Packed[T]{root: dst, state: packState{c.packs, c.lens}, Bytes: c.bytes, RunBytes: c.raw}, nil
}

// Unpack returns a copy of the packed graph ready to run, and its bytes.
// The packed copy stays as it was: it can be unpacked again.
func (p *Packed[T]) Unpack() (*T, int64, error) {
	c := &copier{memo: map[objKey]int{}, unpack: &p.state}
	dst, err := copyGraph(c, p.root)
	if err != nil {
		return nil, 0, err
	}
	return dst, c.bytes, nil
}

// relocate finds the objects that lay inside another object of the
// original (a pointer to a struct's field or a slice's element, a
// sub-slice) and points every word that held their separate copy at the
// place inside the enclosing object's copy instead, so that the copy
// shares memory as the original did. Two objects that overlap without
// one holding the other are refused.
func (c *copier) relocate() error {
	order := make([]int, len(c.regions))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		ra, rb := &c.regions[a], &c.regions[b]
		switch {
		case ra.start != rb.start:
			return cmpUintptr(ra.start, rb.start)
		case ra.end != rb.end:
			return -cmpUintptr(ra.end, rb.end) // the larger first
		}
		return a - b
	})
	moved := make([]unsafe.Pointer, len(c.regions))
	outer := -1
	any := false
	for _, i := range order {
		r := &c.regions[i]
		if r.end == r.start {
			continue
		}
		if outer >= 0 && r.start < c.regions[outer].end {
			o := &c.regions[outer]
			if o.packed || r.packed {
				return &Error{Path: r.t.String() + " and " + o.t.String(),
					Reason: "a reference into an array Pack compressed"}
			}
			if r.end > o.end {
				return &Error{Path: r.t.String() + " and " + o.t.String(),
					Reason: "two objects overlap without one holding the other"}
			}
			moved[i] = unsafe.Add(o.base, r.start-o.start)
			any = true
			continue
		}
		outer = i
	}
	if !any {
		return nil
	}
	for _, f := range c.fixes {
		if p := moved[f.reg]; p != nil {
			*(*unsafe.Pointer)(f.slot) = p
		}
	}
	return nil
}

func cmpUintptr(a, b uintptr) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// plainCache remembers which types hold no pointer Copy must follow.
var plainCache sync.Map // reflect.Type -> bool

// plain reports whether a value of type t is copied by assignment: it
// holds no pointer, slice, map, interface, func or channel (strings are
// immutable and count as plain).
func plain(t reflect.Type) bool {
	if v, ok := plainCache.Load(t); ok {
		return v.(bool)
	}
	var p bool
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface, reflect.Func, reflect.Chan, reflect.UnsafePointer:
		p = false
	case reflect.Array:
		p = t.Len() == 0 || plain(t.Elem())
	case reflect.Struct:
		p = true
		for i := range t.NumField() {
			f := t.Field(i)
			if f.Tag.Get("deepcopy") == "-" || !plain(f.Type) {
				p = false
				break
			}
		}
	default:
		p = true
	}
	plainCache.Store(t, p)
	return p
}

// appendStrings appends the strings v (a plain value) holds.
func appendStrings(out []string, v reflect.Value) []string {
	switch v.Kind() {
	case reflect.String:
		if v.Len() > 0 {
			out = append(out, v.String())
		}
	case reflect.Array:
		for i := range v.Len() {
			out = appendStrings(out, v.Index(i))
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if !pointerFree(v.Type().Field(i).Type) {
				out = appendStrings(out, v.Field(i))
			}
		}
	}
	return out
}

// pointerFree reports whether a value of type t holds no pointer at
// all, a string's included: what Pack may compress as bytes.
func pointerFree(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.String:
		return false
	case reflect.Array:
		return t.Len() == 0 || pointerFree(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if !pointerFree(t.Field(i).Type) {
				return false
			}
		}
		return true
	}
	return plain(t)
}

func funcName(v reflect.Value) string {
	if f := runtime.FuncForPC(v.Pointer()); f != nil {
		return f.Name()
	}
	return "?"
}

// isClosure reports whether a function's runtime name is a func literal's
// ("pkg.F.func1", "pkg.init.func2.1") or a method value's ("pkg.(*T).m-fm").
func isClosure(name string) bool {
	if strings.HasSuffix(name, "-fm") {
		return true
	}
	last := name[strings.LastIndexByte(name, '/')+1:]
	for _, part := range strings.Split(last, ".") {
		if rest, ok := strings.CutPrefix(part, "func"); ok && rest != "" {
			if _, err := strconv.Atoi(rest); err == nil {
				return true
			}
		}
	}
	return last == "?"
}

// pathStack is the path from the root to the value being walked, kept
// cheap until an error formats it.
type pathStack struct {
	elems []pathElem
}

type pathElem struct {
	name string
	idx  int
	// key is a map entry's key, formatted only for an error.
	key reflect.Value
}

func (p *pathStack) push(name string, idx int) {
	p.elems = append(p.elems, pathElem{name: name, idx: idx})
}

func (p *pathStack) pushKey(k reflect.Value) {
	p.elems = append(p.elems, pathElem{idx: -1, key: k})
}
func (p *pathStack) pop() { p.elems = p.elems[:len(p.elems)-1] }

func (p *pathStack) String() string {
	var b strings.Builder
	b.WriteString("root")
	for _, e := range p.elems {
		switch {
		case e.key.IsValid():
			fmt.Fprintf(&b, "[%v]", e.key.Interface())
		case e.idx >= 0:
			fmt.Fprintf(&b, "[%d]", e.idx)
		case e.name == "*":
		case strings.HasPrefix(e.name, "[") || strings.HasPrefix(e.name, "("):
			b.WriteString(e.name)
		default:
			b.WriteString("." + e.name)
		}
	}
	return b.String()
}

// Digest returns the digest of the graph root reaches (see the package
// comment). It fails where Copy would.
func Digest(root any) (uint64, error) {
	d := newDigester()
	v := reflect.ValueOf(root)
	tmp := reflect.New(v.Type()).Elem()
	tmp.Set(v)
	c := &copier{}
	if err := c.run(func() { d.value(c, tmp) }); err != nil {
		return 0, err
	}
	return d.h.Sum64(), nil
}

var crcTable = crc64.MakeTable(crc64.ECMA)

type digester struct {
	h   hash.Hash64
	ids map[objKey]uint64
	buf [8]byte
}

func newDigester() *digester {
	return &digester{h: crc64.New(crcTable), ids: map[objKey]uint64{}}
}

func (d *digester) u64(x uint64) {
	binary.LittleEndian.PutUint64(d.buf[:], x)
	d.h.Write(d.buf[:])
}

// raw hashes the bytes of an addressable value without padding.
func (d *digester) raw(v reflect.Value) {
	t := v.Type()
	if sz := t.Size(); sz > 0 && !padded(t) {
		d.h.Write(unsafe.Slice((*byte)(unsafe.Pointer(v.UnsafeAddr())), sz))
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		for i := range t.NumField() {
			d.raw(v.Field(i))
		}
	case reflect.Array:
		for i := range t.Len() {
			d.raw(v.Index(i))
		}
	case reflect.String:
		s := v.String()
		d.u64(uint64(len(s)))
		d.h.Write([]byte(s))
	}
}

var paddedCache sync.Map

// padded reports whether a plain type's bytes include padding or a
// string header (whose bytes are not its value).
func padded(t reflect.Type) bool {
	if v, ok := paddedCache.Load(t); ok {
		return v.(bool)
	}
	var p bool
	switch t.Kind() {
	case reflect.String:
		p = true
	case reflect.Array:
		p = t.Len() > 0 && padded(t.Elem())
	case reflect.Struct:
		var sum uintptr
		for i := range t.NumField() {
			f := t.Field(i)
			sum += f.Type.Size()
			if padded(f.Type) {
				p = true
			}
		}
		p = p || sum != t.Size()
	case reflect.Float32, reflect.Float64:
		p = false
	}
	paddedCache.Store(t, p)
	return p
}

func (d *digester) value(c *copier, v reflect.Value) {
	t := v.Type()
	if plain(t) {
		d.raw(v)
		return
	}
	switch t.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			d.u64(0)
			return
		}
		if isShared(t) {
			d.u64(uint64(v.Pointer()))
			return
		}
		key := objKey{v.Pointer(), t}
		if id, ok := d.ids[key]; ok {
			d.u64(id)
			return
		}
		id := uint64(len(d.ids) + 1)
		d.ids[key] = id
		d.u64(id | 1<<63)
		c.path.push("*", -1)
		d.value(c, v.Elem())
		c.path.pop()
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			if f.Tag.Get("deepcopy") == "-" {
				continue
			}
			c.path.push(f.Name, -1)
			d.value(c, open(v.Field(i)))
			c.path.pop()
		}
	case reflect.Array:
		for i := range t.Len() {
			c.path.push("", i)
			d.value(c, v.Index(i))
			c.path.pop()
		}
	case reflect.Slice:
		if v.IsNil() {
			d.u64(math.MaxUint64)
			return
		}
		n, capacity := v.Len(), v.Cap()
		d.u64(uint64(n))
		d.u64(uint64(capacity))
		if capacity == 0 {
			return
		}
		key := objKey{v.Pointer(), t}
		if id, ok := d.ids[key]; ok {
			d.u64(id)
			return
		}
		id := uint64(len(d.ids) + 1)
		d.ids[key] = id
		d.u64(id | 1<<63)
		full := v.Slice3(0, capacity, capacity)
		if plain(t.Elem()) && !padded(t.Elem()) {
			d.h.Write(unsafe.Slice((*byte)(full.UnsafePointer()), t.Elem().Size()*uintptr(capacity)))
			return
		}
		for i := range capacity {
			c.path.push("", i)
			d.value(c, full.Index(i))
			c.path.pop()
		}
	case reflect.Map:
		if v.IsNil() {
			d.u64(math.MaxUint64)
			return
		}
		d.u64(uint64(v.Len()))
		type entry struct {
			kd   uint64
			k, e reflect.Value
		}
		var es []entry
		it := v.MapRange()
		for it.Next() {
			k := reflect.New(t.Key()).Elem()
			k.Set(it.Key())
			sub := newDigester()
			sub.value(&copier{}, k)
			e := reflect.New(t.Elem()).Elem()
			e.Set(it.Value())
			es = append(es, entry{sub.h.Sum64(), k, e})
		}
		slices.SortFunc(es, func(a, b entry) int {
			switch {
			case a.kd < b.kd:
				return -1
			case a.kd > b.kd:
				return 1
			}
			return 0
		})
		for _, e := range es {
			c.path.pushKey(e.k)
			d.value(c, e.k)
			d.value(c, e.e)
			c.path.pop()
		}
	case reflect.Interface:
		if v.IsNil() {
			d.u64(0)
			return
		}
		e := v.Elem()
		d.h.Write([]byte(e.Type().String()))
		tmp := reflect.New(e.Type()).Elem()
		tmp.Set(e)
		c.path.push("("+e.Type().String()+")", -1)
		d.value(c, tmp)
		c.path.pop()
	case reflect.Func:
		if v.IsNil() {
			d.u64(0)
			return
		}
		if name := funcName(v); isClosure(name) {
			c.fail("a closure (" + name + ") holds state a digest cannot reach")
		}
		d.u64(uint64(v.Pointer()))
	default:
		c.fail("cannot digest a " + t.Kind().String())
	}
}
