package app

// counters.go reads the /proc/vmstat numbers a scenario declares as the
// ones that matter for it (Spec.Counters) the way the page shows them: an
// event (allocstall_movable, pgscan_direct) summed over every machine the
// run has booted, as the result table sums it over the phases; a gauge
// (nr_free_pages) as the current machine has it now.
//
// pgalloc_<zone> counts pages by the zone they came from, so at the
// page's small scales, where node 0 is all DMA32, pgalloc_normal stays 0
// while the machine allocates flat out: the page shows the family summed
// over every zone, once, as "pgalloc (all zones)". allocstall_<zone> is
// counted by the request's highest usable zone (gfp_zone), not by where
// memory is, so it is shown as named and equals the table's number.

import (
	"slices"
	"strings"

	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/scenario"
)

// counterRef is one row of the live numbers (or one chart): an event or a
// family of events summed, or a gauge read by name.
type counterRef struct {
	// Label is what the page shows ("allocstall_movable", "pgalloc (all
	// zones)").
	Label string
	// Events are summed over the run's machines; empty for a gauge.
	Events []mm.VMEventItem
	// Gauge is the /proc/vmstat name read from the current machine.
	Gauge string
}

// pgallocLabel names the pgalloc family summed over the zones.
const pgallocLabel = "pgalloc (all zones)"

// pgallocEvents are pgalloc_dma, _dma32, _normal and _movable.
var pgallocEvents = []mm.VMEventItem{mm.PGALLOC_DMA, mm.PGALLOC_DMA32, mm.PGALLOC_NORMAL, mm.PGALLOC_MOVABLE}

func eventByName(name string) (mm.VMEventItem, bool) {
	for i, n := range mm.VMEventNames {
		if n == name {
			return mm.VMEventItem(i), true
		}
	}
	return 0, false
}

// counterRefs turns /proc/vmstat names into the page's rows, in order,
// the pgalloc family once.
func counterRefs(names []string) []counterRef {
	var out []counterRef
	for _, n := range names {
		if strings.HasPrefix(n, "pgalloc_") && slices.ContainsFunc(pgallocEvents, func(e mm.VMEventItem) bool { return e.String() == n }) {
			if !slices.ContainsFunc(out, func(c counterRef) bool { return c.Label == pgallocLabel }) {
				out = append(out, counterRef{Label: pgallocLabel, Events: pgallocEvents})
			}
			continue
		}
		if e, ok := eventByName(n); ok {
			out = append(out, counterRef{Label: n, Events: []mm.VMEventItem{e}})
			continue
		}
		out = append(out, counterRef{Label: n, Gauge: n})
	}
	return out
}

// read returns the counter's value on a run.
func (c counterRef) read(v scenario.View) int64 {
	if c.Gauge != "" {
		n, _ := v.VMStat(c.Gauge)
		return n
	}
	var n uint64
	for _, e := range c.Events {
		n += v.Event(e)
	}
	return int64(n)
}

// LiveCounters is the list of /proc/vmstat names the page shows for a
// scenario: its own (Spec.Counters), else DefaultVmstat.
func LiveCounters(s *scenario.Spec) []string {
	if len(s.Counters) > 0 {
		return s.Counters
	}
	return DefaultVmstat
}

// ChartCounters is how many of the key counters are charted.
const ChartCounters = 2

// chartRefs returns the counters the page charts for a scenario: the
// first ChartCounters events of its list (gauges are not charted: a rate
// of nr_free_pages means nothing), so a scenario orders its list with the
// counters that tell its story first.
func chartRefs(s *scenario.Spec) []counterRef {
	var out []counterRef
	for _, c := range counterRefs(LiveCounters(s)) {
		if len(c.Events) > 0 && len(out) < ChartCounters {
			out = append(out, c)
		}
	}
	return out
}

// ChartNames returns the labels of the counters the page charts for a
// scenario, in order.
func ChartNames(s *scenario.Spec) []string {
	var out []string
	for _, c := range chartRefs(s) {
		out = append(out, c.Label)
	}
	return out
}
