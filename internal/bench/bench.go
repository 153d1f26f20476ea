// Package bench is a fixed engine workload that runs the same natively and
// in the browser, so that the two can be compared: the page exposes it as
// window.pagesimBench() (ui/jsbridge), the browser test ui/e2e runs it in
// headless Chromium and runs Run natively in the same test, and
// BenchmarkWorkloads runs it under `go test -bench`.
//
// The workloads are what the page spends its time on: the allocator's
// fast path (an order-0 alloc/free pair through the per-CPU lists, and an
// order-9 pair through the buddy lists), and a real scenario run to its
// end (seed 003's upstream variant at a small scale: faults, THP
// allocation, direct reclaim, pins), plus booting its machine. Each reports wall
// nanoseconds per operation; the work itself is deterministic (fixed seed
// and sizes), so only the wall time differs between the two builds.
package bench

import (
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/scenario"
	"github.com/pagesim/pagesim/engine/sim"
)

// Result is one workload's figure.
type Result struct {
	Name string `json:"name"`
	// Ops is how many operations ran; NsPerOp the wall time of one.
	Ops     int     `json:"ops"`
	NsPerOp float64 `json:"nsPerOp"`
	// Check is a number the work produced (free pages, simulated time),
	// equal natively and in the browser: proof the same work ran.
	Check uint64 `json:"check"`
}

// Workload is one named piece of work.
type Workload struct {
	Name string
	// Run does the work for ops operations and returns its check value
	// and the wall time of the measured part.
	Run func(ops int) (check uint64, wall time.Duration, err error)
	// Ops is the operation count Run uses.
	Ops int
}

// Workloads lists the workloads in the order Run reports them.
var Workloads = []Workload{
	{Name: "order-0 alloc+free pair (pcp)", Run: allocFree(0), Ops: 1000000},
	{Name: "order-9 alloc+free pair (buddy)", Run: allocFree(9), Ops: 50000},
	{Name: "thp-thisnode upstream scale=0.03: boot", Run: scenarioBoot, Ops: 3},
	{Name: "thp-thisnode upstream scale=0.03: the whole run", Run: scenarioRun, Ops: 1},
}

// allocFree is BenchmarkAllocFreeOrder0PCP's loop (engine/mm) on a 1 GiB
// one-node machine, at the given order.
func allocFree(order mm.Order) func(int) (uint64, time.Duration, error) {
	return func(ops int) (uint64, time.Duration, error) {
		lay, err := mm.SimpleLayout(1<<30/mm.PAGE_SIZE, 1, 1)
		if err != nil {
			return 0, 0, err
		}
		m, err := mm.NewMachine(lay)
		if err != nil {
			return 0, 0, err
		}
		tk := m.World.NewTask("bench", 0, nil, sim.Never)
		gfp := mm.GFP_KERNEL
		if order > 0 {
			gfp = mm.MustParseGFP("GFP_KERNEL|__GFP_COMP")
		}
		// Warm up (the per-CPU list fills), then measure.
		for i := 0; i < 1000; i++ {
			m.FreePages(tk, m.AllocPages(tk, gfp, order, 0, 0), order)
		}
		start := time.Now()
		for i := 0; i < ops; i++ {
			pfn := m.AllocPages(tk, gfp, order, 0, 0)
			if pfn == mm.NilPFN {
				return 0, 0, fmt.Errorf("order-%d allocation failed", order)
			}
			m.FreePages(tk, pfn, order)
		}
		return m.NrFreePages(), time.Since(start), nil
	}
}

var benchSettings = []string{"scale=0.03", "guest_gb=42"}

func startScenario() (*scenario.Run, error) {
	s, err := scenario.Get("thp-thisnode")
	if err != nil {
		return nil, err
	}
	st, err := s.Parse(benchSettings)
	if err != nil {
		return nil, err
	}
	return s.NewRun("upstream", st, 1, 0)
}

// scenarioBoot boots the scenario's machine (a 2-node ~2 GiB host with its
// page cache) ops times.
func scenarioBoot(ops int) (uint64, time.Duration, error) {
	var check uint64
	start := time.Now()
	for i := 0; i < ops; i++ {
		r, err := startScenario()
		if err != nil {
			return 0, 0, err
		}
		free, _ := r.View().VMStat("nr_free_pages")
		check += uint64(free)
	}
	return check, time.Since(start), nil
}

// scenarioRun runs the scenario to its end (the guest's faults spill from
// node 0 and every THP fault reclaims there first), in the page's slices
// of 200 µs, after booting it.
func scenarioRun(ops int) (uint64, time.Duration, error) {
	var check uint64
	var wall time.Duration
	for i := 0; i < ops; i++ {
		r, err := startScenario()
		if err != nil {
			return 0, 0, err
		}
		start := time.Now()
		for !r.Done() {
			r.Advance(r.Now()+200*sim.Microsecond, math.MaxInt)
		}
		wall += time.Since(start)
		check += uint64(r.Now()) + r.View().Event(mm.PGSCAN_DIRECT)
	}
	return check, wall, nil
}

// Run runs every workload once and returns their figures.
func Run() ([]Result, error) {
	var out []Result
	for _, w := range Workloads {
		check, wall, err := w.Run(w.Ops)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", w.Name, err)
		}
		out = append(out, Result{Name: w.Name, Ops: w.Ops, NsPerOp: float64(wall.Nanoseconds()) / float64(w.Ops), Check: check})
	}
	return out, nil
}

// Fastest returns best with each workload's time lowered to its time in
// run where that is faster; best may be nil (the first run).
func Fastest(best, run []Result) []Result {
	if best == nil {
		return append([]Result(nil), run...)
	}
	for i := range best {
		best[i].NsPerOp = min(best[i].NsPerOp, run[i].NsPerOp)
	}
	return best
}

// RunJSON is Run as JSON ({"results": [...]} or {"error": "..."}).
func RunJSON() string { return JSON(Run()) }

// JSON writes Run's results, or its error, as RunJSON does.
func JSON(res []Result, err error) string {
	var v struct {
		Results []Result `json:"results,omitempty"`
		Error   string   `json:"error,omitempty"`
	}
	if err != nil {
		v.Error = err.Error()
	}
	v.Results = res
	b, _ := json.Marshal(v)
	return string(b)
}
