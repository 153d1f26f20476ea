package panel

import "github.com/vugu/vugu"

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

// Pre renders S as a text node inside a <pre>.
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
	n.AppendChild(&vugu.VGNode{Type: vugu.TextNode, Data: text})
	return &vugu.BuildOut{Out: []*vugu.VGNode{n}}
}
