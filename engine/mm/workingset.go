package mm

// workingset.go models mm/workingset.c as far as PSI and the vmstat
// counters need it: an evicted page-cache or swapped anon page leaves a
// shadow entry; a later fault on it is a refault (workingset_refault_*),
// which activates the page (workingset_activate_*) when the refault distance
// says it would have stayed resident. pagesim does not keep per-page
// eviction timestamps; it activates every refaulted page (CHOICE: the
// seed-002 build workers re-read files shortly after writing them, which is
// the short-distance case).

// workingsetRefault counts a refault of the folio and activates it.
func (m *Machine) workingsetRefault(head PFN) {
	p := &m.pages[head]
	n := m.ZoneOf(head).Node
	nr := int64(m.folioNr(head))
	if p.kind == KindFile {
		n.Stat[WORKINGSET_REFAULT_FILE] += nr
		n.Stat[WORKINGSET_ACTIVATE_FILE] += nr
	} else {
		n.Stat[WORKINGSET_REFAULT_ANON] += nr
		n.Stat[WORKINGSET_ACTIVATE_ANON] += nr
	}
	if p.flags&pgLRU != 0 && p.flags&pgPinned == 0 && p.flags&pgActive == 0 {
		m.lruDel(head)
		p.flags |= pgActive | pgWorkingset
		m.lruAdd(head)
	}
}
