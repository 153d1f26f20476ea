package mapview

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/sim"
)

// staged is a machine whose thread states and compaction history a test
// sets, to see how the map draws them.
type staged struct {
	*mm.Machine
	nodes []mm.NodeView
	zones []mm.ZoneView
}

func (s staged) NodeViews() []mm.NodeView { return s.nodes }
func (s staged) ZoneViews() []mm.ZoneView { return s.zones }

func labelAt(r *Raster, text string) (Label, bool) {
	for _, l := range r.Labels {
		if strings.HasPrefix(l.Text, text) {
			return l, true
		}
	}
	return Label{}, false
}

// lampAfter returns the colour inside the lamp drawn right after a label.
func lampAfter(t *testing.T, r *Raster, name string, occurrence int) RGB {
	t.Helper()
	n := 0
	for _, l := range r.Labels {
		if l.Text != name {
			continue
		}
		if n == occurrence {
			x := l.X + l.W + 4 + lampSize/2
			y := l.Y + l.H/2
			inLamp := false
			for _, lp := range r.Lamps {
				inLamp = inLamp || lp.Contains(x, y)
			}
			require.True(t, inLamp, "a lamp follows %q", name)
			return r.At(x, y)
		}
		n++
	}
	t.Fatalf("no label %q (#%d)", name, occurrence)
	return RGB{}
}

func TestTheNodeRowsLightKswapdAndKcompactdWhileTheyWork(t *testing.T) {
	m := newMachine(t, 65536, 2)
	s := staged{Machine: m, zones: m.ZoneViews(), nodes: []mm.NodeView{
		{Node: 0, Kswapd: "balancing", KswapdOrder: 9, Kcompactd: "sleeping"},
		{Node: 1, Kswapd: "napping", Kcompactd: "compacting", KcompactdOrder: 4},
	}}
	r := New(900, 600)
	r.Render([]Panel{{Title: "v", Src: s}})
	assert.Equal(t, LampOn, lampAfter(t, r, "kswapd", 0))
	assert.Equal(t, LampOff, lampAfter(t, r, "kcompactd", 0))
	assert.Equal(t, LampHalf, lampAfter(t, r, "kswapd", 1))
	assert.Equal(t, LampOn, lampAfter(t, r, "kcompactd", 1))
	for _, want := range []string{"N0", "N1", "balancing o9", "napping", "compacting o4", "sleeping"} {
		_, ok := labelAt(r, want)
		assert.True(t, ok, "label %q", want)
	}
	// A real machine at rest: every lamp is off.
	r.Render([]Panel{{Title: "v", Src: m}})
	assert.Equal(t, LampOff, lampAfter(t, r, "kswapd", 0))
	assert.Equal(t, LampOff, lampAfter(t, r, "kcompactd", 1))

	s.nodes[0].KswapdFailures = maxReclaimRetries
	r.Render([]Panel{{Title: "v", Src: s}})
	_, ok := labelAt(r, "hopeless")
	assert.True(t, ok)
}

func TestTheCompactionScannersAreMarkedOnTheZoneBand(t *testing.T) {
	m := newMachine(t, 65536, 1)
	zones := m.ZoneViews()
	z := &zones[len(zones)-1]
	start := z.StartPFN
	r := New(800, 600)
	fresh := staged{Machine: m, zones: m.ZoneViews(), nodes: m.NodeViews()}
	r.Render([]Panel{{Src: fresh}})
	assert.Empty(t, r.Marks, "no markers before the zone is ever compacted")

	z.CachedMigratePFN = [2]mm.PFN{start + 20*mm.PageblockNrPages + 5, start + 20*mm.PageblockNrPages + 5}
	z.CachedFreePFN = start + 100*mm.PageblockNrPages
	z.LastCompaction = mm.LastCompaction{Runs: 3, At: sim.Second, MigratePFN: start + 60*mm.PageblockNrPages, FreePFN: start + 60*mm.PageblockNrPages + 512, Result: "complete"}
	s := staged{Machine: m, zones: zones, nodes: m.NodeViews()}
	r.Render([]Panel{{Src: s}})
	require.NotEmpty(t, r.Marks)
	b := &r.lay.bands[len(r.lay.bands)-1]
	view := r.MapRect(0)
	for _, c := range []struct {
		pfn mm.PFN
		col RGB
	}{{z.CachedMigratePFN[0], MarkMigrate}, {z.CachedFreePFN, MarkFree}} {
		x, y0, y1, ok := r.pfnScreen(b, c.pfn, view)
		require.True(t, ok)
		assert.Equal(t, c.col, r.At(x, (y0+y1)/2), "the pin's stem crosses the tile row")
		assert.Equal(t, c.col, r.At(x, y0-6), "its head sits above it")
	}
	x, y0, y1, ok := r.pfnScreen(b, z.LastCompaction.MigratePFN, view)
	require.True(t, ok)
	assert.Equal(t, MarkLastRun, r.At(x, (y0+y1)/2), "the latest run's stop")

	// The header's scanner track shows the same three positions.
	seen := map[RGB]bool{}
	for y := 0; y < r.MapRect(0).Y0; y++ {
		for x := 0; x < r.W; x++ {
			seen[r.At(x, y)] = true
		}
	}
	assert.True(t, seen[MarkMigrate] && seen[MarkFree] && seen[MarkLastRun])
	assert.Equal(t, 0, TrackX(start, *z, 100))
	assert.Equal(t, 99, TrackX(start+mm.PFN(z.Spanned), *z, 100))
	assert.Equal(t, 50, TrackX(start+mm.PFN(z.Spanned/2), *z, 100))
}

func TestChartsShareTheirScalesAcrossColumns(t *testing.T) {
	m := newMachine(t, 65536, 1)
	pts := func(vs ...float64) []Point {
		var out []Point
		for i, v := range vs {
			out = append(out, Point{T: sim.Time(i+1) * sim.Second, V: v})
		}
		return out
	}
	a := []Chart{{Name: "psi10", Unit: "%", Color: ChartPSI, Points: pts(0, 10, 20)}}
	b := []Chart{{Name: "psi10", Unit: "%", Color: ChartPSI, Points: pts(40, 40)}}
	r := New(1000, 600)
	r.Render([]Panel{{Title: "a", Src: m, Charts: a}, {Title: "b", Src: m, Charts: b}})
	pa, pb := r.ChartRect(0, 0), r.ChartRect(1, 0)
	require.Positive(t, pa.X1-pa.X0)
	assert.Equal(t, chartScale{T: 3 * sim.Second, V: 50}, r.scales[0])
	h := pa.Y1 - pa.Y0
	height := func(p Rect, frac float64) int {
		x := p.X0 + int(frac*float64(p.X1-p.X0))
		n := 0
		for y := p.Y0; y < p.Y1; y++ {
			if r.At(x, y) == ChartPSI {
				n++
			}
		}
		return n
	}
	// a: 0 in the first second, 10 then 20 of 50; b: 40 for two seconds,
	// nothing in the third (it has not got there).
	assert.Equal(t, 0, height(pa, 0.15))
	assert.InDelta(t, float64(h-1)*10/50, height(pa, 0.5), 1)
	assert.InDelta(t, float64(h-1)*20/50, height(pa, 0.85), 1)
	assert.InDelta(t, float64(h-1)*40/50, height(pb, 0.5), 1)
	assert.Equal(t, 0, height(pb, 0.85))
	_, ok := labelAt(r, "psi10 20%")
	assert.True(t, ok)
	_, ok = labelAt(r, "psi10 40%")
	assert.True(t, ok)
}

func TestValuesPrintShortAndScalesAreRound(t *testing.T) {
	for v, want := range map[float64]string{0: "0", 0.25: "0.25", 3.46: "3.5", 42: "42", 1500: "1.5k", 230e3: "230k", 1.24e6: "1.2M", 33e6: "33M"} {
		assert.Equal(t, want, FormatValue(v), "%v", v)
	}
	for v, want := range map[float64]float64{0: 1, 0.3: 0.5, 1: 1, 1.01: 2, 3: 5, 7: 10, 420: 500, 151e3: 200e3} {
		assert.InDelta(t, want, NiceCeil(v), want*1e-9, "%v", v)
	}
}

func TestTextIsDrawnIntoThePixels(t *testing.T) {
	m := newMachine(t, 65536, 1)
	r := New(600, 400)
	r.Render([]Panel{{Title: "HHH", Src: m}})
	l, ok := labelAt(r, "HHH")
	require.True(t, ok)
	assert.Equal(t, 12.0, l.Size, "12 CSS px at the 1x setting")
	lit, inked := 0, 0
	for y := l.Y; y < l.Y+l.H; y++ {
		for x := l.X; x < l.X+l.W; x++ {
			switch r.At(x, y) {
			case LabelText:
				lit++
			case Background:
			default:
				inked++ // an antialiased edge
			}
		}
	}
	assert.Greater(t, lit, 20, "the H's stems are fully covered")
	assert.Positive(t, inked)
	f := faceFor(12)
	w, h, pix := TextBox([]string{"pfn 0x1", "block 2"}, 3, 12, LabelText, Background)
	assert.Equal(t, 7*f.adv+6, w)
	assert.Equal(t, 2*f.lineH+6, h)
	assert.Len(t, pix, 4*w*h)
	assert.Equal(t, []byte{Background.R, Background.G, Background.B, 0xff}, pix[:4])
}
