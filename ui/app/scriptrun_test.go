package app

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pagesim/pagesim/engine/script"
)

// runScript runs src to its end on r and returns the state then.
func runScript(t *testing.T, r *ScriptRunner, src string) ScriptState {
	t.Helper()
	done := make(chan struct{})
	r.Run(src, func() { close(done) })
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("the script did not end")
	}
	return r.State()
}

func TestAPageScriptPrintsWhatPagesimScriptPrints(t *testing.T) {
	src := script.Examples[0].Src
	var want bytes.Buffer
	require.NoError(t, script.Run(ScriptName, strings.NewReader(src), &want, script.Options{}))
	r := NewScriptRunner()
	yields := 0
	r.Yield, r.YieldEvery = func() { yields++ }, 0
	st := runScript(t, r, src)
	assert.Equal(t, want.String(), st.Output)
	assert.Empty(t, st.Err)
	assert.True(t, st.Ran)
	assert.False(t, st.Running)
	assert.True(t, st.Traced)
	assert.Positive(t, yields, "the run let the page draw")

	var trace bytes.Buffer
	require.NoError(t, r.WriteTrace(&trace))
	var doc struct {
		TraceEvents []map[string]any `json:"traceEvents"`
	}
	require.NoError(t, json.Unmarshal(trace.Bytes(), &doc), "the trace is JSON")
	assert.NotEmpty(t, doc.TraceEvents)
	var report bytes.Buffer
	require.NoError(t, r.WriteTraceReport(&report))
}

func TestAScriptThatDoesNotCheckRunsNothingAndNamesItsLine(t *testing.T) {
	r := NewScriptRunner()
	st := runScript(t, r, "machine mem=64M\necho hello\nfualt heap\n")
	assert.Equal(t, `script.txt:3: unknown command "fualt"`, st.Err)
	assert.Equal(t, 3, st.ErrLine)
	assert.Empty(t, st.Output, "the echo on line 2 did not run")
	assert.False(t, st.Traced)
	assert.Error(t, r.WriteTrace(&bytes.Buffer{}))
}

func TestAMachineOverThePageBudgetIsRefusedWithTheCommandThatRunsIt(t *testing.T) {
	r := NewScriptRunner()
	st := runScript(t, r, "echo start\nmachine mem=1T\n")
	assert.Equal(t, "start\n", st.Output)
	assert.Equal(t, 2, st.ErrLine)
	assert.Contains(t, st.Err, "script.txt:2: machine:")
	assert.Contains(t, st.Err, "pagesim script script.txt runs it natively")
}

func TestStopEndsARunAtItsLineAndKeepsItsOutput(t *testing.T) {
	r := NewScriptRunner()
	// With YieldEvery 0 the runner yields before each statement and
	// every 4096 events: the fourth yield after the echo is in run's.
	after := 0
	r.YieldEvery = 0
	r.Yield = func() {
		if strings.Contains(r.State().Output, "before") {
			if after++; after == 4 {
				r.Stop()
			}
		}
	}
	st := runScript(t, r, "machine mem=64M layout=simple cpus=1\necho before\nregion heap size=48M madvise=nohugepage\ntask hog fault region=heap batch=1 interval=1ms\nrun until=hog-done\necho after\n")
	assert.Equal(t, "before\n", st.Output)
	assert.Equal(t, "script.txt:5: run: stopped", st.Err)
	assert.False(t, st.Running)
}

func TestAScriptLinkCarriesTheScriptExactly(t *testing.T) {
	for _, e := range script.Examples {
		frag, err := ScriptLink(e.Src)
		require.NoError(t, err, e.Title)
		assert.True(t, IsScriptLink(frag))
		assert.LessOrEqual(t, len(frag), MaxScriptLink)
		got, err := ParseScriptLink(frag)
		require.NoError(t, err)
		assert.Equal(t, e.Src, got, e.Title)
	}
}

func TestAScriptTooLongForALinkIsRefusedAndABadLinkSaysWhy(t *testing.T) {
	// 12 KB of text that does not compress: random-looking names.
	var b strings.Builder
	x := uint32(1)
	for b.Len() < 12<<10 {
		x = x*1664525 + 1013904223
		b.WriteString("echo ")
		for i := 0; i < 8; i++ {
			b.WriteByte(byte('a' + (x>>(i*3))%26))
		}
		b.WriteByte('\n')
	}
	_, err := ScriptLink(b.String())
	assert.ErrorIs(t, err, ErrScriptTooLong)

	_, err = ParseScriptLink("v1/script?src=***")
	assert.ErrorContains(t, err, "not base64url")
	_, err = ParseScriptLink("v1/script?src=aGVsbG8")
	assert.ErrorContains(t, err, "not deflated text")
	_, err = ParseScriptLink("v1/script")
	assert.Error(t, err)
}
