package deepcopy

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAChunksHashIsMurmurHash3s128BitOne(t *testing.T) {
	// The reference implementation's digests (smhasher's
	// MurmurHash3_x64_128, seed 0).
	assert.Equal(t, "cbd8a7b341bd9b025b1e906a48ae1d19", fmt.Sprintf("%016x%016x", murmur3([]byte("hello"))[0], murmur3([]byte("hello"))[1]))
	assert.Equal(t, "00000000000000000000000000000000", fmt.Sprintf("%016x%016x", murmur3(nil)[0], murmur3(nil)[1]))
}

// text returns n bytes of a pseudo-random text of words (compressible,
// with no long repeats).
func text(n int, seed uint64) []byte {
	words := []string{"zone", "pageblock", "free_area", "pcp", "kswapd", "folio", "lru", "order", "compaction", "watermark"}
	x := seed
	var b []byte
	for len(b) < n {
		x = x*6364136223846793005 + 1442695040888963407
		b = append(b, words[x>>60%uint64(len(words))]...)
		b = append(b, byte('0'+x>>50%10), ' ')
	}
	return b[:n]
}

// Two byte strings that differ by an insertion near the start share the
// chunks after it: the second costs a few chunks, not its whole length,
// and each reads back as it was put; dropping the first frees only what
// the second does not hold, dropping both frees everything.
func TestAStoreKeepsWhatTwoEncodingsShareOnce(t *testing.T) {
	s := NewStore()
	a := text(1<<20, 1)
	b := append(append(append([]byte(nil), a[:5000]...), "an insertion"...), a[5000:]...)
	sa := s.Put(a)
	sb := s.Put(b)
	assert.Less(t, sa.New, int64(len(a))/2, "compressed")
	assert.Less(t, sb.New, sa.New/20, "the second costs its few new chunks")
	ga, err := s.Get(sa)
	require.NoError(t, err)
	assert.Equal(t, a, ga)
	before := s.inflated
	gb, err := s.Get(sb)
	require.NoError(t, err)
	assert.Equal(t, b, gb)
	assert.Less(t, s.inflated-before, len(sb.chunks)/10, "read after the first, the second inflates only the chunks the first does not hold")
	both := s.Bytes()
	s.Drop(sa)
	assert.Greater(t, s.Bytes(), both/2, "the shared chunks stay")
	gb, err = s.Get(sb)
	require.NoError(t, err)
	assert.Equal(t, b, gb)
	s.Drop(sb)
	assert.Zero(t, s.Bytes())
	assert.Empty(t, s.chunks)
}

// What a store exports imports into another store as the same byte
// strings, sharing the chunks that store held already; an import whose
// lists do not add up, or name chunks that did not come, is refused.
func TestAStoresEncodingsCrossToAnotherStore(t *testing.T) {
	a := text(200_000, 3)
	b := append(append([]byte(nil), a[:100]...), text(5000, 4)...)
	b = append(b, a[100:]...)
	from := NewStore()
	sts := []*Stored{from.Put(a), from.Put(b)}
	chunks, lists, sizes := from.Export(sts)

	to := NewStore()
	held := to.Put(a)
	heldBytes := to.Bytes()
	got, err := to.Import(chunks, lists, sizes)
	require.NoError(t, err)
	require.Len(t, got, 2)
	for i, want := range [][]byte{a, b} {
		g, err := to.Get(got[i])
		require.NoError(t, err)
		assert.Equal(t, want, g)
	}
	assert.Less(t, got[0].New, heldBytes/10, "a's chunks were there already")
	to.Drop(got[0])
	to.Drop(got[1])
	assert.Equal(t, heldBytes, to.Bytes())
	g, err := to.Get(held)
	require.NoError(t, err)
	assert.Equal(t, a, g)

	_, err = NewStore().Import(chunks, lists, []int{sizes[0], sizes[1] + 1})
	assert.ErrorContains(t, err, "do not add up")
	_, err = NewStore().Import(chunks[:1], lists, sizes)
	assert.ErrorContains(t, err, "did not come")
}
