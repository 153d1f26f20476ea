package script

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/pagesim/pagesim/engine/mm"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTheSameScriptPrintsTheSameBytes(t *testing.T) {
	src, err := os.ReadFile("testdata/thp_thisnode")
	require.NoError(t, err)
	// Keep the script lines of the first block only.
	block := strings.SplitN(strings.SplitN(string(src), "script\n", 2)[1], "----", 2)[0]
	var outs []string
	for i := 0; i < 2; i++ {
		var out bytes.Buffer
		require.NoError(t, New(Options{}).Exec(&out, "t", 1, []byte(block+"print trace\nprint vmstat\n")))
		outs = append(outs, out.String())
	}
	assert.Equal(t, outs[0], outs[1])
}

func TestAPanicInTheEngineIsAnInternalErrorThatNamesTheLine(t *testing.T) {
	commands = append(commands, &command{name: "boom", noMachine: true, run: func(in *Interp, c *call) error {
		panic("index out of range [3] with length 2\ngoroutine 1 [running]:")
	}})
	defer func() { commands = commands[:len(commands)-1] }()
	err := New(Options{}).Exec(&bytes.Buffer{}, "s.txt", 1, []byte("echo a\nboom\n"))
	var se *Error
	require.ErrorAs(t, err, &se)
	assert.True(t, se.Internal)
	assert.Equal(t, `s.txt:2: boom: internal error in the engine: index out of range [3] with length 2`, se.Error())
	assert.NotContains(t, se.Error(), "goroutine")
}

func TestABrokenInvariantStopsTheScriptInOneLine(t *testing.T) {
	in := New(Options{})
	require.NoError(t, in.Exec(&bytes.Buffer{}, "s", 1, []byte("machine mem=64M layout=simple\n")))
	in.Machine().Nodes[0].Zones[mm.ZoneNormal].Stat[mm.NR_FREE_PAGES]++
	err := in.Exec(&bytes.Buffer{}, "s", 2, []byte("check\n"))
	var se *Error
	require.ErrorAs(t, err, &se)
	assert.False(t, se.Internal)
	assert.NotContains(t, se.Error(), "\n")
	assert.Contains(t, se.Error(), "s:2: invariant broken at check")
	assert.NotEmpty(t, se.Detail, "the dump is kept as detail")
}

func TestCheckEveryCommandCatchesTheCommandThatBrokeTheMachine(t *testing.T) {
	commands = append(commands, &command{name: "corrupt", run: func(in *Interp, c *call) error {
		in.m.Nodes[0].Zones[mm.ZoneNormal].Stat[mm.NR_FREE_PAGES]++
		return nil
	}})
	defer func() { commands = commands[:len(commands)-1] }()
	err := New(Options{CheckEveryCommand: true}).Exec(&bytes.Buffer{}, "s", 1, []byte("machine mem=64M layout=simple\necho fine\ncorrupt\necho never\n"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "s:3: invariant broken after corrupt")
}

func TestHelpDescribesEveryCommand(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, New(Options{}).Exec(&out, "s", 1, []byte("help\n")))
	for _, c := range commands {
		assert.Contains(t, out.String(), c.syntax+"\n", c.name)
	}
}
