package deepcopy

import (
	"hash"
	"io"
	"reflect"
)

// streamHash passes Digest's byte stream to a writer.
type streamHash struct{ w io.Writer }

func (s streamHash) Write(b []byte) (int, error) { return s.w.Write(b) }
func (s streamHash) Sum(b []byte) []byte         { return b }
func (s streamHash) Reset()                      {}
func (s streamHash) Size() int                   { return 8 }
func (s streamHash) BlockSize() int              { return 1 }
func (s streamHash) Sum64() uint64               { return 0 }

var _ hash.Hash64 = streamHash{}

// Serialise writes the byte stream Digest hashes: every field of the
// graph in the walk's order, which is what a serialised checkpoint would
// hold (its restore is not written; the benchmarks measure its size and
// time against Copy's).
func Serialise(w io.Writer, root any) error {
	d := newDigester()
	d.h = streamHash{w}
	v := reflect.ValueOf(root)
	tmp := reflect.New(v.Type()).Elem()
	tmp.Set(v)
	c := &copier{}
	return c.run(func() { d.value(c, tmp) })
}
