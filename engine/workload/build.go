package workload

// build.go is seed 002's build-like workload: workers that create small
// files, read earlier ones back, unlink one in five and fdatasync every 50
// creates, on a file system whose own memory makes the non-movable
// requests the seed is about.
//
// # What the file system allocates
//
// BuildFS models what a file system asks the page allocator for, not how it
// lays out its disk. For each file:
//
//   - a dentry (192 bytes, the dentry cache: SLAB_RECLAIM_ACCOUNT, fs/dcache.c
//     dcache_init) and an inode (btrfs_inode, about 1.2 KiB, reclaimable,
//     fs/btrfs/inode.c btrfs_init_cachep; tmpfs's shmem_inode_cache, about
//     800 bytes, SLAB_PANIC|SLAB_ACCOUNT and so unmovable, mm/shmem.c
//     shmem_init_inodecache). Objects fill slabs of the order SLUB picks for
//     their size (mm.SlubOrder); a slab goes back to the page allocator when
//     its last object is freed (discard_slab), so unlinking one file in
//     five frees a slab page only now and then. The slab pages come through
//     allocate_slab with GFP_KERNEL (__d_alloc, shmem_alloc_inode,
//     btrfs_alloc_inode): __GFP_RECLAIMABLE for dentries and btrfs
//     inodes, unmovable for tmpfs inodes.
//   - on btrfs, metadata: the file's items (inode item, inode ref, the two
//     directory entries, its extent and checksum items; CHOICE: 512 bytes a
//     file) go into 16 KiB tree leaves (the default nodesize). A leaf is an
//     extent buffer, four pages of the btree inode's page cache allocated
//     GFP_NOFS|__GFP_NOFAIL (fs/btrfs/extent_io.c alloc_eb_folio_array ->
//     btrfs_alloc_page_array with nofail): unmovable page cache, on the LRU,
//     charged to the root cgroup (btrfs does not charge metadata to
//     cgroups), reclaimable once written back. Copy-on-write: the first
//     change to a leaf in a transaction writes it to a new block (four new
//     pages) and frees the old block when the transaction commits. The
//     btrfs-transaction thread commits every commit interval (30 s, the
//     commit= default): it writes the dirty metadata back and frees the
//     blocks replaced and the log tree. fdatasync logs the synced inode
//     in log-tree leaves (CHOICE: 300 bytes an inode; the leaves a round
//     of 50 fdatasyncs needs are allocated at its first) and commits the
//     log, each call on its own (btrfs_sync_file -> btrfs_sync_log,
//     fs/btrfs/tree-log.c): the log tree's leaves written and waited for,
//     then the log root tree's leaf (btrfs_write_marked_extents and
//     btrfs_wait_tree_log_extents on log_root_tree), then the primary
//     super block (write_all_supers(fs_info, 1): a 4 KiB page of the
//     block device's page cache, allocated GFP_NOFS by write_dev_supers
//     in fs/btrfs/disk-io.c, written with
//     REQ_PREFLUSH|REQ_FUA and waited for; the flush costs nothing on
//     the modelled drive, blk_mq.go). A leaf an earlier log commit
//     wrote has BTRFS_HEADER_FLAG_WRITTEN, so should_cow_block()
//     (fs/btrfs/ctree.c) copies it to a new block when the next
//     fdatasync changes it: each call writes its log leaves and the log
//     root tree's leaf to new blocks (four new pages each), and the old
//     ones stay in the page cache, clean, until reclaim takes them or
//     the transaction's commit frees the log. Simplified: concurrent
//     fdatasyncs of several workers do not share a log commit (btrfs
//     lets a task that finds a commit under way wait for it and join the
//     next: so pagesim writes, and copies, more often than the kernel
//     when the workers' syncs overlap); the log tree is one leaf deep
//     (no node above it to copy).
//     A leaf that reclaim evicted is read back (four pages, a read) when an
//     unlink or an uncached inode needs it.
//   - with a btrfs inode in memory (created, or read back by iget): its
//     btrfs_delayed_node (312 bytes, btrfs_get_or_create_delayed_node
//     the first time the inode item changes: the write, an unlink, a
//     read's atime) and its extent map (144 bytes, the write's ordered
//     extent or btrfs_get_extent on a read), from caches created with
//     no SLAB_RECLAIM_ACCOUNT (fs/btrfs/delayed-inode.c
//     btrfs_delayed_inode_init, fs/btrfs/extent_map.c extent_map_init):
//     unmovable slab, not charged to a cgroup (no SLAB_ACCOUNT or
//     __GFP_ACCOUNT; a btrfs machine's per-memcg slab counts show them
//     all in the root, lore message
//     20200204043541.GA12194@xps.dhcp.thefacebook.com); and, for a file
//     of two pages or more, the xarray node its page cache needs (584
//     bytes, radix_tree_node: SLAB_RECLAIM_ACCOUNT, lib/radix-tree.c
//     radix_tree_init; charged to the file's cgroup, the mapping's
//     xarray being XA_FLAGS_ACCOUNT; a one-page file's folio sits in
//     xa_head). They go when the inode goes (btrfs_destroy_inode,
//     truncate_inode_pages_final). Sizes: /proc/slabinfo on x86-64
//     (312, 144 and 584 bytes on 5.3, lore message
//     CAMnf+PjGq2qsZzg=+H5Z5kO+PSQbo=R0MHW5rv1CWrqoS=biqw@mail.gmail.com;
//     312 on a 2023 kernel, lore message
//     CAMj1M403Tqg+UKT82kt2=-adHagk1MfSNDN+vzt7_GXRJKf_-w@mail.gmail.com).
//     Simplified: the extent map shrinker (btrfs_free_extent_maps, from
//     super_cache_scan) and the shadow nodes' shrinker do not free them
//     apart from their inode; the struct extent_buffer of each cached
//     tree block (280 bytes, unmovable) is not modelled.
//   - data: 1-64 KiB of page cache per file on btrfs (the mapping's mask
//     without __GFP_FS, btrfs_alloc_write_mask), none on tmpfs (the seed's
//     "one million empty files").
//
// # Reclaim of the file system's caches
//
// Unused dentries and inodes are on per-cgroup LRU lists, and the
// superblock shrinker (super_cache_count, super_cache_scan) frees them
// under reclaim, oldest first with a second chance for the ones used since
// (DCACHE_REFERENCED, I_REFERENCED). It needs __GFP_FS: the workers'
// direct reclaim for a dentry or an inode (GFP_KERNEL) runs it, their
// GFP_NOFS reclaim (data, metadata, btrfs's own objects) defers its share
// to kswapd. A freed dentry leaves its
// inode unused; an inode with clean page cache has it invalidated first
// (invalidate_mapping_pages in inode_lru_isolate) and one with dirty pages
// stays. tmpfs dentries and inodes are pinned in the dcache and have no
// shrinker. A file read back whose dentry or inode was freed allocates
// them again (and reads its leaf if that was evicted).
//
// # Costs
//
// The CPU time of each call is the engine's (mm.CostTable BtrfsCreate,
// BtrfsUnlink, BtrfsIget, TmpfsCreate, TmpfsUnlink, VFSLookup,
// ShrinkObject), the copies and the I/O are the page cache's and the block
// device's.

import (
	"fmt"

	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/sim"
)

// FSKind is the file system the build workers use.
type FSKind uint8

const (
	FSBtrfs FSKind = iota
	FSTmpfs
)

var fsNames = [...]string{"btrfs", "tmpfs"}

func (k FSKind) String() string { return fsNames[k] }

// ParseFSKind reads "btrfs" or "tmpfs".
func ParseFSKind(s string) (FSKind, error) {
	for i, n := range fsNames {
		if s == n {
			return FSKind(i), nil
		}
	}
	return 0, fmt.Errorf("unknown file system %q (want btrfs or tmpfs)", s)
}

// File system geometry (CHOICES, see the file's comment).
const (
	dentrySize        = 192
	btrfsInodeSize    = 1200
	shmemInodeSize    = 800
	btrfsNodesize     = 16 << 10
	btrfsLeafPages    = btrfsNodesize / mm.PAGE_SIZE
	btrfsItemsPerFile = 512
	btrfsLogPerInode  = 300
	// btrfsDelayedNodeSize, btrfsExtentMapSize and xaNodeSize are the
	// object sizes /proc/slabinfo prints for btrfs_delayed_node,
	// btrfs_extent_map and radix_tree_node on x86-64 (5.3; see the
	// file's comment).
	btrfsDelayedNodeSize = 312
	btrfsExtentMapSize   = 144
	xaNodeSize           = 584
	// BtrfsCommitInterval is the btrfs-transaction thread's interval
	// (the commit= mount option's default, 30 s).
	BtrfsCommitInterval = 30 * sim.Second
)

// btrfsMetaGFP is alloc_eb_folio_array's mask: GFP_NOFS|__GFP_NOFAIL.
var btrfsMetaGFP = mm.MustParseGFP("GFP_NOFS|__GFP_NOFAIL")

// btrfsDataGFP is the mask a btrfs write allocates data page cache with:
// the mapping's mask with __GFP_FS cleared (btrfs_alloc_write_mask in
// fs/btrfs/inode.c); the page cache adds __GFP_WRITE (FGP_WRITE). A read
// allocates with the mapping's own mask, GFP_HIGHUSER_MOVABLE
// (readahead_gfp_mask), __GFP_FS included, so a reader's direct reclaim
// may run the superblock shrinker and a writer's may not.
var btrfsDataGFP = mm.MustParseGFP("GFP_NOFS|__GFP_HIGHMEM|__GFP_MOVABLE|__GFP_HARDWALL")

// btrfsReadGFP is the data mapping's mask (mapping_gfp_mask).
var btrfsReadGFP = mm.GFP_HIGHUSER_MOVABLE

// fsFile is one file of a BuildFS.
type fsFile struct {
	f *mm.File // data (btrfs); nil on tmpfs
	// leaf is the leaf holding the file's items (btrfs).
	leaf int32
	// dentry and inode are the objects' slab records, -1 when not cached.
	dentry, inode int32
	// dnode, emap and xnode are the records of the in-memory inode's
	// companions (btrfs): its btrfs_delayed_node, its extent map and
	// its page cache's xarray node; -1 when it has none.
	dnode, emap, xnode int32
	// pages is the file's size in pages (btrfs).
	pages uint64
	// LRU links (file IDs, -1 at the ends) and flags.
	dPrev, dNext, iPrev, iNext int32
	onDLRU, onILRU             bool
	dRef, iRef                 bool
	live                       bool
	// open counts the workers that have the file open (a read under
	// way): its dentry and inode are in use (d_lockref.count and
	// i_count above zero), so the shrinker takes them off its lists
	// instead of freeing them, and its page cache stays.
	open int32
}

// lruList is an intrusive list_lru of IDs (BuildFS's files, linked
// through fsFile; ObjectCycler's objects, through cycObj): head is the
// oldest, n the length.
type lruList struct {
	head, tail int32
	n          uint64
}

func newLRU() lruList { return lruList{head: -1, tail: -1} }

// fsLeaf is a btree leaf: the btree inode's page index of its current
// block, the bytes of items in it and the transaction that last wrote it.
type fsLeaf struct {
	index uint64
	used  uint32
	trans uint64
}

// BuildFS is the file system seed 002's build workers share.
type BuildFS struct {
	M    *mm.Machine
	Cg   *mm.Memcg
	Kind FSKind

	dentries, inodes *kmemCache
	// The btrfs inode's companions' caches: btrfs_delayed_node and
	// btrfs_extent_map (unmovable, not charged to a cgroup) and
	// radix_tree_node (reclaimable, charged to the file's cgroup).
	delayedNodes, extentMaps, xaNodes *kmemCache
	files                             []fsFile
	freeIDs                           []int32
	dLRU, iLRU                        lruList

	// btrfs metadata: the btree inode's and the log tree's page cache,
	// the leaves, the leaf new items go to, the next free block, the
	// blocks copy-on-write replaced in this transaction.
	btree, logTree *mm.File
	// logRoot is the log root tree's leaf, super the block device's page
	// holding the primary super block (btrfs_sync_log writes both).
	logRoot, super *mm.File
	leaves         []fsLeaf
	hot            int32
	nextBlock      uint64
	nextLog        uint64
	nextLogRoot    uint64
	cowFreed       []uint64
	trans          uint64

	// Counters: files created and unlinked, leaves added, blocks written
	// by copy-on-write, transactions committed, dentries and inodes the
	// shrinker freed, inodes and leaves read back.
	Created, Unlinked            uint64
	Leaves, COWs, Commits        uint64
	ShrunkDentries, ShrunkInodes uint64
	InodeReads, LeafReads        uint64
	// Shrinker is the superblock shrinker (btrfs only).
	Shrinker *mm.Shrinker
}

// NewBuildFS mounts a file system of kind for workers in cgroup cg (nil:
// the root) on machine m, and on btrfs starts its transaction thread on
// CPU cpu, first committing at start + interval.
func NewBuildFS(m *mm.Machine, kind FSKind, cg *mm.Memcg, cpu int, start, interval sim.Time) *BuildFS {
	if cg == nil {
		cg = m.RootMemcg()
	}
	cpus := len(m.World.CPUs)
	fs := &BuildFS{M: m, Cg: cg, Kind: kind, dLRU: newLRU(), iLRU: newLRU(), hot: -1}
	// The masks each object is allocated with: __d_alloc's and the
	// file systems' alloc_inode ops' GFP_KERNEL (fs/dcache.c,
	// mm/shmem.c shmem_alloc_inode, fs/btrfs/inode.c btrfs_alloc_inode:
	// btrfs allocates the inode before it starts the transaction,
	// btrfs_create_common), btrfs's own GFP_NOFS
	// (btrfs_get_or_create_delayed_node, alloc_extent_map), and the page
	// cache's xarray node with the write's mask, __filemap_add_folio's
	// gfp & GFP_RECLAIM_MASK from btrfs_alloc_write_mask.
	fs.dentries = kmemCacheCreate(m, "dentry", cg, dentrySize, true, cpus, mm.GFP_KERNEL)
	if kind == FSTmpfs {
		fs.inodes = kmemCacheCreate(m, "shmem_inode_cache", cg, shmemInodeSize, false, cpus, mm.GFP_KERNEL)
		return fs
	}
	fs.inodes = kmemCacheCreate(m, "btrfs_inode", cg, btrfsInodeSize, true, cpus, mm.GFP_KERNEL)
	fs.delayedNodes = kmemCacheCreate(m, "btrfs_delayed_node", m.RootMemcg(), btrfsDelayedNodeSize, false, cpus, mm.GFP_NOFS)
	fs.extentMaps = kmemCacheCreate(m, "btrfs_extent_map", m.RootMemcg(), btrfsExtentMapSize, false, cpus, mm.GFP_NOFS)
	fs.xaNodes = kmemCacheCreate(m, "radix_tree_node", cg, xaNodeSize, true, cpus, mm.GFP_NOFS)
	fs.btree = m.NewFile("btree_inode", nil)
	fs.logTree = m.NewFile("log_tree", nil)
	fs.logRoot = m.NewFile("log_root_tree", nil)
	fs.super = m.NewFile("bdev_super", nil)
	fs.trans = 1
	fs.Shrinker = &mm.Shrinker{Name: "super_cache", Seeks: mm.DEFAULT_SEEKS, MemcgAware: true,
		Ops: superCache{fs}}
	m.RegisterShrinker(fs.Shrinker)
	if interval <= 0 {
		interval = BtrfsCommitInterval
	}
	m.World.NewTask("btrfs-transaction", cpu, &btrfsTransaction{fs: fs, interval: interval}, start+interval)
	return fs
}

// TmpfsSlab is the slab, in bytes, that files created on tmpfs by workers
// on cpus CPUs hold once made: each file's dentry and shmem inode, as
// their shares of slabs of the order SLUB picks (mm.SlubOrder). The files
// a worker unlinks (one operation in five) free their objects, but a slab
// page goes back only when every object on it is free (discard_slab),
// which the workers' interleaved creates seldom leave, so every file made
// counts. tmpfs has no shrinker and nothing else reclaimable, so this is
// what the churn takes from the free memory for good.
func TmpfsSlab(files uint64, cpus int) uint64 {
	var perFile uint64
	for _, size := range []uint64{dentrySize, shmemInodeSize} {
		slab := uint64(mm.PAGE_SIZE) << mm.SlubOrder(size, cpus)
		perFile += slab / (slab / size)
	}
	return files * perFile
}

// Files returns the number of live files.
func (fs *BuildFS) Files() uint64 { return fs.Created - fs.Unlinked }

// MetadataPages returns the cached pages of the btree, the log tree, the
// log root tree and the super block (btrfs; 0 on tmpfs).
func (fs *BuildFS) MetadataPages() uint64 {
	if fs.btree == nil {
		return 0
	}
	return fs.btree.Resident() + fs.logTree.Resident() + fs.logRoot.Resident() + fs.super.Resident()
}

// Slab returns the pages of the dentry and inode caches.
func (fs *BuildFS) Slab() (dentry, inode uint64) { return fs.dentries.c.Pages, fs.inodes.c.Pages }

func (fs *BuildFS) newFile() int32 {
	f := fsFile{leaf: -1, dentry: -1, inode: -1, dnode: -1, emap: -1, xnode: -1, dPrev: -1, dNext: -1, iPrev: -1, iNext: -1, live: true}
	if k := len(fs.freeIDs); k > 0 {
		id := fs.freeIDs[k-1]
		fs.freeIDs = fs.freeIDs[:k-1]
		fs.files[id] = f
		return id
	}
	fs.files = append(fs.files, f)
	return int32(len(fs.files) - 1)
}

// ---------------------------------------------------------------------------
// LRU lists

func (fs *BuildFS) lruAdd(l *lruList, id int32, dentry bool) {
	f := &fs.files[id]
	prev, next, on := &f.iPrev, &f.iNext, &f.onILRU
	if dentry {
		prev, next, on = &f.dPrev, &f.dNext, &f.onDLRU
	}
	*prev, *next, *on = l.tail, -1, true
	if l.tail >= 0 {
		if dentry {
			fs.files[l.tail].dNext = id
		} else {
			fs.files[l.tail].iNext = id
		}
	} else {
		l.head = id
	}
	l.tail = id
	l.n++
}

func (fs *BuildFS) lruDel(l *lruList, id int32, dentry bool) {
	f := &fs.files[id]
	prev, next, on := &f.iPrev, &f.iNext, &f.onILRU
	if dentry {
		prev, next, on = &f.dPrev, &f.dNext, &f.onDLRU
	}
	if !*on {
		return
	}
	p, n := *prev, *next
	if p >= 0 {
		if dentry {
			fs.files[p].dNext = n
		} else {
			fs.files[p].iNext = n
		}
	} else {
		l.head = n
	}
	if n >= 0 {
		if dentry {
			fs.files[n].dPrev = p
		} else {
			fs.files[n].iPrev = p
		}
	} else {
		l.tail = p
	}
	*prev, *next, *on = -1, -1, false
	l.n--
}

// ---------------------------------------------------------------------------
// The superblock shrinker (fs/super.c super_cache_count/super_cache_scan,
// fs/dcache.c prune_dcache_sb, fs/inode.c prune_icache_sb)

func (fs *BuildFS) shrinkCount(sc *mm.ShrinkControl) uint64 {
	if sc.Memcg != fs.Cg {
		return 0
	}
	return fs.dLRU.n + fs.iLRU.n
}

// superCache is the file system's super_block shrinker callbacks
// (super_cache_count, super_cache_scan).
type superCache struct{ fs *BuildFS }

// CountObjects is super_cache_count().
func (s superCache) CountObjects(sc *mm.ShrinkControl) uint64 { return s.fs.shrinkCount(sc) }

// ScanObjects is super_cache_scan().
func (s superCache) ScanObjects(t *sim.Task, sc *mm.ShrinkControl) (uint64, bool) {
	return s.fs.shrinkScan(t, sc)
}

// gfpFS is __GFP_FS, parsed once: shrinkScan tests it on every call.
var gfpFS = mm.MustParseGFP("__GFP_FS")

func (fs *BuildFS) shrinkScan(t *sim.Task, sc *mm.ShrinkControl) (uint64, bool) {
	// "Deadlock avoidance. We may hold various FS locks, and we don't
	// want to recurse into the FS that called us."
	if sc.GFP&gfpFS == 0 {
		return 0, true
	}
	total := fs.dLRU.n + fs.iLRU.n
	if total == 0 {
		sc.NrScanned = 0
		return 0, false
	}
	dentries := sc.NrToScan*fs.dLRU.n/total + 1
	inodes := sc.NrToScan*fs.iLRU.n/total + 1
	var freed uint64
	m := fs.M
	for i := uint64(0); i < dentries && fs.dLRU.head >= 0; i++ {
		id := fs.dLRU.head
		f := &fs.files[id]
		t.Charge(m.Cost.ShrinkObject)
		if f.open > 0 {
			// dentry_lru_isolate: "Referenced dentries are still in
			// use. If they have active counts, just remove them from
			// the LRU" (LRU_REMOVED); dput puts it back.
			fs.lruDel(&fs.dLRU, id, true)
			continue
		}
		if f.dRef {
			f.dRef = false
			fs.lruDel(&fs.dLRU, id, true)
			fs.lruAdd(&fs.dLRU, id, true)
			continue
		}
		fs.dropDentry(t, id)
		fs.ShrunkDentries++
		freed++
	}
	for i := uint64(0); i < inodes && fs.iLRU.head >= 0; i++ {
		id := fs.iLRU.head
		f := &fs.files[id]
		t.Charge(m.Cost.ShrinkObject)
		fs.lruDel(&fs.iLRU, id, false)
		if f.open > 0 {
			// inode_lru_isolate: an inode with i_count is taken off
			// the LRU (LRU_REMOVED), not freed.
			continue
		}
		if f.iRef {
			f.iRef = false
			fs.lruAdd(&fs.iLRU, id, false)
			continue
		}
		if f.f != nil && f.f.Resident() > 0 {
			m.FileInvalidate(t, f.f)
			if f.f.Resident() > 0 {
				// Dirty or under writeback: keep it.
				fs.lruAdd(&fs.iLRU, id, false)
				continue
			}
		}
		fs.inodes.kmemCacheFree(m, t, f.inode)
		f.inode = -1
		fs.freeCompanions(t, id)
		fs.ShrunkInodes++
		freed++
	}
	sc.NrScanned = dentries + inodes
	return freed, false
}

// dropDentry frees a file's dentry; its inode becomes unused.
func (fs *BuildFS) dropDentry(t *sim.Task, id int32) {
	f := &fs.files[id]
	fs.lruDel(&fs.dLRU, id, true)
	fs.dentries.kmemCacheFree(fs.M, t, f.dentry)
	f.dentry = -1
	if f.inode >= 0 && !f.onILRU {
		fs.lruAdd(&fs.iLRU, id, false)
	}
}

// ---------------------------------------------------------------------------
// Operations. An allocation that stops at a cond_resched() must be
// repeated, the same call, by the task's next step; by then the file
// system may have moved on (another worker wrote the block, reclaim evicted
// the leaf the operation was about to use). So each worker keeps an fsCtx:
// the piece whose allocation is pending, which its next step finishes
// first (resume), and the blocks it reserved, so that no two workers write
// the same one. Every piece checks whether it is already done, so an
// operation taken up again after its pending piece goes on from where it
// stopped.

// fsCtx is a worker's share of the file system's state.
type fsCtx struct {
	pend  piece
	block uint64
	// haveBlock: block is reserved for this worker's next new block;
	// log and nlog the log-tree blocks reserved for its fdatasync.
	haveBlock bool
	log, nlog uint64
	// logRoot is the log root tree's block this fdatasync writes;
	// logCOW says log and logRoot are reserved for it.
	logRoot uint64
	logCOW  bool
}

// piece is an allocation a worker's step left pending.
type piece struct {
	kind  pieceKind
	cache *kmemCache
	file  *mm.File
	idx   uint64
	// pages and gfp of a pieceWrite (0: a btree block, btrfsMetaGFP).
	pages uint64
	gfp   mm.GFP
}

type pieceKind uint8

const (
	pieceNone pieceKind = iota
	pieceSlab
	pieceWrite
	pieceRead
)

// resume finishes the worker's pending piece.
func (fs *BuildFS) resume(t *sim.Task, c *fsCtx) res {
	p := c.pend
	switch p.kind {
	case pieceSlab:
		head := fs.M.AllocateSlab(t, p.cache.c, p.cache.gfp, -1)
		if head == mm.NilPFN {
			if r := fs.outcome(t, false); r == resPending {
				return r
			}
		} else {
			p.cache.newSlab(head)
		}
	case pieceWrite:
		n, gfp := p.pages, p.gfp
		if n == 0 {
			n, gfp = btrfsLeafPages, btrfsMetaGFP
		}
		if r := fs.writePages(t, c, p.file, p.idx, n, gfp, false); r == resPending {
			return r
		}
	case pieceRead:
		if r := fs.readBlock(t, c, p.idx); r == resPending {
			return r
		}
	}
	c.pend = piece{}
	return resDone
}

// reserveBlock returns the btree block this worker writes next.
func (fs *BuildFS) reserveBlock(c *fsCtx) uint64 {
	if !c.haveBlock {
		c.block = fs.nextBlock
		fs.nextBlock += btrfsLeafPages
		c.haveBlock = true
	}
	return c.block
}

// allocObj takes an object of cache o for worker c.
func (fs *BuildFS) allocObj(t *sim.Task, c *fsCtx, o *kmemCache) (int32, res) {
	r := o.kmemCacheAlloc(fs.M, t)
	if r < 0 {
		out := fs.outcome(t, false)
		if out == resPending {
			c.pend = piece{kind: pieceSlab, cache: o}
		}
		return -1, out
	}
	return r, resDone
}

// ensureDentry gives file id a dentry.
func (fs *BuildFS) ensureDentry(t *sim.Task, c *fsCtx, id int32) res {
	if fs.files[id].dentry >= 0 {
		return resDone
	}
	r, out := fs.allocObj(t, c, fs.dentries)
	if out != resDone {
		return out
	}
	fs.files[id].dentry = r
	return resDone
}

// ensureInode gives file id its inode: a new one, or one read back.
func (fs *BuildFS) ensureInode(t *sim.Task, c *fsCtx, id int32, create bool) res {
	f := &fs.files[id]
	if f.inode >= 0 {
		return fs.ensureCompanions(t, c, id)
	}
	if !create && fs.Kind == FSBtrfs {
		if r := fs.leafResident(t, c, f.leaf); r != resDone {
			return r
		}
	}
	r, out := fs.allocObj(t, c, fs.inodes)
	if out != resDone {
		return out
	}
	f = &fs.files[id]
	f.inode = r
	if !create {
		t.Charge(fs.M.Cost.BtrfsIget)
		fs.InodeReads++
	}
	return fs.ensureCompanions(t, c, id)
}

// ensureCompanions gives file id's in-memory btrfs inode what comes with
// it: a btrfs_delayed_node (btrfs_get_or_create_delayed_node, the first
// time the inode item is updated: the write's, an unlink's or a read's
// atime), an extent map (the write's ordered extent, or btrfs_get_extent
// when the file is read back) and, for a file of two pages or more, the
// xarray node its page cache needs (a one-page file's folio sits in
// xa_head). They go with the inode (freeCompanions).
func (fs *BuildFS) ensureCompanions(t *sim.Task, c *fsCtx, id int32) res {
	if fs.Kind != FSBtrfs {
		return resDone
	}
	for _, k := range [...]struct {
		o    *kmemCache
		slot func(*fsFile) *int32
		want func(*fsFile) bool
	}{
		{fs.delayedNodes, func(f *fsFile) *int32 { return &f.dnode }, nil},
		{fs.extentMaps, func(f *fsFile) *int32 { return &f.emap }, nil},
		{fs.xaNodes, func(f *fsFile) *int32 { return &f.xnode }, func(f *fsFile) bool { return f.pages >= 2 }},
	} {
		f := &fs.files[id]
		if *k.slot(f) >= 0 || (k.want != nil && !k.want(f)) {
			continue
		}
		r, out := fs.allocObj(t, c, k.o)
		if out != resDone {
			return out
		}
		*k.slot(&fs.files[id]) = r
	}
	return resDone
}

// freeCompanions frees what ensureCompanions gave file id's inode
// (btrfs_destroy_inode's btrfs_remove_delayed_node, the extent maps
// dropped at eviction, the xarray node with the page cache).
func (fs *BuildFS) freeCompanions(t *sim.Task, id int32) {
	f := &fs.files[id]
	for _, k := range [...]struct {
		o    *kmemCache
		slot *int32
	}{{fs.delayedNodes, &f.dnode}, {fs.extentMaps, &f.emap}, {fs.xaNodes, &f.xnode}} {
		if *k.slot >= 0 {
			k.o.kmemCacheFree(fs.M, t, *k.slot)
			*k.slot = -1
		}
	}
}

// leafResident reads leaf l back if reclaim evicted any of its pages.
func (fs *BuildFS) leafResident(t *sim.Task, c *fsCtx, l int32) res {
	if l < 0 {
		return resDone
	}
	return fs.readBlock(t, c, fs.leaves[l].index)
}

// readBlock reads the btree block at idx into the page cache if it is not
// all there: read_extent_buffer_pages on a new extent buffer, whose pages
// alloc_eb_folio_array asks for with GFP_NOFS|__GFP_NOFAIL.
func (fs *BuildFS) readBlock(t *sim.Task, c *fsCtx, idx uint64) res {
	if fs.M.FileCached(fs.btree, idx, btrfsLeafPages) && !fs.M.AllocPending(t) {
		return resDone
	}
	fs.M.FileRead(t, fs.btree, idx, btrfsLeafPages, btrfsMetaGFP)
	r := fs.outcome(t, fs.M.FileCached(fs.btree, idx, btrfsLeafPages))
	switch r {
	case resDone:
		fs.LeafReads++
	case resPending:
		c.pend = piece{kind: pieceRead, idx: idx}
	}
	return r
}

// writeBlock writes (allocates, dirty) the block at index idx of the btree
// or the log tree.
func (fs *BuildFS) writeBlock(t *sim.Task, c *fsCtx, f *mm.File, idx uint64) res {
	return fs.writePages(t, c, f, idx, btrfsLeafPages, btrfsMetaGFP, false)
}

// writePages is writeBlock for n pages allocated with gfp; with again,
// pages already cached are written again (dirtied) too.
func (fs *BuildFS) writePages(t *sim.Task, c *fsCtx, f *mm.File, idx, n uint64, gfp mm.GFP, again bool) res {
	if !again && fs.M.FileCached(f, idx, n) && !fs.M.AllocPending(t) {
		return resDone
	}
	fs.M.FileWrite(t, f, idx, n, gfp)
	r := fs.outcome(t, fs.M.FileCached(f, idx, n))
	if r == resPending {
		c.pend = piece{kind: pieceWrite, file: f, idx: idx, pages: n, gfp: gfp}
	}
	return r
}

// res is how a piece of an operation ended.
type res uint8

const (
	resDone res = iota
	// resPending is an allocation stopped at a cond_resched(); call again.
	resPending
	// resFailed is an allocation that failed.
	resFailed
)

// outcome says how a piece that needed an allocation ended.
func (fs *BuildFS) outcome(t *sim.Task, done bool) res {
	switch {
	case fs.M.AllocPending(t):
		// Also when another task cached the block meanwhile: the
		// allocation must be finished (the call repeated) first.
		return resPending
	case done:
		return resDone
	}
	return resFailed
}

// touchLeaf makes leaf l writable in this transaction: a leaf last
// written by an earlier transaction is copied to a new block
// (copy-on-write), and its old block is freed at the commit.
func (fs *BuildFS) touchLeaf(t *sim.Task, c *fsCtx, l int32) res {
	lf := &fs.leaves[l]
	if lf.trans == fs.trans {
		return resDone
	}
	if r := fs.leafResident(t, c, l); r != resDone {
		return r
	}
	idx := fs.reserveBlock(c)
	if r := fs.writeBlock(t, c, fs.btree, idx); r != resDone {
		return r
	}
	lf = &fs.leaves[l]
	if lf.trans != fs.trans {
		fs.cowFreed = append(fs.cowFreed, lf.index)
		lf.index = idx
		lf.trans = fs.trans
		c.haveBlock = false
		fs.COWs++
	}
	return resDone
}

// insertItems puts a new file's items into the leaf new items go to,
// starting a new leaf when it is full, and returns the leaf.
func (fs *BuildFS) insertItems(t *sim.Task, c *fsCtx) (int32, res) {
	if fs.hot < 0 || fs.leaves[fs.hot].used+btrfsItemsPerFile > btrfsNodesize {
		idx := fs.reserveBlock(c)
		if r := fs.writeBlock(t, c, fs.btree, idx); r != resDone {
			return -1, r
		}
		// Another worker may have started a leaf meanwhile.
		if fs.hot < 0 || fs.leaves[fs.hot].used+btrfsItemsPerFile > btrfsNodesize {
			fs.leaves = append(fs.leaves, fsLeaf{index: idx, trans: fs.trans})
			fs.hot = int32(len(fs.leaves) - 1)
			c.haveBlock = false
			fs.Leaves++
		}
	}
	if r := fs.touchLeaf(t, c, fs.hot); r != resDone {
		return -1, r
	}
	fs.leaves[fs.hot].used += btrfsItemsPerFile
	return fs.hot, resDone
}

// Steps of one fdatasync (the build worker's sync stage and syncLog), in
// order.
const (
	logStepData uint8 = iota
	logStepLeaves
	logStepRoot
	logStepSuper
	logStepDone
)

// syncLog is the log commit of one fdatasync in a round of n
// (btrfs_sync_file -> btrfs_log_inode, btrfs_sync_log), from *step on:
// the log tree's leaves the round reserved at its first fdatasync (for n
// inodes), written again and waited for, the log root tree's leaf, then
// the super block (see the file's comment). *step says how far it got, so
// a step that stopped at a pending allocation goes on from there.
func (fs *BuildFS) syncLog(t *sim.Task, c *fsCtx, step *uint8, n int) res {
	m := fs.M
	if *step == logStepLeaves {
		if c.nlog == 0 {
			c.nlog = (uint64(n)*btrfsLogPerInode + btrfsNodesize - 1) / btrfsNodesize
		}
		if !c.logCOW {
			// The leaves the last log commit wrote are copied to new
			// blocks (should_cow_block: BTRFS_HEADER_FLAG_WRITTEN);
			// the old ones stay cached, clean, until reclaim or the
			// transaction's commit drops them.
			c.log = fs.nextLog
			fs.nextLog += c.nlog * btrfsLeafPages
			c.logRoot = fs.nextLogRoot
			fs.nextLogRoot += btrfsLeafPages
			c.logCOW = true
		}
		for b := uint64(0); b < c.nlog; b++ {
			if r := fs.writePages(t, c, fs.logTree, c.log+b*btrfsLeafPages, btrfsLeafPages, btrfsMetaGFP, false); r != resDone {
				return r
			}
		}
		m.FileSyncRange(t, fs.logTree, c.log, c.nlog*btrfsLeafPages)
		*step = logStepRoot
	}
	if *step == logStepRoot {
		if r := fs.writePages(t, c, fs.logRoot, c.logRoot, btrfsLeafPages, btrfsMetaGFP, false); r != resDone {
			return r
		}
		m.FileSyncRange(t, fs.logRoot, c.logRoot, btrfsLeafPages)
		c.logCOW = false
		*step = logStepSuper
	}
	if *step == logStepSuper {
		if r := fs.writePages(t, c, fs.super, 0, 1, mm.GFP_NOFS, true); r != resDone {
			return r
		}
		m.FileSync(t, fs.super)
		*step = logStepDone
	}
	return resDone
}

// commit is a transaction commit: write the dirty metadata back, free the
// blocks copy-on-write replaced and the log tree.
func (fs *BuildFS) commit(t *sim.Task) {
	m := fs.M
	m.FileSync(t, fs.btree)
	for _, idx := range fs.cowFreed {
		m.FileTruncateRange(t, fs.btree, idx, btrfsLeafPages)
	}
	fs.cowFreed = fs.cowFreed[:0]
	m.FileTruncate(t, fs.logTree)
	m.FileTruncate(t, fs.logRoot)
	fs.nextLog, fs.nextLogRoot = 0, 0
	fs.trans++
	fs.Commits++
}

// btrfsTransaction is the btrfs-transaction kthread: a commit every
// interval.
type btrfsTransaction struct {
	fs       *BuildFS
	interval sim.Time
}

func (b *btrfsTransaction) Step(w *sim.World, t *sim.Task) sim.Time {
	b.fs.commit(t)
	return t.Now + b.interval
}

// unlinkFile removes file id: its items leave their leaf (copy-on-write),
// its page cache is truncated, its inode and dentry are freed.
func (fs *BuildFS) unlinkFile(t *sim.Task, c *fsCtx, id int32) res {
	m := fs.M
	// unlink(2) looks the name up first: dentry and inode.
	if r := fs.ensureInode(t, c, id, false); r != resDone {
		return r
	}
	if r := fs.ensureDentry(t, c, id); r != resDone {
		return r
	}
	f := &fs.files[id]
	if fs.Kind == FSBtrfs {
		if r := fs.touchLeaf(t, c, f.leaf); r != resDone {
			return r
		}
		f = &fs.files[id]
		fs.leaves[f.leaf].used -= min(fs.leaves[f.leaf].used, btrfsItemsPerFile)
		t.Charge(m.Cost.BtrfsUnlink)
		m.FileUnlink(t, f.f)
		f.f = nil
	} else {
		f = &fs.files[id]
		t.Charge(m.Cost.TmpfsUnlink)
	}
	fs.lruDel(&fs.dLRU, id, true)
	fs.dentries.kmemCacheFree(m, t, f.dentry)
	fs.lruDel(&fs.iLRU, id, false)
	fs.inodes.kmemCacheFree(m, t, f.inode)
	fs.freeCompanions(t, id)
	*f = fsFile{live: false}
	fs.freeIDs = append(fs.freeIDs, id)
	fs.Unlinked++
	return resDone
}

// ---------------------------------------------------------------------------
// The worker

// BuildWorker is one of seed 002's build-like workers on fs: create a file
// (1-64 KiB of data on btrfs, empty on tmpfs), read back an earlier one of
// its files, unlink one of its files with probability 1/5, and fdatasync
// the files created since the last sync every 50 creates (btrfs). It stops
// after Files creates (0: never). An operation whose allocation stops at a
// cond_resched() goes on from that point in the next step.
type BuildWorker struct {
	Progress
	FS *BuildFS
	// Rng draws the worker's choices (file sizes, which file to read back
	// or unlink).
	Rng   *sim.Rand
	Files uint64

	mine     []int32
	unsynced []int32
	creates  uint64
	op       buildOp
	ctx      fsCtx
}

// buildOp is the operation under way.
type buildOp struct {
	stage             buildStage
	id, old, victim   int32
	pages, written    uint64
	read              uint64
	charged, unlinkIt bool
	// opened: the read's file is open (BuildFS.files[old].open).
	opened bool
	// synced counts the round's fdatasyncs done, logStep how far the
	// next one got.
	synced  int
	logStep uint8
}

type buildStage uint8

const (
	stageCreate buildStage = iota
	stageWrite
	stageRead
	stageUnlink
	stageSync
)

// Step runs one operation, or the rest of one that stopped.
func (b *BuildWorker) Step(w *sim.World, t *sim.Task) sim.Time {
	b.begin(t)
	fs, m := b.FS, b.FS.M
	op, c := &b.op, &b.ctx
	if c.pend.kind != pieceNone {
		if fs.resume(t, c) == resPending {
			return sim.Resched
		}
	}
	for {
		switch op.stage {
		case stageCreate:
			if b.Files > 0 && b.creates >= b.Files {
				return b.finish(t)
			}
			if !op.charged {
				op.charged = true
				op.id = fs.newFile()
				op.old, op.victim = -1, -1
				if fs.Kind == FSBtrfs {
					op.pages = uint64(1 + b.Rng.Intn(16))
					fs.files[op.id].pages = op.pages
					fs.files[op.id].f = m.NewFile("obj", fs.Cg)
					t.Charge(m.Cost.BtrfsCreate)
				} else {
					t.Charge(m.Cost.TmpfsCreate)
				}
			}
			if r := fs.ensureDentry(t, c, op.id); r != resDone {
				return b.stopped(t, r)
			}
			if r := fs.ensureInode(t, c, op.id, true); r != resDone {
				return b.stopped(t, r)
			}
			if fs.Kind == FSBtrfs && fs.files[op.id].leaf < 0 {
				l, r := fs.insertItems(t, c)
				if r != resDone {
					return b.stopped(t, r)
				}
				fs.files[op.id].leaf = l
			}
			fs.lruAdd(&fs.dLRU, op.id, true)
			fs.Created++
			b.creates++
			b.mine = append(b.mine, op.id)
			b.unsynced = append(b.unsynced, op.id)
			op.stage = stageWrite
		case stageWrite:
			if fs.Kind == FSBtrfs {
				f := fs.files[op.id].f
				op.written += m.FileWrite(t, f, op.written, op.pages-op.written, btrfsDataGFP)
				if m.AllocPending(t) {
					return sim.Resched
				}
				if op.written < op.pages {
					b.Failed++
				}
			}
			op.stage = stageRead
			if len(b.mine) > 1 {
				op.old = b.mine[b.Rng.Intn(len(b.mine)-1)]
				op.charged = false
			}
		case stageRead:
			if op.old >= 0 {
				if !op.charged {
					op.charged = true
					t.Charge(m.Cost.VFSLookup)
				}
				// The read opens the file once (lookup, then
				// open holds its dentry and inode) and closes it
				// when it ends (fs.put). A read whose folio
				// allocation stopped at a cond_resched() repeats
				// that call on the file it has open.
				if !op.opened {
					if r := fs.lookup(t, c, op.old); r != resDone {
						if r == resFailed {
							b.Failed++
							op.old = -1
							continue
						}
						return sim.Resched
					}
					if fs.files[op.old].live {
						fs.files[op.old].open++
						op.opened = true
					}
				}
				if f := fs.files[op.old].f; f != nil && op.read < f.Size {
					done, _ := m.FileRead(t, f, op.read, f.Size-op.read, btrfsReadGFP)
					op.read += done
					if m.AllocPending(t) {
						return sim.Resched
					}
				}
				if op.opened {
					fs.put(op.old)
					op.opened = false
				}
			}
			op.stage = stageUnlink
			if b.Rng.Intn(5) == 0 && len(b.mine) > 0 {
				i := b.Rng.Intn(len(b.mine))
				op.victim = b.mine[i]
				b.mine[i] = b.mine[len(b.mine)-1]
				b.mine = b.mine[:len(b.mine)-1]
			}
		case stageUnlink:
			if op.victim >= 0 {
				switch fs.unlinkFile(t, c, op.victim) {
				case resPending:
					return sim.Resched
				case resFailed:
					// ENOMEM: the file stays; try again later.
					b.Failed++
					b.mine = append(b.mine, op.victim)
					op.victim = -1
					op.stage = stageSync
					return t.Now + sim.Millisecond
				}
				op.victim = -1
			}
			op.stage = stageSync
		case stageSync:
			if fs.Kind == FSBtrfs && b.creates%50 == 0 && len(b.unsynced) > 0 {
				// One fdatasync for each file created since the
				// last round, each with its own log commit.
				for ; op.synced < len(b.unsynced); op.synced++ {
					f := &fs.files[b.unsynced[op.synced]]
					if !f.live || f.f == nil {
						continue
					}
					if op.logStep == logStepData {
						m.FileSync(t, f.f)
						op.logStep = logStepLeaves
					}
					if r := fs.syncLog(t, c, &op.logStep, len(b.unsynced)); r != resDone {
						return b.stopped(t, r)
					}
					op.logStep = logStepData
				}
				c.nlog = 0
				c.logCOW = false
				b.unsynced = b.unsynced[:0]
			}
			*op = buildOp{}
			b.Ops++
			return t.Now
		}
	}
}

// stopped ends a step whose allocation is pending, or counts a failure and
// tries the piece again a millisecond later (a caller that gets ENOMEM and
// retries).
func (b *BuildWorker) stopped(t *sim.Task, r res) sim.Time {
	if r == resPending {
		return sim.Resched
	}
	b.Failed++
	return t.Now + sim.Millisecond
}

// put closes file id (fput, dput): its dentry goes back on the shrinker's
// list, referenced, when no one else has it open.
func (fs *BuildFS) put(id int32) {
	f := &fs.files[id]
	f.open--
	if f.open == 0 && f.live && f.dentry >= 0 && !f.onDLRU {
		fs.lruAdd(&fs.dLRU, id, true)
		f.dRef = true
	}
}

// lookup finds file id for a read: its dentry (and inode, read back if
// the shrinker freed it) cached again, marked referenced.
func (fs *BuildFS) lookup(t *sim.Task, c *fsCtx, id int32) res {
	f := &fs.files[id]
	if !f.live {
		return resDone
	}
	if r := fs.ensureInode(t, c, id, false); r != resDone {
		return r
	}
	if r := fs.ensureDentry(t, c, id); r != resDone {
		return r
	}
	f = &fs.files[id]
	fs.lruDel(&fs.iLRU, id, false)
	if !f.onDLRU {
		fs.lruAdd(&fs.dLRU, id, true)
	}
	f.dRef, f.iRef = true, true
	return resDone
}
