//go:build js && wasm

package panel

import (
	"time"

	"github.com/vugu/vugu"
	"github.com/vugu/vugu/domrender"

	"github.com/pagesim/pagesim/ui/app"
)

// EvalGuard runs f with the page's eval replaced (see
// jsbridge.Bridge.WithoutEval); Vugu's renderer needs it under the page's
// Content-Security-Policy.
type EvalGuard func(f func() error) error

// Mount renders the panel into the element matching selector and keeps it
// in sync with the backend's snapshots. It returns only if the renderer
// cannot start; run it on its own goroutine.
// onRender, if not nil, is told how long each render took. sr runs the
// Script mode's scripts (nil: no Script mode) and sh gives it the browser.
func Mount(selector string, b Backend, h Host, sr *app.ScriptRunner, sh ScriptHost, guard EvalGuard, onRender func(time.Duration)) error {
	var renderer *domrender.JSRenderer
	err := guard(func() error {
		var err error
		renderer, err = domrender.New(selector)
		return err
	})
	if err != nil {
		return err
	}
	defer renderer.Release()
	env, err := vugu.NewBuildEnv(renderer.EventEnv())
	if err != nil {
		return err
	}
	root := &Root{Backend: b, Host: h, Snap: b.Snapshot(), Script: sr, ScriptHost: sh}
	ee := renderer.EventEnv()
	go func() {
		for range b.Updated() {
			s := b.Snapshot()
			ee.Lock()
			root.Snap = s
			ee.UnlockRender()
		}
	}()
	if sr != nil {
		go func() {
			for range sr.Updated() {
				ee.Lock()
				ee.UnlockRender()
			}
		}()
	}
	for ok := true; ok; ok = renderer.EventWait() {
		start := time.Now()
		if err := renderer.Render(env.RunBuild(root)); err != nil {
			return err
		}
		if onRender != nil {
			onRender(time.Since(start))
		}
	}
	return nil
}
