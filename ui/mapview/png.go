package mapview

import (
	"image"
	"image/png"
	"io"
)

// PNG writes what the last Render drew as a PNG image: the canvas's
// pixels at the device's resolution (W x H), every pixel opaque. The
// hover tooltip, drawn over the canvas as an image of its own, is not
// in it.
func (r *Raster) PNG(w io.Writer) error {
	img := &image.RGBA{Pix: r.Pix, Stride: 4 * r.W, Rect: image.Rect(0, 0, r.W, r.H)}
	return (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(w, img)
}
