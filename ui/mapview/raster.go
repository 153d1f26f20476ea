// Package mapview turns machines into pixels: the physical memory map of
// each variant side by side, with per-zone watermark gauges and buddyinfo
// bars, written into one reused RGBA buffer. It is plain Go so that the
// drawing can be tested and benchmarked natively; the Ebiten view uploads
// the buffer with one WritePixels call and adds the text labels.
//
// # Layout
//
// The canvas is split into one column per panel (variant). A column has a
// header and below it the map viewport. The header holds the variant's
// title; per NUMA node a row with kswapd's and kcompactd's lamps (lit while
// balancing or compacting, see header.go); per zone a row with its name, a
// gauge of free pages against the min/low/high watermarks on a log scale,
// the compaction scanners' track (where the migrate and free scanners'
// cached positions are and where the latest compact_zone() run stopped)
// and eleven buddyinfo bars, one per order; then the variant's time-series
// charts (charts.go). Text is drawn into the same buffer (font.go).
//
// The map is a "world" measured in pages. A pageblock (512 pages) is a
// tile 32 pages wide and 16 high, pages in PFN order row by row inside it.
// Tiles are laid out PFN-ascending, perRow tiles to a row, one band per
// zone, zones of a node together, nodes in order; each band has a gap
// above it for its label. perRow is chosen once per layout so that the
// whole machine fits the viewport (the "fit" zoom), and it does not change
// with zoom: zooming scales the world like an image, so the pixel under
// the mouse stays under the mouse.
//
// The camera (zoom in device pixels per page, and the world point at the
// viewport's top-left) is shared by all columns, so the variants stay
// aligned and the moment they diverge shows in the same place.
//
// # What a pixel shows
//
// Below one device pixel per page (block view) a tile shows its pageblock:
// the migratetype's colour, bright for the used fraction (filled from the
// bottom) and dark for the free part; tiny tiles blend the two. A white
// corner marks a block with pinned pages. At one pixel per page or more
// (page view) every page is drawn: free pages dark, pages on per-CPU lists
// half bright, used pages bright, reserved pages grey, pinned pages white,
// always in the colour of their block's migratetype. Once a zone has been
// compacted, markers on its band show where the compaction scanners'
// cached positions are (a yellow pin for the migrate scanner, a sky-blue
// one for the free scanner) and a reddish-purple diamond where the latest
// run's scanners stopped (they met there when it ran to completion).
package mapview

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/pagesim/pagesim/engine/mm"
)

// Source is what the map reads of a machine: scenario.View (a run's, as
// the page draws it) and *mm.Machine (in tests) implement it.
type Source interface {
	BlockViews(dst []mm.BlockView) []mm.BlockView
	ZoneViews() []mm.ZoneView
	NodeViews() []mm.NodeView
	PageStates(start mm.PFN, dst []mm.PageState) []mm.PageState
}

// Panel is one column: a title, the machine drawn under it and its
// time-series charts (all panels of a Render have the same charts, or
// none).
type Panel struct {
	Title  string
	Src    Source
	Charts []Chart
}

// Geometry constants, in pages (world) and device pixels (px).
const (
	TileW = 32 // pages across a pageblock tile
	TileH = 16 // pages down a pageblock tile

	rowPx  = 18 // header row per zone (gauge above, scanner track below)
	nodePx = 16 // header row per node (kswapd and kcompactd)
	colGap = 8  // px between columns

	// MaxZoom is the largest zoom: a page 32 px wide.
	MaxZoom = 32
	// MinTileZoom is the smallest zoom the layout uses: a tile of 2x1 px.
	MinTileZoom = 1.0 / TileH
)

// Label is a piece of text drawn with its top-left corner at device
// pixel (X, Y).
type Label struct {
	X, Y int
	Text string
}

// Rect is a device-pixel rectangle [X0, X1) x [Y0, Y1).
type Rect struct{ X0, Y0, X1, Y1 int }

// Contains reports whether (x, y) lies inside r.
func (r Rect) Contains(x, y int) bool { return x >= r.X0 && x < r.X1 && y >= r.Y0 && y < r.Y1 }

// Camera is the view of the world: Zoom device pixels per page, and the
// world point (X, Y) shown at the map viewport's top-left corner.
type Camera struct {
	Zoom float64
	X, Y float64
}

type band struct {
	zone       mm.ZoneView
	firstBlock int // pageblock index of the band's first tile
	nblocks    int
	y          float64 // world y of the band's first row
	rows       int
	label      string
}

type layout struct {
	key    string
	perRow int
	bands  []band
	gap    float64 // world height of a label gap
	width  float64 // world width
	height float64 // world height
	fit    float64
	rows   []headerRow
	charts int // charts per column (0: no chart strip)
}

// Raster draws panels into Pix. The zero value is not usable; use New.
type Raster struct {
	W, H int
	// Pix is the RGBA buffer, 4*W*H bytes, reused from frame to frame.
	Pix []byte
	px  []uint32
	// Labels are the texts the last Render drew, where it drew them.
	Labels []Label
	// Marks are the rectangles the last Render covered with compaction
	// markers on the map; Lamps are the kswapd and kcompactd lamps.
	Marks []Rect
	Lamps []Rect

	Cam Camera
	// PageView reports whether the last Render drew pages (zoom >= 1).
	PageView bool

	lay     layout
	ncols   int
	colW    int
	headerH int
	chartsY int // top of the chart strip
	blocks  [][]mm.BlockView
	zones   [][]mm.ZoneView
	nodes   [][]mm.NodeView
	charts  [][]Chart
	scales  []chartScale
	titles  []string
	states  []mm.PageState
	// lut maps a block's migratetype and a page state to a pixel; 256
	// entries per type so a state indexes it without a bounds check or a
	// modulo (states beyond NrPageStates read as reserved).
	lut      [mm.MigrateTypes][256]uint32
	bg       uint32
	hasFrame bool
}

// New returns a raster of w x h device pixels.
func New(w, h int) *Raster {
	r := &Raster{}
	for mt := range r.lut {
		for st := range r.lut[mt] {
			ps := mm.PageState(st)
			if ps >= mm.NrPageStates {
				ps = mm.PSReserved
			}
			r.lut[mt][st] = PageColor(mm.MigrateType(mt), ps).pixel()
		}
	}
	r.bg = Background.pixel()
	r.Resize(w, h)
	return r
}

// Resize changes the buffer size (the layout is recomputed on the next
// Render).
func (r *Raster) Resize(w, h int) {
	w, h = max(w, 1), max(h, 1)
	if w == r.W && h == r.H {
		return
	}
	r.W, r.H = w, h
	r.Pix = make([]byte, 4*w*h)
	r.px = unsafe.Slice((*uint32)(unsafe.Pointer(&r.Pix[0])), w*h)
	r.lay.key = ""
}

// MapRect returns the map viewport of column col.
func (r *Raster) MapRect(col int) Rect {
	x0 := col * (r.colW + colGap)
	return Rect{x0, r.headerH, x0 + r.colW, r.H}
}

// Fit returns the zoom at which the whole machine fits.
func (r *Raster) Fit() float64 { return r.lay.fit }

// FitView resets the camera to the whole machine.
func (r *Raster) FitView() { r.Cam = Camera{Zoom: r.lay.fit} }

// ZoomAt multiplies the zoom by factor, keeping the world point under
// device pixel (sx, sy) where it is (if the point is in a map viewport).
func (r *Raster) ZoomAt(factor float64, sx, sy int) {
	r.ZoomTo(r.Cam.Zoom*factor, sx, sy)
}

// ZoomTo sets the zoom to z (within the fit zoom and MaxZoom), keeping
// the world point under device pixel (sx, sy) where it is.
func (r *Raster) ZoomTo(z float64, sx, sy int) {
	old := r.Cam.Zoom
	z = min(max(z, r.lay.fit), MaxZoom)
	if z == old {
		return
	}
	lx, ly := float64(r.W)/2, float64(r.H)/2
	for c := 0; c < r.ncols; c++ {
		if m := r.MapRect(c); m.Contains(sx, sy) {
			lx, ly = float64(sx-m.X0), float64(sy-m.Y0)
		}
	}
	wx, wy := r.Cam.X+lx/old, r.Cam.Y+ly/old
	r.Cam = Camera{Zoom: z, X: wx - lx/z, Y: wy - ly/z}
	r.clampCamera()
}

// PanBy moves the view by (dx, dy) device pixels (dragging the map right
// moves the world right: pass the mouse movement as it is).
func (r *Raster) PanBy(dx, dy float64) {
	r.Cam.X -= dx / r.Cam.Zoom
	r.Cam.Y -= dy / r.Cam.Zoom
	r.clampCamera()
}

func (r *Raster) clampCamera() {
	if r.Cam.Zoom <= 0 || r.ncols == 0 {
		return
	}
	m := r.MapRect(0)
	vw, vh := float64(m.X1-m.X0)/r.Cam.Zoom, float64(m.Y1-m.Y0)/r.Cam.Zoom
	clamp := func(v, world, view float64) float64 {
		lo, hi := -view/2, world-view/2
		if world <= view {
			lo, hi = min(0, world-view), 0
		}
		return min(max(v, lo), max(lo, hi))
	}
	r.Cam.X = clamp(r.Cam.X, r.lay.width, vw)
	r.Cam.Y = clamp(r.Cam.Y, r.lay.height, vh)
}

// Render draws the panels with the current camera. The first Render, and
// any Render after the machines' shape or the buffer size changed, fits
// the camera to the whole machine.
func (r *Raster) Render(panels []Panel) {
	r.Labels = r.Labels[:0]
	r.Marks = r.Marks[:0]
	r.Lamps = r.Lamps[:0]
	for i := range r.px {
		r.px[i] = r.bg
	}
	if len(panels) == 0 {
		return
	}
	for len(r.blocks) < len(panels) {
		r.blocks = append(r.blocks, nil)
		r.zones = append(r.zones, nil)
		r.nodes = append(r.nodes, nil)
		r.charts = append(r.charts, nil)
	}
	r.titles = r.titles[:0]
	for i, p := range panels {
		r.blocks[i] = p.Src.BlockViews(r.blocks[i])
		r.zones[i] = p.Src.ZoneViews()
		r.nodes[i] = p.Src.NodeViews()
		r.charts[i] = p.Charts
		r.titles = append(r.titles, p.Title)
	}
	r.scales = chartScales(r.charts[:len(panels)], r.scales)
	if key := r.layoutKey(len(panels)); key != r.lay.key {
		r.relayout(len(panels), key)
		r.FitView()
	}
	r.clampCamera()
	r.PageView = r.Cam.Zoom >= 1
	for c, p := range panels {
		r.drawHeader(c)
		r.drawCharts(c)
		r.drawMap(c, p.Src)
	}
	r.hasFrame = true
}

// layoutKey identifies everything the layout depends on: the buffer, the
// number of columns and the zones of the first panel.
func (r *Raster) layoutKey(ncols int) string {
	k := fmt.Sprintf("%dx%d/%d", r.W, r.H, ncols)
	for _, z := range r.zones[0] {
		k += fmt.Sprintf("/%d:%d:%d+%d", z.Node, z.Type, z.StartPFN, z.Spanned)
	}
	for c := 1; c < ncols; c++ {
		k += fmt.Sprintf("|%d", len(r.zones[c]))
	}
	return k + fmt.Sprintf("/charts %d", len(r.charts[0]))
}

func (r *Raster) relayout(ncols int, key string) {
	r.ncols = ncols
	r.colW = max((r.W-colGap*(ncols-1))/ncols, 1)
	lay := layout{key: key, rows: headerRows(r.zones[0]), charts: len(r.charts[0])}
	h := LineH
	for _, row := range lay.rows {
		h += row.height()
	}
	r.chartsY = h + 2
	if lay.charts > 0 {
		h += 2 + chartH
	}
	r.headerH = min(h+4, r.H/2)
	for _, z := range r.zones[0] {
		first := int(z.StartPFN >> mm.PageblockOrder)
		last := int((uint64(z.StartPFN) + z.Spanned - 1) >> mm.PageblockOrder)
		lay.bands = append(lay.bands, band{zone: z, firstBlock: first, nblocks: last - first + 1,
			label: fmt.Sprintf("Node %d %s  %s", z.Node, z.Type, sizeString(z.Spanned))})
	}
	mapW, mapH := float64(r.colW), float64(r.H-r.headerH)
	labelsPx := float64(len(lay.bands) * LineH)
	total := 0
	for _, b := range lay.bands {
		total += b.nblocks
	}
	// Try every row width and keep the one that allows the largest zoom.
	best, bestZ := 1, 0.0
	for per := 1; per <= max(total, 1); per++ {
		rows := 0
		for _, b := range lay.bands {
			rows += (b.nblocks + per - 1) / per
		}
		z := min(mapW/float64(per*TileW), (mapH-labelsPx)/float64(rows*TileH))
		if z > bestZ {
			best, bestZ = per, z
		}
		if float64(per*TileW)*MinTileZoom > mapW {
			break
		}
	}
	lay.perRow = best
	lay.fit = min(max(bestZ, MinTileZoom), MaxZoom)
	lay.gap = LineH / lay.fit
	y := 0.0
	for i := range lay.bands {
		b := &lay.bands[i]
		b.rows = (b.nblocks + best - 1) / best
		y += lay.gap
		b.y = y
		y += float64(b.rows * TileH)
	}
	lay.width = float64(best * TileW)
	lay.height = y
	r.lay = lay
}

func sizeString(pages uint64) string {
	b := pages * mm.PageSize
	switch {
	case b >= 1<<30 && b%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", b>>30)
	case b >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30))
	default:
		return fmt.Sprintf("%d MiB", b>>20)
	}
}

// fill paints [x0,x1) x [y0,y1) clipped to clip.
func (r *Raster) fill(x0, y0, x1, y1 int, c uint32, clip Rect) {
	x0, y0 = max(x0, clip.X0), max(y0, clip.Y0)
	x1, y1 = min(x1, clip.X1), min(y1, clip.Y1)
	if x0 >= x1 || y0 >= y1 {
		return
	}
	for y := y0; y < y1; y++ {
		row := r.px[y*r.W+x0 : y*r.W+x1]
		for i := range row {
			row[i] = c
		}
	}
}

// visibleRows returns the rows of band b that the camera shows in a
// viewport of height vh px.
func (r *Raster) visibleRows(b *band, vh int) (int, int) {
	z := r.Cam.Zoom
	top := (r.Cam.Y - b.y) / TileH
	bot := (r.Cam.Y + float64(vh)/z - b.y) / TileH
	r0 := max(int(math.Floor(top)), 0)
	r1 := min(int(math.Ceil(bot)), b.rows)
	return r0, r1
}

// nodeFrames outlines each NUMA node's bands, so a node reads as a panel.
func (r *Raster) nodeFrames(view Rect) {
	z := r.Cam.Zoom
	bands := r.lay.bands
	for i := 0; i < len(bands); {
		j := i
		for j+1 < len(bands) && bands[j+1].zone.Node == bands[i].zone.Node {
			j++
		}
		top := bands[i].y - r.lay.gap
		bot := bands[j].y + float64(bands[j].rows*TileH)
		x0 := view.X0 + int(math.Floor(-r.Cam.X*z)) - 1
		x1 := view.X0 + int(math.Floor((r.lay.width-r.Cam.X)*z)) + 1
		y0 := view.Y0 + int(math.Floor((top-r.Cam.Y)*z))
		y1 := view.Y0 + int(math.Floor((bot-r.Cam.Y)*z)) + 1
		c := NodeFrame.pixel()
		r.fill(x0, y0, x1, y0+1, c, view)
		r.fill(x0, y1-1, x1, y1, c, view)
		r.fill(x0, y0, x0+1, y1, c, view)
		r.fill(x1-1, y0, x1, y1, c, view)
		i = j + 1
	}
}

func (r *Raster) drawMap(c int, src Source) {
	view := r.MapRect(c)
	z := r.Cam.Zoom
	blocks := r.blocks[c]
	r.nodeFrames(view)
	for bi := range r.lay.bands {
		b := &r.lay.bands[bi]
		// The band's label sits in the gap above it.
		ly := view.Y0 + int(math.Floor((b.y-r.lay.gap-r.Cam.Y)*z))
		lx := view.X0 + int(math.Floor(-r.Cam.X*z))
		r.label(max(lx, view.X0)+2, ly, b.label, view)
		r0, r1 := r.visibleRows(b, view.Y1-view.Y0)
		if r0 >= r1 {
			continue
		}
		per := r.lay.perRow
		firstVis := b.firstBlock + r0*per
		endVis := min(b.firstBlock+r1*per, b.firstBlock+b.nblocks, len(blocks))
		if firstVis >= endVis {
			continue
		}
		if r.PageView {
			start := mm.PFN(firstVis) << mm.PageblockOrder
			n := (endVis - firstVis) << mm.PageblockOrder
			if cap(r.states) < n {
				r.states = make([]mm.PageState, n)
			}
			r.states = src.PageStates(start, r.states[:n])
		}
		for blk := firstVis; blk < endVis; blk++ {
			i := blk - b.firstBlock
			wx := float64((i % per) * TileW)
			wy := b.y + float64((i/per)*TileH)
			// Every edge is computed from its world coordinate the
			// same way, so neighbouring tiles meet without a gap.
			x0, y0 := r.screenX(view, wx), r.screenY(view, wy)
			x1, y1 := r.screenX(view, wx+TileW), r.screenY(view, wy+TileH)
			if x1 <= view.X0 || x0 >= view.X1 || y1 <= view.Y0 || y0 >= view.Y1 {
				continue
			}
			bv := &blocks[blk]
			if r.PageView {
				r.drawPages(bv.MT, r.states[(blk-firstVis)<<mm.PageblockOrder:][:mm.PageblockNrPages], wx, wy, view)
			} else {
				r.drawBlock(bv, x0, y0, x1, y1, view)
			}
		}
	}
	r.drawScannerMarks(c, view)
}

// screenX and screenY map a world coordinate to the device pixel where
// it starts.
func (r *Raster) screenX(view Rect, wx float64) int {
	return view.X0 + int(math.Floor((wx-r.Cam.X)*r.Cam.Zoom))
}

func (r *Raster) screenY(view Rect, wy float64) int {
	return view.Y0 + int(math.Floor((wy-r.Cam.Y)*r.Cam.Zoom))
}

// drawBlock draws one pageblock tile in block view.
func (r *Raster) drawBlock(bv *mm.BlockView, x0, y0, x1, y1 int, clip Rect) {
	mt := bv.MT % mm.MigrateTypes
	free := int(bv.Free) + int(bv.PCP)
	used := mm.PageblockNrPages - min(free, mm.PageblockNrPages)
	h := y1 - y0
	if h >= 4 {
		split := y1 - (h*used+mm.PageblockNrPages/2)/mm.PageblockNrPages
		r.fill(x0, y0, x1, split, FreeColor(mt).pixel(), clip)
		r.fill(x0, split, x1, y1, UsedColor(mt).pixel(), clip)
	} else {
		r.fill(x0, y0, x1, y1, mix(FreeColor(mt), UsedColor(mt), used, mm.PageblockNrPages).pixel(), clip)
	}
	if bv.Pinned > 0 {
		s := max(1, h/4)
		r.fill(x0, y0, x0+s, y0+s, Pinned.pixel(), clip)
	}
}

// drawPages draws the 512 pages of one tile whose top-left corner is at
// world (wx, wy), in page view (zoom >= 1).
func (r *Raster) drawPages(mt mm.MigrateType, states []mm.PageState, wx, wy float64, clip Rect) {
	var xs [TileW + 1]int
	var ys [TileH + 1]int
	for i := range xs {
		xs[i] = r.screenX(clip, wx+float64(i))
	}
	for j := range ys {
		ys[j] = r.screenY(clip, wy+float64(j))
	}
	lut := &r.lut[mt%mm.MigrateTypes]
	inside := xs[0] >= clip.X0 && xs[TileW] <= clip.X1 && ys[0] >= clip.Y0 && ys[TileH] <= clip.Y1
	if inside && xs[TileW]-xs[0] == TileW && ys[TileH]-ys[0] == TileH {
		// One pixel per page: a straight copy, the common case of a
		// big map at full detail.
		for j := 0; j < TileH; j++ {
			row := r.px[(ys[0]+j)*r.W+xs[0]:][:TileW]
			st := states[j*TileW:][:TileW]
			for i, v := range st {
				row[i] = lut[v]
			}
		}
		return
	}
	for j := 0; j < TileH; j++ {
		if ys[j+1] <= clip.Y0 || ys[j] >= clip.Y1 {
			continue
		}
		for i := 0; i < TileW; i++ {
			r.fill(xs[i], ys[j], xs[i+1], ys[j+1], lut[states[j*TileW+i]], clip)
		}
	}
}

// Hit describes what is under a device pixel.
type Hit struct {
	Col   int
	Zone  mm.ZoneView
	Block int
	PFN   mm.PFN
	View  mm.BlockView
}

// HitTest returns what the last Render drew at device pixel (x, y).
func (r *Raster) HitTest(x, y int) (Hit, bool) {
	if !r.hasFrame {
		return Hit{}, false
	}
	for c := 0; c < r.ncols; c++ {
		m := r.MapRect(c)
		if !m.Contains(x, y) {
			continue
		}
		// Pixel x shows the page whose left edge, floored, is the last
		// one at or before x: that is where its right edge falls.
		const eps = 1e-9
		wx := r.Cam.X + float64(x+1-m.X0)/r.Cam.Zoom - eps
		wy := r.Cam.Y + float64(y+1-m.Y0)/r.Cam.Zoom - eps
		if wx < 0 || wx >= r.lay.width {
			return Hit{}, false
		}
		for _, b := range r.lay.bands {
			if wy < b.y || wy >= b.y+float64(b.rows*TileH) {
				continue
			}
			row := int((wy - b.y) / TileH)
			col := int(wx / TileW)
			i := row*r.lay.perRow + col
			if i >= b.nblocks {
				return Hit{}, false
			}
			blk := b.firstBlock + i
			px := int(wx) % TileW
			py := int(wy-b.y) % TileH
			pfn := mm.PFN(blk)<<mm.PageblockOrder + mm.PFN(py*TileW+px)
			h := Hit{Col: c, Zone: b.zone, Block: blk, PFN: pfn}
			if blk < len(r.blocks[c]) {
				h.View = r.blocks[c][blk]
			}
			return h, true
		}
		return Hit{}, false
	}
	return Hit{}, false
}

// BlockCenter returns the device pixel at the centre of pageblock blk's
// tile in column col, if the last Render showed it.
func (r *Raster) BlockCenter(col, blk int) (int, int, bool) {
	if !r.hasFrame || col >= r.ncols {
		return 0, 0, false
	}
	m := r.MapRect(col)
	for _, b := range r.lay.bands {
		if blk < b.firstBlock || blk >= b.firstBlock+b.nblocks {
			continue
		}
		i := blk - b.firstBlock
		wx := float64((i%r.lay.perRow)*TileW) + TileW/2
		wy := b.y + float64((i/r.lay.perRow)*TileH) + TileH/2
		x := m.X0 + int(math.Floor((wx-r.Cam.X)*r.Cam.Zoom))
		y := m.Y0 + int(math.Floor((wy-r.Cam.Y)*r.Cam.Zoom))
		return x, y, m.Contains(x, y)
	}
	return 0, 0, false
}

// At returns the colour of device pixel (x, y) of the last Render.
func (r *Raster) At(x, y int) RGB {
	p := r.px[y*r.W+x]
	return RGB{uint8(p), uint8(p >> 8), uint8(p >> 16)}
}
