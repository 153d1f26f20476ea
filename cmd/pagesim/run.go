package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/scenario"
	"github.com/pagesim/pagesim/engine/sim"
	"github.com/pagesim/pagesim/engine/tracefmt"
)

// refuseRepeats returns an error when two NAME=VALUE settings name the
// same parameter or knob (a knob may be spelt by its /proc/sys or sysfs
// path: vm.defrag_mode and /proc/sys/vm/defrag_mode are the same).
func refuseRepeats(sets []string) error {
	seen := map[string]string{}
	for _, set := range sets {
		name, _, _ := strings.Cut(set, "=")
		key := strings.TrimSpace(name)
		key = strings.TrimPrefix(key, "/proc/sys/")
		key = strings.TrimPrefix(key, "/sys/kernel/mm/")
		key = strings.ReplaceAll(key, "/", ".")
		if prev, ok := seen[key]; ok {
			return fmt.Errorf("--set %s is given twice (%q and %q); give each setting once", key, prev, set)
		}
		seen[key] = set
	}
	return nil
}

// multiFlag collects repeated flags.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

const runUsage = `Usage: pagesim run SCENARIO [--variant NAME]... [--seed N] [--runs N]
                    [--set NAME=VALUE]... [--format text|json]
                    [--jobs N] [--max-mem SIZE] [--trace DIR]

Runs a patch scenario: every variant (or the ones named) from the same
seed, and prints the result in the form of the patch's cover letter
(text, at most 72 columns) or as one JSON object. Run r of each variant
starts from seed N+r. The runs go on every core at once (--jobs); the
output is the same bytes whatever --jobs is. On a terminal, standard
error shows how many runs are done and where the latest one is.

--set takes the scenario's parameters (see 'pagesim scenarios') and any
sysctl or THP knob by its kernel path, each at most once:
  --set scale=1                       the seed's full machine size
  --set vm.defrag_mode=1
  --set transparent_hugepage.defrag=madvise
  --set transparent_hugepage.hugepages-64kB.enabled=always

` + jobsUsage + `
` + maxMemUsage + `
  --trace DIR    record every run and write two files per run into DIR
                 (created if needed): SCENARIO-VARIANT-runN.json, Chrome's
                 JSON trace event format for Perfetto UI and
                 chrome://tracing, and SCENARIO-VARIANT-runN.txt, the
                 tracepoint log as trace-cmd report prints it. Each run's
                 recording keeps at most 256 MiB (a quarter of --max-mem if
                 that is less), counted in the budget of the runs in
                 flight.

Exit status: 0 ok, 1 a bad value (a parameter, a number, a machine over
the memory budget), 2 usage error (an unknown flag, a missing argument),
3 internal error.
`

func init() {
	register(&command{name: "run", summary: "run a patch scenario and print its result table", usage: runUsage, run: cmdRun})
}

func cmdRun(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var variants, sets multiFlag
	fs.Var(&variants, "variant", "variant to run (repeatable)")
	fs.Var(&sets, "set", "NAME=VALUE (repeatable)")
	seed := fs.String("seed", "1", "random seed")
	runs := fs.Int("runs", 1, "runs per variant")
	format := fs.String("format", "text", "text or json")
	maxMem := addMaxMem(fs)
	jobsFlag := addJobs(fs)
	trace := fs.String("trace", "", "folder for the trace files")
	if len(args) == 0 {
		fmt.Fprintln(stderr, "pagesim run: which scenario? (see 'pagesim scenarios' and 'pagesim run --help')")
		return exitUsage
	}
	id := args[0]
	if strings.HasPrefix(id, "-") {
		fmt.Fprintln(stderr, "pagesim run: the scenario comes first (see 'pagesim scenarios')")
		return exitUsage
	}
	if code, err := parseFlags(fs, args[1:]); err != nil {
		fmt.Fprintf(stderr, "pagesim run: %v\n", err)
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "pagesim run: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	if *format != "text" && *format != "json" {
		fmt.Fprintf(stderr, "pagesim run: --format must be text or json, not %q\n", *format)
		return exitInput
	}
	if err := refuseRepeats(sets); err != nil {
		fmt.Fprintf(stderr, "pagesim run: %v\n", err)
		return exitInput
	}
	limit, err := maxMem()
	if err != nil {
		fmt.Fprintf(stderr, "pagesim run: %v\n", err)
		return exitInput
	}
	seedN, err := strconv.ParseUint(*seed, 10, 64)
	if err != nil {
		fmt.Fprintf(stderr, "pagesim run: --seed %q is not a non-negative integer\n", *seed)
		return exitInput
	}
	jobs, err := jobsFlag()
	if err != nil {
		fmt.Fprintf(stderr, "pagesim run: %v\n", err)
		return exitInput
	}
	s, err := scenario.Get(id)
	if err != nil {
		fmt.Fprintf(stderr, "pagesim run: %v\n", err)
		return exitInput
	}
	o := scenario.Options{Variants: variants, Seed: seedN, Runs: *runs, Settings: sets, MaxBytes: limit, Jobs: jobs.n,
		Slice: 100 * sim.Millisecond, // how often progress is looked at; the result is the same
	}
	if flagGiven(fs, "trace") {
		if err := traceDir(*trace); err != nil {
			fmt.Fprintf(stderr, "pagesim run: %v\n", err)
			return exitInput
		}
		o.Record = &mm.RecordConfig{MaxBytes: recordBytes(limit)}
		// Each run writes its files when it ends, on its own
		// goroutine; the files are the run's own.
		o.Recorded = func(variant string, run int, r *scenario.Run) error {
			rec := r.Recording()
			base := traceBase(*trace, id, variant, run)
			cmd := fmt.Sprintf("pagesim run %s --variant %s --seed %d", id, variant, seedN+uint64(run))
			for _, set := range sets {
				cmd += " --set " + set
			}
			meta := tracefmt.Meta{Title: fmt.Sprintf("%s %s, seed %d", id, variant, seedN+uint64(run)), Command: cmd}
			if err := writeChromeFile(base+".json", rec, meta); err != nil {
				return err
			}
			return writeReportFile(base+".txt", rec)
		}
	}
	var perRun uint64
	if o.Record != nil {
		perRun = o.Record.MaxBytes
	}
	if st, vs, err := s.Prepare(o); err == nil {
		// The budget's word on --jobs, before anything runs (RunAll
		// applies the same rule; its errors are reported below).
		if fit, err := s.FitJobsWith([]scenario.Values{st.Values}, jobs.n, len(vs)**runs, limit, perRun); err == nil {
			jobs.note(stderr, "pagesim run", fit, limit)
		}
	}
	prog := newProgress(stderr)
	prog.runs(id, &o)
	res, err := s.RunAll(o)
	prog.done()
	if err != nil {
		fmt.Fprintf(stderr, "pagesim run: %v\n", budgetHint(err))
		return exitInput
	}
	if *format == "json" {
		b, err := res.JSON()
		if err != nil {
			fmt.Fprintf(stderr, "pagesim run: %v\n", err)
			return exitBug
		}
		stdout.Write(b)
		fmt.Fprintln(stdout)
		return exitOK
	}
	fmt.Fprint(stdout, res.Text())
	return exitOK
}

const scenariosUsage = `Usage: pagesim scenarios [--format text|json]

Lists every scenario with its variants, parameters (name, default,
allowed range, meaning) and metrics.

Exit status: 0 ok, 1 a bad value, 2 usage error, 3 internal error.
`

func init() {
	register(&command{name: "scenarios", summary: "list the scenarios, their variants, parameters and metrics", usage: scenariosUsage, run: cmdScenarios})
}

type scenarioDoc struct {
	*scenario.Spec
	Metrics []scenario.Metric `json:"metrics"`
}

func cmdScenarios(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("scenarios", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	format := fs.String("format", "text", "text or json")
	if code, err := parseFlags(fs, args); err != nil {
		fmt.Fprintf(stderr, "pagesim scenarios: %v (see 'pagesim scenarios --help')\n", err)
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "pagesim scenarios: unexpected argument %q (see 'pagesim scenarios --help')\n", fs.Arg(0))
		return exitUsage
	}
	if *format != "text" && *format != "json" {
		fmt.Fprintf(stderr, "pagesim scenarios: --format must be text or json, not %q\n", *format)
		return exitInput
	}
	var docs []scenarioDoc
	for _, s := range scenario.All() {
		st, err := s.Parse(nil)
		if err != nil {
			fmt.Fprintf(stderr, "pagesim scenarios: %v\n", err)
			return exitBug
		}
		docs = append(docs, scenarioDoc{Spec: s, Metrics: s.MetricsOf(st.Values)})
	}
	if *format == "json" {
		b, _ := json.MarshalIndent(docs, "", "  ")
		stdout.Write(b)
		fmt.Fprintln(stdout)
		return exitOK
	}
	for _, d := range docs {
		fmt.Fprintf(stdout, "%s (seed %s): %s\n", d.ID, d.Seed, d.Title)
		fmt.Fprintf(stdout, "  patch: %s\n", d.Patch)
		for _, l := range d.Lore {
			fmt.Fprintf(stdout, "  lore: %s\n", l)
		}
		fmt.Fprintln(stdout, "  variants:")
		for _, v := range d.Variants {
			opt := ""
			if v.Optional {
				opt = " (optional: run with --variant)"
			}
			fmt.Fprintf(stdout, "    %-16s %s%s\n", v.Name, v.Help, opt)
		}
		fmt.Fprintln(stdout, "  parameters:")
		for _, p := range d.Params {
			fmt.Fprintf(stdout, "    %-12s %-8s default %s%s: %s\n", p.Name, p.Kind, p.Default, p.Range(), p.Help)
		}
		if len(d.Knobs) > 0 {
			fmt.Fprintln(stdout, "  knobs set by the scenario (override with --set):")
			for _, k := range d.Knobs {
				fmt.Fprintf(stdout, "    %s=%s\n", k.Name, k.Value)
			}
		}
		fmt.Fprintln(stdout, "  metrics:")
		for _, m := range d.Metrics {
			fmt.Fprintf(stdout, "    %-22s %s\n", m.Name, m.Help)
		}
		fmt.Fprintln(stdout)
	}
	return exitOK
}
