//go:build browser && !(js && wasm)

package e2e

// The page's three audiences, one browser test each (the fourth is the
// embed): the person who shares a link, the person who reads it, and the
// person who presents it.

import (
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pagesim/pagesim/ui/mapview"
)

// The one who shares: "Copy link" gives the whole URL, and pasted into a
// browser that has never seen the page (a new context: no cache, no
// storage) it opens the same run, to the same table.
func TestACopiedLinkOpensTheSameTableInAFreshBrowser(t *testing.T) {
	p := Open(t, "v1/playground?mem=64&seed=5&x=5")
	p.SetField("param-fill", "90")
	p.WaitJS(`JSON.parse(window.pagesimDebug()).link.includes("fill=90")`)
	p.Click("play")
	p.WaitJS(`JSON.parse(window.pagesimDebug()).nowNs > 1.5e9`)
	p.Click("play")
	d := p.WaitSettled()
	p.GrantClipboard()
	p.Click("copy-link")
	p.WaitJS(`document.querySelector("#copy-link ~ .copied").textContent === "Copied."`)
	copied := Eval[string](p, `navigator.clipboard.readText()`)
	assert.Equal(t, server.URL+"/#"+d.Link, copied, "the whole URL, not a bare fragment")
	assert.Equal(t, copied, Eval[string](p, `document.getElementById("permalink").value`))
	assert.Contains(t, copied, "fill=90")
	table := p.Text("results")
	require.Contains(t, table, "allocations")

	q := OpenURL(t, copied)
	e := q.WaitSettled()
	assert.Equal(t, d.NowNS, e.NowNS)
	assert.Equal(t, d.Link, e.Link)
	assert.Equal(t, table, q.Text("results"), "the same table, byte for byte")
	assert.Equal(t, p.Text("status"), q.Text("status"))
}

// Back and Forward walk through the user's own changes; playing adds no
// entry.
func TestBackAndForwardWalkTheUsersChanges(t *testing.T) {
	p := Open(t, "v1/playground?mem=64&x=10")
	n0 := Eval[int](p, `history.length`)
	p.SetField("param-fill", "90")
	p.WaitJS(`location.hash.includes("fill=90")`)
	p.SetField("seed", "7")
	p.WaitJS(`location.hash.includes("seed=7")`)
	p.Click("play")
	p.WaitJS(`JSON.parse(window.pagesimDebug()).nowNs > 1.2e9`)
	p.WaitJS(`location.hash.includes("&t=")`)
	p.Click("play")
	p.WaitSettled()
	assert.Equal(t, n0+2, Eval[int](p, `history.length`), "two changes, two entries; playing none")

	back := func(want string) {
		t.Helper()
		gen := p.Debug().Gen
		Eval[bool](p, `(() => { history.back(); return true; })()`)
		p.WaitJS(fmt.Sprintf(`JSON.parse(window.pagesimDebug()).gen > %d`, gen))
		p.WaitSettled()
		assert.Equal(t, want, Eval[string](p, `document.getElementById("seed").value`)+"/"+Eval[string](p, `document.getElementById("param-fill").value`))
	}
	back("1/90")
	back("1/85")
	gen := p.Debug().Gen
	Eval[bool](p, `(() => { history.forward(); return true; })()`)
	p.WaitJS(fmt.Sprintf(`JSON.parse(window.pagesimDebug()).gen > %d`, gen))
	p.WaitJS(`document.getElementById("param-fill").value === "90"`)
	assert.True(t, strings.HasPrefix(p.Debug().Link, "v1/playground?seed=1&x=10&mem=64&fill=90"), p.Debug().Link)
}

// The panel links to the patch thread, the scenario's fidelity notes and
// its source, each in a new tab; showing them fetches nothing (the
// harness fails the test on a request that leaves localhost).
func TestThePanelLinksOutWithoutARequest(t *testing.T) {
	p := Open(t, "v1/thp-thisnode?seed=1&scale=0.03")
	links := Eval[[]string](p, `[...document.querySelectorAll("#links a")].map(a => a.target + " " + a.rel + " " + a.href)`)
	require.Len(t, links, 3)
	assert.Equal(t, "_blank noopener noreferrer https://lore.kernel.org/linux-mm/20180820032204.9591-3-aarcange@redhat.com/", links[0])
	assert.True(t, strings.HasSuffix(links[1], "/docs/FIDELITY.md#thp-thisnode"), links[1])
	assert.True(t, strings.HasSuffix(links[2], "/engine/scenario/thp_thisnode.go"), links[2])

	// A scenario with three threads links to each, then the same two.
	p.Goto("v1/nofrag-watermark?seed=1&scale=0.02")
	p.WaitJS(`document.querySelectorAll("#links a").length === 5`)
	links = Eval[[]string](p, `[...document.querySelectorAll("#links a")].map(a => a.target + " " + a.rel + " " + a.href)`)
	assert.Equal(t, "_blank noopener noreferrer https://lore.kernel.org/all/4aa14b41-9b89-494c-8825-55fffd5a541c@arm.com/", links[1])
	assert.True(t, strings.HasSuffix(links[3], "/docs/FIDELITY.md#nofrag-watermark"), links[3])
	assert.True(t, strings.HasSuffix(links[4], "/engine/scenario/nofrag_watermark.go"), links[4])
}

// resultCells reads the result table's rows by their label ("30 GB",
// "allocstall_movable"; the first table that has the label wins): the
// cells, one per variant, in the header's order.
func resultCells(table string) (variants []string, rows map[string][]string) {
	rows = map[string][]string{}
	for _, line := range strings.Split(table, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) > 1 && (f[0] == "guest" || f[0] == "counter") && variants == nil:
			variants = f[1:]
		case len(f) > 2 && f[1] == "GB":
			if _, ok := rows[f[0]+" GB"]; !ok {
				rows[f[0]+" GB"] = f[2:]
			}
		case len(f) > 1:
			if _, ok := rows[f[0]]; !ok {
				rows[f[0]] = f[1:]
			}
		}
	}
	return variants, rows
}

// column is the variant column a canvas label sits in.
func column(d Debug, l mapview.Label) int {
	return int(float64(l.X) / d.Scale / (d.Layout.ColW + 8))
}

// The one who reads: at the end of thp-thisnode the canvas alone tells
// the story (under each variant's name, every guest's GB/s in large type,
// the table's numbers), and the charts show the stalls the table counts
// (allocstall_movable, not compact_stall, which stays 0 there).
func TestTheCanvasAloneShowsEachGuestsResultAndTheStallsTheTableCounts(t *testing.T) {
	p := Open(t, "v1/thp-thisnode?seed=1&scale=0.01&x=1000")
	p.Click("play")
	p.WaitJS(`JSON.parse(window.pagesimDebug()).ended`)
	d := p.WaitSettled()
	p.WaitJS(`document.getElementById("results-state").textContent.startsWith("Final")`)
	variants, rows := resultCells(p.Text("results"))
	require.Equal(t, []string{"upstream", "only-compact", "drop-thisnode"}, variants)
	require.Equal(t, variants, d.Columns)
	find := func(text string, col int) (mapview.Label, bool) {
		for _, l := range d.Labels {
			if l.Text == text && column(d, l) == col {
				return l, true
			}
		}
		return mapview.Label{}, false
	}
	for i, v := range variants {
		for _, g := range []string{"30", "34", "38", "42"} {
			want := fmt.Sprintf("%s GB: %s GB/s", g, rows[g+" GB"][i])
			l, ok := find(want, i)
			if assert.True(t, ok, "%s's column shows %q", v, want) {
				assert.GreaterOrEqual(t, l.Size, 1.5*d.TextPx, "%q is in large type", want)
			}
		}
		stalls := rows["allocstall_movable"][i]
		_, ok := find("allocstall_movable "+stalls, i)
		assert.True(t, ok, "%s's chart is labelled with the table's allocstall_movable (%s)", v, stalls)
	}
	assert.NotEqual(t, "0", rows["allocstall_movable"][0], "upstream stalls")
	assert.Equal(t, "0", rows["compact_stall"][0], "and counts no compact_stall")
	assert.Empty(t, d.Clipped)
}

// panelTextPx is the smallest computed font size of the panel's text
// that is on screen, in CSS pixels.
const panelTextPx = `Math.min(...[...document.querySelectorAll("#panel *")].filter(e => e.getClientRects().length > 0 &&
	[...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim() !== "")).map(e => parseFloat(getComputedStyle(e).fontSize)))`

// The one who presents: in presentation mode at 1280x720 the map is laid
// out the same at devicePixelRatio 1 and 2 (only sharper), no text on the
// canvas or in the bar is under 16 CSS px, nothing is cut, the colours
// are the projector's, and the keys still work.
func TestPresentationModeReadsFromTheBackOfTheRoomAtEveryPixelDensity(t *testing.T) {
	// By 0.2 s the first guest of each variant has been mapped (upstream
	// ends it at 0.102 s): its result is on the canvas in large type.
	const link = "v1/thp-thisnode?seed=1&scale=0.01&t=0.2&present"
	var layouts []mapview.Layout
	var p *Page
	for _, dpr := range []float64{1, 2} {
		p = OpenAt(t, link, 1280, 720, dpr)
		p.WaitJS(`document.documentElement.classList.contains("present") && document.getElementById("bar") !== null`)
		d := p.WaitSettled()
		assert.Equal(t, dpr, d.Scale)
		assert.Equal(t, int(1280*dpr), d.W, "the canvas is as wide as the window, in device pixels")
		assert.Equal(t, "projector", d.Scheme)
		assert.GreaterOrEqual(t, d.TextPx, 16.0, "the debug report states the smallest text on the canvas")
		assert.Empty(t, d.Clipped, "at %gx", dpr)
		assert.Len(t, d.Columns, 3)
		assert.True(t, slices.ContainsFunc(d.Labels, func(l mapview.Label) bool {
			return strings.HasPrefix(l.Text, "30 GB: ") && l.Size >= 1.25*d.TextPx
		}), "the first guest's result is on the canvas in larger type (two results a row fit a third of 1280 px at 20 px): %v", d.Labels)
		assert.GreaterOrEqual(t, Eval[float64](p, panelTextPx), 16.0, "the bar's text at %gx", dpr)
		assert.True(t, Eval[bool](p, `(() => { const b = document.getElementById("bar"); return b.scrollWidth <= b.clientWidth; })()`),
			"the bar fits the window")
		layouts = append(layouts, d.Layout)
		if dpr == 1 {
			p.Close()
		}
	}
	assert.Equal(t, layouts[0], layouts[1], "the map's layout is the same at 1x and 2x")

	p.Press('r')
	p.WaitJS(`JSON.parse(window.pagesimDebug()).nowNs === 0`)
	p.Press('p')
	p.WaitJS(`!document.documentElement.classList.contains("present")`)
	assert.NotContains(t, p.Debug().Link, "present")
	p.Press('p')
	p.WaitJS(`document.documentElement.classList.contains("present")`)
	assert.Contains(t, p.Debug().Link, "&present")
}

// The map follows a change of the pixel density while it runs (a browser
// zoom, the window dragged to another screen), without a reload: the
// canvas's drawing buffer takes the new density, the map keeps its
// layout in CSS pixels and its text its size in CSS pixels (so twice the
// device pixels at 2x). A browser zoom changes the window's width in CSS
// pixels with the ratio: at 150% a 1920-pixel window is 1280 CSS px wide
// at 1.5x, and the text, the same CSS size, is 1.5 times as large on the
// screen.
func TestTheMapFollowsAChangeOfPixelDensityWithoutAReload(t *testing.T) {
	const link = "v1/thp-thisnode?seed=1&scale=0.01&t=0.2"
	p := OpenAt(t, link, 1280, 720, 1)
	before := p.WaitSettled()
	require.Equal(t, 1.0, before.Scale)
	p.Click("play")
	p.WaitJS(`JSON.parse(window.pagesimDebug()).playing`)

	metrics := func(w, h int, dpr float64) {
		t.Helper()
		_, err := chromedp.Call(p.ctx, emulation.SetDeviceMetricsOverride,
			emulation.SetDeviceMetricsOverrideParams{Width: int64(w), Height: int64(h), DeviceScaleFactor: dpr})
		require.NoError(t, err)
		p.WaitJS(fmt.Sprintf(`window.devicePixelRatio === %g && JSON.parse(window.pagesimDebug()).scale === %g`, dpr, dpr))
	}
	// canvas is the canvas's drawing buffer and the map area's size in
	// CSS pixels (the body's client size; the panel takes the rest).
	canvas := func() (buf, css []int) {
		v := Eval[[]int](p, `(() => { const c = document.querySelector("canvas"), b = document.body; return [c.width, c.height, b.clientWidth, b.clientHeight]; })()`)
		return v[:2], v[2:]
	}
	buf, css := canvas()
	require.Equal(t, css, buf)
	require.Equal(t, css[0], before.W)

	// While it plays.
	metrics(1280, 720, 2)
	buf, css = canvas()
	assert.Equal(t, []int{2 * css[0], 2 * css[1]}, buf, "the canvas's drawing buffer takes the new density")
	assert.True(t, p.Debug().Playing)
	p.Click("play")
	p.WaitSettled()
	p.Goto(link) // back to t=0.2, to compare the labels
	at2 := p.WaitSettled()
	assert.Equal(t, 2*before.W, at2.W, "the map is drawn at the new density")
	assert.Equal(t, before.Layout, at2.Layout, "the layout is the same in CSS pixels")
	assert.Equal(t, before.TextPx, at2.TextPx, "and the text's size")
	require.Equal(t, len(before.Labels), len(at2.Labels))
	for i, l := range before.Labels {
		m := at2.Labels[i]
		assert.Equal(t, l.Text, m.Text)
		assert.Equal(t, l.Size, m.Size, "%q keeps its size in CSS px", l.Text)
		assert.InDelta(t, float64(l.X), float64(m.X)/2, 2, "%q is where it was, in CSS px", l.Text)
	}
	assert.Empty(t, at2.Clipped)

	// A 150% zoom of a 1920x1080 window: 1280x720 CSS pixels at 1.5x.
	metrics(1280, 720, 1.5)
	zoomed := p.WaitSettled()
	buf, css = canvas()
	assert.Equal(t, []int{css[0] * 3 / 2, css[1] * 3 / 2}, buf)
	assert.Equal(t, buf[0], zoomed.W)
	assert.Equal(t, before.Layout, zoomed.Layout)
	assert.Equal(t, before.TextPx, zoomed.TextPx, "text of the same CSS size: 1.5 times as large on the screen")
	assert.Empty(t, zoomed.Clipped)

	metrics(1280, 720, 1)
	back := p.WaitSettled()
	assert.Equal(t, before.Layout, back.Layout)
	assert.Equal(t, before.W, back.W)
	buf, css = canvas()
	assert.Equal(t, css, buf)
}

// The one who embeds: "Copy embed code" gives an iframe of the state, and
// the page in it, on a page from another origin, shows the maps and a
// control strip, plays, and answers keys once it has been clicked; its
// "open the full page" link is the same state without the embed.
func TestTheEmbedPlaysInAnIframeFromAnotherOriginAndAnswersKeysAfterAClick(t *testing.T) {
	// The slide holds what "Copy embed code" copied.
	app := Open(t, "v1/playground?mem=64&seed=2")
	app.GrantClipboard()
	app.Click("copy-embed")
	app.WaitJS(`document.getElementById("copy-embed-status").textContent === "Copied."`)
	code := Eval[string](app, `navigator.clipboard.readText()`)
	app.Close()
	src := server.URL + "/#v1/playground?seed=2&mem=64&embed"
	require.True(t, strings.HasPrefix(code, `<iframe src="`+html.EscapeString(src)+`" width="960" height="540" `), code)
	slides := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><title>slides</title><p>A slide.</p>%s`, strings.Replace(code, "<iframe ", `<iframe id="f" `, 1))
	}))
	defer slides.Close()
	require.NotEqual(t, slides.URL, server.URL, "another origin (another port)")
	p := OpenBlank(t)
	p.Navigate(slides.URL)
	// frameTry evaluates expr in the iframe's document (an isolated world:
	// its DOM, not its scripts' globals). While the iframe is still
	// loading, its document (and the world made in it) can be replaced
	// between two calls: an error then means "not yet".
	frameTry := func(expr string) (string, error) {
		tree, err := chromedp.Call(p.ctx, page.GetFrameTree, cdp.Empty{})
		if err != nil {
			return "", err
		}
		if len(tree.FrameTree.ChildFrames) != 1 {
			return "", fmt.Errorf("%d child frames", len(tree.FrameTree.ChildFrames))
		}
		w, err := chromedp.Call(p.ctx, page.CreateIsolatedWorld, page.CreateIsolatedWorldParams{FrameID: tree.FrameTree.ChildFrames[0].Frame.ID})
		if err != nil {
			return "", err
		}
		yes := true
		res, err := chromedp.Call(p.ctx, runtime.Evaluate, runtime.EvaluateParams{Expression: expr, ContextID: w.ExecutionContextID, ReturnByValue: &yes})
		if err != nil {
			return "", err
		}
		if res.ExceptionDetails != nil {
			return "", fmt.Errorf("%s: %s", expr, res.ExceptionDetails.Text)
		}
		var s string
		err = json.Unmarshal(res.Result.Value, &s)
		return s, err
	}
	frame := func(expr string) string {
		s, err := frameTry(expr)
		require.NoError(t, err)
		return s
	}
	status := `(document.getElementById("status") || {textContent: ""}).textContent`
	waitFrame := func(expr, want string) string {
		var got string
		var err error
		for i := 0; i < 600; i++ {
			if got, err = frameTry(expr); err == nil && strings.Contains(got, want) {
				return got
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Fatalf("the iframe's %s is %q (%v), without %q", expr, got, err, want)
		return ""
	}
	waitFrame(status, "paused")
	assert.Equal(t, "1", frame(`String(document.querySelectorAll("#strip").length)`), "the control strip")
	assert.Equal(t, "0", frame(`String(document.querySelectorAll("#scenario").length)`), "and not the panel")
	assert.Equal(t, "embed", frame(`document.documentElement.className`))
	full := frame(`document.getElementById("full-page").href`)
	assert.True(t, strings.HasPrefix(full, server.URL+"/#v1/playground?"), full)
	assert.NotContains(t, full, "embed")

	rect := Eval[[]float64](p, `(() => { const r = document.getElementById("f").getBoundingClientRect(); return [r.x, r.y, r.width, r.height]; })()`)
	_, err := chromedp.Run(p.ctx, chromedp.MouseClickXY(rect[0]+rect[2]/2, rect[1]+rect[3]/3))
	require.NoError(t, err)
	_, err = chromedp.Run(p.ctx, chromedp.KeyEvent(" "))
	require.NoError(t, err)
	waitFrame(status, "playing")
	_, err = chromedp.Run(p.ctx, chromedp.KeyEvent(" "))
	require.NoError(t, err)
	waitFrame(status, "paused")
}

// The keys work whichever control has the focus (a button: space plays
// once, not the button too), ? shows them and Escape hides them, and
// typing in a text field types.
func TestTheKeysWorkWhicheverControlHasTheFocusButATextField(t *testing.T) {
	p := Open(t, "v1/playground?mem=64&seed=5&x=5")
	help := `document.getElementById("keys-help").hidden`
	require.True(t, Eval[bool](p, help))
	Eval[bool](p, `(() => { document.getElementById("reset").focus(); return true; })()`)
	p.Press(' ')
	p.WaitJS(`JSON.parse(window.pagesimDebug()).playing`)
	p.Press(' ')
	p.WaitJS(`!JSON.parse(window.pagesimDebug()).playing`)
	assert.Positive(t, p.Debug().NowNS, "space played, and did not press the focused Reset")
	p.Press('?')
	p.WaitJS(`!` + help)
	p.Press(rune(kb.Escape[0]))
	p.WaitJS(help)

	Eval[bool](p, `(() => { document.getElementById("param-fill").focus(); return true; })()`)
	p.Press('p')
	p.WaitFrames(3)
	assert.False(t, Eval[bool](p, `document.documentElement.classList.contains("present")`), "p in a text field is a letter")
	assert.True(t, strings.HasSuffix(Eval[string](p, `document.getElementById("param-fill").value`), "p"))
	Eval[bool](p, `(() => { document.getElementById("param-fill").blur(); return true; })()`)
}

// The trace keeps more than the latest 40 lines, filters by tracepoint
// and by task, and downloads what passes as ftrace's text.
func TestTheTraceFiltersAndDownloadsAsFtracesText(t *testing.T) {
	p := Open(t, "v1/playground?mem=64&seed=5&x=5")
	p.Click("play")
	p.WaitJS(`JSON.parse(window.pagesimDebug()).nowNs > 1.5e9`)
	p.Click("play")
	p.WaitSettled()
	lines := func() []string { return strings.Split(p.Text("trace"), "\n") }
	all := lines()
	require.Greater(t, len(all), 40, "more than the 40 lines the page once kept: %s", p.Text("trace-note"))
	// The first line's tracepoint: "comm-pid [cpu] flags time: name: ...".
	f := strings.Fields(all[0])
	var event string
	for i, w := range f {
		if strings.HasSuffix(w, ":") && i > 0 && strings.HasSuffix(f[i-1], ":") {
			event = strings.TrimSuffix(w, ":")
			break
		}
	}
	require.NotEmpty(t, event, all[0])
	Eval[bool](p, fmt.Sprintf(`(() => { const e = document.getElementById("trace-event"); e.value = %q; e.dispatchEvent(new Event("change", {bubbles: true})); return true; })()`, event))
	p.WaitJS(fmt.Sprintf(`document.getElementById("trace").textContent.split("\n").every(l => l.includes(" %s: "))`, event))
	p.SetField("trace-task", "no-such-task")
	p.WaitJS(`document.getElementById("trace").textContent === "(no event passes the filter)"`)
	p.SetField("trace-task", "")
	p.WaitJS(`document.getElementById("trace").textContent !== "(no event passes the filter)"`)

	down := t.TempDir()
	_, err := chromedp.CallBrowser(p.ctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{Behavior: browser.SetDownloadBehaviorBehaviorAllow, DownloadPath: down})
	require.NoError(t, err)
	p.Click("download-trace")
	file := string(waitFile(t, filepath.Join(down, "pagesim-playground-baseline-trace.txt")))
	require.True(t, strings.HasPrefix(file, "# tracer: nop\n#\n# entries-in-buffer/entries-written: "), file[:min(len(file), 200)])
	saved := 0
	for _, l := range strings.Split(file, "\n") {
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		saved++
		require.Contains(t, l, " "+event+": ", "only the filtered tracepoint is saved")
	}
	assert.Positive(t, saved)
}

// At a phone's width the canvas shows one variant, the panel's tabs pick
// which, and the gauges are kept.
func TestAPhoneShowsOneVariantAtATimeWithTabs(t *testing.T) {
	p := OpenAt(t, "v1/playground?mem=64&seed=5", 390, 844, 3)
	d := p.WaitSettled()
	require.Len(t, d.Columns, 1)
	assert.Equal(t, "baseline", d.Columns[0])
	assert.Empty(t, d.Clipped)
	assert.Greater(t, d.Layout.Rows, 0, "the gauges are kept")
	assert.True(t, Eval[bool](p, `getComputedStyle(document.getElementById("tabs")).display !== "none"`))
	p.Click("tab-small_pcp")
	p.WaitJS(`JSON.parse(window.pagesimDebug()).columns[0] === "small_pcp"`)
	assert.Equal(t, []string{"small_pcp"}, p.WaitSettled().Columns)
}
