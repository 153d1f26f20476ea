package main

// cli.go holds what every subcommand shares: the exit-status rule, the
// memory budget's --max-mem flag, --jobs, and progress on a terminal.
//
// # Exit status, one rule for every subcommand
//
//	0  success
//	1  a value is wrong: a flag's value or an argument that is not a
//	   number, out of range, an unknown name, a file that cannot be read
//	   or is malformed, a machine over the memory budget, a failed expect
//	2  the command line's shape is wrong: an unknown command or flag, a
//	   flag without its value, a missing or extra argument
//	3  an internal error of pagesim (a bug): one line, no stack trace
//
// So `--runs abc`, `--seed abc`, `--mem 0` and `--format bogus` all exit
// 1, and `--bogus` exits 2. Errors are one line on standard error.

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/scenario"
	"github.com/pagesim/pagesim/engine/script"
)

// parseFlags parses args with fs and returns the exit status for its error:
// exitInput when a flag's value was refused ("invalid value" from the flag
// package, which wraps every Value.Set error), else exitUsage.
func parseFlags(fs *flag.FlagSet, args []string) (int, error) {
	err := fs.Parse(args)
	return flagErrorCode(err), err
}

func flagErrorCode(err error) int {
	switch {
	case err == nil:
		return exitOK
	case strings.HasPrefix(err.Error(), "invalid value "), strings.HasPrefix(err.Error(), "invalid boolean value "):
		return exitInput
	}
	return exitUsage
}

// Memory budget.

// fallbackPhysicalMemory is assumed when /proc/meminfo cannot be read.
const fallbackPhysicalMemory = 8 << 30

// physicalMemory returns MemTotal from /proc/meminfo, or
// fallbackPhysicalMemory.
func physicalMemory() uint64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return fallbackPhysicalMemory
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, 1<<16))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 3 && fields[0] == "MemTotal:" && fields[2] == "kB" {
			if kb, err := strconv.ParseUint(fields[1], 10, 64); err == nil && kb > 0 && kb < 1<<50 {
				return kb << 10
			}
		}
	}
	return fallbackPhysicalMemory
}

// defaultMaxMem is the memory budget when --max-mem is not given: half of
// the computer's memory, so that pagesim never pushes the rest into swap.
func defaultMaxMem() uint64 { return physicalMemory() / 2 }

// maxMemUsage is the --max-mem line of each command's usage.
const maxMemUsage = `  --max-mem SIZE the memory pagesim may use to simulate the machine
                 (default: half of this computer's memory); a larger
                 machine is refused before anything is allocated`

// addMaxMem registers --max-mem on fs; the returned function gives the
// limit in bytes after Parse, or an error for a bad size. It also sets the
// Go collector's soft memory limit to one and a half times the budget
// (unless GOMEMLIMIT is set): the budget bounds the live machine, and the
// limit keeps the garbage of a finished run (the machine of --runs' last
// run, a guest size's last machine) from doubling the process's memory
// before the collector runs.
func addMaxMem(fs *flag.FlagSet) func() (uint64, error) {
	fs.String("max-mem", "", "")
	return func() (uint64, error) {
		b, err := parseMaxMem(fs)
		if err != nil {
			return 0, err
		}
		if os.Getenv("GOMEMLIMIT") == "" {
			debug.SetMemoryLimit(int64(min(max(b+b/2, 64<<20), math.MaxInt64)))
		}
		return b, nil
	}
}

// parseMaxMem returns the --max-mem flag's budget in bytes (the default
// when it is not given), without touching the collector's limit.
func parseMaxMem(fs *flag.FlagSet) (uint64, error) {
	s := fs.Lookup("max-mem").Value.String()
	if s == "" {
		return defaultMaxMem(), nil
	}
	b, err := script.ParseSize(strings.TrimSpace(s))
	if err == nil && b == 0 {
		err = fmt.Errorf("a budget of 0 bytes allows no machine")
	}
	if err != nil {
		return 0, fmt.Errorf("--max-mem: %v", err)
	}
	return b, nil
}

// budgetHint completes an over-budget error with how to change the limit.
func budgetHint(err error) error {
	var be *mm.BudgetError
	if errors.As(err, &be) {
		return fmt.Errorf("%w (--max-mem SIZE changes the limit)", err)
	}
	return err
}

// Runs at once.

// jobsUsage is the --jobs line of the usage of the commands that run
// scenarios.
const jobsUsage = `  --jobs N       runs at once, each on its own core (default: every core
                 this process may use); fewer when their machines would
                 not fit in --max-mem together`

// jobs is the --jobs flag's value: n, and whether the user gave it.
type jobs struct {
	n     int
	given bool
}

// addJobs registers --jobs on fs; the returned function gives its value
// after Parse, or an error for a bad one.
func addJobs(fs *flag.FlagSet) func() (jobs, error) {
	n := fs.Int("jobs", 0, "")
	return func() (jobs, error) {
		given := false
		fs.Visit(func(f *flag.Flag) { given = given || f.Name == "jobs" })
		if !given {
			return jobs{n: runtime.GOMAXPROCS(0)}, nil
		}
		if *n < 1 || *n > 1024 {
			return jobs{}, fmt.Errorf("--jobs must be between 1 and 1024, got %d", *n)
		}
		return jobs{n: *n, given: true}, nil
	}
}

// note says on w, in one line, that the budget lowered a --jobs the user
// gave to fit; it says nothing when --jobs was left to its default.
func (j jobs) note(w io.Writer, cmd string, fit int, limit uint64) {
	if j.given && fit < j.n {
		runs := "runs"
		if fit == 1 {
			runs = "run"
		}
		fmt.Fprintf(w, "%s: --jobs %d lowered to %d: the memory budget of %s (--max-mem) holds the machines of %d %s at once\n",
			cmd, j.n, fit, mm.FormatBytes(limit), fit, runs)
	}
}

// Progress on a terminal.

// isTerminal reports whether w is a terminal (tests replace it).
var isTerminal = func(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// progress writes one status line to a terminal, redrawn in place at most
// ten times a second, and clears it when done. On anything but a terminal
// it writes nothing.
type progress struct {
	w     io.Writer
	last  time.Time
	shown bool
}

// newProgress returns a progress line on w, or nil when w is not a
// terminal. Its methods accept a nil receiver.
func newProgress(w io.Writer) *progress {
	if !isTerminal(w) {
		return nil
	}
	return &progress{w: w}
}

// show draws line unless one was drawn less than 100 ms ago.
func (p *progress) show(line string) {
	if p == nil {
		return
	}
	if now := time.Now(); p.shown && now.Sub(p.last) < 100*time.Millisecond {
		return
	} else {
		p.last = now
	}
	if r := []rune(line); len(r) > 78 {
		line = string(r[:77]) + "…"
	}
	fmt.Fprintf(p.w, "\r\033[K%s", line)
	p.shown = true
}

// runs sets o's callbacks to show how many of a scenario's runs are done
// and where the latest one to report stands; it leaves o alone when p is
// nil.
func (p *progress) runs(id string, o *scenario.Options) {
	if p == nil {
		return
	}
	done, total := 0, 0
	o.RunDone = func(d, t int) { done, total = d, t }
	o.Progress = func(variant string, run int, r *scenario.Run) {
		p.show(fmt.Sprintf("%s: %d/%d runs done; %s run %d, %.1f s simulated: %s", id, done, total, variant, run+1, r.Now().Seconds(), r.Status()))
	}
}

// done clears the line.
func (p *progress) done() {
	if p == nil || !p.shown {
		return
	}
	fmt.Fprint(p.w, "\r\033[K")
	p.shown = false
}
