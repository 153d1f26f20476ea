package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/pagesim/pagesim/engine/scenario"
)

// multiFlag collects repeated flags.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

const runUsage = `Usage: pagesim run SCENARIO [--variant NAME]... [--seed N] [--runs N]
                    [--set NAME=VALUE]... [--format text|json]

Runs a patch scenario: every variant (or the ones named) from the same
seed, and prints the result in the form of the patch's cover letter
(text, at most 72 columns) or as one JSON object.

--set takes the scenario's parameters (see 'pagesim scenarios') and any
sysctl or THP knob by its kernel path:
  --set scale=1                       the seed's full machine size
  --set vm.defrag_mode=1
  --set transparent_hugepage.defrag=madvise
  --set transparent_hugepage.hugepages-64kB.enabled=always

Exit status: 0 ok, 1 bad parameter or value, 2 usage error.
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
	if len(args) == 0 {
		fmt.Fprint(stderr, runUsage)
		return exitUsage
	}
	id := args[0]
	if strings.HasPrefix(id, "-") {
		fmt.Fprintln(stderr, "pagesim run: the scenario comes first (see 'pagesim scenarios')")
		return exitUsage
	}
	if err := fs.Parse(args[1:]); err != nil {
		fmt.Fprintf(stderr, "pagesim run: %v\n", err)
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "pagesim run: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	if *format != "text" && *format != "json" {
		fmt.Fprintf(stderr, "pagesim run: --format must be text or json, not %q\n", *format)
		return exitUsage
	}
	seedN, err := strconv.ParseUint(*seed, 10, 64)
	if err != nil {
		fmt.Fprintf(stderr, "pagesim run: --seed %q is not a non-negative integer\n", *seed)
		return exitInput
	}
	s, err := scenario.Get(id)
	if err != nil {
		fmt.Fprintf(stderr, "pagesim run: %v\n", err)
		return exitInput
	}
	res, err := s.RunAll(scenario.Options{Variants: variants, Seed: seedN, Runs: *runs, Settings: sets})
	if err != nil {
		fmt.Fprintf(stderr, "pagesim run: %v\n", err)
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
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 || (*format != "text" && *format != "json") {
		fmt.Fprint(stderr, scenariosUsage)
		return exitUsage
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
			rng := ""
			switch {
			case p.Min != nil && p.Max != nil:
				rng = fmt.Sprintf(" [%g, %g]", *p.Min, *p.Max)
			case len(p.Choices) > 0:
				rng = " {" + strings.Join(p.Choices, ", ") + "}"
			}
			fmt.Fprintf(stdout, "    %-12s %-8s default %s%s: %s\n", p.Name, p.Kind, p.Default, rng, p.Help)
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
