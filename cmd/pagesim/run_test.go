package main

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// smallRun is a small, fast run of the seed-003 scenario: two variants, two guests.
var smallRun = []string{"run", "thp-thisnode", "--set", "scale=0.02", "--set", "guest_gb=20,42", "--variant", "upstream", "--variant", "drop-thisnode"}

func TestRunPrintsTheCoverLetterTable(t *testing.T) {
	code, out, errs := run(smallRun...)
	require.Equal(t, exitOK, code, errs)
	assert.Empty(t, errs)
	assert.True(t, strings.HasPrefix(out, "pagesim "), out)
	for _, want := range []string{"thp-thisnode (seed 003)", "upstream:", "drop-thisnode:", "GB/s mapped", "scale 0.02"} {
		assert.Contains(t, out, want)
	}
	assert.NotContains(t, out, "only-compact:", "only the variants asked for")
	for i, l := range strings.Split(out, "\n") {
		assert.LessOrEqual(t, utf8.RuneCountInString(l), 72, "line %d is a cover letter's: %q", i+1, l)
	}
	// The same arguments give the same bytes.
	_, again, _ := run(smallRun...)
	assert.Equal(t, out, again)
}

func TestRunGivesTheSameBytesOnEveryNumberOfCores(t *testing.T) {
	args := []string{"run", "thp-thisnode", "--set", "scale=0.02", "--set", "guest_gb=30,42", "--runs", "3"}
	for _, format := range []string{"text", "json"} {
		code, one, errs := run(append(args, "--format", format, "--jobs", "1")...)
		require.Equal(t, exitOK, code, errs)
		code, four, errs := run(append(args, "--format", format, "--jobs", "4")...)
		require.Equal(t, exitOK, code, errs)
		assert.Empty(t, errs)
		assert.Equal(t, one, four, format)
	}
}

func TestRunLowersJobsToWhatTheMemoryBudgetHolds(t *testing.T) {
	// One machine of this layout costs 7.2 MiB to simulate: 16 MiB
	// hold two of them.
	args := []string{"run", "thp-thisnode", "--set", "scale=0.02", "--set", "guest_gb=30", "--variant", "upstream", "--runs", "3", "--max-mem", "16M"}
	code, out, errs := run(append(args, "--jobs", "3")...)
	require.Equal(t, exitOK, code, errs)
	assert.Equal(t, "pagesim run: --jobs 3 lowered to 2: the memory budget of 16 MiB (--max-mem) holds the machines of 2 runs at once\n", errs)
	_, alone, _ := run(append(args, "--jobs", "1")...)
	assert.Equal(t, alone, out)
	code, _, errs = run(append(args, "--jobs", "2")...)
	require.Equal(t, exitOK, code)
	assert.Empty(t, errs, "two fit: nothing to say")
	code, _, errs = run(args...)
	require.Equal(t, exitOK, code)
	assert.Empty(t, errs, "--jobs left to its default drops without a word")
}

func TestRunPrintsJSON(t *testing.T) {
	code, out, errs := run(append(smallRun, "--format", "json")...)
	require.Equal(t, exitOK, code, errs)
	var v map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &v), out)
	b, _ := json.Marshal(v)
	for _, want := range []string{`"thp-thisnode"`, `"upstream"`, `"drop-thisnode"`, `"gb_per_s_42"`} {
		assert.Contains(t, string(b), want)
	}
	assert.NotContains(t, string(b), `"only-compact"`)
}

func TestRunRefusesBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"run"}, exitUsage, "pagesim run: which scenario?"},
		{[]string{"run", "--variant", "upstream"}, exitUsage, "the scenario comes first"},
		{[]string{"run", "thp-thisnode", "extra"}, exitUsage, `unexpected argument "extra"`},
		{[]string{"run", "thp-thisnode", "--bogus"}, exitUsage, "bogus"},
		{[]string{"run", "thp-thisnode", "--format", "yaml"}, exitInput, "--format must be text or json"},
		{[]string{"run", "thp-thisnode", "--runs", "abc"}, exitInput, `invalid value "abc" for flag -runs`},
		{[]string{"run", "thp-thisnode", "--seed", "abc"}, exitInput, `--seed "abc" is not a non-negative integer`},
		{[]string{"run", "thp-thisnode", "--set", "scale=1", "--set", "scale=0.5"}, exitInput, `--set scale is given twice ("scale=1" and "scale=0.5")`},
		{[]string{"run", "thp-thisnode", "--set", "vm.defrag_mode=1", "--set", "/proc/sys/vm/defrag_mode=0"}, exitInput, "--set vm.defrag_mode is given twice"},
		{[]string{"run", "thp-thisnode", "--set", "guest_gb=30,30,34"}, exitInput, "guest_gb: 30 is listed twice"},
		{[]string{"run", "thp-thisnode", "--max-mem", "lots"}, exitInput, `--max-mem: "lots" is not a size`},
		{[]string{"run", "thp-thisnode", "--jobs", "0"}, exitInput, "--jobs must be between 1 and 1024, got 0"},
		{[]string{"run", "thp-thisnode", "--jobs", "many"}, exitInput, `invalid value "many" for flag -jobs`},
		{[]string{"run", "thp-thisnode", "--set", "scale=1", "--set", "nodes=8", "--set", "node_gb=900", "--max-mem", "8G"}, exitInput,
			"pagesim run: a machine of 7.0 TiB over 8 node(s) with 64 CPU(s) needs 37.0 GiB of memory to simulate, over the limit of 8 GiB (--max-mem SIZE changes the limit)\n"},
		{[]string{"run", "no-such-scenario"}, exitInput, "no-such-scenario"},
		{[]string{"run", "thp-thisnode", "--seed", "-1"}, exitInput, "not a non-negative integer"},
		{[]string{"run", "thp-thisnode", "--runs", "0"}, exitInput, "runs must be between"},
		{[]string{"run", "thp-thisnode", "--variant", "nope"}, exitInput, `no variant "nope"`},
		{[]string{"run", "thp-thisnode", "--set", "scale=5"}, exitInput, "scale: 5 is above the maximum 1"},
		{[]string{"run", "thp-thisnode", "--set", "scale"}, exitInput, "want NAME=VALUE"},
		{[]string{"run", "thp-thisnode", "--set", "nonsense=1"}, exitInput, `unknown parameter or knob "nonsense"`},
		{[]string{"run", "thp-thisnode", "--set", "vm.defrag_mode=7"}, exitInput, "vm.defrag_mode"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, out, errs := run(tc.args...)
			assert.Equal(t, tc.code, code)
			assert.Empty(t, out, "nothing on stdout")
			assert.Contains(t, errs, tc.msg)
			assert.NotContains(t, errs, "goroutine ", "no stack trace")
			assert.NotContains(t, errs, "panic")
		})
	}
}

func TestScenariosListsEachScenarioWithItsKnobs(t *testing.T) {
	code, out, errs := run("scenarios")
	require.Equal(t, exitOK, code, errs)
	for _, want := range []string{"thp-thisnode (seed 003)", "variants:", "upstream", "parameters:", "scale", "default 0.25 [0.01, 1]", "knobs set by the scenario", "metrics:", "gb_per_s_"} {
		assert.Contains(t, out, want)
	}
	code, out, _ = run("scenarios", "--format", "json")
	require.Equal(t, exitOK, code)
	var docs []struct {
		ID       string
		Variants []struct{ Name string }
		Metrics  []struct{ Name string }
	}
	require.NoError(t, json.Unmarshal([]byte(out), &docs))
	require.NotEmpty(t, docs)
	var ids []string
	for _, d := range docs {
		ids = append(ids, d.ID)
		assert.NotEmpty(t, d.Variants, d.ID)
		assert.NotEmpty(t, d.Metrics, d.ID)
	}
	assert.Equal(t, []string{"noretry-compaction", "nofrag-watermark", "thp-thisnode"}, ids, "sorted by seed")

	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"scenarios", "extra"}, exitUsage, "pagesim scenarios: unexpected argument \"extra\" (see 'pagesim scenarios --help')\n"},
		{[]string{"scenarios", "--format", "xml"}, exitInput, "pagesim scenarios: --format must be text or json, not \"xml\"\n"},
	} {
		code, out, errs := run(tc.args...)
		assert.Equal(t, tc.code, code, tc.args)
		assert.Empty(t, out)
		assert.Equal(t, tc.want, errs, "one line, not the usage")
	}
}
