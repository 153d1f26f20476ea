package app

// traceexport.go is the page's trace downloads of the scenario's runs:
// with recording on, each variant's run records its machines
// (scenario.NewRecordedRun) and the page writes what it recorded up to
// the current time, as pagesim run --trace DIR writes a whole run.

import (
	"errors"
	"fmt"
	"io"

	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/scenario"
	"github.com/pagesim/pagesim/engine/tracefmt"
)

// PageRecordBytes is what each variant's recording may keep in the page,
// on top of its machines' share of PageMaxBytes (three variants: 96 MiB
// more at most).
const PageRecordBytes = 32 << 20

// newRun starts a variant's run, recording it when recording is on.
func (c *Controller) newRun(variant string, st scenario.Settings, maxBytes uint64) (*scenario.Run, error) {
	if c.record {
		return c.spec.NewRecordedRun(variant, st, c.st.Seed, maxBytes, mm.RecordConfig{MaxBytes: PageRecordBytes})
	}
	return c.spec.NewRun(variant, st, c.st.Seed, maxBytes)
}

// SetRecording turns the runs' recording on or off. A change restarts the
// runs at time 0 (a recording starts at boot), paused.
func (c *Controller) SetRecording(on bool) {
	if on == c.record {
		return
	}
	c.record = on
	c.Reset()
}

// Recording reports whether the runs record their traces.
func (c *Controller) Recording() bool { return c.record }

// TraceName is the file name of variant i's trace, without the
// extension, as pagesim run --trace DIR names it for run 1.
func (c *Controller) TraceName(i int) string {
	if i < 0 || i >= len(c.runs) {
		return ""
	}
	return fmt.Sprintf("%s-%s-run1", c.st.Scenario, c.runs[i].Variant())
}

func (c *Controller) recording(i int) (*mm.Recording, error) {
	if i < 0 || i >= len(c.runs) {
		return nil, fmt.Errorf("no variant %d", i)
	}
	rec := c.runs[i].Recording()
	if rec == nil {
		return nil, errors.New("the runs are not recorded: turn recording on (it restarts them)")
	}
	return rec, nil
}

// WriteTrace writes variant i's recording up to now in Chrome's JSON
// trace event format (Perfetto UI, chrome://tracing).
func (c *Controller) WriteTrace(i int, w io.Writer) error {
	rec, err := c.recording(i)
	if err != nil {
		return err
	}
	return tracefmt.WriteChrome(w, rec, tracefmt.Meta{Title: "pagesim " + c.TraceName(i), Command: "pagesim run " + c.st.Scenario + " (the page, up to " + FormatSeconds(c.Now()) + " s)"})
}

// WriteTraceReport writes variant i's tracepoint log up to now as
// trace-cmd report prints it.
func (c *Controller) WriteTraceReport(i int, w io.Writer) error {
	rec, err := c.recording(i)
	if err != nil {
		return err
	}
	return tracefmt.WriteReport(w, rec)
}
