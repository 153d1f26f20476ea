package deepcopy

// wire.go writes a graph as bytes and reads it back, in this process or
// in another one built from the same source: how a run crosses from the
// page's engine worker to its main thread (two WebAssembly instances with
// separate memories, which share nothing but messages).
//
// Encode walks the graph as Copy does, in two passes. The first finds
// every object (a pointer's target, a slice's backing array, from its
// first element to its capacity) and its memory range; an object that
// lies inside another (a pointer to a struct's field or a slice's
// element, a sub-slice) is then known by the outermost object that holds
// it. The second pass writes the outermost objects' types, sizes and
// addresses, in the order of their addresses (so that Decode can allocate
// them all before reading a byte of their contents, whatever order the
// pointers come in), then their contents, then the root. Within a value:
//
//   - a type without pointers or strings is its bytes (the same GOARCH
//     on both sides: the page and its worker are both js/wasm);
//   - a pointer is its target's address in the graph written (Decode
//     finds the outermost object at or before it and the offset there),
//     a slice its length, capacity and its array's address;
//   - a string is its length and bytes; a map its entries;
//   - an interface is its dynamic type's name and value; a func its
//     name (top-level functions only: a closure is refused, as Copy
//     refuses it);
//   - a pointer of a type registered with ShareNamed is the name its
//     table gives it, looked up again on the other side.
//
// Types are named by their package path and name. Decode must find a
// type by its name: the types reachable from the root's type through
// fields, elements and keys are found by walking the types themselves;
// the dynamic types behind interfaces (a task's program, a timer) and the
// functions the graph holds must be registered (Register, RegisterFunc).
// Encode refuses a graph that holds one that is not, naming the path to
// it, so a type added to the engine and not registered fails in the
// tests that encode every scenario's run, not in the page.

import (
	"encoding/binary"
	"fmt"
	"math"
	"reflect"
	"slices"
	"sync"
	"unsafe"
)

// wireMagic starts every encoding (and names its version).
const wireMagic = "pagesim-wire-2\n"

// wirePlanes is the encoding's flag for the large pointer-free arrays
// written as byte planes of differences (EncodePlanes).
const wirePlanes = 1

var registry = struct {
	sync.Mutex
	roots  []reflect.Type
	types  map[string]reflect.Type // nil: not built since the last Register
	funcs  map[string]reflect.Value
	shared map[reflect.Type]sharedNamer
}{funcs: map[string]reflect.Value{}, shared: map[reflect.Type]sharedNamer{}}

// sharedNamer names a shared object (by the table it is registered in)
// and finds it by its name.
type sharedNamer struct {
	name func(unsafe.Pointer) string
	find func(string) (unsafe.Pointer, bool)
}

// Register makes T (and every type reachable from it) a type Decode can
// rebuild where an interface holds it. Call it from an init function.
func Register[T any]() {
	registry.Lock()
	defer registry.Unlock()
	registry.roots = append(registry.roots, reflect.TypeFor[T]())
	registry.types = nil
}

// RegisterFunc makes the top-level function f one the graph may hold.
// Call it from an init function.
func RegisterFunc(f any) {
	v := reflect.ValueOf(f)
	if v.Kind() != reflect.Func || v.IsNil() {
		panic("deepcopy: RegisterFunc needs a function")
	}
	registry.Lock()
	defer registry.Unlock()
	registry.funcs[funcName(v)] = v
}

// ShareNamed marks *T as shared (Share) and gives its objects names that
// Encode writes instead of the object: name gives an object's, find the
// object by its name in this process. Call it from an init function.
func ShareNamed[T any](name func(*T) string, find func(string) (*T, bool)) {
	Share[T]()
	registry.Lock()
	defer registry.Unlock()
	registry.shared[reflect.TypeFor[*T]()] = sharedNamer{
		name: func(p unsafe.Pointer) string { return name((*T)(p)) },
		find: func(s string) (unsafe.Pointer, bool) { p, ok := find(s); return unsafe.Pointer(p), ok },
	}
}

// typeName is t's name on the wire: its package path and name, or for an
// unnamed type its shape in those terms.
func typeName(t reflect.Type) string {
	if t.Name() != "" {
		if t.PkgPath() == "" {
			return t.Name()
		}
		return t.PkgPath() + "." + t.Name()
	}
	switch t.Kind() {
	case reflect.Pointer:
		return "*" + typeName(t.Elem())
	case reflect.Slice:
		return "[]" + typeName(t.Elem())
	case reflect.Array:
		return fmt.Sprintf("[%d]%s", t.Len(), typeName(t.Elem()))
	case reflect.Map:
		return "map[" + typeName(t.Key()) + "]" + typeName(t.Elem())
	}
	return t.String()
}

// lookupType finds a type by its wire name among the registered types,
// extra and everything reachable from them.
func lookupType(name string, extra reflect.Type) (reflect.Type, bool) {
	registry.Lock()
	defer registry.Unlock()
	if registry.types == nil {
		registry.types = map[string]reflect.Type{}
		for _, t := range registry.roots {
			addTypes(registry.types, t)
		}
	}
	if extra != nil && !slices.Contains(registry.roots, extra) {
		registry.roots = append(registry.roots, extra)
		addTypes(registry.types, extra)
	}
	t, ok := registry.types[name]
	return t, ok && t != nil
}

// addTypes adds t and the types its values hold (not behind interfaces)
// to m; a name two types share maps to nil (neither can be found).
func addTypes(m map[string]reflect.Type, t reflect.Type) {
	name := typeName(t)
	if old, ok := m[name]; ok {
		if old != t {
			m[name] = nil
		}
		return
	}
	m[name] = t
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array:
		addTypes(m, t.Elem())
	case reflect.Map:
		addTypes(m, t.Key())
		addTypes(m, t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			addTypes(m, t.Field(i).Type)
		}
	}
}

func lookupFunc(name string) (reflect.Value, bool) {
	registry.Lock()
	defer registry.Unlock()
	f, ok := registry.funcs[name]
	return f, ok
}

func namer(t reflect.Type) (sharedNamer, bool) {
	registry.Lock()
	defer registry.Unlock()
	n, ok := registry.shared[t]
	return n, ok
}

// rawable reports whether a value of type t is its bytes: plain and no
// string inside.
func rawable(t reflect.Type) bool {
	if v, ok := rawCache.Load(t); ok {
		return v.(bool)
	}
	var r bool
	switch {
	case !plain(t):
	case t.Kind() == reflect.String:
	case t.Kind() == reflect.Array:
		r = t.Len() == 0 || rawable(t.Elem())
	case t.Kind() == reflect.Struct:
		r = true
		for i := range t.NumField() {
			if !rawable(t.Field(i).Type) {
				r = false
				break
			}
		}
	default:
		r = true
	}
	rawCache.Store(t, r)
	return r
}

var rawCache sync.Map // reflect.Type -> bool

// wobj is one object Encode found: a pointer's target (t its type) or a
// slice's backing array (t the slice's type, n its capacity).
type wobj struct {
	start, end uintptr
	t          reflect.Type
	n          int
	v          reflect.Value // the object (a pointer, or the full slice)
	// outer is the outermost object holding this one, off its offset
	// there; an outermost object's outer is its own number in
	// the written order (Encode numbers them).
	outer, off int
}

type wkey struct {
	addr uintptr
	t    reflect.Type
	n    int
}

type encoder struct {
	c     copier // for the path and fail
	memo  map[wkey]int
	objs  []wobj
	order []int // outermost objects, in the written order
	buf   []byte
	root  reflect.Type
	// planes is EncodePlanes': arrays of planesMin bytes or more are
	// written as planes.
	planes bool
	// graph counts the graph's bytes in memory.
	graph int64
}

// Encode returns the bytes of the graph root reaches (see the file's
// comment). It fails where Copy would, and on a graph holding an
// interface's dynamic type or a function that is not registered.
func Encode[T any](root *T) (out []byte, err error) {
	e, err := encode(root, false)
	if err != nil {
		return nil, err
	}
	return e.buf, nil
}

// planesMin is the smallest array EncodePlanes writes as planes: 512
// bytes, as the timeline's packed checkpoints found (below it nothing
// more was gained; docs/PERFORMANCE.md, "Checkpoints").
const planesMin = 512

// EncodePlanes is Encode with every pointer-free array of planesMin
// bytes or more (a machine's pages and pageblocks) written as its byte
// planes of differences (planes): the same graph, in bytes that compress
// several times better (a checkpoint's, which Store compresses). Decode
// reads both. It also returns the bytes the graph holds in memory (its
// objects, arrays and maps' entries; strings are not counted), which a
// copy would take.
func EncodePlanes[T any](root *T) (out []byte, graph int64, err error) {
	e, err := encode(root, true)
	if err != nil {
		return nil, 0, err
	}
	return e.buf, e.graph, nil
}

func encode[T any](root *T, planes bool) (_ *encoder, err error) {
	e := &encoder{memo: map[wkey]int{}, root: reflect.TypeFor[*T](), planes: planes}
	v := reflect.ValueOf(root)
	tmp := reflect.New(v.Type()).Elem()
	tmp.Set(v)
	if err := e.c.run(func() { e.find(tmp) }); err != nil {
		return nil, err
	}
	if err := e.nest(); err != nil {
		return nil, err
	}
	// The objects' bytes bound the encoding's, but for the headers and
	// the strings: one allocation, not a growing buffer's copies.
	var size uintptr
	for _, i := range e.order {
		size += e.objs[i].end - e.objs[i].start
	}
	e.graph += int64(size)
	e.buf = make([]byte, 0, size+size/8+4096)
	e.buf = append(e.buf, wireMagic...)
	var flags uint64
	if planes {
		flags |= wirePlanes
	}
	e.uint(flags)
	e.str(typeName(e.root))
	// The objects' types, each named once, in the order they first
	// come; then each object as its type's number, its count and its
	// address (the first's, then each one's distance from the one
	// before: the objects are in the order of their addresses).
	types := map[reflect.Type]int{}
	var names []string
	for _, i := range e.order {
		t := e.objs[i].t
		if _, ok := types[t]; !ok {
			types[t] = len(names)
			names = append(names, typeName(t))
		}
	}
	e.uint(uint64(len(names)))
	for _, n := range names {
		e.str(n)
	}
	e.uint(uint64(len(e.order)))
	var prev uintptr
	for _, i := range e.order {
		o := &e.objs[i]
		e.uint(uint64(types[o.t]))
		e.uint(uint64(o.n))
		e.uint(uint64(o.start - prev))
		prev = o.start
	}
	err = e.c.run(func() {
		for _, i := range e.order {
			e.contents(&e.objs[i])
		}
		e.value(tmp)
	})
	if err != nil {
		return nil, err
	}
	return e, nil
}

func (e *encoder) uint(x uint64) { e.buf = binary.AppendUvarint(e.buf, x) }
func (e *encoder) str(s string) {
	e.uint(uint64(len(s)))
	e.buf = append(e.buf, s...)
}

// need fails unless Decode can find t by its name.
func (e *encoder) need(t reflect.Type) {
	if got, ok := lookupType(typeName(t), e.root); !ok || got != t {
		e.c.fail("type " + typeName(t) + " is not registered (deepcopy.Register) or its name is taken twice")
	}
}

// find records the objects v reaches (pass 1).
func (e *encoder) find(v reflect.Value) {
	t := v.Type()
	if plain(t) {
		return
	}
	c := &e.c
	switch t.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return
		}
		if isShared(t) {
			if _, ok := namer(t); !ok {
				c.fail("a shared " + t.String() + " has no name (deepcopy.ShareNamed)")
			}
			return
		}
		key := wkey{v.Pointer(), t.Elem(), -1}
		if _, ok := e.memo[key]; ok {
			return
		}
		e.memo[key] = len(e.objs)
		e.objs = append(e.objs, wobj{start: v.Pointer(), end: v.Pointer() + t.Elem().Size(), t: t.Elem(), n: 0, v: v})
		c.path.push("*", -1)
		e.find(v.Elem())
		c.path.pop()
	case reflect.Struct:
		for i := range t.NumField() {
			if t.Field(i).Tag.Get("deepcopy") == "-" {
				continue
			}
			c.path.push(t.Field(i).Name, -1)
			e.find(open(v.Field(i)))
			c.path.pop()
		}
	case reflect.Array:
		for i := range t.Len() {
			c.path.push("", i)
			e.find(v.Index(i))
			c.path.pop()
		}
	case reflect.Slice:
		if v.IsNil() || v.Cap() == 0 {
			return
		}
		key := wkey{v.Pointer(), t, v.Cap()}
		if _, ok := e.memo[key]; ok {
			return
		}
		full := v.Slice3(0, v.Cap(), v.Cap())
		e.memo[key] = len(e.objs)
		e.objs = append(e.objs, wobj{start: v.Pointer(), end: v.Pointer() + t.Elem().Size()*uintptr(v.Cap()), t: t, n: v.Cap(), v: full})
		if !plain(t.Elem()) {
			for i := range v.Cap() {
				c.path.push("", i)
				e.find(full.Index(i))
				c.path.pop()
			}
		}
	case reflect.Map:
		e.graph += int64(v.Len()) * int64(t.Key().Size()+t.Elem().Size())
		it := v.MapRange()
		for it.Next() {
			k := reflect.New(t.Key()).Elem()
			k.Set(it.Key())
			x := reflect.New(t.Elem()).Elem()
			x.Set(it.Value())
			c.path.pushKey(k)
			e.find(k)
			e.find(x)
			c.path.pop()
		}
	case reflect.Interface:
		if v.IsNil() {
			return
		}
		et := v.Elem().Type()
		c.path.push("("+et.String()+")", -1)
		e.need(et)
		tmp := reflect.New(et).Elem()
		tmp.Set(v.Elem())
		e.find(tmp)
		c.path.pop()
	case reflect.Func:
		if v.IsNil() {
			return
		}
		name := funcName(v)
		if isClosure(name) {
			c.fail("a closure (" + name + ") cannot be written")
		}
		if _, ok := lookupFunc(name); !ok {
			c.fail("function " + name + " is not registered (deepcopy.RegisterFunc)")
		}
	default:
		c.fail("cannot write a " + t.Kind().String())
	}
}

// nest finds the outermost object holding each object and numbers the
// outermost ones in order.
func (e *encoder) nest() error {
	idx := make([]int, len(e.objs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		oa, ob := &e.objs[a], &e.objs[b]
		if c := cmpUintptr(oa.start, ob.start); c != 0 {
			return c
		}
		if c := cmpUintptr(ob.end, oa.end); c != 0 {
			return c
		}
		return a - b
	})
	cur := -1
	for _, i := range idx {
		o := &e.objs[i]
		if cur >= 0 && (o.start < e.objs[cur].end || o.start == e.objs[cur].start && o.end == o.start) {
			out := &e.objs[cur]
			if o.end > out.end {
				return &Error{Path: "root", Reason: fmt.Sprintf("two objects overlap (%s and %s)", out.t, o.t)}
			}
			o.outer, o.off = out.outer, int(o.start-out.start)
			continue
		}
		cur = i
		o.outer, o.off = len(e.order), 0
		e.order = append(e.order, i)
	}
	for _, i := range e.order {
		e.need(e.objs[i].t)
	}
	return nil
}

// ref writes the address of the object keyed by k: an outermost
// object's or one inside it (Decode finds which and where). An address
// and not the object's number: an object that lives on keeps its address
// from one encoding of a run to the next, where the numbers of every
// object after a new one change, so two checkpoints of a run share most
// of their bytes (Store keeps those once).
func (e *encoder) ref(k wkey) {
	if _, ok := e.memo[k]; !ok {
		e.c.fail("an object was not found (a bug)")
	}
	e.uint(uint64(k.addr))
}

func (e *encoder) contents(o *wobj) {
	if o.n == 0 && o.t.Kind() != reflect.Slice {
		e.value(o.v.Elem())
		return
	}
	et := o.t.Elem()
	if rawable(et) {
		sz := et.Size() * uintptr(o.n)
		b := unsafe.Slice((*byte)(o.v.UnsafePointer()), sz)
		if e.planes && sz >= planesMin && et.Size() > 1 {
			n := len(e.buf)
			e.buf = slices.Grow(e.buf, int(sz))[:n+int(sz)]
			planesInto(e.buf[n:], b, int(et.Size()))
			return
		}
		e.buf = append(e.buf, b...)
		return
	}
	for i := range o.n {
		e.value(o.v.Index(i))
	}
}

// value writes v (pass 2).
func (e *encoder) value(v reflect.Value) {
	t := v.Type()
	if rawable(t) {
		if sz := t.Size(); sz > 0 {
			e.buf = append(e.buf, unsafe.Slice((*byte)(unsafe.Pointer(v.UnsafeAddr())), sz)...)
		}
		return
	}
	switch t.Kind() {
	case reflect.String:
		e.str(v.String())
	case reflect.Pointer:
		if v.IsNil() {
			e.uint(0)
			return
		}
		if n, ok := namer(t); ok {
			e.uint(1)
			e.str(n.name(v.UnsafePointer()))
			return
		}
		e.ref(wkey{v.Pointer(), t.Elem(), -1})
	case reflect.Struct:
		for i := range t.NumField() {
			if t.Field(i).Tag.Get("deepcopy") == "-" {
				continue
			}
			e.value(open(v.Field(i)))
		}
	case reflect.Array:
		for i := range t.Len() {
			e.value(v.Index(i))
		}
	case reflect.Slice:
		if v.IsNil() {
			e.uint(0)
			return
		}
		e.uint(uint64(v.Len()) + 1)
		e.uint(uint64(v.Cap()))
		if v.Cap() > 0 {
			e.ref(wkey{v.Pointer(), t, v.Cap()})
		}
	case reflect.Map:
		if v.IsNil() {
			e.uint(0)
			return
		}
		e.uint(uint64(v.Len()) + 1)
		it := v.MapRange()
		for it.Next() {
			k := reflect.New(t.Key()).Elem()
			k.Set(it.Key())
			x := reflect.New(t.Elem()).Elem()
			x.Set(it.Value())
			e.value(k)
			e.value(x)
		}
	case reflect.Interface:
		if v.IsNil() {
			e.uint(0)
			return
		}
		et := v.Elem().Type()
		e.uint(1)
		e.str(typeName(et))
		tmp := reflect.New(et).Elem()
		tmp.Set(v.Elem())
		e.value(tmp)
	case reflect.Func:
		if v.IsNil() {
			e.uint(0)
			return
		}
		e.uint(1)
		e.str(funcName(v))
	}
}

// decoder reads what Encode wrote.
type decoder struct {
	b    []byte
	root reflect.Type
	// objs are the outermost objects: their memory, size and address
	// in the encoded graph (increasing).
	base  []unsafe.Pointer
	size  []uintptr
	start []uint64
	keep  []reflect.Value
	// of is each object's type, its element type for an array object:
	// a pointer into an object must point at a value of its own type
	// there (holdsAt), so bytes cannot make a *T alias memory of
	// another type (a pointer the garbage collector does not know of).
	of []reflect.Type
	// planes is the flags' wirePlanes: the arrays EncodePlanes wrote
	// as planes are those of at least planesMin bytes.
	planes bool
	// yield is DecodeYield's (nil for Decode); work is what was done
	// since it was last called, in bytes allocated or read.
	yield func() bool
	work  int
}

// yieldEvery is the work, in bytes allocated or read, DecodeYield does
// between two calls of its yield: about a millisecond of decoding in the
// browser.
const yieldEvery = 256 << 10

// did counts n bytes of work and calls yield once it reaches yieldEvery.
func (d *decoder) did(n int) {
	if d.yield == nil {
		return
	}
	d.work += n
	if d.work >= yieldEvery {
		d.work = 0
		if !d.yield() {
			d.fail("stopped by its caller")
		}
	}
}

// wireError is Decode's panic on bytes it cannot read, recovered into
// an *Error.
type wireError struct{ reason string }

func (d *decoder) fail(reason string) { panic(wireError{reason}) }

func (d *decoder) uint() uint64 {
	x, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("a number is cut short")
	}
	d.b = d.b[n:]
	return x
}

func (d *decoder) int(limit uint64) int {
	x := d.uint()
	if x > limit {
		d.fail(fmt.Sprintf("a size of %d is over %d", x, limit))
	}
	return int(x)
}

func (d *decoder) bytes(n uintptr) []byte {
	if uintptr(len(d.b)) < n {
		d.fail("the bytes end early")
	}
	out := d.b[:n]
	d.b = d.b[n:]
	return out
}

func (d *decoder) str() string {
	n := d.int(uint64(len(d.b)))
	return string(d.bytes(uintptr(n)))
}

func (d *decoder) typ() reflect.Type {
	name := d.str()
	t, ok := lookupType(name, d.root)
	if !ok {
		d.fail("unknown type " + name)
	}
	return t
}

// Decode rebuilds the graph Encode wrote; bytes that are not an encoding
// of a *T from the same source are refused with an error.
func Decode[T any](b []byte) (root *T, err error) { return DecodeYield[T](b, nil) }

// DecodeYield is Decode calling yield between pieces of its work (about
// yieldEvery bytes allocated or read each; a large array is read in
// pieces), so that a caller that must not hold its thread for long (the
// page's main thread reading a run back) can pause it there: the decoder
// knows no clock. When yield returns false, decoding stops with an
// error.
func DecodeYield[T any](b []byte, yield func() bool) (root *T, err error) {
	d := &decoder{b: b, root: reflect.TypeFor[*T](), yield: yield}
	defer func() {
		if r := recover(); r != nil {
			we, ok := r.(wireError)
			if !ok {
				panic(r)
			}
			root, err = nil, &Error{Path: "root", Reason: "cannot decode: " + we.reason}
		}
	}()
	if string(d.bytes(uintptr(len(wireMagic)))) != wireMagic {
		d.fail("not an encoding of this version")
	}
	flags := d.uint()
	if flags&^wirePlanes != 0 {
		d.fail("unknown flags")
	}
	d.planes = flags&wirePlanes != 0
	if name := d.str(); name != typeName(d.root) {
		d.fail("an encoding of a " + name + ", not of a " + typeName(d.root))
	}
	// Each type's name takes at least a byte.
	types := make([]reflect.Type, d.int(uint64(len(d.b))))
	for i := range types {
		types[i] = d.typ()
	}
	// Each object takes at least three bytes to describe.
	n := d.int(uint64(len(d.b)) / 3)
	// Every object's contents follow the objects' list, each taking at
	// least wireMin bytes: an object is refused before it is allocated
	// when the bytes left cannot hold it and the ones before it, so a
	// hostile count (2^40 elements) costs nothing and what Decode
	// allocates stays within a multiple of the encoding's size.
	left := uint64(len(d.b))
	claim := func(cnt uint64, t reflect.Type) {
		per := max(wireMin(t), 1)
		if t.Size() == 0 {
			per = 0
		}
		if per > 0 && cnt > left/per {
			d.fail("an object larger than its encoding can hold")
		}
		left -= cnt * per
	}
	var at uint64
	for i := range n {
		ti := d.uint()
		if ti >= uint64(len(types)) {
			d.fail("an object of no type")
		}
		t := types[ti]
		cnt := d.int(uint64(1) << 40)
		step := d.uint()
		if i > 0 && step == 0 || step > math.MaxUint64-at {
			d.fail("objects out of the order of their addresses")
		}
		at += step
		if at == 0 {
			d.fail("an object at address 0")
		}
		var v reflect.Value
		var sz uintptr
		if t.Kind() == reflect.Slice {
			if cnt == 0 {
				d.fail("an array of no elements")
			}
			claim(uint64(cnt), t.Elem())
			v = reflect.MakeSlice(t, cnt, cnt)
			sz = t.Elem().Size() * uintptr(cnt)
		} else {
			claim(1, t)
			v = reflect.New(t)
			sz = t.Size()
		}
		if i > 0 && at-d.start[i-1] < uint64(d.size[i-1]) {
			d.fail("two objects overlap")
		}
		d.keep = append(d.keep, v)
		d.of = append(d.of, t)
		if t.Kind() == reflect.Slice {
			d.of[i] = t.Elem()
		}
		d.base = append(d.base, v.UnsafePointer())
		d.size = append(d.size, sz)
		d.start = append(d.start, at)
		d.did(int(sz) + 64)
	}
	for i, v := range d.keep {
		if v.Kind() == reflect.Slice {
			et := v.Type().Elem()
			if rawable(et) {
				dst := unsafe.Slice((*byte)(d.base[i]), d.size[i])
				src := d.bytes(d.size[i])
				// In pieces of about yieldEvery bytes.
				es := int(et.Size())
				per := max(yieldEvery/max(es, 1), 1)
				for from := 0; from < v.Len(); from += per {
					to := min(from+per, v.Len())
					if d.planes && d.size[i] >= planesMin && es > 1 {
						unplanesRange(dst, src, es, from, to)
					} else {
						copy(dst[from*es:to*es], src[from*es:to*es])
					}
					d.did((to - from) * es)
				}
				continue
			}
			ew := wtypeOf(et)
			for j := range v.Len() {
				left := len(d.b)
				d.valueOf(v.Index(j), ew)
				d.did(left - len(d.b) + 16)
			}
			continue
		}
		left := len(d.b)
		d.value(v.Elem())
		d.did(left - len(d.b) + 16)
	}
	out := reflect.New(d.root).Elem()
	d.value(out)
	if len(d.b) != 0 {
		d.fail("bytes after the end")
	}
	return out.Interface().(*T), nil
}

// at returns the address of cnt values of type et at an address of the
// encoded graph read from the bytes (inside the outermost object that
// starts at or before it), or nil for a nil pointer. The size is
// compared by division: es*cnt can wrap around (2^16-byte elements and a
// capacity of 2^48), which would let a slice reach past its object. The
// address must hold an et in its object (holdsAt).
func (d *decoder) at(et reflect.Type, cnt uintptr) unsafe.Pointer {
	es := et.Size()
	addr := d.uint()
	if addr == 0 {
		return nil
	}
	i, found := slices.BinarySearch(d.start, addr)
	if !found {
		i--
	}
	if i < 0 {
		d.fail("a pointer to no object")
	}
	off := addr - d.start[i]
	size := d.size[i]
	if off > uint64(size) || es > 0 && cnt > (size-uintptr(off))/es {
		d.fail("a pointer past its object's end")
	}
	if es > 0 && !holdsAt(d.of[i], uintptr(off)%d.of[i].Size(), et) {
		d.fail("a pointer to a " + et.String() + " into a " + d.of[i].String())
	}
	return unsafe.Add(d.base[i], off)
}

// holdsAt reports whether a value of type t holds a value of type want
// at byte offset off: t itself at 0, or a field's or an array element's
// value that does. (An object's element type has a non-zero size here:
// at's caller only asks for types that take memory.)
func holdsAt(t reflect.Type, off uintptr, want reflect.Type) bool {
	if off == 0 && t == want {
		return true
	}
	switch t.Kind() {
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			if off >= f.Offset && off-f.Offset < f.Type.Size() && holdsAt(f.Type, off-f.Offset, want) {
				return true
			}
		}
	case reflect.Array:
		if es := t.Elem().Size(); es > 0 && off < t.Size() {
			return holdsAt(t.Elem(), off%es, want)
		}
	}
	return false
}

// wireMin is the fewest bytes Encode writes for a value of type t (a
// nil pointer, slice, map, interface or func and an empty string are
// one byte each).
func wireMin(t reflect.Type) uint64 {
	if v, ok := wireMinCache.Load(t); ok {
		return v.(uint64)
	}
	var m uint64
	switch {
	case rawable(t):
		m = uint64(t.Size())
	case t.Kind() == reflect.Struct:
		for i := range t.NumField() {
			if t.Field(i).Tag.Get("deepcopy") != "-" {
				m += wireMin(t.Field(i).Type)
			}
		}
	case t.Kind() == reflect.Array:
		m = uint64(t.Len()) * wireMin(t.Elem())
	default:
		m = 1
	}
	wireMinCache.Store(t, m)
	return m
}

var wireMinCache sync.Map // reflect.Type -> uint64

type sliceHeader struct {
	data     unsafe.Pointer
	len, cap int
}

// wtype is what Decode needs of a type, worked out once (wtypeOf): a
// value of a struct type is read field by field without asking
// reflect for each field's type and tag at every value.
type wtype struct {
	t    reflect.Type
	raw  bool // rawable(t)
	size uintptr
	// fields are a struct's fields that are written, in order, a run
	// of rawable fields that lie next to each other in memory as one
	// (Encode writes each field's bytes one after the other, so the
	// run's bytes are its memory's).
	fields []wfield
	// elem is an array's element type's.
	elem *wtype
}

type wfield struct {
	idx       int // the field's index, for a field that is not raw
	off, size uintptr
	raw       bool
	w         *wtype
}

var wtypes sync.Map // reflect.Type -> *wtype

// wtypeOf returns t's wtype.
func wtypeOf(t reflect.Type) *wtype {
	if w, ok := wtypes.Load(t); ok {
		return w.(*wtype)
	}
	w := &wtype{t: t, raw: rawable(t), size: t.Size()}
	if !w.raw {
		switch t.Kind() {
		case reflect.Struct:
			for i := range t.NumField() {
				f := t.Field(i)
				if f.Tag.Get("deepcopy") == "-" {
					continue
				}
				if rawable(f.Type) {
					if f.Type.Size() == 0 {
						continue
					}
					if k := len(w.fields) - 1; k >= 0 && w.fields[k].raw && w.fields[k].off+w.fields[k].size == f.Offset {
						w.fields[k].size += f.Type.Size()
						continue
					}
					w.fields = append(w.fields, wfield{off: f.Offset, size: f.Type.Size(), raw: true})
					continue
				}
				w.fields = append(w.fields, wfield{idx: i, off: f.Offset, size: f.Type.Size(), w: wtypeOf(f.Type)})
			}
		case reflect.Array:
			w.elem = wtypeOf(t.Elem())
		}
	}
	got, _ := wtypes.LoadOrStore(t, w)
	return got.(*wtype)
}

// value reads into v (addressable, zero).
func (d *decoder) value(v reflect.Value) { d.valueOf(v, wtypeOf(v.Type())) }

// valueOf reads into v, of w's type.
func (d *decoder) valueOf(v reflect.Value, w *wtype) {
	t := w.t
	if w.raw {
		if sz := w.size; sz > 0 {
			copy(unsafe.Slice((*byte)(unsafe.Pointer(v.UnsafeAddr())), sz), d.bytes(sz))
		}
		return
	}
	switch t.Kind() {
	case reflect.String:
		settable(v).SetString(d.str())
	case reflect.Pointer:
		if n, ok := namer(t); ok {
			if d.uint() == 0 {
				return
			}
			name := d.str()
			p, ok := n.find(name)
			if !ok {
				d.fail("no " + t.Elem().String() + " named " + name)
			}
			*(*unsafe.Pointer)(unsafe.Pointer(v.UnsafeAddr())) = p
			return
		}
		if p := d.at(t.Elem(), 1); p != nil {
			*(*unsafe.Pointer)(unsafe.Pointer(v.UnsafeAddr())) = p
		}
	case reflect.Struct:
		base := unsafe.Pointer(v.UnsafeAddr())
		for k := range w.fields {
			f := &w.fields[k]
			if f.raw {
				copy(unsafe.Slice((*byte)(unsafe.Add(base, f.off)), f.size), d.bytes(f.size))
				continue
			}
			d.valueOf(v.Field(f.idx), f.w)
		}
	case reflect.Array:
		for i := range t.Len() {
			d.valueOf(v.Index(i), w.elem)
		}
	case reflect.Slice:
		n1 := d.int(1 << 48)
		if n1 == 0 {
			return
		}
		n := n1 - 1
		capacity := d.int(1 << 48)
		if n > capacity {
			d.fail("a slice longer than its capacity")
		}
		h := (*sliceHeader)(unsafe.Pointer(v.UnsafeAddr()))
		if capacity == 0 {
			settable(v).Set(reflect.MakeSlice(t, 0, 0))
			return
		}
		p := d.at(t.Elem(), uintptr(capacity))
		if p == nil {
			d.fail("a slice of no array")
		}
		*h = sliceHeader{p, n, capacity}
	case reflect.Map:
		n1 := d.int(uint64(len(d.b)) + 1)
		if n1 == 0 {
			return
		}
		if per := wireMin(t.Key()) + wireMin(t.Elem()); per > 0 && uint64(n1-1) > uint64(len(d.b))/per {
			d.fail("a map larger than its encoding can hold")
		}
		m := reflect.MakeMapWithSize(t, n1-1)
		for range n1 - 1 {
			k := reflect.New(t.Key()).Elem()
			d.value(k)
			x := reflect.New(t.Elem()).Elem()
			d.value(x)
			m.SetMapIndex(k, x)
		}
		settable(v).Set(m)
	case reflect.Interface:
		if d.uint() == 0 {
			return
		}
		et := d.typ()
		if !et.Implements(t) {
			d.fail(et.String() + " does not implement " + t.String())
		}
		tmp := reflect.New(et).Elem()
		d.value(tmp)
		settable(v).Set(tmp)
	case reflect.Func:
		if d.uint() == 0 {
			return
		}
		name := d.str()
		f, ok := lookupFunc(name)
		if !ok || f.Type() != t {
			d.fail("no function " + name + " of type " + t.String())
		}
		settable(v).Set(f)
	default:
		d.fail("cannot read a " + t.Kind().String())
	}
}
