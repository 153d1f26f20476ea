package scenario

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pagesim/pagesim/engine/sim"
)

// checkEvery is how often the scenario tests run CheckInvariants: every
// 500th simulated event (a few hundred checks per run), which keeps the
// tests at a few seconds.
const checkEvery = 500

// The seed's directions, at a small scale (2 x 1.6 GiB nodes) so the test
// stays fast; docs/FIDELITY.md has scale=1 and says which of the seed's
// bands hold.
func TestTHPThisnodeUpstreamCollapsesAndBothFixesDoNot(t *testing.T) {
	s, err := Get("thp-thisnode")
	require.NoError(t, err)
	res, err := s.RunAll(Options{Seed: 1, Runs: 1, Settings: []string{"scale=0.05"}, CheckEvery: checkEvery})
	require.NoError(t, err)
	byName := map[string]map[string]float64{}
	for _, v := range res.Variants {
		byName[v.Name] = v.Mean
	}
	up, fix1, fix2 := byName["upstream"], byName["only-compact"], byName["drop-thisnode"]
	require.NotNil(t, up)
	for _, v := range []map[string]float64{up, fix1, fix2} {
		assert.InDelta(t, 3.5, v["gb_per_s_30"], 1.5, "a guest that fits maps at 2-5 GB/s")
	}
	prev := up["gb_per_s_30"]
	var steps []float64
	// How much faster the fixes are grows with the guest's excess over
	// node 0 (and with the node's size: the 2018 kernel's inactive anon
	// list, the part of the pinned memory each failed fault scans, is
	// 1/(1+sqrt(10 x GiB)) of it; docs/FIDELITY.md).
	lead := [2]float64{2, 2}
	for i, g := range []string{"34", "38", "42"} {
		assert.Less(t, up["gb_per_s_"+g], prev, "upstream falls as the guest grows (%s GB)", g)
		prev = up["gb_per_s_"+g]
		for k, fix := range []map[string]float64{fix1, fix2} {
			r := fix["gb_per_s_"+g] / up["gb_per_s_"+g]
			assert.Greater(t, r, lead[k], "fix %d's lead over upstream grows with the guest (%s GB)", k+1, g)
			lead[k] = r
		}
		assert.GreaterOrEqual(t, fix1["gb_per_s_"+g], 2.0)
		assert.GreaterOrEqual(t, fix2["gb_per_s_"+g], 2.0)
		// fix 1 keeps the rest on base pages, on node 1; fix 2 on THPs.
		assert.Less(t, fix1["thp_pct_"+g], 99.0)
		assert.InDelta(t, fix1["thp_pct_"+g], fix1["node0_pct_"+g], 2.0)
		assert.Greater(t, fix2["thp_pct_"+g], 99.0)
		assert.Less(t, fix2["node0_pct_"+g], 99.0)
		if i > 0 {
			steps = append(steps, up["elapsed_s_"+g]-up["elapsed_s_"+[]string{"34", "38", "42"}[i-1]])
		}
	}
	require.Len(t, steps, 2)
	assert.InDelta(t, steps[0], steps[1], 0.3*steps[0], "each 4 GB step adds about the same time")
	assert.Greater(t, up["allocstall_movable"], 0.0, "upstream reclaims")
	assert.Greater(t, up["pgscan_direct"], 0.0)
	assert.Equal(t, 0.0, fix1["allocstall_movable"]+fix1["allocstall_normal"], "fix 1 never reclaims")
	assert.Equal(t, 0.0, up["pswpout"], "pinned memory is never swapped")
}

func TestTHPThisnodeOutputIsDeterministic(t *testing.T) {
	s, err := Get("thp-thisnode")
	require.NoError(t, err)
	o := Options{Seed: 7, Runs: 2, Variants: []string{"upstream", "modern"}, Settings: []string{"scale=0.03", "guest_gb=30,40"}, CheckEvery: checkEvery}
	a, err := s.RunAll(o)
	require.NoError(t, err)
	b, err := s.RunAll(o)
	require.NoError(t, err)
	ja, _ := a.JSON()
	jb, _ := b.JSON()
	assert.Equal(t, string(ja), string(jb))
	assert.Equal(t, a.Text(), b.Text())
	for _, line := range splitLines(a.Text()) {
		assert.LessOrEqual(t, len([]rune(line)), 72, "line too wide: %q", line)
	}
}

func TestTHPThisnodeRefusesImpossibleParameters(t *testing.T) {
	s, err := Get("thp-thisnode")
	require.NoError(t, err)
	for _, set := range [][]string{{"guest_gb=500"}, {"scale=2"}, {"nodes=1"}, {"mempolicy=random"}, {"mempolicy=bind"}, {"mempolicy=bind:2"}, {"mempolicy=preferred:0-1"}, {"nodes=3", "mempolicy=interleave:3"}, {"vm.defrag_mode=3"}, {"transparent_hugepage.defrag=sometimes"}, {"bogus=1"}, {"guest_gb="}} {
		_, err := s.RunAll(Options{Seed: 1, Runs: 1, Settings: set})
		assert.Error(t, err, "%v", set)
	}
	_, err = s.RunAll(Options{Seed: 1, Runs: 1, Settings: []string{"nodes=3", "mempolicy=interleave:2", "scale=0.02", "guest_gb=30"}})
	assert.NoError(t, err, "a node the machine has")
}

func splitLines(s string) []string {
	var out []string
	start := 0
	for i, c := range s {
		if c == '\n' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return out
}

// Each seed is another boot of the host: KASLR puts the kernel image on
// node 0 or node 1, and 16 MiB less on node 0 is 8 more THP faults that
// fall back. The same seed repeats, byte for byte.
func TestTHPThisnodeSeedsAreDifferentBoots(t *testing.T) {
	s, err := Get("thp-thisnode")
	require.NoError(t, err)
	report := func(seed uint64) (string, map[string]float64) {
		res, err := s.RunAll(Options{Seed: seed, Runs: 1, Variants: []string{"only-compact"}, Settings: []string{"scale=0.05", "guest_gb=34"}})
		require.NoError(t, err)
		text := res.Text()
		return text[strings.Index(text, "\n")+1:], res.Variants[0].Mean
	}
	texts := map[string]bool{}
	fallbacks := map[float64]bool{}
	for seed := uint64(1); seed <= 10; seed++ {
		text, m := report(seed)
		texts[text] = true
		fallbacks[m["thp_fault_fallback"]] = true
	}
	// Two groups 8 faults apart; within a group a seed's vmstat worker
	// phase (decay_pcp_high at its CPUs' whole seconds of jiffies) moves
	// a fault or two.
	vals := slices.Sorted(maps.Keys(fallbacks))
	split := 0
	for i := 1; i < len(vals); i++ {
		if vals[i]-vals[i-1] > vals[split+1]-vals[split] {
			split = i - 1
		}
	}
	require.GreaterOrEqual(t, len(vals), 2, "the image lands on node 0 for some seeds and on node 1 for others")
	low, high := vals[:split+1], vals[split+1:]
	assert.GreaterOrEqual(t, high[0]-low[len(low)-1], 6.0, "the image lands on node 0 for some seeds and on node 1 for others: %v", vals)
	assert.LessOrEqual(t, low[len(low)-1]-low[0], 2.0, "one boot's seeds differ by a fault or two: %v", vals)
	assert.LessOrEqual(t, high[len(high)-1]-high[0], 2.0, "one boot's seeds differ by a fault or two: %v", vals)
	assert.GreaterOrEqual(t, len(texts), 2)
	a, _ := report(7)
	b, _ := report(7)
	assert.Equal(t, a, b)
}

// The page prints the table of runs still going: a guest size not mapped
// yet is "…", never a 0.00 that reads as a result.
func TestAnUnfinishedTableShowsNoNumberThatDoesNotExistYet(t *testing.T) {
	s, err := Get("thp-thisnode")
	require.NoError(t, err)
	st, err := s.Parse([]string{"scale=0.01", "guest_gb=30,42"})
	require.NoError(t, err)
	r, err := s.NewRun("upstream", st, 1, 0)
	require.NoError(t, err)
	res := s.NewResult(1, 1, st)
	res.AddVariant("upstream", []*Run{r})
	text := res.Text()
	assert.NotContains(t, text, "0.00")
	assert.Regexp(t, `\n  30 GB +…\n  42 GB +…\n`, text)
	assert.Regexp(t, `\n  compact_stall +…\n`, text)
	for r.View().Phase() == "1/2: 30 GB" {
		r.Advance(r.Now()+10*sim.Millisecond, 1<<30)
	}
	res = s.NewResult(1, 1, st)
	res.AddVariant("upstream", []*Run{r})
	text = res.Text()
	assert.Regexp(t, `  30 GB  +\d\.\d\d\n`, text, "the finished guest has its number")
	assert.Regexp(t, `\n  42 GB +…\n`, text, "the other does not")
	assert.Regexp(t, `\n  30 GB +\d+/\d+\n  42 GB +…\n`, text)
	assert.Regexp(t, `\n  compact_stall +0\n`, text, "counters sum the finished guests")
}
