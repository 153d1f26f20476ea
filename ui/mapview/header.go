package mapview

// header.go draws a column's header and the compaction markers on the map.
//
// The title line names the variant, the run's phase ("2/4: 34 GB", and
// from the second phase on that it runs on a new machine, booted at which
// time) or "done", and the simulated time; it wraps to the column's width.
// Under it, each finished phase's headline result in large type ("34 GB:
// 0.26 GB/s"), so the canvas alone tells the story.
//
// A node row shows the node's reclaim and compaction threads as lamps:
// kswapd's lamp is lit while it balances the node (balance_pgdat), half lit
// while it naps before sleeping, dark while it sleeps; kcompactd's is lit
// while it compacts. The text next to each lamp says the state and the
// order the thread works for.
//
// A zone row shows, left to right, the zone's name; the free-page gauge
// against the watermarks (upper half) over the compaction scanners' track
// (lower half: the zone's PFN range, with the migrate scanner's cached
// position as a yellow tick, the free scanner's as a sky-blue tick and the
// latest compact_zone() run's stopping points as reddish-purple dots); and
// the buddyinfo bars.

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/sim"
)

// headerRow is one row of a column's header: a node's threads (zone < 0;
// part 1 is kswapd, 2 kcompactd, 0 both) or a zone (an index into the
// column's ZoneViews).
type headerRow struct {
	node int
	zone int
	part int
}

// heightU is the row's height in header units.
func (h headerRow) heightU() float64 {
	if h.zone < 0 {
		return nodeU
	}
	return rowU
}

// headerRows lists a node row (two when split) before the zone rows of
// each node.
func headerRows(zones []mm.ZoneView, split bool) []headerRow {
	var rows []headerRow
	for i, z := range zones {
		if i == 0 || zones[i-1].Node != z.Node {
			if split {
				rows = append(rows, headerRow{node: z.Node, zone: -1, part: 1}, headerRow{node: z.Node, zone: -1, part: 2})
			} else {
				rows = append(rows, headerRow{node: z.Node, zone: -1})
			}
		}
		rows = append(rows, headerRow{node: z.Node, zone: i})
	}
	return rows
}

// text draws s in style t with its top-left corner at device (x, y), cut
// to clip's width, and records it in Labels. A text that has to be cut,
// or whose line does not fit clip's height, is listed in Clipped when
// mustFit is set (header texts always; the map's band labels only at the
// fit zoom). It returns the device x where the text ends.
func (r *Raster) text(x, y int, s string, t textStyle, col RGB, clip Rect, mustFit bool) int {
	lineH := r.d(t.lineCSS)
	if x >= clip.X1 || y >= clip.Y1 || y+lineH <= clip.Y0 {
		if mustFit && s != "" {
			r.Clipped = append(r.Clipped, s)
		}
		return x
	}
	// A device pixel of slack for the rounding of widths.
	room := int((float64(clip.X1-x) + 1) / (t.advCSS * r.Scale))
	if len(s) > room || y+lineH > clip.Y1+1 || y < clip.Y0 {
		if mustFit {
			r.Clipped = append(r.Clipped, s)
		}
		s = s[:max(min(room, len(s)), 0)]
	}
	if s == "" {
		return x
	}
	w := r.textW(s, t)
	r.drawString(x, y, s, t, col.pixel(), clip)
	r.Labels = append(r.Labels, Label{X: x, Y: y, W: w, H: lineH, Size: t.css, Text: s})
	return x + w
}

// textW is the device width of s in style t.
func (r *Raster) textW(s string, t textStyle) int {
	return int(math.Round(float64(len(s)) * t.advCSS * r.Scale))
}

// drawString draws s glyph by glyph at the CSS advance (the same spacing at
// every scale).
func (r *Raster) drawString(x, y int, s string, t textStyle, col uint32, clip Rect) {
	f := t.f
	// The face's own line is centred in the CSS line.
	top := y + (r.d(t.lineCSS)-f.lineH)/2
	for i := 0; i < len(s); i++ {
		pen := x + int(math.Round(float64(i)*t.advCSS*r.Scale))
		f.drawText(r.px, r.W, pen, top, s[i:i+1], col, clip)
	}
}

// titleParts returns what a column's title says: the variant, the phase
// (or "done") and the time.
func titleParts(p Panel) []string {
	parts := []string{p.Title}
	switch {
	case p.Done:
		parts = append(parts, "done")
	case p.Phase != "" && p.PhaseStart > 0:
		parts = append(parts, p.Phase+" (a new machine since t = "+FormatTime(p.PhaseStart)+" s)")
	case p.Phase != "":
		parts = append(parts, p.Phase)
	}
	if p.Phase != "" || p.Now > 0 || p.Done {
		parts = append(parts, "t = "+FormatTime(p.Now)+" s")
	}
	return parts
}

// wrapParts lays parts out in lines of at most n characters, two spaces
// between parts on a line; a part longer than a line is broken at its
// spaces (and a word longer still is left whole: the drawing cuts it and
// lists it in Clipped).
func wrapParts(parts []string, n int) []string {
	n = max(n, 1)
	var lines []string
	line := ""
	for _, p := range parts {
		if line != "" && len(line)+2+len(p) <= n {
			line += "  " + p
			continue
		}
		if line != "" {
			lines = append(lines, line)
			line = ""
		}
		if len(p) <= n {
			line = p
			continue
		}
		for _, w := range strings.Fields(p) {
			switch {
			case line == "":
				line = w
			case len(line)+1+len(w) <= n:
				line += " " + w
			default:
				lines = append(lines, line)
				line = w
			}
		}
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

// titleWidth is how many characters of text fit on a column's title line
// for ncols columns.
func (r *Raster) titleWidth(ncols int) int {
	txt := r.style(r.textCSS())
	return txt.fits(r.colWidthCSS(ncols) - 4*txt.lineCSS/16)
}

// titleLinesNeeded is the most lines a column's title takes. It never
// falls below the current layout's (for the same columns and sizes), so
// the header does not shrink and grow again as the time's digits change.
func (r *Raster) titleLinesNeeded(ncols int) int {
	n := 1
	for _, p := range r.panels {
		parts := titleParts(p)
		if len(parts) > 1 && strings.HasPrefix(parts[len(parts)-1], "t = ") {
			// Leave room for a longer time ("t = 10000.000 s").
			parts[len(parts)-1] = "t = 00000.000 s"
		}
		n = max(n, len(wrapParts(parts, r.titleWidth(ncols))))
	}
	if r.lay.titleLines > n && r.ncols == ncols && r.lay.colWCSS == r.colWidthCSS(ncols) {
		n = r.lay.titleLines
	}
	return n
}

// FormatTime prints a simulated time as the page does everywhere: seconds
// with three decimals, rounded up to the millisecond (app.FormatTime).
func FormatTime(t sim.Time) string {
	ms := int64((t + sim.Millisecond - 1) / sim.Millisecond)
	return strconv.FormatInt(ms/1000, 10) + "." + fmt.Sprintf("%03d", ms%1000)
}

func (r *Raster) drawHeader(c int) {
	x0, x1 := r.colX(c)
	clip := Rect{x0, 0, x1, r.headerH}
	txt := r.style(r.textCSS())
	big := r.style(r.lay.bigCSS)
	u := txt.lineCSS / 16
	pad := r.d(2 * u)
	for i, l := range wrapParts(titleParts(r.panels[c]), r.titleWidth(r.ncols)) {
		if i >= r.lay.titleLines {
			r.Clipped = append(r.Clipped, l)
			continue
		}
		r.text(x0+pad, r.d(float64(i)*txt.lineCSS), l, txt, r.sc.LabelText, clip, true)
	}
	// The finished phases' headline results, in large type.
	if per := r.lay.resultsPer; per > 0 {
		cellW := (r.lay.colWCSS - 4*u) / float64(per)
		for i, res := range r.panels[c].Results {
			row, k := i/per, i%per
			if row >= r.lay.resultRows {
				r.Clipped = append(r.Clipped, res)
				continue
			}
			x := x0 + pad + r.d(float64(k)*cellW)
			cell := Rect{x, clip.Y0, min(x+r.d(cellW), x1), clip.Y1}
			r.text(x, r.d(r.lay.titleCSS+float64(row)*big.lineCSS), res, big, r.sc.LabelText, cell, true)
		}
	}
	zones := r.zones[c]
	y := r.lay.rowsCSS
	for _, row := range r.lay.rows {
		yd := r.d(y)
		if row.zone < 0 {
			for _, n := range r.nodes[c] {
				if n.Node == row.node {
					r.drawNodeRow(n, row.part, !r.lay.nodeLampsOnly, float64(x0)/r.Scale+2*u, yd, clip, txt)
				}
			}
			y += row.heightU() * u
			continue
		}
		if row.zone >= len(zones) {
			y += row.heightU() * u
			continue
		}
		z := zones[row.zone]
		name := fmt.Sprintf("N%d %-6s", z.Node, z.Type)
		r.text(x0+pad, yd, name, txt, r.sc.LabelText, clip, true)
		gx := x0 + pad + r.textW(name+" ", txt)
		bw := r.d(11 * 5 * u)
		gw := x1 - gx - bw - r.d(8*u)
		if r.lay.gaugeShown && gw >= r.d(20*u) {
			r.drawGauge(z, Rect{gx, yd + r.d(3*u), gx + gw, yd + r.d(10*u)}, clip, u)
			r.drawScannerTrack(z, Rect{gx, yd + r.d(12*u), gx + gw, yd + r.d(17*u)}, clip, u)
		}
		r.drawBuddy(z, Rect{x1 - bw - pad, yd + r.d(3*u), x1 - pad, yd + r.d((rowU-2)*u)}, clip, u)
		y += row.heightU() * u
	}
}

const (
	// lampSize is the side of a thread's lamp.
	lampSize = 9
	// maxReclaimRetries is MAX_RECLAIM_RETRIES (mm/internal.h): after
	// that many balance_pgdat() runs that reclaimed nothing, kswapd is
	// hopeless and no longer woken.
	maxReclaimRetries = 16
)

// drawNodeRow draws "N0 kswapd [lamp] balancing o9 kcompactd [lamp]
// sleeping", or one of its two halves (part 1, 2) on a narrow column,
// without the states' words unless words is set. x is in CSS px (the row
// is laid out in CSS px and each piece placed once, so the pieces sit
// where they do at 1x at any scale).
func (r *Raster) drawNodeRow(n mm.NodeView, part int, words bool, x float64, y int, clip Rect, txt textStyle) {
	name := "N" + strconv.Itoa(n.Node)
	if part != 2 {
		r.text(r.d(x), y, name, txt, r.sc.LabelText, clip, true)
	}
	x += txt.widthCSS(name + " ")
	if part != 2 {
		ks := n.Kswapd
		lamp := r.sc.LampOff
		switch n.Kswapd {
		case "balancing":
			lamp = r.sc.LampOn
			ks += " o" + strconv.Itoa(int(n.KswapdOrder))
		case "napping":
			lamp = r.sc.LampHalf
		}
		if n.KswapdFailures >= maxReclaimRetries {
			ks = "hopeless"
		}
		if !words {
			ks = ""
		}
		x = r.lamp(x, y, "kswapd", lamp, ks, clip, txt) + txt.advCSS
	}
	if part != 1 {
		kc := n.Kcompactd
		lamp := r.sc.LampOff
		if n.Kcompactd == "compacting" {
			lamp = r.sc.LampOn
			kc += " o" + strconv.Itoa(int(n.KcompactdOrder))
		}
		if !words {
			kc = ""
		}
		r.lamp(x, y, "kcompactd", lamp, kc, clip, txt)
	}
}

// lamp draws "name [lamp] state" from x (CSS px) and returns where it
// ends (CSS px).
func (r *Raster) lamp(x float64, y int, name string, col RGB, state string, clip Rect, txt textStyle) float64 {
	u := txt.lineCSS / 16
	r.text(r.d(x), y, name, txt, r.sc.LabelText, clip, true)
	x += txt.widthCSS(name) + 4*u
	ls := r.d(lampSize * u)
	lx, ly := r.d(x), y+(r.d(txt.lineCSS)-ls)/2
	r.fill(lx, ly, lx+ls, ly+ls, r.sc.LampFrame.pixel(), clip)
	b := max(1, r.d(u))
	r.fill(lx+b, ly+b, lx+ls-b, ly+ls-b, col.pixel(), clip)
	r.Lamps = append(r.Lamps, Rect{lx, ly, lx + ls, ly + ls})
	x += lampSize*u + 4*u
	if state == "" {
		return x
	}
	r.text(r.d(x), y, state, txt, r.sc.Muted, clip, true)
	return x + txt.widthCSS(state)
}

// GaugeX maps a page count to a position on a gauge of width w for a zone
// of managed pages (log scale, so the watermarks, a fraction of a percent
// of memory, are visible next to the free count).
func GaugeX(v, managed uint64, w int) int {
	if managed == 0 {
		return 0
	}
	x := int(math.Log1p(float64(v)) / math.Log1p(float64(managed)) * float64(w))
	return min(max(x, 0), w)
}

func (r *Raster) drawGauge(z mm.ZoneView, g Rect, clip Rect, u float64) {
	w := g.X1 - g.X0
	r.fill(g.X0, g.Y0, g.X1, g.Y1, r.sc.GaugeTrack.pixel(), clip)
	free := uint64(max(z.Free, 0))
	col := r.sc.GaugeOK
	switch {
	case free < z.Min:
		col = r.sc.GaugeMin
	case free < z.High:
		col = r.sc.GaugeLow
	}
	b := max(1, r.d(u))
	r.fill(g.X0, g.Y0+b, g.X0+GaugeX(free, z.Managed, w), g.Y1-b, col.pixel(), clip)
	for _, t := range []struct {
		v uint64
		c RGB
	}{{z.Min, r.sc.TickMin}, {z.Low, r.sc.TickLow}, {z.High, r.sc.TickHigh}} {
		x := g.X0 + GaugeX(t.v, z.Managed, w)
		r.fill(x, g.Y0-2*b, x+b, g.Y1+b, t.c.pixel(), clip)
	}
}

// TrackX maps a PFN to a position on a zone's scanner track of width w
// (linear in the zone's span).
func TrackX(pfn mm.PFN, z mm.ZoneView, w int) int {
	if z.Spanned == 0 || pfn < z.StartPFN {
		return 0
	}
	x := int(float64(pfn-z.StartPFN) / float64(z.Spanned) * float64(w))
	return min(max(x, 0), w-1)
}

// compacted reports whether compaction has run on the zone (before that,
// the scanners sit at the zone's ends and are not drawn).
func compacted(z mm.ZoneView) bool { return z.LastCompaction.Runs > 0 }

// drawScannerTrack draws the zone's PFN range as a line, and once the zone
// has been compacted, the cached scanner positions and the latest run's
// stopping points.
func (r *Raster) drawScannerTrack(z mm.ZoneView, g Rect, clip Rect, u float64) {
	w := g.X1 - g.X0
	mid := (g.Y0 + g.Y1) / 2
	b := max(1, r.d(u))
	r.fill(g.X0, mid, g.X1, mid+b, r.sc.GaugeTrack.pixel(), clip)
	if !compacted(z) {
		return
	}
	lc := z.LastCompaction
	for _, pfn := range []mm.PFN{lc.MigratePFN, lc.FreePFN} {
		x := g.X0 + TrackX(pfn, z, w)
		r.fill(x-b, mid-b, x+2*b, mid+2*b, r.sc.MarkLastRun.pixel(), clip)
	}
	mx := g.X0 + TrackX(z.CachedMigratePFN[0], z, w)
	r.fill(mx, g.Y0, mx+2*b, g.Y1, r.sc.MarkMigrate.pixel(), clip)
	fx := g.X0 + TrackX(z.CachedFreePFN, z, w)
	r.fill(fx-b, g.Y0, fx+b, g.Y1, r.sc.MarkFree.pixel(), clip)
}

// BuddyHeight is the bar height for a count of free chunks (log scale,
// full height at 2^20 chunks or more).
func BuddyHeight(n uint64, h int) int {
	if n == 0 {
		return 0
	}
	v := int(math.Ceil(math.Log2(float64(n)+1) / 20 * float64(h)))
	return min(max(v, 1), h)
}

func (r *Raster) drawBuddy(z mm.ZoneView, b Rect, clip Rect, u float64) {
	h := b.Y1 - b.Y0
	step := float64(b.X1-b.X0) / float64(max(len(z.NrFree), 1))
	bar := max(1, int(step*4/5))
	line := max(1, r.d(u))
	for o, n := range z.NrFree {
		x := b.X0 + int(float64(o)*step)
		r.fill(x, b.Y1-line, x+bar, b.Y1, r.sc.GaugeTrack.pixel(), clip)
		if bh := BuddyHeight(n, h); bh > 0 {
			r.fill(x, b.Y1-bh, x+bar, b.Y1, r.sc.BuddyBar.pixel(), clip)
		}
	}
}

// pfnScreen returns where page pfn of band b is drawn in view: its left
// edge and the top and bottom of its tile row. ok is false if pfn is not
// in the band.
func (r *Raster) pfnScreen(b *band, pfn mm.PFN, view Rect) (x, y0, y1 int, ok bool) {
	blk := int(pfn >> mm.PageblockOrder)
	i := blk - b.firstBlock
	if i < 0 || i >= b.nblocks {
		return 0, 0, 0, false
	}
	per := r.lay.perRow
	off := int(pfn & (mm.PageblockNrPages - 1))
	wx := float64((i%per)*TileW + off%TileW)
	wy := b.y + float64((i/per)*TileH)
	return r.screenX(view, wx), r.screenY(view, wy), r.screenY(view, wy+TileH), true
}

// drawScannerMarks puts the compaction markers on the bands of column c:
// a diamond where the latest run's scanners stopped, and a pin (a head
// above the tile row and a stem through it) at each scanner's cached
// position.
func (r *Raster) drawScannerMarks(c int, view Rect) {
	zones := r.zones[c]
	k := max(1, int(math.Round(r.Scale)))
	for bi := range r.lay.bands {
		b := &r.lay.bands[bi]
		if bi >= len(zones) || !compacted(zones[bi]) {
			continue
		}
		z := zones[bi]
		for _, pfn := range []mm.PFN{z.LastCompaction.MigratePFN, z.LastCompaction.FreePFN} {
			if x, y0, y1, ok := r.pfnScreen(b, pfn, view); ok {
				cy := (y0 + y1) / 2
				for d := -3 * k; d <= 3*k; d++ {
					w := 3*k - max(d, -d)
					r.mark(x-w, cy+d, x+w+1, cy+d+1, r.sc.MarkLastRun, view)
				}
			}
		}
		for _, m := range []struct {
			pfn mm.PFN
			col RGB
		}{{z.CachedMigratePFN[0], r.sc.MarkMigrate}, {z.CachedFreePFN, r.sc.MarkFree}} {
			x, y0, y1, ok := r.pfnScreen(b, m.pfn, view)
			if !ok {
				continue
			}
			r.mark(x, y0-3*k, x+2*k, max(y1, y0+2*k)+k, m.col, view)
			for i, w := range []int{3, 2, 1} {
				r.mark(x+k-w*k, y0-(7-i)*k, x+k+w*k, y0-(6-i)*k, m.col, view)
			}
		}
	}
}

// mark fills a marker rectangle and records it in Marks.
func (r *Raster) mark(x0, y0, x1, y1 int, col RGB, clip Rect) {
	r.fill(x0, y0, x1, y1, col.pixel(), clip)
	rc := Rect{max(x0, clip.X0), max(y0, clip.Y0), min(x1, clip.X1), min(y1, clip.Y1)}
	if rc.X0 < rc.X1 && rc.Y0 < rc.Y1 {
		r.Marks = append(r.Marks, rc)
	}
}
