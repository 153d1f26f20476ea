package mm

// swap_state.go models the swap cache side of swap-out from mm/swap_state.c
// and mm/swapfile.c: add_to_swap() gives an anonymous folio a swap entry
// (folio_alloc_swap), after which pageout() writes it (page_io.go) and,
// once the write has completed, reclaim removes it from the swap cache and
// frees it (__remove_mapping -> __delete_from_swap_cache).
//
// Swap space is a count of slots (SwapDevice in memory.go); which slot a
// folio gets does not matter to the model beyond its writes being
// contiguous, as the per-CPU swap clusters of 256 slots make them
// (SWAPFILE_CLUSTER), so the block layer merges a reclaim batch's writes.
// There is no swap-in: no workload touches memory it has had swapped out.

// addToSwap is add_to_swap(): reserve swap slots for the folio. It returns
// false when swap is full.
func (m *Machine) addToSwap(head PFN) bool {
	nr := m.folioNr(head)
	if m.nrSwapPagesFree() < nr {
		return false
	}
	m.Swap.UsedPages += nr
	m.owners[m.pages[head].owner].Swapped += nr
	return true
}
