package app

import (
	"math/rand"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pagesim/pagesim/engine/mm"
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

// The scan names what the regular expression it replaced named, on lines
// built at random from the pieces of the kernel's masks and fields.
func TestNameGFPBitsMatchesItsRegularExpression(t *testing.T) {
	re := regexp.MustCompile(`(\||\(|gfp_flags=|gfp_mask=)0x([0-9a-f]+)\b`)
	byRE := func(s string) string {
		return re.ReplaceAllStringFunc(s, func(m string) string {
			sub := re.FindStringSubmatch(m)
			v, err := strconv.ParseUint(sub[2], 16, 32)
			if err != nil {
				return m
			}
			if name := mm.GFPHexName(uint32(v)); name != "" {
				return m + " (" + name + ")"
			}
			return m
		})
	}
	pieces := []string{"|", "(", ")", " ", "gfp_flags=", "gfp_mask=", "pfn=", "mode:", "0x", "0x1000000", "0x2000000", "0x100000000",
		"1000000", "a", "g", "_", "Z", "GFP_KERNEL", "__GFP_THISNODE", "0x1000000g", "x", "0"}
	rnd := rand.New(rand.NewSource(1))
	for range 20000 {
		var b strings.Builder
		for range rnd.Intn(12) {
			b.WriteString(pieces[rnd.Intn(len(pieces))])
		}
		s := b.String()
		require.Equal(t, byRE(s), NameGFPBits(s), "%q", s)
	}
}
