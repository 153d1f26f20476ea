package app

import (
	"strconv"
	"strings"

	"github.com/pagesim/pagesim/engine/mm"
)

// NameGFPBits adds the name of each hex remainder of a GFP mask that the
// kernel prints without one ("...|__GFP_THISNODE|0x1000000" becomes
// "...|__GFP_THISNODE|0x1000000 (___GFP_ONLY_COMPACT)"), for the page's
// reader; the kernel's own text (the trace's download) keeps the hex only.
//
// A hex remainder is 0x and lower-case hex digits not followed by a
// letter, digit or underscore, after a '|' or an opening parenthesis, or
// as the whole of a gfp_flags= or gfp_mask= field (never a pfn= or
// mode: number). A scan, not a regular expression: the panel names the
// bits of its 500 trace lines at every snapshot, and a jump on the
// timeline spent 4% of its CPU in the expression's matching.
func NameGFPBits(s string) string {
	var b strings.Builder
	done := 0
	for i := 0; ; {
		k := strings.Index(s[i:], "0x")
		if k < 0 {
			break
		}
		at := i + k
		i = at + 2
		if !(at > 0 && (s[at-1] == '|' || s[at-1] == '(') ||
			strings.HasSuffix(s[:at], "gfp_flags=") || strings.HasSuffix(s[:at], "gfp_mask=")) {
			continue
		}
		end := at + 2
		for end < len(s) && (s[end] >= '0' && s[end] <= '9' || s[end] >= 'a' && s[end] <= 'f') {
			end++
		}
		if end == at+2 || end < len(s) && isWordByte(s[end]) {
			continue
		}
		i = end
		v, err := strconv.ParseUint(s[at+2:end], 16, 32)
		if err != nil {
			continue
		}
		name := mm.GFPHexName(uint32(v))
		if name == "" {
			continue
		}
		b.WriteString(s[done:end])
		b.WriteString(" (" + name + ")")
		done = end
	}
	if done == 0 {
		return s
	}
	b.WriteString(s[done:])
	return b.String()
}

func isWordByte(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
}
