//go:build browser && !(js && wasm)

package e2e

import (
	"bytes"
	"encoding/json"
	"errors"

	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pagesim/pagesim/ui/app"
)

// pageScript is short but does what scripts do: a machine, memory put to
// use, a task that runs while time advances, /proc files and counters.
const pageScript = `machine mem=64M layout=simple cpus=2
region heap size=24M madvise=nohugepage
task hog fault region=heap cpu=1
run until=hog-done
fragment heap every=2
drain
print buddyinfo
print heap nr_free_pages
trace enable compaction
alloc huge gfp=GFP_TRANSHUGE_LIGHT|__GFP_DIRECT_RECLAIM order=9 count=all
print huge.chunks compact_stall
`

// nativeScript runs pagesim script on src as a file called script.txt
// (the page's name for its script) and returns standard output, standard
// error, and the files the extra arguments name, read back.
func nativeScript(t *testing.T, src string, args ...string) (stdout, stderr string, dir string) {
	t.Helper()
	return nativeScriptStart(t, src, args...)()
}

// nativeScriptStart starts nativeScript in the background (cores the page
// leaves idle run it while the page runs its own) and returns the
// function that waits for it and returns what nativeScript does.
func nativeScriptStart(t *testing.T, src string, args ...string) func() (stdout, stderr string, dir string) {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "script.txt"), []byte(src), 0o644))
	cmd := exec.Command(pagesimBin, append([]string{"script", "script.txt"}, args...)...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	done := make(chan error, 1)
	go func() { done <- cmd.Run() }()
	return func() (string, string, string) {
		t.Helper()
		err := <-done
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatalf("pagesim script: %v", err)
		}
		return out.String(), errb.String(), dir
	}
}

// waitScriptEnded waits until the Script mode's run has ended.
func (p *Page) waitScriptEnded() {
	p.t.Helper()
	p.WaitJS(`(() => { const s = document.getElementById("script-status"); return s && (s.textContent === "done" || s.textContent === "stopped on an error"); })()`)
}

func TestAScriptWrittenInThePagePrintsWhatPagesimScriptPrints(t *testing.T) {
	native := nativeScriptStart(t, pageScript) // while the page opens
	traced := nativeScriptStart(t, pageScript, "--trace", "native.json", "--trace-report", "native.report.txt")
	p := Open(t, "")
	want, _, _ := native()
	require.Contains(t, want, "Node 0, zone   Normal")

	p.Click("script-open")
	p.WaitJS(`document.getElementById("script-src") !== null`)
	p.SetField("script-src", pageScript)
	p.Click("script-run")
	p.waitScriptEnded()
	assert.Equal(t, "done", p.Text("script-status"))
	assert.Equal(t, want, p.Text("script-output"), "byte for byte what pagesim script prints")
	assert.Equal(t, "pagesim script script.txt", p.Text("script-command"))
	link := Eval[string](p, `document.getElementById("script-link").value`)
	require.True(t, strings.HasPrefix(link, server.URL+"/#v1/script?src="), link)
	assert.Equal(t, link[len(server.URL)+1:], Eval[string](p, "location.hash"), "the address bar carries the script's link")

	t.Run("its link in a fresh browser gets the same output", func(t *testing.T) {
		q := OpenURL(t, link)
		q.WaitJS(`document.getElementById("script-src") !== null`)
		q.waitScriptEnded()
		assert.Equal(t, pageScript, Eval[string](q, `document.getElementById("script-src").value`))
		assert.Equal(t, want, q.Text("script-output"))
		assert.Equal(t, link[len(server.URL)+1:], Eval[string](q, "location.hash"), "the scenarios did not take the address bar")
	})

	_, _, dir := traced()
	t.Run("the traces download as pagesim script --trace writes them", func(t *testing.T) {
		p.t = t
		down := t.TempDir()
		_, err := chromedp.CallBrowser(p.ctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{Behavior: browser.SetDownloadBehaviorBehaviorAllow, DownloadPath: down})
		require.NoError(t, err)
		p.Click("script-trace")
		p.Click("script-report")
		for _, f := range []struct{ page, native string }{{"script.json", "native.json"}, {"script.report.txt", "native.report.txt"}} {
			got := waitFile(t, filepath.Join(down, f.page))
			wantB, err := os.ReadFile(filepath.Join(dir, f.native))
			require.NoError(t, err)
			assert.True(t, bytes.Equal(wantB, got), "%s: %d bytes, pagesim script --trace wrote %d", f.page, len(got), len(wantB))
		}
		var doc struct {
			TraceEvents []struct {
				Ph string  `json:"ph"`
				Ts float64 `json:"ts"`
			} `json:"traceEvents"`
		}
		require.NoError(t, json.Unmarshal(waitFile(t, filepath.Join(down, "script.json")), &doc))
		phases := map[string]int{}
		for _, e := range doc.TraceEvents {
			phases[e.Ph]++
		}
		assert.Positive(t, phases["X"], "slices")
		assert.Positive(t, phases["i"], "tracepoints")
		assert.Positive(t, phases["C"], "counters")
	})

	t.Run("an error is shown at its line, as the command names it, before anything runs", func(t *testing.T) {
		p.t = t
		bad := "machine mem=64M\necho hello\nregion heap szie=1M\n"
		out, stderr, _ := nativeScript(t, bad)
		require.Empty(t, out)
		p.SetField("script-src", bad)
		assert.Equal(t, strings.TrimSuffix(stderr, "\n"), p.Text("script-check"))
		assert.Equal(t, "3", Eval[string](p, `document.querySelector(".script-editor .gutter span.bad").textContent`))
		p.Click("script-run")
		p.waitScriptEnded()
		assert.Equal(t, strings.TrimSuffix(stderr, "\n"), p.Text("script-error"))
		assert.Empty(t, p.Text("script-output"), "the echo on line 2 did not run")
	})
}

// waitFile waits until a download has been written whole and returns it.
func waitFile(t *testing.T, path string) []byte {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, err := os.ReadFile(path)
		if err == nil {
			if _, err := os.Stat(path + ".crdownload"); err != nil {
				return b
			}
		}
		if time.Now().After(deadline) {
			entries, _ := os.ReadDir(filepath.Dir(path))
			t.Fatalf("%s was not downloaded (the folder has %d entries)", path, len(entries))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestARealMachinesProcFilesPickedInThePageShowWhatPagesimProcImportPrints(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join(repoRoot, "engine", "procfs", "testdata", "fixtures", "jc-linux-proc"))
	require.NoError(t, err)
	cmd := exec.Command(pagesimBin, "proc", "buddyinfo", "--import", dir)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	require.NoError(t, cmd.Run())
	require.Contains(t, errb.String(), "pagesim proc: warning: ")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var files []string
	for _, e := range entries {
		files = append(files, filepath.Join(dir, e.Name()))
	}

	p := Open(t, "")
	p.Click("script-open")
	p.WaitJS(`document.getElementById("import-open") !== null`)
	p.Click("import-open")
	p.WaitJS(`document.getElementById("import-files") !== null`)
	_, err = chromedp.Run(p.ctx, chromedp.SetUploadFiles(chromedp.CSS("#import-files"), files))
	require.NoError(t, err)
	p.WaitJS(`document.getElementById("import-buddyinfo") !== null || document.getElementById("import-error") !== null`)
	require.Equal(t, "<missing #import-error>", p.Text("import-error"))
	assert.Equal(t, out.String(), p.Text("import-buddyinfo"), "the buddyinfo pagesim proc buddyinfo --import prints")
	assert.Equal(t, errb.String(), p.Text("import-warnings"), "the warnings it writes")
	assert.Contains(t, p.Text("import-label"), "6 files")
	p.WaitJS(`(() => { const d = JSON.parse(window.pagesimDebug()); return d.columns && d.columns[0] === "imported: 6 files"; })()`)
	imported := p.Debug()
	assert.Positive(t, imported.Pages, "the map draws the imported machine before any script runs")
	assert.Zero(t, imported.NowNS)
	assert.False(t, imported.Playing, "no clock runs on it")

	t.Run("a script boots it with import, as pagesim script --import does", func(t *testing.T) {
		p.t = t
		require.Equal(t, "import\nprint buddyinfo\n", Eval[string](p, `document.getElementById("script-src").value`))
		want, _, _ := nativeScript(t, "import\nprint buddyinfo\n", "--import", dir)
		p.Click("script-run")
		p.waitScriptEnded()
		assert.Equal(t, want, p.Text("script-output"))
		d := p.Debug()
		assert.Equal(t, []string{app.ScriptName}, d.Columns, "the script's machine replaces it")
		assert.Equal(t, imported.Pages, d.Pages, "the same machine, booted by the script")
	})
}

func TestAScenarioRunsTraceDownloadsFromThePageUpToTheCurrentTime(t *testing.T) {
	p := Open(t, "v1/thp-thisnode?seed=1&scale=0.03")
	p.Click("trace-record")
	p.WaitJS(`document.getElementById("trace-json-upstream") !== null`)
	p.Click("step")
	d := p.WaitSettled()
	require.Positive(t, d.NowNS)
	down := t.TempDir()
	_, err := chromedp.CallBrowser(p.ctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{Behavior: browser.SetDownloadBehaviorBehaviorAllow, DownloadPath: down})
	require.NoError(t, err)
	p.Click("trace-json-upstream")
	p.Click("trace-report-upstream")
	b := waitFile(t, filepath.Join(down, "thp-thisnode-upstream-run1.json"))
	var doc struct {
		TraceEvents []struct {
			Ph  string  `json:"ph"`
			Ts  float64 `json:"ts"`
			Pid *int    `json:"pid"`
		} `json:"traceEvents"`
	}
	require.NoError(t, json.Unmarshal(b, &doc), "Chrome's JSON trace event format")
	last, phases := 0.0, map[string]int{}
	for _, e := range doc.TraceEvents {
		require.NotNil(t, e.Pid)
		phases[e.Ph]++
		if e.Ph == "M" {
			continue
		}
		require.GreaterOrEqual(t, e.Ts, last, "time-ordered")
		last = e.Ts
	}
	assert.Positive(t, phases["C"], "counter tracks")
	assert.Positive(t, phases["M"], "the tasks, CPUs and memory named")
	assert.LessOrEqual(t, last, float64(d.NowNS)/1000, "up to the current time")
	report := string(waitFile(t, filepath.Join(down, "thp-thisnode-upstream-run1.txt")))
	assert.Contains(t, report, "cpus=")
}

func TestProcFilesPastedInThePageShowWhatPagesimProcImportPrints(t *testing.T) {
	src := filepath.Join(repoRoot, "engine", "procfs", "testdata", "fixtures", "myblackhole-x86-6types")
	cmd := exec.Command(pagesimBin, "proc", "buddyinfo", "--import", src)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	require.NoError(t, cmd.Run())
	buddy, err := os.ReadFile(filepath.Join(src, "buddyinfo"))
	require.NoError(t, err)
	pti, err := os.ReadFile(filepath.Join(src, "pagetypeinfo"))
	require.NoError(t, err)

	p := Open(t, "")
	p.Click("script-open")
	p.WaitJS(`document.getElementById("import-open") !== null`)
	p.Click("import-open")
	p.WaitJS(`document.getElementById("paste-buddyinfo") !== null`)
	Eval[bool](p, `(() => { document.getElementById("import-paste").open = true; return true; })()`)
	p.SetField("paste-buddyinfo", string(buddy))
	p.SetField("paste-pagetypeinfo", string(pti))
	p.Click("import-pasted")
	p.WaitJS(`document.getElementById("import-buddyinfo") !== null || document.getElementById("import-error") !== null`)
	require.Equal(t, "<missing #import-error>", p.Text("import-error"))
	assert.Equal(t, out.String(), p.Text("import-buddyinfo"))
	assert.Equal(t, errb.String(), p.Text("import-warnings"))

	t.Run("its link carries the machine to a fresh browser", func(t *testing.T) {
		p.t = t
		p.Click("script-run")
		p.waitScriptEnded()
		want := p.Text("script-output")
		require.Contains(t, want, "Node 0, zone")
		link := Eval[string](p, `document.getElementById("script-link").value`)
		require.Contains(t, link, "&dump=")
		q := OpenURL(t, link)
		q.WaitJS(`document.getElementById("import-buddyinfo") !== null`)
		q.waitScriptEnded()
		assert.Equal(t, out.String(), q.Text("import-buddyinfo"))
		assert.Equal(t, want, q.Text("script-output"))
	})
}

// liveScript runs long enough on the page's clock to be watched: a task
// faults memory, then three simulated seconds pass.
const liveScript = `machine mem=64M layout=simple cpus=2
region heap size=16M madvise=nohugepage
task hog fault region=heap cpu=1
run until=hog-done
run 3s
print heap nr_free_pages
echo end
`

func TestTheMapShowsAScriptsMachineUnderThePagesClock(t *testing.T) {
	native := nativeScriptStart(t, liveScript) // while the page opens
	p := Open(t, "")
	want, _, _ := native()
	scenarioCols := p.Debug().Columns
	require.NotEmpty(t, scenarioCols)
	p.Click("script-open")
	p.WaitJS(`document.getElementById("script-src") !== null`)
	p.SetField("script-src", liveScript)
	p.SetField("speed", "1")
	p.Click("script-run")
	p.WaitJS(`(() => { const d = JSON.parse(window.pagesimDebug()); return d.columns && d.columns[0] === "script.txt" && d.nowNs > 200e6; })()`)
	d := p.Debug()
	assert.Equal(t, []string{"script.txt"}, d.Columns, "the map shows the script's machine")
	assert.GreaterOrEqual(t, d.Pages, uint64(64<<20>>12), "its 64 MiB of pages")
	assert.True(t, d.Playing)
	assert.Less(t, d.NowNS, int64(3e9), "at x1 the script's three seconds take three seconds")
	assert.Equal(t, "running…", p.Text("script-status"))
	assert.NotContains(t, p.Text("script-output"), "end")

	t.Run("paused, its time stands still and the page answers", func(t *testing.T) {
		p.t = t
		p.Click("play")
		p.WaitJS(`!JSON.parse(window.pagesimDebug()).playing`)
		d := p.WaitSettled()
		f := p.Frames()
		time.Sleep(700 * time.Millisecond)
		assert.Equal(t, d.NowNS, p.Debug().NowNS)
		assert.Greater(t, p.Frames(), f+5, "frames go on")
		assert.Equal(t, "running…", p.Text("script-status"))
		var hasTitle bool
		for _, l := range p.Debug().Labels {
			hasTitle = hasTitle || strings.HasPrefix(l.Text, "script.txt")
		}
		assert.True(t, hasTitle, "the column is titled with the script's name")
	})

	t.Run("at x1000 it ends and prints what pagesim script prints", func(t *testing.T) {
		p.t = t
		p.SetField("speed", "1000")
		p.Click("play")
		p.waitScriptEnded()
		assert.Equal(t, "done", p.Text("script-status"))
		assert.Equal(t, want, p.Text("script-output"))
		d := p.Debug()
		assert.True(t, d.Ended)
		assert.GreaterOrEqual(t, d.NowNS, int64(3e9))
	})

	t.Run("closing the mode gives the map back to the scenario", func(t *testing.T) {
		p.t = t
		p.Click("script-close")
		p.WaitJS(`JSON.parse(window.pagesimDebug()).columns[0] !== "script.txt"`)
		assert.Equal(t, scenarioCols, p.Debug().Columns)
	})
}

// "This scenario as a script" on an imported machine: a scenario whose
// workload the language writes, and that makes sense there, becomes a
// script that boots the machine with import; the others say why not.
func TestAScenarioRunsOnAnImportedMachineAsAScriptOrSaysWhyNot(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join(repoRoot, "engine", "procfs", "testdata", "fixtures", "jc-linux-proc"))
	require.NoError(t, err)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var files []string
	for _, e := range entries {
		files = append(files, filepath.Join(dir, e.Name()))
	}
	p := Open(t, "v1/thp-thisnode")
	p.Click("script-open")
	p.WaitJS(`document.getElementById("import-open") !== null`)
	p.Click("import-open")
	p.WaitJS(`document.getElementById("import-files") !== null`)
	_, err = chromedp.Run(p.ctx, chromedp.SetUploadFiles(chromedp.CSS("#import-files"), files))
	require.NoError(t, err)
	p.WaitJS(`document.getElementById("import-buddyinfo") !== null`)

	p.Click("script-scenario")
	p.WaitJS(`document.getElementById("script-scenario-error") !== null`)
	assert.Equal(t, "thp-thisnode maps a guest bigger than node 0 on a host with two NUMA nodes: the imported machine has 1 node", p.Text("script-scenario-error"))
	assert.Equal(t, "import\nprint buddyinfo\n", Eval[string](p, `document.getElementById("script-src").value`), "the editor is left alone")

	// Seed 001's pressure and benchmark, sized for the imported machine
	// (not run here: its 4 GiB take minutes in the page).
	p.SetField("scenario", "nofrag-watermark")
	p.WaitJS(`JSON.parse(window.pagesimDebug()).link.startsWith("v1/nofrag-watermark")`)
	p.Click("script-scenario")
	p.WaitJS(`document.getElementById("script-src").value.startsWith("# seed 001 on the imported machine")`)
	assert.Equal(t, "<missing #script-scenario-error>", p.Text("script-scenario-error"))
	assert.Equal(t, 3, strings.Count(Eval[string](p, `document.getElementById("script-src").value`), "\nimport\n"))

	p.SetField("scenario", "playground")
	p.WaitJS(`JSON.parse(window.pagesimDebug()).link.startsWith("v1/playground")`)
	p.Click("script-scenario")
	p.WaitJS(`document.getElementById("script-src").value.startsWith("# the playground's churn on the imported machine")`)
	assert.Equal(t, "<missing #script-scenario-error>", p.Text("script-scenario-error"))
	src := Eval[string](p, `document.getElementById("script-src").value`)
	require.Contains(t, src, "\nimport\n")
	native := nativeScriptStart(t, src, "--import", dir) // while the page runs it
	p.Click("script-run-end")
	p.WaitJS(`(() => { const d = JSON.parse(window.pagesimDebug()); return d.columns && d.columns[0] === "script.txt"; })()`)
	p.waitScriptEnded()
	want, stderr, _ := native()
	require.Empty(t, stderr)
	assert.Equal(t, "done", p.Text("script-status"))
	assert.Equal(t, want, p.Text("script-output"), "what pagesim script --import prints")
	assert.Contains(t, want, "pgalloc_normal")
}

// "This scenario as a script" on the scenario's own machine: seed 001's
// example (docs/SCRIPT.md), run in the page to the end, prints what
// pagesim script prints.
func TestNofragWatermarkAsAScriptStartsFromSeed001sExample(t *testing.T) {
	p := Open(t, "v1/nofrag-watermark")
	p.Click("script-open")
	p.WaitJS(`document.getElementById("script-scenario") !== null`)
	p.Click("script-scenario")
	p.WaitJS(`document.getElementById("script-src").value.startsWith("# vm.defrag_mode=0\nmachine mem=256M")`)
	assert.Equal(t, "<missing #script-scenario-error>", p.Text("script-scenario-error"))
	src := Eval[string](p, `document.getElementById("script-src").value`)
	assert.Contains(t, src, "randread")
	assert.Contains(t, src, "slabcycle")
	native := nativeScriptStart(t, src) // while the page runs it
	p.Click("script-run-end")
	p.waitScriptEnded()
	want, stderr, _ := native()
	require.Empty(t, stderr)
	require.Contains(t, want, "thp.64kB.anon_fault_fallback")
	assert.Equal(t, "done", p.Text("script-status"))
	assert.Equal(t, want, p.Text("script-output"), "what pagesim script prints")
}
