package panel

import (
	"bytes"
	"errors"
	"go/format"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vugu/html"
	"github.com/vugu/vugu"
	"github.com/vugu/vugu/gen"
	"github.com/vugu/vugu/staticrender"

	"github.com/pagesim/pagesim/engine/scenario"
	"github.com/pagesim/pagesim/ui/app"
)

// loopBackend runs a real controller behind an app.Loop, ticked by hand.
type loopBackend struct {
	*app.Loop
}

func newBackend(t *testing.T, frag string) *loopBackend {
	t.Helper()
	pg, err := scenario.Get("playground")
	require.NoError(t, err)
	cat, err := app.NewCatalog(pg)
	require.NoError(t, err)
	ctl := app.NewController(cat, app.Options{Link: frag})
	return &loopBackend{app.NewLoop(ctl)}
}

// settle applies queued commands and runs until the runs reach the clock.
func (b *loopBackend) settle(t *testing.T) {
	t.Helper()
	for i := 0; i < 1000; i++ {
		b.Tick(0, 1e9)
		if b.Controller().CaughtUp() {
			b.Tick(0, 1e9)
			return
		}
	}
	t.Fatal("the runs did not catch up")
}

type fakeHost struct {
	copied    []string
	downloads [][2]string
	err       error
}

func (h *fakeHost) PageURL() string { return "http://pagesim.test:8080/" }

func (h *fakeHost) DownloadText(name, text string) error {
	h.downloads = append(h.downloads, [2]string{name, text})
	return h.err
}

func (h *fakeHost) CopyText(text string, done func(error)) {
	h.copied = append(h.copied, text)
	done(h.err)
}

// fakeEvent is a DOM event carrying target.value and target.checked.
type fakeEvent struct {
	vugu.DOMEvent
	value   string
	checked bool
}

func (e fakeEvent) PropString(keys ...string) string {
	if strings.Join(keys, ".") == "target.value" {
		return e.value
	}
	return ""
}

func (e fakeEvent) PropBool(keys ...string) bool {
	return strings.Join(keys, ".") == "target.checked" && e.checked
}

func render(t *testing.T, root *Root) string {
	t.Helper()
	root.Snap = root.Backend.Snapshot()
	env, err := vugu.NewBuildEnv()
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, staticrender.New(&buf).Render(env.RunBuild(root)))
	return buf.String()
}

// textOf returns the text content of the element with the given id.
func textOf(t *testing.T, page, id string) string {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(page))
	require.NoError(t, err)
	var found *html.Node
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		for _, a := range n.Attr {
			if a.Key == "id" && a.Val == id {
				found = n
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	require.NotNil(t, found, "no element #%s", id)
	var b strings.Builder
	var text func(n *html.Node)
	text = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			text(c)
		}
	}
	text(found)
	return b.String()
}

func countElements(t *testing.T, page, tag string) int {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(page))
	require.NoError(t, err)
	n := 0
	var walk func(n *html.Node)
	walk = func(x *html.Node) {
		if x.Type == html.ElementNode && x.Data == tag {
			n++
		}
		for c := x.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	return n
}

func TestThePanelShowsTheDefaults(t *testing.T) {
	b := newBackend(t, "")
	root := &Root{Backend: b}
	page := render(t, root)
	assert.Contains(t, page, `label="Playground: allocation churn (no patch)"`)
	assert.Equal(t, "Play", textOf(t, page, "play"))
	assert.Equal(t, "t = 0.000 s of 60.000 s · paused", textOf(t, page, "status"))
	for _, id := range []string{"param-nodes", "param-mem", "param-cpus", "param-fill", "param-unmovable", "param-duration",
		"variant-baseline", "variant-small_pcp", "variant-high_wmark", "seed", "speed", "permalink", "copy-results", "copy-json",
		"results-json", "results-state", "legend-marks", "live", "trace", "stall-baseline", "stall-small_pcp"} {
		assert.Contains(t, page, `id="`+id+`"`)
	}
	assert.Contains(t, textOf(t, page, "live"), "nr_free_pages")
	assert.Contains(t, textOf(t, page, "results"), "allocations")
	assert.Contains(t, textOf(t, page, "summary"), "Not a patch scenario")
	assert.Contains(t, textOf(t, page, "summary"), "playground")
	assert.Contains(t, page, "MiB of memory per node [16, 4096]", "each parameter's help says its range")
	assert.Contains(t, textOf(t, page, "results-json"), `"scenario": "playground"`)
	assert.Equal(t, "(no allocation has stalled yet)", textOf(t, page, "stall-baseline"))
	live := strings.Join(strings.Fields(textOf(t, page, "live")), " ")
	assert.Contains(t, live, "PSI memory some avg10 (%) 0.000.00")
	assert.Contains(t, live, "node 0 kswapd / kcompactd sleeping / sleepingsleeping / sleeping")
	assert.Contains(t, page, `class="swatch mk-migrate"`)
	assert.Contains(t, page, `class="swatch ch-psi"`)
	assert.Equal(t, "pagesim run playground --seed 1", textOf(t, page, "results-command"))
	assert.Equal(t, "1", root.seedText())
	assert.Equal(t, "256", root.paramText("mem"))
	assert.Equal(t, "#v1/playground?seed=1", root.linkURL())
	assert.Contains(t, page, `class="swatch mt-unmovable"`)
	assert.NotContains(t, page, `id="link-error"`)
}

func TestALinkErrorIsShownAsTextNeverAsHTML(t *testing.T) {
	b := newBackend(t, `#v1/playground?nodes=<img src=x onerror=alert(1)><script>alert(2)</script>`)
	page := render(t, &Root{Backend: b})
	msg := textOf(t, page, "link-error")
	assert.Contains(t, msg, "Part of this link could not be used: nodes: ")
	assert.Contains(t, msg, `<img src=x onerror=alert(1)>`)
	assert.Zero(t, countElements(t, page, "img"))
	assert.Zero(t, countElements(t, page, "script"))
	assert.Contains(t, page, "&lt;img")
}

func TestABadParameterOfALinkIsMarkedInItsFieldAndTheRestKept(t *testing.T) {
	b := newBackend(t, "v1/playground?mem=32&nodes=9")
	root := &Root{Backend: b}
	page := render(t, root)
	assert.Equal(t, "9 is above the maximum 4", textOf(t, page, "param-error-nodes"))
	assert.Equal(t, "9", root.paramText("nodes"), "the field shows the link's value")
	assert.Equal(t, "32", root.paramText("mem"), "the rest of the link is kept")
	assert.Contains(t, page, `class="bad" id="param-nodes"`)
	root.commitParam("nodes", fakeEvent{value: "2"})
	b.settle(t)
	page = render(t, root)
	assert.NotContains(t, page, "param-error-nodes")
	assert.Equal(t, "2", root.paramText("nodes"))
}

func TestThePanelLinksOutAndTheLinkIsTheWholeURL(t *testing.T) {
	cat, err := app.DefaultCatalog()
	require.NoError(t, err)
	ctl := app.NewController(cat, app.Options{Link: "v1/thp-thisnode?scale=0.03&guest_gb=30"})
	b := &loopBackend{app.NewLoop(ctl)}
	h := &fakeHost{}
	root := &Root{Backend: b, Host: h}
	page := render(t, root)
	assert.Equal(t, 3, strings.Count(page, `target="_blank" rel="noopener noreferrer"`))
	assert.Contains(t, page, `href="https://lore.kernel.org/linux-mm/20180820032204.9591-3-aarcange@redhat.com/"`)
	assert.Contains(t, page, `href="https://github.com/pagesim/pagesim/blob/main/docs/FIDELITY.md#thp-thisnode"`)
	assert.Contains(t, page, `href="https://github.com/pagesim/pagesim/blob/main/engine/scenario/thp_thisnode.go"`)
	root.copyLink()
	assert.Equal(t, []string{"http://pagesim.test:8080/#v1/thp-thisnode?seed=1&guest_gb=30&scale=0.03"}, h.copied)
	assert.Equal(t, h.copied[0], root.linkURL(), "the permalink field shows what Copy link copies")
	assert.Contains(t, textOf(t, page, "link-note"), "pasted into a plain-text mail")
}

func TestButtonsQueueCommandsForTheOwner(t *testing.T) {
	b := newBackend(t, "v1/playground?mem=32")
	root := &Root{Backend: b}
	root.step()
	b.settle(t)
	page := render(t, root)
	assert.Equal(t, "t = 0.016 s of 60.000 s · paused", textOf(t, page, "status"))

	root.togglePlay()
	assert.Equal(t, "Pause", root.playLabel(), "the button answers before the simulation does")
	assert.False(t, b.Snapshot().Playing)
	b.Tick(0, 1e9)
	page = render(t, root)
	assert.Equal(t, "Pause", textOf(t, page, "play"))
	assert.Nil(t, root.pendingPlay, "the snapshot has caught up")
	assert.Contains(t, textOf(t, page, "status"), "playing at x1")
	root.togglePlay()
	root.setSpeed(fakeEvent{value: "1000"})
	root.toggleVariant("high_wmark", fakeEvent{checked: true})
	b.settle(t)
	page = render(t, root)
	assert.Equal(t, "Play", textOf(t, page, "play"))
	assert.Contains(t, page, `label="x1000" selected="selected"`)
	assert.Contains(t, strings.Join(strings.Fields(textOf(t, page, "live")), ""), "counterbaselinesmall_pcphigh_wmark")

	root.reset()
	b.settle(t)
	assert.Contains(t, textOf(t, render(t, root), "status"), "t = 0.000 s")
}

func TestAnInvalidParameterIsRefusedWithTheScenariosOwnMessage(t *testing.T) {
	b := newBackend(t, "v1/playground?mem=32")
	root := &Root{Backend: b}
	render(t, root)
	root.setDraft("nodes", fakeEvent{value: "9"})
	root.commitParam("nodes", fakeEvent{value: "9"})
	b.settle(t)
	page := render(t, root)
	assert.Equal(t, "9 is above the maximum 4", textOf(t, page, "param-error-nodes"))
	assert.Equal(t, "9", root.paramText("nodes"), "the refused text stays in the box")
	assert.Equal(t, "1", b.Snapshot().State.Params["nodes"])

	root.commitParam("nodes", fakeEvent{value: " 2 "})
	b.settle(t)
	page = render(t, root)
	assert.NotContains(t, page, "param-error-nodes")
	assert.Equal(t, "2", b.Snapshot().State.Params["nodes"])
	assert.Equal(t, "2", root.paramText("nodes"))
	assert.Empty(t, root.drafts, "the draft is dropped once the snapshot has it")

	root.commitSeed(fakeEvent{value: "x"})
	assert.Contains(t, render(t, root), "seed: must be a whole number")
	root.commitSeed(fakeEvent{value: "42"})
	b.settle(t)
	assert.EqualValues(t, 42, b.Snapshot().State.Seed)
	render(t, root)
	assert.Equal(t, "#v1/playground?seed=42&nodes=2&mem=32", root.linkURL())
}

func TestCopyPutsTheResultTableOnTheClipboard(t *testing.T) {
	b := newBackend(t, "v1/playground?mem=32")
	h := &fakeHost{}
	root := &Root{Backend: b, Host: h}
	render(t, root)
	root.copyResults()
	require.Len(t, h.copied, 1)
	assert.Equal(t, b.Snapshot().Result.Text, h.copied[0])
	assert.Equal(t, "Copied.", textOf(t, render(t, root), "copy-results-status"))
	h.err = errors.New("denied")
	root.copyResults()
	assert.Contains(t, textOf(t, render(t, root), "copy-results-status"), "Could not copy (denied)")
	root.copyLink()
	assert.Equal(t, "http://pagesim.test:8080/#v1/playground?seed=1&mem=32", h.copied[2])
	h.err = nil
	root.copyJSON()
	assert.Equal(t, b.Snapshot().Result.JSON, h.copied[3])
	assert.Equal(t, "Copied.", textOf(t, render(t, root), "copy-json-status"))
}

func TestTheTraceShowsTheChosenVariant(t *testing.T) {
	b := newBackend(t, "v1/playground?mem=32&t=2")
	b.settle(t)
	root := &Root{Backend: b}
	page := render(t, root)
	assert.Contains(t, page, `label="small_pcp"`)
	first := textOf(t, page, "trace")
	root.pickTrace(fakeEvent{value: "1"})
	assert.Equal(t, 1, root.traceVariant())
	root.pickTrace(fakeEvent{value: "7"})
	assert.Equal(t, 0, root.traceVariant(), "out of range falls back to the first")
	assert.Equal(t, first, textOf(t, render(t, root), "trace"))
}

// TestGeneratedCodeIsUpToDate regenerates the Vugu code into a scratch
// copy of the package and compares it with the committed file.
func TestGeneratedCodeIsUpToDate(t *testing.T) {
	dir := t.TempDir()
	files, err := filepath.Glob("*")
	require.NoError(t, err)
	for _, f := range files {
		if strings.HasSuffix(f, ".vugu") || (strings.HasSuffix(f, ".go") && !strings.HasSuffix(f, "_test.go") && !strings.HasSuffix(f, "_gen.go")) {
			b, err := os.ReadFile(f)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(dir, f), b, 0o644))
		}
	}
	require.NoError(t, gen.Run(dir, &gen.ParserGoPkgOpts{SkipGoMod: true, SkipMainGo: true, MergeSingle: true}))
	got, err := os.ReadFile(filepath.Join(dir, "0_components_gen.go"))
	require.NoError(t, err)
	got, err = format.Source(got)
	require.NoError(t, err)
	want, err := os.ReadFile("0_components_gen.go")
	require.NoError(t, err)
	if !bytes.Equal(got, want) {
		t.Fatal("ui/panel/0_components_gen.go is stale: run `go generate ./ui/panel` and commit the result")
	}
}

func TestKnobsAreCheckedLineByLineAndSentTogether(t *testing.T) {
	b := newBackend(t, "v1/playground?mem=32")
	root := &Root{Backend: b}
	page := render(t, root)
	assert.Contains(t, page, `id="knobs"`)
	root.commitKnobs(fakeEvent{value: "vm.defrag_mode=1\n\n# comment\nvm.nosuch=3"})
	b.settle(t)
	page = render(t, root)
	assert.Contains(t, textOf(t, page, "knobs-error"), "line 4: no such sysctl")
	assert.Empty(t, b.Snapshot().State.Knobs, "nothing is sent while a line is refused")
	root.commitKnobs(fakeEvent{value: " vm.defrag_mode = 1 \ntransparent_hugepage.defrag=madvise"})
	b.settle(t)
	render(t, root)
	assert.Equal(t, []scenario.Knob{{Name: "vm.defrag_mode", Value: "1"}, {Name: "transparent_hugepage.defrag", Value: "madvise"}}, b.Snapshot().State.Knobs)
	assert.Equal(t, "vm.defrag_mode=1\ntransparent_hugepage.defrag=madvise", root.knobsText())
	assert.Equal(t, "#v1/playground?seed=1&mem=32&vm.defrag_mode=1&transparent_hugepage.defrag=madvise", root.linkURL())
}

// A scenario `pagesim run` knows: the table is the command's, the command
// line is shown, and each variant's latest stalled allocation is laid out
// one decision per line, as text.
func TestTheResultIsTheCommandsAndTheStallTraceIsText(t *testing.T) {
	cat, err := app.DefaultCatalog()
	require.NoError(t, err)
	ctl := app.NewController(cat, app.Options{Link: "v1/thp-thisnode?scale=0.03&guest_gb=42&v=upstream&t=100"})
	require.Empty(t, ctl.Message())
	b := &loopBackend{app.NewLoop(ctl)}
	b.settle(t)
	require.True(t, ctl.Ended())
	root := &Root{Backend: b}
	page := render(t, root)
	s := b.Snapshot()
	assert.Equal(t, s.Result.Text, textOf(t, page, "results"))
	assert.Contains(t, s.Result.Text, "Counters over all guest sizes:")
	assert.Equal(t, s.Result.JSON, textOf(t, page, "results-json"))
	assert.Equal(t, "pagesim run thp-thisnode --seed 1 --variant upstream --set guest_gb=42 --set scale=0.03", textOf(t, page, "results-command"))
	assert.Equal(t, "Final: every variant has finished.", textOf(t, page, "results-state"))
	stall := textOf(t, page, "stall-upstream")
	assert.Contains(t, stall, "\n  -> __alloc_pages_direct_reclaim(order=9)")
	assert.True(t, strings.HasPrefix(stall, "["), stall)
	assert.Zero(t, countElements(t, page, "img"))
}

// thpBackend is thp-thisnode at a small scale, two guest sizes.
func thpBackend(t *testing.T, link string) *loopBackend {
	t.Helper()
	cat, err := app.DefaultCatalog()
	require.NoError(t, err)
	ctl := app.NewController(cat, app.Options{Link: link})
	require.Empty(t, ctl.Message())
	return &loopBackend{app.NewLoop(ctl)}
}

// Before anything runs, the page shows no number that does not exist:
// the headline table and the seed's table are "…", the result table's
// cells too, and the state says it has not started (not "Running").
func TestNothingIsShownBeforeItExists(t *testing.T) {
	b := thpBackend(t, "v1/thp-thisnode?scale=0.01&guest_gb=30,34")
	root := &Root{Backend: b}
	page := render(t, root)
	assert.Equal(t, "Not started: press Play (or the space bar). The table fills in as the variants finish their steps.", textOf(t, page, "results-state"))
	headline := textOf(t, page, "headline")
	assert.Contains(t, headline, "gb_per_s_30")
	assert.NotContains(t, headline, "0.00")
	assert.Contains(t, headline, "…")
	seed := textOf(t, page, "seed-vs-pagesim")
	assert.Contains(t, seed, "Seed vs pagesim")
	assert.Contains(t, seed, "3.40", "the seed's numbers")
	assert.Contains(t, seed, "…", "pagesim's, not yet")
	assert.Contains(t, seed, "power 1.5", "what the scale does")
	assert.Contains(t, seed, "This run is at scale 0.01.")
	results := textOf(t, page, "results")
	assert.True(t, strings.HasPrefix(results, "partial, at t = 0.000 s: "), results)
	assert.NotContains(t, results, "0.00\n")

	// After the first guest: its numbers, the other's still "…".
	b.Do(func(c *app.Controller) { c.Play() })
	for i := 0; i < 100000 && len(b.Controller().Runs()[0].Results()) == 0; i++ {
		b.Tick(time.Millisecond, time.Hour)
	}
	b.Do(func(c *app.Controller) { c.Pause() })
	b.settle(t)
	page = render(t, root)
	assert.True(t, strings.HasPrefix(textOf(t, page, "results-state"), "Paused at t = "), textOf(t, page, "results-state"))
	rows := root.headlineRows()
	require.Equal(t, "gb_per_s_30", rows[0][0])
	assert.NotEqual(t, "…", rows[0][1])
	var gb34 []string
	for _, r := range rows {
		if r[0] == "gb_per_s_34" {
			gb34 = r
		}
	}
	assert.Equal(t, "…", gb34[1])
	tables := root.seedTables()
	require.Len(t, tables, 1)
	assert.Equal(t, []string{"", "upstream seed", "upstream pagesim", "only-compact seed", "only-compact pagesim", "drop-thisnode seed", "drop-thisnode pagesim"}, tables[0].Head)
	assert.Regexp(t, `^\d+\.\d\d$`, tables[0].Rows[0][2], "pagesim's number to the seed's two decimals")
	assert.Equal(t, "…", tables[0].Rows[1][2])
}

func TestPresentationModeFoldsThePanelToABar(t *testing.T) {
	b := newBackend(t, "v1/playground?mem=32&present")
	root := &Root{Backend: b, Host: &fakeHost{}}
	page := render(t, root)
	assert.Contains(t, page, `id="bar"`)
	assert.Contains(t, page, `class="panel-root present-bar"`)
	for _, id := range []string{"play", "step", "reset", "speed", "text-size", "status", "present"} {
		assert.Contains(t, page, `id="`+id+`"`)
	}
	assert.NotContains(t, page, `id="results"`, "the rest folds away")
	assert.Equal(t, "Exit presentation", textOf(t, page, "present"))
	root.present(false)
	b.settle(t)
	page = render(t, root)
	assert.NotContains(t, page, `id="bar"`)
	assert.Contains(t, page, `id="results"`)
}

func TestTheEmbedHasAControlStripAndALinkToTheFullPage(t *testing.T) {
	b := newBackend(t, "v1/playground?mem=32&embed")
	h := &fakeHost{}
	root := &Root{Backend: b, Host: h}
	page := render(t, root)
	assert.Contains(t, page, `id="strip"`)
	assert.NotContains(t, page, `id="scenario"`)
	assert.Contains(t, page, `href="http://pagesim.test:8080/#v1/playground?seed=1&amp;mem=32"`)
	assert.Contains(t, page, `target="_blank" rel="noopener noreferrer"`)
	assert.Equal(t, "open the full page", textOf(t, page, "full-page"))

	full := newBackend(t, "v1/playground?mem=32&present")
	root = &Root{Backend: full, Host: h}
	render(t, root)
	root.copyEmbed()
	assert.Equal(t, `<iframe src="http://pagesim.test:8080/#v1/playground?seed=1&amp;mem=32&amp;embed" width="960" height="540" title="pagesim: playground" allow="fullscreen" loading="lazy" style="border:0"></iframe>`,
		h.copied[len(h.copied)-1], "an embed is never in presentation mode")
}

func TestTheTraceFiltersAndDownloadsAsTheTraceFile(t *testing.T) {
	b := newBackend(t, "v1/playground?mem=32&t=3&unmovable=60&fill=95")
	b.settle(t)
	h := &fakeHost{}
	root := &Root{Backend: b, Host: h}
	page := render(t, root)
	all := textOf(t, page, "trace")
	require.NotContains(t, all, "(no tracepoint events yet)")
	assert.Contains(t, textOf(t, page, "trace-note"), "the latest")
	log := b.Snapshot().Live[0].Trace
	name := log.At(log.Len() - 1).Name()
	root.pickTraceEvent(fakeEvent{value: name})
	page = render(t, root)
	for _, l := range strings.Split(textOf(t, page, "trace"), "\n") {
		assert.Contains(t, l, ": "+name+": ")
	}
	root.setTraceTask(fakeEvent{value: "nosuchtask"})
	assert.Equal(t, "(no event passes the filter)", textOf(t, render(t, root), "trace"))
	root.setTraceTask(fakeEvent{value: ""})
	root.pickTraceEvent(fakeEvent{value: ""})
	root.downloadTrace()
	require.Len(t, h.downloads, 1)
	assert.Equal(t, "pagesim-playground-baseline-trace.txt", h.downloads[0][0])
	assert.True(t, strings.HasPrefix(h.downloads[0][1], "# tracer: nop\n#\n# entries-in-buffer/entries-written: "))
	assert.Contains(t, h.downloads[0][1], "#P:2\n")
	assert.Equal(t, "Saved as pagesim-playground-baseline-trace.txt.", textOf(t, render(t, root), "download-trace-status"))
}
