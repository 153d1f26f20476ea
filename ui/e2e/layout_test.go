//go:build browser && !(js && wasm)

package e2e

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pagesim/pagesim/ui/app"
	"github.com/pagesim/pagesim/ui/mapview"
)

// setWindow resizes the tab's window to w x h CSS pixels at
// devicePixelRatio dpr, as a person resizing the window (or zooming) does,
// and waits until the map has been laid out for it.
func (p *Page) setWindow(w, h int, dpr float64) {
	p.t.Helper()
	_, err := chromedp.Call(p.ctx, emulation.SetDeviceMetricsOverride,
		emulation.SetDeviceMetricsOverrideParams{Width: int64(w), Height: int64(h), DeviceScaleFactor: dpr})
	require.NoError(p.t, err)
	p.WaitJS(fmt.Sprintf(`window.innerWidth === %d && window.devicePixelRatio === %g && (() => {
		const d = JSON.parse(window.pagesimDebug()); return d.scale === %g && d.w === Math.ceil(document.body.clientWidth * %g); })()`, w, dpr, dpr, dpr))
}

// panelOverflow lists the panel's elements whose right edge is beyond
// the panel's, or whose content spills out of them (a grid cell's long
// word), as tag#id.class and by how many pixels.
const panelOverflow = `(() => { const p = document.getElementById("panel"), right = p.getBoundingClientRect().left + p.clientWidth;
	return [...p.querySelectorAll("*")].filter(e => e.getClientRects().length > 0 && (e.getBoundingClientRect().right > right + 0.5 ||
			getComputedStyle(e).overflowX === "visible" && e.scrollWidth > e.clientWidth + 1 && e.clientWidth > 0 && getComputedStyle(e).display !== "inline"))
		.map(e => e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") + (e.className && typeof e.className === "string" ? "." + e.className.replace(/ /g, ".") : "") +
			" +" + Math.round(e.getBoundingClientRect().right - right)); })()`

// overlap reports whether two labels' boxes share a pixel.
func overlap(a, b mapview.Label) bool {
	return a.X < b.X+b.W && b.X < a.X+a.W && a.Y < b.Y+b.H && b.Y < a.Y+a.H
}

// From a 960-pixel laptop to a 2560-pixel monitor, with one to four
// variants side by side, in the browser: the canvas cuts no text (the
// titles, each guest's result, the charts and their totals), every label
// lies inside the canvas and inside its variant's column, no two labels
// overlap, and the panel beside the map needs no horizontal scrolling.
// (ui/mapview's TestNoTextIsCutFromPhoneToWideMonitor checks the same
// layout natively, with more sizes.)
func TestTheMapAndPanelFitFrom960To2560PixelsWideWithOneToFourVariants(t *testing.T) {
	variants := []string{"upstream", "only-compact", "drop-thisnode", "modern"}
	windows := [][2]int{{960, 600}, {1280, 720}, {1920, 1080}, {2560, 1440}}
	link := func(n int) string {
		return "v1/thp-thisnode?seed=1&v=" + strings.Join(variants[:n], ",") + "&scale=0.01&t=0.2"
	}
	p := OpenAt(t, link(1), windows[0][0], windows[0][1], 1)
	for n := 1; n <= 4; n++ {
		if n > 1 {
			p.Goto(link(n))
		}
		for _, w := range windows {
			t.Run(fmt.Sprintf("%d variants at %dx%d", n, w[0], w[1]), func(t *testing.T) {
				p.t = t
				p.setWindow(w[0], w[1], 1)
				d := p.WaitSettled()
				require.Equal(t, variants[:n], d.Columns)
				assert.Empty(t, d.Clipped, "no text is cut")
				colW := (d.Layout.ColW + 8) * d.Scale
				for i, l := range d.Labels {
					assert.True(t, l.X >= 0 && l.Y >= 0 && l.X+l.W <= d.W && l.Y+l.H <= d.H, "%q (%+v) lies inside the %dx%d canvas", l.Text, l, d.W, d.H)
					c := column(d, l)
					assert.LessOrEqual(t, float64(l.X+l.W), float64(c+1)*colW, "%q stays in its column", l.Text)
					for _, m := range d.Labels[i+1:] {
						assert.False(t, overlap(l, m), "%q (%+v) and %q (%+v) overlap", l.Text, l, m.Text, m)
					}
				}
				for c := range n {
					found := false
					for _, l := range d.Labels {
						found = found || column(d, l) == c && strings.HasPrefix(l.Text, "30 GB: ")
					}
					assert.True(t, found, "%s's column shows the first guest's result", variants[c])
				}
				assert.Zero(t, Eval[int](p, `(() => { const e = document.getElementById("panel"); return e.scrollWidth - e.clientWidth; })()`),
					"the panel fits its width; these stick out: %v", Eval[[]string](p, panelOverflow))
			})
		}
	}
	p.t = t
}

// Every scenario the page lists, as the page opens it (its PageParams,
// its default variants: nofrag-watermark's five), lays out from 960 to
// 2560 pixels wide without a cut label or chart and without a panel
// wider than its column: the columns, titles and charts are each
// scenario's own, so thp-thisnode's test above does not stand for them.
func TestEveryScenarioOpensUncutFrom960To2560PixelsWide(t *testing.T) {
	cat, err := app.DefaultCatalog()
	require.NoError(t, err)
	var p *Page
	for _, s := range cat.Scenarios() {
		link := cat.Encode(cat.Opening(s.ID))
		if p == nil {
			// 90 s for each scenario: the tab's deadline covers them
			// all, and a loaded machine boots one in a minute.
			p = OpenAtWithin(t, link, 960, 600, 1, time.Duration(len(cat.Scenarios()))*90*time.Second)
		} else {
			p.t = t
			p.setWindow(960, 600, 1)
			p.Goto(link)
		}
		// The two ends of the range (the thp-thisnode test above
		// walks the sizes between).
		for _, w := range [][2]int{{960, 600}, {2560, 1440}} {
			t.Run(fmt.Sprintf("%s at %dx%d", s.ID, w[0], w[1]), func(t *testing.T) {
				p.t = t
				p.setWindow(w[0], w[1], 1)
				d := p.WaitSettled()
				assert.Equal(t, link, d.Link)
				assert.Len(t, d.Columns, len(s.DefaultVariants()))
				assert.Empty(t, d.Clipped, "no text is cut")
				for i, l := range d.Labels {
					for _, m := range d.Labels[i+1:] {
						assert.False(t, overlap(l, m), "%q (%+v) and %q (%+v) overlap", l.Text, l, m.Text, m)
					}
				}
				assert.Zero(t, Eval[int](p, `(() => { const e = document.getElementById("panel"); return e.scrollWidth - e.clientWidth; })()`),
					"the panel fits its width; these stick out: %v", Eval[[]string](p, panelOverflow))
			})
		}
	}
	p.t = t
}

// The small things a first visit tripped on, as the page shows them:
// every time is printed with one rounding (the status line, the link's t,
// the canvas's clocks), a stall under a microsecond is not "0.000000 s",
// and a flag bit the kernel prints in hex is named beside it.
func TestTimesStallsAndFlagBitsReadTheSameEverywhere(t *testing.T) {
	p := Open(t, "v1/thp-thisnode?seed=1&scale=0.01&t=0.2")
	d := p.WaitSettled()
	assert.Contains(t, d.Link, "&t=0.2")
	status := p.Text("status")
	require.Regexp(t, `^t = 0\.200 s( of \d+\.\d{3} s)? · paused`, status, "the shown t and the link's t are the same time, printed as everywhere")
	for _, l := range d.Labels {
		if strings.HasPrefix(l.Text, "t = ") {
			assert.Equal(t, "t = 0.200 s", l.Text, "the canvas's clock")
		}
	}
	hexBit := regexp.MustCompile(`\|0x[0-9a-f]+`)
	checkNamed := func(what, text string) int {
		n := 0
		for _, loc := range hexBit.FindAllStringIndex(text, -1) {
			assert.True(t, strings.HasPrefix(text[loc[1]:], " ("), "%s: %q is named", what, text[loc[0]:loc[1]])
			n++
		}
		return n
	}
	stalled := 0
	for _, v := range d.Columns {
		stall := p.Text("stall-" + v)
		if stall == "(no allocation has stalled yet)" {
			continue
		}
		stalled++
		assert.NotContains(t, stall, "0.000000 s", v)
		assert.Regexp(t, `\(stalled \d+(\.\d+)? (ns|us|ms|s)\): `, stall, v)
		checkNamed("the stall of "+v, stall)
	}
	assert.Positive(t, stalled, "upstream stalled by 0.2 s")
	// only-compact's own flag, ___GFP_ONLY_COMPACT, which %pGg prints in
	// hex, in its trace.
	Eval[bool](p, `(() => { const e = document.getElementById("trace-variant"); e.value = "1"; e.dispatchEvent(new Event("change", {bubbles: true})); return true; })()`)
	p.WaitJS(`document.getElementById("trace").textContent.includes("0x1000000")`)
	trace := p.Text("trace")
	assert.Positive(t, checkNamed("only-compact's trace", trace))
	assert.Contains(t, trace, "|0x1000000 (___GFP_ONLY_COMPACT)")

	// At the end of a run: "t = 3.000 s of 3.000 s", not "of 3.00000021
	// s", and the link's t is the shown one.
	p.Goto("v1/playground?mem=64&seed=5&x=1000&duration=3")
	p.Click("play")
	p.WaitJS(`JSON.parse(window.pagesimDebug()).ended`)
	d = p.WaitSettled()
	p.WaitJS(`document.getElementById("status").textContent.includes("finished")`)
	m := regexp.MustCompile(`^t = (\d+\.\d{3}) s of (\d+\.\d{3}) s · finished`).FindStringSubmatch(p.Text("status"))
	require.NotNil(t, m, p.Text("status"))
	assert.Equal(t, m[1], m[2], "the end is the length")
	lt := regexp.MustCompile(`[?&]t=([0-9.]+)`).FindStringSubmatch(d.Link)
	require.NotNil(t, lt, d.Link)
	assert.Equal(t, strings.TrimRight(strings.TrimRight(m[1], "0"), "."), lt[1], "the link's t is the shown t")
}
