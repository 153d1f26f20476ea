// Package script is pagesim's script language: a line-oriented text that
// builds a simulated machine, sets the kernel's knobs, fills, fragments and
// pins memory, starts tasks, advances simulated time and prints /proc files,
// counters and traces. `pagesim script FILE` runs one; the engine's
// datadriven tests and the documentation's examples are written in it, so
// anything a test shows can be replayed on the command line or in the
// browser. docs/SCRIPT.md is the reference.
//
// # How a script runs
//
// Parse reads the text into statements and check validates every one of them
// against the command table (command names, argument names and the syntax
// of every value) before the first one runs. The interpreter then executes
// them in order on one machine.
//
// Time is the machine's simulated clock. Commands that do kernel work (fill,
// file write, alloc, compact_memory...) run as one step of a "script" task
// on a chosen CPU (cpu=N, or the first CPU of node=N; CPU 0 by default),
// issued at the current simulated time: the work is charged to that task,
// the CPU is busy for as long as it takes, and anything the work wakes
// (kswapd, kcompactd) is queued. The clock itself moves only with run, which
// processes events up to a time or until a task ends. Setup work therefore
// does not hide in the timeline: a later run starts while the CPU that did
// it may still be busy.
//
// Tasks started with `task` run workload programs (package workload) in the
// background and interleave with kswapd, kcompactd and each other as the
// event loop orders them.
//
// # Determinism
//
// The package reads no clock, no file and no global random source; named
// objects are kept in creation order; the same script prints the same bytes
// every time, natively and in the browser.
package script

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/sim"
)

// Options configure an interpreter.
type Options struct {
	// CheckEveryCommand runs the machine's invariant check after every
	// command (tests set it; the `invariants on` command checks after
	// every simulated event instead).
	CheckEveryCommand bool
	// CheckEveryEvent starts the interpreter with `invariants on`: the
	// check runs after every simulated event (tests set it).
	CheckEveryEvent bool
	// MaxBytes is the memory budget (mm.MachineBytes) of the machine a
	// `machine` command boots; 0 means none.
	MaxBytes uint64
	// Progress, if set, is called every progressEvents simulated events
	// while a command advances time: the script's file and line, the
	// command, the simulated time now and where the command stops (the
	// command line shows it on a terminal).
	Progress func(file string, line int, cmd string, now, end sim.Time)
	// Recorder, if set, records every machine the script boots
	// (mm.Recorder: the tracepoint log, the slow path's spans, the CPUs'
	// tasks, the counters), for `pagesim script --trace`; it changes
	// nothing the script prints.
	Recorder *mm.Recorder
	// Interrupt, if set, is asked before each statement and every
	// InterruptEvents simulated events while a command advances time
	// whether to go on: an error stops the script at the line running,
	// as a script error (the page's Stop button; the page also yields
	// to the browser from it). It must not touch the machine.
	Interrupt func() error
	// Dump is the /proc dump the import command boots (a folder of
	// /proc files, as procfs.Load reads it); nil: none.
	Dump fs.FS
	// InterruptEvents is how often Interrupt is asked while time runs
	// (default progressEvents).
	InterruptEvents int
	// Pace, if set, paces simulated time (the page's play, pause and
	// speed controls): before each statement, and before the machine's
	// clock passes the latest limit Pace returned for it (none yet on a
	// new machine), the interpreter calls Pace with the machine and the
	// time the clock is about to reach, and goes on up to the limit it
	// returns. Pace may block until the page's clock allows next, or
	// return a limit short of it: the clock then moves up to that limit
	// (no event falls before next) and Pace is asked again. An
	// error stops the script as Interrupt's does. While the interpreter
	// waits in Pace (and in Interrupt) the machine is between events and
	// nothing changes it: Pace, and whoever it hands the machine to
	// until it returns, may read it, never change it. Pacing changes
	// nothing the script prints.
	Pace func(m *mm.Machine, next sim.Time) (limit sim.Time, err error)
}

// progressEvents is how often Options.Progress is called.
const progressEvents = 1 << 16

// Interp runs scripts against one machine. Its state (the machine, named
// objects, tasks) carries over from one Exec to the next, so a test can
// feed a script in pieces and look at the output of each.
type Interp struct {
	opts Options
	out  io.Writer
	m    *mm.Machine
	// objects holds named regions, files, slab caches, allocation
	// handles, tasks and cgroups; names keeps their creation order.
	objects map[string]object
	names   []string
	// scriptTasks are the tasks that run commands, one per CPU used.
	scriptTasks map[int]*sim.Task
	// invariants is `invariants on`: check after every event.
	invariants bool
	// machines counts the machines booted.
	machines int

	fileName string
	line     int
	// cmdName is the command running now, for Progress.
	cmdName string
	// paceM is the machine paceLimit is for: the clock may run up to
	// paceLimit without asking Options.Pace.
	paceM     *mm.Machine
	paceLimit sim.Time
}

// New returns an interpreter with no machine yet.
func New(opts Options) *Interp {
	return &Interp{opts: opts, objects: map[string]object{}, scriptTasks: map[int]*sim.Task{}, invariants: opts.CheckEveryEvent}
}

// Machine returns the current machine, or nil before `machine`.
func (in *Interp) Machine() *mm.Machine { return in.m }

// Run parses and runs a whole script read from r, writing its output to
// out. name is the script's name in error messages (the CLI passes the
// file name it read); nothing is opened by name.
func Run(name string, r io.Reader, out io.Writer, opts Options) error {
	src, err := io.ReadAll(io.LimitReader(r, maxScriptBytes+1))
	if err != nil {
		return &Error{File: name, Msg: err.Error()}
	}
	if len(src) > maxScriptBytes {
		return &Error{File: name, Msg: fmt.Sprintf("script is larger than %d bytes", maxScriptBytes)}
	}
	return New(opts).Exec(out, name, 1, src)
}

// maxScriptBytes bounds a script read by Run.
const maxScriptBytes = 8 << 20

// Exec parses src (whose first line is line firstLine of the script name),
// checks every statement, then runs them, writing output to out. It
// returns the first error; statements before it have run.
func (in *Interp) Exec(out io.Writer, name string, firstLine int, src []byte) (err error) {
	stmts, err := Parse(name, firstLine, src)
	if err != nil {
		return err
	}
	calls := make([]*call, len(stmts))
	for i := range stmts {
		c, err := check(&stmts[i])
		if err != nil {
			return &Error{File: name, Line: stmts[i].Line, Msg: err.Error()}
		}
		calls[i] = c
	}
	in.out, in.fileName = out, name
	for _, c := range calls {
		in.line, in.cmdName = c.st.Line, c.name()
		if in.m != nil {
			if err := in.pace(in.m.World.Now(), true); err != nil {
				var se *Error
				if asError(err, &se) && se.Err != nil {
					se.Msg = se.Err.Error() // as Interrupt's error before a statement
				}
				return err
			}
		}
		if in.opts.Interrupt != nil {
			if err := in.opts.Interrupt(); err != nil {
				return &Error{File: name, Line: c.st.Line, Msg: err.Error(), Err: err}
			}
		}
		if err := in.execOne(c); err != nil {
			return err
		}
	}
	return nil
}

// Check parses src as Exec does and checks every statement (command
// names, argument names, the syntax of every value) without running any:
// the first error names its line, as Exec would report it.
func Check(name string, src []byte) error {
	stmts, err := Parse(name, 1, src)
	if err != nil {
		return err
	}
	for i := range stmts {
		if _, err := check(&stmts[i]); err != nil {
			return &Error{File: name, Line: stmts[i].Line, Msg: err.Error()}
		}
	}
	return nil
}

// execOne runs one checked statement, turning a panic in the engine into
// an internal error that names the line.
func (in *Interp) execOne(c *call) (err error) {
	in.line, in.cmdName = c.st.Line, c.name()
	defer func() {
		if r := recover(); r != nil {
			msg := strings.SplitN(fmt.Sprint(r), "\n", 2)
			e := &Error{File: in.fileName, Line: in.line, Msg: fmt.Sprintf("%s: internal error in the engine: %s", c.st.Cmd, msg[0]), Internal: true}
			if len(msg) > 1 {
				e.Detail = msg[1]
			}
			err = e
		}
	}()
	if in.m == nil && !c.cmd.noMachine {
		return in.errorf("%s: no machine yet (start the script with a machine command, such as: machine mem=64M)", c.st.Cmd)
	}
	if err := c.cmd.run(in, c); err != nil {
		var se *Error
		if asError(err, &se) {
			return se
		}
		e := in.errorf("%s: %v", c.name(), err)
		e.Err = err
		return e
	}
	if in.opts.CheckEveryCommand && in.m != nil {
		if err := in.m.CheckInvariants(); err != nil {
			return in.invariantError(fmt.Sprintf("after %s", c.st.Cmd), err)
		}
	}
	return nil
}

func asError(err error, target **Error) bool {
	e, ok := err.(*Error)
	if ok {
		*target = e
	}
	return ok
}

// errorf returns an error at the current line.
func (in *Interp) errorf(format string, args ...any) *Error {
	return &Error{File: in.fileName, Line: in.line, Msg: fmt.Sprintf(format, args...)}
}

// invariantError reports a broken invariant in one line, with the dump as
// the error's detail.
func (in *Interp) invariantError(when string, err error) *Error {
	msg := strings.SplitN(err.Error(), "\n", 2)
	e := in.errorf("invariant broken %s at %s s: %s", when, in.m.World.Now(), msg[0])
	if len(msg) > 1 {
		e.Detail = msg[1]
	}
	return e
}

// printf writes to the script's output.
func (in *Interp) printf(format string, args ...any) {
	fmt.Fprintf(in.out, format, args...)
}

// note prints a one-line remark about an action that could not do all it
// was asked (an allocation failure is a result, not a script error).
func (in *Interp) note(format string, args ...any) {
	in.printf("note: "+format+"\n", args...)
}

// ---------------------------------------------------------------------------
// Running work and time

// farFuture bounds event processing when waiting for a command's step.
const farFuture = sim.Time(1<<62 - 1)

// scriptTask returns the task that runs commands on cpu.
func (in *Interp) scriptTask(cpu int) *sim.Task {
	if t, ok := in.scriptTasks[cpu]; ok {
		return t
	}
	t := in.m.World.NewTask("script", cpu, nil, sim.Never)
	t.AllowedCPUs = []int{cpu}
	in.scriptTasks[cpu] = t
	return t
}

// onCPU runs fn as one step of the script task on cpu, issued now: events
// due before the CPU is free run first, and the step's cost keeps the CPU
// busy. The clock stays at the step's start. When an allocation in fn
// stops at a cond_resched() (mm's AllocPending), fn returns, the step ends
// there and fn is called again in the task's next step: fn must go on from
// where it stopped (keep its progress outside the call).
func (in *Interp) onCPU(cpu int, fn func(t *sim.Task) error) error {
	t := in.scriptTask(cpu)
	var ferr error
	ran, looping := false, false
	own := 0 // the command's own steps: one, plus one per cond_resched() stop
	t.Program = sim.ProgramFunc(func(w *sim.World, t *sim.Task) sim.Time {
		own++
		ferr = fn(t)
		if ferr == nil && in.m.AllocPending(t) {
			if in.m.AllocYields(t) < maxAllocYields {
				return sim.Resched
			}
			looping = true
		}
		ran = true
		return sim.Never
	})
	start := in.m.World.Now()
	in.m.World.Wake(t, start)
	// Count the other tasks' steps on this CPU while the command waits
	// (each moves BusyUntil on); the command's own steps, when an
	// allocation stops at a cond_resched(), are not waiting.
	c := in.m.World.CPUs[cpu]
	steps, busy, seen := 0, c.BusyUntil, own
	if _, err := in.advance(farFuture, func() bool {
		if c.BusyUntil != busy {
			if own == seen {
				steps++
			}
			busy = c.BusyUntil
		}
		seen = own
		return ran || steps >= maxWaitSteps
	}); err != nil {
		return err
	}
	if looping {
		// The allocation is abandoned with the script, which stops here.
		return in.errorf("an allocation of this command stopped at cond_resched() %d times over %s s without finishing: a request that cannot fail (__GFP_NOFAIL) with nothing left to reclaim loops for ever where the kernel's OOM killer, which pagesim does not model, would free memory",
			maxAllocYields, in.m.World.Now()-start)
	}
	if !ran {
		if steps >= maxWaitSteps {
			// A task that never sleeps keeps its CPU: each of its steps
			// is queued before the script's (see docs/RELIABILITY.md).
			return in.errorf("the command never got CPU %d: other tasks ran %d steps on it over %s s without leaving it free (a task with no interval= never sleeps; give it one, or run the command on another cpu=)",
				cpu, steps, in.m.World.Now()-start)
		}
		return in.errorf("the script task on CPU %d never ran", cpu)
	}
	return ferr
}

// maxWaitSteps bounds the steps of other tasks a command waits through on
// its CPU: a wait is normally one step; thousands mean the CPU is never
// left free.
const maxWaitSteps = 4096

// maxAllocYields bounds the cond_resched() stops of one allocation a
// command makes: a reclaim storm's allocation stops a few times per pass
// of the retry loop, tens of thousands of times in a long storm; a
// million (a few seconds of wall time at the loop's pace) means it never
// ends. (A variable so that a test can lower it.)
var maxAllocYields uint64 = 1 << 20

// advance processes events up to until, or until stop reports true after
// an event (then the clock stays at that event). It reports whether stop
// ended it. With `invariants on` the machine is checked after every event.
func (in *Interp) advance(until sim.Time, stop func() bool) (bool, error) {
	w := in.m.World
	for n := 1; ; n++ {
		next := w.NextEventTime()
		if next == sim.Never || next > until {
			break
		}
		if err := in.pace(next, false); err != nil {
			return false, err
		}
		w.Step()
		if n%progressEvents == 0 && in.opts.Progress != nil {
			in.opts.Progress(in.fileName, in.line, in.cmdName, w.Now(), until)
		}
		if in.opts.Interrupt != nil && n%in.interruptEvents() == 0 {
			if err := in.opts.Interrupt(); err != nil {
				return false, &Error{File: in.fileName, Line: in.line, Msg: fmt.Sprintf("%s: %v", in.cmdName, err), Err: err}
			}
		}
		if in.invariants {
			if err := in.m.CheckInvariants(); err != nil {
				return false, in.invariantError("after an event", err)
			}
		}
		if stop != nil && stop() {
			return true, nil
		}
	}
	if until < farFuture {
		if err := in.pace(until, false); err != nil {
			return false, err
		}
	}
	w.RunUntil(until, nil)
	return false, nil
}

// pace asks Options.Pace, if set, whether the clock may reach next: at
// once before each statement (always), else only past the limit it gave
// for this machine.
func (in *Interp) pace(next sim.Time, always bool) error {
	if in.opts.Pace == nil {
		return nil
	}
	if in.paceM != in.m {
		in.paceM, in.paceLimit, always = in.m, -1, true
	}
	for always || next > in.paceLimit {
		always = false
		limit, err := in.opts.Pace(in.m, next)
		if err != nil {
			return &Error{File: in.fileName, Line: in.line, Msg: fmt.Sprintf("%s: %v", in.cmdName, err), Err: err}
		}
		in.paceLimit = limit
		if w := in.m.World; limit < next && limit > w.Now() {
			// No event falls before next: the clock moves up to the
			// page's, so that the map's time moves with it.
			w.RunUntil(limit, nil)
		}
	}
	return nil
}

// interruptEvents is how often advance asks Options.Interrupt.
func (in *Interp) interruptEvents() int {
	if in.opts.InterruptEvents > 0 {
		return in.opts.InterruptEvents
	}
	return progressEvents
}

// cpuFor returns the CPU a command runs on: cpu=N, else the first CPU of
// node=N, else CPU 0.
func (in *Interp) cpuFor(c *call) (int, error) {
	if c.has("cpu") {
		cpu := int(c.uint("cpu"))
		if cpu >= in.m.NrCPUs() {
			return 0, fmt.Errorf("cpu=%d: the machine has CPUs 0 to %d", cpu, in.m.NrCPUs()-1)
		}
		return cpu, nil
	}
	if c.has("node") {
		n, err := in.node(c.uint("node"))
		if err != nil {
			return 0, err
		}
		if len(n.CPUs) == 0 {
			return 0, fmt.Errorf("node=%d has no CPUs", n.ID)
		}
		return n.CPUs[0], nil
	}
	return 0, nil
}

// node returns node n or an error naming the machine's nodes.
func (in *Interp) node(n uint64) (*mm.Node, error) {
	if n >= uint64(len(in.m.Nodes)) {
		return nil, fmt.Errorf("node=%d: the machine has nodes 0 to %d", n, len(in.m.Nodes)-1)
	}
	return in.m.Nodes[n], nil
}

// work runs fn on the command's CPU.
func (in *Interp) work(c *call, fn func(t *sim.Task) error) error {
	cpu, err := in.cpuFor(c)
	if err != nil {
		return err
	}
	return in.onCPU(cpu, fn)
}

// capture returns what fn writes, for commands that render a file.
func capture(fn func(w io.Writer) error) (string, error) {
	var b bytes.Buffer
	err := fn(&b)
	return b.String(), err
}

// Example is one example of docs/SCRIPT.md: the heading it sits under and
// its script.
type Example struct {
	Title string
	Src   string
}
