package mapview

// header.go draws a column's header rows and the compaction markers on the
// map.
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

	"github.com/pagesim/pagesim/engine/mm"
)

// headerRow is one row of a column's header: a node's threads (zone < 0)
// or a zone (an index into the column's ZoneViews).
type headerRow struct {
	node int
	zone int
}

func (h headerRow) height() int {
	if h.zone < 0 {
		return nodePx
	}
	return rowPx
}

// headerRows lists a node row before the zone rows of each node.
func headerRows(zones []mm.ZoneView) []headerRow {
	var rows []headerRow
	for i, z := range zones {
		if i == 0 || zones[i-1].Node != z.Node {
			rows = append(rows, headerRow{node: z.Node, zone: -1})
		}
		rows = append(rows, headerRow{node: z.Node, zone: i})
	}
	return rows
}

// label draws text if its first character fits inside clip, cut to the
// clip's width, and records it in Labels.
func (r *Raster) label(x, y int, s string, clip Rect) {
	r.labelColor(x, y, s, LabelText, clip)
}

func (r *Raster) labelColor(x, y int, s string, col RGB, clip Rect) {
	if x < clip.X0 || y < clip.Y0 || x+CharW > clip.X1 || y+LineH > clip.Y1+4 {
		return
	}
	if n := (clip.X1 - x) / CharW; len(s) > n {
		s = s[:n]
	}
	drawText(r.px, r.W, x, y, s, col.pixel(), clip)
	r.Labels = append(r.Labels, Label{x, y, s})
}

func (r *Raster) drawHeader(c int) {
	x0 := c * (r.colW + colGap)
	clip := Rect{x0, 0, x0 + r.colW, r.headerH}
	r.label(x0+2, 0, r.titles[c], clip)
	zones := r.zones[c]
	y := LineH
	for _, row := range r.lay.rows {
		if row.zone < 0 {
			for _, n := range r.nodes[c] {
				if n.Node == row.node {
					r.drawNodeRow(n, x0, y, clip)
				}
			}
			y += row.height()
			continue
		}
		if row.zone >= len(zones) {
			y += row.height()
			continue
		}
		z := zones[row.zone]
		name := fmt.Sprintf("N%d %-6s", z.Node, z.Type)
		r.label(x0+2, y, name, clip)
		gx := x0 + 2 + (len(name)+1)*CharW
		bw := 11 * 5
		gw := r.colW - (gx - x0) - bw - 8
		if gw >= 20 {
			r.drawGauge(z, Rect{gx, y + 3, gx + gw, y + 10}, clip)
			r.drawScannerTrack(z, Rect{gx, y + 12, gx + gw, y + 17}, clip)
		}
		r.drawBuddy(z, Rect{x0 + r.colW - bw - 2, y + 3, x0 + r.colW - 2, y + rowPx - 2}, clip)
		y += row.height()
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
// sleeping".
func (r *Raster) drawNodeRow(n mm.NodeView, x0, y int, clip Rect) {
	x := x0 + 2
	name := "N" + strconv.Itoa(n.Node)
	r.label(x, y, name, clip)
	x += TextWidth(name) + CharW
	ks := n.Kswapd
	lamp := LampOff
	switch n.Kswapd {
	case "balancing":
		lamp = LampOn
		ks += " o" + strconv.Itoa(int(n.KswapdOrder))
	case "napping":
		lamp = LampHalf
	}
	if n.KswapdFailures >= maxReclaimRetries {
		ks = "hopeless"
	}
	x = r.lamp(x, y, "kswapd", lamp, ks, clip)
	kc := n.Kcompactd
	lamp = LampOff
	if n.Kcompactd == "compacting" {
		lamp = LampOn
		kc += " o" + strconv.Itoa(int(n.KcompactdOrder))
	}
	r.lamp(x+CharW, y, "kcompactd", lamp, kc, clip)
}

// lamp draws "name [lamp] state" from x and returns where it ends.
func (r *Raster) lamp(x, y int, name string, col RGB, state string, clip Rect) int {
	r.label(x, y, name, clip)
	x += TextWidth(name) + 4
	ly := y + (LineH-lampSize)/2
	r.fill(x, ly, x+lampSize, ly+lampSize, LampFrame.pixel(), clip)
	r.fill(x+1, ly+1, x+lampSize-1, ly+lampSize-1, col.pixel(), clip)
	r.Lamps = append(r.Lamps, Rect{x, ly, x + lampSize, ly + lampSize})
	x += lampSize + 4
	r.labelColor(x, y, state, Muted, clip)
	return x + TextWidth(state) + CharW
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

func (r *Raster) drawGauge(z mm.ZoneView, g Rect, clip Rect) {
	w := g.X1 - g.X0
	r.fill(g.X0, g.Y0, g.X1, g.Y1, GaugeTrack.pixel(), clip)
	free := uint64(max(z.Free, 0))
	col := GaugeOK
	switch {
	case free < z.Min:
		col = GaugeMin
	case free < z.High:
		col = GaugeLow
	}
	r.fill(g.X0, g.Y0+1, g.X0+GaugeX(free, z.Managed, w), g.Y1-1, col.pixel(), clip)
	for _, t := range []struct {
		v uint64
		c RGB
	}{{z.Min, TickMin}, {z.Low, TickLow}, {z.High, TickHigh}} {
		x := g.X0 + GaugeX(t.v, z.Managed, w)
		r.fill(x, g.Y0-2, x+1, g.Y1+1, t.c.pixel(), clip)
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
func (r *Raster) drawScannerTrack(z mm.ZoneView, g Rect, clip Rect) {
	w := g.X1 - g.X0
	mid := (g.Y0 + g.Y1) / 2
	r.fill(g.X0, mid, g.X1, mid+1, GaugeTrack.pixel(), clip)
	if !compacted(z) {
		return
	}
	lc := z.LastCompaction
	for _, pfn := range []mm.PFN{lc.MigratePFN, lc.FreePFN} {
		x := g.X0 + TrackX(pfn, z, w)
		r.fill(x-1, mid-1, x+2, mid+2, MarkLastRun.pixel(), clip)
	}
	mx := g.X0 + TrackX(z.CachedMigratePFN[0], z, w)
	r.fill(mx, g.Y0, mx+2, g.Y1, MarkMigrate.pixel(), clip)
	fx := g.X0 + TrackX(z.CachedFreePFN, z, w)
	r.fill(fx-1, g.Y0, fx+1, g.Y1, MarkFree.pixel(), clip)
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

func (r *Raster) drawBuddy(z mm.ZoneView, b Rect, clip Rect) {
	h := b.Y1 - b.Y0
	for o, n := range z.NrFree {
		x := b.X0 + o*5
		r.fill(x, b.Y1-1, x+4, b.Y1, GaugeTrack.pixel(), clip)
		if bh := BuddyHeight(n, h); bh > 0 {
			r.fill(x, b.Y1-bh, x+4, b.Y1, BuddyBar.pixel(), clip)
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
	for bi := range r.lay.bands {
		b := &r.lay.bands[bi]
		if bi >= len(zones) || !compacted(zones[bi]) {
			continue
		}
		z := zones[bi]
		for _, pfn := range []mm.PFN{z.LastCompaction.MigratePFN, z.LastCompaction.FreePFN} {
			if x, y0, y1, ok := r.pfnScreen(b, pfn, view); ok {
				cy := (y0 + y1) / 2
				for d := -3; d <= 3; d++ {
					w := 3 - max(d, -d)
					r.mark(x-w, cy+d, x+w+1, cy+d+1, MarkLastRun, view)
				}
			}
		}
		for _, m := range []struct {
			pfn mm.PFN
			col RGB
		}{{z.CachedMigratePFN[0], MarkMigrate}, {z.CachedFreePFN, MarkFree}} {
			x, y0, y1, ok := r.pfnScreen(b, m.pfn, view)
			if !ok {
				continue
			}
			r.mark(x, y0-3, x+2, max(y1, y0+2)+1, m.col, view)
			for i, w := range []int{3, 2, 1} {
				r.mark(x+1-w, y0-7+i, x+1+w, y0-6+i, m.col, view)
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
