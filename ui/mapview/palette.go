package mapview

import "github.com/pagesim/pagesim/engine/mm"

// RGB is an opaque colour.
type RGB struct{ R, G, B uint8 }

// Hex prints the colour as CSS does ("#0072b2").
func (c RGB) Hex() string {
	const digits = "0123456789abcdef"
	b := []byte{'#', 0, 0, 0, 0, 0, 0}
	for i, v := range []uint8{c.R, c.G, c.B} {
		b[1+2*i] = digits[v>>4]
		b[2+2*i] = digits[v&15]
	}
	return string(b)
}

// pixel packs the colour as one little-endian RGBA word (alpha 255), the
// layout of the buffer WritePixels takes.
func (c RGB) pixel() uint32 {
	return uint32(c.R) | uint32(c.G)<<8 | uint32(c.B)<<16 | 0xff<<24
}

// mix returns a + (b-a)*num/den per channel.
func mix(a, b RGB, num, den int) RGB {
	f := func(x, y uint8) uint8 { return uint8(int(x) + (int(y)-int(x))*num/den) }
	return RGB{f(a.R, b.R), f(a.G, b.G), f(a.B, b.B)}
}

// MigrateColors is the migratetype palette: the Okabe-Ito colours, which
// stay distinct under the common forms of colour blindness. The legend in
// the panel uses the same values (via CSS classes in static/style.css,
// which a test keeps in sync).
var MigrateColors = [mm.MIGRATE_TYPES]RGB{
	mm.MIGRATE_UNMOVABLE:   {0xd5, 0x5e, 0x00}, // vermillion
	mm.MIGRATE_MOVABLE:     {0x00, 0x72, 0xb2}, // blue
	mm.MIGRATE_RECLAIMABLE: {0x00, 0x9e, 0x73}, // bluish green
	mm.MIGRATE_HIGHATOMIC:  {0xcc, 0x79, 0xa7}, // reddish purple
	mm.MIGRATE_CMA:         {0xf0, 0xe4, 0x42}, // yellow
	mm.MIGRATE_ISOLATE:     {0xe6, 0x9f, 0x00}, // orange
}

// Colours of everything that is not a migratetype.
var (
	Background = RGB{0x10, 0x10, 0x12}
	// Reserved marks pages the buddy allocator never manages.
	Reserved = RGB{0x3a, 0x3a, 0x3a}
	// Pinned marks long-term pinned pages (and, in block view, a corner
	// of each pageblock that holds any).
	Pinned = RGB{0xff, 0xff, 0xff}
)

// Gauge colours: free pages against the watermarks, and the buddyinfo bars.
var (
	GaugeTrack = RGB{0x30, 0x30, 0x34}
	GaugeOK    = RGB{0x00, 0x9e, 0x73}
	GaugeLow   = RGB{0xf0, 0xe4, 0x42}
	GaugeMin   = RGB{0xd5, 0x5e, 0x00}
	TickMin    = RGB{0xd5, 0x5e, 0x00}
	TickLow    = RGB{0xf0, 0xe4, 0x42}
	TickHigh   = RGB{0x56, 0xb4, 0xe9}
	BuddyBar   = RGB{0xc8, 0xc8, 0xc8}
)

// Colours of the frames, the tooltip and the text.
var (
	// NodeFrame outlines the bands of one NUMA node.
	NodeFrame = RGB{0x4a, 0x4a, 0x56}
	// TooltipBG is the background of the page's hover tooltip.
	TooltipBG = RGB{0x22, 0x22, 0x28}
	// LabelText and Muted are the colours of text.
	LabelText = RGB{0xe6, 0xe6, 0xe6}
	Muted     = RGB{0xa0, 0xa0, 0xa8}
)

// Lamps of kswapd and kcompactd: lit (balancing, compacting), half lit
// (kswapd napping before sleep), off (sleeping).
var (
	LampOn    = RGB{0xf0, 0xe4, 0x42}
	LampHalf  = RGB{0x6e, 0x68, 0x2a}
	LampOff   = RGB{0x24, 0x24, 0x2a}
	LampFrame = RGB{0x80, 0x80, 0x88}
)

// Compaction markers: the migrate scanner's and the free scanner's cached
// positions, and where the latest run's scanners stopped.
var (
	MarkMigrate = RGB{0xf0, 0xe4, 0x42}
	MarkFree    = RGB{0x56, 0xb4, 0xe9}
	MarkLastRun = RGB{0xcc, 0x79, 0xa7}
)

// Chart colours, one per chart (PSI, compact_stall, throughput), and the
// plot's track.
var (
	ChartPSI     = RGB{0xcc, 0x79, 0xa7}
	ChartStall   = RGB{0xe6, 0x9f, 0x00}
	ChartAlloc   = RGB{0x56, 0xb4, 0xe9}
	ChartTrack   = RGB{0x1c, 0x1c, 0x22}
	ChartTopLine = RGB{0x34, 0x34, 0x3c}
)

// Scheme is the set of colours the map is drawn in. Dark is the page's;
// Projector is presentation mode's, for a projector that washes dark
// tones out: a light background, free pages a pale tint of their type
// (never near-black on black), dark text.
type Scheme struct {
	Name string
	// Migrate are the migratetypes' colours (pages in use); free pages
	// are FreeMix percent of them over the background, pages on per-CPU
	// lists PCPMix percent.
	Migrate         [mm.MIGRATE_TYPES]RGB
	FreeMix, PCPMix int
	Background, Reserved, Pinned,
	GaugeTrack, GaugeOK, GaugeLow, GaugeMin, TickMin, TickLow, TickHigh, BuddyBar,
	NodeFrame, TooltipBG, LabelText, Muted, Accent,
	LampOn, LampHalf, LampOff, LampFrame,
	MarkMigrate, MarkFree, MarkLastRun,
	ChartPSI, ChartTrack, ChartTopLine RGB
	// Charts colour the key counters' charts, in order.
	Charts [2]RGB
}

// Dark is the page's scheme: the package's colours above.
var Dark = Scheme{
	Name: "dark", Migrate: MigrateColors, FreeMix: 30, PCPMix: 60,
	Background: Background, Reserved: Reserved, Pinned: Pinned,
	GaugeTrack: GaugeTrack, GaugeOK: GaugeOK, GaugeLow: GaugeLow, GaugeMin: GaugeMin,
	TickMin: TickMin, TickLow: TickLow, TickHigh: TickHigh, BuddyBar: BuddyBar,
	NodeFrame: NodeFrame, TooltipBG: TooltipBG, LabelText: LabelText, Muted: Muted, Accent: LampOn,
	LampOn: LampOn, LampHalf: LampHalf, LampOff: LampOff, LampFrame: LampFrame,
	MarkMigrate: MarkMigrate, MarkFree: MarkFree, MarkLastRun: MarkLastRun,
	ChartPSI: ChartPSI, ChartTrack: ChartTrack, ChartTopLine: ChartTopLine,
	Charts: [2]RGB{ChartStall, ChartAlloc},
}

// Projector is presentation mode's scheme: the same Okabe-Ito hues on an
// off-white background; yellow marks turn orange, which white would wash
// out.
var Projector = Scheme{
	Name: "projector", Migrate: MigrateColors, FreeMix: 28, PCPMix: 60,
	Background: RGB{0xf7, 0xf7, 0xf4}, Reserved: RGB{0x9a, 0x9a, 0x9a}, Pinned: RGB{0x1a, 0x1a, 0x1a},
	GaugeTrack: RGB{0xd6, 0xd6, 0xd6}, GaugeOK: RGB{0x00, 0x9e, 0x73}, GaugeLow: RGB{0xe6, 0x9f, 0x00}, GaugeMin: RGB{0xd5, 0x5e, 0x00},
	TickMin: RGB{0xd5, 0x5e, 0x00}, TickLow: RGB{0xe6, 0x9f, 0x00}, TickHigh: RGB{0x00, 0x72, 0xb2}, BuddyBar: RGB{0x50, 0x50, 0x58},
	NodeFrame: RGB{0x90, 0x90, 0x98}, TooltipBG: RGB{0xff, 0xff, 0xff}, LabelText: RGB{0x10, 0x10, 0x14}, Muted: RGB{0x40, 0x40, 0x48},
	Accent: RGB{0xb0, 0x4a, 0x00},
	LampOn: RGB{0xe6, 0x9f, 0x00}, LampHalf: RGB{0xf0, 0xd8, 0xa0}, LampOff: RGB{0xe4, 0xe4, 0xe4}, LampFrame: RGB{0x50, 0x50, 0x58},
	MarkMigrate: RGB{0xe6, 0x9f, 0x00}, MarkFree: RGB{0x00, 0x72, 0xb2}, MarkLastRun: RGB{0xcc, 0x79, 0xa7},
	ChartPSI: RGB{0xcc, 0x79, 0xa7}, ChartTrack: RGB{0xe8, 0xe8, 0xe6}, ChartTopLine: RGB{0xc8, 0xc8, 0xc8},
	Charts: [2]RGB{RGB{0xd5, 0x5e, 0x00}, RGB{0x00, 0x72, 0xb2}},
}

// Free is how free pages of a pageblock of type mt look: the type's
// colour over the background, so free against used reads as faint
// against full while the type stays recognisable.
func (s *Scheme) Free(mt mm.MigrateType) RGB {
	return mix(s.Background, s.Migrate[mt%mm.MIGRATE_TYPES], s.FreeMix, 100)
}

// PCP is how pages held on per-CPU lists look: between free and used.
func (s *Scheme) PCP(mt mm.MigrateType) RGB {
	return mix(s.Background, s.Migrate[mt%mm.MIGRATE_TYPES], s.PCPMix, 100)
}

// Used is how pages in use look: the type's full colour.
func (s *Scheme) Used(mt mm.MigrateType) RGB { return s.Migrate[mt%mm.MIGRATE_TYPES] }

// Page is the colour of one page in page view.
func (s *Scheme) Page(mt mm.MigrateType, st mm.PageState) RGB {
	switch st {
	case mm.PSReserved:
		return s.Reserved
	case mm.PSFree:
		return s.Free(mt)
	case mm.PSPCP:
		return s.PCP(mt)
	case mm.PSPinned:
		return s.Pinned
	}
	return s.Used(mt)
}

// FreeColor is Dark's Free.
func FreeColor(mt mm.MigrateType) RGB { return Dark.Free(mt) }

// PCPColor is Dark's PCP.
func PCPColor(mt mm.MigrateType) RGB { return Dark.PCP(mt) }

// UsedColor is Dark's Used.
func UsedColor(mt mm.MigrateType) RGB { return Dark.Used(mt) }

// PageColor is Dark's Page.
func PageColor(mt mm.MigrateType, st mm.PageState) RGB { return Dark.Page(mt, st) }
