package tracefmt

import (
	"bufio"
	"bytes"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/sim"
)

// The layout of a line, from trace-cmd report's own documentation
// (Documentation/trace-cmd/trace-cmd-report.1.txt):
//
//	sleep-89142 [001] ..... 162573.215755: lock_release:         0xffffffff855e7448 trace_types_lock
func TestAReportLineIsLaidOutAsTraceCmdPrintsIt(t *testing.T) {
	for _, tc := range []struct {
		name string
		e    mm.TraceEvent
		want string
	}{
		{"a short name is padded to 20 columns",
			mm.TraceEvent{Time: 162573*sim.Second + 215755*sim.Microsecond, Comm: "kswapd0", PID: 93, CPU: 1, ID: mm.TraceMmVmscanKswapdWake, Args: [8]int64{0, 9}},
			"         kswapd0-93    [001] ..... 162573.215755: mm_vmscan_kswapd_wake: nid=0 order=9"},
		{"the time rounds to the microsecond",
			mm.TraceEvent{Time: 2*sim.Second - 1, Comm: "kcompactd0", PID: 3, CPU: 12, ID: mm.TraceMmCompactionKcompactdSleep},
			"      kcompactd0-3     [012] .....     2.000000: mm_compaction_kcompactd_sleep: nid=0"},
		{"a comm is cut to 15 characters, as TASK_COMM_LEN keeps it",
			mm.TraceEvent{Time: 1500, Comm: "a-very-long-task-name", PID: 12345, CPU: 0, ID: mm.TraceMmCompactionMigratepages, Args: [8]int64{3, 1}},
			" a-very-long-tas-12345 [000] .....     0.000002: mm_compaction_migratepages: nr_migrated=3 nr_failed=1"},
		{"a name of 20 characters or more is not padded",
			mm.TraceEvent{Time: sim.Second, Comm: "qemu", PID: 5, ID: mm.TraceMmVmscanDirectReclaimEnd, Args: [8]int64{32, 5}},
			"            qemu-5     [000] .....     1.000000: mm_vmscan_direct_reclaim_end: nr_reclaimed=32 pid=5 memcg_id=0 "},
		{"a name under 20 gets spaces up to 20",
			mm.TraceEvent{Time: sim.Second, Comm: "qemu", PID: 5, ID: mm.TraceCompactRetry, Args: [8]int64{9, 1, 0, 1, 16, 1}},
			"            qemu-5     [000] .....     1.000000: compact_retry:        order=9 priority=COMPACT_PRIO_SYNC_LIGHT compaction_result=withdrawn retries=1 max_retries=16 should_retry=1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, ReportLine(&tc.e, 0))
		})
	}
}

// reportLine reads a line of trace-cmd report back.
var reportLine = regexp.MustCompile(`^(?:(\S+): )?\s*(.{1,15})-(\d+)\s+\[(\d{3})\] \.{5} +(\d+)\.(\d{6}): (\S+): +(.*)$`)

type reportEvent struct {
	input, comm string
	pid, cpu    int
	usecs       int64
	name        string
	fields      string
}

func readReport(t *testing.T, text string) (headers []string, events []reportEvent, tail []string) {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if strings.Contains(l, "cpus=") && len(events) == 0 {
			headers = append(headers, l)
			continue
		}
		m := reportLine.FindStringSubmatch(l)
		if m == nil {
			tail = append(tail, l)
			continue
		}
		require.Empty(t, tail, "event lines come before the dropped-event lines: %q", l)
		pid, _ := strconv.Atoi(m[3])
		cpu, _ := strconv.Atoi(m[4])
		s, _ := strconv.ParseInt(m[5], 10, 64)
		us, _ := strconv.ParseInt(m[6], 10, 64)
		events = append(events, reportEvent{input: m[1], comm: strings.TrimSpace(m[2]), pid: pid, cpu: cpu, usecs: s*1000000 + us, name: m[7], fields: m[8]})
	}
	return headers, events, tail
}

func TestAReportHoldsEveryEventMergedByTimeThenCPU(t *testing.T) {
	rec, in, _ := recordScript(t, pressure, mm.RecordConfig{})
	var b bytes.Buffer
	require.NoError(t, WriteReport(&b, rec))
	headers, got, tail := readReport(t, b.String())
	assert.Equal(t, []string{"cpus=2"}, headers)
	assert.Empty(t, tail)
	require.EqualValues(t, in.Machine().Trace.Written, len(got))

	want := append([]mm.TraceEvent(nil), rec.Machines[0].Events...)
	sort.SliceStable(want, func(i, j int) bool {
		if want[i].Time != want[j].Time {
			return want[i].Time < want[j].Time
		}
		return want[i].CPU < want[j].CPU
	})
	for i := range want {
		e := &want[i]
		assert.Equal(t, reportEvent{comm: e.Comm, pid: int(e.PID), cpu: int(e.CPU), usecs: (int64(e.Time) + 500) / 1000, name: e.Name(),
			fields: strings.TrimLeft(e.Fields(), " ")}, got[i], "line %d", i+1)
	}
	for i := 1; i < len(got); i++ {
		require.True(t, got[i-1].usecs < got[i].usecs || got[i-1].usecs == got[i].usecs, "line %d is in time order", i+1)
	}
}

func TestAScriptsTwoMachinesReportAsTwoInputs(t *testing.T) {
	src := "machine mem=32M layout=simple cpus=1\nalloc a gfp=GFP_KERNEL count=all\nrun 1s\n" +
		"machine mem=48M layout=simple cpus=2\nalloc a gfp=GFP_KERNEL count=all\nrun 1s\n"
	rec, _, _ := recordScript(t, src, mm.RecordConfig{})
	var b bytes.Buffer
	require.NoError(t, WriteReport(&b, rec))
	headers, got, _ := readReport(t, b.String())
	assert.Equal(t, []string{"machine1: cpus=1", "machine2: cpus=2"}, headers)
	inputs := map[string]int{}
	for _, e := range got {
		inputs[e.input]++
	}
	assert.Equal(t, map[string]int{"machine1": len(rec.Machines[0].Events), "machine2": len(rec.Machines[1].Events)}, inputs)
	assert.Positive(t, inputs["machine1"])
	assert.Positive(t, inputs["machine2"])
}

func TestAScenariosPhasesReportOnOneClock(t *testing.T) {
	rec := &mm.Recording{Sequential: true, Machines: []mm.RecordedMachine{
		{Name: "1/2: a", CPUNode: []int{0, 0}, Events: []mm.TraceEvent{{Time: sim.Second, Comm: "kswapd0", PID: 1, ID: mm.TraceMmVmscanKswapdSleep}}, End: 2 * sim.Second},
		{Name: "2/2: b", Offset: 2 * sim.Second, CPUNode: []int{0, 0}, Events: []mm.TraceEvent{{Time: sim.Second / 2, Comm: "kswapd0", PID: 1, CPU: 1, ID: mm.TraceMmVmscanKswapdSleep}}},
	}}
	var b bytes.Buffer
	require.NoError(t, WriteReport(&b, rec))
	assert.Equal(t, "cpus=2\n"+
		"         kswapd0-1     [000] .....     1.000000: mm_vmscan_kswapd_sleep: nid=0\n"+
		"         kswapd0-1     [001] .....     2.500000: mm_vmscan_kswapd_sleep: nid=0\n", b.String())
}
