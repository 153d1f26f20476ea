package workload

import (
	"testing"

	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// buildMachine boots a 256 MiB machine with two CPUs and mounts a file
// system of kind for cgroup "build".
func buildMachine(t *testing.T, kind FSKind) (*mm.Machine, *BuildFS) {
	t.Helper()
	cfg, err := mm.SimpleLayout(65536, 1, 2)
	require.NoError(t, err)
	m, err := mm.NewMachine(cfg)
	require.NoError(t, err)
	fs := NewBuildFS(m, kind, m.NewMemcg("build"), 1, 0, 2*sim.Millisecond)
	return m, fs
}

func TestBuildWorkersKeepTheirFileSystemsBooks(t *testing.T) {
	for _, kind := range []FSKind{FSBtrfs, FSTmpfs} {
		t.Run(kind.String()+": a worker creates its files, unlinks one in five and its objects add up", func(t *testing.T) {
			m, fs := buildMachine(t, kind)
			w := &BuildWorker{FS: fs, Rng: m.World.Stream("workload/build#0"), Files: 600}
			tk := m.World.NewTask("build", 0, w, 0)
			runToEnd(t, m, tk, 60*sim.Second)
			assert.True(t, w.Done)
			assert.Equal(t, uint64(600), fs.Created)
			assert.InDelta(t, 120, float64(fs.Unlinked), 40, "one unlink in five")
			assert.Equal(t, fs.Created-fs.Unlinked, fs.Files())
			assert.Equal(t, fs.Files(), fs.dentries.Objects, "one dentry a live file (no reclaim ran)")
			assert.Equal(t, fs.Files(), fs.inodes.Objects, "one inode a live file")
			d, i := fs.Slab()
			assert.Greater(t, d, uint64(0))
			assert.Greater(t, i, uint64(0))
			if kind == FSBtrfs {
				assert.GreaterOrEqual(t, fs.Leaves, fs.Created*btrfsItemsPerFile/btrfsNodesize, "a leaf per 32 files")
				assert.Greater(t, fs.Commits, uint64(0), "the transaction thread committed")
				assert.Greater(t, fs.COWs, uint64(0), "leaves were copied on write")
				assert.Greater(t, m.GlobalNodeState(mm.NR_FILE_PAGES), int64(0))
			} else {
				assert.Zero(t, fs.MetadataPages())
				assert.Zero(t, m.GlobalNodeState(mm.NR_FILE_PAGES), "empty files")
			}
		})
	}
}

// The superblock shrinker frees unused dentries, then the inodes they
// leave unused, and gives back the slabs they emptied; a caller without
// __GFP_FS gets SHRINK_STOP.
func TestTheSuperblockShrinkerFreesDentriesAndInodesOnlyWithGFPFS(t *testing.T) {
	m, fs := buildMachine(t, FSBtrfs)
	w := &BuildWorker{FS: fs, Rng: m.World.Stream("workload/build#0"), Files: 2000}
	tk := m.World.NewTask("build", 0, w, 0)
	runToEnd(t, m, tk, 120*sim.Second)
	sc := &mm.ShrinkControl{GFP: mm.GFP_NOFS, Memcg: fs.Cg, NrToScan: 128}
	freed, stop := fs.Shrinker.Ops.ScanObjects(m.World.Tasks[0], sc)
	assert.True(t, stop, "GFP_NOFS: SHRINK_STOP")
	assert.Zero(t, freed)
	assert.Equal(t, fs.Files(), fs.Shrinker.Ops.CountObjects(sc))
	assert.Zero(t, fs.Shrinker.Ops.CountObjects(&mm.ShrinkControl{Memcg: m.RootMemcg()}), "the objects are the build cgroup's")
	dBefore, iBefore := fs.Slab()
	kt := m.World.NewTask("kswapd-like", 1, nil, sim.Never)
	for i := 0; i < 40; i++ {
		sc = &mm.ShrinkControl{GFP: mm.GFP_KERNEL, Memcg: fs.Cg, NrToScan: 128}
		fs.Shrinker.Ops.ScanObjects(kt, sc)
	}
	assert.Greater(t, fs.ShrunkDentries, uint64(1000))
	assert.Greater(t, fs.ShrunkInodes, uint64(0))
	d, i := fs.Slab()
	assert.Less(t, d, dBefore, "emptied dentry slabs went back")
	assert.LessOrEqual(t, i, iBefore)
	assert.Equal(t, fs.Files()-fs.ShrunkDentries, fs.dentries.Objects)
	require.NoError(t, m.CheckInvariants())
}

// A file a worker has open for a read keeps its dentry, its inode and its
// page cache however hard the shrinker scans (dentry_lru_isolate and
// inode_lru_isolate take in-use objects off the lists); closed, it is
// back on the dentry list and the shrinker may free it.
func TestTheSuperblockShrinkerLeavesAnOpenFileAlone(t *testing.T) {
	m, fs := buildMachine(t, FSBtrfs)
	w := &BuildWorker{FS: fs, Rng: m.World.Stream("workload/build#0"), Files: 500}
	tk := m.World.NewTask("build", 0, w, 0)
	runToEnd(t, m, tk, 60*sim.Second)
	id := w.mine[0]
	f := &fs.files[id]
	require.True(t, f.live)
	require.GreaterOrEqual(t, f.dentry, int32(0))
	require.GreaterOrEqual(t, f.inode, int32(0))
	f.open++ // what a read's lookup does
	kt := m.World.NewTask("kswapd-like", 1, nil, sim.Never)
	shrink := func() {
		for i := 0; i < 40; i++ {
			fs.Shrinker.Ops.ScanObjects(kt, &mm.ShrinkControl{GFP: mm.GFP_KERNEL, Memcg: fs.Cg, NrToScan: 128})
		}
	}
	shrink()
	require.Greater(t, fs.ShrunkDentries, uint64(300), "the other files' dentries went")
	f = &fs.files[id]
	assert.GreaterOrEqual(t, f.dentry, int32(0), "the open file's dentry stays")
	assert.GreaterOrEqual(t, f.inode, int32(0), "and its inode")
	assert.False(t, f.onDLRU, "in use: off the dentry list")
	fs.put(id)
	f = &fs.files[id]
	assert.True(t, f.onDLRU, "closed: back on the list")
	shrink()
	assert.Less(t, fs.files[id].dentry, int32(0), "then the shrinker frees it")
	require.NoError(t, m.CheckInvariants())
}

// A btrfs inode in memory comes with a btrfs_delayed_node and an extent
// map, both from caches created without SLAB_RECLAIM_ACCOUNT or
// SLAB_ACCOUNT (unmovable slab, the root cgroup's), and a file of two
// pages or more with the xarray node its page cache needs
// (radix_tree_node: reclaimable, the file's cgroup); an unlink frees
// them with the inode.
func TestABtrfsInodeComesWithItsDelayedNodeExtentMapAndXarrayNode(t *testing.T) {
	m, fs := buildMachine(t, FSBtrfs)
	w := &BuildWorker{FS: fs, Rng: m.World.Stream("workload/build#0"), Files: 600}
	tk := m.World.NewTask("build", 0, w, 0)
	runToEnd(t, m, tk, 60*sim.Second)
	require.True(t, w.Done)
	require.Greater(t, fs.Unlinked, uint64(0))
	var multi uint64
	for _, f := range fs.files {
		if f.live && f.pages >= 2 {
			multi++
		}
	}
	require.Greater(t, multi, fs.Files()/2, "most files have 2-16 pages")
	require.Less(t, multi, fs.Files(), "and some one")
	assert.Equal(t, fs.Files(), fs.delayedNodes.Objects, "one delayed node an inode (no reclaim ran)")
	assert.Equal(t, fs.Files(), fs.extentMaps.Objects, "one extent map an inode")
	assert.Equal(t, multi, fs.xaNodes.Objects, "one xarray node a file of two pages or more")
	assert.False(t, fs.delayedNodes.c.Reclaimable)
	assert.False(t, fs.extentMaps.c.Reclaimable)
	assert.True(t, fs.xaNodes.c.Reclaimable)
	assert.Greater(t, fs.delayedNodes.c.Pages+fs.extentMaps.c.Pages, uint64(0))
	require.NoError(t, m.CheckInvariants())
}

// Each fdatasync commits the log on its own (btrfs_sync_log), and the
// leaves the last log commit wrote carry BTRFS_HEADER_FLAG_WRITTEN, so
// the next fdatasync's changes copy the log tree's leaf and the log root
// tree's leaf to new blocks (should_cow_block): four new pages of each a
// call, the old ones left cached and clean until the transaction's
// commit drops the log.
func TestEveryFdatasyncCopiesTheLogLeavesTheLastOneWrote(t *testing.T) {
	cfg, err := mm.SimpleLayout(65536, 1, 2)
	require.NoError(t, err)
	m, err := mm.NewMachine(cfg)
	require.NoError(t, err)
	fs := NewBuildFS(m, FSBtrfs, m.NewMemcg("build"), 1, 0, 0)
	w := &BuildWorker{FS: fs, Rng: m.World.Stream("workload/build#0"), Files: 50}
	tk := m.World.NewTask("build", 0, w, 0)
	runToEnd(t, m, tk, 10*sim.Second)
	require.True(t, w.Done)
	require.Zero(t, fs.Commits, "no transaction commit within the run")
	synced := uint64(0)
	for _, id := range w.mine {
		if fs.files[id].live {
			synced++
		}
	}
	synced += fs.Unlinked // unlinked after their fdatasync
	require.Equal(t, uint64(50), synced)
	assert.Equal(t, 50*btrfsLeafPages, int(fs.logTree.Resident()), "a log leaf a call")
	assert.Equal(t, 50*btrfsLeafPages, int(fs.logRoot.Resident()), "a log root leaf a call")
	assert.Zero(t, m.FileFdatawrite(tk, fs.logTree)+m.FileFdatawrite(tk, fs.logRoot), "each call wrote its leaves")
	fs.commit(tk)
	assert.Zero(t, fs.logTree.Resident()+fs.logRoot.Resident(), "the commit frees the log")
	require.NoError(t, m.CheckInvariants())
}
