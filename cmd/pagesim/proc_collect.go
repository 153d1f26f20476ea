package main

// proc_collect.go is `pagesim proc --collect DIR`: copy this Linux
// machine's /proc files that `--import` reads into DIR, the folder the
// page's "Start from a machine" and `pagesim proc --import DIR` take.

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/procfs"
)

// procRoot is where --collect reads /proc (tests replace it).
var procRoot = "/proc"

// collectDump copies procfs.DumpFiles from /proc and the vm sysctls
// pagesim models from /proc/sys/vm into dir, which must be new or
// empty. A file it may not read (pagetypeinfo without root) or that is
// missing is a warning; a dump with none of buddyinfo, pagetypeinfo and
// zoneinfo is an error.
func collectDump(dir string, stdout, stderr io.Writer) int {
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		fmt.Fprintf(stderr, "pagesim proc: --collect %s: the folder is not empty; give a new one (nothing was written)\n", dir)
		return exitInput
	}
	if err := os.MkdirAll(filepath.Join(dir, "sys_vm"), 0o755); err != nil {
		fmt.Fprintf(stderr, "pagesim proc: --collect: %v\n", err)
		return exitInput
	}
	var got []string
	for _, name := range procfs.DumpFiles {
		err := copyProcFile(filepath.Join(procRoot, name), filepath.Join(dir, name))
		switch {
		case err == nil:
			got = append(got, name)
		case errors.Is(err, fs.ErrPermission) && name == "pagetypeinfo":
			fmt.Fprintf(stderr, "pagesim proc: warning: %s/pagetypeinfo: permission denied (root only since Linux 5.6): run as root to collect the pageblocks' migratetypes\n", procRoot)
		default:
			fmt.Fprintf(stderr, "pagesim proc: warning: %v\n", err)
		}
	}
	nvm := 0
	for _, s := range mm.SysctlNames() {
		name, ok := strings.CutPrefix(s, "vm.")
		if !ok {
			continue
		}
		err := copyProcFile(filepath.Join(procRoot, "sys", "vm", name), filepath.Join(dir, "sys_vm", name))
		if err == nil {
			nvm++
		} else if !errors.Is(err, fs.ErrNotExist) {
			fmt.Fprintf(stderr, "pagesim proc: warning: %v\n", err)
		}
	}
	if !contains(got, "buddyinfo") && !contains(got, "pagetypeinfo") && !contains(got, "zoneinfo") {
		fmt.Fprintf(stderr, "pagesim proc: --collect: none of buddyinfo, pagetypeinfo and zoneinfo could be read from %s: is this Linux?\n", procRoot)
		return exitInput
	}
	fmt.Fprintf(stdout, "%s: %s, sys_vm/ (%d files)\n", dir, strings.Join(got, " "), nvm)
	return exitOK
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// copyProcFile copies a /proc file (whose size stat reports as 0) of at
// most procfs.MaxFileBytes.
func copyProcFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	b, err := io.ReadAll(io.LimitReader(in, procfs.MaxFileBytes+1))
	if err != nil {
		return fmt.Errorf("%s: %w", src, err)
	}
	if len(b) > procfs.MaxFileBytes {
		return fmt.Errorf("%s: larger than %d bytes", src, procfs.MaxFileBytes)
	}
	return os.WriteFile(dst, b, 0o644)
}
