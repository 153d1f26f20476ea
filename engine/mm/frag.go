package mm

// FragStats counts fallback events and pageblock type changes. The kernel
// has no vmstat counter for these; it reports them through the
// mm_page_alloc_extfrag tracepoint and /proc/pagetypeinfo. pagesim counts
// them from the tracepoint's fields, as a script reading its lines would
// (include/trace/events/kmem.h: change_ownership is whether the block now
// has the allocation's type, fragmenting is fallback_order <
// pageblock_order).
type FragStats struct {
	// ClaimWhole counts fallbacks that took a whole free pageblock
	// (fallback_order >= pageblock_order).
	ClaimWhole uint64
	// ClaimPartial counts fallbacks that retyped a partly used block
	// (change_ownership=1, fallback_order < pageblock_order).
	ClaimPartial uint64
	// Steal counts fallbacks that took pages and left the block's type
	// (change_ownership=0): pollution.
	Steal uint64
	// MovableBlocksLost counts MIGRATE_MOVABLE pageblocks retyped to
	// another type for any reason (seed 002's "movable blocks lost").
	MovableBlocksLost uint64
	// WholeBlocksClaimed counts MIGRATE_MOVABLE pageblocks taken whole
	// by a non-movable request (seed 002's "whole blocks claimed").
	WholeBlocksClaimed uint64
}
