package app

// scriptrun.go is the page's Script mode: it runs a script of the pagesim
// script language (docs/SCRIPT.md) with the interpreter `pagesim script`
// uses, on its own goroutine, and keeps what it printed for the panel.
// The output is the interpreter's, byte for byte; an error is the line
// `pagesim script` writes to standard error. Links of the form
// #v1/script?src=... carry the script, deflated and in base64url.

import (
	"bytes"
	"compress/flate"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"sync"
	"time"

	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/procfs"
	"github.com/pagesim/pagesim/engine/scenario"
	"github.com/pagesim/pagesim/engine/script"
	"github.com/pagesim/pagesim/engine/sim"
	"github.com/pagesim/pagesim/engine/tracefmt"
)

// ScriptName is the name the page gives the script: in its errors
// (script.txt:12: ...), in the equivalent command and in the downloaded
// file.
const ScriptName = "script.txt"

// ScriptCommand is the command that prints natively what the page prints.
const ScriptCommand = "pagesim script " + ScriptName

// scriptRecordBytes is what a page script's recording may keep (for the
// trace downloads), taken out of PageMaxBytes.
const scriptRecordBytes = 64 << 20

// maxScriptOutput bounds what the output pane keeps: past it, the run
// stops with a message (a script that prints its trace in a loop would
// otherwise fill the tab's memory).
const maxScriptOutput = 16 << 20

// errStopped is the error a run stopped by Stop ends with.
var errStopped = errors.New("stopped")

// ScriptState is what the Script mode shows; a copy, never changed once
// returned.
type ScriptState struct {
	// Seq grows with every change.
	Seq uint64
	// Src is the script of the latest run (or check).
	Src string
	// Running is true while a run goes on.
	Running bool
	// Ran is true once a run has ended, by itself, by an error or by Stop.
	Ran bool
	// Output is what the script printed, as `pagesim script` prints it
	// on standard output.
	Output string
	// Err is the line `pagesim script` writes to standard error, if the
	// script stopped on an error; ErrLine its line (0 if none).
	Err     string
	ErrLine int
	// Traced is true when the latest run's recording can be written
	// (the run has ended and recorded something).
	Traced bool
	// Loaded counts the scripts loaded from links (Load): the editor
	// shows Src anew each time it grows.
	Loaded uint64
	// LinkShown is true while the address bar holds the script's link,
	// which the scenarios' links must not replace.
	LinkShown bool
	// Dump is the machine "Start from a machine" took, which the
	// script's import command boots; nil: none.
	Dump *DumpState
}

// DumpState is an imported dump as the page shows it.
type DumpState struct {
	// Label names what was given (a folder, an archive, n files).
	Label string
	// Err says why the files could not be imported; the rest is empty
	// then.
	Err string
	// Warnings are the lines pagesim proc --import writes to standard
	// error ("pagesim proc: warning: ..."), Buddyinfo what pagesim proc
	// buddyinfo --import prints.
	Warnings  string
	Buddyinfo string
}

// ScriptRunner runs page scripts, one at a time. Its methods may be called
// from any goroutine.
type ScriptRunner struct {
	// Yield, if set, is called from the running script every few
	// thousand simulated events once it has had the CPU for
	// YieldEvery: the page sleeps there so that the browser draws and
	// handles clicks (WebAssembly has one thread). Set before Run.
	Yield      func()
	YieldEvery time.Duration
	// MaxBytes is the memory budget of the script's machines (default
	// PageMaxBytes, less what the recording may keep).
	MaxBytes uint64
	// Driven makes the page's controller drive the runs (Drive): a run
	// goes on only while Drive waits for it, for Drive's budget of wall
	// time and, unless it runs to the end, no further in simulated time
	// than Drive's clock; the controller reads its machine for the map
	// (Live) in between. Without it a run goes on by itself, yielding
	// (Yield). Set before Run.
	Driven bool

	mu  sync.Mutex
	st  ScriptState
	gen uint64 // the current run; older runs stop at their next check
	// stopping is set by Stop: the current run stops at its next check.
	stopping bool
	rec      *mm.Recorder
	dump     fs.FS         // the imported dump (st.Dump), for the import command
	shape    *MachineShape // the imported machine's shape (nil: none)
	updated  chan struct{}
	// live is the current run when Driven (nil before the first).
	live *liveRun
}

// liveRun is a driven run: the script's goroutine and the controller's
// take turns, handing the turn over on resume and parked, so that the
// machine is only ever touched by the one holding it.
type liveRun struct {
	gen uint64
	// paced is false for a run to the end: the clock does not hold it.
	paced  bool
	resume chan drive    // controller -> script: your turn
	parked chan struct{} // script -> controller: yours
	// quit is closed when the run is given up (Stop, Reset, another
	// Run): a parked run then ends at once. done is closed when its
	// goroutine has ended.
	quit, done chan struct{}
	quitOnce   sync.Once

	// imported is the dump's label for the preview of an imported
	// machine: a run that has ended, of no script, on the machine the
	// import booted ("" for a script's run).
	imported string

	// Held by whoever has the turn (after done, by anyone).
	m        *mm.Machine // the machine the script runs on now
	offset   sim.Time    // the time of the script's earlier machines
	machines int
	drive    drive
	// steps counts the script's checks (between statements, every few
	// thousand events) and the clock's moves: a turn that left it
	// unchanged did nothing.
	steps uint64
}

// drive is a turn the controller gives a run: up to Target (the
// script's time, its machines one after the other) until Deadline.
type drive struct {
	target   sim.Time
	deadline time.Time
}

func (lr *liveRun) stop() { lr.quitOnce.Do(func() { close(lr.quit) }) }

// park gives the turn back to the controller and waits for the next.
func (lr *liveRun) park() error {
	select {
	case lr.parked <- struct{}{}:
	case <-lr.quit:
		return errStopped
	}
	select {
	case d := <-lr.resume:
		lr.drive = d
		return nil
	case <-lr.quit:
		return errStopped
	}
}

// pace is the interpreter's Options.Pace for a live run: it records the
// machine the script is on and waits, parked, until the controller's
// clock reaches next.
func (lr *liveRun) pace(m *mm.Machine, next sim.Time) (sim.Time, error) {
	if m != lr.m {
		if lr.m != nil {
			lr.offset += lr.m.World.Now()
		}
		lr.m = m
		lr.machines++
	}
	if !lr.paced {
		lr.steps++
		return noClock, nil
	}
	for {
		limit := lr.drive.target - lr.offset
		// Short of next, the clock still moves up to the page's.
		if next <= limit || limit > m.World.Now() {
			lr.steps++
			return limit, nil
		}
		if err := lr.park(); err != nil {
			return 0, err
		}
	}
}

// LiveView is what the controller reads of the current run between
// calls to Drive: the machine the script is on (nil before its first),
// the script's time (its machines one after the other), how many
// machines it has booted, and whether it has ended.
type LiveView struct {
	// Gen identifies the run (0: none yet).
	Gen      uint64
	M        *mm.Machine
	Now      sim.Time
	Offset   sim.Time
	Machines int
	Paced    bool
	Ended    bool
	// Imported names the dump when the machine is the one "Start from a
	// machine" imported, shown before any script has run on it ("" for a
	// script's run).
	Imported string
}

// Title is what the map calls the machine: the script's name, or the
// imported machine's dump before a script has run on it.
func (v LiveView) Title() string {
	if v.Imported != "" {
		return "imported: " + v.Imported
	}
	return ScriptName
}

// Live returns the current driven run's view. Only the controller's
// goroutine may call it, between calls to Drive, and read its machine.
func (r *ScriptRunner) Live() LiveView {
	r.mu.Lock()
	lr := r.live
	r.mu.Unlock()
	if lr == nil {
		return LiveView{}
	}
	v := LiveView{Gen: lr.gen, M: lr.m, Offset: lr.offset, Machines: lr.machines, Paced: lr.paced, Imported: lr.imported}
	select {
	case <-lr.done:
		v.Ended = true
	default:
	}
	v.Now = lr.offset
	if lr.m != nil {
		v.Now += lr.m.World.Now()
	}
	return v
}

// Drive gives the current run its turn: it goes on until the script's
// time would pass target (a run to the end ignores it), its budget of
// wall time is spent, or it ends. It returns whether the run did
// anything in its turn. Only the controller's goroutine calls it.
func (r *ScriptRunner) Drive(target sim.Time, budget time.Duration) bool {
	r.mu.Lock()
	lr := r.live
	r.mu.Unlock()
	if lr == nil {
		return false
	}
	steps := lr.steps
	select {
	case lr.resume <- drive{target: target, deadline: time.Now().Add(budget)}:
	case <-lr.done:
		return false
	}
	select {
	case <-lr.parked:
		return lr.steps != steps
	case <-lr.done:
		return true
	}
}

// NewScriptRunner returns a runner with nothing run yet.
func NewScriptRunner() *ScriptRunner {
	return &ScriptRunner{updated: make(chan struct{}, 1), YieldEvery: 30 * time.Millisecond}
}

// Updated receives a value when the state has changed since it was last
// received.
func (r *ScriptRunner) Updated() <-chan struct{} { return r.updated }

// State returns the current state.
func (r *ScriptRunner) State() ScriptState {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.st
}

// changed bumps the sequence number (mu held) and signals Updated.
func (r *ScriptRunner) changed() {
	r.st.Seq++
	select {
	case r.updated <- struct{}{}:
	default:
	}
}

// Run checks src as `pagesim script` does, then runs it on a new
// goroutine (stopping a run still going on). A script that does not
// check ends at once with its error and runs nothing. done, if not nil,
// is called when the run has ended. A driven run (Driven) goes at the
// page's clock.
func (r *ScriptRunner) Run(src string, done func()) { r.start(src, false, done) }

// RunToEnd is Run, but a driven run goes as fast as the page's frames
// let it, whatever the page's clock.
func (r *ScriptRunner) RunToEnd(src string, done func()) { r.start(src, true, done) }

// Rerun runs the latest script again, as it was run.
func (r *ScriptRunner) Rerun() {
	r.mu.Lock()
	src, toEnd := r.st.Src, r.live != nil && !r.live.paced
	r.mu.Unlock()
	r.start(src, toEnd, nil)
}

func (r *ScriptRunner) start(src string, toEnd bool, done func()) {
	r.mu.Lock()
	r.abandonLive()
	r.gen++
	gen := r.gen
	r.stopping = false
	r.st = ScriptState{Seq: r.st.Seq, Src: src, Loaded: r.st.Loaded, LinkShown: r.st.LinkShown, Dump: r.st.Dump}
	r.rec = nil
	if err := script.Check(ScriptName, []byte(src)); err != nil {
		r.finish(err)
		r.mu.Unlock()
		if done != nil {
			done()
		}
		return
	}
	r.st.Running = true
	rec := mm.NewRecorder(mm.RecordConfig{MaxBytes: scriptRecordBytes})
	r.rec = rec
	var lr *liveRun
	if r.Driven {
		lr = &liveRun{gen: gen, paced: !toEnd, resume: make(chan drive), parked: make(chan struct{}),
			quit: make(chan struct{}), done: make(chan struct{})}
		r.live = lr
	}
	r.changed()
	r.mu.Unlock()
	go r.run(gen, src, rec, lr, done)
}

func (r *ScriptRunner) run(gen uint64, src string, rec *mm.Recorder, lr *liveRun, done func()) {
	limit := r.maxBytes()
	out := &scriptOutput{r: r, gen: gen}
	last := time.Now()
	r.mu.Lock()
	dump := r.dump
	r.mu.Unlock()
	opts := script.Options{MaxBytes: limit, Recorder: rec, Dump: dump, InterruptEvents: 4096,
		Interrupt: func() error {
			if err := out.check(); err != nil {
				return err
			}
			if lr != nil {
				lr.steps++
				if time.Now().After(lr.drive.deadline) {
					if err := lr.park(); err != nil {
						return err
					}
				}
			} else if r.Yield != nil && time.Since(last) >= r.YieldEvery {
				r.Yield()
				last = time.Now()
			}
			return out.check()
		}}
	var err error
	if lr != nil {
		defer close(lr.done)
		opts.Pace = lr.pace
		// The first turn starts the run.
		select {
		case lr.drive = <-lr.resume:
		case <-lr.quit:
			err = &script.Error{File: ScriptName, Line: 1, Msg: errStopped.Error(), Err: errStopped}
		}
	}
	if err == nil {
		err = script.New(opts).Exec(out, ScriptName, 1, []byte(src))
	}
	r.mu.Lock()
	if r.gen == gen {
		r.st.Running = false
		r.finish(err)
	}
	r.mu.Unlock()
	if done != nil {
		done()
	}
}

// finish records how a run ended (mu held).
func (r *ScriptRunner) finish(err error) {
	r.st.Ran = true
	if err != nil {
		var se *script.Error
		if errors.As(err, &se) {
			r.st.ErrLine = se.Line
		}
		msg := err.Error()
		var be *mm.BudgetError
		switch {
		case errors.As(err, &be):
			msg += " (a browser tab simulates at most " + formatMiB(PageMaxBytes) + "; " + ScriptCommand + " runs it natively, --max-mem SIZE changes its limit)"
		case se != nil && se.Internal:
			msg += " (please report it)"
		}
		r.st.Err = msg
	}
	r.st.Traced = r.rec != nil && r.rec.Bytes() > 0
	r.changed()
}

func formatMiB(n uint64) string { return fmt.Sprintf("%d MiB", n>>20) }

// SetDump imports a dump as pagesim proc --import does (within the page's
// budget) and keeps it for the import command; err is why the visitor's
// files could not be made into a dump. It reports whether the import
// worked.
func (r *ScriptRunner) SetDump(fsys fs.FS, label string, err error) bool {
	ds := &DumpState{Label: label}
	var shape *MachineShape
	var m *mm.Machine
	if err == nil {
		var warnings []string
		m, warnings, err = procfs.Import(fsys, procfs.ImportOptions{MaxBytes: r.maxBytes()})
		if err == nil {
			shape = shapeOf(m)
			var w, b strings.Builder
			for _, x := range warnings {
				w.WriteString("pagesim proc: warning: " + x + "\n")
			}
			err = procfs.Buddyinfo(&b, m)
			ds.Warnings, ds.Buddyinfo = w.String(), b.String()
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		ds.Err = err.Error()
		var be *mm.BudgetError
		if errors.As(err, &be) {
			ds.Err += " (a browser tab simulates at most " + formatMiB(PageMaxBytes) + "; pagesim proc --import DIR reads it natively)"
		}
		fsys = nil
	}
	r.dump = fsys
	r.shape = shape
	if fsys == nil {
		r.shape = nil
	} else {
		r.preview(m, label)
	}
	r.st.Dump = ds
	r.changed()
	return fsys != nil
}

// preview puts the imported machine m on the map (mu held), as a driven
// run of no script that has ended at time 0, unless a script is running:
// its run stays on the map. The next Run replaces it.
func (r *ScriptRunner) preview(m *mm.Machine, label string) {
	if !r.Driven || r.st.Running {
		return
	}
	r.abandonLive()
	r.gen++
	lr := &liveRun{gen: r.gen, imported: label, m: m, machines: 1, done: make(chan struct{}), quit: make(chan struct{})}
	close(lr.done)
	r.live = lr
}

// ScenarioScript is ScenarioScript for spec on the imported machine, or
// on the scenario's own when none is imported.
func (r *ScriptRunner) ScenarioScript(spec *scenario.Spec) (string, error) {
	r.mu.Lock()
	shape := r.shape
	r.mu.Unlock()
	return ScenarioScript(spec, shape)
}

// maxBytes is the budget of a script's machines.
func (r *ScriptRunner) maxBytes() uint64 {
	if r.MaxBytes != 0 {
		return r.MaxBytes
	}
	return PageMaxBytes - scriptRecordBytes
}

// Load puts src in the editor, as a script link does, with err (the
// reason the link could not be read) as its error when not nil.
func (r *ScriptRunner) Load(src string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.abandonLive()
	r.live = nil
	r.gen++
	r.stopping = false
	r.rec = nil
	r.st = ScriptState{Seq: r.st.Seq, Src: src, Loaded: r.st.Loaded + 1, LinkShown: true, Dump: r.st.Dump}
	if err != nil {
		r.st.Err = "This script link could not be read: " + err.Error()
	}
	r.changed()
}

// ShowLink records whether the address bar holds the script's link.
func (r *ScriptRunner) ShowLink(on bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.st.LinkShown != on {
		r.st.LinkShown = on
		r.changed()
	}
}

// LinkShown reports whether the address bar holds the script's link.
func (r *ScriptRunner) LinkShown() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.st.LinkShown
}

// Stop stops the run going on at its next check (every few thousand
// simulated events, and between statements): it ends as a script stopped
// by an error at the line running; what it printed stays.
func (r *ScriptRunner) Stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.st.Running {
		r.stopping = true
		if r.live != nil {
			r.live.stop()
		}
	}
}

// abandonLive gives up the current driven run (mu held): a parked run
// ends at once; the map keeps showing its machine until the next run.
func (r *ScriptRunner) abandonLive() {
	if r.live != nil {
		r.live.stop()
	}
}

// Reset stops the run going on and forgets its output. With a machine
// imported, the map shows that machine again, booted afresh from its dump
// (the page does not keep a second copy of it meanwhile).
func (r *ScriptRunner) Reset() {
	r.mu.Lock()
	r.abandonLive()
	r.live = nil
	r.gen++
	gen := r.gen
	r.stopping = false
	r.rec = nil
	r.st = ScriptState{Seq: r.st.Seq, Src: r.st.Src, Loaded: r.st.Loaded, LinkShown: r.st.LinkShown, Dump: r.st.Dump}
	dump, label := r.dump, ""
	if r.st.Dump != nil {
		label = r.st.Dump.Label
	}
	r.changed()
	r.mu.Unlock()
	if dump == nil || !r.Driven {
		return
	}
	m, _, err := procfs.Import(dump, procfs.ImportOptions{MaxBytes: r.maxBytes()})
	if err != nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	// Nothing ran or was imported meanwhile.
	if r.gen == gen && r.dump != nil && r.live == nil {
		r.preview(m, label)
		r.changed()
	}
}

// scriptOutput collects a run's output into the state while the run is
// the current one.
type scriptOutput struct {
	r   *ScriptRunner
	gen uint64
}

func (o *scriptOutput) Write(p []byte) (int, error) {
	r := o.r
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.gen != o.gen || r.stopping {
		return 0, errStopped
	}
	if len(r.st.Output)+len(p) > maxScriptOutput {
		return 0, fmt.Errorf("the output is over %s, more than the page keeps (%s prints it all)", formatMiB(maxScriptOutput), ScriptCommand)
	}
	r.st.Output += string(p)
	r.changed()
	return len(p), nil
}

// check reports errStopped once the run is no longer the current one.
func (o *scriptOutput) check() error {
	o.r.mu.Lock()
	defer o.r.mu.Unlock()
	if o.r.gen != o.gen || o.r.stopping {
		return errStopped
	}
	return nil
}

// WriteTrace writes the latest run's recording in Chrome's JSON trace
// event format (Perfetto UI, chrome://tracing), as `pagesim script
// --trace` writes it.
func (r *ScriptRunner) WriteTrace(w io.Writer) error {
	rec, err := r.recording()
	if err != nil {
		return err
	}
	return tracefmt.WriteChrome(w, rec, tracefmt.Meta{Title: "pagesim script " + ScriptName, Command: ScriptCommand})
}

// WriteTraceReport writes the latest run's tracepoint log as trace-cmd
// report prints it, as `pagesim script --trace-report` writes it.
func (r *ScriptRunner) WriteTraceReport(w io.Writer) error {
	rec, err := r.recording()
	if err != nil {
		return err
	}
	return tracefmt.WriteReport(w, rec)
}

func (r *ScriptRunner) recording() (*mm.Recording, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.rec == nil || r.st.Running {
		return nil, errors.New("no finished run to export: run the script first")
	}
	return r.rec.Recording(), nil
}

// Script links.

// scriptLinkPrefix starts the fragment of a script link.
const scriptLinkPrefix = "v1/script?src="

// MaxScriptLink is the longest script link fragment the page makes:
// 4000 characters, so that the whole address stays under the 8 KB that
// common mail clients and chat tools keep intact (and within the 2083
// characters of the most conservative ones twice over only for short
// scripts). A deflated script of a few KB fits; past it the page offers
// the script as a file instead.
const MaxScriptLink = 4000

// ErrScriptTooLong is the error of a script whose link would be longer
// than MaxScriptLink.
var ErrScriptTooLong = fmt.Errorf("the script is too long for a link (over %d characters once compressed): download it as a file and share that", MaxScriptLink)

// ScriptLink returns the fragment (without '#') that carries src:
// v1/script?src= and src deflated (RFC 1951) in unpadded base64url.
func ScriptLink(src string) (string, error) {
	enc, err := deflateBase64([]byte(src))
	if err != nil {
		return "", err
	}
	frag := scriptLinkPrefix + enc
	if len(frag) > MaxScriptLink {
		return "", ErrScriptTooLong
	}
	return frag, nil
}

// IsScriptLink reports whether frag is a script link (well formed or not).
func IsScriptLink(frag string) bool {
	return strings.HasPrefix(frag, "v1/script?") || frag == "v1/script"
}

// ParseScriptLink returns the script a script link carries. It refuses a
// link longer than a script link can be made, and a script that inflates
// past the script language's 8 MiB, before holding more.
func ParseScriptLink(frag string) (string, error) {
	q, ok := strings.CutPrefix(frag, scriptLinkPrefix)
	if !ok {
		return "", errors.New("a script link is #v1/script?src=, then the script deflated in base64url")
	}
	if len(frag) > 4*MaxScriptLink {
		return "", fmt.Errorf("the link is %d characters long, more than a script link can be", len(frag))
	}
	q, _, _ = strings.Cut(q, "&")
	src, err := inflateBase64(q, 8<<20)
	if err != nil {
		return "", fmt.Errorf("the script in the link: %v", err)
	}
	return string(src), nil
}

// deflateBase64 is b deflated (RFC 1951) in unpadded base64url.
func deflateBase64(b []byte) (string, error) {
	var out bytes.Buffer
	w, err := flate.NewWriter(&out, flate.BestCompression)
	if err != nil {
		return "", err
	}
	if _, err := w.Write(b); err != nil {
		return "", err
	}
	if err := w.Close(); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(out.Bytes()), nil
}

// inflateBase64 undoes deflateBase64, refusing more than limit bytes.
func inflateBase64(s string, limit int) ([]byte, error) {
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
	if err != nil {
		return nil, fmt.Errorf("not base64url: %v", err)
	}
	b, err := io.ReadAll(io.LimitReader(flate.NewReader(bytes.NewReader(raw)), int64(limit)+1))
	if err != nil {
		return nil, fmt.Errorf("not deflated text: %v", err)
	}
	if len(b) > limit {
		return nil, fmt.Errorf("larger than %d bytes", limit)
	}
	return b, nil
}
