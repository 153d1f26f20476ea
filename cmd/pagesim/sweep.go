package main

// sweep.go: `pagesim sweep`, a scenario over a grid of settings, and
// `pagesim merge`, which joins a sharded sweep's JSON files into the
// output the unsharded sweep prints (engine/scenario/sweep.go).

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/pagesim/pagesim/engine/scenario"
	"github.com/pagesim/pagesim/engine/sim"
)

const sweepUsage = `Usage: pagesim sweep SCENARIO --vary NAME=V1,V2,... [--vary ...]
                      [--variant NAME]... [--seed N] [--runs N]
                      [--set NAME=VALUE]... [--format text|json|csv]
                      [--metric NAME]... [--plot METRIC] [--shard I/N]
                      [--jobs N] [--max-mem SIZE]

Runs a scenario over a grid: every combination of the --vary values (the
first --vary varies slowest) x the variants x --runs runs, run r of every
point from seed N+r, on every core. --vary takes a parameter or a knob,
as --set does; its values are separated by commas, or by semicolons when
a value holds a comma. A list parameter (thp-thisnode's guest_gb) takes
one value a point and its metrics drop the value's suffix (gb_per_s_34
is gb_per_s).

Output, on standard output:
  --format text   a table a metric (the headline ones, or each --metric):
                  a row per point, a column per variant, mean ± stddev
  --format json   every run's metrics with its point's values
  --format csv    one row per run: the varied values, variant, run, seed,
                  then every metric
  --plot METRIC   an SVG: METRIC against the first --vary, a line per
                  variant (and per value of the other --vary), the mean
                  over the runs, a band from their min to their max

--shard I/N runs only the I-th (from 0) of N slices of the grid's runs
and writes its JSON; 'pagesim merge' joins the N files into exactly what
the whole sweep prints. Example:
  pagesim sweep thp-thisnode --vary guest_gb=30,31,32,33,34,36,38,42 \
    --runs 3 --plot gb_per_s > sweep.svg

` + jobsUsage + `
` + maxMemUsage + `

Exit status: 0 ok, 1 a bad value (a parameter, a value to vary, a metric,
a machine over the memory budget), 2 usage error (an unknown flag, a
missing argument), 3 internal error.
`

const mergeUsage = `Usage: pagesim merge FILE... [--format text|json|csv] [--metric NAME]...
                     [--plot METRIC]

Joins the JSON files of a sharded sweep ('pagesim sweep ... --shard I/N'),
in any order, and prints exactly what the unsharded sweep prints with the
same --format, --metric or --plot. A whole sweep's JSON is a shard (0 of
1): 'pagesim merge sweep.json --plot METRIC' draws a sweep run earlier.
FILE - reads standard input. The files must be of one sweep, by this
version of pagesim, and complete: every shard once.

Exit status: 0 ok, 1 a bad value (a file that cannot be read, is not a
sweep's JSON, a shard missing or of another sweep, a metric the sweep
lacks), 2 usage error (an unknown flag, no file), 3 internal error.
`

func init() {
	register(&command{name: "sweep", summary: "run a scenario over a grid of settings: a table, JSON, CSV or an SVG plot", usage: sweepUsage, run: cmdSweep})
	register(&command{name: "merge", summary: "join a sharded sweep's JSON files into the whole sweep's output", usage: mergeUsage, run: cmdMerge})
}

// output is how a sweep prints: a format, the text's metrics, or a plot.
type output struct {
	format  *string
	metrics multiFlag
	plot    *string
}

func addOutput(fs *flag.FlagSet) *output {
	o := &output{format: fs.String("format", "text", ""), plot: fs.String("plot", "", "")}
	fs.Var(&o.metrics, "metric", "")
	return o
}

// check refuses a format pagesim does not print, and a plot asked for
// with another format.
func (o *output) check(fs *flag.FlagSet) error {
	switch *o.format {
	case "text", "json", "csv":
	default:
		return fmt.Errorf("--format must be text, json or csv, not %q", *o.format)
	}
	if *o.plot != "" && given(fs, "format") {
		return fmt.Errorf("--plot draws an SVG; it takes no --format")
	}
	if *o.plot != "" && len(o.metrics) > 0 {
		return fmt.Errorf("--plot draws one metric; --metric is for the text tables")
	}
	return nil
}

// print writes res in the chosen form, or returns the exit status and
// error.
func (o *output) print(res *scenario.SweepResult, stdout io.Writer) (int, error) {
	if *o.plot != "" {
		if err := res.CheckMetric(*o.plot); err != nil {
			return exitInput, err
		}
		b, err := plotSweep(res, *o.plot)
		if err != nil {
			return exitBug, err
		}
		stdout.Write(b)
		return exitOK, nil
	}
	switch *o.format {
	case "json":
		b, err := res.JSON()
		if err != nil {
			return exitBug, err
		}
		stdout.Write(b)
		fmt.Fprintln(stdout)
	case "csv":
		stdout.Write(res.CSV())
	default:
		text, err := res.Text(o.metrics)
		if err != nil {
			return exitInput, err
		}
		fmt.Fprint(stdout, text)
	}
	return exitOK, nil
}

// given reports whether the flag of that name was on the command line.
func given(fs *flag.FlagSet, name string) bool {
	seen := false
	fs.Visit(func(f *flag.Flag) { seen = seen || f.Name == name })
	return seen
}

// parseShard parses I/N.
func parseShard(s string) (int, int, error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(strings.TrimSpace(a))
	n, err2 := strconv.Atoi(strings.TrimSpace(b))
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n || n > scenario.MaxSweepRuns {
		return 0, 0, fmt.Errorf("--shard %q: want I/N with 0 <= I < N (I from 0, as Kubernetes' JOB_COMPLETION_INDEX)", s)
	}
	return i, n, nil
}

// sweepCmd is a parsed and checked sweep command line.
type sweepCmd struct {
	id    string
	s     *scenario.Spec
	o     scenario.SweepOptions
	out   *output
	jobs  jobs
	limit uint64
}

// parseSweep parses and checks a sweep's command line (without running
// anything, nor setting the collector's limit unless setLimit); a non-zero
// code comes with its one-line error.
func parseSweep(args []string, setLimit bool) (*sweepCmd, int, error) {
	fs := flag.NewFlagSet("sweep", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var variants, sets, vary multiFlag
	fs.Var(&variants, "variant", "")
	fs.Var(&sets, "set", "")
	fs.Var(&vary, "vary", "")
	seed := fs.String("seed", "1", "")
	runs := fs.Int("runs", 1, "")
	shard := fs.String("shard", "", "")
	out := addOutput(fs)
	maxMem := addMaxMem(fs)
	jobsFlag := addJobs(fs)
	if len(args) == 0 {
		return nil, exitUsage, fmt.Errorf("which scenario? (see 'pagesim scenarios' and 'pagesim sweep --help')")
	}
	c := &sweepCmd{id: args[0], out: out}
	if strings.HasPrefix(c.id, "-") {
		return nil, exitUsage, fmt.Errorf("the scenario comes first (see 'pagesim scenarios')")
	}
	if code, err := parseFlags(fs, args[1:]); err != nil {
		return nil, code, err
	}
	if fs.NArg() > 0 {
		return nil, exitUsage, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if len(vary) == 0 {
		return nil, exitUsage, fmt.Errorf("what to vary? (--vary NAME=V1,V2,...; see 'pagesim sweep --help')")
	}
	if err := out.check(fs); err != nil {
		return nil, exitInput, err
	}
	c.o.Vary = vary
	if *shard != "" {
		var err error
		if c.o.Shard, c.o.Shards, err = parseShard(*shard); err != nil {
			return nil, exitInput, err
		}
		if *out.plot != "" || *out.format == "csv" || len(out.metrics) > 0 || (*out.format == "text" && given(fs, "format")) {
			return nil, exitInput, fmt.Errorf("a shard writes its JSON; 'pagesim merge' prints the table, CSV or plot")
		}
		*out.format = "json"
	}
	if err := refuseRepeats(sets); err != nil {
		return nil, exitInput, err
	}
	var err error
	if setLimit {
		c.limit, err = maxMem()
	} else {
		c.limit, err = parseMaxMem(fs)
	}
	if err != nil {
		return nil, exitInput, err
	}
	if c.jobs, err = jobsFlag(); err != nil {
		return nil, exitInput, err
	}
	seedN, err := strconv.ParseUint(*seed, 10, 64)
	if err != nil {
		return nil, exitInput, fmt.Errorf("--seed %q is not a non-negative integer", *seed)
	}
	if c.s, err = scenario.Get(c.id); err != nil {
		return nil, exitInput, err
	}
	c.o.Options = scenario.Options{Variants: variants, Seed: seedN, Runs: *runs, Settings: sets, MaxBytes: c.limit, Jobs: c.jobs.n,
		Slice: 100 * sim.Millisecond}
	// Refuse the grid, a metric it lacks and a machine over the budget
	// before anything runs.
	values, n, err := c.s.SweepValues(c.o)
	if err != nil {
		return nil, exitInput, err
	}
	if _, err := c.s.FitJobs(values, c.jobs.n, n, c.limit); err != nil {
		return nil, exitInput, budgetHint(err)
	}
	head, err := c.s.SweepHeader(c.o)
	if err != nil {
		return nil, exitInput, err
	}
	for _, m := range append([]string{*out.plot}, out.metrics...) {
		if m != "" {
			if err := head.CheckMetric(m); err != nil {
				return nil, exitInput, err
			}
		}
	}
	return c, exitOK, nil
}

func cmdSweep(args []string, stdout, stderr io.Writer) int {
	fail := func(code int, err error) int {
		fmt.Fprintf(stderr, "pagesim sweep: %v\n", err)
		return code
	}
	c, code, err := parseSweep(args, true)
	if err != nil {
		return fail(code, err)
	}
	values, n, _ := c.s.SweepValues(c.o)
	fit, _ := c.s.FitJobs(values, c.jobs.n, n, c.limit)
	c.jobs.note(stderr, "pagesim sweep", fit, c.limit)
	prog := newProgress(stderr)
	prog.runs(c.id, &c.o.Options)
	res, err := c.s.Sweep(c.o)
	prog.done()
	if err != nil {
		return fail(exitInput, budgetHint(err))
	}
	if code, err := c.out.print(res, stdout); err != nil {
		return fail(code, err)
	}
	return exitOK
}

func cmdMerge(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("merge", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	out := addOutput(fs)
	fail := func(code int, err error) int {
		fmt.Fprintf(stderr, "pagesim merge: %v\n", err)
		return code
	}
	// Files and flags in any order.
	var files []string
	for rest := args; ; {
		if code, err := parseFlags(fs, rest); err != nil {
			return fail(code, err)
		}
		if fs.NArg() == 0 {
			break
		}
		files = append(files, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	if len(files) == 0 {
		return fail(exitUsage, fmt.Errorf("which files? (see 'pagesim merge --help')"))
	}
	if err := out.check(fs); err != nil {
		return fail(exitInput, err)
	}
	var shards []*scenario.SweepResult
	for _, name := range files {
		sh, err := readSweepFile(name)
		if err != nil {
			return fail(exitInput, fmt.Errorf("%s: %v", name, err))
		}
		shards = append(shards, sh)
	}
	res, err := scenario.MergeSweeps(files, shards)
	if err != nil {
		return fail(exitInput, err)
	}
	if code, err := out.print(res, stdout); err != nil {
		return fail(code, err)
	}
	return exitOK
}

// readSweepFile reads a sweep's JSON from a regular file, or from
// standard input for "-".
func readSweepFile(name string) (*scenario.SweepResult, error) {
	if name == "-" {
		return scenario.ReadSweep(os.Stdin)
	}
	fi, err := os.Stat(name)
	if err != nil {
		return nil, fmt.Errorf("cannot read it: %v", unwrapPathError(err))
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file")
	}
	if fi.Size() > scenario.MaxSweepFileBytes {
		return nil, fmt.Errorf("larger than %d bytes", scenario.MaxSweepFileBytes)
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("cannot read it: %v", unwrapPathError(err))
	}
	defer f.Close()
	return scenario.ReadSweep(f)
}

// unwrapPathError drops the path an *os.PathError repeats.
func unwrapPathError(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}
