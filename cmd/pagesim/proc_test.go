package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/procfs"
)

// run calls the command line in-process.
func run(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = runMain(args, &out, &errb)
	return code, out.String(), errb.String()
}

// dumpPath is a path under package procfs's testdata (its import dumps
// and golden files).
func dumpPath(parts ...string) string {
	return filepath.Join(append([]string{"..", "..", "engine", "procfs", "testdata"}, parts...)...)
}

// The default machine of `pagesim proc` is the 8 GiB one-node x86
// machine of package procfs's golden files (its own -update rewrites
// them).
func TestProcPrintsTheFilesOfABootedMachine(t *testing.T) {
	for _, name := range []string{"buddyinfo", "pagetypeinfo", "zoneinfo", "vmstat"} {
		t.Run(name+" of the default 8 GiB one-node machine matches procfs's golden file", func(t *testing.T) {
			code, out, errs := run("proc", name)
			require.Equal(t, exitOK, code, errs)
			assert.Empty(t, errs)
			want, err := os.ReadFile(dumpPath("golden", "booted-8g-1node", name))
			require.NoError(t, err)
			assert.Equal(t, string(want), out)
		})
	}
}

func TestProcFlagsShapeTheBootedMachine(t *testing.T) {
	t.Run("--mem, --nodes and --cpus give the x86 layout the engine builds", func(t *testing.T) {
		code, out, errs := run("proc", "zoneinfo", "--mem", "16G", "--nodes", "2", "--cpus", "3")
		require.Equal(t, exitOK, code, errs)
		cfg, err := mm.X86Layout(16<<30, 2, 3)
		require.NoError(t, err)
		m, err := mm.NewMachine(cfg)
		require.NoError(t, err)
		var want bytes.Buffer
		require.NoError(t, procfs.Zoneinfo(&want, m))
		assert.Equal(t, want.String(), out)
		assert.Contains(t, out, "Node 1, zone   Normal")
		assert.Contains(t, out, "    cpu: 5\n")
	})
	t.Run("flags may come before the file name", func(t *testing.T) {
		_, a, _ := run("proc", "--mem", "2G", "buddyinfo")
		_, b, _ := run("proc", "buddyinfo", "--mem=2G")
		assert.Equal(t, a, b)
		assert.NotEmpty(t, a)
	})
	t.Run("--set writes a sysctl before the file is printed", func(t *testing.T) {
		code, out, errs := run("proc", "zoneinfo", "--mem", "4G", "--set", "vm.min_free_kbytes=131072", "--set", "vm.watermark_scale_factor=50")
		require.Equal(t, exitOK, code, errs)
		cfg, err := mm.X86Layout(4<<30, 1, procfs.DefaultCPUsPerNode)
		require.NoError(t, err)
		cfg.Sysctl = []mm.SysctlSetting{{Name: "vm.min_free_kbytes", Value: "131072"}, {Name: "vm.watermark_scale_factor", Value: "50"}}
		m, err := mm.NewMachine(cfg)
		require.NoError(t, err)
		var want bytes.Buffer
		require.NoError(t, procfs.Zoneinfo(&want, m))
		assert.Equal(t, want.String(), out)
		assert.Equal(t, 131072, m.MinFreeKbytes())
	})
	t.Run("--mem reads sizes as scripts do, with binary suffixes", func(t *testing.T) {
		_, want, _ := run("proc", "buddyinfo", "--mem", "8G")
		for _, s := range []string{"8g", "8GiB", "8192M", "8388608K", "8589934592", " 8G "} {
			code, out, errs := run("proc", "buddyinfo", "--mem", s)
			require.Equal(t, exitOK, code, errs)
			assert.Equal(t, want, out, s)
		}
	})
}

func TestProcImportsADumpFolder(t *testing.T) {
	dir := dumpPath("dumps", "jc-with-sysctls")
	t.Run("the imported pagetypeinfo holds the dump's free chunks", func(t *testing.T) {
		code, out, errs := run("proc", "pagetypeinfo", "--import", dir)
		require.Equal(t, exitOK, code, errs)
		want, err := os.ReadFile(filepath.Join(dir, "pagetypeinfo"))
		require.NoError(t, err)
		wantFree := strings.SplitN(string(want), "\nNumber of blocks", 2)[0]
		gotFree := strings.SplitN(out, "\nNumber of blocks", 2)[0]
		// jc's kernel had no CMA type: compare the rows it has.
		for _, line := range strings.Split(wantFree, "\n") {
			if strings.HasPrefix(line, "Node") {
				assert.Contains(t, gotFree, strings.TrimRight(line, " ")+" ")
			}
		}
	})
	t.Run("warnings go to stderr, one line each", func(t *testing.T) {
		code, _, errs := run("proc", "buddyinfo", "--import", dir)
		require.Equal(t, exitOK, code)
		assert.Contains(t, errs, "pagesim proc: warning: sys_vm/vfs_cache_pressure: pagesim does not model vm.vfs_cache_pressure; ignored\n")
		for _, line := range strings.Split(strings.TrimSpace(errs), "\n") {
			assert.True(t, strings.HasPrefix(line, "pagesim proc: warning: "), line)
		}
	})
	t.Run("the dump's sys_vm files set the watermarks and --set beats them", func(t *testing.T) {
		_, fromFiles, _ := run("proc", "zoneinfo", "--import", dir)
		_, fromSet, _ := run("proc", "zoneinfo", "--import", dir, "--set", "vm.min_free_kbytes=90112")
		_, overridden, _ := run("proc", "zoneinfo", "--import", dir, "--set", "vm.min_free_kbytes=20000")
		assert.Equal(t, fromFiles, fromSet, "the folder says 90112 already")
		assert.NotEqual(t, fromFiles, overridden)
	})
	t.Run("--cpus applies when the dump does not list CPUs", func(t *testing.T) {
		code, out, errs := run("proc", "zoneinfo", "--import", dumpPath("dumps", "buddyinfo-only"), "--cpus", "2")
		require.Equal(t, exitOK, code, errs)
		assert.Contains(t, out, "    cpu: 1\n")
		assert.NotContains(t, out, "    cpu: 2\n")
	})
}

func TestProcReportsErrorsInOneLine(t *testing.T) {
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no file name is a usage error", []string{"proc"}, exitUsage,
			"pagesim proc: which file? one of " + strings.Join(procFileNames(), ", ")},
		{"an unknown file is bad input", []string{"proc", "meminfo"}, exitInput,
			`pagesim proc: no file "meminfo"`},
		{"two files is a usage error", []string{"proc", "zoneinfo", "vmstat"}, exitUsage,
			"pagesim proc: one file at a time, got zoneinfo vmstat"},
		{"an unknown flag is a usage error", []string{"proc", "zoneinfo", "--bogus"}, exitUsage,
			"pagesim proc: flag provided but not defined: -bogus"},
		{"a size without a number is bad input", []string{"proc", "zoneinfo", "--mem", "lots"}, exitInput,
			`pagesim proc: --mem: "lots" is not a size`},
		{"zero nodes is bad input", []string{"proc", "zoneinfo", "--nodes", "0"}, exitInput,
			"pagesim proc: --nodes must be between 1 and 64, got 0"},
		{"a --set without a value is bad input", []string{"proc", "zoneinfo", "--set", "vm.swappiness"}, exitInput,
			`want vm.NAME=VALUE, got "vm.swappiness"`},
		{"an unknown sysctl is bad input", []string{"proc", "zoneinfo", "--set", "vm.nope=1"}, exitInput,
			`unknown sysctl "vm.nope"`},
		{"--mem with --import is a usage error", []string{"proc", "zoneinfo", "--mem", "4G", "--import", "."}, exitUsage,
			"pagesim proc: --mem and --nodes describe a booted machine"},
		{"too little memory is bad input", []string{"proc", "zoneinfo", "--mem", "1M"}, exitInput,
			"pagesim proc: memory per node must be at least 32 MiB"},
		{"a sysctl out of range is bad input", []string{"proc", "zoneinfo", "--set", "vm.watermark_scale_factor=0"}, exitInput,
			"pagesim proc: vm.watermark_scale_factor: 0 is out of range [1, 3000]"},
		{"a missing folder is bad input", []string{"proc", "zoneinfo", "--import", "no/such/dir"}, exitInput,
			"pagesim proc: --import no/such/dir: no such file or directory"},
		{"a folder without /proc files is bad input", []string{"proc", "zoneinfo", "--import", dumpPath("golden")}, exitInput,
			"pagesim proc: the dump has none of buddyinfo, pagetypeinfo, zoneinfo"},
		{"an unknown migratetype names the file and line", []string{"proc", "zoneinfo", "--import", dumpPath("fixtures", "linux-mm-mirror-numa2")}, exitInput,
			"pagesim proc: " + dumpPath("fixtures", "linux-mm-mirror-numa2", "pagetypeinfo") + `:8: unknown migratetype "Mirror"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := run(append([]string(nil), c.args...)...)
			assert.Equal(t, c.code, code)
			assert.Empty(t, out)
			assert.Contains(t, errs, c.want)
			assert.Equal(t, 1, strings.Count(errs, "\n"), "one line: %q", errs)
			assert.NotContains(t, errs, "goroutine")
		})
	}
}

func TestProcHelpListsTheFiles(t *testing.T) {
	for _, args := range [][]string{{"proc", "--help"}, {"help", "proc"}, {"proc", "zoneinfo", "-h"}} {
		t.Run(strings.Join(args, " ")+" prints the usage", func(t *testing.T) {
			code, out, _ := run(args...)
			assert.Equal(t, exitOK, code)
			assert.Contains(t, out, "Usage: pagesim proc FILE")
			for name := range procFiles {
				assert.Contains(t, out, "\n  "+name+" ")
			}
		})
	}
	t.Run("the command list names proc", func(t *testing.T) {
		_, out, _ := run("help")
		assert.Contains(t, out, "  proc ")
	})
}

func TestAnotherFileCanRegisterAProcFile(t *testing.T) {
	registerProcFile(&procFile{name: "testonly", summary: "a file registered by a test",
		write: func(w io.Writer, m *mm.Machine) error {
			_, err := io.WriteString(w, "cpus "+strings.Repeat("x", m.NrCPUs())+"\n")
			return err
		}})
	defer func() {
		delete(procFiles, "testonly")
		procCommand.usage = procUsage()
	}()
	code, out, errs := run("proc", "testonly", "--cpus", "2")
	require.Equal(t, exitOK, code, errs)
	assert.Equal(t, "cpus xx\n", out)
	_, help, _ := run("proc", "--help")
	assert.Contains(t, help, "  testonly      a file registered by a test\n")
}
