package workload

import (
	"testing"

	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pgbenchServer boots a 256 MiB machine with 4 CPUs, fills it as
// SetupPgBench does and starts sessions, the checkpointer and the
// background writer; it runs 300 ms with the invariants checked every 64
// events.
func pgbenchServer(t *testing.T, accountBlocks uint64, sessions int) (*mm.Machine, *PgBench) {
	t.Helper()
	cfg, err := mm.SimpleLayout(65536, 1, 4)
	require.NoError(t, err)
	m, err := mm.NewMachine(cfg)
	require.NoError(t, err)
	setup := m.World.NewTask("setup", 0, nil, sim.Never)
	b, _, err := SetupPgBench(m, setup, m.World.Stream("workload/pgbench"), PgBenchMemory{
		SharedBuffers: 8192, AccountBlocks: accountBlocks, Sessions: sessions,
		MappedPer1000: 500, ScatterPer1000: 125, Fragmented: true,
	})
	require.NoError(t, err)
	b.TxnCPU = SimpleUpdateCPU
	b.WALRecordBytes = 384
	b.MaxWritePages = 256
	b.TouchesPerTxn = 3
	b.FPIBlocks = 200
	start := setup.Now + sim.Millisecond
	for c := 0; c < sessions; c++ {
		m.World.Fork("postgres", 0, b.Session(500), start)
	}
	m.World.Fork("postgres: checkpointer", 0, b.Checkpointer(), start)
	m.World.Fork("postgres: background writer", 0, b.BgWriter(), start)
	for n := 0; m.World.NextEventTime() <= start+300*sim.Millisecond; n++ {
		m.World.Step()
		if n%64 == 0 {
			require.NoError(t, m.CheckInvariants())
		}
	}
	require.NoError(t, m.CheckInvariants())
	return m, b
}

func TestPgBenchWritesItsDataFilesEightKiBAtATime(t *testing.T) {
	t.Run("with the accounts in shared_buffers the backends extend pgbench_history, the checkpointer writes what they dirtied, the background writer nothing", func(t *testing.T) {
		m, b := pgbenchServer(t, 2000, 16)
		st := b.Stats
		require.Greater(t, st.Commits, uint64(HistoryRowsPerBlock), "enough commits to fill a history block")
		assert.InDelta(t, float64((b.historyRows+HistoryRowsPerBlock-1)/HistoryRowsPerBlock), float64(st.Extends), 1,
			"one extension a HistoryRowsPerBlock rows (the last may be under way)")
		assert.Equal(t, st.Extends, st.DataWrites, "no evictions: the backends' data writes are the extensions")
		assert.Zero(t, st.DataReads)
		assert.Greater(t, st.CheckpointWrites, uint64(0), "the checkpointer wrote the blocks dirtied")
		assert.LessOrEqual(t, st.CheckpointWrites, st.FPIs+st.Extends, "at most one write a block first dirtied")
		assert.Zero(t, st.BgWriterWrites, "no buffer allocations, nothing to clean")
		assert.Equal(t, st.Extends*BlockPages, b.History.Resident(), "each extension left its 8 KiB block in the page cache")
		assert.Greater(t, m.Filemap.FoliosAdded[1], uint64(0), "8 KiB writes asked for order-1 folios")
	})
	t.Run("with the accounts four times shared_buffers the background writer cleans victims the backends then take", func(t *testing.T) {
		_, b := pgbenchServer(t, 16384, 16)
		st := b.Stats
		assert.Greater(t, st.DataReads, uint64(0), "misses read their block")
		assert.Greater(t, st.BgWriterWrites, uint64(0))
		assert.Greater(t, st.CleanTaken, uint64(0))
		assert.LessOrEqual(t, st.CleanTaken, st.BgWriterWrites, "a cleaned victim is taken once")
		assert.Equal(t, st.DataReads, st.DataWrites-st.Extends+st.CleanTaken, "every miss evicts: the backend writes its victim or takes a clean one")
	})
}
