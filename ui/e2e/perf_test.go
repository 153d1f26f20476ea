//go:build browser && !(js && wasm)

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/performance"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pagesim/pagesim/internal/bench"
	"github.com/pagesim/pagesim/ui/app"
)

// TestTheEngineBenchmarkRunsInTheBrowser runs internal/bench's workloads
// natively (`pagesim bench`) and in the page (window.pagesimBench), checks
// both sides did the same work, and logs the wall time per operation for
// docs/PERFORMANCE.md (a figure, never an assertion: timings depend on the
// machine).
//
// Both binaries are built as a visitor gets them: the wasm by build.sh and
// the native command by `go build`, each with the PGO profile in
// wasm/default.pgo. The browser's first run is logged apart: V8 first runs
// the wasm as baseline (Liftoff) code and optimizes hot functions in the
// background, so a cold run is slower than a warm one. Then the sides take
// turns (five native runs, four in the page, twice) and each keeps its
// fastest run, so a hiccup of the shared machine counts less. The goal
// (docs/PERFORMANCE.md) is 3x.
//
// Go's WebAssembly keeps its own stack in linear memory and checks for a
// goroutine switch after every call, so call-dense loops (the allocator's
// fast path) pay more than the scenario as a whole, and inlining (which
// the profile guides) helps the wasm binary more than the native one.
func TestTheEngineBenchmarkRunsInTheBrowser(t *testing.T) {
	measurement(t)
	// The native side is the pagesim binary (built like `make pagesim`,
	// with the same PGO profile as the wasm binary). Both sides run in
	// turn, twice, so a busy spell of the shared machine hits both, and
	// each keeps its fastest run.
	native := func(n []bench.Result) []bench.Result {
		out, err := exec.Command(pagesimBin, "bench", "--count", "5", "--format", "json").Output()
		require.NoError(t, err)
		var v struct{ Results []bench.Result }
		require.NoError(t, json.Unmarshal(out, &v))
		require.Len(t, v.Results, len(bench.Workloads))
		return bench.Fastest(n, v.Results)
	}
	p := Open(t, "v1/playground?mem=16")
	p.WaitSettled()
	browser := func() []bench.Result {
		var v struct {
			Results []bench.Result
			Error   string
		}
		require.NoError(t, json.Unmarshal([]byte(Eval[string](p, `window.pagesimBench()`)), &v))
		require.Empty(t, v.Error)
		require.Len(t, v.Results, len(bench.Workloads))
		return v.Results
	}
	cold := browser()
	var n, b []bench.Result
	for round := 0; round < 2; round++ {
		n = native(n)
		for i := 0; i < 4; i++ {
			b = bench.Fastest(b, browser())
		}
	}
	for i := range n {
		ratio := b[i].NsPerOp / n[i].NsPerOp
		t.Logf("%-48s native %11.1f ns/op  browser %11.1f ns/op (cold run %11.1f)  ratio %.2f (cold %.2f)",
			n[i].Name, n[i].NsPerOp, b[i].NsPerOp, cold[i].NsPerOp, ratio, cold[i].NsPerOp/n[i].NsPerOp)
		assert.Equal(t, n[i].Check, b[i].Check, "%s: the browser did the same work", n[i].Name)
		assert.Equal(t, n[i].Check, cold[i].Check, "%s: the cold run did the same work", n[i].Name)
		assert.Greater(t, b[i].NsPerOp, 0.0, "%s: the page timed its run", n[i].Name)
	}
}

// TestStartUp opens the page five times as a first-time visitor
// (OpenAsVisitor: a new browser context each time, so nothing is cached)
// and logs when the first frame was drawn and presented, for
// docs/PERFORMANCE.md: a figure, not an assertion. The first visit also
// pays for the browser's GPU process starting SwiftShader, so the median
// is the figure to compare with the goal.
func TestStartUp(t *testing.T) {
	measurement(t)
	const visits = 5
	keys := []string{"wasmResponseEnd", "instantiated", "main", "update", "firstFrame", "firstPresented", "booted", "firstMap", "panel"}
	runs := map[string][]float64{}
	for i := 0; i < visits; i++ {
		{
			p := OpenAsVisitor(t, "")
			m := startupMarks(p)
			line := fmt.Sprintf("visit %d:", i+1)
			for _, k := range keys {
				runs[k] = append(runs[k], m[k])
				line += fmt.Sprintf(" %s %.0f", k, m[k])
			}
			t.Log(line)
			p.Close()
		}
	}
	line := fmt.Sprintf("start-up, median of %d first visits (ms after navigation):", visits)
	for _, k := range keys {
		v := slices.Clone(runs[k])
		slices.Sort(v)
		line += fmt.Sprintf(" %s %.0f", k, v[visits/2])
	}
	t.Log(line)
}

// TestThePagesDefaultRunAtEachScale plays thp-thisnode's default run (its
// default variants, seed 1, the page's other parameters;
// PAGESIM_SCENARIO names another scenario) to its end at the top speed,
// waiting up to 7 minutes, at each scale of PAGESIM_SCALES (default: the
// scale the page opens it at), and logs the wall time and the
// tab's main-thread busy time (CDP Performance.getMetrics' TaskDuration)
// from Play to the end: the figures that pick the page's scale
// (docs/PERFORMANCE.md, "The page's scale"). A scale whose run does not
// end within the harness's wait fails its subtest.
func TestThePagesDefaultRunAtEachScale(t *testing.T) {
	measurement(t)
	busy := func(p *Page) float64 {
		m, err := chromedp.Call(p.ctx, performance.GetMetrics, cdp.Empty{})
		require.NoError(t, err)
		for _, x := range m.Metrics {
			if x.Name == "TaskDuration" {
				return x.Value
			}
		}
		t.Fatal("no TaskDuration metric")
		return 0
	}
	id := os.Getenv("PAGESIM_SCENARIO")
	if id == "" {
		id = "thp-thisnode"
	}
	cat, err := app.DefaultCatalog()
	require.NoError(t, err)
	s, ok := cat.Lookup(id)
	require.True(t, ok, id)
	scales := os.Getenv("PAGESIM_SCALES")
	if scales == "" {
		scales = s.PageParams["scale"]
	}
	// The page's values besides scale (noretry-compaction's cpus and
	// clients), in a fixed order.
	var page []string
	for k, v := range s.PageParams {
		if k != "scale" {
			page = append(page, "&"+k+"="+v)
		}
	}
	slices.Sort(page)
	for _, sc := range strings.Split(scales, ",") {
		t.Run(sc, func(t *testing.T) {
			p := OpenWithin(t, "v1/"+id+"?seed=1&x=1000"+strings.Join(page, "")+"&scale="+sc, 8*time.Minute)
			p.t = t
			_, err := chromedp.Call(p.ctx, performance.Enable, performance.EnableParams{})
			require.NoError(t, err)
			p.WaitSettled()
			b0, w0 := busy(p), Eval[float64](p, `performance.now()`)
			p.Click("play")
			p.WaitJSWithin(`JSON.parse(window.pagesimDebug()).ended`, 7*time.Minute)
			b1, w1 := busy(p), Eval[float64](p, `performance.now()`)
			t.Logf("scale %s: the default run played to its end (%.3f simulated s) in %.1f s wall, the tab's main thread busy %.1f s",
				sc, float64(p.Debug().NowNS)/1e9, (w1-w0)/1000, b1-b0)
		})
	}
}
