//go:build js && wasm

// Package jsbridge is everything the page does with the browser besides
// drawing: the URL fragment, the clipboard, the counters the end-to-end
// tests read, and the CSP-safe start of Vugu's DOM renderer. It touches
// only the global object (globalThis), so its tests run under Node with
// small fakes of location and history.
package jsbridge

import (
	"errors"
	"sync"
	"syscall/js"
)

// Bridge talks to the page's global object.
type Bridge struct {
	global js.Value
	frames js.Value // the pagesimFrames counter object
	mu     sync.Mutex
	funcs  []js.Func // kept alive for the page's lifetime
}

// New returns a bridge to js.Global().
func New() *Bridge {
	return &Bridge{global: js.Global()}
}

// Fragment returns location.hash without the leading '#', or "" when
// there is no location (Node).
func (b *Bridge) Fragment() string {
	loc := b.global.Get("location")
	if !loc.Truthy() {
		return ""
	}
	h := loc.Get("hash")
	if h.Type() != js.TypeString {
		return ""
	}
	s := h.String()
	if len(s) > 0 && s[0] == '#' {
		s = s[1:]
	}
	// Browsers percent-encode some characters of the hash (a space
	// reads as %20); the permalink decoder unescapes values itself.
	return s
}

// ReplaceFragment sets the URL fragment without adding a history entry
// and without firing hashchange (history.replaceState).
func (b *Bridge) ReplaceFragment(frag string) {
	h := b.global.Get("history")
	if !h.Truthy() {
		return
	}
	h.Call("replaceState", js.Null(), "", "#"+frag)
}

// PushFragment sets the URL fragment as a new history entry
// (history.pushState, which fires no hashchange): Back returns to the
// entry before it.
func (b *Bridge) PushFragment(frag string) {
	h := b.global.Get("history")
	if !h.Truthy() {
		return
	}
	h.Call("pushState", js.Null(), "", "#"+frag)
}

// SetFragment is ReplaceFragment, or PushFragment when push is set: the
// shape of app.Loop's OnLink.
func (b *Bridge) SetFragment(frag string, push bool) {
	if push {
		b.PushFragment(frag)
	} else {
		b.ReplaceFragment(frag)
	}
}

// OnHashChange calls f with the new fragment when the user edits it,
// follows a link to another fragment of the page, or walks the history
// with Back and Forward (popstate; a browser may fire hashchange too, so
// f can be called twice with the same fragment).
func (b *Bridge) OnHashChange(f func(frag string)) {
	fn := js.FuncOf(func(this js.Value, args []js.Value) any {
		frag := b.Fragment()
		go f(frag) // never block inside a JS callback
		return nil
	})
	b.keep(fn)
	if add := b.global.Get("addEventListener"); add.Type() == js.TypeFunction {
		b.global.Call("addEventListener", "hashchange", fn)
		b.global.Call("addEventListener", "popstate", fn)
	}
}

// PageURL returns the page's address without its fragment (origin, path
// and query), to which a permalink's fragment is appended; "" when there
// is no location (Node).
func (b *Bridge) PageURL() string {
	loc := b.global.Get("location")
	if !loc.Truthy() {
		return ""
	}
	href := loc.Get("href")
	if href.Type() != js.TypeString {
		return ""
	}
	s := href.String()
	for i := 0; i < len(s); i++ {
		if s[i] == '#' {
			return s[:i]
		}
	}
	return s
}

func (b *Bridge) keep(f js.Func) {
	b.mu.Lock()
	b.funcs = append(b.funcs, f)
	b.mu.Unlock()
}

// SetFrames publishes the number of frames drawn as window.pagesimFrames,
// which tests wait on instead of sleeping.
func (b *Bridge) SetFrames(n int) {
	b.global.Set("pagesimFrames", n)
}

// Fail shows msg in the page's error box (boot.js's pagesimBoot.fail), or
// logs it when there is none.
func (b *Bridge) Fail(msg string) {
	if boot := b.global.Get("pagesimBoot"); boot.Truthy() && boot.Get("fail").Type() == js.TypeFunction {
		boot.Call("fail", msg)
		return
	}
	if c := b.global.Get("console"); c.Truthy() {
		c.Call("error", "pagesim: "+msg)
	}
}

// Mark records performance.now() as window.pagesimMarks[name], a start-up
// timeline for measurements.
func (b *Bridge) Mark(name string) {
	p := b.global.Get("performance")
	if !p.Truthy() {
		return
	}
	m := b.global.Get("pagesimMarks")
	if !m.Truthy() {
		m = b.global.Get("Object").New()
		b.global.Set("pagesimMarks", m)
	}
	m.Set(name, p.Call("now"))
}

// PrepareCanvas readies the canvas Ebiten created (in its package init) for
// Ebiten's first frame, before ebiten.RunGame asks it for a WebGL2
// context: it gives the canvas the drawing-buffer size Ebiten is about to
// set (the body's client size times devicePixelRatio, as Ebiten's
// updateScreenSize computes it) and creates the context with Ebiten's
// attributes plus antialias: false. A browser hands every later
// getContext("webgl2") call the context it already made, with the first
// call's attributes, so Ebiten draws into this one.
//
// Why: Ebiten never needs the default framebuffer multisampled (it draws
// into its own images and copies the result to the screen with one
// pixel-aligned quad), but WebGL multisamples unless asked not to, and
// with a software renderer (SwiftShader, in headless Chromium) allocating
// a multisampled 1400x900 buffer took 220-310 ms, and resizing it from
// Ebiten's initial 16x16 as long again; without multisampling, allocated
// once at its final size, 50-100 ms (docs/PERFORMANCE.md). It returns
// false, changing nothing, if there is no canvas or no WebGL2 (Ebiten
// then reports the error as before).
func (b *Bridge) PrepareCanvas() bool {
	doc := b.global.Get("document")
	if !doc.Truthy() {
		return false
	}
	canvas := doc.Call("querySelector", "canvas")
	body := doc.Get("body")
	if !canvas.Truthy() || !body.Truthy() {
		return false
	}
	f := 1.0
	if r := b.global.Get("devicePixelRatio"); r.Type() == js.TypeNumber && r.Float() > 0 {
		f = r.Float()
	}
	canvas.Set("width", int(body.Get("clientWidth").Float()*f))
	canvas.Set("height", int(body.Get("clientHeight").Float()*f))
	attr := b.global.Get("Object").New()
	attr.Set("alpha", true)
	attr.Set("premultipliedAlpha", true)
	attr.Set("stencil", true)
	attr.Set("antialias", false)
	return canvas.Call("getContext", "webgl2", attr).Truthy()
}

// MarkFirstFrame records performance.now() at the first frame drawn as
// window.pagesimFirstFrame (milliseconds since navigation started).
func (b *Bridge) MarkFirstFrame() {
	if p := b.global.Get("performance"); p.Truthy() {
		b.global.Set("pagesimFirstFrame", p.Call("now"))
	}
	b.Mark("firstFrame")
}

// ExposeDebug installs window.pagesimDebug(), returning f's JSON text.
// f runs on whatever goroutine services the call, so it must only read
// state published for other goroutines.
func (b *Bridge) ExposeDebug(f func() string) {
	fn := js.FuncOf(func(this js.Value, args []js.Value) any { return f() })
	b.keep(fn)
	b.global.Set("pagesimDebug", fn)
}

// ExposeBench installs window.pagesimBench(), which returns a Promise of
// f's result (JSON text). f runs on a new goroutine, never inside the
// JavaScript call; while it runs the page does nothing else (Go's
// goroutines share the page's one thread), which is what a benchmark
// wants.
func (b *Bridge) ExposeBench(f func() string) {
	fn := js.FuncOf(func(this js.Value, args []js.Value) any {
		var executor js.Func
		executor = js.FuncOf(func(this js.Value, a []js.Value) any {
			resolve := a[0]
			executor.Release()
			go func() { resolve.Invoke(f()) }()
			return nil
		})
		return b.global.Get("Promise").New(executor)
	})
	b.keep(fn)
	b.global.Set("pagesimBench", fn)
}

// CopyText writes text to the clipboard (navigator.clipboard.writeText)
// and calls done with the outcome, from a new goroutine.
func (b *Bridge) CopyText(text string, done func(error)) {
	nav := b.global.Get("navigator")
	var clip js.Value
	if nav.Truthy() {
		clip = nav.Get("clipboard")
	}
	if !clip.Truthy() || clip.Get("writeText").Type() != js.TypeFunction {
		go done(errors.New("this browser gives the page no clipboard"))
		return
	}
	var ok, fail js.Func
	release := func() { ok.Release(); fail.Release() }
	ok = js.FuncOf(func(this js.Value, args []js.Value) any {
		release()
		go done(nil)
		return nil
	})
	fail = js.FuncOf(func(this js.Value, args []js.Value) any {
		release()
		msg := "the browser refused"
		if len(args) > 0 && args[0].Truthy() {
			if m := args[0].Get("message"); m.Type() == js.TypeString && m.String() != "" {
				msg = m.String()
			}
		}
		go done(errors.New(msg))
		return nil
	})
	clip.Call("writeText", text).Call("then", ok, fail)
}

// WithoutEval runs f while window.eval is replaced by a function that
// refuses to evaluate anything. The page's Content-Security-Policy forbids
// eval; Vugu's DOM renderer nevertheless calls eval(helperScript) once at
// start-up, where the script begins with "if (window.vuguRender) return".
// index.html loads the same script (vugu-render.js) from the site, so the
// helpers are already defined and the call has nothing to do: the stand-in
// returns undefined when window.vuguRender exists and throws otherwise, so
// a missing vugu-render.js fails loudly instead of silently.
func (b *Bridge) WithoutEval(f func() error) error {
	orig := b.global.Get("eval")
	stand := js.FuncOf(func(this js.Value, args []js.Value) any {
		if b.global.Get("vuguRender").Type() == js.TypeFunction {
			return js.Undefined()
		}
		js.Global().Get("console").Call("error", "pagesim: vugu-render.js is not loaded")
		return js.Undefined()
	})
	defer stand.Release()
	b.global.Set("eval", stand)
	defer b.global.Set("eval", orig)
	if b.global.Get("vuguRender").Type() != js.TypeFunction {
		return errors.New("vugu-render.js is not loaded (window.vuguRender is missing)")
	}
	return f()
}

// pageKeys are the keys the page answers, by the KeyboardEvent.key they
// arrive as, and the name OnKey reports them by.
var pageKeys = map[string]string{
	" ": "space", ".": "step", ",": "back", "n": "nextstall", "N": "prevstall", "+": "zoomin", "=": "zoomin", "-": "zoomout", "_": "zoomout",
	"0": "fit", "1": "onepage", "[": "slower", "]": "faster", "r": "reset", "R": "reset",
	"p": "present", "P": "present", "t": "text", "T": "text",
	"ArrowLeft": "left", "ArrowRight": "right", "ArrowUp": "up", "ArrowDown": "down",
	"f": "fullscreen", "F": "fullscreen", "?": "help", "Escape": "escape",
}

// typing reports whether an element takes typed text: then the page's
// keys are the field's, not the page's.
func typing(el js.Value) bool {
	if !el.Truthy() {
		return false
	}
	if ce := el.Get("isContentEditable"); ce.Type() == js.TypeBoolean && ce.Bool() {
		return true
	}
	tag := el.Get("tagName")
	if tag.Type() != js.TypeString {
		return false
	}
	switch tag.String() {
	case "TEXTAREA":
		return true
	case "INPUT":
		switch el.Get("type").String() {
		case "checkbox", "radio", "button", "submit", "reset", "range", "color", "file", "image":
			return false
		}
		return true
	}
	return false
}

// OnKey listens to every key pressed on the page, whichever control has
// the focus (a capturing listener on the window, before the control and
// before Ebiten's own listener on the canvas), except while the focus is
// in a text field, and with Ctrl, Alt or Meta held (the browser's own
// shortcuts: Ctrl-+ zooms the page). A select keeps its arrows, space and
// Enter. The page's keys are taken from everyone else (preventDefault,
// stopPropagation): space on a focused button plays or pauses once,
// rather than pressing the button too. "f" toggles full screen and "?"
// the key help (#keys-help) at once, inside the key's event as the
// browser requires for full screen; the other keys go to f, by name
// (pageKeys), on a new goroutine.
func (b *Bridge) OnKey(f func(key string)) {
	fn := js.FuncOf(func(this js.Value, args []js.Value) any {
		if len(args) == 0 {
			return nil
		}
		e := args[0]
		for _, mod := range []string{"ctrlKey", "altKey", "metaKey"} {
			if v := e.Get(mod); v.Type() == js.TypeBoolean && v.Bool() {
				return nil
			}
		}
		kv := e.Get("key")
		if kv.Type() != js.TypeString {
			return nil
		}
		name, ok := pageKeys[kv.String()]
		if !ok {
			return nil
		}
		target := e.Get("target")
		if typing(target) {
			return nil
		}
		if t := target.Get("tagName"); target.Truthy() && t.Type() == js.TypeString && t.String() == "SELECT" {
			switch name {
			case "left", "right", "up", "down", "space":
				return nil
			}
		}
		switch name {
		case "escape":
			if !b.toggleHelp(false) {
				return nil // nothing to close: Escape stays the browser's
			}
		case "help":
			b.toggleHelp(true)
		case "fullscreen":
			b.toggleFullscreen()
		default:
			go f(name)
		}
		e.Call("preventDefault")
		e.Call("stopPropagation")
		return nil
	})
	b.keep(fn)
	if add := b.global.Get("addEventListener"); add.Type() == js.TypeFunction {
		opts := b.global.Get("Object").New()
		opts.Set("capture", true)
		b.global.Call("addEventListener", "keydown", fn, opts)
	}
}

// toggleHelp shows or hides the key help (#keys-help); with toggle unset
// it only hides it. It reports whether the help changed.
func (b *Bridge) toggleHelp(toggle bool) bool {
	doc := b.global.Get("document")
	if !doc.Truthy() {
		return false
	}
	el := doc.Call("getElementById", "keys-help")
	if !el.Truthy() {
		return false
	}
	hidden := el.Get("hidden").Truthy()
	if !toggle && hidden {
		return false
	}
	// Toggle: shown becomes hidden and hidden shown; close: hidden.
	el.Set("hidden", !hidden || !toggle)
	return true
}

// toggleFullscreen asks for the whole page in full screen, or leaves it.
// A refusal (an iframe without allow="fullscreen") is swallowed rather
// than left as an unhandled rejection.
func (b *Bridge) toggleFullscreen() {
	doc := b.global.Get("document")
	if !doc.Truthy() {
		return
	}
	var p js.Value
	if doc.Get("fullscreenElement").Truthy() {
		if doc.Get("exitFullscreen").Type() == js.TypeFunction {
			p = doc.Call("exitFullscreen")
		}
	} else if el := doc.Get("documentElement"); el.Truthy() && el.Get("requestFullscreen").Type() == js.TypeFunction {
		p = el.Call("requestFullscreen")
	}
	if p.Truthy() && p.Get("catch").Type() == js.TypeFunction {
		var ignore js.Func
		ignore = js.FuncOf(func(this js.Value, args []js.Value) any {
			ignore.Release()
			return nil
		})
		p.Call("catch", ignore)
	}
}

// SetMode sets the page's view modes as classes of the root element
// (html.present, html.embed: style.css lays the page out by them) and,
// when one changed, fires a resize so Ebiten sizes its canvas to the new
// layout.
func (b *Bridge) SetMode(present, embed bool) {
	doc := b.global.Get("document")
	if !doc.Truthy() {
		return
	}
	root := doc.Get("documentElement")
	if !root.Truthy() {
		return
	}
	cl := root.Get("classList")
	changed := false
	for _, m := range []struct {
		name string
		on   bool
	}{{"present", present}, {"embed", embed}} {
		if cl.Call("contains", m.name).Bool() != m.on {
			cl.Call("toggle", m.name, m.on)
			changed = true
		}
	}
	if changed {
		if ev := b.global.Get("Event"); ev.Type() == js.TypeFunction {
			b.global.Call("dispatchEvent", ev.New("resize"))
		}
	}
}

// DownloadText offers text as a file named name (Download, as plain
// text), or says why this browser cannot.
func (b *Bridge) DownloadText(name, text string) error {
	if !b.global.Get("document").Truthy() || b.global.Get("Blob").Type() != js.TypeFunction || !b.global.Get("URL").Truthy() {
		return errors.New("this browser cannot save a file from the page")
	}
	b.Download(name, "text/plain;charset=utf-8", []byte(text))
	return nil
}
