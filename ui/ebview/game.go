//go:build js && wasm

// Package ebview is the Ebiten side of the page: the game loop that owns
// the simulation (through app.Loop), turns mouse and keys into camera moves
// and commands, and puts mapview's pixel buffer on the canvas with one
// WritePixels per changed frame. It builds only for js/wasm: Ebiten needs a
// display natively and panics at init under Node, so it is tested in the
// browser (ui/e2e).
package ebview

import (
	"encoding/json"
	"image/color"
	"math"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/hajimehoshi/ebiten/v2"
	"github.com/hajimehoshi/ebiten/v2/ebitenutil"
	"github.com/hajimehoshi/ebiten/v2/inpututil"
	"github.com/hajimehoshi/ebiten/v2/vector"

	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/sim"
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
}

// Game implements ebiten.Game. Update and Draw only delegate; all state
// changes happen in Update, Draw only uploads and draws what Update made.
type Game struct {
	loop *app.Loop
	host Host
	r    *mapview.Raster
	img  *ebiten.Image

	w, h      int     // drawing buffer in device pixels (from LayoutF)
	scale     float64 // device pixels per CSS pixel
	lastTick  time.Time
	rastered  uint64 // controller version last drawn into the raster
	camSeen   mapview.Camera
	gen       uint64
	needPixel bool // the raster changed since the last WritePixels
	frames    int

	dragging     bool
	dragX, dragY int
	mouseSeen    bool
	mouseX       int
	mouseY       int
	hover        string

	frameCPU  []float64 // ms of Update+Draw work, last frameWindow frames
	frameGap  []float64 // ms between Draws, last frameWindow frames
	rasterMs  []float64 // ms of mapview.Render, last frameWindow renders
	lastDraw  time.Time
	updStart  time.Time
	updCPU    time.Duration
	debugJSON atomic.Pointer[string]
	panelNS   atomic.Int64 // duration of the panel's last render
}

// PanelRendered records how long the panel's last render took; safe from
// any goroutine.
func (g *Game) PanelRendered(d time.Duration) { g.panelNS.Store(int64(d)) }

// New returns the game for a loop; call ebiten.RunGame with it.
func New(loop *app.Loop, host Host) *Game {
	return &Game{loop: loop, host: host, r: mapview.New(1, 1), scale: 1}
}

// Update implements ebiten.Game.
func (g *Game) Update() error {
	if g.frames == 0 {
		g.host.Mark("update")
	}
	g.updStart = time.Now()
	g.input()
	g.tick()
	g.updCPU = time.Since(g.updStart)
	return nil
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
// the camera or the size changed.
func (g *Game) tick() {
	now := time.Now()
	dt := time.Duration(0)
	if !g.lastTick.IsZero() {
		dt = now.Sub(g.lastTick)
	}
	g.lastTick = now
	g.loop.Tick(dt, SimBudget)
	ctl := g.loop.Controller()
	if g.w > 0 && (g.w != g.r.W || g.h != g.r.H) {
		g.r.Resize(g.w, g.h)
		g.rastered = 0
	}
	if gen := ctl.Generation(); gen != g.gen {
		g.gen = gen
		g.rastered = 0
	}
	if ctl.Version() != g.rastered || g.r.Cam != g.camSeen {
		t0 := time.Now()
		g.r.Render(g.panels(ctl))
		g.rasterMs = appendCapped(g.rasterMs, float64(time.Since(t0))/1e6)
		g.rastered = ctl.Version()
		g.camSeen = g.r.Cam
		g.needPixel = true
		g.updateHover()
	}
	g.publishDebug(ctl)
}

func (g *Game) panels(ctl *app.Controller) []mapview.Panel {
	var ps []mapview.Panel
	for _, r := range ctl.Runs() {
		ps = append(ps, mapview.Panel{Title: r.Variant + "   t = " + app.FormatSeconds(r.Run.Now()-r.Run.Now()%sim.Millisecond) + " s", Src: r.Run.Machine()})
	}
	return ps
}

// input turns mouse and keys into camera moves and commands.
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
	cx, cy := g.w/2, g.h/2
	if g.mouseSeen {
		cx, cy = mx, my
	}
	for _, k := range []ebiten.Key{ebiten.KeyEqual, ebiten.KeyNumpadAdd} {
		if inpututil.IsKeyJustPressed(k) {
			g.r.ZoomAt(2, cx, cy)
		}
	}
	for _, k := range []ebiten.Key{ebiten.KeyMinus, ebiten.KeyNumpadSubtract} {
		if inpututil.IsKeyJustPressed(k) {
			g.r.ZoomAt(0.5, cx, cy)
		}
	}
	if inpututil.IsKeyJustPressed(ebiten.Key0) || inpututil.IsKeyJustPressed(ebiten.KeyNumpad0) {
		g.r.FitView()
	}
	if inpututil.IsKeyJustPressed(ebiten.Key1) || inpututil.IsKeyJustPressed(ebiten.KeyNumpad1) {
		g.r.ZoomAt(1/g.r.Cam.Zoom, cx, cy) // one device pixel per page
	}
	step := 24.0 * g.scale
	if ebiten.IsKeyPressed(ebiten.KeyArrowLeft) {
		g.r.PanBy(step, 0)
	}
	if ebiten.IsKeyPressed(ebiten.KeyArrowRight) {
		g.r.PanBy(-step, 0)
	}
	if ebiten.IsKeyPressed(ebiten.KeyArrowUp) {
		g.r.PanBy(0, step)
	}
	if ebiten.IsKeyPressed(ebiten.KeyArrowDown) {
		g.r.PanBy(0, -step)
	}
	if inpututil.IsKeyJustPressed(ebiten.KeySpace) {
		g.loop.Do(func(c *app.Controller) { c.TogglePlay() })
	}
	if inpututil.IsKeyJustPressed(ebiten.KeyPeriod) {
		g.loop.Do(func(c *app.Controller) { c.Step() })
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
	if g.r.PageView {
		st := g.loop.Controller().Runs()[h.Col].Run.Machine().PageStates(h.PFN, make([]mm.PageState, 1))[0]
		g.hover += "\npage: " + st.String()
	}
}

var tooltipBG = color.RGBA{0x10, 0x10, 0x12, 0xe0}

func (g *Game) draw(screen *ebiten.Image) {
	start := time.Now()
	if g.img == nil || g.img.Bounds().Dx() != g.r.W || g.img.Bounds().Dy() != g.r.H {
		if g.img != nil {
			g.img.Deallocate()
		}
		g.img = ebiten.NewImage(g.r.W, g.r.H)
		g.needPixel = true
	}
	if g.needPixel {
		g.img.WritePixels(g.r.Pix)
		g.needPixel = false
	}
	screen.DrawImage(g.img, nil)
	for _, l := range g.r.Labels {
		ebitenutil.DebugPrintAt(screen, l.Text, l.X, l.Y)
	}
	if g.hover != "" {
		x, y := g.mouseX+14, g.mouseY+14
		w, h := 0, 0
		for _, line := range splitLines(g.hover) {
			w = max(w, len(line)*mapview.CharW)
			h += mapview.LineH
		}
		x = min(x, g.w-w-6)
		y = min(y, g.h-h-6)
		vector.DrawFilledRect(screen, float32(x-3), float32(y-1), float32(w+6), float32(h+2), tooltipBG, false)
		ebitenutil.DebugPrintAt(screen, g.hover, x, y)
	}
	g.frames++
	if g.frames == 1 {
		g.host.MarkFirstFrame()
	}
	g.host.SetFrames(g.frames)
	g.record(start)
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

// Debug is what window.pagesimDebug() reports (as JSON) for tests and
// measurements.
type Debug struct {
	Frames   int            `json:"frames"`
	W        int            `json:"w"`
	H        int            `json:"h"`
	Scale    float64        `json:"scale"`
	Cam      mapview.Camera `json:"cam"`
	Fit      float64        `json:"fit"`
	PageView bool           `json:"pageView"`
	Link     string         `json:"link"`
	NowNS    int64          `json:"nowNs"`
	Playing  bool           `json:"playing"`
	Ended    bool           `json:"ended"`
	// Settled is true when the clock is stopped, the runs have caught up
	// with it and the frame on the canvas shows their current state.
	Settled   bool   `json:"settled"`
	Restoring bool   `json:"restoring"`
	Version   uint64 `json:"version"`
	Gen       uint64 `json:"gen"`
	Pages     uint64 `json:"pages"`
	// FrameCPUms and FrameGapms are medians over the last frameWindow
	// frames: the Go work per frame, and the time between frames.
	FrameCPUms float64 `json:"frameCpuMs"`
	FrameGapms float64 `json:"frameGapMs"`
	// RasterMs is the median time of drawing the map into the pixel
	// buffer (mapview.Render) over the last frameWindow redraws.
	RasterMs float64 `json:"rasterMs"`
	// PanelMs is how long the panel's last render took.
	PanelMs float64 `json:"panelMs"`
	Labels  []mapview.Label
}

func (g *Game) publishDebug(ctl *app.Controller) {
	settled := !ctl.Playing() && ctl.CaughtUp() && !ctl.Restoring() && g.rastered == ctl.Version() && !g.needPixel && g.frames > 0
	d := Debug{Settled: settled, Frames: g.frames, W: g.r.W, H: g.r.H, Scale: g.scale, Cam: g.r.Cam, Fit: g.r.Fit(), PageView: g.r.PageView,
		Link: ctl.Fragment(), NowNS: int64(ctl.Now()), Playing: ctl.Playing(), Ended: ctl.Ended(), Restoring: ctl.Restoring(), Version: ctl.Version(), Gen: ctl.Generation(),
		FrameCPUms: median(g.frameCPU), FrameGapms: median(g.frameGap), PanelMs: float64(g.panelNS.Load()) / 1e6, RasterMs: median(g.rasterMs), Labels: g.r.Labels}
	for _, r := range ctl.Runs() {
		d.Pages = max(d.Pages, uint64(r.Run.Machine().MaxPFN()))
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
