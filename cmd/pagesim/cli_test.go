package main

import (
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The exit-status rule of cli.go, for every subcommand: a bad value exits
// 1, a wrong shape (an unknown flag, a missing or extra argument) exits 2,
// --help exits 0, each error is one line on standard error and nothing on
// standard output. A subcommand without a row here fails the test.
func TestEverySubcommandFollowsTheExitStatusRule(t *testing.T) {
	rows := map[string]struct {
		badValue []string // exit 1
		badShape []string // exit 2, besides an unknown flag
	}{
		"bench":     {[]string{"--count", "x"}, []string{"extra"}},
		"merge":     {[]string{"/no/such/file.json"}, nil},
		"proc":      {[]string{"buddyinfo", "--mem", "0"}, nil},
		"run":       {[]string{"thp-thisnode", "--jobs", "0"}, nil},
		"scenarios": {[]string{"--format", "bogus"}, []string{"extra"}},
		"script":    {[]string{"-", "--max-mem", "lots"}, nil},
		"serve":     {[]string{"--dir", "/no/such/folder"}, []string{"extra"}},
		"sweep":     {[]string{"thp-thisnode", "--vary", "guest_gb=x"}, nil},
	}
	var names []string
	for name := range commands {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			row, ok := rows[name]
			require.True(t, ok, "pagesim %s has no row in this test", name)
			check := func(args []string, want int) {
				t.Helper()
				code, out, errs := run(append([]string{name}, args...)...)
				assert.Equal(t, want, code, "pagesim %s %s: %s", name, strings.Join(args, " "), errs)
				assert.Empty(t, out)
				assert.Equal(t, 1, strings.Count(errs, "\n"), "one line: %q", errs)
				assert.True(t, strings.HasPrefix(errs, "pagesim "+name+": "), "%q", errs)
			}
			check(row.badValue, exitInput)
			check([]string{"--no-such-flag"}, exitUsage)
			if row.badShape != nil {
				check(row.badShape, exitUsage)
			} else {
				check(nil, exitUsage) // the missing argument
			}
			code, out, _ := run(name, "--help")
			assert.Equal(t, exitOK, code)
			assert.Contains(t, out, "Usage: pagesim "+name)
			assert.Contains(t, out, "Exit status: 0")
		})
	}
}

func TestTopLevelExitStatuses(t *testing.T) {
	code, _, errs := run("no-such-command")
	assert.Equal(t, exitUsage, code)
	assert.Equal(t, "pagesim: unknown command \"no-such-command\" (see 'pagesim help')\n", errs)
	code, out, _ := run("version")
	assert.Equal(t, exitOK, code)
	assert.True(t, strings.HasPrefix(out, "pagesim "))
	// A panic is an internal error: one line, exit 3.
	register(&command{name: "boom", run: func([]string, io.Writer, io.Writer) int { panic("index out of range\ngoroutine 1") }})
	defer delete(commands, "boom")
	code, out, errs = run("boom")
	assert.Equal(t, exitBug, code)
	assert.Empty(t, out)
	assert.Equal(t, "pagesim: internal error: index out of range (please report it)\n", errs)
}

func TestProgressGoesToATerminalOnly(t *testing.T) {
	args := []string{"run", "thp-thisnode", "--set", "scale=0.02", "--set", "guest_gb=30", "--variant", "upstream"}
	code, _, errs := run(args...)
	require.Equal(t, exitOK, code)
	assert.Empty(t, errs, "standard error is not a terminal here: no progress")

	defer func(f func(io.Writer) bool) { isTerminal = f }(isTerminal)
	isTerminal = func(io.Writer) bool { return true }
	code, _, errs = run(args...)
	require.Equal(t, exitOK, code)
	assert.Contains(t, errs, "\r\033[Kthp-thisnode: 0/1 runs done; upstream run 1, 0.1 s simulated: guest 30 GB: ")
	assert.True(t, strings.HasSuffix(errs, "\r\033[K"), "the line is cleared at the end: %q", errs)

	// A long script run shows where it is.
	path := writeScript(t, "long.txt", "machine mem=64M layout=simple cpus=1\ntask a alloc gfp=GFP_KERNEL interval=1us\nrun 300ms\n")
	code, _, errs = run("script", path)
	require.Equal(t, exitOK, code, errs)
	assert.Contains(t, errs, "long.txt:3: run: ")
	assert.Contains(t, errs, " of 0.300000 s simulated")
}

func TestScriptRefusesFilesThatAreNotRegular(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ path, want string }{
		{"/dev/zero", "pagesim script: /dev/zero is a device, not a script file\n"},
		{dir, "pagesim script: " + dir + " is a folder, not a script file\n"},
	} {
		code, out, errs := run("script", tc.path)
		assert.Equal(t, exitInput, code, tc.path)
		assert.Empty(t, out)
		assert.Equal(t, tc.want, errs)
	}
	big := filepath.Join(dir, "big.txt")
	require.NoError(t, os.WriteFile(big, nil, 0o644))
	require.NoError(t, os.Truncate(big, maxScriptBytes+1))
	code, _, errs := run("script", big)
	assert.Equal(t, exitInput, code)
	assert.Equal(t, "pagesim script: "+big+" is larger than 8388608 bytes\n", errs)
}

func TestProcRefusesAnOverBudgetMachine(t *testing.T) {
	for _, args := range [][]string{
		{"proc", "buddyinfo", "--mem", "7T"},
		{"proc", "buddyinfo", "--mem", "64G", "--nodes", "64", "--cpus", "1024", "--max-mem", "4G"},
	} {
		code, out, errs := run(args...)
		assert.Equal(t, exitInput, code, args)
		assert.Empty(t, out)
		assert.Contains(t, errs, "of memory to simulate, over the limit of ")
		assert.Contains(t, errs, "(--max-mem SIZE changes the limit)\n")
	}
	// A script's machine likewise.
	code, _, errs := run("script", writeScript(t, "big.txt", "machine mem=7T\n"), "--max-mem", "1G")
	assert.Equal(t, exitInput, code)
	assert.Equal(t, "big.txt:1: machine: a machine of 7.0 TiB over 1 node(s) with 2 CPU(s) needs 36.8 GiB of memory to simulate, over the limit of 1 GiB (--max-mem SIZE changes the limit)\n",
		filepath.Base(errs))
}

func TestTheDefaultBudgetIsHalfOfPhysicalMemory(t *testing.T) {
	phys := physicalMemory()
	assert.Greater(t, phys, uint64(0))
	assert.Equal(t, phys/2, defaultMaxMem())
}
