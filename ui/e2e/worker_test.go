//go:build browser && !(js && wasm)

package e2e

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pagesim/pagesim/engine/sim"
	"github.com/pagesim/pagesim/ui/app"
)

// A link whose time is past the run's end is caught up by the engine
// workers (off the main thread, the run sent back as bytes, with the
// checkpoints they took on the way: the page's timeline has them, so
// going back restores the nearest one), and the page then shows the
// table pagesim run prints, byte for byte.
func TestALinksTimeReachedByTheEngineWorkersShowsTheTableOfANativeRun(t *testing.T) {
	link := smallLink(t, "thp-thisnode") + "&t=1000"
	cat, err := app.DefaultCatalog()
	require.NoError(t, err)
	st, err := cat.Decode(link)
	require.NoError(t, err)
	in, _ := cat.Lookup("thp-thisnode")
	native := runCommands(app.CommandArgs(in, st)) // while the page runs
	p := OpenWithin(t, link, 6*time.Minute)
	p.WaitJSWithin(`!JSON.parse(window.pagesimDebug()).restoring`, 5*time.Minute)
	d := p.WaitSettled()
	assert.Equal(t, "workers", d.CaughtUpBy, "the workers caught up, not the main thread")
	assert.True(t, d.Ended)
	assert.Greater(t, d.Checkpoints, 2, "the workers' checkpoints, besides the start's")
	p.WaitJS(`document.getElementById("results-state").textContent.startsWith("Final")`)
	st, err = cat.Decode(d.Link)
	require.NoError(t, err)
	native.check(t, p, app.CommandArgs(in, st))
}

// A browser without Web Workers gets the same page: the main thread
// catches up to the link's time.
func TestWithoutWebWorkersTheMainThreadCatchesUp(t *testing.T) {
	p := OpenBlank(t)
	_, err := chromedp.Call(p.ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: "delete self.Worker;"})
	require.NoError(t, err)
	p.Navigate(server.URL + "/#" + smallLink(t, "thp-thisnode") + "&t=0.3")
	p.WaitFrames(3)
	p.WaitJS(`document.getElementById("status") !== null`)
	require.False(t, Eval[bool](p, `"Worker" in self`))
	p.WaitJSWithin(`!JSON.parse(window.pagesimDebug()).restoring`, 3*time.Minute)
	d := p.WaitSettled()
	assert.Empty(t, d.CaughtUpBy, "no workers: the main thread caught up")
	assert.Equal(t, int64(300*sim.Millisecond), d.NowNS)
}

// TestCatchingUpToALinksTimeAtScale1 opens thp-thisnode at scale 1 at
// t=100 with two variants (three are over the page's memory at scale 1;
// PAGESIM_LINK names another link) and logs the wall time from
// navigation until the runs have caught up, how (the workers or the main
// thread), the median CPU time of the main thread's frames (its Go work
// and drawing) meanwhile, the longest the main thread spent in one tick
// reading the runs back (readBackMs) and the longest gap between two
// animation frames from the first frames on; then the same simulated work natively in
// this process (each variant's run to the link's time, one after the
// other, and the ratio): the figures of docs/PERFORMANCE.md, "The engine
// in Web Workers".
func TestCatchingUpToALinksTimeAtScale1(t *testing.T) {
	measurement(t)
	link := "v1/thp-thisnode?seed=1&scale=1&v=upstream,only-compact&t=100"
	if l := os.Getenv("PAGESIM_LINK"); l != "" {
		link = l
	}
	start := time.Now()
	p := OpenWithin(t, link, 12*time.Minute)
	opened := time.Since(start)
	// The longest gap between two animation frames from here on: the
	// main thread's longest freeze (the runs are read back in it).
	Eval[bool](p, `(() => { window.pagesimLongestFrame = 0; let last = performance.now(); const f = (t) => { if (t - last > window.pagesimLongestFrame) { window.pagesimLongestFrame = t - last; window.pagesimLongestFrameEnd = t; } last = t; requestAnimationFrame(f); }; requestAnimationFrame(f); return true; })()`)
	// Poll the page until it has caught up, noting when the workers'
	// runs reached the link's time (progress 1): from then on the runs
	// are written, sent and read back.
	var reached time.Duration
	for end := time.Now().Add(10 * time.Minute); ; {
		d := p.Debug()
		if !d.Restoring {
			break
		}
		if d.Progress >= 1 && reached == 0 {
			reached = time.Since(start)
		}
		require.True(t, time.Now().Before(end), "the page did not catch up")
		time.Sleep(100 * time.Millisecond)
	}
	page := time.Since(start)
	d := p.Debug()
	p.WaitFrames(2)
	longest := Eval[float64](p, `window.pagesimLongestFrame`)
	longestEnd := Eval[float64](p, `window.pagesimLongestFrameEnd`) / 1e3
	t.Logf("the page had drawn its first frames %.1f s after navigation; the workers' runs reached the link's time at %.1f s; written, sent and read back by %.1f s (the main thread's longest work in one frame to read them back and take them, readBackMs, %.0f ms; the longest gap between two animation frames meanwhile %.0f ms, ending %.1f s after navigation)",
		opened.Seconds(), reached.Seconds(), page.Seconds(), d.ReadBackMs, longest, longestEnd)
	require.False(t, Eval[bool](p, `document.getElementById("link-error") !== null`), "the page took the link: %s", p.Text("link-error"))
	require.Equal(t, "workers", d.CaughtUpBy)
	t.Logf("%s: caught up to %.3f s in %.1f s wall from navigation (by %q), the main thread's frames' median CPU %.1f ms",
		link, float64(d.NowNS)/1e9, page.Seconds(), d.CaughtUpBy, d.FrameCPUms)
	p.Close()

	cat, err := app.DefaultCatalog()
	require.NoError(t, err)
	st, err := cat.Decode(link)
	require.NoError(t, err)
	s, _ := cat.Lookup(st.Scenario)
	set, err := s.ParseMap(st.Params, st.Knobs)
	require.NoError(t, err)
	start = time.Now()
	for _, v := range st.Variants {
		vs := time.Now()
		r, err := s.NewRun(v, set, st.Seed, 0)
		require.NoError(t, err)
		r.Advance(st.Time, 1<<62)
		t.Logf("natively, %s to %.3f s: %.1f s", v, float64(r.Now())/1e9, time.Since(vs).Seconds())
	}
	native := time.Since(start)
	t.Logf("natively, %s to %.3f s one after the other: %.1f s; the page took %.2fx that",
		strings.Join(st.Variants, ", "), float64(st.Time)/1e9, native.Seconds(), page.Seconds()/native.Seconds())
}
