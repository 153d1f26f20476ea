package mapview

// font.go draws text into the pixel buffer with a fixed 6x13 bitmap font
// (the X11 misc-fixed face of golang.org/x/image/font/basicfont), so every
// label is part of the one image the page uploads: no draw call per glyph,
// and the same pixels natively and in the browser.

import (
	"image"

	"golang.org/x/image/font/basicfont"
)

const (
	// CharW is the advance of one character, in device pixels.
	CharW = 7
	// LineH is the height of a line of text.
	LineH = 16
	// glyphW and glyphH are a glyph's cell (6x13; the advance adds a
	// blank column).
	glyphW = 6
	glyphH = 13
	// textTop is the gap above a glyph cell in its line.
	textTop = 2
)

// glyphs holds the printable ASCII glyphs (' ' to '~') as bit rows, the
// leftmost pixel in bit 0; glyphs[95] is the replacement for anything
// else.
var glyphs [96][glyphH]uint8

func init() {
	f := basicfont.Face7x13
	mask := f.Mask.(*image.Alpha)
	h := f.Ascent + f.Descent
	for _, rg := range f.Ranges {
		for r := rg.Low; r < rg.High; r++ {
			i := int(r - ' ')
			if r == '\ufffd' {
				i = 95
			}
			if i < 0 || i >= len(glyphs) {
				continue
			}
			y0 := (int(r-rg.Low) + rg.Offset) * h
			for y := 0; y < glyphH && y < h; y++ {
				var row uint8
				for x := 0; x < glyphW; x++ {
					if mask.AlphaAt(x, y0+y).A >= 0x80 {
						row |= 1 << x
					}
				}
				glyphs[i][y] = row
			}
		}
	}
}

// glyph returns the bit rows of character c.
func glyph(c byte) *[glyphH]uint8 {
	if c < ' ' || c > '~' {
		return &glyphs[95]
	}
	return &glyphs[c-' ']
}

// TextWidth is the width of s in device pixels.
func TextWidth(s string) int { return len(s) * CharW }

// drawText writes s with its line's top-left corner at (x, y) in colour
// col, clipped to clip. Non-ASCII bytes print as the replacement glyph.
func drawText(px []uint32, stride int, x, y int, s string, col uint32, clip Rect) {
	for i := 0; i < len(s); i++ {
		gx := x + i*CharW
		if gx >= clip.X1 {
			return
		}
		if gx+glyphW <= clip.X0 {
			continue
		}
		g := glyph(s[i])
		for j := 0; j < glyphH; j++ {
			yy := y + textTop + j
			if yy < clip.Y0 || yy >= clip.Y1 || g[j] == 0 {
				continue
			}
			row := px[yy*stride:]
			for b := 0; b < glyphW; b++ {
				if xx := gx + b; g[j]&(1<<b) != 0 && xx >= clip.X0 && xx < clip.X1 {
					row[xx] = col
				}
			}
		}
	}
}

// TextBox draws lines of text on a filled box with a margin of pad pixels
// and returns its size and RGBA pixels (for the hover tooltip, which the
// page draws over the map without redrawing it).
func TextBox(lines []string, pad int, fg, bg RGB) (w, h int, pix []byte) {
	for _, l := range lines {
		w = max(w, TextWidth(l))
	}
	w += 2 * pad
	h = len(lines)*LineH + 2*pad
	pix = make([]byte, 4*w*h)
	px := make([]uint32, w*h)
	for i := range px {
		px[i] = bg.pixel()
	}
	clip := Rect{0, 0, w, h}
	for i, l := range lines {
		drawText(px, w, pad, pad+i*LineH, l, fg.pixel(), clip)
	}
	for i, p := range px {
		pix[4*i], pix[4*i+1], pix[4*i+2], pix[4*i+3] = byte(p), byte(p>>8), byte(p>>16), byte(p>>24)
	}
	return w, h, pix
}
