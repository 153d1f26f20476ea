package deepcopy

// store.go keeps a run's checkpoints as bytes (EncodePlanes' encodings),
// each distinct piece once.
//
// Two checkpoints of a run taken a fraction of a second apart hold mostly
// the same objects with the same contents at the same addresses (the Go
// heap does not move objects, and Encode writes a pointer as its target's
// address, so an object that lives on encodes alike from one checkpoint
// to the next, wherever objects were added or freed before it). A Store
// cuts each encoding into chunks at boundaries chosen by the bytes
// themselves (a rolling hash, "content-defined chunking" as rsync's and
// backup tools' deduplication does it), so an insertion or a deletion
// moves the boundaries only around it, and keeps each distinct chunk
// once, compressed with flate at BestSpeed, counted by the encodings
// that hold it. An encoding costs its new chunks: docs/PERFORMANCE.md,
// "Checkpoints", has what that saves per scenario.
//
// A chunk is known by a 128-bit hash of its bytes (MurmurHash3's x64
// 128-bit function). Two different chunks with one hash would restore a
// wrong state; for the fewer than 2^32 chunks a store ever holds the odds
// are below 2^-64, and Decode's checks and the restore tests stand behind
// it.

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"io"
	"math/bits"
)

// Chunk sizes: at least chunkMin bytes, at most chunkMax, a boundary
// where the rolling hash's top chunkBits bits are zero (one in 2^12
// places, so about 4 KiB past chunkMin on average).
const (
	chunkMin  = 1 << 10
	chunkMax  = 1 << 16
	chunkBits = 12
)

// gear is the rolling hash's table: a random 64-bit number per byte
// value (splitmix64 from a fixed seed, so every store cuts alike).
var gear = func() (g [256]uint64) {
	x := uint64(0x5eed_9a9e_51a1)
	for i := range g {
		x += 0x9e3779b97f4a7c15
		z := x
		z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
		z = (z ^ z>>27) * 0x94d049bb133111eb
		g[i] = z ^ z>>31
	}
	return g
}()

// cut returns the length of the first chunk of b.
func cut(b []byte) int {
	if len(b) <= chunkMin {
		return len(b)
	}
	n := min(len(b), chunkMax)
	const mask = (1<<chunkBits - 1) << (64 - chunkBits)
	var h uint64
	for i := chunkMin; i < n; i++ {
		h = h<<1 + gear[b[i]]
		if h&mask == 0 {
			return i + 1
		}
	}
	return n
}

type chunkKey [2]uint64

// chunk is one distinct chunk: its compressed bytes, its length and how
// many encodings hold it.
type chunk struct {
	key  chunkKey
	data []byte
	n    int
	refs int
}

// Store holds encodings as shared chunks (see the file's comment). It is
// used by one goroutine at a time.
type Store struct {
	chunks map[chunkKey]*chunk
	bytes  int64
	fw     *flate.Writer
	fr     io.ReadCloser
	buf    bytes.Buffer
	// last is what the latest Get returned (when at most lastMax
	// bytes) and lastAt where each of its chunks lies in it: the next
	// Get copies the chunks the two share instead of inflating them
	// again (two checkpoints of a run share most of their chunks).
	last   []byte
	lastAt map[*chunk]int
	// inflated counts the chunks Get inflated (for the tests).
	inflated int
}

// lastMax is the largest encoding whose bytes a Store keeps for its next
// Get: a run at the page's scales (thp-thisnode's 14.6 MB at 0.05), not
// scale 1's (276 MB).
const lastMax = 64 << 20

// Stored is one encoding in a Store.
type Stored struct {
	chunks []*chunk
	size   int
	// New is what putting it added to the store: its chunks no
	// encoding held before.
	New int64
}

// chunkRef is what a Stored costs beside its chunks: a pointer per
// chunk.
const chunkRef = 8

// NewStore returns an empty store.
func NewStore() *Store { return &Store{chunks: map[chunkKey]*chunk{}} }

// Bytes is what the store holds: its chunks' compressed bytes and the
// encodings' lists of chunks.
func (s *Store) Bytes() int64 { return s.bytes }

// Put stores b (which the store does not keep) and returns its handle.
func (s *Store) Put(b []byte) *Stored {
	st := &Stored{size: len(b)}
	before := s.bytes
	for len(b) > 0 {
		n := cut(b)
		st.chunks = append(st.chunks, s.add(b[:n]))
		b = b[n:]
	}
	s.bytes += int64(len(st.chunks)) * chunkRef
	st.New = s.bytes - before
	return st
}

func (s *Store) add(b []byte) *chunk {
	k := murmur3(b)
	if c := s.chunks[k]; c != nil && c.n == len(b) {
		c.refs++
		return c
	}
	s.buf.Reset()
	if s.fw == nil {
		s.fw, _ = flate.NewWriter(&s.buf, flate.BestSpeed)
	} else {
		s.fw.Reset(&s.buf)
	}
	s.fw.Write(b)
	s.fw.Close()
	c := &chunk{key: k, data: bytes.Clone(s.buf.Bytes()), n: len(b), refs: 1}
	s.chunks[k] = c
	s.bytes += int64(len(c.data))
	return c
}

// errStoreCorrupt is Get's error when a chunk does not inflate to its
// length (which a Store's own chunks always do).
var errStoreCorrupt = errors.New("a stored chunk does not inflate to its length")

// Get returns the bytes st holds, a new slice that is read only: the
// store reads it again to copy the chunks the next Get shares with it.
func (s *Store) Get(st *Stored) ([]byte, error) {
	out := make([]byte, st.size)
	off := 0
	last, lastAt := s.last, s.lastAt
	s.last = nil
	for _, c := range st.chunks {
		if at, ok := lastAt[c]; ok && off+c.n <= len(out) {
			copy(out[off:off+c.n], last[at:at+c.n])
			off += c.n
			continue
		}
		r := bytes.NewReader(c.data)
		if s.fr == nil {
			s.fr = flate.NewReader(r)
		} else {
			s.fr.(flate.Resetter).Reset(r, nil)
		}
		if off+c.n > len(out) {
			return nil, errStoreCorrupt
		}
		if _, err := io.ReadFull(s.fr, out[off:off+c.n]); err != nil {
			return nil, errStoreCorrupt
		}
		s.inflated++
		off += c.n
	}
	if off != len(out) {
		return nil, errStoreCorrupt
	}
	if len(out) <= lastMax {
		if lastAt == nil {
			lastAt = make(map[*chunk]int, len(st.chunks))
		}
		clear(lastAt)
		off = 0
		for _, c := range st.chunks {
			lastAt[c] = off
			off += c.n
		}
		s.last, s.lastAt = out, lastAt
	}
	return out, nil
}

// Drop releases st: the chunks no other encoding holds leave the store.
func (s *Store) Drop(st *Stored) {
	for _, c := range st.chunks {
		c.refs--
		if c.refs == 0 {
			delete(s.chunks, c.key)
			s.bytes -= int64(len(c.data))
		}
	}
	s.bytes -= int64(len(st.chunks)) * chunkRef
	st.chunks = nil
}

// murmur3 is MurmurHash3's x64 128-bit function of b, seed 0.
func murmur3(b []byte) chunkKey {
	const c1, c2 = 0x87c37b91114253d5, 0x4cf5ad432745937f
	var h1, h2 uint64
	n := len(b)
	for len(b) >= 16 {
		k1 := binary.LittleEndian.Uint64(b)
		k2 := binary.LittleEndian.Uint64(b[8:])
		b = b[16:]
		k1 *= c1
		k1 = bits.RotateLeft64(k1, 31)
		k1 *= c2
		h1 ^= k1
		h1 = bits.RotateLeft64(h1, 27)
		h1 += h2
		h1 = h1*5 + 0x52dce729
		k2 *= c2
		k2 = bits.RotateLeft64(k2, 33)
		k2 *= c1
		h2 ^= k2
		h2 = bits.RotateLeft64(h2, 31)
		h2 += h1
		h2 = h2*5 + 0x38495ab5
	}
	var k1, k2 uint64
	for i := len(b) - 1; i >= 8; i-- {
		k2 = k2<<8 | uint64(b[i])
	}
	for i := min(len(b), 8) - 1; i >= 0; i-- {
		k1 = k1<<8 | uint64(b[i])
	}
	if len(b) > 8 {
		k2 *= c2
		k2 = bits.RotateLeft64(k2, 33)
		k2 *= c1
		h2 ^= k2
	}
	if len(b) > 0 {
		k1 *= c1
		k1 = bits.RotateLeft64(k1, 31)
		k1 *= c2
		h1 ^= k1
	}
	h1 ^= uint64(n)
	h2 ^= uint64(n)
	h1 += h2
	h2 += h1
	h1, h2 = fmix64(h1), fmix64(h2)
	h1 += h2
	h2 += h1
	return chunkKey{h1, h2}
}

func fmix64(k uint64) uint64 {
	k ^= k >> 33
	k *= 0xff51afd7ed558ccd
	k ^= k >> 33
	k *= 0xc4ceb9fe1a85ec53
	k ^= k >> 33
	return k
}

// WireChunk is a chunk as it crosses from one process to another
// (Export, Import): its hash, its length and its compressed bytes.
type WireChunk struct {
	Key  [2]uint64
	N    int
	Data []byte
}

// Export returns what sts hold, to cross to another process: the chunks
// they hold, each once, and each encoding as its chunks' numbers there
// and its length.
func (s *Store) Export(sts []*Stored) (chunks []WireChunk, lists [][]uint32, sizes []int) {
	index := map[*chunk]uint32{}
	for _, st := range sts {
		list := make([]uint32, len(st.chunks))
		for i, c := range st.chunks {
			n, ok := index[c]
			if !ok {
				n = uint32(len(chunks))
				index[c] = n
				chunks = append(chunks, WireChunk{Key: c.key, N: c.n, Data: c.data})
			}
			list[i] = n
		}
		lists = append(lists, list)
		sizes = append(sizes, st.size)
	}
	return chunks, lists, sizes
}

// Import adds what Export wrote in another process and returns its
// encodings, in the store now. A chunk the store holds already (by its
// hash and length) is kept once. The chunks' hashes are taken as they
// come (they are the sender's, a worker built from the same source);
// what is checked is that every list names chunks that came and adds up
// to its encoding's length, and each chunk's length is one the store
// cuts. A chunk whose bytes do not inflate to its length fails Get.
func (s *Store) Import(chunks []WireChunk, lists [][]uint32, sizes []int) ([]*Stored, error) {
	if len(lists) != len(sizes) {
		return nil, errors.New("an import's lists and lengths do not match")
	}
	for _, c := range chunks {
		if c.N <= 0 || c.N > chunkMax || len(c.Data) == 0 {
			return nil, errors.New("an imported chunk of a length the store does not cut")
		}
	}
	for i, list := range lists {
		total := 0
		for _, n := range list {
			if int(n) >= len(chunks) {
				return nil, errors.New("an imported encoding names a chunk that did not come")
			}
			total += chunks[n].N
		}
		if total != sizes[i] {
			return nil, errors.New("an imported encoding's chunks do not add up to its length")
		}
	}
	got := make([]*chunk, len(chunks))
	out := make([]*Stored, len(lists))
	for i, list := range lists {
		st := &Stored{size: sizes[i]}
		before := s.bytes
		for _, n := range list {
			c := got[n]
			if c == nil {
				w := chunks[n]
				k := chunkKey(w.Key)
				if old := s.chunks[k]; old != nil && old.n == w.N {
					c = old
				} else {
					c = &chunk{key: k, data: bytes.Clone(w.Data), n: w.N}
					s.chunks[k] = c
					s.bytes += int64(len(c.data))
				}
				got[n] = c
			}
			c.refs++
			st.chunks = append(st.chunks, c)
		}
		s.bytes += int64(len(st.chunks)) * chunkRef
		st.New = s.bytes - before
		out[i] = st
	}
	return out, nil
}
