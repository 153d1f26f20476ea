package script

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/procfs"
	"github.com/pagesim/pagesim/engine/sim"
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
	in.Machine().Nodes[0].Zones[mm.ZONE_NORMAL].Stat[mm.NR_FREE_PAGES]++
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
		in.m.Nodes[0].Zones[mm.ZONE_NORMAL].Stat[mm.NR_FREE_PAGES]++
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

func TestAMachineOverTheBudgetIsRefusedBeforeBooting(t *testing.T) {
	in := New(Options{MaxBytes: 1 << 30})
	err := in.Exec(&bytes.Buffer{}, "s", 1, []byte("machine mem=7T\n"))
	require.Error(t, err)
	assert.Nil(t, in.Machine())
	var be *mm.BudgetError
	require.ErrorAs(t, err, &be, "the engine's error is kept for the command line's hint")
	assert.Equal(t, "s:1: machine: a machine of 7.0 TiB over 1 node(s) with 2 CPU(s) needs 36.8 GiB of memory to simulate, over the limit of 1 GiB", err.Error())
}

func TestAWriteFarIntoAFileIsRefusedWhenItsIndexIsOverTheBudget(t *testing.T) {
	for _, c := range []struct{ offset, msg string }{
		{"8T", "a write ending at 8.0 TiB needs 32.0 MiB for the file's page-cache index, over the memory budget of 16 MiB"},
		{"16777215T", "a write ending at 16.0 EiB needs 64.0 TiB for the file's page-cache index, over the memory budget of 16 MiB"},
	} {
		in := New(Options{MaxBytes: 16 << 20})
		err := in.Exec(&bytes.Buffer{}, "s", 1, []byte("machine mem=64M layout=simple\nfile write d size=1M offset="+c.offset+"\n"))
		require.Error(t, err, c.offset)
		assert.Equal(t, "s:2: file write: "+c.msg, err.Error())
	}
	in := New(Options{MaxBytes: 16 << 20})
	require.NoError(t, in.Exec(&bytes.Buffer{}, "s", 1, []byte("machine mem=64M layout=simple\nfile write d size=1M offset=1T\n")),
		"an index of 4 MiB fits")
}

func TestAByteOrderMarkAtTheStartIsIgnored(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, New(Options{}).Exec(&out, "s", 1, []byte("\uFEFFecho hello\n")))
	assert.Equal(t, "hello\n", out.String())
	// Anywhere else it is text, and an unknown command.
	err := New(Options{}).Exec(&out, "s", 1, []byte("echo a\n\uFEFFecho b\n"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "s:2:")
}

func TestACommandOnACPUThatATaskNeverLeavesStopsWithAnError(t *testing.T) {
	// A task with no interval= queues its next step before the command's
	// every time; the command used to wait for ever (simulated years).
	in := New(Options{})
	err := in.Exec(&bytes.Buffer{}, "s", 1, []byte("machine mem=128M layout=simple cpus=1\ntask a alloc gfp=GFP_ATOMIC\nrun 100us\nalloc b gfp=GFP_NOFS count=1\n"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "s:4: the command never got CPU 0: other tasks ran 4096 steps on it")
}

func TestACommandWhoseAllocationsStopAtCondReschedIsNotWaitingForItsCPU(t *testing.T) {
	// Without kswapd (no __GFP_KSWAPD_RECLAIM) every 32 allocations
	// below the min watermark reclaim once, stopping at
	// __perform_reclaim's two cond_resched() calls: more than 4096 stops
	// of the command's own task, none of them another task's step.
	in := New(Options{})
	var out bytes.Buffer
	err := in.Exec(&out, "s", 1, []byte("machine mem=1G layout=simple cpus=1\nfile write f size=960M sync=on\n"+
		"alloc x gfp=__GFP_IO|__GFP_FS|__GFP_DIRECT_RECLAIM count=230000\nexpect allocstall_normal > 2048\nprint x\n"))
	require.NoError(t, err)
	assert.Equal(t, "allocation x: chunks=230000 pages=230000 order=0 failed=0\n", out.String())
}

func TestACommandWhoseAllocationNeverEndsStopsWithAnError(t *testing.T) {
	// Every page taken, then a request that cannot fail: it loops in
	// the slow path, with the clock moving, for as long as nothing frees
	// memory. (The kernel would OOM-kill a task.)
	defer func(n uint64) { maxAllocYields = n }(maxAllocYields)
	maxAllocYields = 1 << 10
	in := New(Options{})
	err := in.Exec(&bytes.Buffer{}, "s", 1, []byte("machine mem=64M layout=simple cpus=1\nalloc hog gfp=GFP_KERNEL count=all\n"+
		"alloc more gfp=GFP_KERNEL|__GFP_NOFAIL count=2000\n"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "s:3: an allocation of this command stopped at cond_resched() 1024 times over ")
	assert.Contains(t, err.Error(), "(__GFP_NOFAIL) with nothing left to reclaim loops for ever")
}

func TestProgressIsReportedWhileTimeAdvances(t *testing.T) {
	var calls []string
	in := New(Options{Progress: func(file string, line int, cmd string, now, end sim.Time) {
		calls = append(calls, fmt.Sprintf("%s:%d %s %v", file, line, cmd, now <= end))
	}})
	require.NoError(t, in.Exec(&bytes.Buffer{}, "s", 1, []byte("machine mem=64M layout=simple cpus=1\ntask a alloc gfp=GFP_KERNEL interval=1us\nrun 1s\n")))
	require.NotEmpty(t, calls)
	assert.Equal(t, "s:3 run true", calls[0])
}

func TestCheckNamesTheFirstBadLineWithoutRunningAnything(t *testing.T) {
	err := Check("script.txt", []byte("machine mem=64M\nregion heap szie=1M\nfualt heap\n"))
	require.Error(t, err)
	assert.Equal(t, `script.txt:2: region: unknown argument "szie" (did you mean "size"?)`, err.Error())
	assert.NoError(t, Check("script.txt", []byte("machine mem=64M\nrun 1s\n")))
}

func TestInterruptStopsARunningScriptAtItsLineAndKeepsWhatItPrinted(t *testing.T) {
	stop := fmt.Errorf("stopped")
	asked := 0
	in := New(Options{InterruptEvents: 16, Interrupt: func() error {
		asked++
		if asked > 5 {
			return stop
		}
		return nil
	}})
	var out bytes.Buffer
	src := "machine mem=64M layout=simple cpus=1\necho before\nregion heap size=48M\ntask hog fault region=heap batch=1\nrun until=hog-done\necho after\n"
	err := in.Exec(&out, "s.txt", 1, []byte(src))
	var se *Error
	require.ErrorAs(t, err, &se)
	assert.ErrorIs(t, err, stop)
	assert.Equal(t, "s.txt:5: run: stopped", se.Error(), "asked before each of the 5 lines, the sixth time in run's events")
	assert.Equal(t, "before\n", out.String())
}

func TestImportBootsTheDumpAsPagesimProcImportDoesWithItsWarningsAsNotes(t *testing.T) {
	dump := os.DirFS("../procfs/testdata/fixtures/jc-linux-proc")
	m, warnings, err := procfs.Import(dump, procfs.ImportOptions{})
	require.NoError(t, err)
	require.NotEmpty(t, warnings)
	var want strings.Builder
	for _, w := range warnings {
		want.WriteString("note: import: " + w + "\n")
	}
	require.NoError(t, procfs.Buddyinfo(&want, m))

	var out bytes.Buffer
	require.NoError(t, New(Options{Dump: dump, CheckEveryCommand: true}).Exec(&out, "s.txt", 1, []byte("import\nprint buddyinfo\n")))
	assert.Equal(t, want.String(), out.String())

	err = New(Options{}).Exec(&out, "s.txt", 1, []byte("import\n"))
	assert.ErrorContains(t, err, "s.txt:1: import: no dump to import: give its folder with pagesim script --import DIR")
	err = New(Options{Dump: dump, MaxBytes: 1 << 20}).Exec(&out, "s.txt", 1, []byte("import\n"))
	var be *mm.BudgetError
	assert.ErrorAs(t, err, &be, "the budget holds for an imported machine")
}

func TestAPacedScriptPrintsTheSameBytesAndItsClockNeverPassesTheLimit(t *testing.T) {
	src := Examples[0].Src + "machine mem=64M layout=simple cpus=2\nregion r size=8M\ntask f fault region=r cpu=1\nrun until=f-done\nrun 250ms\nprint vmstat nr_free_pages\n"
	var want bytes.Buffer
	require.NoError(t, New(Options{}).Exec(&want, "s", 1, []byte(src)))

	// The page's clock moves 7 ms a call; a limit is never passed.
	var got bytes.Buffer
	var machines []*mm.Machine
	limits := map[*mm.Machine]sim.Time{}
	calls := 0
	var in *Interp
	in = New(Options{Pace: func(m *mm.Machine, next sim.Time) (sim.Time, error) {
		calls++
		if len(machines) == 0 || machines[len(machines)-1] != m {
			machines = append(machines, m)
		} else {
			assert.LessOrEqual(t, m.World.Now(), limits[m], "the clock stayed within the limit")
		}
		limits[m] += 7 * sim.Millisecond
		return limits[m], nil
	}})
	require.NoError(t, in.Exec(&got, "s", 1, []byte(src)))
	assert.Equal(t, want.String(), got.String(), "pacing changes nothing the script prints")
	assert.Len(t, machines, 2, "each machine the script boots is paced")
	assert.Greater(t, calls, 250/7, "run 250ms waited for the clock")
	last := machines[1]
	assert.LessOrEqual(t, last.World.Now(), limits[last])

	t.Run("an error from Pace stops the script at its line", func(t *testing.T) {
		stop := New(Options{Pace: func(m *mm.Machine, next sim.Time) (sim.Time, error) {
			if next > 100*sim.Millisecond {
				return 0, fmt.Errorf("stopped")
			}
			return next, nil
		}})
		err := stop.Exec(&bytes.Buffer{}, "s", 1, []byte("machine mem=64M layout=simple\nrun 1s\necho never\n"))
		assert.EqualError(t, err, "s:2: run: stopped")
	})
}
