//go:build js && wasm

// Command wasm is the page's one WebAssembly binary: the Ebiten map runs on
// the main goroutine and owns the simulation; the Vugu panel renders on
// another goroutine from the snapshots the map's loop publishes and sends
// its commands back through the same loop.
//
// Start-up is ordered for the first frame: the game starts at once and
// draws a frame before anything is booted; its first Update after that
// builds the controller (booting the machines), and the panel mounts once
// the machines' first frame is drawn.
package main

import (
	"encoding/json"
	"fmt"
	"runtime/debug"
	"sync/atomic"

	"github.com/hajimehoshi/ebiten/v2"

	"github.com/pagesim/pagesim/engine/sim"
	"github.com/pagesim/pagesim/internal/bench"
	"github.com/pagesim/pagesim/ui/app"
	"github.com/pagesim/pagesim/ui/ebview"
	"github.com/pagesim/pagesim/ui/jsbridge"
	"github.com/pagesim/pagesim/ui/panel"
)

func main() {
	// The collector marks on the main thread (wasm has no other): a
	// jump on the timeline decodes a run per variant (14.5 MB each at
	// the page's scale) and, at GOGC's 100, the page's heap of a few
	// tens of MB was collected about once a jump. At 400 it is collected
	// a quarter as often, for a heap up to five times what is live; the
	// soft limit holds it at 2 GiB when the runs are large (scale 1).
	debug.SetGCPercent(400)
	debug.SetMemoryLimit(2 << 30)
	br := jsbridge.New()
	br.Mark("main")
	br.ExposeBench(bench.RunJSON)
	var game *ebview.Game
	game = ebview.New(br, func() (*app.Loop, error) {
		cat, err := app.DefaultCatalog()
		if err != nil {
			br.Fail("the scenario list is broken: " + err.Error())
			return nil, err
		}
		// A script link (#v1/script?src=...) opens the Script mode and
		// runs the script; the scenarios start from their defaults, and
		// their links leave the address bar alone while it shows the
		// script's.
		// The controller drives the scripts (the map shows the script's
		// machine under the page's clock), from before a link's script
		// runs.
		sr := app.NewScriptRunner()
		sr.Driven = true
		loadScript := func(frag string) {
			if dump, derr := app.ParseScriptLinkDump(frag); dump != nil || derr != nil {
				sr.SetDump(dump, "the link's machine", derr)
			}
			src, err := app.ParseScriptLink(frag)
			sr.Load(src, err)
			if err == nil {
				// A shared link's reader wants its output: the script
				// runs to its end, as fast as the frames allow (the
				// map still shows its machine; Reset reruns it so).
				sr.RunToEnd(src, nil)
			}
		}
		br.OnDropFiles("import-drop", app.CheckDumpSizes, sr.ImportFiles)
		link := br.Fragment()
		if app.IsScriptLink(link) {
			loadScript(link)
			link = ""
		}
		// The engine workers catch up to a link's time off the main
		// thread; without Web Workers the main thread does it.
		var workers app.Workers
		if p := br.NewEngineWorkers("engine-worker.js"); p != nil {
			workers = engineWorkers{p}
		}
		ctl := app.NewController(cat, app.Options{Link: link, Workers: workers})
		ctl.SetScript(sr)
		loop := app.NewLoop(ctl)
		br.Mark("controller")
		loop.OnLink = func(frag string, push bool) {
			if !sr.LinkShown() {
				br.SetFragment(frag, push)
			}
		}
		br.OnHashChange(func(frag string) {
			if app.IsScriptLink(frag) {
				loadScript(frag)
				return
			}
			sr.ShowLink(false)
			loop.Do(func(c *app.Controller) {
				if frag != c.Fragment() {
					c.LoadFragment(frag)
				}
			})
		})
		br.ExposeDebug(game.DebugJSON)
		// The timeline under the maps: a drag asks for many times; the
		// controller seeks to the latest asked when it next ticks.
		var asked atomic.Int64
		asked.Store(-1)
		tl := br.NewTimeline(func(t sim.Time) {
			if asked.Swap(int64(t)) < 0 {
				loop.Do(func(c *app.Controller) {
					if t := asked.Swap(-1); t >= 0 {
						_ = c.Seek(sim.Time(t))
					}
				})
			}
		})
		game.AfterTick = tl.Update
		game.AfterFirstMap = func() {
			go func() {
				br.Mark("panel")
				if err := panel.Mount("#vugu_mount_point", loop, br, sr, br, br.WithoutEval, game.PanelRendered); err != nil {
					br.Fail("the control panel could not start: " + err.Error())
				}
			}()
		}
		return loop, nil
	})
	// The canvas gets its size and a WebGL2 context without multisampling
	// before Ebiten asks for one (jsbridge.Bridge.PrepareCanvas says why).
	// The page's keys, whichever control has the focus (but a text field).
	br.OnKey(game.Key)
	br.PrepareCanvas()
	br.Mark("runGame")
	ebiten.SetTPS(ebiten.SyncWithFPS)
	ebiten.SetScreenClearedEveryFrame(false)
	ebiten.SetRunnableOnUnfocused(true)
	ebiten.SetWindowTitle("pagesim")
	if err := ebiten.RunGame(game); err != nil {
		br.Fail(fmt.Sprintf("the map stopped: %v", err))
	}
}

// engineWorkers are the page's engine workers as the controller asks for
// them (app.Workers).
type engineWorkers struct{ p *jsbridge.EngineWorkers }

func (w engineWorkers) Start(job app.WorkerJob) {
	b, err := json.Marshal(job)
	if err != nil {
		// A job is plain data: this does not happen; the controller
		// is told as of any failed job.
		w.p.Start(job.ID, "")
		return
	}
	w.p.Start(job.ID, string(b))
}

func (w engineWorkers) Cancel(id uint64) { w.p.Cancel(id) }

func (w engineWorkers) Poll() []app.WorkerReply {
	var out []app.WorkerReply
	for _, r := range w.p.Poll() {
		out = append(out, app.WorkerReply{ID: r.ID, Now: sim.Time(r.Now), Over: r.Over, Err: r.Err, Size: r.Size, CopyPayload: r.CopyPayload})
	}
	return out
}
