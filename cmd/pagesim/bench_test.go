package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pagesim/pagesim/internal/bench"
)

func TestBenchPrintsEveryWorkloadWithItsCheckValue(t *testing.T) {
	code, out, errOut := run("bench", "--count", "2", "--format", "json")
	require.Equal(t, exitOK, code, errOut)
	var v struct{ Results []bench.Result }
	require.NoError(t, json.Unmarshal([]byte(out), &v))
	require.Len(t, v.Results, len(bench.Workloads))
	for i, r := range v.Results {
		assert.Equal(t, bench.Workloads[i].Name, r.Name)
		assert.Positive(t, r.NsPerOp, r.Name)
		assert.Positive(t, r.Check, r.Name)
	}

	code, out, _ = run("bench")
	require.Equal(t, exitOK, code)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, len(bench.Workloads))
	for i, l := range lines {
		assert.True(t, strings.HasPrefix(l, bench.Workloads[i].Name), l)
		assert.Contains(t, l, "ns/op")
		// The same work every run: the check values agree with JSON's.
		assert.Contains(t, l, "check "+strings.TrimSpace(jsonNumber(v.Results[i].Check)))
	}
}

func jsonNumber(n uint64) string {
	b, _ := json.Marshal(n)
	return string(b)
}

func TestBenchRefusesBadArguments(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"bench", "--format", "yaml"}, exitInput},
		{[]string{"bench", "--count", "0"}, exitInput},
		{[]string{"bench", "--count", "x"}, exitInput},
		{[]string{"bench", "extra"}, exitUsage},
	} {
		code, out, errOut := run(tc.args...)
		assert.Equal(t, tc.code, code, tc.args)
		assert.Empty(t, out, tc.args)
		assert.Contains(t, errOut, "pagesim bench:", tc.args)
	}
}

// The native command is built with the wasm binary's PGO profile (go build
// reads default.pgo from each main package's folder; make pgo writes both),
// so the browser benchmark compares like with like.
func TestTheCommandAndThePageShareOneProfile(t *testing.T) {
	native, err := os.ReadFile("default.pgo")
	require.NoError(t, err)
	wasm, err := os.ReadFile(filepath.Join("..", "..", "wasm", "default.pgo"))
	require.NoError(t, err)
	assert.NotEmpty(t, native)
	assert.True(t, bytes.Equal(native, wasm), "cmd/pagesim/default.pgo and wasm/default.pgo differ: run make pgo")
}
