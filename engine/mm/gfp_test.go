package mm

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The kernel's %pGg output for the masks the seeds show (format_flags over
// __def_gfpflag_names: composites first, single bits in bit order).
func TestGFPPrintsAsTheKernelsPGg(t *testing.T) {
	cases := []struct {
		gfp  GFP
		want string
	}{
		{GFP_KERNEL, "GFP_KERNEL"},
		{GFP_TRANSHUGE, "GFP_TRANSHUGE"},
		{GFP_TRANSHUGE_LIGHT, "GFP_TRANSHUGE_LIGHT"},
		{GFP_TRANSHUGE | __GFP_NORETRY | __GFP_THISNODE, "GFP_TRANSHUGE|__GFP_NORETRY|__GFP_THISNODE"},
		{GFP_TRANSHUGE_LIGHT | __GFP_KSWAPD_RECLAIM, "GFP_TRANSHUGE_LIGHT|__GFP_KSWAPD_RECLAIM"},
		{GFP_HIGHUSER_MOVABLE | __GFP_ZERO, "GFP_HIGHUSER_MOVABLE|__GFP_ZERO"},
		{GFP_NOFS | __GFP_HIGHMEM | __GFP_MOVABLE | __GFP_WRITE | __GFP_NOWARN | __GFP_NORETRY | __GFP_COMP | __GFP_HARDWALL,
			"GFP_NOFS|__GFP_HIGHMEM|__GFP_MOVABLE|__GFP_WRITE|__GFP_NOWARN|__GFP_NORETRY|__GFP_COMP|__GFP_HARDWALL"},
		{GFP_ATOMIC | __GFP_DMA, "GFP_ATOMIC|GFP_DMA"},
		{__GFP_HIGH, "__GFP_HIGH"},
		{GFP_NOWAIT, "GFP_NOWAIT"},
		{GFP_TRANSHUGE | __GFP_THISNODE | __GFP_ONLY_COMPACT, "GFP_TRANSHUGE|__GFP_NORETRY|__GFP_THISNODE|0x1000000"},
		{0, "none"},
	}
	for _, c := range cases {
		t.Run(c.want, func(t *testing.T) {
			assert.Equal(t, c.want, c.gfp.String())
			back, err := ParseGFP(c.want)
			require.NoError(t, err)
			assert.Equal(t, c.gfp, back, "parsing the printed mask gives it back")
		})
	}
}

func TestGFPZoneAndMigratetype(t *testing.T) {
	assert.Equal(t, ZONE_MOVABLE, gfpZone(GFP_HIGHUSER_MOVABLE), "GFP_HIGHUSER_MOVABLE may use ZONE_MOVABLE")
	assert.Equal(t, ZONE_NORMAL, gfpZone(GFP_KERNEL))
	assert.Equal(t, ZONE_DMA32, gfpZone(GFP_KERNEL|__GFP_DMA32))
	assert.Equal(t, ZONE_DMA, gfpZone(GFP_KERNEL|__GFP_DMA))
	assert.Equal(t, MIGRATE_MOVABLE, gfpMigratetype(GFP_TRANSHUGE))
	assert.Equal(t, MIGRATE_RECLAIMABLE, gfpMigratetype(GFP_KERNEL|__GFP_RECLAIMABLE))
	assert.Equal(t, MIGRATE_UNMOVABLE, gfpMigratetype(GFP_KERNEL))
	assert.Equal(t, "ALLOC_WMARK_MIN|ALLOC_CPUSET|ALLOC_NOFRAGMENT|ALLOC_KSWAPD", (ALLOC_WMARK_MIN | ALLOC_CPUSET | ALLOC_NOFRAGMENT | ALLOC_KSWAPD).String())
}

func TestParseGFPRefusesUnknownFlags(t *testing.T) {
	for _, s := range []string{"GFP_KERNAL", "__GFP_NORETRY|bogus", "0xzz", "|"} {
		_, err := ParseGFP(s)
		assert.Error(t, err, s)
	}
}

func FuzzParseGFP(f *testing.F) {
	for _, s := range []string{"GFP_KERNEL", "GFP_TRANSHUGE|__GFP_NORETRY|__GFP_THISNODE", "0x1000000", "none", "", "GFP_NOFS|0x40"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		g, err := ParseGFP(s)
		if err != nil {
			return
		}
		// Whatever parses prints, and the print parses back to the same mask.
		out := g.String()
		back, err := ParseGFP(out)
		if err != nil || back != g {
			t.Fatalf("%q -> %#x -> %q -> %#x, %v", s, uint32(g), out, uint32(back), err)
		}
		if strings.Contains(out, "||") {
			t.Fatalf("malformed print %q", out)
		}
	})
}

func FuzzSysctlValues(f *testing.F) {
	for _, s := range []string{"vm.min_free_kbytes=67584", "vm.lowmem_reserve_ratio=256 256 32 0 0", "vm.defrag_mode=1", "vm.watermark_scale_factor=0", "vm.x=1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		name, value, _ := strings.Cut(s, "=")
		_ = ValidateSysctl(name, value) // must not panic
		var th THPSettings = DefaultTHPSettings()
		_ = th.SetKnob(name, value)
	})
}
