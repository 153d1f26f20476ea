package mm

import (
	"math"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// allocated returns the bytes f allocated on the heap (cumulative, so a
// GC during f does not hide anything).
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func TestMachineBytesAccountsForWhatBootAllocates(t *testing.T) {
	cases := []struct {
		name string
		cfg  func() (Config, error)
	}{
		{"1 GiB on one node with 2 CPUs (memory dominates)", func() (Config, error) { return X86Layout(1<<30, 1, 2) }},
		{"512 MiB over 8 nodes with 64 CPUs each (per-CPU state dominates)", func() (Config, error) { return SimpleLayout(16384, 8, 64) }},
		{"a zone starting high (the memory map covers the range below it)", func() (Config, error) {
			return Config{Nodes: []NodeSpec{{CPUs: 1, Zones: []ZoneSpec{{Type: ZONE_NORMAL, StartPFN: 1 << 20, Spanned: 8192, Present: 8192, Managed: 8192}}}}}, nil
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := tc.cfg()
			require.NoError(t, err)
			c := CostOf(cfg)
			boot := c.Total() - c.Run
			var m *Machine
			got := allocated(func() { m, err = NewMachine(cfg) })
			require.NoError(t, err)
			require.NotNil(t, m)
			// What boot allocates beyond the parts is small (tasks,
			// names, lists); the parts themselves are exact.
			assert.GreaterOrEqual(t, got, boot*9/10, "boot allocated %d bytes, the budget's boot parts say %d", got, boot)
			assert.LessOrEqual(t, got, c.Total()*5/4, "boot allocated %d bytes, more than the budget's %d", got, c.Total())
		})
	}
}

func TestNewMachineRefusesAnOverBudgetMachineBeforeAllocating(t *testing.T) {
	cfg, err := X86Layout(64<<30, 64, 1024)
	require.NoError(t, err)
	c := CostOf(cfg)
	// 64 nodes x 5 zones x 65536 CPUs of per_cpu_pages: the 6 GB of RSS
	// the command line once reached.
	assert.Greater(t, c.PerCPU, uint64(5<<30))
	cfg.MaxBytes = 4 << 30
	var m *Machine
	got := allocated(func() { m, err = NewMachine(cfg) })
	require.Error(t, err)
	assert.Nil(t, m)
	assert.Less(t, got, uint64(1<<20), "refused after allocating %d bytes", got)
	var be *BudgetError
	require.ErrorAs(t, err, &be)
	assert.Equal(t, 1, be.Machines)
	assert.Equal(t, uint64(4<<30), be.Limit)
	assert.Equal(t, "a machine of 64.0 GiB over 64 node(s) with 65536 CPU(s) needs 5.8 GiB of memory to simulate, over the limit of 4 GiB", err.Error())
}

func TestCheckBudgetCountsMachinesRunAtOnce(t *testing.T) {
	cfg, err := SimpleLayout(1<<18, 2, 4) // 2 x 1 GiB
	require.NoError(t, err)
	one := MachineBytes(cfg)
	require.NoError(t, CheckBudget(cfg, 1, one))
	require.NoError(t, CheckBudget(cfg, 3, 3*one))
	err = CheckBudget(cfg, 3, 3*one-1)
	require.Error(t, err)
	assert.Equal(t, "3 machines (each 2 GiB over 2 node(s) with 8 CPU(s), "+FormatBytes(one)+" to simulate) need "+FormatBytes(3*one)+
		" together, over the limit of "+FormatBytes(3*one-1), err.Error(), "the total is the machines', each one's cost beside it")
	require.NoError(t, CheckBudget(cfg, 3, 0), "0 is no limit")
}

func TestMachineBytesSaturatesInsteadOfWrapping(t *testing.T) {
	cfg := Config{Nodes: []NodeSpec{{CPUs: 1, Zones: []ZoneSpec{{Type: ZONE_NORMAL, StartPFN: math.MaxUint32, Spanned: math.MaxUint64, Present: 1, Managed: 1}}}}}
	assert.Equal(t, uint64(math.MaxUint64), MachineBytes(cfg))
	assert.Error(t, CheckBudget(cfg, 1, 1<<40))
	assert.Equal(t, "more than 16 EiB", FormatBytes(math.MaxUint64))
	cfg = Config{Nodes: []NodeSpec{{CPUs: math.MaxInt, Zones: []ZoneSpec{{Type: ZONE_NORMAL, Spanned: 1024, Present: 1024, Managed: 1024}}}, {CPUs: math.MaxInt}}}
	assert.Equal(t, uint64(math.MaxUint64), MachineBytes(cfg))
}

func TestNewMachineRefusesAZoneEndingPastTheLimitWhoseEndWraps(t *testing.T) {
	// 2^64-1 pages from PFN 2: start+spanned wraps to 1, which the old
	// check (start+spanned > 1<<31) let through to a panic.
	cfg := Config{Nodes: []NodeSpec{{CPUs: 1, Zones: []ZoneSpec{{Type: ZONE_NORMAL, StartPFN: 2, Spanned: math.MaxUint64, Present: 1024, Managed: 1024}}}}}
	m, err := NewMachine(cfg)
	require.Error(t, err)
	assert.Nil(t, m)
	assert.Contains(t, err.Error(), "beyond 8 TiB")
}

func TestFormatBytesPrintsBinaryUnits(t *testing.T) {
	for b, want := range map[uint64]string{0: "0 B", 1023: "1023 B", 1 << 10: "1 KiB", 3 << 29: "1.5 GiB", 7 << 40: "7 TiB"} {
		assert.Equal(t, want, FormatBytes(b))
	}
}
