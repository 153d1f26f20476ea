package mapview

import (
	"bytes"
	"image"
	"image/png"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/sim"
)

func newMachine(t testing.TB, pagesPerNode uint64, nodes int) *mm.Machine {
	t.Helper()
	cfg, err := mm.SimpleLayout(pagesPerNode, nodes, 1)
	require.NoError(t, err)
	m, err := mm.NewMachine(cfg)
	require.NoError(t, err)
	return m
}

func task(m *mm.Machine) *sim.Task { return m.World.NewTask("test", 0, nil, sim.Never) }

func TestAFreshMachineIsDarkMovableExceptTheReservedTop(t *testing.T) {
	m := newMachine(t, 65536, 1) // 256 MiB: 128 blocks, the top 2 reserved (memmap)
	r := New(800, 600)
	r.Render([]Panel{{Title: "baseline", Src: m}})
	require.True(t, r.PageView, "a small machine fits at more than a pixel per page")
	r.Cam.Zoom = 0.5
	r.Render([]Panel{{Title: "baseline", Src: m}})
	first := int(m.Zones()[mm.ZONE_NORMAL].StartPFN >> mm.PageblockOrder)
	for blk := first; blk < first+128; blk++ {
		x, y, ok := r.BlockCenter(0, blk)
		require.True(t, ok, "block %d is visible at fit", blk)
		want := FreeColor(mm.MIGRATE_MOVABLE)
		if blk >= first+126 {
			want = UsedColor(mm.MIGRATE_MOVABLE)
		}
		assert.Equal(t, want, r.At(x, y), "block %d", blk)
	}
	assert.False(t, r.PageView)
}

func TestAnUnmovableBlockShowsInItsColour(t *testing.T) {
	m := newMachine(t, 65536, 1)
	tk := task(m)
	pfn := m.AllocPages(tk, mm.GFP_KERNEL, 9, 0, 0)
	require.NotEqual(t, mm.NilPFN, pfn)
	require.Equal(t, mm.MIGRATE_UNMOVABLE, m.PageblockMigratetype(pfn))
	r := New(800, 600)
	r.Render([]Panel{{Src: m}})
	x, y, ok := r.BlockCenter(0, int(pfn>>mm.PageblockOrder))
	require.True(t, ok)
	assert.Equal(t, UsedColor(mm.MIGRATE_UNMOVABLE), r.At(x, y))
	h, ok := r.HitTest(x, y)
	require.True(t, ok)
	assert.Equal(t, int(pfn>>mm.PageblockOrder), h.Block)
	assert.Equal(t, mm.MIGRATE_UNMOVABLE, h.View.MT)
}

func TestSideBySideColumnsShareTheCamera(t *testing.T) {
	a, b := newMachine(t, 65536, 1), newMachine(t, 65536, 1)
	pfn := b.AllocPages(task(b), mm.GFP_KERNEL, 9, 0, 0)
	r := New(1000, 500)
	r.Render([]Panel{{Title: "a", Src: a}, {Title: "b", Src: b}})
	blk := int(pfn >> mm.PageblockOrder)
	xa, ya, ok := r.BlockCenter(0, blk)
	require.True(t, ok)
	xb, yb, ok := r.BlockCenter(1, blk)
	require.True(t, ok)
	assert.Equal(t, ya, yb)
	assert.Equal(t, r.MapRect(1).X0-r.MapRect(0).X0, xb-xa)
	assert.Equal(t, FreeColor(mm.MIGRATE_MOVABLE), r.At(xa, ya))
	assert.Equal(t, UsedColor(mm.MIGRATE_UNMOVABLE), r.At(xb, yb))
	var texts []string
	for _, l := range r.Labels {
		texts = append(texts, l.Text)
	}
	assert.Contains(t, texts, "a")
	assert.Contains(t, texts, "b")
	assert.Contains(t, texts, "Node 0 Normal  256 MiB")
}

func TestZoomingInShowsSinglePages(t *testing.T) {
	m := newMachine(t, 1<<20, 1) // 4 GiB: block view at fit
	tk := task(m)
	pfn := m.AllocPages(tk, mm.MustParseGFP("GFP_HIGHUSER_MOVABLE|__GFP_COMP"), 0, 0, 0)
	require.NotEqual(t, mm.NilPFN, pfn)
	r := New(800, 600)
	r.Render([]Panel{{Src: m}})
	require.False(t, r.PageView)
	// Find the page on screen, zoom in on it until pages are 8 px wide.
	find := func() (int, int, bool) {
		view := r.MapRect(0)
		for sy := view.Y0; sy < view.Y1; sy++ {
			for sx := view.X0; sx < view.X1; sx++ {
				// Below a pixel per page, a pixel shows a few pages.
				h, ok := r.HitTest(sx, sy)
				off := h.PFN - pfn
				if ok && h.PFN >= pfn && off%TileW < 4 && off/TileW < 4 && (off == 0 || !r.PageView) {
					return sx, sy, true
				}
			}
		}
		return 0, 0, false
	}
	x, y, ok := find()
	require.True(t, ok)
	for r.Cam.Zoom < 8 {
		r.ZoomAt(2, x, y)
		r.Render([]Panel{{Src: m}})
		x, y, ok = find()
		require.True(t, ok, "zoom %v", r.Cam.Zoom)
	}
	assert.True(t, r.PageView)
	h, _ := r.HitTest(x, y)
	assert.Equal(t, pfn, h.PFN)
	assert.Equal(t, UsedColor(mm.MIGRATE_MOVABLE), r.At(x, y))
	// Every page of the block on screen has the colour of its state.
	blk := int(pfn >> mm.PageblockOrder)
	states := m.PageStates(mm.PFN(blk)<<mm.PageblockOrder, make([]mm.PageState, mm.PageblockNrPages))
	seen := map[mm.PageState]bool{}
	view := r.MapRect(0)
	for sy := view.Y0; sy < view.Y1; sy += 3 {
		for sx := view.X0; sx < view.X1; sx += 3 {
			h, ok := r.HitTest(sx, sy)
			if !ok || h.Block != blk {
				continue
			}
			st := states[h.PFN&(mm.PageblockNrPages-1)]
			seen[st] = true
			assert.Equal(t, PageColor(h.View.MT, st), r.At(sx, sy), "pfn %#x state %v", h.PFN, st)
		}
	}
	assert.True(t, seen[mm.PSKernel] && seen[mm.PSPCP], "seen %v", seen)
}

func TestZoomKeepsThePointUnderTheMouse(t *testing.T) {
	m := newMachine(t, 65536, 2)
	r := New(900, 700)
	r.Render([]Panel{{Src: m}})
	mx, my := 300, 400
	before, ok := r.HitTest(mx, my)
	require.True(t, ok)
	r.ZoomAt(4, mx, my)
	r.Render([]Panel{{Src: m}})
	after, ok := r.HitTest(mx, my)
	require.True(t, ok)
	assert.Equal(t, before.PFN>>4, after.PFN>>4, "within 16 pages")
	r.ZoomAt(1e-9, mx, my)
	assert.Equal(t, r.Fit(), r.Cam.Zoom, "cannot zoom out past the whole machine")
	r.ZoomAt(1e9, mx, my)
	assert.Equal(t, float64(MaxZoom), r.Cam.Zoom)
}

func TestPanningIsClampedToTheMap(t *testing.T) {
	m := newMachine(t, 65536, 1)
	r := New(800, 600)
	r.Render([]Panel{{Src: m}})
	r.ZoomAt(8, 400, 300)
	r.PanBy(1e7, 1e7)
	x, y := r.Cam.X, r.Cam.Y
	r.PanBy(1e7, 1e7)
	assert.Equal(t, x, r.Cam.X)
	assert.Equal(t, y, r.Cam.Y)
	r.Render([]Panel{{Src: m}})
	view := r.MapRect(0)
	_, ok := r.HitTest(view.X1-1, view.Y1-1)
	assert.True(t, ok, "the map still covers the bottom-right corner")
}

func TestEveryNodeAndZoneGetsABandAndAHeaderRow(t *testing.T) {
	cfg, err := mm.X86Layout(8<<30, 2, 1)
	require.NoError(t, err)
	m, err := mm.NewMachine(cfg)
	require.NoError(t, err)
	r := New(1200, 800)
	r.Render([]Panel{{Title: "x86", Src: m}})
	var texts []string
	for _, l := range r.Labels {
		texts = append(texts, l.Text)
	}
	joined := strings.Join(texts, "\n")
	for _, want := range []string{"N0 DMA", "N0 DMA32", "N0 Normal", "N1 Normal", "Node 0 DMA32", "Node 1 Normal"} {
		assert.Contains(t, joined, want)
	}
	// The DMA32 zone's gauge is drawn: its track colour appears in the header.
	seen := false
	for y := 0; y < r.MapRect(0).Y0; y++ {
		for x := 0; x < r.W; x++ {
			seen = seen || r.At(x, y) == GaugeOK
		}
	}
	assert.True(t, seen)
}

func TestGaugeAndBuddyScales(t *testing.T) {
	assert.Equal(t, 0, GaugeX(0, 1000, 100))
	assert.Equal(t, 100, GaugeX(1000, 1000, 100))
	assert.Equal(t, 100, GaugeX(5000, 1000, 100))
	assert.Less(t, GaugeX(10, 1000, 100), GaugeX(100, 1000, 100))
	assert.Equal(t, 0, BuddyHeight(0, 12))
	assert.Equal(t, 1, BuddyHeight(1, 12))
	assert.Equal(t, 12, BuddyHeight(1<<30, 12))
}

// The panel's legend uses CSS classes whose colours must equal the map's.
func TestTheStylesheetLegendMatchesThePalette(t *testing.T) {
	css, err := os.ReadFile("../../static/style.css")
	require.NoError(t, err)
	for mt := mm.MigrateType(0); mt < mm.MIGRATE_TYPES; mt++ {
		name := strings.ToLower(mt.String())
		re := regexp.MustCompile(`\.mt-` + name + `\s*\{\s*background:\s*(#[0-9a-f]{6})`)
		m := re.FindSubmatch(css)
		require.NotNil(t, m, "style.css has no .mt-%s rule", name)
		assert.Equal(t, MigrateColors[mt].Hex(), string(m[1]), name)
	}
	for name, c := range map[string]RGB{"st-pinned": Pinned, "st-reserved": Reserved, "st-free": FreeColor(mm.MIGRATE_MOVABLE), "st-pcp": PCPColor(mm.MIGRATE_MOVABLE),
		"mk-migrate": MarkMigrate, "mk-free": MarkFree, "mk-lastrun": MarkLastRun, "lamp-on": LampOn, "lamp-half": LampHalf,
		"ch-psi": ChartPSI, "ch-stall": ChartStall, "ch-alloc": ChartAlloc} {
		re := regexp.MustCompile(`\.` + name + `\s*\{\s*background:\s*(#[0-9a-f]{6})`)
		m := re.FindSubmatch(css)
		require.NotNil(t, m, "style.css has no .%s rule", name)
		assert.Equal(t, c.Hex(), string(m[1]), name)
	}
}

// BenchmarkRender1MPages draws a 4 GiB (1M-page) machine at one pixel
// per page, the figure docs/PERFORMANCE.md tracks.
func BenchmarkRender1MPages(b *testing.B) {
	m := newMachine(b, 1<<20, 1)
	tk := task(m)
	rnd := sim.NewRand(1)
	for i := 0; i < 100000; i++ {
		gfp := mm.GFP_HIGHUSER_MOVABLE
		if rnd.Chance(1, 5) {
			gfp = mm.GFP_KERNEL
		}
		m.AllocPages(tk, gfp, mm.Order(rnd.Intn(4)), 0, 0)
	}
	r := New(1400, 800)
	r.Render([]Panel{{Src: m}})
	r.Cam.Zoom = 1
	r.Render([]Panel{{Src: m}})
	if !r.PageView {
		b.Fatal("not in page view")
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r.Render([]Panel{{Src: m}})
	}
}

func BenchmarkRenderBlocks(b *testing.B) {
	m := newMachine(b, 1<<20, 1)
	r := New(1400, 800)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		r.Render([]Panel{{Src: m}, {Src: m}})
	}
}

// Neighbouring tiles share their edges at any zoom: no background shows
// between them (a gap once drew stray dark lines across the map).
func TestTilesMeetWithoutGapsAtAnyZoom(t *testing.T) {
	m := newMachine(t, 32768, 2)
	r := New(985, 813)
	r.Render([]Panel{{Src: m}, {Src: m}})
	for _, z := range []float64{r.Fit(), 0.713, 1, 1.37, 2.1734, 3.999} {
		r.Cam = Camera{Zoom: z, X: 3.3, Y: 7.7}
		r.Render([]Panel{{Src: m}, {Src: m}})
		for c := 0; c < 2; c++ {
			view := r.MapRect(c)
			for y := view.Y0; y < view.Y1; y++ {
				for x := view.X0; x < view.X1; x++ {
					if _, ok := r.HitTest(x, y); ok && r.At(x, y) == Background {
						t.Fatalf("zoom %v: background at (%d,%d) inside a band", z, x, y)
					}
				}
			}
		}
	}
}

func TestZoomToOnePixelPerPageIsExact(t *testing.T) {
	m := newMachine(t, 1<<20, 1)
	r := New(977, 613)
	r.Render([]Panel{{Src: m}})
	require.Less(t, r.Fit(), 1.0)
	r.ZoomAt(1.37, 300, 400)
	r.ZoomTo(1, 300, 400)
	assert.Equal(t, 1.0, r.Cam.Zoom)
	r.ZoomTo(1e-9, 0, 0)
	assert.Equal(t, r.Fit(), r.Cam.Zoom)
}

func TestThePNGOfTheMapHoldsTheBuffersPixels(t *testing.T) {
	r := New(300, 200)
	r.SetScale(2)
	m := newMachine(t, 8192, 2)
	r.Render([]Panel{{Title: "baseline", Src: m}, {Title: "patched", Src: m}})
	var b bytes.Buffer
	require.NoError(t, r.PNG(&b))
	img, err := png.Decode(&b)
	require.NoError(t, err)
	require.Equal(t, image.Rect(0, 0, r.W, r.H), img.Bounds())
	for _, p := range [][2]int{{0, 0}, {r.W / 2, r.H / 2}, {r.W - 1, r.H - 1}, {17, 150}} {
		i := 4 * (p[1]*r.W + p[0])
		cr, cg, cb, ca := img.At(p[0], p[1]).RGBA()
		assert.Equal(t, [4]uint8{r.Pix[i], r.Pix[i+1], r.Pix[i+2], r.Pix[i+3]}, [4]uint8{uint8(cr >> 8), uint8(cg >> 8), uint8(cb >> 8), uint8(ca >> 8)}, "pixel %v", p)
	}
}
