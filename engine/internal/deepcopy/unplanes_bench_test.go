package deepcopy

import (
	"bytes"
	"math/rand"
	"testing"
)

func unplanesBenchData(size, n int) (arr, pl []byte) {
	rnd := rand.New(rand.NewSource(1))
	arr = make([]byte, size*n)
	for i := range n {
		for j := range size {
			if rnd.Intn(8) == 0 {
				arr[i*size+j] = byte(rnd.Intn(256))
			} else if i > 0 {
				arr[i*size+j] = arr[(i-1)*size+j] + byte(j%3)
			}
		}
	}
	pl = make([]byte, len(arr))
	planesInto(pl, arr, size)
	return
}

// unplanesBytes is unplanesRange a byte at a time (as it was before
// it read words), for the benchmark's comparison.
func unplanesBytes(dst, src []byte, size, from, to int) {
	n := len(dst) / size
	if from == 0 {
		for j := range size {
			dst[j] = src[j*n]
		}
		from = 1
	}
	for i := from; i < to; i++ {
		cur, prev := dst[i*size:(i+1)*size], dst[(i-1)*size:i*size]
		for j := range cur {
			cur[j] = prev[j] + src[j*n+i]
		}
	}
}

// BenchmarkUnplanes reads back an array of 200,000 40-byte elements
// from its planes in DecodeYield's pieces: unplanesRange against a byte
// at a time.
//
//	go test -run '^$' -bench Unplanes ./engine/internal/deepcopy/
//	GOOS=js GOARCH=wasm go test -run '^$' -bench Unplanes ./engine/internal/deepcopy/
func BenchmarkUnplanes(b *testing.B) {
	const size, n = 40, 200000
	arr, pl := unplanesBenchData(size, n)
	dst := make([]byte, len(arr))
	per := max(yieldEvery/size, 1)
	for _, c := range []struct {
		name string
		f    func(dst, src []byte, size, from, to int)
	}{{"words", unplanesRange}, {"bytes", unplanesBytes}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				for from := 0; from < n; from += per {
					c.f(dst, pl, size, from, min(from+per, n))
				}
			}
			if !bytes.Equal(dst, arr) {
				b.Fatal("not the array")
			}
			b.SetBytes(int64(len(arr)))
		})
	}
}
