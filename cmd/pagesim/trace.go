package main

// trace.go writes the recordings of --trace: Chrome's JSON trace event
// format (Perfetto UI, chrome://tracing) and the text trace-cmd report
// prints (engine/tracefmt). The engine records; these functions are the
// only ones that open the files.

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/tracefmt"
)

// recordBytes is the budget of one run's recording, which comes out of
// the memory budget: mm.DefaultRecordBytes (256 MiB), or a quarter of the
// budget when that is less.
func recordBytes(limit uint64) uint64 {
	return min(uint64(mm.DefaultRecordBytes), limit/4)
}

// traceDir makes sure dir is a folder that can take the trace files,
// creating it if needed.
func traceDir(dir string) error {
	if dir == "" {
		return errors.New("--trace needs a folder")
	}
	fi, err := os.Stat(dir)
	switch {
	case err == nil && !fi.IsDir():
		return fmt.Errorf("--trace %s: not a folder", dir)
	case err == nil:
		return nil
	case errors.Is(err, os.ErrNotExist):
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("--trace: %w", err)
		}
		return nil
	}
	return fmt.Errorf("--trace: %w", err)
}

// writeChromeFile writes rec as a Chrome JSON trace to path.
func writeChromeFile(path string, rec *mm.Recording, meta tracefmt.Meta) error {
	return writeFile(path, func(w io.Writer) error { return tracefmt.WriteChrome(w, rec, meta) })
}

// writeReportFile writes rec's tracepoint log as trace-cmd report to path.
func writeReportFile(path string, rec *mm.Recording) error {
	return writeFile(path, func(w io.Writer) error { return tracefmt.WriteReport(w, rec) })
}

func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// traceBase is a run's file name without extension:
// thp-thisnode-upstream-run1.
func traceBase(dir, scenario, variant string, run int) string {
	return filepath.Join(dir, fmt.Sprintf("%s-%s-run%d", scenario, variant, run+1))
}

// flagGiven reports whether the command line set the flag name.
func flagGiven(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == name {
			given = true
		}
	})
	return given
}
