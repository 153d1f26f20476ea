package main

// proc.go is `pagesim proc FILE`: print a /proc file of a simulated machine,
// either freshly booted (an x86-64 layout of --mem over --nodes, --cpus CPUs
// per node) or built from a folder of real /proc files (--import DIR).
//
// The files it can print are a table, procFiles, filled by
// registerProcFile. Another file of this package adds one with its own
// init, as proc_pressure.go adds pagesim proc pressure:
//
//	func init() {
//		registerProcFile(&procFile{name: "pressure", summary: "...",
//			write: func(w io.Writer, m *mm.Machine) error { return m.WritePressure(w) }})
//	}

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/procfs"
	"github.com/pagesim/pagesim/engine/script"
)

// procFile is one file `pagesim proc` prints.
type procFile struct {
	name    string // as in /proc: "buddyinfo"
	summary string
	write   func(w io.Writer, m *mm.Machine) error
}

var procFiles = map[string]*procFile{}

// procCommand is the registered `proc` command, whose usage lists procFiles.
var procCommand *command

// registerProcFile adds a file to `pagesim proc`.
func registerProcFile(f *procFile) {
	procFiles[f.name] = f
	if procCommand != nil {
		procCommand.usage = procUsage()
	}
}

// Defaults of a freshly booted machine.
const (
	procDefaultMem   = "8G"
	procDefaultNodes = 1
)

func init() {
	registerProcFile(&procFile{name: "buddyinfo", summary: "free chunks per zone and order", write: procfs.Buddyinfo})
	registerProcFile(&procFile{name: "pagetypeinfo", summary: "free chunks per migratetype, pageblocks per migratetype", write: procfs.Pagetypeinfo})
	registerProcFile(&procFile{name: "zoneinfo", summary: "watermarks, protection, counters and pagesets per zone", write: procfs.Zoneinfo})
	registerProcFile(&procFile{name: "vmstat", summary: "system-wide counters and events", write: procfs.Vmstat})
	procCommand = &command{
		name:    "proc",
		summary: "print a /proc file (buddyinfo, zoneinfo, ...) of a simulated machine",
		run:     runProc,
	}
	procCommand.usage = procUsage()
	register(procCommand)
}

func procUsage() string {
	var b strings.Builder
	b.WriteString(`Usage: pagesim proc FILE [--mem SIZE] [--nodes N] [--cpus N] [--set vm.NAME=VALUE]... [--max-mem SIZE]
       pagesim proc FILE --import DIR [--cpus N] [--set vm.NAME=VALUE]... [--max-mem SIZE]
       pagesim proc FILE --scenario ID [--variant NAME] [--seed N] [--set NAME=VALUE]...
                    --at TIME [--max-mem SIZE]
       pagesim proc --collect DIR

Print FILE as the Linux kernel would for a simulated machine: a freshly booted
x86-64 machine, the machine built from the /proc files in DIR, or a
scenario's machine at a time of its run.

Files:
`)
	var names []string
	for n := range procFiles {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(&b, "  %-13s %s\n", n, procFiles[n].summary)
	}
	fmt.Fprintf(&b, `
Options:
  --mem SIZE     memory of a booted machine, split evenly over the nodes
                 (a number of bytes with an optional K, M, G or T suffix;
                 default %s)
  --nodes N      NUMA nodes of a booted machine (default %d)
  --cpus N       CPUs per node (default %d); with --import, used only when
                 the dump's zoneinfo does not list the CPUs
  --import DIR   build the machine from DIR, a folder holding any of
                 buddyinfo, pagetypeinfo, zoneinfo, vmstat copied from /proc,
                 and optionally sys_vm/NAME files copied from /proc/sys/vm
                 (regular files of at most %d MiB each)
  --collect DIR  on Linux, copy this machine's buddyinfo, pagetypeinfo
                 (root only since Linux 5.6), zoneinfo and vmstat from
                 /proc, and the vm sysctls pagesim models from
                 /proc/sys/vm into sys_vm/, to a new folder DIR that
                 --import and the page's "Start from a machine" take
  --set vm.NAME=VALUE
                 write a sysctl (repeatable, once per sysctl); it wins over
                 DIR's sys_vm files
  --scenario ID  the machine of a scenario's run (see 'pagesim scenarios'),
                 as 'pagesim run ID' runs it: --variant NAME (default the
                 scenario's first), --seed N (default 1) and --set take
                 what run takes (its parameters and any sysctl or THP knob
                 by its kernel path)
  --at TIME      with --scenario: the time of the run, as a duration
                 (30s, 1.5s, 250ms, 2m) from the run's start; the file is
                 the one the machine running then would print (for a
                 scenario of several phases, that phase's machine). A
                 time past the run's end is refused once the run has
                 ended there
%s

Exit status: 0 on success, 1 for bad input (a malformed file, an impossible
value, a machine over the memory budget), 2 for a usage error (an unknown
flag, a missing argument), 3 for an internal error.
`, procDefaultMem, procDefaultNodes, procfs.DefaultCPUsPerNode, procfs.MaxFileBytes>>20, maxMemUsage)
	return b.String()
}

// sysctlFlag collects --set values.
type sysctlFlag []mm.SysctlSetting

func (s *sysctlFlag) String() string { return "" }

func (s *sysctlFlag) Set(v string) error {
	name, value, ok := strings.Cut(v, "=")
	if !ok || strings.TrimSpace(name) == "" {
		return fmt.Errorf("want vm.NAME=VALUE, got %q", v)
	}
	name = strings.TrimSpace(name)
	if !mm.IsSysctl(name) {
		return fmt.Errorf("unknown sysctl %q (pagesim models %s)", name, strings.Join(mm.SysctlNames(), ", "))
	}
	key := strings.ReplaceAll(strings.TrimPrefix(name, "/proc/sys/"), "/", ".")
	for _, prev := range *s {
		if strings.ReplaceAll(strings.TrimPrefix(prev.Name, "/proc/sys/"), "/", ".") == key {
			return fmt.Errorf("%s is set twice; give each sysctl once", key)
		}
	}
	*s = append(*s, mm.SysctlSetting{Name: name, Value: value})
	return nil
}

// parseInterspersed parses flags that may come before and after positional
// arguments ("zoneinfo --mem 4G" and "--mem 4G zoneinfo").
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

func runProc(args []string, stdout, stderr io.Writer) int {
	usageErr := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "pagesim proc: %s (see 'pagesim proc --help')\n", fmt.Sprintf(format, a...))
		return exitUsage
	}
	inputErr := func(err error) int {
		msg := strings.SplitN(err.Error(), "\n", 2)[0]
		fmt.Fprintf(stderr, "pagesim proc: %s\n", msg)
		return exitInput
	}

	fs := flag.NewFlagSet("proc", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	mem := fs.String("mem", procDefaultMem, "")
	nodes := fs.Int("nodes", procDefaultNodes, "")
	cpus := fs.Int("cpus", procfs.DefaultCPUsPerNode, "")
	dir := fs.String("import", "", "")
	collect := fs.String("collect", "", "")
	maxMem := addMaxMem(fs)
	var rawSets multiFlag
	fs.Var(&rawSets, "set", "")
	scen := fs.String("scenario", "", "")
	variant := fs.String("variant", "", "")
	seed := fs.String("seed", "1", "")
	at := fs.String("at", "", "")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		if flagErrorCode(err) == exitInput {
			return inputErr(err)
		}
		return usageErr("%v", err)
	}
	if *collect != "" {
		if len(pos) > 0 || len(args) != 2 {
			return usageErr("--collect DIR takes nothing else")
		}
		return collectDump(*collect, stdout, stderr)
	}
	if len(pos) != 1 {
		if len(pos) == 0 {
			return usageErr("which file? one of %s", strings.Join(procFileNames(), ", "))
		}
		return usageErr("one file at a time, got %s", strings.Join(pos, " "))
	}
	file, ok := procFiles[pos[0]]
	if !ok {
		return inputErr(fmt.Errorf("no file %q; pagesim prints %s", pos[0], strings.Join(procFileNames(), ", ")))
	}
	explicit := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { explicit[f.Name] = true })
	if *cpus < 1 || *cpus > 1024 {
		return inputErr(fmt.Errorf("--cpus must be between 1 and 1024, got %d", *cpus))
	}
	limit, err := maxMem()
	if err != nil {
		return inputErr(err)
	}
	if explicit["scenario"] {
		for _, f := range []string{"mem", "nodes", "cpus", "import"} {
			if explicit[f] {
				return usageErr("--%s describes a machine of its own; --scenario's machine is the scenario's", f)
			}
		}
		if !explicit["at"] {
			return usageErr("--scenario needs --at TIME: when in the run")
		}
		return procAt(stdout, stderr, file, procAtArgs{id: *scen, variant: *variant, seed: *seed, at: *at, sets: rawSets, limit: limit})
	}
	for _, f := range []string{"variant", "seed", "at"} {
		if explicit[f] {
			return usageErr("--%s goes with --scenario", f)
		}
	}
	var sets sysctlFlag
	for _, v := range rawSets {
		if err := sets.Set(v); err != nil {
			return inputErr(fmt.Errorf("invalid value %q for flag -set: %v", v, err))
		}
	}

	var m *mm.Machine
	if explicit["import"] {
		if explicit["mem"] || explicit["nodes"] {
			return usageErr("--mem and --nodes describe a booted machine; an imported one takes its memory from DIR")
		}
		if *dir == "" {
			return usageErr("--import needs a folder")
		}
		info, err := os.Stat(*dir)
		if err != nil {
			return inputErr(fmt.Errorf("--import %s: %w", *dir, errors.Unwrap(err)))
		}
		if !info.IsDir() {
			return inputErr(fmt.Errorf("--import %s: not a folder", *dir))
		}
		var warnings []string
		m, warnings, err = procfs.Import(os.DirFS(*dir), procfs.ImportOptions{Sysctl: sets, CPUsPerNode: *cpus, MaxBytes: limit})
		if err != nil {
			var pe *procfs.ParseError
			if errors.As(err, &pe) {
				pe.File = filepath.Join(*dir, pe.File)
			}
			var be *mm.BudgetError
			if errors.As(err, &be) && be.Source != "" {
				be.Source = filepath.Join(*dir, be.Source)
			}
			return inputErr(budgetHint(err))
		}
		for _, w := range warnings {
			fmt.Fprintf(stderr, "pagesim proc: warning: %s\n", w)
		}
	} else {
		size, err := script.ParseSize(strings.TrimSpace(*mem))
		if err != nil {
			return inputErr(fmt.Errorf("--mem: %v", err))
		}
		if *nodes < 1 || *nodes > 64 {
			return inputErr(fmt.Errorf("--nodes must be between 1 and 64, got %d", *nodes))
		}
		cfg, err := mm.X86Layout(size, *nodes, *cpus)
		if err != nil {
			return inputErr(err)
		}
		cfg.Sysctl, cfg.MaxBytes = sets, limit
		if m, err = mm.NewMachine(cfg); err != nil {
			return inputErr(budgetHint(err))
		}
	}
	if err := file.write(stdout, m); err != nil {
		return inputErr(fmt.Errorf("writing %s: %w", file.name, err))
	}
	return exitOK
}

func procFileNames() []string {
	var names []string
	for n := range procFiles {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
