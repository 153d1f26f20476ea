package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/pagesim/pagesim/internal/bench"
)

const benchUsage = `Usage: pagesim bench [--count N] [--format text|json]

Runs the engine benchmark the browser app runs as window.pagesimBench():
an order-0 and an order-9 alloc+free pair, booting thp-thisnode's machine
and running it to its end (internal/bench). Each line gives the wall time per
operation and a check value, equal in the browser and here when both did
the same work. With --count N every workload runs N times in turn and the
fastest run is reported, as the browser test does with the page's runs.
docs/PERFORMANCE.md compares the two.

Exit status: 0 on success, 1 for a bad value or a failed workload, 2 on a
usage error, 3 on an internal error.
`

func init() {
	register(&command{name: "bench", summary: "time the engine workloads the page benchmarks", usage: benchUsage, run: cmdBench})
}

func cmdBench(args []string, stdout, stderr io.Writer) int {
	fset := flag.NewFlagSet("bench", flag.ContinueOnError)
	fset.SetOutput(io.Discard)
	format := fset.String("format", "text", "text or json")
	count := fset.Int("count", 1, "runs per workload; the fastest is reported")
	if code, err := parseFlags(fset, args); err != nil {
		fmt.Fprintf(stderr, "pagesim bench: %v (see 'pagesim bench --help')\n", err)
		return code
	}
	if fset.NArg() > 0 {
		fmt.Fprintf(stderr, "pagesim bench: unexpected argument %q (see 'pagesim bench --help')\n", fset.Arg(0))
		return exitUsage
	}
	if *format != "text" && *format != "json" {
		fmt.Fprintf(stderr, "pagesim bench: --format must be text or json, not %q\n", *format)
		return exitInput
	}
	if *count < 1 || *count > 1000 {
		fmt.Fprintf(stderr, "pagesim bench: --count must be 1-1000, not %d\n", *count)
		return exitInput
	}
	var res []bench.Result
	for i := 0; i < *count; i++ {
		r, err := bench.Run()
		if err != nil {
			fmt.Fprintf(stderr, "pagesim bench: %v\n", err)
			return exitInput
		}
		res = bench.Fastest(res, r)
	}
	if *format == "json" {
		fmt.Fprintln(stdout, bench.JSON(res, nil))
		return exitOK
	}
	for _, r := range res {
		fmt.Fprintf(stdout, "%-48s %14.1f ns/op  %8d ops  check %d\n", r.Name, r.NsPerOp, r.Ops, r.Check)
	}
	return exitOK
}
