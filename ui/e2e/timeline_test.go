//go:build browser && !(js && wasm)

package e2e

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/profiler"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pagesim/pagesim/engine/sim"
	"github.com/pagesim/pagesim/ui/app"
)

// timelineSmall is thp-thisnode small enough to play in a test (its three
// default variants; its guests stall from the first tenth of a second and
// it ends at 368 ms).
const timelineSmall = "v1/thp-thisnode?seed=5&guest_gb=30,42&scale=0.01"

// track is the timeline's track as the page reports it: in CSS px of the
// viewport, and the time it spans.
type track struct {
	x, y, w, h  float64 // the canvas
	left, width float64
	spanNS      int64
	markers     [][3]int64 // [variant, kind, t ns]
}

func readTrack(p *Page) track {
	p.t.Helper()
	// The strip as drawn for the canvas's present size.
	p.WaitJS(`(() => { const c = document.getElementById("timeline-canvas"); return c && Math.abs(c.getBoundingClientRect().width - c.dataset.left - c.dataset.width - 12) < 1; })()`)
	s := Eval[string](p, `(() => { const c = document.getElementById("timeline-canvas"); const r = c.getBoundingClientRect();
		return JSON.stringify({x: r.left, y: r.top, w: r.width, h: r.height, left: +c.dataset.left, width: +c.dataset.width, span: c.dataset.span, markers: c.dataset.markers}); })()`)
	var raw struct {
		X, Y, W, H, Left, Width float64
		Span, Markers           string
	}
	require.NoError(p.t, json.Unmarshal([]byte(s), &raw))
	tr := track{x: raw.X, y: raw.Y, w: raw.W, h: raw.H, left: raw.Left, width: raw.Width}
	fmt.Sscan(raw.Span, &tr.spanNS)
	require.NoError(p.t, json.Unmarshal([]byte(raw.Markers), &tr.markers))
	return tr
}

// at is the viewport point of time tNS on the track.
func (tr track) at(tNS int64) (float64, float64) {
	return tr.x + tr.left + tr.width*float64(tNS)/float64(tr.spanNS), tr.y + tr.h/3
}

// stalls are the times of the track's allocation stall markers, sorted.
func (tr track) stalls() []int64 {
	var out []int64
	for _, m := range tr.markers {
		if m[1] == int64(app.MarkStall) && !slices.Contains(out, m[2]) {
			out = append(out, m[2])
		}
	}
	slices.Sort(out)
	return out
}

// timeOf is the time a debug report shows.
func timeOf(d Debug) sim.Time { return sim.Time(d.NowNS) }

func mouse(p *Page, typ input.DispatchMouseEventType, x, y float64) {
	p.t.Helper()
	// The left button, held (buttons 1) while it moves.
	opt := []chromedp.MouseOption{chromedp.ButtonLeft, func(e *input.DispatchMouseEventParams) {
		e.ClickCount, e.Buttons = 1, 1
		if typ == input.DispatchMouseEventTypeMouseReleased {
			e.Buttons = 0
		}
	}}
	require.NoError(p.t, chromedp.Do(p.ctx, chromedp.MouseEvent(typ, x, y, opt...)))
}

// seen is what a page shows at a time: its link, status line, result
// table and live numbers.
func seen(p *Page) []string {
	p.t.Helper()
	d := p.WaitSettled()
	return []string{d.Link, p.Text("status"), p.Text("results"), p.Text("live")}
}

// The timeline under the maps: dragging it back and forward, `,`, n and N,
// and a link's t each put the page where a fresh page opened at that
// time is (the same link, status line, table and live numbers), every
// variant at that time, and paused stays paused.
func TestTheTimelineScrubsToWhatAFreshPageShows(t *testing.T) {
	p := OpenWithin(t, timelineSmall+"&t=0.3", 6*time.Minute)
	d := p.WaitSettled()
	require.Equal(t, int64(300e6), d.NowNS)
	gen := d.Gen
	tr := readTrack(p)
	require.NotEmpty(t, tr.stalls(), "the stalls are marked")

	// A fresh page is opened once per link: the same link gives the same
	// page (the page is deterministic; TestACopiedLinkOpensTheSameTableInAFreshBrowser),
	// and two checks may land on the same time (the click forward and
	// the previous stall both land on 0.28 s on this seed). A page load
	// is most of this test's time.
	freshSeen := map[string][]string{}
	fresh := func(link string) []string {
		if s, ok := freshSeen[link]; ok {
			return s
		}
		q := Open(t, link)
		defer q.Close()
		freshSeen[link] = seen(q)
		return freshSeen[link]
	}
	check := func(what string) {
		t.Helper()
		d := p.WaitSettled()
		assert.False(t, d.Playing, "%s: paused stays paused", what)
		got := seen(p)
		assert.Contains(t, got[0], "t="+app.FormatSeconds(timeOf(d)), what)
		assert.Equal(t, fresh(got[0]), got, what)
	}

	// Drag from 0.25 s back to about 0.1 s, through 0.2 s.
	x, y := tr.at(250e6)
	mouse(p, input.DispatchMouseEventTypeMousePressed, x, y)
	x, y = tr.at(200e6)
	mouse(p, input.DispatchMouseEventTypeMouseMoved, x, y)
	x, y = tr.at(100e6)
	mouse(p, input.DispatchMouseEventTypeMouseMoved, x, y)
	mouse(p, input.DispatchMouseEventTypeMouseReleased, x, y)
	p.WaitJS(`Math.abs(JSON.parse(window.pagesimDebug()).nowNs - 100e6) < 2e6`)
	check("dragged back")
	assert.Equal(t, gen, p.Debug().Gen, "no restart")

	// Forward again, within the time reached (the track spans it until
	// the run's end is known; a click within 5 px of a marker lands on
	// the marker).
	tr = readTrack(p)
	require.Equal(t, int64(300e6), tr.spanNS)
	x, y = tr.at(280e6)
	mouse(p, input.DispatchMouseEventTypeMousePressed, x, y)
	mouse(p, input.DispatchMouseEventTypeMouseReleased, x, y)
	px := float64(tr.spanNS) / tr.width
	p.WaitJS(fmt.Sprintf(`Math.abs(JSON.parse(window.pagesimDebug()).nowNs - 280e6) < %f`, 6*px))
	check("clicked forward")

	// `,` steps back by the step size.
	before := p.WaitSettled().NowNS
	// At x1 (the page's default speed) a step is a 60 Hz frame: 16 ms.
	step := int64(16e6)
	p.Press(',')
	p.WaitJS(fmt.Sprintf(`JSON.parse(window.pagesimDebug()).nowNs == %d`, before-step))
	check("one step back")

	// n and N: the next and previous stall.
	tr = readTrack(p)
	st := tr.stalls()
	now := p.WaitSettled().NowNS
	i := sort.Search(len(st), func(i int) bool { return st[i] > now })
	require.Less(t, i, len(st), "a stall after %d", now)
	p.Press('n')
	p.WaitJS(fmt.Sprintf(`JSON.parse(window.pagesimDebug()).nowNs == %d`, st[i]))
	check("the next stall")
	p.Press('N')
	require.Positive(t, i)
	p.WaitJS(fmt.Sprintf(`JSON.parse(window.pagesimDebug()).nowNs == %d`, st[i-1]))
	check("the previous stall")

	// A click on a marker jumps to it.
	tr = readTrack(p)
	x, y = tr.at(st[0])
	mouse(p, input.DispatchMouseEventTypeMousePressed, x+2, y)
	mouse(p, input.DispatchMouseEventTypeMouseReleased, x+2, y)
	p.WaitJS(fmt.Sprintf(`JSON.parse(window.pagesimDebug()).nowNs == %d`, st[0]))

	// The link's t: edited in the address bar, the page goes there.
	link := strings.Replace(p.WaitSettled().Link, "t="+app.FormatSeconds(timeOf(p.Debug())), "t=0.042", 1)
	Eval[bool](p, fmt.Sprintf(`(() => { location.hash = %q; return true; })()`, link))
	p.WaitJS(`JSON.parse(window.pagesimDebug()).nowNs == 42e6`)
	check("the link's t")
	assert.Equal(t, gen, p.Debug().Gen, "no restart")
}

// TestTheTimelinesJumpAtEachScale plays thp-thisnode's default run (seed
// 1, its default variants) to its end at the top speed at each scale of
// PAGESIM_SCALES (default: the page's), then clicks the timeline at 15
// times drawn at random and logs how long each jump took to show (from
// the click until the page has settled at the new time: restore every
// variant's checkpoint before it, replay, redraw), their median and
// their maximum, and the part of each spent restoring and replaying
// (seekMs, the rest is the frames that draw it): the figures of
// docs/PERFORMANCE.md, "The page's timeline". A measurement: it runs
// only with PAGESIM_MEASURE=1.
func TestTheTimelinesJumpAtEachScale(t *testing.T) {
	measurement(t)
	scales := os.Getenv("PAGESIM_SCALES")
	if scales == "" {
		cat, err := app.DefaultCatalog()
		require.NoError(t, err)
		s, ok := cat.Lookup("thp-thisnode")
		require.True(t, ok)
		scales = s.PageParams["scale"]
	}
	for _, sc := range strings.Split(scales, ",") {
		t.Run(sc, func(t *testing.T) {
			p := OpenWithin(t, "v1/thp-thisnode?seed=1&x=1000&scale="+sc, 20*time.Minute)
			p.t = t
			p.WaitSettled()
			p.Click("play")
			p.WaitJSWithin(`JSON.parse(window.pagesimDebug()).ended`, 15*time.Minute)
			p.WaitSettled()
			tr := readTrack(p)
			rnd := rand.New(rand.NewSource(1))
			var ms, seek []float64
			var frames []int
			// PAGESIM_JUMP_PROFILE=file.cpuprofile writes the page's CPU
			// profile over the jumps (Chrome's sampling profiler; open it
			// in DevTools' Performance panel).
			prof := os.Getenv("PAGESIM_JUMP_PROFILE")
			if prof != "" {
				_, err := chromedp.Call(p.ctx, profiler.Enable, cdp.Empty{})
				require.NoError(t, err)
				_, err = chromedp.Call(p.ctx, profiler.SetSamplingInterval, profiler.SetSamplingIntervalParams{Interval: 200})
				require.NoError(t, err)
				_, err = chromedp.Call(p.ctx, profiler.Start, cdp.Empty{})
				require.NoError(t, err)
			}
			for range 15 {
				d0 := p.Debug()
				before := d0.NowNS
				// A click within 5 px of a marker lands on it: a click
				// that near the time shown may land on the marker the
				// page already shows, and nothing moves (two clicks 1 ms
				// apart both went to the marker at 2.760 s and the wait
				// below timed out); such a time is drawn again.
				bx, _ := tr.at(before)
				x, y := tr.at(rnd.Int63n(tr.spanNS))
				for math.Abs(x-bx) <= 6 {
					x, y = tr.at(rnd.Int63n(tr.spanNS))
				}
				t0 := Eval[float64](p, `performance.now()`)
				mouse(p, input.DispatchMouseEventTypeMousePressed, x, y)
				mouse(p, input.DispatchMouseEventTypeMouseReleased, x, y)
				// The time is read in the animation frame that first sees
				// the page settled at the new time, not after a round trip.
				p.WaitJSWithin(fmt.Sprintf(`(() => { const d = JSON.parse(window.pagesimDebug()); const ok = d.settled && d.nowNs != %d; if (ok) window.pagesimJumpShown = performance.now(); return ok; })()`, before), 2*time.Minute)
				ms = append(ms, Eval[float64](p, `window.pagesimJumpShown`)-t0)
				d1 := p.Debug()
				seek = append(seek, d1.SeekMs)
				frames = append(frames, d1.Frames-d0.Frames)
			}
			if prof != "" {
				pr, err := chromedp.Call(p.ctx, profiler.Stop, cdp.Empty{})
				require.NoError(t, err)
				b, err := json.Marshal(pr.Profile)
				require.NoError(t, err)
				require.NoError(t, os.WriteFile(prof, b, 0o644))
			}
			med := func(x []float64) float64 { y := slices.Clone(x); slices.Sort(y); return y[len(y)/2] }
			t.Logf("scale %s: %d jumps over %.3f simulated s, median %.0f ms, max %.0f ms (each: %.0f); restoring and replaying them (seekMs): median %.0f ms (each: %.0f); frames drawn from the click until settled: %d",
				sc, len(ms), float64(tr.spanNS)/1e9, med(ms), slices.Max(ms), ms, med(seek), seek, frames)
		})
	}
}
