//go:build js && wasm

// Package ebview is the Ebiten side of the page: the game loop that owns
// the simulation (through app.Loop), turns mouse and keys into camera moves
// and commands, and puts mapview's pixel buffer (map, header, charts and
// text alike) on the canvas with one WritePixels per changed frame; the
// hover tooltip is a second small image. It builds only for js/wasm: Ebiten
// needs a display natively and panics at init under Node, so it is tested
// in the browser (ui/e2e).
//
// # Start-up
//
// The page shows its first frame before it boots anything: the game starts
// without a simulation, draws a frame that says it is starting, and calls
// its boot function (which builds the controller and boots the machines)
// in the next Update. Once a frame with the machines is drawn, it calls
// AfterFirstMap (which mounts the panel). Booting the machines therefore
// never delays the first frame, nor the panel's first render the map.
package ebview

import (
	"bytes"
	"encoding/json"
	"image"
	"image/color"
	"math"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hajimehoshi/ebiten/v2"
	"github.com/hajimehoshi/ebiten/v2/inpututil"

	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/ui/app"
	"github.com/pagesim/pagesim/ui/mapview"
)

// SimBudget is the wall time the simulation may use per frame. With the
// raster and the upload a frame stays well under 100 ms at any speed, so
// the page keeps answering input.
const SimBudget = 8 * time.Millisecond

// Host is what the game needs from the page (jsbridge.Bridge).
type Host interface {
	Mark(name string)
	SetFrames(n int)
	MarkFirstFrame()
	// SetMode sets the page's view modes (html.present, html.embed).
	SetMode(present, embed bool)
}

// Game implements ebiten.Game. Update and Draw only delegate; all state
// changes happen in Update, Draw only uploads and draws what Update made.
type Game struct {
	// boot builds the simulation; it runs once, in the Update after the
	// first frame was drawn. loop is nil until then (and for good if boot
	// fails: the canvas then says why).
	boot     func() (*app.Loop, error)
	bootDone bool
	loop     *app.Loop
	host     Host
	r        *mapview.Raster
	img      *ebiten.Image
	// tip is the hover tooltip, redrawn only when its text changes.
	tip     *ebiten.Image
	tipText string
	// msg is the start-up message (before the simulation exists).
	msg               *ebiten.Image
	msgText, msgShown string
	msgW, msgH        int
	msgPix            []byte

	w, h     int     // drawing buffer in device pixels (from LayoutF)
	scale    float64 // device pixels per CSS pixel
	lastTick time.Time
	rastered uint64 // controller version last drawn into the raster
	camSeen  mapview.Camera
	viewSeen viewKey
	// cols are the indexes of the variants the canvas shows, in order.
	cols      []int
	gen       uint64
	needPixel bool // the raster changed since the last WritePixels
	mapShown  bool // a frame with the machines has been drawn
	shown     shownFrame
	redraws   int // frames that drew the screen (the others kept it)
	redrawnAt int // frame number of the latest redraw
	// AfterFirstMap, if set, is called once, in the Update after the
	// first frame that showed the machines (the page mounts its panel
	// then, so that its first render does not delay the map).
	AfterFirstMap func()
	afterDone     bool
	// AfterTick, if set, is called after every tick with the
	// controller, on its goroutine (the page's timeline redraws there).
	AfterTick func(*app.Controller)
	frames    int

	// keys are the page's keys pressed since the last Update (Key), by
	// jsbridge's names; guarded by keyMu.
	keyMu sync.Mutex
	keys  []string
	// mode is the view mode last given to the host.
	mode     [2]bool
	modeSent bool

	dragging     bool
	dragX, dragY int
	mouseSeen    bool
	mouseX       int
	mouseY       int
	hover        string
	// hoverState is the buffer the hovered page's state is read into.
	hoverState [1]mm.PageState

	frameCPU  []float64 // ms of Update+Draw work, last frameWindow frames
	frameGap  []float64 // ms between Draws, last frameWindow frames
	rasterMs  []float64 // ms of mapview.Render, last frameWindow renders
	uploadMs  []float64 // ms of WritePixels, last frameWindow uploads
	lastDraw  time.Time
	updStart  time.Time
	updCPU    time.Duration
	debugJSON atomic.Pointer[string]
	panelNS   atomic.Int64 // duration of the panel's last render
}

// PanelRendered records how long the panel's last render took; safe from
// any goroutine.
func (g *Game) PanelRendered(d time.Duration) { g.panelNS.Store(int64(d)) }

// New returns the game; call ebiten.RunGame with it. boot is called once,
// after the first frame is on the canvas, and returns the simulation.
func New(host Host, boot func() (*app.Loop, error)) *Game {
	return &Game{boot: boot, host: host, r: mapview.New(1, 1), scale: 1}
}

// Key records a key of the page (jsbridge.Bridge.OnKey's names) for the
// next Update; safe from any goroutine.
func (g *Game) Key(name string) {
	g.keyMu.Lock()
	g.keys = append(g.keys, name)
	g.keyMu.Unlock()
}

// StartingMessage is what the first frame says while the machines boot.
const StartingMessage = "Booting the simulated machines..."

// Update implements ebiten.Game.
func (g *Game) Update() error {
	g.updStart = time.Now()
	if g.loop == nil {
		g.starting()
	} else {
		g.input()
		g.tick()
		if g.mapShown && !g.afterDone {
			g.afterDone = true
			if g.AfterFirstMap != nil {
				g.AfterFirstMap()
			}
		}
	}
	g.updCPU = time.Since(g.updStart)
	return nil
}

// starting prepares the start-up frame (a message on the background: a
// small image, so the first frame uploads next to nothing) and, once that
// frame is on the canvas, boots.
func (g *Game) starting() {
	if g.frames == 0 {
		g.host.Mark("update")
		g.setMessage(StartingMessage)
		return
	}
	if g.bootDone {
		return
	}
	// This Update runs in the animation frame after the first one: the
	// first frame has been presented.
	g.host.Mark("firstPresented")
	g.bootDone = true
	g.host.Mark("boot")
	loop, err := g.boot()
	if err != nil {
		g.setMessage("pagesim could not start: " + err.Error())
		return
	}
	g.loop = loop
	g.host.Mark("booted")
	g.lastTick = time.Time{}
}

func (g *Game) setMessage(text string) {
	g.msgText = text
	g.msgW, g.msgH, g.msgPix = mapview.TextBox([]string{text}, int(6*g.scale), int(math.Round(mapview.TextPx*g.scale)), mapview.LabelText, mapview.Background)
}

// drawMessage draws the start-up (or failure) message centred on the
// background.
func (g *Game) drawMessage(screen *ebiten.Image) {
	screen.Fill(color.RGBA{mapview.Background.R, mapview.Background.G, mapview.Background.B, 0xff})
	if g.msgPix == nil {
		return
	}
	if g.msg == nil || g.msg.Bounds().Dx() != g.msgW || g.msg.Bounds().Dy() != g.msgH || g.msgShown != g.msgText {
		if g.msg != nil {
			g.msg.Deallocate()
		}
		g.msg = ebiten.NewImage(g.msgW, g.msgH)
		g.msg.WritePixels(g.msgPix)
		g.msgShown = g.msgText
	}
	var op ebiten.DrawImageOptions
	op.GeoM.Translate(float64(max((g.w-g.msgW)/2, 0)), float64(max((g.h-g.msgH)/2, 0)))
	screen.DrawImage(g.msg, &op)
}

func (g *Game) resize() {
	if g.w > 0 && (g.w != g.r.W || g.h != g.r.H) {
		g.r.Resize(g.w, g.h)
		g.rastered = 0
	}
}

// Draw implements ebiten.Game.
func (g *Game) Draw(screen *ebiten.Image) { g.draw(screen) }

// Layout implements ebiten.Game; Ebiten calls LayoutF instead.
func (g *Game) Layout(w, h int) (int, int) {
	fw, fh := g.LayoutF(float64(w), float64(h))
	return int(fw), int(fh)
}

// LayoutF implements ebiten.LayoutFer: the screen is the canvas in device
// pixels, so the map is drawn pixel for pixel.
func (g *Game) LayoutF(outsideW, outsideH float64) (float64, float64) {
	s := ebiten.Monitor().DeviceScaleFactor()
	// A huge canvas (a 4K projector at 2x) costs more to upload than
	// it shows; fall back to CSS pixels beyond ~4 Mpx.
	if outsideW*outsideH*s*s > 4e6 {
		s = 1
	}
	g.scale = s
	g.w, g.h = int(math.Ceil(outsideW*s)), int(math.Ceil(outsideH*s))
	return float64(g.w), float64(g.h)
}

// tick advances the simulation and redraws the raster when the machines,
// the camera, the size or the view modes changed.
func (g *Game) tick() {
	now := time.Now()
	dt := time.Duration(0)
	if !g.lastTick.IsZero() {
		dt = now.Sub(g.lastTick)
	}
	g.lastTick = now
	g.loop.Tick(dt, SimBudget)
	ctl := g.loop.Controller()
	if g.AfterTick != nil {
		g.AfterTick(ctl)
	}
	st := ctl.State()
	if mode := [2]bool{st.Present, st.Embed}; mode != g.mode || !g.modeSent {
		g.mode, g.modeSent = mode, true
		g.host.SetMode(st.Present, st.Embed)
	}
	g.resize()
	g.r.SetScale(g.scale)
	g.r.SetText(st.TextSize, st.Present)
	if st.Present {
		g.r.SetScheme(&mapview.Projector)
	} else {
		g.r.SetScheme(&mapview.Dark)
	}
	if gen := ctl.Generation(); gen != g.gen {
		g.gen = gen
		g.rastered = 0
	}
	key := viewKey{st.TextSize, st.Present, st.Embed, ctl.Focus(), g.narrow()}
	if ctl.Version() != g.rastered || g.r.Cam != g.camSeen || key != g.viewSeen {
		t0 := time.Now()
		if !g.mapShown {
			g.host.Mark("firstTick")
		}
		g.r.Render(g.panels(ctl, st.Embed))
		g.rasterMs = appendCapped(g.rasterMs, float64(time.Since(t0))/1e6)
		if !g.mapShown {
			g.host.Mark("firstRaster")
		}
		g.rastered = ctl.Version()
		g.camSeen = g.r.Cam
		g.viewSeen = key
		g.needPixel = true
		g.updateHover()
	}
	// The map as a PNG: what the canvas shows now, at its resolution.
	for _, f := range ctl.TakeMapRequests() {
		var b bytes.Buffer
		err := g.r.PNG(&b)
		f(b.Bytes(), err)
	}
	g.publishDebug(ctl)
}

// viewKey is what the raster's look depends on besides the runs and the
// camera.
type viewKey struct {
	text           int
	present, embed bool
	focus          int
	narrow         bool
}

// narrowCSS is the widest canvas, in CSS pixels, that shows one variant
// at a time (a phone: the panel's tabs pick it).
const narrowCSS = 600

func (g *Game) narrow() bool { return float64(g.w)/g.scale < narrowCSS }

// panels is what the canvas shows: every variant's column, or on a narrow
// screen the focused one's; an embed draws no charts.
func (g *Game) panels(ctl *app.Controller, embed bool) []mapview.Panel {
	ps := mapview.PanelsOf(ctl)
	if g.narrow() && len(ps) > 1 {
		f := ctl.Focus()
		g.cols = []int{f}
		ps = ps[f : f+1]
	} else {
		g.cols = g.cols[:0]
		for i := range ps {
			g.cols = append(g.cols, i)
		}
	}
	if embed {
		for i := range ps {
			ps[i].Charts = nil
		}
	}
	return ps
}

// input turns the mouse and the page's keys into camera moves and
// commands.
func (g *Game) input() {
	mx, my := ebiten.CursorPosition()
	if mx != g.mouseX || my != g.mouseY {
		g.mouseSeen = true
		g.mouseX, g.mouseY = mx, my
		g.updateHover()
	}
	if _, wy := ebiten.Wheel(); wy != 0 {
		g.r.ZoomAt(math.Pow(2, math.Max(-1, math.Min(1, wy/2))), mx, my)
	}
	switch {
	case inpututil.IsMouseButtonJustPressed(ebiten.MouseButtonLeft):
		g.dragging, g.dragX, g.dragY = true, mx, my
	case g.dragging && ebiten.IsMouseButtonPressed(ebiten.MouseButtonLeft):
		if mx != g.dragX || my != g.dragY {
			g.r.PanBy(float64(mx-g.dragX), float64(my-g.dragY))
			g.dragX, g.dragY = mx, my
		}
	default:
		g.dragging = false
	}
	g.keyMu.Lock()
	keys := g.keys
	g.keys = nil
	g.keyMu.Unlock()
	for _, k := range keys {
		g.key(k, mx, my)
	}
}

// key applies one of the page's keys (jsbridge.Bridge.OnKey's names).
func (g *Game) key(k string, mx, my int) {
	cx, cy := g.w/2, g.h/2
	if g.mouseSeen {
		cx, cy = mx, my
	}
	step := 24.0 * g.scale
	switch k {
	case "zoomin":
		g.r.ZoomAt(2, cx, cy)
	case "zoomout":
		g.r.ZoomAt(0.5, cx, cy)
	case "fit":
		g.r.FitView()
	case "onepage":
		g.r.ZoomTo(1, cx, cy) // one CSS pixel per page
	case "left":
		g.r.PanBy(step, 0)
	case "right":
		g.r.PanBy(-step, 0)
	case "up":
		g.r.PanBy(0, step)
	case "down":
		g.r.PanBy(0, -step)
	case "space":
		g.loop.Do(func(c *app.Controller) { c.TogglePlay() })
	case "step":
		g.loop.Do(func(c *app.Controller) { c.Step() })
	case "back":
		g.loop.Do(func(c *app.Controller) { _ = c.StepBack() })
	case "nextstall", "prevstall":
		dir := 1
		if k == "prevstall" {
			dir = -1
		}
		g.loop.Do(func(c *app.Controller) { _, _ = c.NextStall(dir) })
	case "reset":
		g.loop.Do(func(c *app.Controller) { c.Reset() })
	case "faster", "slower":
		g.loop.Do(func(c *app.Controller) { _ = c.SetSpeed(app.NextSpeed(c.State().Speed, k == "faster")) })
	case "present":
		g.loop.Do(func(c *app.Controller) { c.SetPresent(!c.State().Present) })
	case "text":
		g.loop.Do(func(c *app.Controller) { _ = c.SetTextSize(max(c.State().TextSize, 1)%app.MaxTextSize + 1) })
	}
}

// updateHover describes what is under the mouse.
func (g *Game) updateHover() {
	g.hover = ""
	if !g.mouseSeen {
		return
	}
	h, ok := g.r.HitTest(g.mouseX, g.mouseY)
	if !ok {
		return
	}
	v := h.View
	g.hover = "pfn 0x" + strconv.FormatUint(uint64(h.PFN), 16) + "  block " + strconv.Itoa(h.Block) + " " + v.MT.String() +
		"\nN" + strconv.Itoa(h.Zone.Node) + " " + h.Zone.Type.String() + ": " + strconv.Itoa(int(v.Free)) + " free, " + strconv.Itoa(int(v.PCP)) + " pcp"
	if v.Pinned > 0 {
		g.hover += ", " + strconv.Itoa(int(v.Pinned)) + " pinned"
	}
	if g.r.PageView && h.Col < len(g.cols) {
		st := g.loop.Controller().Views()[g.cols[h.Col]].PageStates(h.PFN, g.hoverState[:])[0]
		g.hover += "\npage: " + st.String()
	}
}

func (g *Game) draw(screen *ebiten.Image) {
	start := time.Now()
	if g.loop == nil {
		g.drawMessage(screen)
		g.frames++
		if g.frames == 1 {
			g.host.MarkFirstFrame()
		}
		g.host.SetFrames(g.frames)
		return
	}
	changed := false
	if g.img == nil || g.img.Bounds().Dx() != g.r.W || g.img.Bounds().Dy() != g.r.H {
		if g.img != nil {
			g.img.Deallocate()
		}
		g.img = ebiten.NewImage(g.r.W, g.r.H)
		g.needPixel = true
	}
	if g.needPixel {
		t0 := time.Now()
		g.img.WritePixels(g.r.Pix)
		g.uploadMs = appendCapped(g.uploadMs, float64(time.Since(t0))/1e6)
		g.needPixel = false
		changed = true
	}
	var tipAt image.Point
	if g.hover != "" {
		if g.tip == nil || g.hover != g.tipText {
			sc := g.r.Scheme()
			w, h, pix := mapview.TextBox(splitLines(g.hover), int(3*g.scale), int(math.Round(g.r.TextCSS()*g.scale)), sc.LabelText, sc.TooltipBG)
			if g.tip == nil || g.tip.Bounds().Dx() != w || g.tip.Bounds().Dy() != h {
				if g.tip != nil {
					g.tip.Deallocate()
				}
				g.tip = ebiten.NewImage(w, h)
			}
			g.tip.WritePixels(pix)
			g.tipText = g.hover
		}
		b := g.tip.Bounds()
		tipAt = image.Pt(max(min(g.mouseX+14, g.w-b.Dx()-2), 0), max(min(g.mouseY+14, g.h-b.Dy()-2), 0))
	}
	// The screen keeps its pixels between frames (main sets
	// SetScreenClearedEveryFrame(false)): draw only when something on it
	// changed, which spares the browser a full-canvas draw per idle frame,
	// and every redrawEvery frames in case the browser lost them.
	now := shownFrame{hover: g.hover, tipAt: tipAt, size: screen.Bounds().Size()}
	if changed || now != g.shown || g.frames-g.redrawnAt >= redrawEvery {
		g.redrawnAt = g.frames
		screen.DrawImage(g.img, nil)
		if g.hover != "" {
			var op ebiten.DrawImageOptions
			op.GeoM.Translate(float64(tipAt.X), float64(tipAt.Y))
			screen.DrawImage(g.tip, &op)
		}
		g.shown = now
		g.redraws++
	}
	g.frames++
	if g.frames == 1 {
		g.host.MarkFirstFrame()
	}
	if !g.mapShown && g.loop != nil && g.rastered != 0 {
		g.mapShown = true
		g.host.Mark("firstMap")
	}
	g.host.SetFrames(g.frames)
	g.record(start)
	// Again now that the raster is on the screen: settled in the frame
	// that draws the new state, not the one after it.
	g.publishDebug(g.loop.Controller())
}

// redrawEvery bounds how many frames the screen may go without a redraw.
const redrawEvery = 120

// shownFrame is what the screen shows besides the map image: the tooltip
// and where, and the screen's size.
type shownFrame struct {
	hover string
	tipAt image.Point
	size  image.Point
}

// record keeps the frame timings the debug report gives.
func (g *Game) record(drawStart time.Time) {
	now := time.Now()
	cpu := g.updCPU + now.Sub(drawStart)
	g.frameCPU = appendCapped(g.frameCPU, float64(cpu)/1e6)
	if !g.lastDraw.IsZero() {
		g.frameGap = appendCapped(g.frameGap, float64(now.Sub(g.lastDraw))/1e6)
	}
	g.lastDraw = now
}

// frameWindow is how many frames the timing medians cover.
const frameWindow = 60

func appendCapped(s []float64, v float64) []float64 {
	if len(s) >= frameWindow {
		copy(s, s[1:])
		s = s[:len(s)-1]
	}
	return append(s, v)
}

func median(s []float64) float64 {
	if len(s) == 0 {
		return 0
	}
	c := slices.Clone(s)
	slices.Sort(c)
	return c[len(c)/2]
}

// Debug is what window.pagesimDebug() reports (as JSON); the browser
// tests read the same type.
type Debug = mapview.DebugReport

func (g *Game) publishDebug(ctl *app.Controller) {
	settled := !ctl.Playing() && ctl.CaughtUp() && !ctl.Restoring() && g.rastered == ctl.Version() && !g.needPixel && g.frames > 0
	d := Debug{Settled: settled, Frames: g.frames, W: g.r.W, H: g.r.H, Scale: g.scale, Cam: g.r.Cam, Fit: g.r.Fit(), PageView: g.r.PageView,
		Link: ctl.Fragment(), NowNS: int64(ctl.Now()), Playing: ctl.Playing(), Ended: ctl.Ended(), Restoring: ctl.Restoring(), CaughtUpBy: ctl.CaughtUpBy(), Progress: ctl.Progress(), ReadBackMs: float64(ctl.ReadBack()) / 1e6, SeekMs: float64(ctl.SeekTook()) / 1e6, Checkpoints: len(ctl.Checkpoints(0)), Version: ctl.Version(), Gen: ctl.Generation(),
		FrameCPUms: median(g.frameCPU), FrameGapms: median(g.frameGap), PanelMs: float64(g.panelNS.Load()) / 1e6, RasterMs: median(g.rasterMs), UploadMs: median(g.uploadMs), Hover: g.hover, Redraws: g.redraws, Labels: g.r.Labels,
		TextPx: g.r.TextCSS(), Clipped: g.r.Clipped, Layout: g.r.Layout(), Scheme: g.r.Scheme().Name}
	for _, l := range g.r.Labels {
		d.TextPx = min(d.TextPx, l.Size)
	}
	if v := ctl.ScriptLive(); ctl.ScriptOn() {
		if v.M != nil {
			d.Columns = []string{v.Title()}
			d.Pages = uint64(v.M.MaxPFN())
		}
	} else {
		for _, i := range g.cols {
			if i < len(ctl.Views()) {
				d.Columns = append(d.Columns, ctl.Views()[i].Variant())
			}
		}
		for _, v := range ctl.Views() {
			d.Pages = max(d.Pages, uint64(v.MaxPFN()))
		}
	}
	b, err := json.Marshal(d)
	if err != nil {
		return
	}
	s := string(b)
	g.debugJSON.Store(&s)
}

// DebugJSON returns the latest debug report; safe from any goroutine.
func (g *Game) DebugJSON() string {
	if p := g.debugJSON.Load(); p != nil {
		return *p
	}
	return "{}"
}

func splitLines(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}
