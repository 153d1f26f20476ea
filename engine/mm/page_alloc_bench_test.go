package mm

import (
	"testing"
	"unsafe"
)

func benchMachine(b *testing.B, bytes uint64) *Machine {
	cfg, err := X86Layout(bytes, 1, 8)
	if err != nil {
		b.Fatal(err)
	}
	m, err := NewMachine(cfg)
	if err != nil {
		b.Fatal(err)
	}
	return m
}

// BenchmarkAllocFreeOrder0PCP: an order-0 allocation and free that the
// per-CPU lists serve (the kernel's hottest path).
func BenchmarkAllocFreeOrder0PCP(b *testing.B) {
	m := benchMachine(b, 8<<30)
	tk := m.testTask(0)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		pfn := m.allocSync(tk, GFP_KERNEL, 0, 0, 0)
		m.FreePages(tk, pfn, 0)
	}
}

// BenchmarkAllocFreeOrder0Buddy: order-0 through the buddy lists (pcp high
// forced to 0, so every free goes straight back).
func BenchmarkAllocFreeOrder0Buddy(b *testing.B) {
	m := benchMachine(b, 8<<30)
	for _, z := range m.zones {
		for c := range z.pcp {
			z.pcp[c].high, z.pcp[c].highMin, z.pcp[c].highMax, z.pcp[c].batch = 0, 0, 0, 1
		}
	}
	tk := m.testTask(0)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		pfn := m.allocSync(tk, GFP_KERNEL, 0, 0, 0)
		m.FreePages(tk, pfn, 0)
	}
}

// BenchmarkAllocFreeOrder9: a THP-sized allocation and free (pcp order 9).
func BenchmarkAllocFreeOrder9(b *testing.B) {
	m := benchMachine(b, 8<<30)
	tk := m.testTask(0)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		pfn := m.allocSync(tk, GFP_TRANSHUGE_LIGHT, 9, 0, 0)
		m.FreePages(tk, pfn, 9)
	}
}

// BenchmarkAllocFreeOrder4: an order-4 (costly, not pcp) allocation and free.
func BenchmarkAllocFreeOrder4(b *testing.B) {
	m := benchMachine(b, 8<<30)
	tk := m.testTask(0)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		pfn := m.allocSync(tk, GFP_KERNEL|__GFP_COMP, 4, 0, 0)
		m.FreePages(tk, pfn, 4)
	}
}

// BenchmarkFallbackSteal: every allocation falls back into another
// migratetype (movable request, only unmovable blocks have free pages).
func BenchmarkFallbackSteal(b *testing.B) {
	cfg, _ := SimpleLayout(1<<16, 1, 1)
	m, err := NewMachine(cfg)
	if err != nil {
		b.Fatal(err)
	}
	z := m.Nodes[0].Zones[ZONE_NORMAL]
	// Retype every block to Unmovable.
	z.Lock.Reset()
	for pfn := z.StartPFN; pfn < z.EndPFN(); pfn += PageblockNrPages {
		m.moveFreepagesBlockType(z, pfn, MIGRATE_MOVABLE, MIGRATE_UNMOVABLE)
	}
	for c := range z.pcp {
		z.pcp[c].high, z.pcp[c].highMin, z.pcp[c].highMax, z.pcp[c].batch = 0, 0, 0, 1
	}
	tk := m.testTask(0)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		pfn := m.allocSync(tk, GFP_HIGHUSER_MOVABLE, 0, 0, 0)
		if pfn == NilPFN {
			b.Fatal("allocation failed")
		}
		m.FreePages(tk, pfn, 0)
		// The freed page merges back and its block stays Unmovable.
	}
}

func benchBoot(b *testing.B, bytes uint64) {
	cfg, err := X86Layout(bytes, 1, 8)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := NewMachine(cfg); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBoot8GiB(b *testing.B)  { benchBoot(b, 8<<30) }
func BenchmarkBoot32GiB(b *testing.B) { benchBoot(b, 32<<30) }

// BenchmarkBytesPerPage reports the engine memory per simulated page of a
// booted 32 GiB machine: the page array, the pageblock array and its zone
// map, measured from the slices' sizes.
func BenchmarkBytesPerPage(b *testing.B) {
	m := benchMachine(b, 32<<30)
	per := float64(len(m.pages))*float64(unsafe.Sizeof(page{})) +
		float64(len(m.blocks))*float64(unsafe.Sizeof(pageblock{})) +
		float64(len(m.zoneOfBlock))*2
	for i := 0; i < b.N; i++ {
	}
	b.ReportMetric(per/float64(len(m.pages)), "bytes/page")
	b.ReportMetric(float64(unsafe.Sizeof(page{})), "bytes/struct-page")
}
