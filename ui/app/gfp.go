package app

import (
	"regexp"
	"strconv"

	"github.com/pagesim/pagesim/engine/mm"
)

// gfpHex finds a hex remainder in a GFP mask as %pGg prints it: after a
// '|' or an opening parenthesis, or as the whole of a gfp_flags= or
// gfp_mask= field (never a pfn= or mode: number).
var gfpHex = regexp.MustCompile(`(\||\(|gfp_flags=|gfp_mask=)0x([0-9a-f]+)\b`)

// NameGFPBits adds the name of each hex remainder of a GFP mask that the
// kernel prints without one ("...|__GFP_THISNODE|0x1000000" becomes
// "...|__GFP_THISNODE|0x1000000 (___GFP_ONLY_COMPACT)"), for the page's
// reader; the kernel's own text (the trace's download) keeps the hex only.
func NameGFPBits(s string) string {
	return gfpHex.ReplaceAllStringFunc(s, func(m string) string {
		sub := gfpHex.FindStringSubmatch(m)
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
