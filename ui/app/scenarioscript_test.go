package app

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pagesim/pagesim/engine/scenario"
	"github.com/pagesim/pagesim/engine/script"
)

func TestEachScenarioIsAScriptOrSaysWhyNot(t *testing.T) {
	for _, tc := range []struct {
		id      string
		on      *MachineShape
		refused string // "" when the scenario has a script
		starts  string
	}{
		{id: "thp-thisnode", starts: "machine mem=256M nodes=2"},
		{id: "thp-thisnode", on: &MachineShape{Managed: []uint64{16384, 16384}}, starts: "# seed 003 on the imported machine"},
		{id: "thp-thisnode", on: &MachineShape{Managed: []uint64{32768}}, refused: "the imported machine has 1 node"},
		{id: "promoted-order", starts: "machine mem=128M"},
		{id: "promoted-order", on: &MachineShape{Managed: []uint64{32768}}, starts: "import\n"},
		{id: "playground", starts: "# the playground's churn"},
		{id: "playground", on: &MachineShape{Managed: []uint64{16384}, Free: 12000}, starts: "# the playground's churn on the imported machine"},
		{id: "playground", on: &MachineShape{Managed: []uint64{16384}, Free: 2000}, refused: "the imported machine has 88% in use already"},
		{id: "noretry-compaction", starts: "machine mem=256M layout=simple cpus=4\ntask c0 pgbench"},
		{id: "noretry-compaction", on: &MachineShape{Managed: []uint64{65536}}, starts: "import\ntask c0 pgbench"},
		{id: "nofrag-watermark", starts: "# vm.defrag_mode=0\nmachine mem=256M layout=simple cpus=4\n"},
		{id: "nofrag-watermark", on: &MachineShape{Managed: []uint64{65536}, Free: 60000}, starts: "# seed 001 on the imported machine"},
		{id: "nofrag-watermark", on: &MachineShape{Managed: []uint64{65536}, Free: 6000}, refused: "the imported machine has 91% in use already"},
	} {
		spec, err := scenario.Get(tc.id)
		require.NoError(t, err)
		src, err := ScenarioScript(spec, tc.on)
		if tc.refused != "" {
			assert.ErrorContains(t, err, tc.refused, tc.id)
			continue
		}
		require.NoError(t, err, tc.id)
		assert.True(t, strings.HasPrefix(src, tc.starts), "%s: %q", tc.id, src)
		assert.NoError(t, script.Check(ScriptName, []byte(src)), tc.id)
	}
}

func TestThePlaygroundsScriptRunsAndChurns(t *testing.T) {
	spec, err := scenario.Get("playground")
	require.NoError(t, err)
	src, err := ScenarioScript(spec, &MachineShape{Managed: []uint64{8192}, Free: 8000})
	require.NoError(t, err)
	src = strings.Replace(src, "import\n", "machine mem=32M layout=simple cpus=2\n", 1)
	var out bytes.Buffer
	require.NoError(t, script.Run(ScriptName, strings.NewReader(src), &out, script.Options{CheckEveryCommand: true}))
	assert.Contains(t, out.String(), "Node 0, zone   Normal")
	assert.Contains(t, out.String(), "pgalloc_normal")
}

// Seed 001's script on an imported machine (here a booted one of the same
// size) runs, and with vm.defrag_mode=1 its faults stall in compaction
// more often than with 0 and fall back more, and the series stalls less
// than vm.defrag_mode=1 alone.
func TestSeed001sScriptOnAnImportedMachineShowsTheSeedsDirections(t *testing.T) {
	spec, err := scenario.Get("nofrag-watermark")
	require.NoError(t, err)
	src, err := ScenarioScript(spec, &MachineShape{Managed: []uint64{65536}, Free: 60000})
	require.NoError(t, err)
	require.Equal(t, 3, strings.Count(src, "import\n"))
	src = strings.ReplaceAll(src, "import\n", "machine mem=256M layout=simple cpus=4\n")
	var out bytes.Buffer
	require.NoError(t, script.Run(ScriptName, strings.NewReader(src), &out, script.Options{CheckEveryCommand: true}))
	values := func(name string) []int {
		var v []int
		for _, m := range regexp.MustCompile(`(?m)^`+regexp.QuoteMeta(name)+` (\d+)$`).FindAllStringSubmatch(out.String(), -1) {
			n, _ := strconv.Atoi(m[1])
			v = append(v, n)
		}
		require.Len(t, v, 3, "%s once per machine in %q", name, out.String())
		return v
	}
	stall, fallback := values("compact_stall"), values("thp.64kB.anon_fault_fallback")
	assert.Greater(t, stall[1], 2*stall[0], "defrag_mode=1 stalls more than twice as often: %v", stall)
	assert.Greater(t, fallback[1], fallback[0], "and falls back more: %v", fallback)
	assert.Less(t, stall[2], stall[1]/2, "the series halves the stalls at least: %v", stall)
}
