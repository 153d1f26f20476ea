package panel

// script.go is the panel's Script mode (script.vugu): an editor with line
// numbers, Run, Stop and Reset, the output exactly as `pagesim script`
// prints it, the error at its line, the examples of docs/SCRIPT.md, the
// script's link and its downloads. app.ScriptRunner runs the script.

import (
	"bytes"
	"errors"
	"strconv"
	"strings"

	"github.com/vugu/vugu"

	"github.com/pagesim/pagesim/engine/procfs"
	"github.com/pagesim/pagesim/engine/scenario"
	"github.com/pagesim/pagesim/engine/script"
	"github.com/pagesim/pagesim/ui/app"
)

// ScriptHost is what the Script mode needs from the browser.
type ScriptHost interface {
	Host
	// Download offers data as a file called name.
	Download(name, mime string, data []byte)
	// SetFragment sets the URL fragment (a new history entry if push).
	SetFragment(frag string, push bool)
	// ReadFiles reads the files picked in a file input, after check
	// has seen their names and sizes.
	ReadFiles(inputID string, check func(names []string, sizes []int64) error, done func(names []string, data [][]byte, err error))
}

// ScriptMode is the Script mode's component.
type ScriptMode struct {
	Runner *app.ScriptRunner
	Host   ScriptHost
	// Backend, if set, is told when the mode opens and closes: the map
	// shows the script's machine while it is open.
	Backend Backend
	// Scenario is the scenario the page shows, whose workload "This
	// scenario as a script" starts from.
	Scenario *scenario.Spec
	// ScenarioLink is the scenarios' permalink, which the address bar
	// gets back when the mode closes.
	ScenarioLink string

	open     bool
	src      string // the editor's text
	loaded   uint64 // the runner's Loaded last shown
	checkErr string // the editor's text does not check: the error
	errLine  int    // the line checkErr or the run's error names
	copied   string
	// scenarioErr says why the scenario has no script (on the imported
	// machine, when there is one).
	scenarioErr string
	state       app.ScriptState
	lastDump    *app.DumpState // the dump the editor last started from
	// importOpen shows "Start from a machine".
	importOpen bool
	pasted     map[string]string // /proc file name -> text pasted
	eventEnv   vugu.EventEnv
}

// Init remembers the EventEnv for callbacks that finish later.
func (c *ScriptMode) Init(ctx vugu.InitCtx) { c.eventEnv = ctx.EventEnv() }

// Compute takes the runner's state for this build, and a script a link
// loaded into the editor.
func (c *ScriptMode) Compute() {
	if c.Runner == nil {
		return
	}
	c.state = c.Runner.State()
	if d := c.state.Dump; d != c.lastDump {
		c.lastDump = d
		c.setOpen(true)
		if d != nil && d.Err == "" && !strings.HasPrefix(c.src, "import") {
			c.src = app.ImportStarter
			c.recheck()
		}
	}
	// A link's script, after its dump: the link's script stays.
	if c.state.Loaded != c.loaded {
		c.loaded = c.state.Loaded
		c.src = c.state.Src
		c.setOpen(true)
		c.recheck()
	}
}

// pasteFiles are the /proc files the import takes pasted.
var pasteFiles = procfs.DumpFiles

func (c *ScriptMode) paste(name string, e vugu.DOMEvent) {
	if c.pasted == nil {
		c.pasted = map[string]string{}
	}
	c.pasted[name] = e.PropString("target", "value")
}

// importPasted imports the files pasted (the empty ones left out).
func (c *ScriptMode) importPasted() {
	var names []string
	var data [][]byte
	for _, f := range pasteFiles {
		if t := c.pasted[f]; strings.TrimSpace(t) != "" {
			names = append(names, f)
			data = append(data, []byte(t))
		}
	}
	var err error
	if len(names) == 0 {
		err = errors.New("nothing is pasted")
	}
	c.Runner.ImportFiles(names, data, err)
}

func (c *ScriptMode) showImport()       { c.importOpen = true }
func (c *ScriptMode) importShown() bool { return c.importOpen || c.state.Dump != nil }

// importPicked imports the files picked in a file input.
func (c *ScriptMode) importPicked(id string) {
	if c.Host == nil {
		return
	}
	c.Host.ReadFiles(id, app.CheckDumpSizes, c.Runner.ImportFiles)
}

func (c *ScriptMode) dump() *app.DumpState {
	if c.state.Dump == nil {
		return &app.DumpState{}
	}
	return c.state.Dump
}

// captureCommand is the one line that collects a dump on a Linux machine
// (pagetypeinfo is readable by root only since Linux 5.6).
const captureCommand = `mkdir -p dump/sys_vm && for f in buddyinfo zoneinfo vmstat; do cat /proc/$f > dump/$f; done && sudo cat /proc/pagetypeinfo > dump/pagetypeinfo && for f in /proc/sys/vm/*; do cat "$f" > "dump/sys_vm/${f##*/}" 2>/dev/null; done; tar czf dump.tar.gz dump`

func (c *ScriptMode) st() *app.ScriptState { return &c.state }

func (c *ScriptMode) isOpen() bool { return c.open }

// setOpen opens or closes the mode, and tells the controller, which
// shows the script's machine on the map while the mode is open.
func (c *ScriptMode) setOpen(on bool) {
	if c.open == on {
		return
	}
	c.open = on
	if c.Backend != nil {
		c.Backend.Do(func(ctl *app.Controller) { ctl.ShowScript(on) })
	}
}

func (c *ScriptMode) openMode() {
	c.setOpen(true)
	if c.src == "" {
		c.src = script.Examples[0].Src
		c.recheck()
	}
}

// closeMode hides the editor and gives the address bar the scenarios'
// link back.
func (c *ScriptMode) closeMode() {
	c.setOpen(false)
	if c.Runner.LinkShown() {
		c.Runner.ShowLink(false)
		if c.Host != nil && c.ScenarioLink != "" {
			c.Host.SetFragment(c.ScenarioLink, false)
		}
	}
}

// fromScenario puts the scenario's workload in the editor as a script,
// on the imported machine if there is one, or says why it cannot.
func (c *ScriptMode) fromScenario() {
	c.scenarioErr = ""
	if c.Scenario == nil {
		return
	}
	src, err := c.Runner.ScenarioScript(c.Scenario)
	if err != nil {
		c.scenarioErr = err.Error()
		return
	}
	c.src = src
	c.recheck()
}

func (c *ScriptMode) pickExample(e vugu.DOMEvent) {
	i, err := strconv.Atoi(e.PropString("target", "value"))
	if err != nil || i < 0 || i >= len(script.Examples) {
		return
	}
	c.src = script.Examples[i].Src
	c.recheck()
}

func (c *ScriptMode) edit(e vugu.DOMEvent) {
	c.src = e.PropString("target", "value")
	c.recheck()
}

// recheck checks the editor's text as `pagesim script` would before
// running it.
func (c *ScriptMode) recheck() {
	c.checkErr, c.errLine = "", 0
	if err := script.Check(app.ScriptName, []byte(c.src)); err != nil {
		c.checkErr = err.Error()
		var se *script.Error
		if e, ok := err.(*script.Error); ok {
			se = e
			c.errLine = se.Line
		}
	}
}

// run runs the editor's text on the page's clock (the map shows its
// machine, the page's play, pause, step and speed act on it) and puts its
// link in the address bar; toEnd runs it as fast as the page's frames
// allow instead.
func (c *ScriptMode) run(toEnd bool) {
	if toEnd {
		c.Runner.RunToEnd(c.src, nil)
	} else {
		c.Runner.Run(c.src, nil)
	}
	if frag, err := c.Runner.Link(c.src); err == nil && c.Host != nil {
		c.Host.SetFragment(frag, false)
		c.Runner.ShowLink(true)
	}
}

func (c *ScriptMode) stop()  { c.Runner.Stop() }
func (c *ScriptMode) reset() { c.Runner.Reset() }

func (c *ScriptMode) lineCount() int {
	return max(strings.Count(c.src, "\n")+1, 3)
}

// lineClass marks the line an error names.
func (c *ScriptMode) lineClass(i int) string {
	line := c.errLine
	if c.checkErr == "" && c.state.Src == c.src {
		line = c.state.ErrLine
	}
	if i == line {
		return "bad"
	}
	return ""
}

// status says where the run is.
func (c *ScriptMode) status() string {
	s := c.st()
	switch {
	case s.Running:
		return "running…"
	case s.Ran && s.Err == "":
		return "done"
	case s.Ran:
		return "stopped on an error"
	}
	return ""
}

func (c *ScriptMode) link() (string, error) { return c.Runner.Link(c.src) }

func (c *ScriptMode) hasDump() bool { return c.state.Dump != nil && c.state.Dump.Err == "" }

func (c *ScriptMode) downloadDump() {
	var b bytes.Buffer
	if err := c.Runner.WriteDump(&b); err == nil && c.Host != nil {
		c.Host.Download("dump.tar.gz", "application/gzip", b.Bytes())
	}
}

func (c *ScriptMode) linkErr() string {
	if _, err := c.link(); err != nil {
		return err.Error()
	}
	return ""
}

func (c *ScriptMode) linkURL() string {
	frag, err := c.link()
	if err != nil || c.Host == nil {
		return ""
	}
	return c.Host.PageURL() + "#" + frag
}

func (c *ScriptMode) linkNote() string {
	if e := c.linkErr(); e != "" {
		return e + "."
	}
	frag, _ := c.link()
	what := "the script itself"
	if c.hasDump() {
		what = "the script and the imported machine's /proc files"
	}
	return "The link carries " + what + ", deflated (" + strconv.Itoa(len(frag)) + " of at most " + strconv.Itoa(app.MaxScriptLink) +
		" characters), and opens it in this mode and runs it: the same output, as " + app.ScriptCommand + " prints it. Nothing leaves the browser."
}

func (c *ScriptMode) copyLink() {
	u := c.linkURL()
	if u == "" || c.Host == nil {
		return
	}
	c.Host.CopyText(u, func(err error) {
		msg := "Copied"
		if err != nil {
			msg = "Could not copy: " + err.Error()
		}
		if c.eventEnv != nil {
			c.eventEnv.Lock()
			defer c.eventEnv.UnlockRender()
		}
		c.copied = msg
	})
}

func (c *ScriptMode) downloadScript() {
	if c.Host != nil {
		c.Host.Download(app.ScriptName, "text/plain", []byte(c.src))
	}
}

func (c *ScriptMode) downloadTrace() {
	var b bytes.Buffer
	if err := c.Runner.WriteTrace(&b); err == nil && c.Host != nil {
		c.Host.Download("script.json", "application/json", b.Bytes())
	}
}

func (c *ScriptMode) downloadReport() {
	var b bytes.Buffer
	if err := c.Runner.WriteTraceReport(&b); err == nil && c.Host != nil {
		c.Host.Download("script.report.txt", "text/plain", b.Bytes())
	}
}
