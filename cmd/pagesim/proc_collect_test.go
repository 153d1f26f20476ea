package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeProc builds a /proc with the jc-linux-proc fixture's files (no
// pagetypeinfo) and two vm sysctls, one of them unmodelled.
func fakeProc(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	src := "../../engine/procfs/testdata/fixtures/jc-linux-proc"
	for _, f := range []string{"buddyinfo", "zoneinfo", "vmstat"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(root, f), b, 0o444))
	}
	require.NoError(t, os.MkdirAll(filepath.Join(root, "sys", "vm"), 0o755))
	for name, v := range map[string]string{"min_free_kbytes": "90112\n", "dirty_background_bytes": "0\n", "vfs_cache_pressure": "100\n"} {
		require.NoError(t, os.WriteFile(filepath.Join(root, "sys", "vm", name), []byte(v), 0o444))
	}
	return root
}

func TestCollectCopiesWhatImportReads(t *testing.T) {
	old := procRoot
	procRoot = fakeProc(t)
	defer func() { procRoot = old }()
	dir := filepath.Join(t.TempDir(), "dump")

	code, out, errs := run("proc", "--collect", dir)
	require.Equal(t, exitOK, code, errs)
	assert.Equal(t, dir+": buddyinfo zoneinfo vmstat, sys_vm/ (2 files)\n", out, "the modelled sysctls only")
	assert.Contains(t, errs, "pagesim proc: warning: open "+procRoot+"/pagetypeinfo: no such file or directory")
	_, err := os.Stat(filepath.Join(dir, "sys_vm", "vfs_cache_pressure"))
	assert.ErrorIs(t, err, os.ErrNotExist)

	code, out, errs = run("proc", "zoneinfo", "--import", dir)
	require.Equal(t, exitOK, code, errs)
	assert.Contains(t, out, "min ", "the collected dump imports")
	codeF, outF, _ := run("proc", "zoneinfo", "--import", procRoot)
	require.Equal(t, exitOK, codeF)
	assert.NotEqual(t, outF, out, "the dump's min_free_kbytes was collected (it moves the watermarks)")

	code, _, errs = run("proc", "--collect", dir)
	assert.Equal(t, exitInput, code)
	assert.Contains(t, errs, "the folder is not empty")

	code, _, errs = run("proc", "buddyinfo", "--collect", dir)
	assert.Equal(t, exitUsage, code, errs)
}
