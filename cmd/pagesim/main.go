// Command pagesim is the native command line of pagesim: it prints the
// /proc files of a simulated machine, runs the patch scenarios and scripts,
// and serves the browser app (whose site is embedded in the binary).
//
// Exit status (one rule for every subcommand, cli.go): 0 on success, 1 when
// a value is bad (a malformed file, an impossible parameter, a machine over
// the memory budget), 2 when the command line's shape is wrong (an unknown
// command or flag, a missing argument). No Go stack trace reaches the user:
// an internal error prints one line and exits 3.
package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/pagesim/pagesim/engine/scenario"
)

// command is one subcommand.
type command struct {
	name    string
	summary string
	usage   string
	run     func(args []string, stdout, stderr io.Writer) int
}

var commands = map[string]*command{}

func register(c *command) { commands[c.name] = c }

// Exit statuses.
const (
	exitOK    = 0
	exitInput = 1
	exitUsage = 2
	exitBug   = 3
)

func main() {
	os.Exit(runMain(os.Args[1:], os.Stdout, os.Stderr))
}

func runMain(args []string, stdout, stderr io.Writer) (code int) {
	defer func() {
		if r := recover(); r != nil {
			first := strings.SplitN(fmt.Sprint(r), "\n", 2)[0]
			fmt.Fprintf(stderr, "pagesim: internal error: %s (please report it)\n", first)
			code = exitBug
		}
	}()
	if len(args) == 0 {
		printHelp(stderr)
		return exitUsage
	}
	name := args[0]
	switch name {
	case "help", "-h", "-help", "--help":
		if len(args) > 1 {
			if c, ok := commands[args[1]]; ok {
				fmt.Fprint(stdout, c.usage)
				return exitOK
			}
			fmt.Fprintf(stderr, "pagesim: unknown command %q\n", args[1])
			return exitUsage
		}
		printHelp(stdout)
		return exitOK
	case "version", "-version", "--version":
		fmt.Fprintf(stdout, "pagesim %s\n", scenario.Version)
		return exitOK
	}
	c, ok := commands[name]
	if !ok {
		fmt.Fprintf(stderr, "pagesim: unknown command %q (see 'pagesim help')\n", name)
		return exitUsage
	}
	for _, a := range args[1:] {
		if a == "-h" || a == "-help" || a == "--help" {
			fmt.Fprint(stdout, c.usage)
			return exitOK
		}
	}
	return c.run(args[1:], stdout, stderr)
}

func printHelp(w io.Writer) {
	fmt.Fprintln(w, "pagesim: the Linux page allocator, simulated")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Usage: pagesim COMMAND [ARGS]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands:")
	var names []string
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "  help       show this help, or 'pagesim help COMMAND'")
	fmt.Fprintln(w, "  version    print the version")
}
