//go:build browser && !(js && wasm)

// Package e2e drives the built page in headless Chromium. Its tests build
// with the browser tag only (`make test` sets it: `go test -tags browser
// ./ui/e2e`), so that `go test ./...` needs nothing but Go. It builds the
// site with build.sh, serves it on 127.0.0.1 with the same handler as
// `pagesim serve`, and opens tabs in one browser started with the flags
// that give WebGL through SwiftShader. Every test waits on the page's
// frame counter or state, never on a timer, fails on any console error or
// request that leaves localhost, and saves a screenshot to testdata/out
// when it fails. Chromium missing is a failure, not a skip.
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/stretchr/testify/require"

	"github.com/pagesim/pagesim/internal/webserve"
	"github.com/pagesim/pagesim/ui/mapview"
)

var (
	repoRoot   string
	siteDir    string
	server     *httptest.Server
	browserCtx context.Context
	// buildTime is how long build.sh took (logged for the record).
	buildTime time.Duration
	// pagesimBin is the pagesim command, built from this tree.
	pagesimBin string
)

// ChromiumFlags are the flags that give headless Chromium a working WebGL2
// (SwiftShader) on machines without a GPU.
var ChromiumFlags = []string{
	"headless", "no-sandbox", "disable-gpu", "disable-quic", "no-first-run",
	"disable-background-networking", "disable-component-update", "disable-sync",
	"enable-unsafe-swiftshader",
}

func TestMain(m *testing.M) {
	os.Exit(mainErr(m))
}

func mainErr(m *testing.M) int {
	fail := func(format string, args ...any) int {
		fmt.Fprintf(os.Stderr, "FAIL: ui/e2e: "+format+"\n", args...)
		return 1
	}
	wd, err := os.Getwd()
	if err != nil {
		return fail("%v", err)
	}
	repoRoot = filepath.Clean(filepath.Join(wd, "..", ".."))
	siteDir = filepath.Join(repoRoot, "cmd", "pagesim", "site")

	chromium, err := findChromium()
	if err != nil {
		return fail("%v", err)
	}
	start := time.Now()
	cmd := exec.Command("bash", filepath.Join(repoRoot, "build.sh"))
	cmd.Dir = repoRoot
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fail("build.sh: %v\n%s", err, out)
	}
	buildTime = time.Since(start)
	if !webserve.Built(os.DirFS(siteDir)) {
		return fail("build.sh ran but %s has no index.html", siteDir)
	}
	binDir, err := os.MkdirTemp("", "pagesim-bin-")
	if err != nil {
		return fail("%v", err)
	}
	defer os.RemoveAll(binDir)
	pagesimBin = filepath.Join(binDir, "pagesim")
	cmd = exec.Command("go", "build", "-o", pagesimBin, "./cmd/pagesim")
	cmd.Dir = repoRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		return fail("building pagesim: %v\n%s", err, out)
	}

	server = httptest.NewServer(webserve.Handler(os.DirFS(siteDir)))
	defer server.Close()

	profile, err := os.MkdirTemp("", "pagesim-chromium-")
	if err != nil {
		return fail("%v", err)
	}
	defer os.RemoveAll(profile)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1400, 900),
		chromedp.Flag("use-angle", "swiftshader"),
		chromedp.Flag("force-color-profile", "srgb"),
		chromedp.Flag("disable-dev-shm-usage", true),
	}
	for _, f := range ChromiumFlags {
		opts = append(opts, chromedp.Flag(f, true))
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(allocCtx)
	defer cancelBrowser()
	if err := chromedp.Do(bctx); err != nil {
		return fail("starting %s: %v", chromium, err)
	}
	browserCtx = bctx
	return m.Run()
}

var trackOnce sync.Once

// trackInputs stats every file the site is built from. go test records
// the files a test opens (from the first test on, not in TestMain), so a
// cached pass of this package is reused only while none of them changed:
// the tests build the site themselves, which the cache cannot see.
func trackInputs() error {
	for _, dir := range []string{"engine", "internal", "ui", "wasm", "static", "cmd"} {
		err := filepath.WalkDir(filepath.Join(repoRoot, dir), func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && (d.Name() == "testdata" || d.Name() == "e2e" || d.Name() == "site") {
				return filepath.SkipDir
			}
			if !d.IsDir() {
				_, err = os.Stat(path)
			}
			return err
		})
		if err != nil {
			return err
		}
	}
	for _, f := range []string{"go.mod", "go.sum", "build.sh"} {
		if _, err := os.Stat(filepath.Join(repoRoot, f)); err != nil {
			return err
		}
	}
	return nil
}

// measurement skips t unless PAGESIM_MEASURE is set. t measures the page
// for docs/PERFORMANCE.md (start-up, the engine in wasm against native):
// its figures depend on the machine, so it is not a check and stays out
// of `make test`; `make bench-page` runs the measurements.
func measurement(t *testing.T) {
	t.Helper()
	if os.Getenv("PAGESIM_MEASURE") == "" {
		t.Skip("a measurement, not a test: make bench-page runs it")
	}
}

// measureFrames is n when PAGESIM_MEASURE is set and few otherwise: a
// test that logs frame times for docs/PERFORMANCE.md waits for n frames
// (what its medians cover) only when `make bench-page` measures; as a
// test it waits for the frames its assertions need.
func measureFrames(n, few int) int {
	if os.Getenv("PAGESIM_MEASURE") == "" {
		return few
	}
	return n
}

func findChromium() (string, error) {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return "/usr/bin/chromium", nil
	}
	return "", fmt.Errorf("no Chromium found: the browser tests need it (apt-get install chromium; .ci/run installs it)")
}

// Page is one tab showing the app.
type Page struct {
	t   *testing.T
	ctx context.Context

	visitor bool   // opened by OpenAsVisitor: requests come from readResourceList
	close   func() // checks the page is clean and closes its tab, once

	mu       sync.Mutex
	problems []string // console errors and warnings, exceptions, log errors
	requests []string
	// Allow lists substrings of console messages a test expects.
	Allow []string
}

// Open opens the app with a fragment (without '#') in a new tab and waits
// until it has drawn a few frames and the panel shows its state.
func Open(t *testing.T, frag string) *Page {
	t.Helper()
	return open(t, frag, false)
}

// OpenAsVisitor opens the app as a first-time visitor would: in a new
// browser context (empty HTTP and compiled-code caches) and without the
// DevTools network domain, which chromedp turns on for every tab: with it,
// Chromium copies every response body into DevTools' buffers, and the
// 2.5 MB wasm arrives 0.3-0.5 s later than it does for a visitor.
// Start-up times are measured in such a tab. It still checks that no
// request leaves localhost, from the page's own list of what it fetched
// (performance.getEntriesByType("resource")).
func OpenAsVisitor(t *testing.T, frag string) *Page {
	t.Helper()
	return open(t, frag, true)
}

// OpenURL opens a whole URL (as pasted from a mail) in a new browser
// context: no cache, no storage, nothing shared with the tab it came from.
func OpenURL(t *testing.T, u string) *Page {
	t.Helper()
	return openTarget(t, u, true)
}

func open(t *testing.T, frag string, visitor bool) *Page {
	t.Helper()
	target := server.URL + "/"
	if frag != "" {
		target += "#" + frag
	}
	return openTarget(t, target, visitor)
}

func openTarget(t *testing.T, target string, visitor bool) *Page {
	t.Helper()
	return openTargetWithin(t, target, visitor, 90*time.Second)
}

// OpenWithin is Open for a page that may take up to d in all (Open's
// pages have 90 s), for a test that runs a scenario to its end on a
// shared, loaded machine.
func OpenWithin(t *testing.T, frag string, d time.Duration) *Page {
	t.Helper()
	return openTargetWithin(t, server.URL+"/#"+frag, false, d)
}

func openTargetWithin(t *testing.T, target string, visitor bool, d time.Duration) *Page {
	t.Helper()
	trackOnce.Do(func() {
		if err := trackInputs(); err != nil {
			t.Fatalf("listing the site's inputs: %v", err)
		}
	})
	var opts []chromedp.ContextOption
	if visitor {
		opts = append(opts, chromedp.WithNewBrowserContext())
	}
	ctx, cancel := chromedp.NewContext(browserCtx, opts...)
	ctx, cancelT := context.WithTimeout(ctx, d)
	p := &Page{t: t, ctx: ctx, visitor: visitor}
	p.close = sync.OnceFunc(func() {
		if t.Failed() {
			p.saveScreenshot()
		}
		if visitor {
			p.readResourceList()
		}
		p.checkClean()
		cancelT()
		cancel()
	})
	t.Cleanup(p.Close)
	if err := chromedp.Listen(ctx, p.onEvent); err != nil {
		t.Fatalf("listening: %v", err)
	}
	if visitor {
		// The tab must exist before its network domain can be turned off.
		if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
			t.Fatalf("opening a tab: %v", err)
		}
		if _, err := chromedp.Call(ctx, network.Disable, cdp.Empty{}); err != nil {
			t.Fatalf("turning the network domain off: %v", err)
		}
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(target)); err != nil {
		t.Fatalf("navigating to %s: %v", target, err)
	}
	if target == blankTarget {
		return p
	}
	p.WaitFrames(3)
	p.WaitJS(`document.getElementById("status") !== null`)
	return p
}

// blankTarget opens a tab that is not the app (OpenBlank).
const blankTarget = "about:blank"

// OpenBlank opens a new tab on about:blank, with the harness's checks
// (console errors, requests), for a page that is not the app (one that
// frames it).
func OpenBlank(t *testing.T) *Page {
	t.Helper()
	return openTarget(t, blankTarget, false)
}

// Navigate loads u in the tab without waiting for the app.
func (p *Page) Navigate(u string) {
	p.t.Helper()
	if err := chromedp.Do(p.ctx, chromedp.Navigate(u)); err != nil {
		p.t.Fatalf("navigating to %s: %v", u, err)
	}
}

// OpenAt opens the app with a fragment in a new tab whose window is w x h
// CSS pixels at devicePixelRatio dpr, set before the page loads (the page
// follows a later change too: TestTheMapFollowsAChangeOfPixelDensityWithoutAReload).
func OpenAt(t *testing.T, frag string, w, h int, dpr float64) *Page {
	t.Helper()
	return OpenAtWithin(t, frag, w, h, dpr, 90*time.Second)
}

// OpenAtWithin is OpenAt for a page that may take up to d in all, for a
// test that opens several scenarios in one tab.
func OpenAtWithin(t *testing.T, frag string, w, h int, dpr float64, d time.Duration) *Page {
	t.Helper()
	p := openTargetWithin(t, blankTarget, false, d)
	if _, err := chromedp.Call(p.ctx, emulation.SetDeviceMetricsOverride,
		emulation.SetDeviceMetricsOverrideParams{Width: int64(w), Height: int64(h), DeviceScaleFactor: dpr}); err != nil {
		t.Fatalf("viewport %dx%d@%g: %v", w, h, dpr, err)
	}
	p.Navigate(server.URL + "/#" + frag)
	p.WaitFrames(3)
	p.WaitJS(`document.getElementById("status") !== null`)
	return p
}

func (p *Page) onEvent(ev any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch e := ev.(type) {
	case *network.EventRequestWillBeSent:
		p.requests = append(p.requests, e.Request.URL)
	case *runtime.EventConsoleAPICalled:
		if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeWarning || e.Type == runtime.ConsoleAPICalledTypeAssert {
			var parts []string
			for _, a := range e.Args {
				if len(a.Value) > 0 {
					parts = append(parts, string(a.Value))
				} else {
					parts = append(parts, a.Description)
				}
			}
			p.problems = append(p.problems, "console."+string(e.Type)+": "+strings.Join(parts, " "))
		}
	case *runtime.EventExceptionThrown:
		d := e.ExceptionDetails
		msg := d.Text
		if d.Exception != nil {
			msg += " " + d.Exception.Description
		}
		p.problems = append(p.problems, "exception: "+msg)
	case *log.EventEntryAdded:
		// GPU driver chatter (SwiftShader's "GPU stall due to
		// ReadPixels") is a warning of the "rendering" source; every
		// other warning or error counts.
		if e.Entry.Level == log.EntryLevelError || (e.Entry.Level == log.EntryLevelWarning && e.Entry.Source != log.EntrySourceRendering) {
			p.problems = append(p.problems, "log "+string(e.Entry.Level)+" ("+string(e.Entry.Source)+"): "+e.Entry.Text+" "+e.Entry.URL)
		}
	}
}

// Close checks the page reported no problem and made no request beyond
// localhost, and closes its tab. The test's cleanup does it if the test
// does not.
func (p *Page) Close() { p.close() }

// readResourceList adds what a visitor's tab fetched, as the page itself
// lists it, to p.requests.
func (p *Page) readResourceList() {
	ctx, cancel := context.WithTimeout(p.ctx, 10*time.Second)
	defer cancel()
	urls, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[location.href].concat(performance.getEntriesByType("resource").map(e => e.name))`))
	if err != nil {
		p.t.Errorf("reading the page's resource list: %v", err)
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.requests = append(p.requests, urls...)
}

// checkClean fails the test on console problems and on requests that
// leave localhost.
func (p *Page) checkClean() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, pr := range p.problems {
		allowed := false
		for _, a := range p.Allow {
			allowed = allowed || strings.Contains(pr, a)
		}
		if !allowed {
			p.t.Errorf("the page reported a problem: %s", pr)
		}
	}
	for _, r := range p.requests {
		u, err := url.Parse(r)
		if err != nil {
			p.t.Errorf("unparsable request URL %q", r)
			continue
		}
		switch u.Scheme {
		case "data", "blob":
			continue
		}
		if h := u.Hostname(); h != "127.0.0.1" && h != "localhost" && h != "::1" {
			p.t.Errorf("the page made a request that leaves localhost: %s", r)
		}
	}
}

func (p *Page) saveScreenshot() {
	ctx, cancel := context.WithTimeout(p.ctx, 10*time.Second)
	defer cancel()
	buf, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		p.t.Logf("no screenshot: %v", err)
		return
	}
	dir := filepath.Join("testdata", "out")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		p.t.Logf("no screenshot: %v", err)
		return
	}
	safe := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' {
			return r
		}
		return '_'
	}, p.t.Name())
	name := filepath.Join(dir, safe+".png")
	if err := os.WriteFile(name, buf, 0o644); err != nil {
		p.t.Logf("no screenshot: %v", err)
		return
	}
	abs, _ := filepath.Abs(name)
	p.t.Logf("screenshot of the failure: %s", abs)
}

// Goto changes the fragment as a user editing the address bar would, and
// waits until the page has restarted its runs for it, or, for a link
// whose t alone differs, until the timeline has moved there.
func (p *Page) Goto(frag string) {
	p.t.Helper()
	d := p.Debug()
	Eval[bool](p, fmt.Sprintf(`(() => { location.hash = %q; return true; })()`, frag))
	// A link that differs in its t alone moves the timeline there
	// without booting again (the version moves, the generation not).
	sameButTime := func(l string) string {
		path, query, _ := strings.Cut(l, "?")
		q, err := url.ParseQuery(query)
		if err != nil {
			return l
		}
		q.Del("t")
		return path + "?" + q.Encode()
	}
	if sameButTime(frag) == sameButTime(d.Link) {
		p.WaitJS(fmt.Sprintf(`JSON.parse(window.pagesimDebug()).version != %d`, d.Version))
		return
	}
	p.WaitJS(fmt.Sprintf(`JSON.parse(window.pagesimDebug()).gen > %d`, d.Gen))
}

// Eval evaluates a JavaScript expression and decodes its value into T.
func Eval[T any](p *Page, expr string) T {
	p.t.Helper()
	v, err := chromedp.Run(p.ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		p.t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

// WaitJS waits until a JavaScript expression is truthy (checked on every
// animation frame).
func (p *Page) WaitJS(expr string) {
	p.t.Helper()
	p.WaitJSWithin(expr, 60*time.Second)
}

// WaitJSWithin is WaitJS with a timeout of d.
func (p *Page) WaitJSWithin(expr string, d time.Duration) {
	p.t.Helper()
	if _, err := chromedp.Run(p.ctx, chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(d))); err != nil {
		p.t.Fatalf("waiting for %s: %v", expr, err)
	}
}

// Frames returns window.pagesimFrames.
func (p *Page) Frames() int {
	return Eval[int](p, `window.pagesimFrames || 0`)
}

// WaitFrames waits until n more frames have been drawn.
func (p *Page) WaitFrames(n int) {
	p.t.Helper()
	p.WaitJS(fmt.Sprintf(`(window.pagesimFrames || 0) >= %d`, p.frames0()+n))
}

func (p *Page) frames0() int {
	v, err := chromedp.Run(p.ctx, chromedp.Evaluate[int](`window.pagesimFrames || 0`))
	if err != nil {
		return 0
	}
	return v
}

// Debug is window.pagesimDebug()'s report.
type Debug = mapview.DebugReport

// Debug reads the page's debug report.
func (p *Page) Debug() Debug {
	p.t.Helper()
	s := Eval[string](p, `window.pagesimDebug ? window.pagesimDebug() : "{}"`)
	var d Debug
	if err := json.Unmarshal([]byte(s), &d); err != nil {
		p.t.Fatalf("debug report %q: %v", s, err)
	}
	return d
}

// WaitSettled waits until the runs stopped moving (paused, caught up)
// and the canvas shows their state, and returns the debug report then.
func (p *Page) WaitSettled() Debug {
	p.t.Helper()
	p.WaitJS(`JSON.parse(window.pagesimDebug()).settled`)
	p.WaitFrames(1) // the frame whose Update reported it has been drawn
	d := p.Debug()
	if !d.Settled {
		return p.WaitSettled()
	}
	return d
}

// Text returns the text content of the element with the given id.
func (p *Page) Text(id string) string {
	p.t.Helper()
	return Eval[string](p, fmt.Sprintf(`(document.getElementById(%q) || {textContent: "<missing #%s>"}).textContent`, id, id))
}

// Click clicks the element with the given id (a real DOM click event).
func (p *Page) Click(id string) {
	p.t.Helper()
	Eval[bool](p, fmt.Sprintf(`(() => { document.getElementById(%q).click(); return true; })()`, id))
}

// SetField types value into the input with the given id and commits it
// as a person leaving the field does (a change event).
func (p *Page) SetField(id, value string) {
	p.t.Helper()
	Eval[bool](p, fmt.Sprintf(`(() => { const e = document.getElementById(%q); e.value = %q; e.dispatchEvent(new Event("input", {bubbles: true})); e.dispatchEvent(new Event("change", {bubbles: true})); return true; })()`, id, value))
}

// GrantClipboard lets the page read and write the clipboard.
func (p *Page) GrantClipboard() {
	p.t.Helper()
	u, err := url.Parse(server.URL)
	require.NoError(p.t, err)
	for _, name := range []string{"clipboard-read", "clipboard-write"} {
		_, err := chromedp.CallBrowser(p.ctx, browser.SetPermission, browser.SetPermissionParams{
			Permission: &browser.PermissionDescriptor{Name: name}, Setting: browser.PermissionSettingGranted, Origin: u.Scheme + "://" + u.Host,
		})
		require.NoError(p.t, err)
	}
}

// Press presses a key on the focused element and releases it two frames
// later, as a person's key press lasts: the game reads the keyboard once a
// frame, and a press released within the same frame could go unseen.
func (p *Page) Press(key rune) {
	p.t.Helper()
	for _, ev := range kb.Encode(key) {
		if ev.Type == input.DispatchKeyEventTypeKeyUp {
			p.WaitFrames(2)
		}
		if _, err := chromedp.Call(p.ctx, input.DispatchKeyEvent, *ev); err != nil {
			p.t.Fatalf("key %q: %v", key, err)
		}
	}
}

// Screenshot captures the viewport.
func (p *Page) Screenshot() image.Image {
	p.t.Helper()
	buf, err := chromedp.Run(p.ctx, chromedp.CaptureScreenshot())
	if err != nil {
		p.t.Fatalf("screenshot: %v", err)
	}
	img, err := png.Decode(bytes.NewReader(buf))
	if err != nil {
		p.t.Fatalf("decoding the screenshot: %v", err)
	}
	return img
}
