//go:build js && wasm

package jsbridge

// timeline.go draws the page's timeline under the maps and turns the
// pointer on it into seeks: a canvas of its own (#timeline), appended to
// the body after Ebiten's, so the map's canvas stays the page's first.
// app.TimelineBar has its arithmetic; the controller (ui/app
// timetravel.go) has the markers and the way back.

import (
	"encoding/json"
	"math"
	"strconv"
	"sync"
	"syscall/js"
	"time"

	"github.com/pagesim/pagesim/engine/sim"
	"github.com/pagesim/pagesim/ui/app"
)

// Timeline is the timeline strip.
type Timeline struct {
	doc, div, canvas, ctx js.Value
	seek                  func(sim.Time)

	// mu guards what the pointer handlers read: the bar and markers
	// last drawn, and whether a drag is on.
	mu       sync.Mutex
	bar      app.TimelineBar
	markers  []app.Marker
	variants []string
	off      string
	down     bool

	// Owner goroutine only: what was last drawn, and when.
	drawn     timelineKey
	drawnAt   time.Time
	wCSS, hPx int
}

type timelineKey struct {
	version, gen uint64
	w, h         int
	dpr          float64
	span, shown  sim.Time
	off          string
	present      bool
}

// markColours are the markers' colours, one per kind (app.MarkKind's
// order), on the page's dark background; the lanes of a variant's row
// follow the same order from the top.
var markColours = [...]string{"#ff7043", "#56b4e9", "#cc79a7", "#f0e442", "#ff1744", "#ff9b6b", "#e6e6e6"}

const (
	tlLeftCSS  = 112.0 // the variants' names
	tlRightCSS = 12.0
	tlAxisCSS  = 14.0
	tlLanes    = 5 // stall, kswapd, kcompactd, compaction, OOM and give-ups
)

// TimelineLegend is the strip's tooltip where no marker is under the
// pointer.
const TimelineLegend = "Timeline: drag to go to a time, click a marker to jump to it (, . step back and forward, n N the next and previous stall). " +
	"Each variant's row, from the top: allocation stalls (orange), kswapd runs (blue), kcompactd wakes (pink), direct compaction (yellow), OOM and give-ups (red); phase ends are white lines."

// NewTimeline adds the strip to the page (after Ebiten's canvas: call it
// once the game runs); seek is called with the time the pointer asks
// for, on the handler's goroutine.
func (b *Bridge) NewTimeline(seek func(sim.Time)) *Timeline {
	doc := b.global.Get("document")
	if !doc.Truthy() {
		return nil
	}
	tl := &Timeline{doc: doc, seek: seek}
	tl.div = doc.Call("createElement", "div")
	tl.div.Set("id", "timeline")
	tl.canvas = doc.Call("createElement", "canvas")
	tl.canvas.Set("id", "timeline-canvas")
	tl.canvas.Call("setAttribute", "role", "slider")
	tl.canvas.Call("setAttribute", "aria-label", "Timeline")
	tl.canvas.Set("title", TimelineLegend)
	tl.div.Call("appendChild", tl.canvas)
	doc.Get("body").Call("appendChild", tl.div)
	tl.ctx = tl.canvas.Call("getContext", "2d")

	on := func(name string, f func(e js.Value)) {
		fn := js.FuncOf(func(this js.Value, args []js.Value) any {
			if len(args) > 0 {
				f(args[0])
			}
			return nil
		})
		b.keep(fn)
		tl.canvas.Call("addEventListener", name, fn)
	}
	on("pointerdown", func(e js.Value) {
		if e.Get("button").Int() != 0 {
			return
		}
		x := e.Get("offsetX").Float()
		tl.mu.Lock()
		if tl.off != "" && tl.markers == nil {
			tl.mu.Unlock()
			return
		}
		tl.down = true
		t := tl.bar.T(x)
		if m, ok := tl.bar.Nearest(tl.markers, x, 5); ok {
			t = m.T
		}
		tl.mu.Unlock()
		tl.canvas.Call("setPointerCapture", e.Get("pointerId"))
		e.Call("preventDefault")
		go tl.seek(t)
	})
	on("pointermove", func(e js.Value) {
		x := e.Get("offsetX").Float()
		tl.mu.Lock()
		down, bar := tl.down, tl.bar
		title := TimelineLegend
		if tl.off != "" {
			title = tl.off
		}
		if m, ok := tl.bar.Nearest(tl.markers, x, 5); ok && !down {
			title = m.Describe(tl.variants)
		}
		tl.mu.Unlock()
		if down {
			go tl.seek(bar.T(x))
			return
		}
		if tl.canvas.Get("title").String() != title {
			tl.canvas.Set("title", title)
		}
	})
	up := func(e js.Value) {
		tl.mu.Lock()
		tl.down = false
		tl.mu.Unlock()
	}
	on("pointerup", up)
	on("pointercancel", up)
	return tl
}

// Update redraws the strip when what it shows changed: at once when the
// page is paused or the time jumped, at most every 100 ms while it plays.
// Call it on the controller's goroutine, after each tick.
func (tl *Timeline) Update(c *app.Controller) {
	if tl == nil {
		return
	}
	w := tl.canvas.Get("clientWidth").Int()
	h := tl.canvas.Get("clientHeight").Int()
	dpr := 1.0
	if v := js.Global().Get("devicePixelRatio"); v.Type() == js.TypeNumber && v.Float() > 0 {
		dpr = v.Float()
	}
	st := c.State()
	key := timelineKey{version: c.Version(), gen: c.Generation(), w: w, h: h, dpr: dpr, span: c.Span(), shown: c.Shown(), off: c.TimelineOff(), present: st.Present}
	if key == tl.drawn {
		return
	}
	if c.Playing() && key.gen == tl.drawn.gen && key.w == tl.drawn.w && key.h == tl.drawn.h && time.Since(tl.drawnAt) < 100*time.Millisecond {
		return
	}
	tl.drawn, tl.drawnAt = key, time.Now()
	tl.draw(c, key, st.Variants)
}

func (tl *Timeline) draw(c *app.Controller, k timelineKey, variants []string) {
	pw, ph := int(math.Round(float64(k.w)*k.dpr)), int(math.Round(float64(k.h)*k.dpr))
	if tl.canvas.Get("width").Int() != pw {
		tl.canvas.Set("width", pw)
	}
	if tl.canvas.Get("height").Int() != ph {
		tl.canvas.Set("height", ph)
	}
	ctx := tl.ctx
	ctx.Call("setTransform", k.dpr, 0, 0, k.dpr, 0, 0)
	ctx.Set("fillStyle", "#101012")
	ctx.Call("fillRect", 0, 0, k.w, k.h)
	script := c.ScriptOn()
	var markers []app.Marker
	if !script {
		markers = c.Markers()
	}
	bar := app.TimelineBar{Left: tlLeftCSS, Width: max(float64(k.w)-tlLeftCSS-tlRightCSS, 1), Span: k.span}
	tl.mu.Lock()
	tl.bar, tl.markers, tl.variants, tl.off = bar, markers, variants, k.off
	tl.mu.Unlock()
	// Presentation mode's text is 16 CSS px at the least, as the map's.
	px := 11
	if k.present {
		px = 16
	}
	font := strconv.Itoa(px) + "px system-ui, sans-serif"
	ctx.Set("font", font)
	ctx.Set("textBaseline", "middle")
	if script {
		ctx.Set("fillStyle", "#a0a0a8")
		ctx.Call("fillText", k.off, 8, float64(k.h)/2)
		tl.publish(bar, nil)
		return
	}
	rows := max(len(variants), 1)
	top := 3.0
	rowH := max((float64(k.h)-tlAxisCSS-top)/float64(rows), 4)
	// The time reached: lighter than what is still to run.
	reached := bar.X(min(c.Span(), max(c.Shown(), reachedOf(c))))
	ctx.Set("fillStyle", "#1b1b20")
	ctx.Call("fillRect", bar.Left, top, reached-bar.Left, rowH*float64(rows))
	for i, v := range variants {
		y := top + rowH*float64(i)
		ctx.Set("fillStyle", "#a0a0a8")
		name := v
		if len(name) > 14 {
			name = name[:13] + "…"
		}
		ctx.Call("fillText", name, 4, y+rowH/2)
		ctx.Set("fillStyle", "#34343c")
		ctx.Call("fillRect", bar.Left, y+rowH-1, bar.Width, 1)
	}
	laneH := max((rowH-2)/tlLanes, 1)
	// One mark per pixel column, kind and variant.
	type cell struct {
		v, lane, x int
	}
	seen := map[cell]bool{}
	for _, m := range markers {
		x := bar.X(m.T)
		y := top + rowH*float64(m.Variant)
		if m.Kind == app.MarkPhase {
			ctx.Set("fillStyle", markColours[app.MarkPhase])
			ctx.Call("fillRect", math.Floor(x), y, 1.5, rowH-1)
			continue
		}
		lane := min(int(m.Kind), tlLanes-1)
		cl := cell{m.Variant, lane, int(x * k.dpr)}
		if seen[cl] && m.Kind != app.MarkOOM {
			continue
		}
		seen[cl] = true
		ctx.Set("fillStyle", markColours[m.Kind])
		ctx.Call("fillRect", math.Floor(x*k.dpr)/k.dpr, y+1+laneH*float64(lane), max(1/k.dpr, 1.5), laneH)
	}
	// The page's time.
	x := bar.X(k.shown)
	ctx.Set("fillStyle", "#56b4e9")
	ctx.Call("fillRect", x-1, 0, 2, top+rowH*float64(rows))
	ctx.Call("beginPath")
	ctx.Call("moveTo", x-5, 0)
	ctx.Call("lineTo", x+5, 0)
	ctx.Call("lineTo", x, 5)
	ctx.Call("fill")
	ay := float64(k.h) - tlAxisCSS/2
	ctx.Set("fillStyle", "#a0a0a8")
	ctx.Set("textAlign", "left")
	ctx.Call("fillText", "0 s", bar.Left, ay)
	ctx.Set("textAlign", "right")
	ctx.Call("fillText", app.FormatTime(k.span)+" s", bar.Left+bar.Width, ay)
	ctx.Set("textAlign", "center")
	label := "t = " + app.FormatTime(k.shown) + " s"
	if k.off != "" {
		label = k.off
	}
	ctx.Set("fillStyle", "#e6e6e6")
	ctx.Call("fillText", label, min(max(x, bar.Left+80), bar.Left+bar.Width-80), ay)
	ctx.Set("textAlign", "left")
	tl.publish(bar, markers)
}

// reachedOf is the furthest time the page has run to (the timeline's
// lighter part).
func reachedOf(c *app.Controller) sim.Time { return c.Reached() }

// publish puts the track and the markers on the canvas's data attributes
// for the browser tests: data-left and data-width (CSS px), data-span
// (ns) and data-markers ([variant, kind, t in ns] of each marker, the
// first 2000).
func (tl *Timeline) publish(bar app.TimelineBar, markers []app.Marker) {
	ds := tl.canvas.Get("dataset")
	ds.Set("left", bar.Left)
	ds.Set("width", bar.Width)
	ds.Set("span", strconv.FormatInt(int64(bar.Span), 10))
	list := make([][3]int64, 0, min(len(markers), 2000))
	for _, m := range markers[:min(len(markers), 2000)] {
		list = append(list, [3]int64{int64(m.Variant), int64(m.Kind), int64(m.T)})
	}
	b, _ := json.Marshal(list)
	ds.Set("markers", string(b))
}
