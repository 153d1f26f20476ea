package main

// script.go is `pagesim script FILE`: run a script of the pagesim script
// language (docs/SCRIPT.md) and print what it prints. FILE "-" reads the
// script from standard input.

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/pagesim/pagesim/engine/script"
)

const scriptUsage = `Usage: pagesim script FILE [--check]
       pagesim script - [--check] < FILE

Runs a pagesim script: it builds a simulated machine, sets the kernel's
knobs, fills, fragments and pins memory, starts tasks, advances simulated
time and prints /proc files, counters and traces (see docs/SCRIPT.md, or
'pagesim script -' with the line 'help'). FILE - reads standard input.

Every statement is checked before the first one runs; an error names the
script and the line:

  script.txt:12: unknown command "fualt"

Options:
  --check   run the machine's consistency check after every command

Exit status: 0 on success, 1 when the script is wrong or an expect fails,
2 for a usage error, 3 for an internal error of the engine.
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
	if err := fs.Parse(rest); err != nil {
		fmt.Fprintf(stderr, "pagesim script: %v\n%s", err, scriptUsage)
		return exitUsage
	}
	if file == "" || fs.NArg() > 0 {
		if fs.NArg() > 0 {
			fmt.Fprintf(stderr, "pagesim script: one FILE at a time, got %q too\n", fs.Arg(0))
		} else {
			fmt.Fprint(stderr, scriptUsage)
		}
		return exitUsage
	}
	var src []byte
	var err error
	name := file
	if file == "-" {
		name = "stdin"
		src, err = io.ReadAll(io.LimitReader(scriptStdin, maxScriptBytes+1))
	} else {
		src, err = os.ReadFile(file)
	}
	if err != nil {
		fmt.Fprintf(stderr, "pagesim script: %v\n", err)
		return exitInput
	}
	if len(src) > maxScriptBytes {
		fmt.Fprintf(stderr, "pagesim script: %s is larger than %d bytes\n", name, maxScriptBytes)
		return exitInput
	}
	in := script.New(script.Options{CheckEveryCommand: *checkAll})
	if err := in.Exec(stdout, name, 1, src); err != nil {
		var se *script.Error
		if errors.As(err, &se) && se.Internal {
			fmt.Fprintf(stderr, "%v (please report it)\n", se)
			return exitBug
		}
		fmt.Fprintln(stderr, err)
		return exitInput
	}
	return exitOK
}

// maxScriptBytes bounds a script file.
const maxScriptBytes = 8 << 20
