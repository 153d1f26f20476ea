package app

import (
	"bytes"
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
		{id: "nofrag-watermark", on: &MachineShape{Managed: []uint64{16384}}, refused: "reads files at random"},
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
