package workload

// pgbench.go is a PostgreSQL server under pgbench's simple-update script
// (pgbench -N: UPDATE pgbench_accounts, SELECT the balance, INSERT INTO
// pgbench_history, COMMIT), reduced to what the page allocator sees of it:
// the CPU each transaction takes, the page tables each backend grows as
// it touches shared_buffers, the data pages it reads and evicts, the WAL
// it inserts, and the commit's WAL flush (a buffered write into the
// current WAL segment through iomap, then fdatasync).
//
// # A transaction
//
// A session (a pgbench client's backend, one task) runs its statements on
// the CPU (TxnCPU). Its UPDATE reads a random pgbench_accounts block
// (pgbench's :aid is uniform): in shared_buffers with probability
// SharedBlocks/AccountBlocks; otherwise the backend evicts a victim buffer,
// which is dirty (every buffer gets updated sooner or later) and is
// written back with an 8 KiB pwrite at its block, and reads the block it
// needs with an 8 KiB pread (src/backend/storage/buffer/bufmgr.c
// BufferAlloc, FlushBuffer). The buffers the transaction touches (the
// accounts page, its index leaf, the history page: TouchesPerTxn) sit at
// random places in shared_buffers; the first touch of a 2 MiB region by a
// backend faults in a PTE page for it (huge_pages=off: each backend maps
// shared_buffers with 4 KiB pages, so page tables grow with every backend
// and every region it reaches, which is where the seed's machine had
// ~40% of its memory; lore 20260428150240.3009-1-dipiets@amazon.it).
// The UPDATE then inserts its WAL: the records (WALRecordBytes), and, if
// the block was not changed since the checkpoint began, a full-page image
// of it (full_page_writes: XLogRecordAssemble's doPageWrites).
//
// # Group commit
//
// COMMIT calls XLogFlush up to the session's record. If the WAL is already
// flushed that far, the commit is done. If another session holds
// WALWriteLock (a flush is under way), it sleeps until the lock is released
// (LWLockAcquireOrWait) and checks again. Otherwise it takes the lock and
// writes all WAL inserted so far, its own and every waiting session's
// (src/backend/access/transam/xlog.c XLogFlush, XLogWrite): one pwrite per
// contiguous run of WAL buffer pages, from the 8 KiB WAL page that holds
// the flushed end (rewritten; it is still cached) to the page that holds
// the inserted end, split where a segment ends and at MaxWritePages; then
// fdatasync on the segment (wal_sync_method=fdatasync, the Linux default);
// then it releases the lock, which wakes every waiter. A segment that
// fills up is fdatasync'd at once and the write goes on in the next one.
// While a flush is slow, commits pile up behind WALWriteLock and the next
// flush carries all of them: a slow write path costs throughput once the
// sessions wait for the flush instead of running.
//
// # What reaches the page allocator
//
// WAL segments are written through IomapFileBufferedWrite: each missing
// folio is asked for at the order of the bytes left in the write's 2 MiB
// chunk, lowered to the index's alignment, and __filemap_get_folio_mpol's
// order loop falls back one order at a time with __GFP_NORETRY|__GFP_NOWARN
// above order 0. Every segment is a new file (CHOICE: the segments
// PostgreSQL recycles were written a checkpoint cycle ago and, with memory
// full, reclaimed since; a write into them allocates as into a new file).
// Data-page writes and reads are 8 KiB at an 8 KiB-aligned index: order-1
// folios through iomap for a write, order 0 through readahead for a read.
// The mapping's mask is XFS's: GFP_HIGHUSER_MOVABLE without __GFP_FS
// (xfs_setup_inode), so direct compaction on their behalf may not migrate
// page cache (isolate_migratepages_block). PTE pages are GFP_PGTABLE_USER.
//
// # Data-file writes and the background writers
//
// Besides the WAL, the server writes its data files 8 KiB at a time, each
// a buffered pwrite through iomap (an order-1 folio asked for where the
// block is not cached):
//   - relation extension: pgbench_history grows by one row per
//     transaction, and the backend whose row does not fit the last block
//     extends the relation by a zeroed block (RelationAddBlocks ->
//     smgrzeroextend -> FileZero: a pwrite of zeros at the new block);
//   - the checkpointer writes every buffer dirtied since the checkpoint
//     began, spread over the cycle (BufferSync, CheckpointWriteDelay: a
//     batch, then a 100 ms sleep while on schedule). In the steady state
//     it writes as many blocks per second as the backends dirty for the
//     first time, so the model's checkpointer writes, every
//     CheckpointerDelay, one accounts block (chosen at random: the
//     buffers of the previous cycle) per full-page image logged since its
//     last round, and every history block filled since;
//   - the background writer (BgBufferSync) wakes every BgWriterDelay and
//     cleans, ahead of the clock sweep, up to BgWriterLRUMaxPages victim
//     buffers, bgwriter_lru_multiplier times the buffers the backends
//     allocated since its last round; a backend that evicts takes a
//     cleaned victim if there is one and writes its victim itself only
//     otherwise. With the accounts table inside shared_buffers the
//     backends allocate no buffers and the background writer writes
//     nothing.
// The checkpointer's fsyncs come at the checkpoint's end, outside a
// measured window shorter than a cycle, and are not modelled.
//
// Everything random comes from the workload's own stream (Rng).

import (
	"math/bits"

	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/sim"
)

// XFSDataGFP is the page-cache mask of an XFS file: mapping_gfp_mask()
// with __GFP_FS cleared (xfs_setup_inode); a write adds __GFP_WRITE.
var XFSDataGFP = mm.MustParseGFP("GFP_NOFS|__GFP_HIGHMEM|__GFP_MOVABLE|__GFP_HARDWALL")

// PgtableGFP is GFP_PGTABLE_USER (GFP_KERNEL_ACCOUNT | __GFP_ZERO), the
// mask of a user page-table page (pte_alloc_one).
var PgtableGFP = mm.MustParseGFP("GFP_KERNEL_ACCOUNT|__GFP_ZERO")

// SimpleUpdateCPU is the CPU time of one simple-update transaction in the
// backend (parse, plan and execute its three statements, the commit
// record, the client round trips), besides what the model charges
// separately (page faults, data and WAL writes). No published figure was
// found for it on the seed's machine or a named one (docs/FIDELITY.md
// lists the searches): it is an estimate, 96 CPUs / 155,409 TPS = 618 us
// from the seed's own patched run, so it is the patched ceiling by
// construction and says nothing about the ratio.
const SimpleUpdateCPU = 600 * sim.Microsecond

// SimpleUpdateWALBytes is the WAL records of one simple-update
// transaction, full-page images aside: an UPDATE (heap HOT update), an
// INSERT and a commit record, about 384 bytes (estimate).
// SimpleUpdateTouches are the shared buffers it touches: the accounts
// page, its index leaf, the history page.
const (
	SimpleUpdateWALBytes = 384
	SimpleUpdateTouches  = 3
)

// HistoryRowsPerBlock is how many pgbench_history rows fit an 8 KiB heap
// page: the row (tid, bid, aid, delta int4, mtime timestamp, filler
// char(22): 47 bytes) after a 24-byte tuple header, MAXALIGNed to 72,
// plus a 4-byte line pointer, in the 8168 bytes after the page header:
// 107 (src/bin/pgbench/pgbench.c's DDL; src/include/storage/bufpage.h).
const HistoryRowsPerBlock = 107

// The background writers' settings, PostgreSQL's defaults:
// CheckpointerDelay is CheckpointWriteDelay's 100 ms nap while on
// schedule; bgwriter_delay, bgwriter_lru_maxpages and
// bgwriter_lru_multiplier (x10 here) (src/backend/postmaster/checkpointer.c,
// bgwriter.c, storage/buffer/bufmgr.c).
const (
	CheckpointerDelay      = 100 * sim.Millisecond
	BgWriterDelay          = 200 * sim.Millisecond
	BgWriterLRUMaxPages    = 100
	BgWriterLRUMultiplierX = 20
)

// FPIBytes is a full-page image in the WAL: the 8 KiB block (a full heap
// page has no hole between pd_lower and pd_upper to leave out) and its
// block reference header (XLogRecordBlockHeader, XLogRecordBlockImageHeader:
// 20 bytes; src/include/access/xlogrecord.h).
const FPIBytes = 8192 + 20

// PostgreSQL's block and WAL geometry: BLCKSZ and XLOG_BLCKSZ 8 KiB;
// WALSegmentPages is a 64 MiB segment (initdb --wal-segsize=64, which the
// seed's benchmark harness passes; see docs/FIDELITY.md).
const (
	BlockPages      = 2
	WALSegmentPages = 64 << 20 / mm.PAGE_SIZE
	// RegionBlocks is how many 8 KiB buffers one PTE page maps (2 MiB).
	RegionBlocks = 256
)

// PgBench is the server and its sessions' shared state. Fill it, then
// create one task per session running Session().
type PgBench struct {
	M   *mm.Machine
	Rng *sim.Rand
	// TxnCPU is the CPU time of one transaction.
	TxnCPU sim.Time
	// WALRecordBytes is the WAL a transaction's records take, full-page
	// images aside.
	WALRecordBytes uint64
	// MaxWritePages bounds one WAL pwrite, in 4 KiB pages.
	MaxWritePages uint64
	// Data are the relation's files (1 GiB segments, as md.c splits a
	// relation); AccountBlocks its 8 KiB blocks; SharedBlocks the
	// buffers of shared_buffers.
	Data          []*mm.File
	AccountBlocks uint64
	SharedBlocks  uint64
	// History is pgbench_history, which grows by one row a transaction
	// (HistoryRowsPerBlock a block); nil leaves it out.
	History *mm.File
	// TouchesPerTxn is the shared buffers a transaction touches;
	// PageTables owns the sessions' PTE pages.
	TouchesPerTxn int
	PageTables    *mm.Owner
	// FPIBlocks is the number of blocks whose first change after a
	// checkpoint logs a full-page image. An update changes a random one
	// of them: the accounts table, or a model of it compressed in time
	// (Checkpoint).
	FPIBlocks uint64

	// insertLSN is the end of the WAL inserted, flushLSN of the WAL
	// flushed (bytes); flushLSN <= insertLSN.
	insertLSN, flushLSN uint64
	// flushing is set while a session holds WALWriteLock; waiters sleep
	// until it is released.
	flushing bool
	waiters  []*sim.Task
	// segs are the WAL segments written so far.
	segs []*mm.File
	// changed has a bit per block of the FPI table changed since the
	// checkpoint began (the WAL has its image); see FPIBlocks.
	changed []uint64
	// historyRows are the rows inserted into pgbench_history; the
	// relation has historyRows/HistoryRowsPerBlock full blocks and one
	// being filled.
	historyRows uint64
	// ckptAccounts and ckptHistory are the accounts blocks (one per
	// full-page image) and the full history blocks dirtied since the
	// checkpointer's last round; ckptHistoryNext is the next history
	// block it writes.
	ckptAccounts, ckptHistory, ckptHistoryNext uint64
	// sessions counts the sessions made, ended those that finished
	// their transactions (SessionFor); the background writers end once
	// every session has.
	sessions, ended int
	// bufAllocs are the buffers the backends allocated since the
	// background writer's last round; cleanVictims the victims it
	// cleaned that no backend has taken yet.
	bufAllocs, cleanVictims uint64

	// Stats are what the run measured.
	Stats PgBenchStats
}

// PgBenchStats counts what the server did. Only the sessions write it.
type PgBenchStats struct {
	// Commits counts committed transactions, FPIs the full-page images
	// logged, Faults the PTE pages the sessions allocated.
	Commits, FPIs, Faults uint64
	// Flushes counts WAL flushes (fdatasync), Writes the WAL pwrite calls
	// and WriteTime their summed duration (the copy, the allocations and
	// the slow path, and any wait for the CPU in between).
	Flushes, Writes uint64
	WriteTime       sim.Time
	// DataWrites and DataReads count the backends' 8 KiB data-page
	// pwrites (evictions and relation extensions) and preads,
	// ShortWrites WAL writes that found no memory at all.
	DataWrites, DataReads, ShortWrites uint64
	// Extends counts pgbench_history's extensions (among DataWrites);
	// CheckpointWrites and BgWriterWrites the 8 KiB writes of the
	// checkpointer and the background writer; CleanTaken the
	// evictions that found a victim the background writer had cleaned.
	Extends, CheckpointWrites, BgWriterWrites, CleanTaken uint64
	// WALBytes is the WAL flushed.
	WALBytes uint64
}

// NewPgBench makes the server's shared state for accountBlocks blocks of
// pgbench_accounts, with as many FPI blocks and a checkpoint beginning.
func NewPgBench(m *mm.Machine, rng *sim.Rand, accountBlocks uint64) *PgBench {
	b := &PgBench{M: m, Rng: rng, AccountBlocks: accountBlocks, FPIBlocks: accountBlocks}
	b.Checkpoint()
	return b
}

// Checkpoint begins a checkpoint (its redo pointer is the current insert
// position): from now on the first change of each of the FPIBlocks blocks
// logs a full-page image again. A scenario that measures a window shorter
// than checkpoint_timeout can let the window stand for a whole checkpoint
// cycle by calling Checkpoint when it begins with FPIBlocks set to the
// accounts blocks times window / checkpoint_timeout: updates spread
// uniformly over the table then find unchanged blocks at the rate they
// would through the cycle.
func (b *PgBench) Checkpoint() {
	n := (max(b.FPIBlocks, 1) + 63) / 64
	if uint64(cap(b.changed)) >= n {
		b.changed = b.changed[:n]
		clear(b.changed)
	} else {
		b.changed = make([]uint64, n)
	}
}

// Session returns the program of one pgbench client's backend, whose page
// tables already map each 2 MiB region of shared_buffers with probability
// mappedPer1000/1000 (drawn from the workload's stream).
func (b *PgBench) Session(mappedPer1000 uint64) sim.Program {
	p, _ := b.SessionFor(mappedPer1000, 0)
	return p
}

// SessionFor is Session for a client that ends after txns commits (0:
// never); Progress counts its commits in Ops.
func (b *PgBench) SessionFor(mappedPer1000, txns uint64) (sim.Program, *Progress) {
	regions := b.regions()
	b.sessions++
	s := &pgSession{b: b, mapped: make([]uint64, (regions+63)/64), limit: txns}
	for r := uint64(0); r < regions; r++ {
		if b.Rng.Uint64n(1000) < mappedPer1000 {
			s.mapped[r/64] |= 1 << (r % 64)
		}
	}
	return s, &s.prog
}

func (b *PgBench) regions() uint64 { return (b.SharedBlocks + RegionBlocks - 1) / RegionBlocks }

// Mapped returns the 2 MiB regions of shared_buffers that session p's page
// tables map (p must come from Session).
func Mapped(p sim.Program) uint64 {
	s, ok := p.(*pgSession)
	if !ok {
		return 0
	}
	var n uint64
	for _, w := range s.mapped {
		n += uint64(bits.OnesCount64(w))
	}
	return n
}

// segment returns the WAL segment holding byte lsn, created on first use.
func (b *PgBench) segment(lsn uint64) *mm.File {
	i := lsn / (WALSegmentPages * mm.PAGE_SIZE)
	for uint64(len(b.segs)) <= i {
		b.segs = append(b.segs, b.M.NewFile("pg_wal", nil))
	}
	return b.segs[i]
}

// Flushing reports whether a WAL flush is under way (WALWriteLock held).
func (b *PgBench) Flushing() bool { return b.flushing }

// dataBlock returns the file and page index of accounts block blk.
func (b *PgBench) dataBlock(blk uint64) (*mm.File, uint64) {
	const segBlocks = 1 << 30 / (BlockPages * mm.PAGE_SIZE)
	i := blk / segBlocks
	if len(b.Data) == 0 {
		return nil, 0
	}
	f := b.Data[min(i, uint64(len(b.Data)-1))]
	return f, (blk % segBlocks) * BlockPages
}

type pgState uint8

const (
	pgRun     pgState = iota // run a transaction's statements
	pgFault                  // map the shared buffers it touches
	pgEvict                  // write the evicted buffer's block
	pgRead                   // read the block it needs
	pgInsert                 // insert its WAL
	pgExtend                 // extend pgbench_history by a zeroed block
	pgCommit                 // XLogFlush up to the session's record
	pgWrite                  // lead a flush: the pwrites and fdatasync
	pgFlushed                // fdatasync returned: publish, wake waiters
)

// pgSession is one client's backend. Each state that allocates may stop
// at a cond_resched() in the slow path and is entered again to finish.
type pgSession struct {
	b     *PgBench
	state pgState
	// mapped has a bit per 2 MiB region of shared_buffers that the
	// backend's page tables map; touch lists the regions the current
	// transaction touches, touched how many of them it has mapped.
	mapped  []uint64
	touch   [4]uint64
	touched int
	// blk is the accounts block the transaction updates; miss says it
	// was not in shared_buffers; evBlk the victim buffer's block; done
	// the pages of the current data read or write done.
	blk, evBlk uint64
	miss       bool
	done       uint64
	// lsn is the end of the session's commit record.
	lsn uint64
	// prog counts commits; limit ends the session after that many (0:
	// never).
	prog  Progress
	limit uint64
	// The flush this session leads: pages [wrPage, wrEnd) of the WAL
	// are left to write, up to target bytes; the current pwrite began
	// at wrStart and has wrDone of its wrCall pages done.
	target         uint64
	wrPage, wrEnd  uint64
	wrStart        sim.Time
	inWrite        bool
	wrCall, wrDone uint64
}

func (s *pgSession) Step(w *sim.World, t *sim.Task) sim.Time {
	b, m := s.b, s.b.M
	s.prog.begin(t)
	for {
		switch s.state {
		case pgRun:
			t.Charge(b.TxnCPU)
			n := min(b.TouchesPerTxn, len(s.touch))
			for i := 0; i < n; i++ {
				s.touch[i] = b.Rng.Uint64n(max(b.regions(), 1))
			}
			s.touched = 0
			s.blk = b.Rng.Uint64n(max(b.AccountBlocks, 1))
			s.miss = b.AccountBlocks > b.SharedBlocks && b.Rng.Uint64n(b.AccountBlocks) >= b.SharedBlocks
			if s.miss {
				s.evBlk = b.Rng.Uint64n(b.AccountBlocks)
			}
			s.state = pgFault
		case pgFault:
			for s.touched < min(b.TouchesPerTxn, len(s.touch)) {
				r := s.touch[s.touched]
				if s.mapped[r/64]&(1<<(r%64)) == 0 {
					// The first touch of the region faults in a
					// PTE page (__pte_alloc -> pte_alloc_one).
					if m.AllocOwned(t, b.PageTables, PgtableGFP, 0, -1, 0) == mm.NilPFN {
						if m.AllocPending(t) {
							return sim.Resched
						}
						return t.Now + sim.Millisecond // out of memory: fault again later
					}
					t.Charge(m.Cost.AnonFault + m.Cost.ClearPage4K)
					s.mapped[r/64] |= 1 << (r % 64)
					b.Stats.Faults++
				}
				s.touched++
			}
			s.done = 0
			s.state = pgInsert
			if s.miss {
				b.bufAllocs++
				s.state = pgRead
				if b.cleanVictims > 0 {
					// The background writer cleaned a victim.
					b.cleanVictims--
					b.Stats.CleanTaken++
				} else {
					s.state = pgEvict
					t.Charge(SyscallCost)
				}
			}
		case pgEvict:
			f, idx := b.dataBlock(s.evBlk)
			s.done += m.IomapFileBufferedWrite(t, f, idx+s.done, BlockPages-s.done, XFSDataGFP)
			if m.AllocPending(t) {
				return sim.Resched
			}
			b.Stats.DataWrites++
			s.done = 0
			s.state = pgRead
		case pgRead:
			if s.done == 0 {
				t.Charge(SyscallCost)
			}
			f, idx := b.dataBlock(s.blk)
			got, _ := m.FileRead(t, f, idx+s.done, BlockPages-s.done, XFSDataGFP)
			s.done += got
			if m.AllocPending(t) {
				return sim.Resched
			}
			b.Stats.DataReads++
			s.state = pgInsert
		case pgInsert:
			wal := b.WALRecordBytes
			if i := b.Rng.Uint64n(max(b.FPIBlocks, 1)); b.changed[i/64]&(1<<(i%64)) == 0 {
				b.changed[i/64] |= 1 << (i % 64)
				wal += FPIBytes
				b.Stats.FPIs++
				b.ckptAccounts++
			}
			b.insertLSN += wal
			s.lsn = b.insertLSN
			s.state = pgCommit
			if b.History != nil {
				// INSERT INTO pgbench_history: the row that does
				// not fit the last block extends the relation.
				if b.historyRows%HistoryRowsPerBlock == 0 {
					s.evBlk = b.historyRows / HistoryRowsPerBlock
					s.done = 0
					s.state = pgExtend
					t.Charge(SyscallCost)
					if b.historyRows > 0 {
						b.ckptHistory++
					}
				}
				b.historyRows++
			}
		case pgExtend:
			idx := s.evBlk * BlockPages
			s.done += m.IomapFileBufferedWrite(t, b.History, idx+s.done, BlockPages-s.done, XFSDataGFP)
			if m.AllocPending(t) {
				return sim.Resched
			}
			if s.done < BlockPages {
				return t.Now + sim.Millisecond // no memory at all: try again
			}
			b.Stats.DataWrites++
			b.Stats.Extends++
			s.state = pgCommit
		case pgCommit:
			if b.flushLSN >= s.lsn {
				b.Stats.Commits++
				s.state = pgRun
				if s.prog.Ops++; s.limit > 0 && s.prog.Ops >= s.limit {
					b.ended++
					return s.prog.finish(t)
				}
				continue
			}
			if b.flushing {
				b.waiters = append(b.waiters, t)
				return sim.Never
			}
			// Take WALWriteLock and write everything inserted.
			b.flushing = true
			s.target = b.insertLSN
			s.wrPage = b.flushLSN / mm.PAGE_SIZE &^ (BlockPages - 1)
			s.wrEnd = (s.target + BlockPages*mm.PAGE_SIZE - 1) / (BlockPages * mm.PAGE_SIZE) * BlockPages
			s.state = pgWrite
		case pgWrite:
			if !s.write(t) {
				return sim.Resched
			}
			s.state = pgFlushed
			// fdatasync slept until the device completed: publish
			// the flush when the task runs again, at that time.
			return t.Now
		case pgFlushed:
			b.Stats.WALBytes += s.target - b.flushLSN
			b.flushLSN = s.target
			b.flushing = false
			b.Stats.Flushes++
			for _, wt := range b.waiters {
				w.Wake(wt, t.Now)
			}
			b.waiters = b.waiters[:0]
			s.state = pgCommit
		}
	}
}

// bgWriter is the checkpointer or the background writer: rounds of 8 KiB
// data-block writes with a sleep between them.
type bgWriter struct {
	b    *PgBench
	ckpt bool
	// left are the writes of the current round still to do; hist the
	// checkpointer's history blocks among them (written first); done
	// the pages of the current block written.
	left, hist, done uint64
	// blk is the block being written (history if inHist).
	blk    uint64
	inHist bool
	picked bool
	// prog counts the blocks written in Ops.
	prog Progress
}

// Checkpointer returns the checkpointer's program (see the essay).
func (b *PgBench) Checkpointer() sim.Program { return &bgWriter{b: b, ckpt: true} }

// BgWriter returns the background writer's program (see the essay).
func (b *PgBench) BgWriter() sim.Program { return &bgWriter{b: b} }

// WriterProgress returns the progress of a program from Checkpointer or
// BgWriter (Ops: the blocks it wrote), nil for another program.
func WriterProgress(p sim.Program) *Progress {
	if g, ok := p.(*bgWriter); ok {
		return &g.prog
	}
	return nil
}

func (g *bgWriter) Step(w *sim.World, t *sim.Task) sim.Time {
	b, m := g.b, g.b.M
	g.prog.begin(t)
	for {
		if g.left == 0 {
			if b.sessions > 0 && b.ended == b.sessions {
				// The server shuts down with its last client.
				return g.prog.finish(t)
			}
			// A round begins: take what is due.
			if g.ckpt {
				g.hist = b.ckptHistory
				g.left = b.ckptAccounts + b.ckptHistory
				b.ckptAccounts, b.ckptHistory = 0, 0
			} else {
				g.left = min(b.bufAllocs*BgWriterLRUMultiplierX/10, BgWriterLRUMaxPages)
				b.bufAllocs = 0
			}
			if g.left == 0 {
				if g.ckpt {
					return t.Now + CheckpointerDelay
				}
				return t.Now + BgWriterDelay
			}
		}
		if !g.picked {
			g.picked, g.done = true, 0
			g.inHist = g.hist > 0 && b.History != nil
			if g.inHist {
				g.blk = b.ckptHistoryNext
				b.ckptHistoryNext++
				g.hist--
			} else {
				g.blk = b.Rng.Uint64n(max(b.AccountBlocks, 1))
			}
			t.Charge(SyscallCost)
		}
		f, idx := b.dataBlock(g.blk)
		if g.inHist {
			f, idx = b.History, g.blk*BlockPages
		}
		if f == nil {
			g.picked, g.left = false, g.left-1
			continue
		}
		g.done += m.IomapFileBufferedWrite(t, f, idx+g.done, BlockPages-g.done, XFSDataGFP)
		if m.AllocPending(t) {
			return sim.Resched
		}
		if g.done < BlockPages {
			return t.Now + sim.Millisecond // no memory at all: try again
		}
		g.picked = false
		g.left--
		g.prog.Ops++
		if g.ckpt {
			b.Stats.CheckpointWrites++
		} else {
			b.Stats.BgWriterWrites++
			b.cleanVictims++
		}
		if g.left == 0 {
			if g.ckpt {
				return t.Now + CheckpointerDelay
			}
			return t.Now + BgWriterDelay
		}
	}
}

// write does the flush's pwrites and the final fdatasync; false means the
// step must end (an allocation stopped at a cond_resched(), or a write
// found no memory) and write is called again.
func (s *pgSession) write(t *sim.Task) bool {
	b, m := s.b, s.b.M
	for s.wrPage < s.wrEnd {
		seg := b.segment(s.wrPage * mm.PAGE_SIZE)
		segEnd := (s.wrPage/WALSegmentPages + 1) * WALSegmentPages
		if !s.inWrite {
			s.inWrite = true
			s.wrStart = t.Now
			s.wrCall = min(s.wrEnd, segEnd, s.wrPage+max(b.MaxWritePages, BlockPages)) - s.wrPage
			s.wrDone = 0
			t.Charge(SyscallCost)
		}
		off := s.wrPage % WALSegmentPages
		s.wrDone += m.IomapFileBufferedWrite(t, seg, off+s.wrDone, s.wrCall-s.wrDone, XFSDataGFP)
		if m.AllocPending(t) {
			return false
		}
		if s.wrDone < s.wrCall {
			// Not even an order-0 page: the write is short and
			// PostgreSQL writes the rest (pg_pwrite's loop), in the
			// next step.
			b.Stats.ShortWrites++
			return false
		}
		s.inWrite = false
		b.Stats.Writes++
		b.Stats.WriteTime += t.Now - s.wrStart
		s.wrPage += s.wrCall
		if s.wrPage == segEnd {
			// A finished segment is synced at once (XLogWrite).
			m.FileSync(t, seg)
		}
	}
	if s.wrEnd%WALSegmentPages != 0 {
		m.FileSync(t, b.segment((s.wrEnd-1)*mm.PAGE_SIZE))
	}
	return true
}

// OpenPgBench makes a server whose relation files exist and are not
// cached: accountBlocks of pgbench_accounts in 1 GiB segment files and an
// empty pgbench_history, with sharedBlocks buffers in shared_buffers
// (which it does not allocate), its page tables owned by a new owner, and
// a checkpoint just begun (FPIBlocks is the accounts table).
func OpenPgBench(m *mm.Machine, rng *sim.Rand, accountBlocks, sharedBlocks uint64) *PgBench {
	b := NewPgBench(m, rng, max(accountBlocks, 1))
	b.SharedBlocks = sharedBlocks
	b.PageTables = m.NewOwner(mm.KindPageTable, "pgbench-pagetables", nil)
	b.History = m.NewFile("pgbench_history", nil)
	const segPages = 1 << 30 / mm.PAGE_SIZE
	pages := b.AccountBlocks * BlockPages
	for off := uint64(0); off < pages; off += segPages {
		f := m.NewFile("pgbench_accounts", nil)
		f.Size = min(segPages, pages-off)
		b.Data = append(b.Data, f)
	}
	return b
}

// PgBenchMemory describes the memory a pgbench server holds when the
// measured window begins.
type PgBenchMemory struct {
	// SharedBuffers is shared_buffers, in 4 KiB pages.
	SharedBuffers uint64
	// AccountBlocks is pgbench_accounts' size in 8 KiB blocks.
	AccountBlocks uint64
	// Sessions is the number of backends; MappedPer1000 how much of
	// shared_buffers, in thousandths, each one's page tables map.
	Sessions      int
	MappedPer1000 uint64
	// ScatterPer1000 is how many page-cache pages in 1000 give their
	// place to a PTE page (Fragmented only).
	ScatterPer1000 uint64
	Fragmented     bool
}

// PageTablePages returns the PTE pages the sessions' page tables hold at
// the start.
func (l PgBenchMemory) PageTablePages() uint64 {
	regions := (l.SharedBuffers/BlockPages + RegionBlocks - 1) / RegionBlocks
	return uint64(l.Sessions) * regions * l.MappedPer1000 / 1000
}

// SetupPgBench builds the server's memory on a freshly booted machine, with
// t's clock (t must be on a CPU of the node whose memory it fills):
//
//  1. the page tables that stay put: a pageblock at a time, so they claim
//     whole free blocks as MIGRATE_UNMOVABLE, as page tables allocated
//     while memory was free do (CHOICE: 512 at once for speed; order-0
//     allocations from a free block would land in the same block);
//  2. shared_buffers: movable pages that nothing here migrates or
//     reclaims (shmem with no swap; direct compaction under the XFS
//     mask's GFP_NOFS may not migrate pages with a mapping), allocated a
//     pageblock at a time;
//  3. the relation's page cache: pgbench_accounts read through the page
//     cache until free memory is down to the low watermark;
//  4. fragmented: page tables allocated into the page cache's holes, one
//     page in ScatterPer1000/1000 of the cache, chosen at random, dropped
//     and replaced by a PTE page, as the backends' page tables grew while
//     reclaim freed page-cache pages in no order of address (the steal
//     path takes a single free page and leaves its movable pageblock as
//     it is). Unfragmented, every page table is in step 1.
//
// It returns the server with its relation files, and how many page tables
// it made.
func SetupPgBench(m *mm.Machine, t *sim.Task, rng *sim.Rand, l PgBenchMemory) (*PgBench, uint64, error) {
	b := NewPgBench(m, rng, l.AccountBlocks)
	b.SharedBlocks = l.SharedBuffers / BlockPages
	b.History = m.NewFile("pgbench_history", nil)
	b.PageTables = m.NewOwner(mm.KindPageTable, "pgbench-pagetables", nil)
	total := l.PageTablePages()
	var z *mm.Zone
	for _, zz := range m.Nodes[m.CPUNode(t.CPU)].Zones {
		if zz.Managed() {
			z = zz
		}
	}
	// The page cache that will be there, to size the scattered part.
	var scattered uint64
	if l.Fragmented {
		free := m.NrFreePages()
		used := total + l.SharedBuffers + z.WmarkPages(mm.WMARK_LOW)
		if free > used {
			scattered = min(total, (free-used)*l.ScatterPer1000/1000)
		}
	}
	var made uint64
	alloc := func(order mm.Order) bool {
		if m.AllocOwned(t, b.PageTables, PgtableGFP, order, -1, 0) == mm.NilPFN {
			return false
		}
		made += order.Pages()
		return true
	}
	for dense := total - scattered; made+mm.PageblockNrPages <= dense; {
		if !alloc(mm.PageblockOrder) {
			return nil, made, errNoMemory("page tables")
		}
	}
	for dense := total - scattered; made < dense; {
		if !alloc(0) {
			return nil, made, errNoMemory("page tables")
		}
	}
	for n := uint64(0); n < l.SharedBuffers; n += mm.PageblockNrPages {
		if m.AllocPagesLocal(t, mm.GFP_HIGHUSER_MOVABLE, mm.PageblockOrder) == mm.NilPFN {
			return nil, made, errNoMemory("shared_buffers")
		}
	}
	// pgbench_accounts in 1 GiB segment files, read until memory is full.
	const segPages = 1 << 30 / mm.PAGE_SIZE
	pages := l.AccountBlocks * BlockPages
	room := func() uint64 {
		if f, low := m.NrFreePages(), z.WmarkPages(mm.WMARK_LOW); f > low {
			return f - low
		}
		return 0
	}
	var cache []*mm.File
	for off := uint64(0); off < pages; off += segPages {
		f := m.NewFile("pgbench_accounts", nil)
		f.Size = min(segPages, pages-off)
		b.Data = append(b.Data, f)
		for i := uint64(0); i < f.Size && room() > 0; {
			got, _ := m.FileRead(t, f, i, min(4096, f.Size-i, room()), XFSDataGFP)
			if got == 0 {
				break
			}
			i += got
		}
		if f.Resident() > 0 {
			cache = append(cache, f)
		}
	}
	// The rest of the room: the database's other files (the accounts
	// index, pgbench_history, WAL segments waiting to be recycled).
	for room() > 0 {
		f := m.NewFile("pgdata", nil)
		f.Size = segPages
		for i := uint64(0); i < f.Size && room() > 0; {
			got, _ := m.FileRead(t, f, i, min(4096, f.Size-i, room()), XFSDataGFP)
			if got == 0 {
				break
			}
			i += got
		}
		if f.Resident() == 0 {
			break
		}
		cache = append(cache, f)
	}
	if scattered > 0 {
		var cached uint64
		for _, f := range cache {
			cached += f.Resident()
		}
		for _, f := range cache {
			for i := uint64(0); i < f.Size && made < total; i++ {
				if rng.Uint64n(max(cached, 1)) >= scattered {
					continue
				}
				if m.FileTruncateRange(t, f, i, 1) > 0 && !alloc(0) {
					return nil, made, errNoMemory("page tables")
				}
			}
		}
	}
	return b, made, nil
}

type errNoMemory string

func (e errNoMemory) Error() string {
	return "the machine is too small for the server's " + string(e)
}
