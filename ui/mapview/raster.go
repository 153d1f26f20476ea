// Package mapview turns machines into pixels: the physical memory map of
// each variant side by side, with per-zone watermark gauges and buddyinfo
// bars, written into one reused RGBA buffer. It is plain Go so that the
// drawing can be tested and benchmarked natively; the Ebiten view uploads
// the buffer with one WritePixels call.
//
// # Units
//
// The buffer is in device pixels, and everything is laid out in CSS
// pixels: Scale is the device's pixels per CSS pixel (devicePixelRatio).
// The columns, the header's rows, the text's size and the map's zoom are
// all CSS lengths, converted to device pixels only where they are drawn,
// so the same link lays out the same at devicePixelRatio 1, 2 and 3, only
// sharper. Text is TextPx CSS pixels (PresentTextPx in presentation mode)
// times the size setting (TextSize, 1 to 3).
//
// # Layout
//
// The canvas is split into one column per panel (variant). A column has a
// header and below it the map viewport. The header holds the variant's
// title (with the run's phase and time, wrapped to the column's width);
// the finished phases' headline results in large type; per NUMA node a
// row with kswapd's and kcompactd's lamps (lit while balancing or
// compacting, see header.go; two rows when the column is narrow); per
// zone a row with its name, a gauge of free pages against the min/low/high
// watermarks on a log scale, the compaction scanners' track (where the
// migrate and free scanners' cached positions are and where the latest
// compact_zone() run stopped) and eleven buddyinfo bars, one per order;
// then the variant's time-series charts (charts.go), as many side by side
// as their labels allow. Text is drawn into the same buffer (font.go).
// Every text is laid out to fit its column; one that cannot is cut and
// listed in Clipped, which tests keep empty from 390 to 2560 pixels wide.
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
// The camera (zoom in CSS pixels per page, and the world point at the
// viewport's top-left) is shared by all columns, so the variants stay
// aligned and the moment they diverge shows in the same place.
//
// # What a pixel shows
//
// Below one CSS pixel per page (block view) a tile shows its pageblock:
// the migratetype's colour, bright for the used fraction (filled from the
// bottom) and faint for the free part; tiny tiles blend the two. A corner
// in the pinned colour marks a block with pinned pages. At one CSS pixel
// per page or more (page view) every page is drawn: free pages faint,
// pages on per-CPU lists half bright, used pages bright, reserved pages
// grey, pinned pages in the pinned colour (white on the dark scheme),
// always in the colour of their block's migratetype. The colours are the
// Scheme's: Dark, or Projector in presentation mode. Once a zone has been
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
	"github.com/pagesim/pagesim/engine/sim"
)

// Source is what the map reads of a machine: scenario.View (a run's, as
// the page draws it) and *mm.Machine (in tests) implement it.
type Source interface {
	BlockViews(dst []mm.BlockView) []mm.BlockView
	ZoneViews() []mm.ZoneView
	NodeViews() []mm.NodeView
	PageStates(start mm.PFN, dst []mm.PageState) []mm.PageState
}

// Panel is one column: a title, the machine drawn under it, what its run
// is doing, and its time-series charts (all panels of a Render have the
// same charts, or none).
type Panel struct {
	// Title names the column (the variant).
	Title string
	Src   Source
	// Now is the run's simulated time; Phase names its current phase
	// ("2/4: 34 GB", "" for none); Phases is how many it has and
	// PhaseStart when the current one's machine booted; Done says the run
	// has ended.
	Now, PhaseStart sim.Time
	Phase           string
	Phases          int
	Done            bool
	// Results are the finished phases' headline results ("34 GB: 0.26
	// GB/s"), written under the title in large type.
	Results []string
	Charts  []Chart
}

// Geometry constants, in pages (world) and CSS pixels. The header's
// lengths are in units of its text line (u: a 16-pixel line at the 1x
// text size), so they grow with the text.
const (
	TileW = 32 // pages across a pageblock tile
	TileH = 16 // pages down a pageblock tile

	rowU   = 18 // header row per zone (gauge above, scanner track below)
	nodeU  = 16 // header row per node (kswapd and kcompactd)
	colGap = 8  // CSS px between columns

	// MaxZoom is the largest zoom: a page 32 CSS px wide.
	MaxZoom = 32
	// MinTileZoom is the smallest zoom the layout uses: a tile of 2x1 CSS
	// px.
	MinTileZoom = 1.0 / TileH
)

// Label is a piece of text drawn with its top-left corner at device
// pixel (X, Y), W device pixels wide and H high (its line), its glyphs
// Size CSS pixels (the em).
type Label struct {
	X, Y, W, H int
	Size       float64
	Text       string
}

// Rect is a device-pixel rectangle [X0, X1) x [Y0, Y1).
type Rect struct{ X0, Y0, X1, Y1 int }

// Contains reports whether (x, y) lies inside r.
func (r Rect) Contains(x, y int) bool { return x >= r.X0 && x < r.X1 && y >= r.Y0 && y < r.Y1 }

// Camera is the view of the world: Zoom CSS pixels per page, and the
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
	shape  string // the machines' zones and the columns
	perRow int
	bands  []band
	gap    float64 // world height of a label gap
	width  float64 // world width
	height float64 // world height
	fit    float64
	rows   []headerRow
	// Header lines, in CSS px: the title's lines, the results' rows
	// (large type) and how many results share a row, the chart grid.
	titleLines    int
	resultRows    int
	resultsPer    int
	charts        int
	chartsPer     int
	chartRows     int
	colWCSS       float64
	headerCSS     float64
	titleCSS      float64 // top of the results
	rowsCSS       float64 // top of the node and zone rows
	chartsCSS     float64 // top of the chart grid
	nodeSplit     bool    // node rows in two (narrow columns)
	nodeLampsOnly bool    // node rows without the states' words (narrowest)
	chartLines    int     // lines of a chart's label: 1, or 2 (name, total)
	plotU         int     // a chart\'s plot height, in header units
	bigCSS        float64 // the results' text size
	gaugeShown    bool    // zone rows have room for the gauge
	resultTexts   int     // results reserved for
}

// Raster draws panels into Pix. The zero value is not usable; use New.
type Raster struct {
	W, H int
	// Pix is the RGBA buffer, 4*W*H bytes, reused from frame to frame.
	Pix []byte
	px  []uint32
	// Scale is the device pixels per CSS pixel (SetScale).
	Scale float64
	// TextSize is the map text's size setting (1 to 3) and Present
	// presentation mode's larger text (SetText).
	TextSize int
	Present  bool
	// Labels are the texts the last Render drew, where it drew them.
	Labels []Label
	// Clipped lists the texts the last Render had to cut or leave out
	// for want of room (the map's band labels only at the fit zoom,
	// where the whole machine shows).
	Clipped []string
	// Marks are the rectangles the last Render covered with compaction
	// markers on the map; Lamps are the kswapd and kcompactd lamps.
	Marks []Rect
	Lamps []Rect

	Cam Camera
	// PageView reports whether the last Render drew pages (zoom >= 1
	// CSS pixel per page).
	PageView bool

	sc      *Scheme
	lay     layout
	ncols   int
	colW    int
	headerH int
	blocks  [][]mm.BlockView
	zones   [][]mm.ZoneView
	nodes   [][]mm.NodeView
	charts  [][]Chart
	scales  []chartScale
	panels  []Panel
	states  []mm.PageState
	// lut maps a block's migratetype and a page state to a pixel; 256
	// entries per type so a state indexes it without a bounds check or a
	// modulo (states beyond NrPageStates read as reserved).
	lut      [mm.MIGRATE_TYPES][256]uint32
	lutOf    *Scheme
	bg       uint32
	hasFrame bool
	atFit    bool // the camera shows the whole machine
}

// New returns a raster of w x h device pixels at one device pixel per
// CSS pixel, the text at its 1x size, in the Dark scheme.
func New(w, h int) *Raster {
	r := &Raster{Scale: 1, TextSize: 1, sc: &Dark}
	r.Resize(w, h)
	return r
}

// SetScheme picks the colours of the next Render.
func (r *Raster) SetScheme(s *Scheme) {
	if s != nil {
		r.sc = s
	}
}

// Scheme is the raster's colour scheme.
func (r *Raster) Scheme() *Scheme { return r.sc }

// buildLUT fills the page-state colours of the scheme.
func (r *Raster) buildLUT() {
	if r.lutOf == r.sc {
		return
	}
	for mt := range r.lut {
		for st := range r.lut[mt] {
			ps := mm.PageState(st)
			if ps >= mm.NrPageStates {
				ps = mm.PSReserved
			}
			r.lut[mt][st] = r.sc.Page(mm.MigrateType(mt), ps).pixel()
		}
	}
	r.bg = r.sc.Background.pixel()
	r.lutOf = r.sc
}

// SetScale sets the device pixels per CSS pixel (the layout is
// recomputed on the next Render).
func (r *Raster) SetScale(s float64) {
	if s <= 0 || math.IsNaN(s) || math.IsInf(s, 0) {
		s = 1
	}
	if s != r.Scale {
		r.Scale = s
		r.lay.key = ""
	}
}

// SetText sets the text size setting (1 to 3) and presentation mode's
// larger text.
func (r *Raster) SetText(size int, present bool) {
	size = min(max(size, 1), 3)
	if size != r.TextSize || present != r.Present {
		r.TextSize, r.Present = size, present
		r.lay.key = ""
	}
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

// d converts a CSS length to device pixels.
func (r *Raster) d(css float64) int { return int(math.Round(css * r.Scale)) }

// textCSS is the size of ordinary map text, in CSS px.
func (r *Raster) textCSS() float64 {
	base := float64(TextPx)
	if r.Present {
		base = PresentTextPx
	}
	return base * float64(max(r.TextSize, 1))
}

// TextCSS is the size of the smallest text the raster draws, in CSS px.
func (r *Raster) TextCSS() float64 { return r.textCSS() }

// textStyle is text of one size: its face, and its advance and line in
// CSS px (the layout uses those, the same at every scale).
type textStyle struct {
	css     float64 // the em, CSS px
	f       *face
	advCSS  float64
	lineCSS float64
}

func (r *Raster) style(css float64) textStyle {
	return textStyle{css: css, f: faceFor(r.d(css)), advCSS: css * 0.6, lineCSS: math.Ceil(css * 1.3)}
}

// widthCSS is the width of s in CSS px.
func (t textStyle) widthCSS(s string) float64 { return float64(len(s)) * t.advCSS }

// fits returns how many characters of style t fit in w CSS px.
func (t textStyle) fits(w float64) int { return int(w / t.advCSS) }

// u is the header's unit: a sixteenth of the text line, in CSS px.
func (r *Raster) u() float64 { return r.style(r.textCSS()).lineCSS / 16 }

// colX returns the left and right device edges of column col.
func (r *Raster) colX(col int) (int, int) {
	x := float64(col) * (r.lay.colWCSS + colGap)
	return r.d(x), r.d(x + r.lay.colWCSS)
}

// MapRect returns the map viewport of column col.
func (r *Raster) MapRect(col int) Rect {
	x0, x1 := r.colX(col)
	return Rect{x0, r.headerH, x1, r.H}
}

// zoomPx is the zoom in device pixels per page.
func (r *Raster) zoomPx() float64 { return r.Cam.Zoom * r.Scale }

// Fit returns the zoom at which the whole machine fits.
func (r *Raster) Fit() float64 { return r.lay.fit }

// FitView resets the camera to the whole machine.
func (r *Raster) FitView() { r.Cam = Camera{Zoom: r.lay.fit} }

// ZoomAt multiplies the zoom by factor, keeping the world point under
// device pixel (sx, sy) where it is (if the point is in a map viewport).
func (r *Raster) ZoomAt(factor float64, sx, sy int) {
	r.ZoomTo(r.Cam.Zoom*factor, sx, sy)
}

// ZoomTo sets the zoom to z CSS pixels per page (within the fit zoom and
// MaxZoom), keeping the world point under device pixel (sx, sy) where it
// is.
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
	oz, nz := old*r.Scale, z*r.Scale
	wx, wy := r.Cam.X+lx/oz, r.Cam.Y+ly/oz
	r.Cam = Camera{Zoom: z, X: wx - lx/nz, Y: wy - ly/nz}
	r.clampCamera()
}

// PanBy moves the view by (dx, dy) device pixels (dragging the map right
// moves the world right: pass the mouse movement as it is).
func (r *Raster) PanBy(dx, dy float64) {
	r.Cam.X -= dx / r.zoomPx()
	r.Cam.Y -= dy / r.zoomPx()
	r.clampCamera()
}

func (r *Raster) clampCamera() {
	if r.Cam.Zoom <= 0 || r.ncols == 0 {
		return
	}
	m := r.MapRect(0)
	vw, vh := float64(m.X1-m.X0)/r.zoomPx(), float64(m.Y1-m.Y0)/r.zoomPx()
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
// any Render after the machines' shape, the buffer's size or scale, the
// text size or the header's height changed, fits the camera to the whole
// machine.
func (r *Raster) Render(panels []Panel) {
	r.Labels = r.Labels[:0]
	r.Clipped = r.Clipped[:0]
	r.Marks = r.Marks[:0]
	r.Lamps = r.Lamps[:0]
	r.buildLUT()
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
	r.panels = append(r.panels[:0], panels...)
	for i, p := range panels {
		r.blocks[i] = p.Src.BlockViews(r.blocks[i])
		r.zones[i] = p.Src.ZoneViews()
		r.nodes[i] = p.Src.NodeViews()
		r.charts[i] = p.Charts
	}
	r.scales = chartScales(r.charts[:len(panels)], r.scales)
	titleLines := r.titleLinesNeeded(len(panels))
	key := r.layoutKey(len(panels), titleLines)
	if key != r.lay.key {
		// A new machine (or a new set of columns) shows whole; a camera
		// the user moved stays where it was through a change of size or
		// text.
		shape := r.shapeKey(len(panels))
		wasFit := r.atFit || !r.hasFrame || shape != r.lay.shape
		r.relayout(len(panels), key, titleLines)
		r.lay.shape = shape
		if wasFit || r.Cam.Zoom < r.lay.fit {
			r.FitView()
		}
	}
	r.clampCamera()
	r.atFit = r.Cam == Camera{Zoom: r.lay.fit}
	r.PageView = r.Cam.Zoom >= 1
	for c, p := range panels {
		r.drawHeader(c)
		r.drawCharts(c)
		r.drawMap(c, p.Src)
	}
	r.hasFrame = true
}

// shapeKey identifies the machines and columns shown.
func (r *Raster) shapeKey(ncols int) string {
	k := fmt.Sprintf("%d", ncols)
	for _, z := range r.zones[0] {
		k += fmt.Sprintf("/%d:%d:%d+%d", z.Node, z.Type, z.StartPFN, z.Spanned)
	}
	return k
}

// layoutKey identifies everything the layout depends on: the buffer and
// its scale, the text, the number of columns, the zones of the first
// panel, the title's lines, the results and the charts.
func (r *Raster) layoutKey(ncols, titleLines int) string {
	k := fmt.Sprintf("%dx%d@%g/%d/%d,%v/t%d", r.W, r.H, r.Scale, ncols, r.TextSize, r.Present, titleLines)
	for _, z := range r.zones[0] {
		k += fmt.Sprintf("/%d:%d:%d+%d", z.Node, z.Type, z.StartPFN, z.Spanned)
	}
	for c := 1; c < ncols; c++ {
		k += fmt.Sprintf("|%d", len(r.zones[c]))
	}
	res := 0
	for _, p := range r.panels {
		res = max(res, p.Phases, len(p.Results))
	}
	k += fmt.Sprintf("/r%d", res)
	for _, ch := range r.charts[0] {
		k += "/" + ch.Name
	}
	return k
}

// colWidthCSS is the width of one of ncols columns, in CSS px.
func (r *Raster) colWidthCSS(ncols int) float64 {
	w := float64(r.W) / r.Scale
	return max((w-colGap*float64(ncols-1))/float64(ncols), 1)
}

func (r *Raster) relayout(ncols int, key string, titleLines int) {
	r.ncols = ncols
	txt := r.style(r.textCSS())
	u := txt.lineCSS / 16
	room := r.colWidthCSS(ncols) - 4*u
	// The header takes at most two thirds of the height: where it would
	// take more (a phone, a projector's large text), it squeezes, first
	// the results' type and the charts' labels, then the charts' plots;
	// where it still does not fit (four variants' narrow columns on a
	// 600-pixel-high laptop window: five title lines, four results a
	// column), it takes up to headerShareMost and the map the rest.
	var lay layout
	share := headerShare
	for squeeze := 0; squeeze <= 3; squeeze++ {
		lay = layout{key: key, charts: len(r.charts[0]), colWCSS: r.colWidthCSS(ncols), titleLines: titleLines}
		r.headerLayout(&lay, min(squeeze, 2))
		if squeeze == 3 {
			share = headerShareMost
		}
		if lay.headerCSS*r.Scale <= float64(r.H)*share {
			break
		}
	}
	r.colW = r.d(lay.colWCSS)
	hCSS := float64(r.H) / r.Scale
	r.headerH = min(r.d(lay.headerCSS), int(float64(r.H)*share))
	for _, z := range r.zones[0] {
		first := int(z.StartPFN >> mm.PageblockOrder)
		last := int((uint64(z.StartPFN) + z.Spanned - 1) >> mm.PageblockOrder)
		label := fmt.Sprintf("Node %d %s  %s", z.Node, z.Type, sizeString(z.Spanned))
		if txt.widthCSS(label) > room {
			label = fmt.Sprintf("N%d %s %s", z.Node, z.Type, sizeString(z.Spanned))
		}
		lay.bands = append(lay.bands, band{zone: z, firstBlock: first, nblocks: last - first + 1, label: label})
	}
	mapW, mapH := lay.colWCSS, max(hCSS-min(lay.headerCSS, hCSS*share), 1)
	labelsCSS := float64(len(lay.bands)) * txt.lineCSS
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
		z := min(mapW/float64(per*TileW), (mapH-labelsCSS)/float64(rows*TileH))
		if z > bestZ {
			best, bestZ = per, z
		}
		if float64(per*TileW)*MinTileZoom > mapW {
			break
		}
	}
	lay.perRow = best
	lay.fit = min(max(bestZ, MinTileZoom), MaxZoom)
	lay.gap = txt.lineCSS / lay.fit
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

// headerShare is the most of the height the header takes, and
// headerShareMost the most when, squeezed, it does not fit headerShare.
const (
	headerShare     = 2.0 / 3
	headerShareMost = 3.0 / 4
)

// headerLayout lays the header out: the title, then the results in large
// type (as many to a row as fit, a place for each of the run's phases
// from the start, so the header does not grow as they finish), the node
// and zone rows, and the chart grid. squeeze 1 lets the results' type
// shrink to put two to a row and puts the charts' totals on lines of
// their own, squeeze 2 also flattens the charts' plots.
func (r *Raster) headerLayout(lay *layout, squeeze int) {
	txt := r.style(r.textCSS())
	u := txt.lineCSS / 16
	room := lay.colWCSS - 4*u
	y := float64(lay.titleLines) * txt.lineCSS
	lay.titleCSS = y
	res, longest := 0, len("42 GB: 0.00 GB/s")
	for _, p := range r.panels {
		res = max(res, p.Phases, len(p.Results))
		for _, t := range p.Results {
			longest = max(longest, len(t))
		}
	}
	lay.bigCSS = 2 * r.textCSS()
	if res > 0 {
		// Large type: twice the text, less if the longest result would
		// not fit the column, never less than the text.
		want := 1.0
		if squeeze > 0 && res > 1 {
			want = 2
		}
		fit := math.Floor(room / (0.6 * (float64(longest)*want + 2*(want-1))))
		floor := r.textCSS()
		if squeeze > 0 {
			floor = math.Max(floor, math.Min(1.5*r.textCSS(), fit))
		}
		lay.bigCSS = max(min(2*r.textCSS(), fit), floor, r.textCSS())
		big := r.style(lay.bigCSS)
		cell := big.advCSS * float64(longest+2)
		lay.resultsPer = max(1, min(res, int((room+big.advCSS*2)/cell)))
		lay.resultRows = (res + lay.resultsPer - 1) / lay.resultsPer
		lay.resultTexts = res
		y += float64(lay.resultRows) * big.lineCSS
	}
	// Node rows: "N0 kswapd [] balancing o10  kcompactd [] compacting
	// o10" on one row where it fits, else kswapd and kcompactd on a row
	// each, and on the narrowest columns the lamps alone (the panel's
	// live numbers say the states).
	lamp := lampSize*u + 8*u
	switch {
	case txt.widthCSS("N0 kswapd  balancing o10  kcompactd  compacting o10")+2*lamp <= room:
	case txt.widthCSS("N0 kcompactd  compacting o10")+lamp <= room:
		lay.nodeSplit = true
	default:
		lay.nodeSplit, lay.nodeLampsOnly = true, true
	}
	lay.rows = headerRows(r.zones[0], lay.nodeSplit)
	lay.rowsCSS = y
	for _, row := range lay.rows {
		y += row.heightU() * u
	}
	// A zone row's gauge needs 20 units beside the name and the buddy
	// bars.
	lay.gaugeShown = lay.colWCSS-txt.widthCSS("N0 Movable ")-(11*5+8)*u-4*u >= 20*u
	lay.chartsCSS = y + 2*u
	lay.plotU = chartPlotU
	if squeeze > 1 {
		lay.plotU = chartPlotU * 3 / 5
	}
	if lay.charts > 0 {
		// A chart's label is its name and total on a line where that
		// fits the column, else on two.
		minW, nameW := 0.0, 0.0
		for _, ch := range r.charts[0] {
			minW = max(minW, txt.widthCSS(chartLabelTemplate(ch)+" 100k/s"))
			nameW = max(nameW, txt.widthCSS(ch.Name), txt.widthCSS("000000000 100k/s"))
		}
		lay.chartLines = 1
		if minW > room || squeeze > 0 {
			lay.chartLines, minW = 2, nameW
		}
		lay.chartsPer = max(1, min(lay.charts, int((room+chartGap*u)/(minW+chartGap*u))))
		lay.chartRows = (lay.charts + lay.chartsPer - 1) / lay.chartsPer
		y += 2*u + float64(lay.chartRows)*float64(lay.chartLines*chartLabelU+lay.plotU+4)*u
	}
	lay.headerCSS = y + 4*u
}

// Layout describes the last layout in CSS pixels, for tests that compare
// it across device pixel ratios.
type Layout struct {
	PerRow    int
	Fit       float64
	ColW      float64
	HeaderCSS float64
	Rows      int
	Charts    [2]int // charts per row, rows
	Results   [2]int
}

// Layout returns the last layout.
func (r *Raster) Layout() Layout {
	return Layout{PerRow: r.lay.perRow, Fit: r.lay.fit, ColW: r.lay.colWCSS, HeaderCSS: r.lay.headerCSS, Rows: len(r.lay.rows),
		Charts: [2]int{r.lay.chartsPer, r.lay.chartRows}, Results: [2]int{r.lay.resultsPer, r.lay.resultRows}}
}

func sizeString(pages uint64) string {
	b := pages * mm.PAGE_SIZE
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
	z := r.zoomPx()
	top := (r.Cam.Y - b.y) / TileH
	bot := (r.Cam.Y + float64(vh)/z - b.y) / TileH
	r0 := max(int(math.Floor(top)), 0)
	r1 := min(int(math.Ceil(bot)), b.rows)
	return r0, r1
}

// nodeFrames outlines each NUMA node's bands, so a node reads as a panel.
func (r *Raster) nodeFrames(view Rect) {
	z := r.zoomPx()
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
		c := r.sc.NodeFrame.pixel()
		r.fill(x0, y0, x1, y0+1, c, view)
		r.fill(x0, y1-1, x1, y1, c, view)
		r.fill(x0, y0, x0+1, y1, c, view)
		r.fill(x1-1, y0, x1, y1, c, view)
		i = j + 1
	}
}

func (r *Raster) drawMap(c int, src Source) {
	view := r.MapRect(c)
	z := r.zoomPx()
	blocks := r.blocks[c]
	txt := r.style(r.textCSS())
	r.nodeFrames(view)
	for bi := range r.lay.bands {
		b := &r.lay.bands[bi]
		// The band's label sits in the gap above it.
		ly := view.Y0 + int(math.Floor((b.y-r.lay.gap-r.Cam.Y)*z))
		lx := view.X0 + int(math.Floor(-r.Cam.X*z))
		if ly >= view.Y0 && ly < view.Y1 {
			r.text(max(lx, view.X0)+r.d(2), ly, b.label, txt, r.sc.LabelText, view, r.atFit)
		}
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
	return view.X0 + int(math.Floor((wx-r.Cam.X)*r.zoomPx()))
}

func (r *Raster) screenY(view Rect, wy float64) int {
	return view.Y0 + int(math.Floor((wy-r.Cam.Y)*r.zoomPx()))
}

// drawBlock draws one pageblock tile in block view.
func (r *Raster) drawBlock(bv *mm.BlockView, x0, y0, x1, y1 int, clip Rect) {
	mt := bv.MT % mm.MIGRATE_TYPES
	free := int(bv.Free) + int(bv.PCP)
	used := mm.PageblockNrPages - min(free, mm.PageblockNrPages)
	h := y1 - y0
	if h >= 4 {
		split := y1 - (h*used+mm.PageblockNrPages/2)/mm.PageblockNrPages
		r.fill(x0, y0, x1, split, r.sc.Free(mt).pixel(), clip)
		r.fill(x0, split, x1, y1, r.sc.Used(mt).pixel(), clip)
	} else {
		r.fill(x0, y0, x1, y1, mix(r.sc.Free(mt), r.sc.Used(mt), used, mm.PageblockNrPages).pixel(), clip)
	}
	if bv.Pinned > 0 {
		s := max(1, h/4)
		r.fill(x0, y0, x0+s, y0+s, r.sc.Pinned.pixel(), clip)
	}
}

// drawPages draws the 512 pages of one tile whose top-left corner is at
// world (wx, wy), in page view.
func (r *Raster) drawPages(mt mm.MigrateType, states []mm.PageState, wx, wy float64, clip Rect) {
	var xs [TileW + 1]int
	var ys [TileH + 1]int
	for i := range xs {
		xs[i] = r.screenX(clip, wx+float64(i))
	}
	for j := range ys {
		ys[j] = r.screenY(clip, wy+float64(j))
	}
	lut := &r.lut[mt%mm.MIGRATE_TYPES]
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
		wx := r.Cam.X + float64(x+1-m.X0)/r.zoomPx() - eps
		wy := r.Cam.Y + float64(y+1-m.Y0)/r.zoomPx() - eps
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
		x := m.X0 + int(math.Floor((wx-r.Cam.X)*r.zoomPx()))
		y := m.Y0 + int(math.Floor((wy-r.Cam.Y)*r.zoomPx()))
		return x, y, m.Contains(x, y)
	}
	return 0, 0, false
}

// At returns the colour of device pixel (x, y) of the last Render.
func (r *Raster) At(x, y int) RGB {
	p := r.px[y*r.W+x]
	return RGB{uint8(p), uint8(p >> 8), uint8(p >> 16)}
}
