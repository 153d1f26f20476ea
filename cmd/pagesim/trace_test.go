package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRunTraceWritesTwoFilesPerVariantAndRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "traces") // created by --trace
	code, out, errs := run("run", "thp-thisnode", "--set", "scale=0.02", "--set", "guest_gb=34", "--variant", "upstream",
		"--variant", "drop-thisnode", "--runs", "2", "--trace", dir)
	require.Equal(t, exitOK, code, errs)
	plainCode, plain, _ := run("run", "thp-thisnode", "--set", "scale=0.02", "--set", "guest_gb=34", "--variant", "upstream",
		"--variant", "drop-thisnode", "--runs", "2")
	require.Equal(t, exitOK, plainCode)
	assert.Equal(t, plain, out, "--trace changes nothing the command prints")
	var names []string
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.Equal(t, []string{
		"thp-thisnode-drop-thisnode-run1.json", "thp-thisnode-drop-thisnode-run1.txt",
		"thp-thisnode-drop-thisnode-run2.json", "thp-thisnode-drop-thisnode-run2.txt",
		"thp-thisnode-upstream-run1.json", "thp-thisnode-upstream-run1.txt",
		"thp-thisnode-upstream-run2.json", "thp-thisnode-upstream-run2.txt",
	}, names)
	data, err := os.ReadFile(filepath.Join(dir, "thp-thisnode-upstream-run2.json"))
	require.NoError(t, err)
	var f struct {
		OtherData   map[string]string `json:"otherData"`
		TraceEvents []map[string]any  `json:"traceEvents"`
	}
	require.NoError(t, json.Unmarshal(data, &f))
	assert.Equal(t, "pagesim run thp-thisnode --variant upstream --seed 2 --set scale=0.02 --set guest_gb=34", f.OtherData["command"],
		"the second run is the one of seed 2")
	assert.NotEmpty(t, f.TraceEvents)
	report, err := os.ReadFile(filepath.Join(dir, "thp-thisnode-upstream-run1.txt"))
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(report), "cpus=16\n"), "a report starts with the CPU count")
	assert.Contains(t, string(report), ": mm_vmscan_direct_reclaim_begin: ")
}

func TestScriptTraceWritesTheRecordingEvenWhenTheScriptFails(t *testing.T) {
	dir := t.TempDir()
	src := writeScript(t, "s.txt", "machine mem=64M layout=simple cpus=2\nregion heap size=40M\nfill heap\nexpect compact_stall > 5\n")
	code, _, errs := run("script", src, "--trace", filepath.Join(dir, "s.json"), "--trace-report", filepath.Join(dir, "s.txt"))
	assert.Equal(t, exitInput, code)
	assert.Contains(t, errs, "s.txt:4: expect")
	data, err := os.ReadFile(filepath.Join(dir, "s.json"))
	require.NoError(t, err)
	assert.True(t, json.Valid(data))
	assert.Contains(t, string(data), `"command":"pagesim script `)
	report, err := os.ReadFile(filepath.Join(dir, "s.txt"))
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(report), "cpus=2\n"))
}

func TestTraceOptionsRefuseWhatTheyCannotWrite(t *testing.T) {
	file := filepath.Join(t.TempDir(), "a-file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	code, _, errs := run("run", "playground", "--set", "duration=1", "--trace", file)
	assert.Equal(t, exitInput, code)
	assert.Equal(t, "pagesim run: --trace "+file+": not a folder\n", errs)

	src := writeScript(t, "s.txt", "machine mem=64M layout=simple\n")
	code, _, errs = run("script", src, "--trace", "")
	assert.Equal(t, exitInput, code)
	assert.Equal(t, "pagesim script: --trace and --trace-report need a file name\n", errs)

	code, out, errs := run("script", src, "--trace", filepath.Join(t.TempDir(), "no", "such", "folder", "x.json"))
	assert.Equal(t, exitInput, code)
	assert.Empty(t, out)
	assert.Contains(t, errs, "no such file or directory")
	assert.Equal(t, 1, strings.Count(errs, "\n"))
}
