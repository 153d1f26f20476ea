package script

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

var update = flag.Bool("update", false, "rewrite the expected output of testdata/ scripts (same as -rewrite)")

func TestMain(m *testing.M) {
	flag.Parse()
	if *update {
		if err := flag.Set("rewrite", "true"); err != nil {
			panic(err)
		}
	}
	os.Exit(m.Run())
}

// TestScripts runs the scenario scripts under testdata/. Each file is one
// interpreter session; each "script" directive runs its lines and shows
// what they printed, or the error that stopped them. The machine's
// invariant check runs after every command and every simulated event.
// Regenerate the expected output with
// go test ./engine/script/ -run TestScripts -rewrite (or -update).
func TestScripts(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		in := New(Options{CheckEveryCommand: true, CheckEveryEvent: true})
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			if d.Cmd != "script" {
				t.Fatalf("%s: unknown directive %q (want script)", d.Pos, d.Cmd)
			}
			file, line := splitPos(d.Pos)
			var out bytes.Buffer
			if err := in.Exec(&out, file, line+1, []byte(d.Input)); err != nil {
				fmt.Fprintf(&out, "error: %v\n", err)
			}
			return out.String()
		})
	})
}

// splitPos splits datadriven's "file:line".
func splitPos(pos string) (string, int) {
	i := strings.LastIndexByte(pos, ':')
	n, _ := strconv.Atoi(pos[i+1:])
	return pos[:i], n
}
