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
var MigrateColors = [mm.MigrateTypes]RGB{
	mm.MigrateUnmovable:   {0xd5, 0x5e, 0x00}, // vermillion
	mm.MigrateMovable:     {0x00, 0x72, 0xb2}, // blue
	mm.MigrateReclaimable: {0x00, 0x9e, 0x73}, // bluish green
	mm.MigrateHighAtomic:  {0xcc, 0x79, 0xa7}, // reddish purple
	mm.MigrateCMA:         {0xf0, 0xe4, 0x42}, // yellow
	mm.MigrateIsolate:     {0xe6, 0x9f, 0x00}, // orange
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

// FreeColor is how free pages of a pageblock of type mt look: the type's
// colour darkened, so free versus used reads as dark versus bright while
// the type stays recognisable.
func FreeColor(mt mm.MigrateType) RGB {
	return mix(Background, MigrateColors[mt%mm.MigrateTypes], 30, 100)
}

// PCPColor is how pages held on per-CPU lists look: between free and used.
func PCPColor(mt mm.MigrateType) RGB {
	return mix(Background, MigrateColors[mt%mm.MigrateTypes], 60, 100)
}

// UsedColor is how pages in use look: the type's full colour.
func UsedColor(mt mm.MigrateType) RGB { return MigrateColors[mt%mm.MigrateTypes] }

// PageColor is the colour of one page in page view.
func PageColor(mt mm.MigrateType, st mm.PageState) RGB {
	switch st {
	case mm.PSReserved:
		return Reserved
	case mm.PSFree:
		return FreeColor(mt)
	case mm.PSPCP:
		return PCPColor(mt)
	case mm.PSPinned:
		return Pinned
	}
	return UsedColor(mt)
}
