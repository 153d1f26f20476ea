package app

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestAFlagBitTheKernelPrintsInHexGetsItsName(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"GFP_TRANSHUGE|__GFP_THISNODE|0x1000000 order=9", "GFP_TRANSHUGE|__GFP_THISNODE|0x1000000 (___GFP_ONLY_COMPACT) order=9"},
		{"mode:0x1400ca(GFP_TRANSHUGE|0x1000000)", "mode:0x1400ca(GFP_TRANSHUGE|0x1000000 (___GFP_ONLY_COMPACT))"},
		{"gfp_flags=0x1000000 pid=3", "gfp_flags=0x1000000 (___GFP_ONLY_COMPACT) pid=3"},
		{"pfn=0x1000000 order=0", "pfn=0x1000000 order=0"},
		{"GFP_KERNEL|0x2000000", "GFP_KERNEL|0x2000000"},
		{"mode:0x1000000(none)", "mode:0x1000000(none)"},
	} {
		assert.Equal(t, c.want, NameGFPBits(c.in))
	}
}
