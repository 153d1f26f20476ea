package mapview

// font.go draws text into the pixel buffer with Go Mono (the monospaced
// face of golang.org/x/image/font/gofont), rasterized by x/image's
// opentype at the size each label needs in device pixels, so text is as
// sharp at devicePixelRatio 2 or 3 as the map and can be made large for a
// projector. Every label stays part of the one image the page uploads: no
// draw call per glyph, and the same pixels natively and in the browser
// (small glyphs are rasterized in x/image/vector's fixed-point arithmetic,
// hinting in the font's integer units).
//
// A face is made once per size: its 95 printable ASCII glyphs are
// rasterized into alpha masks then, and the face is read only afterwards,
// so drawing takes no lock. Anything outside printable ASCII prints as '?'.

import (
	"image"
	"math"
	"sync"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/gomono"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
)

// face is Go Mono at one size, in device pixels.
type face struct {
	// px is the size (the em) in device pixels.
	px int
	// adv is every glyph's advance; lineH the height of a line, ascent
	// the baseline's distance from its top.
	adv, lineH, ascent int
	glyphs             [95]glyphMask
}

// glyphMask is one glyph's coverage.
type glyphMask struct {
	// dx, dy place the mask's top-left corner relative to the pen on
	// the baseline.
	dx, dy, w, h int
	a            []uint8
}

var (
	fontOnce sync.Once
	fontErr  error
	goMono   *opentype.Font
	facesMu  sync.Mutex
	faces    = map[int]*face{}
)

// maxFacePx bounds a face's size (a 3x setting at devicePixelRatio 3 on a
// headline is under 300 px).
const maxFacePx = 400

// faceFor returns the face of size px (at least 6, at most maxFacePx).
func faceFor(px int) *face {
	px = min(max(px, 6), maxFacePx)
	facesMu.Lock()
	defer facesMu.Unlock()
	if f, ok := faces[px]; ok {
		return f
	}
	f := newFace(px)
	faces[px] = f
	return f
}

func newFace(px int) *face {
	fontOnce.Do(func() { goMono, fontErr = opentype.Parse(gomono.TTF) })
	if fontErr != nil {
		panic("mapview: the built-in Go Mono font does not parse: " + fontErr.Error())
	}
	ff, err := opentype.NewFace(goMono, &opentype.FaceOptions{Size: float64(px), DPI: 72, Hinting: font.HintingFull})
	if err != nil {
		panic("mapview: Go Mono at " + itoa(px) + " px: " + err.Error())
	}
	defer ff.Close()
	m := ff.Metrics()
	f := &face{px: px, ascent: m.Ascent.Ceil()}
	f.lineH = max(int(math.Ceil(float64(px)*1.3)), m.Ascent.Ceil()+m.Descent.Ceil()+1)
	// The line's spare height goes half above the ascent, half below
	// the descent.
	f.ascent += (f.lineH - m.Ascent.Ceil() - m.Descent.Ceil()) / 2
	if a, ok := ff.GlyphAdvance('0'); ok {
		f.adv = a.Round()
	}
	for i := range f.glyphs {
		dr, mask, mp, _, ok := ff.Glyph(fixed.Point26_6{}, rune(' '+i))
		if !ok || dr.Empty() {
			continue
		}
		g := &f.glyphs[i]
		g.dx, g.dy, g.w, g.h = dr.Min.X, dr.Min.Y, dr.Dx(), dr.Dy()
		g.a = make([]uint8, g.w*g.h)
		alpha, _ := mask.(*image.Alpha)
		for y := 0; y < g.h; y++ {
			for x := 0; x < g.w; x++ {
				var a uint8
				if alpha != nil {
					a = alpha.AlphaAt(mp.X+x, mp.Y+y).A
				} else {
					_, _, _, a16 := mask.At(mp.X+x, mp.Y+y).RGBA()
					a = uint8(a16 >> 8)
				}
				g.a[y*g.w+x] = a
			}
		}
	}
	return f
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	neg := n < 0
	if neg {
		n = -n
	}
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}

// width is the width of s in device pixels.
func (f *face) width(s string) int { return len(s) * f.adv }

// glyph returns the mask of character c.
func (f *face) glyph(c byte) *glyphMask {
	if c < ' ' || c > '~' {
		c = '?'
	}
	return &f.glyphs[c-' ']
}

// blend mixes colour col over pixel p by coverage a (0-255). Coverage
// within 3% of full is full: a stem the rasterizer covers 252/255 is solid.
func blend(p, col uint32, a uint32) uint32 {
	if a >= 248 {
		return col
	}
	ia := 255 - a
	mix := func(sh uint) uint32 {
		return ((col>>sh&0xff)*a + (p>>sh&0xff)*ia + 127) / 255 << sh
	}
	return mix(0) | mix(8) | mix(16) | 0xff<<24
}

// drawText writes s with its line's top-left corner at (x, y) in colour
// col, clipped to clip.
func (f *face) drawText(px []uint32, stride int, x, y int, s string, col uint32, clip Rect) {
	base := y + f.ascent
	for i := 0; i < len(s); i++ {
		pen := x + i*f.adv
		if pen >= clip.X1 {
			return
		}
		g := f.glyph(s[i])
		for j := 0; j < g.h; j++ {
			yy := base + g.dy + j
			if yy < clip.Y0 || yy >= clip.Y1 {
				continue
			}
			row := px[yy*stride:]
			for k := 0; k < g.w; k++ {
				xx := pen + g.dx + k
				if a := g.a[j*g.w+k]; a != 0 && xx >= clip.X0 && xx < clip.X1 {
					row[xx] = blend(row[xx], col, uint32(a))
				}
			}
		}
	}
}

// TextPx is the size of the page's map text at the 1x setting, in CSS
// pixels: 12 normally, 16 in presentation mode (PresentTextPx).
const (
	TextPx        = 12
	PresentTextPx = 16
)

// TextBox draws lines of text, size px device pixels, on a filled box with
// a margin of pad pixels and returns its size and RGBA pixels (for the
// hover tooltip, which the page draws over the map without redrawing it).
func TextBox(lines []string, pad, px int, fg, bg RGB) (w, h int, pix []byte) {
	f := faceFor(px)
	for _, l := range lines {
		w = max(w, f.width(l))
	}
	w += 2 * pad
	h = len(lines)*f.lineH + 2*pad
	pix = make([]byte, 4*w*h)
	buf := make([]uint32, w*h)
	for i := range buf {
		buf[i] = bg.pixel()
	}
	clip := Rect{0, 0, w, h}
	for i, l := range lines {
		f.drawText(buf, w, pad, pad+i*f.lineH, l, fg.pixel(), clip)
	}
	for i, p := range buf {
		pix[4*i], pix[4*i+1], pix[4*i+2], pix[4*i+3] = byte(p), byte(p>>8), byte(p>>16), byte(p>>24)
	}
	return w, h, pix
}
