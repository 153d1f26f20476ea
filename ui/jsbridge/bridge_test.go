//go:build js && wasm

package jsbridge

import (
	"errors"
	"syscall/js"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeBrowser installs location, history, navigator.clipboard and
// addEventListener on the global object, as a browser page has them.
type fakeBrowser struct {
	hash      string
	pushed    []string
	listeners map[string][]js.Value
	written   []string
	refuse    bool
	funcs     []js.Func
}

func installFakeBrowser(t *testing.T) *fakeBrowser {
	t.Helper()
	g := js.Global()
	fb := &fakeBrowser{listeners: map[string][]js.Value{}}
	fn := func(f func(args []js.Value) any) js.Func {
		jf := js.FuncOf(func(this js.Value, args []js.Value) any { return f(args) })
		fb.funcs = append(fb.funcs, jf)
		return jf
	}
	loc := js.Global().Get("Object").New()
	g.Set("location", loc)
	loc.Set("hash", "")
	hist := js.Global().Get("Object").New()
	hist.Set("replaceState", fn(func(args []js.Value) any {
		fb.hash = args[2].String()
		loc.Set("hash", fb.hash)
		return nil
	}))
	hist.Set("pushState", fn(func(args []js.Value) any {
		fb.pushed = append(fb.pushed, args[2].String())
		fb.hash = args[2].String()
		loc.Set("hash", fb.hash)
		return nil
	}))
	g.Set("history", hist)
	g.Set("addEventListener", fn(func(args []js.Value) any {
		fb.listeners[args[0].String()] = append(fb.listeners[args[0].String()], args[1])
		return nil
	}))
	clip := js.Global().Get("Object").New()
	clip.Set("writeText", fn(func(args []js.Value) any {
		fb.written = append(fb.written, args[0].String())
		if fb.refuse {
			return js.Global().Get("Promise").Call("reject", js.Global().Get("Error").New("Write permission denied."))
		}
		return js.Global().Get("Promise").Call("resolve")
	}))
	nav := js.Global().Get("Object").New()
	nav.Set("clipboard", clip)
	g.Set("navigator", nav)
	t.Cleanup(func() {
		for _, k := range []string{"location", "history", "addEventListener", "navigator", "pagesimFrames", "pagesimDebug", "pagesimBench", "vuguRender"} {
			g.Delete(k)
		}
		for _, f := range fb.funcs {
			f.Release()
		}
	})
	return fb
}

func TestWithoutALocationTheFragmentIsEmpty(t *testing.T) {
	assert.Equal(t, "", New().Fragment())
	New().ReplaceFragment("v1/x") // no history: nothing happens, no panic
}

func TestTheFragmentIsReadWithoutItsHash(t *testing.T) {
	installFakeBrowser(t)
	js.Global().Get("location").Set("hash", "#v1/playground?seed=3")
	assert.Equal(t, "v1/playground?seed=3", New().Fragment())
	js.Global().Get("location").Set("hash", "")
	assert.Equal(t, "", New().Fragment())
}

func TestReplaceFragmentUsesReplaceState(t *testing.T) {
	fb := installFakeBrowser(t)
	b := New()
	b.ReplaceFragment("v1/playground?seed=9&t=1.5")
	assert.Equal(t, "#v1/playground?seed=9&t=1.5", fb.hash)
	assert.Equal(t, "v1/playground?seed=9&t=1.5", b.Fragment())
}

func TestAUsersChangeIsPushedAndTheClockReplaced(t *testing.T) {
	fb := installFakeBrowser(t)
	b := New()
	b.SetFragment("v1/playground?seed=1&t=1", false)
	assert.Empty(t, fb.pushed)
	b.SetFragment("v1/playground?seed=2", true)
	assert.Equal(t, []string{"#v1/playground?seed=2"}, fb.pushed)
	assert.Equal(t, "v1/playground?seed=2", b.Fragment())
}

func TestThePageURLIsTheAddressWithoutTheFragment(t *testing.T) {
	installFakeBrowser(t)
	assert.Equal(t, "", New().PageURL(), "no href: no address")
	js.Global().Get("location").Set("href", "http://localhost:8080/pagesim/?x=1#v1/playground")
	assert.Equal(t, "http://localhost:8080/pagesim/?x=1", New().PageURL())
}

func TestBackAndForwardCallBackLikeAnEditedFragment(t *testing.T) {
	fb := installFakeBrowser(t)
	b := New()
	got := make(chan string, 2)
	b.OnHashChange(func(f string) { got <- f })
	require.Len(t, fb.listeners["popstate"], 1)
	js.Global().Get("location").Set("hash", "#v1/playground?seed=5")
	fb.listeners["popstate"][0].Invoke(js.Global().Get("Object").New())
	select {
	case f := <-got:
		assert.Equal(t, "v1/playground?seed=5", f)
	case <-time.After(5 * time.Second):
		t.Fatal("no callback")
	}
}

func TestHashChangeCallsBackWithTheNewFragment(t *testing.T) {
	fb := installFakeBrowser(t)
	b := New()
	got := make(chan string, 1)
	b.OnHashChange(func(f string) { got <- f })
	require.Len(t, fb.listeners["hashchange"], 1)
	js.Global().Get("location").Set("hash", "#v1/playground?seed=4")
	fb.listeners["hashchange"][0].Invoke(js.Global().Get("Object").New())
	select {
	case f := <-got:
		assert.Equal(t, "v1/playground?seed=4", f)
	case <-time.After(5 * time.Second):
		t.Fatal("no callback")
	}
}

func TestFramesAndDebugArePublishedOnTheGlobalObject(t *testing.T) {
	installFakeBrowser(t)
	b := New()
	b.SetFrames(42)
	assert.Equal(t, 42, js.Global().Get("pagesimFrames").Int())
	b.ExposeDebug(func() string { return `{"ok":true}` })
	assert.Equal(t, `{"ok":true}`, js.Global().Call("pagesimDebug").String())
}

func TestCopyTextReportsSuccessAndRefusal(t *testing.T) {
	fb := installFakeBrowser(t)
	b := New()
	wait := func() error {
		done := make(chan error, 1)
		b.CopyText("table", func(err error) { done <- err })
		select {
		case err := <-done:
			return err
		case <-time.After(5 * time.Second):
			t.Fatal("no callback")
			return nil
		}
	}
	require.NoError(t, wait())
	assert.Equal(t, []string{"table"}, fb.written)
	fb.refuse = true
	err := wait()
	require.Error(t, err)
	assert.Equal(t, "Write permission denied.", err.Error())
	js.Global().Delete("navigator")
	assert.ErrorContains(t, wait(), "no clipboard")
}

func TestWithoutEvalRefusesToRunWithoutTheRendererScript(t *testing.T) {
	installFakeBrowser(t)
	b := New()
	ran := false
	err := b.WithoutEval(func() error { ran = true; return nil })
	assert.ErrorContains(t, err, "vugu-render.js is not loaded")
	assert.False(t, ran)

	js.Global().Set("vuguRender", js.FuncOf(func(js.Value, []js.Value) any { return nil }))
	orig := js.Global().Get("eval")
	err = b.WithoutEval(func() error {
		ran = true
		// What Vugu's renderer does: eval its helper script.
		r := js.Global().Call("eval", "(function(){ throw new Error('evaluated'); })()")
		assert.True(t, r.IsUndefined(), "the stand-in evaluates nothing")
		return errors.New("inner")
	})
	assert.EqualError(t, err, "inner")
	assert.True(t, ran)
	assert.True(t, js.Global().Get("eval").Equal(orig), "eval is restored")
}

func TestTheBenchmarkIsAPromiseOfItsResult(t *testing.T) {
	installFakeBrowser(t)
	b := New()
	ran := make(chan struct{}, 1)
	b.ExposeBench(func() string { ran <- struct{}{}; return `{"results":[]}` })
	p := js.Global().Call("pagesimBench")
	require.Equal(t, "Promise", p.Get("constructor").Get("name").String())
	got := make(chan string, 1)
	then := js.FuncOf(func(this js.Value, args []js.Value) any { got <- args[0].String(); return nil })
	defer then.Release()
	p.Call("then", then)
	select {
	case v := <-got:
		assert.Equal(t, `{"results":[]}`, v)
	case <-time.After(5 * time.Second):
		t.Fatal("the promise never resolved")
	}
	assert.Len(t, ran, 1)
}

// PrepareCanvas sizes Ebiten's canvas like Ebiten's updateScreenSize and
// creates its WebGL2 context first, without multisampling.
func TestPrepareCanvasSizesTheCanvasAndAsksForNoMultisampling(t *testing.T) {
	g := js.Global()
	t.Cleanup(func() {
		g.Delete("document")
		g.Delete("devicePixelRatio")
	})
	assert.False(t, New().PrepareCanvas(), "no document (Node): nothing to do")

	doc := g.Get("Object").New()
	body := g.Get("Object").New()
	body.Set("clientWidth", 700.5)
	body.Set("clientHeight", 450)
	doc.Set("body", body)
	canvas := g.Get("Object").New()
	canvas.Set("width", 16)
	canvas.Set("height", 16)
	var asked []js.Value
	getContext := js.FuncOf(func(this js.Value, args []js.Value) any {
		asked = append(asked, args...)
		if canvas.Get("width").Int() == 16 {
			return js.Null() // sized after the context: the test fails below
		}
		return g.Get("Object").New()
	})
	defer getContext.Release()
	canvas.Set("getContext", getContext)
	var selectors []string
	query := js.FuncOf(func(this js.Value, args []js.Value) any {
		selectors = append(selectors, args[0].String())
		return canvas
	})
	defer query.Release()
	doc.Set("querySelector", query)
	g.Set("document", doc)
	g.Set("devicePixelRatio", 2)

	require.True(t, New().PrepareCanvas())
	assert.Equal(t, []string{"canvas"}, selectors)
	assert.Equal(t, 1401, canvas.Get("width").Int(), "int(clientWidth x devicePixelRatio), as Ebiten computes it")
	assert.Equal(t, 900, canvas.Get("height").Int())
	require.Len(t, asked, 2)
	assert.Equal(t, "webgl2", asked[0].String())
	attr := asked[1]
	assert.False(t, attr.Get("antialias").Bool())
	for _, k := range []string{"alpha", "premultipliedAlpha", "stencil"} {
		assert.True(t, attr.Get(k).Bool(), "Ebiten's attribute %s", k)
	}

	g.Set("devicePixelRatio", js.Undefined())
	canvas.Set("getContext", js.FuncOf(func(this js.Value, args []js.Value) any { return js.Null() }))
	assert.False(t, New().PrepareCanvas(), "no WebGL2: false, Ebiten reports it")
	assert.Equal(t, 700, canvas.Get("width").Int(), "devicePixelRatio missing: 1")
}

// keyEvent is a keydown as the browser hands it to a listener.
type keyEvent struct {
	v                  js.Value
	prevented, stopped bool
	funcs              []js.Func
}

func newKeyEvent(key string, target js.Value, mods ...string) *keyEvent {
	k := &keyEvent{v: js.Global().Get("Object").New()}
	k.v.Set("key", key)
	k.v.Set("target", target)
	for _, m := range mods {
		k.v.Set(m, true)
	}
	pd := js.FuncOf(func(js.Value, []js.Value) any { k.prevented = true; return nil })
	sp := js.FuncOf(func(js.Value, []js.Value) any { k.stopped = true; return nil })
	k.funcs = append(k.funcs, pd, sp)
	k.v.Set("preventDefault", pd)
	k.v.Set("stopPropagation", sp)
	return k
}

func element(tag, typ string) js.Value {
	el := js.Global().Get("Object").New()
	el.Set("tagName", tag)
	if typ != "" {
		el.Set("type", typ)
	}
	return el
}

func TestKeysWorkWhicheverControlHasTheFocusButATextField(t *testing.T) {
	fb := installFakeBrowser(t)
	b := New()
	got := make(chan string, 10)
	b.OnKey(func(k string) { got <- k })
	require.Len(t, fb.listeners["keydown"], 1)
	press := func(key string, target js.Value, mods ...string) *keyEvent {
		k := newKeyEvent(key, target, mods...)
		fb.listeners["keydown"][0].Invoke(k.v)
		for _, f := range k.funcs {
			defer f.Release()
		}
		return k
	}
	next := func() string {
		select {
		case k := <-got:
			return k
		case <-time.After(5 * time.Second):
			return "(none)"
		}
	}
	for _, c := range []struct {
		key    string
		target js.Value
		want   string
	}{
		{" ", element("BUTTON", "submit"), "space"},
		{" ", element("CANVAS", ""), "space"},
		{".", element("INPUT", "checkbox"), "step"},
		{"p", element("SELECT", ""), "present"},
		{"]", element("BODY", ""), "faster"},
		{"ArrowLeft", element("CANVAS", ""), "left"},
	} {
		k := press(c.key, c.target)
		assert.Equal(t, c.want, next(), "%q on %s", c.key, c.target.Get("tagName"))
		assert.True(t, k.prevented && k.stopped, "the page takes %q from the control", c.key)
	}
	for _, c := range []struct {
		key    string
		target js.Value
		mods   []string
	}{
		{" ", element("INPUT", "text"), nil},
		{"p", element("TEXTAREA", ""), nil},
		{".", element("INPUT", ""), nil},
		{"ArrowDown", element("SELECT", ""), nil},
		{"=", element("BODY", ""), []string{"ctrlKey"}},
		{"x", element("BODY", ""), nil},
	} {
		k := press(c.key, c.target, c.mods...)
		assert.False(t, k.prevented, "%q on %s %v is not the page's", c.key, c.target.Get("tagName"), c.mods)
	}
	select {
	case k := <-got:
		t.Fatalf("a key reached the page that should not have: %s", k)
	case <-time.After(100 * time.Millisecond):
	}
}

func TestTheViewModesAreClassesOfTheRootAndResizeTheCanvas(t *testing.T) {
	installFakeBrowser(t)
	g := js.Global()
	classes := map[string]bool{}
	var fns []js.Func
	fn := func(f func(args []js.Value) any) js.Func {
		jf := js.FuncOf(func(this js.Value, args []js.Value) any { return f(args) })
		fns = append(fns, jf)
		return jf
	}
	defer func() {
		for _, f := range fns {
			f.Release()
		}
		g.Delete("document")
		g.Delete("dispatchEvent")
		g.Delete("Event")
	}()
	cl := g.Get("Object").New()
	cl.Set("contains", fn(func(a []js.Value) any { return classes[a[0].String()] }))
	cl.Set("toggle", fn(func(a []js.Value) any { classes[a[0].String()] = a[1].Bool(); return nil }))
	root := g.Get("Object").New()
	root.Set("classList", cl)
	doc := g.Get("Object").New()
	doc.Set("documentElement", root)
	g.Set("document", doc)
	resizes := 0
	g.Set("dispatchEvent", fn(func(a []js.Value) any { resizes++; return true }))
	g.Set("Event", fn(func(a []js.Value) any { return nil }))
	b := New()
	b.SetMode(true, false)
	assert.Equal(t, map[string]bool{"present": true}, classes)
	assert.Equal(t, 1, resizes)
	b.SetMode(true, false)
	assert.Equal(t, 1, resizes, "nothing changed: no resize")
	b.SetMode(false, true)
	assert.Equal(t, map[string]bool{"present": false, "embed": true}, classes)
	assert.Equal(t, 2, resizes)
}
