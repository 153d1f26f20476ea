package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// smallSweep is a small sweep of seed 003's scenario: two guest sizes, two variants,
// two runs, at a fiftieth of the seed's size.
var smallSweep = []string{"sweep", "thp-thisnode", "--vary", "guest_gb=30,42", "--set", "scale=0.02",
	"--variant", "upstream", "--variant", "drop-thisnode", "--runs", "2"}

func TestThreeShardsMergedPrintTheUnshardedSweepByteForByte(t *testing.T) {
	dir := t.TempDir()
	var files []string
	for i := range 3 {
		code, out, errs := run(append(smallSweep, "--shard", string(rune('0'+i))+"/3")...)
		require.Equal(t, exitOK, code, errs)
		assert.Empty(t, errs)
		f := filepath.Join(dir, "shard"+string(rune('0'+i))+".json")
		require.NoError(t, os.WriteFile(f, []byte(out), 0o644))
		files = append(files, f)
	}
	files[0], files[2] = files[2], files[0] // in any order
	for _, form := range [][]string{nil, {"--format", "json"}, {"--format", "csv"}, {"--plot", "gb_per_s"}, {"--metric", "thp_pct", "--metric", "oom"}} {
		t.Run(strings.Join(form, " "), func(t *testing.T) {
			code, whole, errs := run(append(smallSweep, form...)...)
			require.Equal(t, exitOK, code, errs)
			require.NotEmpty(t, whole)
			code, merged, errs := run(append(append([]string{"merge"}, files...), form...)...)
			require.Equal(t, exitOK, code, errs)
			assert.Equal(t, whole, merged)
			// Flags may come first too.
			code, again, _ := run(append(append([]string{"merge"}, form...), files...)...)
			require.Equal(t, exitOK, code)
			assert.Equal(t, whole, again)
		})
	}
	// One shard alone is not the sweep.
	code, out, errs := run("merge", files[0], files[1])
	assert.Equal(t, exitInput, code)
	assert.Empty(t, out)
	assert.Contains(t, errs, "is one of 3 shards; 2 given\n")
}

func TestASweepsJSONRedrawsWithMerge(t *testing.T) {
	code, js, errs := run(append(smallSweep, "--format", "json")...)
	require.Equal(t, exitOK, code, errs)
	f := filepath.Join(t.TempDir(), "sweep.json")
	require.NoError(t, os.WriteFile(f, []byte(js), 0o644))
	code, plot, errs := run("merge", f, "--plot", "thp_pct")
	require.Equal(t, exitOK, code, errs)
	_, direct, _ := run(append(smallSweep, "--plot", "thp_pct")...)
	assert.Equal(t, direct, plot)
	assert.True(t, strings.HasPrefix(plot, "<?xml"), plot[:min(len(plot), 40)])
	assert.Contains(t, plot, "<svg ")
	assert.Contains(t, plot, ">upstream</text>", "a legend entry per variant")
	assert.Contains(t, plot, ">drop-thisnode</text>")
	assert.Contains(t, plot, ">guest_gb</text>", "the x axis is the varied parameter")
}

func TestTheSweepTableFitsSeventyTwoColumns(t *testing.T) {
	code, out, errs := run("sweep", "thp-thisnode", "--vary", "guest_gb=30,34,42", "--set", "scale=0.02", "--runs", "2")
	require.Equal(t, exitOK, code, errs)
	for i, l := range strings.Split(out, "\n") {
		assert.LessOrEqual(t, utf8.RuneCountInString(l), 72, "line %d: %q", i+1, l)
	}
	assert.Contains(t, out, "3 points x 3 variants x 2 runs = 18 runs\n")
	assert.Regexp(t, `\n  guest_gb +upstream +only-compact +drop-thisnode\n`, out)
}

func TestSweepAndMergeRefuseBadInput(t *testing.T) {
	dir := t.TempDir()
	notJSON := filepath.Join(dir, "notes.txt")
	require.NoError(t, os.WriteFile(notJSON, []byte("hello"), 0o644))
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"sweep"}, exitUsage, "pagesim sweep: which scenario?"},
		{[]string{"sweep", "thp-thisnode"}, exitUsage, "what to vary?"},
		{[]string{"sweep", "--vary", "guest_gb=30"}, exitUsage, "the scenario comes first"},
		{[]string{"sweep", "thp-thisnode", "--vary", "guest_gb=30", "extra"}, exitUsage, `unexpected argument "extra"`},
		{[]string{"sweep", "nope", "--vary", "guest_gb=30"}, exitInput, `unknown scenario "nope"`},
		{[]string{"sweep", "thp-thisnode", "--vary", "guest_gb=30,30"}, exitInput, "--vary guest_gb: 30 is listed twice"},
		{[]string{"sweep", "thp-thisnode", "--vary", "guest_gb=30", "--set", "guest_gb=34"}, exitInput, "guest_gb is also fixed by --set"},
		{[]string{"sweep", "thp-thisnode", "--vary", "guest_gb=30", "--format", "yaml"}, exitInput, "--format must be text, json or csv"},
		{[]string{"sweep", "thp-thisnode", "--vary", "guest_gb=30", "--plot", "gb_per_s", "--format", "json"}, exitInput, "--plot draws an SVG; it takes no --format"},
		{[]string{"sweep", "thp-thisnode", "--vary", "guest_gb=30", "--shard", "3/3"}, exitInput, `--shard "3/3": want I/N with 0 <= I < N`},
		{[]string{"sweep", "thp-thisnode", "--vary", "guest_gb=30", "--shard", "x"}, exitInput, `--shard "x"`},
		{[]string{"sweep", "thp-thisnode", "--vary", "guest_gb=30", "--shard", "0/2", "--format", "csv"}, exitInput, "a shard writes its JSON"},
		{[]string{"sweep", "thp-thisnode", "--vary", "guest_gb=30", "--set", "scale=0.02", "--plot", "gb_per_s_30"}, exitInput, `the sweep has no metric "gb_per_s_30" (have: elapsed_s, gb_per_s,`},
		{[]string{"sweep", "thp-thisnode", "--vary", "guest_gb=30", "--jobs", "0"}, exitInput, "--jobs must be between 1 and 1024"},
		{[]string{"sweep", "thp-thisnode", "--vary", "node_gb=2,1024", "--set", "scale=1", "--max-mem", "1G"}, exitInput, "over the limit of 1 GiB (--max-mem SIZE changes the limit)"},
		{[]string{"merge"}, exitUsage, "pagesim merge: which files?"},
		{[]string{"merge", filepath.Join(dir, "none.json")}, exitInput, "none.json: cannot read it: no such file or directory"},
		{[]string{"merge", dir}, exitInput, "not a regular file"},
		{[]string{"merge", notJSON}, exitInput, "notes.txt: not a sweep's JSON: invalid character"},
		{[]string{"merge", notJSON, "--format", "xml"}, exitInput, "--format must be text, json or csv"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, out, errs := run(tc.args...)
			assert.Equal(t, tc.code, code, errs)
			assert.Empty(t, out, "nothing on stdout")
			assert.Contains(t, errs, tc.msg)
			assert.Equal(t, 1, strings.Count(errs, "\n"), "one line: %q", errs)
		})
	}
}
