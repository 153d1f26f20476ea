package main

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pagesim/pagesim/engine/scenario"
	"github.com/pagesim/pagesim/engine/sim"
)

// TestCommandScripts runs the command lines under testdata/: each
// "pagesim" directive runs its argument lines as one command line and
// shows its standard output, its standard error and its exit status.
// Regenerate the expected output with
// go test ./cmd/pagesim/ -run TestCommandScripts -rewrite.
func TestCommandScripts(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			if d.Cmd != "pagesim" {
				t.Fatalf("%s: unknown directive %q (want pagesim)", d.Pos, d.Cmd)
			}
			code, out, errs := run(strings.Fields(d.Input)...)
			var b strings.Builder
			b.WriteString(out)
			if errs != "" {
				b.WriteString("stderr: " + errs)
			}
			fmt.Fprintf(&b, "exit %d\n", code)
			return b.String()
		})
	})
}

// proc --at prints the run's machine at that time: the same file as a
// checkpoint of the run taken earlier and advanced to that time.
func TestProcAtPrintsTheMachineACheckpointReachesAtThatTime(t *testing.T) {
	for _, name := range []string{"buddyinfo", "pagetypeinfo", "zoneinfo", "vmstat", "pressure"} {
		t.Run(name, func(t *testing.T) {
			code, out, errs := run("proc", name, "--scenario", "thp-thisnode", "--variant", "only-compact", "--seed", "2",
				"--set", "scale=0.01", "--set", "guest_gb=30,42", "--at", "120ms")
			require.Equal(t, exitOK, code, errs)
			assert.Empty(t, errs)

			s, err := scenario.Get("thp-thisnode")
			require.NoError(t, err)
			st, err := s.Parse([]string{"scale=0.01", "guest_gb=30,42"})
			require.NoError(t, err)
			r, err := s.NewRun("only-compact", st, 2, 0)
			require.NoError(t, err)
			r.Advance(40*sim.Millisecond, math.MaxInt)
			cp, _, err := r.Clone()
			require.NoError(t, err)
			cp.Advance(120*sim.Millisecond, math.MaxInt)
			var want bytes.Buffer
			require.NoError(t, procFiles[name].write(&want, cp.Machine()))
			assert.Equal(t, want.String(), out)
			assert.Equal(t, "2/2: 42 GB", cp.Phase(), "120 ms is in the second guest's phase")
		})
	}
}
