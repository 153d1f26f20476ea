package deepcopy_test

import (
	"bufio"
	"compress/flate"
	"io"
	"math"
	"testing"

	"github.com/pagesim/pagesim/engine/internal/deepcopy"
	"github.com/pagesim/pagesim/engine/scenario"
	"github.com/pagesim/pagesim/engine/sim"
)

// countWriter counts the bytes written through it.
type countWriter struct{ n int64 }

func (c *countWriter) Write(b []byte) (int, error) { c.n += int64(len(b)); return len(b), nil }

// BenchmarkCheckpoint measures a checkpoint of each scenario's run at its
// default settings, 20 s (or its end) into the run: Copy (what a
// checkpoint is), the serialised stream the same walk writes, raw and
// compressed with flate at BestSpeed, Pack (arrays of 512 bytes or more
// compressed: the timeline's checkpoints) and Unpack, Encode and
// DecodeRun (a run as bytes: what an engine worker sends the page), and
// Digest. Sizes are reported as metrics: copy_B, stream_B, flate_B,
// packed_B, wire_B.
//
//	go test -run '^$' -bench Checkpoint -benchtime 3x ./engine/internal/deepcopy/
func BenchmarkCheckpoint(b *testing.B) {
	for _, id := range []string{"thp-thisnode", "nofrag-watermark", "noretry-compaction", "promoted-order"} {
		s, err := scenario.Get(id)
		if err != nil {
			b.Fatal(err)
		}
		st, err := s.Parse(nil)
		if err != nil {
			b.Fatal(err)
		}
		r, err := s.NewRun(s.DefaultVariants()[0], st, 1, 0)
		if err != nil {
			b.Fatal(err)
		}
		r.Advance(20*sim.Second, math.MaxInt)
		b.Run(id+"/copy", func(b *testing.B) {
			var n int64
			for b.Loop() {
				_, n, err = r.Clone()
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n), "copy_B")
		})
		b.Run(id+"/serialise", func(b *testing.B) {
			var c countWriter
			for b.Loop() {
				c = countWriter{}
				if err := deepcopy.Serialise(&c, r); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(c.n), "stream_B")
		})
		b.Run(id+"/serialise+flate", func(b *testing.B) {
			var c countWriter
			for b.Loop() {
				c = countWriter{}
				fw, _ := flate.NewWriter(&c, flate.BestSpeed)
				bw := bufio.NewWriterSize(fw, 1<<16)
				if err := deepcopy.Serialise(bw, r); err != nil {
					b.Fatal(err)
				}
				bw.Flush()
				fw.Close()
			}
			b.ReportMetric(float64(c.n), "flate_B")
		})
		b.Run(id+"/pack", func(b *testing.B) {
			var p *deepcopy.Packed[scenario.Run]
			for b.Loop() {
				if p, err = deepcopy.Pack(r, 512); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(p.Bytes), "packed_B")
		})
		b.Run(id+"/unpack", func(b *testing.B) {
			p, err := deepcopy.Pack(r, 512)
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, _, err := p.Unpack(); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(id+"/encode", func(b *testing.B) {
			var n int
			for b.Loop() {
				enc, err := r.Encode()
				if err != nil {
					b.Fatal(err)
				}
				n = len(enc)
			}
			b.ReportMetric(float64(n), "wire_B")
		})
		b.Run(id+"/decode", func(b *testing.B) {
			enc, err := r.Encode()
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := scenario.DecodeRun(enc); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(id+"/digest", func(b *testing.B) {
			for b.Loop() {
				if _, err := r.Digest(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

var _ io.Writer = (*countWriter)(nil)
