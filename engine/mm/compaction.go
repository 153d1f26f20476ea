package mm

// compaction.go models mm/compaction.c. (Filled in by the compaction work;
// the foundation only needs the per-zone state and the capture hook.)

// compactState is the compaction part of struct zone.
type compactState struct {
	considered     uint
	deferShift     uint
	orderFailed    int
	cachedFreePFN  PFN
	cachedMigPFN   [2]PFN
	blockskipFlush bool
}

func (c *compactState) init(z *Zone) {
	c.orderFailed = 0
	c.cachedFreePFN = z.EndPFN()
	c.cachedMigPFN = [2]PFN{z.StartPFN, z.StartPFN}
}

// compactionCapture is compaction_capture(): while a direct compactor runs
// on this zone, a freed chunk of exactly its order goes to it.
func (m *Machine) compactionCapture(z *Zone, pfn PFN, order Order, mt MigrateType) bool {
	return false
}
