package panel

import (
	"strings"
	"unicode/utf8"

	"github.com/vugu/vugu"
)

// T renders S as a text node inside a <span>. The panel shows everything
// that comes from the engine or the URL through T or Pre (or attributes),
// never through vg-html or vg-content, so no string is ever parsed as HTML.
type T struct {
	S     string
	Class string
	ID    string
}

// Build implements vugu.Builder.
func (c *T) Build(vgin *vugu.BuildIn) *vugu.BuildOut {
	return textElement("span", c.S, c.Class, c.ID)
}

// Pre renders S as text nodes inside a <pre> (textChunks).
type Pre struct {
	S     string
	Class string
	ID    string
}

// Build implements vugu.Builder.
func (c *Pre) Build(vgin *vugu.BuildIn) *vugu.BuildOut {
	return textElement("pre", c.S, c.Class, c.ID)
}

func textElement(tag, text, class, id string) *vugu.BuildOut {
	n := &vugu.VGNode{Type: vugu.ElementNode, Data: tag}
	if class != "" {
		n.Attr = append(n.Attr, vugu.VGAttribute{Key: "class", Val: class})
	}
	if id != "" {
		n.Attr = append(n.Attr, vugu.VGAttribute{Key: "id", Val: id})
	}
	for _, part := range textChunks(text, maxTextNode) {
		n.AppendChild(&vugu.VGNode{Type: vugu.TextNode, Data: part})
	}
	return &vugu.BuildOut{Out: []*vugu.VGNode{n}}
}

// maxTextNode is the most bytes one text node carries. Vugu's renderer
// passes each instruction through a 16 KiB buffer and refuses a longer
// one ("requested instruction does not fit in the buffer"), which stops
// the panel: the trace's 500 lines are about 75 KB.
const maxTextNode = 8 << 10

// textChunks cuts s into pieces of at most limit bytes, after a newline
// where there is one in the piece, never inside a UTF-8 sequence; their
// concatenation is s (the element's textContent). "" is one empty piece.
func textChunks(s string, limit int) []string {
	var out []string
	for len(s) > limit {
		cut := strings.LastIndexByte(s[:limit], '\n') + 1
		if cut == 0 {
			cut = limit
			for cut > 0 && !utf8.RuneStart(s[cut]) {
				cut--
			}
			if cut == 0 {
				cut = limit
			}
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	return append(out, s)
}
