package panel

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

// A trace of 500 lines once stopped the panel: vugu refuses a text node
// longer than its 16 KiB instruction buffer.
func TestALongTextIsCutIntoNodesThatFitVugusBuffer(t *testing.T) {
	line := "qemu-1234 [000] ..... 1.234567: mm_page_alloc: page=0x1 pfn=0x1 order=9 migratetype=1 gfp_flags=GFP_TRANSHUGE|__GFP_THISNODE …\n"
	text := strings.Repeat(line, 500)
	out := textElement("pre", text, "", "trace").Out[0]
	var got strings.Builder
	nodes := 0
	for c := out.FirstChild; c != nil; c = c.NextSibling {
		nodes++
		assert.LessOrEqual(t, len(c.Data), maxTextNode)
		assert.True(t, utf8.ValidString(c.Data), "no piece cuts a character")
		assert.True(t, strings.HasSuffix(c.Data, "\n"), "pieces end at a line's end")
		got.WriteString(c.Data)
	}
	assert.Greater(t, nodes, len(text)/maxTextNode)
	assert.Equal(t, text, got.String(), "the element's text is the whole text")

	for _, c := range []struct {
		s     string
		limit int
		want  []string
	}{
		{"", 4, []string{""}},
		{"abcdefghij", 4, []string{"abcd", "efgh", "ij"}},
		{"ab\ncdefg", 4, []string{"ab\n", "cdef", "g"}},
		{"aé€b", 4, []string{"aé", "€b"}},
	} {
		assert.Equal(t, c.want, textChunks(c.s, c.limit), "%q", c.s)
	}
}
