package main

// script.go is `pagesim script FILE`: run a script of the pagesim script
// language (docs/SCRIPT.md) and print what it prints. FILE "-" reads the
// script from standard input.

import (
	"errors"
	"flag"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"path/filepath"

	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/script"
	"github.com/pagesim/pagesim/engine/sim"
	"github.com/pagesim/pagesim/engine/tracefmt"
)

const scriptUsage = `Usage: pagesim script FILE [--check] [--max-mem SIZE] [--import DIR]
                      [--trace FILE] [--trace-report FILE]
       pagesim script - [--check] [--max-mem SIZE] < FILE

Runs a pagesim script: it builds a simulated machine, sets the kernel's
knobs, fills, fragments and pins memory, starts tasks, advances simulated
time and prints /proc files, counters and traces (see docs/SCRIPT.md, or
'pagesim script -' with the line 'help'). FILE - reads standard input.

FILE is a regular file of at most 8 MiB (standard input likewise); a
UTF-8 byte-order mark at its start is ignored. Every statement is checked
before the first one runs; an error names the script and the line:

  script.txt:12: unknown command "fualt"

Options:
  --check        run the machine's consistency check after every command
  --import DIR   the folder of a real machine's /proc files that the
                 script's import command boots (as pagesim proc --import)
` + maxMemUsage + `
  --trace FILE   record the script's machines and write them to FILE in
                 Chrome's JSON trace event format (Perfetto UI,
                 chrome://tracing): tasks and their slow-path, direct
                 reclaim and direct compaction slices, every tracepoint,
                 the CPUs, and the memory counters
  --trace-report FILE
                 write the recorded tracepoint log to FILE as trace-cmd
                 report prints it
                 (Either keeps at most 256 MiB of recording, a quarter of
                 --max-mem if that is less, taken from the budget; the
                 files are written also when the script stops on an
                 error.)

Exit status: 0 on success, 1 when the script is wrong, an expect fails or
its machine is over the memory budget, 2 for a usage error, 3 for an
internal error of the engine.
`

// scriptStdin is what FILE - reads (tests replace it).
var scriptStdin io.Reader = os.Stdin

func init() {
	register(&command{
		name:    "script",
		summary: "run a pagesim script (docs/SCRIPT.md)",
		usage:   scriptUsage,
		run:     runScript,
	})
}

func runScript(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("script", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	checkAll := fs.Bool("check", false, "check invariants after every command")
	maxMem := addMaxMem(fs)
	tracePath := fs.String("trace", "", "Chrome JSON trace file")
	reportPath := fs.String("trace-report", "", "trace-cmd report file")
	importDir := fs.String("import", "", "dump folder for the import command")
	// FILE may come before or after the flags.
	var file string
	var rest []string
	for i, a := range args {
		if a == "-" || len(a) == 0 || a[0] != '-' {
			file = a
			rest = append(append(rest, args[:i]...), args[i+1:]...)
			break
		}
	}
	if file == "" {
		rest = args
	}
	if code, err := parseFlags(fs, rest); err != nil {
		fmt.Fprintf(stderr, "pagesim script: %v (see 'pagesim script --help')\n", err)
		return code
	}
	if file == "" || fs.NArg() > 0 {
		if fs.NArg() > 0 {
			fmt.Fprintf(stderr, "pagesim script: one FILE at a time, got %q too\n", fs.Arg(0))
		} else {
			fmt.Fprintf(stderr, "pagesim script: which script? give a FILE, or - for standard input (see 'pagesim script --help')\n")
		}
		return exitUsage
	}
	limit, err := maxMem()
	if err != nil {
		fmt.Fprintf(stderr, "pagesim script: %v\n", err)
		return exitInput
	}
	var src []byte
	name := file
	if file == "-" {
		name = "stdin"
		src, err = io.ReadAll(io.LimitReader(scriptStdin, maxScriptBytes+1))
	} else {
		src, err = readScriptFile(file)
	}
	if err != nil {
		fmt.Fprintf(stderr, "pagesim script: %v\n", err)
		return exitInput
	}
	if len(src) > maxScriptBytes {
		fmt.Fprintf(stderr, "pagesim script: %s is larger than %d bytes\n", name, maxScriptBytes)
		return exitInput
	}
	var dump iofs.FS
	if flagGiven(fs, "import") {
		if *importDir == "" {
			fmt.Fprintln(stderr, "pagesim script: --import needs a folder")
			return exitUsage
		}
		info, err := os.Stat(*importDir)
		if err != nil {
			fmt.Fprintf(stderr, "pagesim script: --import %s: %v\n", *importDir, errors.Unwrap(err))
			return exitInput
		}
		if !info.IsDir() {
			fmt.Fprintf(stderr, "pagesim script: --import %s: not a folder\n", *importDir)
			return exitInput
		}
		dump = os.DirFS(*importDir)
	}
	var rec *mm.Recorder
	traceOn, reportOn := flagGiven(fs, "trace"), flagGiven(fs, "trace-report")
	if (traceOn && *tracePath == "") || (reportOn && *reportPath == "") {
		fmt.Fprintln(stderr, "pagesim script: --trace and --trace-report need a file name")
		return exitInput
	}
	if traceOn || reportOn {
		recBytes := recordBytes(limit)
		limit -= recBytes
		rec = mm.NewRecorder(mm.RecordConfig{MaxBytes: recBytes})
	}
	prog := newProgress(stderr)
	in := script.New(script.Options{CheckEveryCommand: *checkAll, MaxBytes: limit, Recorder: rec, Dump: dump,
		Progress: func(file string, line int, cmd string, now, end sim.Time) {
			file = filepath.Base(file)
			if end > now+1000*sim.Second*3600 {
				prog.show(fmt.Sprintf("%s:%d: %s: %s s simulated", file, line, cmd, now))
				return
			}
			prog.show(fmt.Sprintf("%s:%d: %s: %s of %s s simulated", file, line, cmd, now, end))
		}})
	err = in.Exec(stdout, name, 1, src)
	prog.done()
	if rec != nil {
		// What was recorded is written even when the script stopped
		// on an error: it shows how far it got.
		r := rec.Recording()
		var werr error
		if traceOn {
			werr = writeChromeFile(*tracePath, r, tracefmt.Meta{Title: "pagesim script " + name, Command: "pagesim script " + file})
		}
		if werr == nil && reportOn {
			werr = writeReportFile(*reportPath, r)
		}
		if werr != nil {
			fmt.Fprintf(stderr, "pagesim script: %v\n", werr)
			if err == nil {
				return exitInput
			}
		}
	}
	if err != nil {
		var se *script.Error
		if errors.As(err, &se) && se.Internal {
			fmt.Fprintf(stderr, "%v (please report it)\n", se)
			return exitBug
		}
		fmt.Fprintln(stderr, budgetHint(err))
		return exitInput
	}
	return exitOK
}

// readScriptFile reads a script: a regular file (not a FIFO, a device such
// as /dev/zero, or a folder) of at most maxScriptBytes, read through the
// same bound in case it grows while read.
func readScriptFile(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("%s: %w", path, pe.Err)
		}
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		kind := "not a regular file"
		switch {
		case fi.IsDir():
			kind = "a folder"
		case fi.Mode()&os.ModeNamedPipe != 0:
			kind = "a FIFO (give it as standard input: pagesim script - < FILE)"
		case fi.Mode()&os.ModeDevice != 0:
			kind = "a device"
		}
		return nil, fmt.Errorf("%s is %s, not a script file", path, kind)
	}
	if fi.Size() > maxScriptBytes {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, maxScriptBytes)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, maxScriptBytes+1))
}

// maxScriptBytes bounds a script file.
const maxScriptBytes = 8 << 20
