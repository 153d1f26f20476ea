package mm

// page_alloc_slowpath.go models __alloc_pages_slowpath() of mm/page_alloc.c.

import "github.com/pagesim/pagesim/engine/sim"

// gfpToAllocFlags is gfp_to_alloc_flags().
func (m *Machine) gfpToAllocFlags(t *sim.Task, gfp GFP, order Order) AllocFlags {
	flags := ALLOC_WMARK_MIN | ALLOC_CPUSET
	if gfp&__GFP_HIGH != 0 {
		flags |= ALLOC_MIN_RESERVE
	}
	if gfp&__GFP_KSWAPD_RECLAIM != 0 {
		flags |= ALLOC_KSWAPD
	}
	if gfp&__GFP_DIRECT_RECLAIM == 0 {
		if gfp&__GFP_NOMEMALLOC == 0 {
			flags |= ALLOC_NON_BLOCK
			if order > 0 && flags&ALLOC_MIN_RESERVE != 0 {
				flags |= ALLOC_HIGHATOMIC
			}
		}
		if flags&ALLOC_MIN_RESERVE != 0 {
			flags &^= ALLOC_CPUSET
		}
	}
	if m.Sysctl.DefragMode != 0 {
		flags |= ALLOC_NOFRAGMENT
	}
	return flags
}

// allocPagesSlowpath is __alloc_pages_slowpath().
func (m *Machine) allocPagesSlowpath(t *sim.Task, gfp GFP, order Order, ac *allocContext) PFN {
	allocFlags := m.gfpToAllocFlags(t, gfp, order)
	return m.getPageFromFreelist(t, gfp, order, allocFlags, ac)
}
