package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeScript writes a script to a temporary file and returns its path.
func writeScript(t *testing.T, name, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	return path
}

func TestScriptCommand(t *testing.T) {
	good := "machine mem=64M layout=simple cpus=1\nregion heap size=1M\nfill heap\nprint heap.resident\nexpect heap.resident == 256\n"
	tests := []struct {
		name     string
		args     func(t *testing.T) []string
		stdin    string
		wantCode int
		wantOut  string
		wantErr  string
	}{
		{
			name:     "a good script prints what it prints and exits 0",
			args:     func(t *testing.T) []string { return []string{"script", writeScript(t, "ok.txt", good)} },
			wantCode: exitOK,
			wantOut:  "heap.resident 256\n",
		},
		{
			name: "--import gives the import command a real machine's /proc files",
			args: func(t *testing.T) []string {
				return []string{"script", writeScript(t, "i.txt", "import\nprint nr_free_pages\n"), "--import", "../../engine/procfs/testdata/fixtures/prometheus-procfs"}
			},
			wantCode: exitOK,
			wantOut: "note: import: buddyinfo has no migratetypes and there is no pagetypeinfo: every free chunk is on the Movable lists, every pageblock Movable\n" +
				"note: import: node 0 zone DMA: zoneinfo says 3952 pages free, the free lists hold 3973 (files taken at different times?); using the free lists\n" +
				"note: import: node 0 zone DMA32: zoneinfo says 204252 pages free, the free lists hold 14179 (files taken at different times?); using the free lists\n" +
				"note: import: node 0 zone Normal: zoneinfo says 18553 pages free, the free lists hold 32139 (files taken at different times?); using the free lists\n" +
				"note: import: node 0 zone DMA: its free lists hold 3973 pages, more than its 3956 managed pages; managed pages raised to 3973\n" +
				"nr_free_pages 50291\n",
		},
		{
			name: "--import refuses what is not a folder",
			args: func(t *testing.T) []string {
				p := writeScript(t, "i.txt", "import\n")
				return []string{"script", p, "--import", p}
			},
			wantCode: exitInput,
			wantErr:  "i.txt: not a folder",
		},
		{
			name:     "flags may follow the file",
			args:     func(t *testing.T) []string { return []string{"script", writeScript(t, "ok.txt", good), "--check"} },
			wantCode: exitOK,
			wantOut:  "heap.resident 256\n",
		},
		{
			name:     "a dash reads the script from standard input",
			args:     func(t *testing.T) []string { return []string{"script", "-"} },
			stdin:    good,
			wantCode: exitOK,
			wantOut:  "heap.resident 256\n",
		},
		{
			name: "an unknown command names the file and the line in one line",
			args: func(t *testing.T) []string {
				return []string{"script", writeScript(t, "script.txt", strings.Repeat("# comment\n", 11)+"fualt heap\n")}
			},
			wantCode: exitInput,
			wantErr:  "script.txt:12: unknown command \"fualt\"\n",
		},
		{
			name: "a failed expect exits 1 after the output before it",
			args: func(t *testing.T) []string {
				return []string{"script", writeScript(t, "x.txt", "machine mem=64M layout=simple\necho before\nexpect compact_stall > 0\n")}
			},
			wantCode: exitInput,
			wantOut:  "before\n",
			wantErr:  "x.txt:3: expect: compact_stall > 0 does not hold: compact_stall is 0\n",
		},
		{
			name:     "a missing file is an input error",
			args:     func(t *testing.T) []string { return []string{"script", filepath.Join(t.TempDir(), "none.txt")} },
			wantCode: exitInput,
			wantErr:  "none.txt: no such file or directory\n",
		},
		{
			name:     "no file is a usage error",
			args:     func(t *testing.T) []string { return []string{"script"} },
			wantCode: exitUsage,
			wantErr:  "pagesim script: which script? give a FILE, or - for standard input (see 'pagesim script --help')\n",
		},
		{
			name:     "two files are a usage error",
			args:     func(t *testing.T) []string { return []string{"script", "a.txt", "b.txt"} },
			wantCode: exitUsage,
			wantErr:  "one FILE at a time",
		},
		{
			name:     "an unknown flag is a usage error",
			args:     func(t *testing.T) []string { return []string{"script", "a.txt", "--fast"} },
			wantCode: exitUsage,
			wantErr:  "flag provided but not defined: -fast",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			old := scriptStdin
			scriptStdin = strings.NewReader(tc.stdin)
			defer func() { scriptStdin = old }()
			code, out, errs := run(tc.args(t)...)
			assert.Equal(t, tc.wantCode, code, errs)
			assert.Equal(t, tc.wantOut, out)
			if tc.wantErr == "" {
				assert.Empty(t, errs)
			} else {
				assert.Contains(t, errs, tc.wantErr)
			}
			assert.NotContains(t, errs, "goroutine", "no Go stack trace reaches the user")
			if code == exitInput {
				assert.Equal(t, 1, strings.Count(errs, "\n"), "script errors are one line")
			}
		})
	}
}

func TestScriptHelpListsTheCommands(t *testing.T) {
	old := scriptStdin
	scriptStdin = strings.NewReader("help\nhelp fill\n")
	defer func() { scriptStdin = old }()
	code, out, errs := run("script", "-")
	require.Equal(t, exitOK, code, errs)
	assert.Contains(t, out, "machine mem=SIZE")
	assert.Contains(t, out, "fill REGION [size=SIZE] [pin=on] [cpu=N|node=N]\n  Faults the region")
}
