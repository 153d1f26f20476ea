//go:build browser && !(js && wasm)

package e2e

import (
	"bytes"
	"encoding/csv"
	"image"
	"image/png"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The map downloads as a PNG of what the canvas shows, at the device's
// resolution, and the runs' sampled series as CSV.
func TestTheMapDownloadsAsAPNGAndTheSeriesAsCSV(t *testing.T) {
	p := OpenAt(t, "v1/playground?mem=64&seed=3&x=5", 1000, 700, 2)
	p.Click("play")
	p.WaitJS(`JSON.parse(window.pagesimDebug()).nowNs > 2.2e9`)
	p.Click("play")
	d := p.WaitSettled()
	require.Equal(t, 2.0, d.Scale)
	down := t.TempDir()
	_, err := chromedp.CallBrowser(p.ctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{Behavior: browser.SetDownloadBehaviorBehaviorAllow, DownloadPath: down})
	require.NoError(t, err)

	p.Click("export-png")
	img, err := png.Decode(bytes.NewReader(waitFile(t, filepath.Join(down, "playground-map.png"))))
	require.NoError(t, err)
	assert.Equal(t, image.Rect(0, 0, d.W, d.H), img.Bounds(), "the canvas's size in device pixels")
	cssW := Eval[float64](p, `document.querySelector("canvas").getBoundingClientRect().width`)
	assert.InDelta(t, 2*cssW, float64(img.Bounds().Dx()), 1, "twice the CSS width at devicePixelRatio 2")
	colours := map[[4]uint32]bool{}
	for y := 0; y < d.H; y += 7 {
		for x := 0; x < d.W; x += 7 {
			r, g, b, a := img.At(x, y).RGBA()
			colours[[4]uint32{r, g, b, a}] = true
		}
	}
	assert.Greater(t, len(colours), 10, "the map, not a blank image")

	p.Click("export-csv")
	rows, err := csv.NewReader(bytes.NewReader(waitFile(t, filepath.Join(down, "playground-series.csv")))).ReadAll()
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(rows), 2)
	head := rows[0]
	require.Equal(t, []string{"variant", "t_s", "psi_some_avg10"}, head[:3])
	require.Equal(t, 0, (len(head)-3)%2, "a rate and a total per charted counter")
	// One row per sample: every 250 ms of simulated time up to the time
	// the page stands at.
	n := map[string]int{} // rows per variant
	ends := map[string][]string{}
	var variants []string
	for i, row := range rows[1:] {
		require.Len(t, row, len(head))
		ts, err := strconv.ParseFloat(row[1], 64)
		require.NoError(t, err)
		if n[row[0]] == 0 {
			variants = append(variants, row[0])
		}
		n[row[0]]++
		assert.InDelta(t, 0.25*float64(n[row[0]]), ts, 1e-9, "row %d", i+1)
		assert.InDelta(t, float64(d.NowNS)/1e9, ts, float64(d.NowNS)/1e9, "row %d", i+1)
		ends[row[0]] = row
	}
	assert.Equal(t, d.Columns, variants, "every variant's series, in the page's order")
	// The charts' labels carry each counter's total: each variant's last
	// row's.
	for _, v := range variants {
		assert.InDelta(t, float64(d.NowNS)/1e9, float64(n[v])*0.25, 0.25, "%s: up to the time shown", v)
		for k := 3; k < len(head); k += 2 {
			name := head[k+1]
			want := name + " " + ends[v][k+1]
			found := false
			for _, l := range d.Labels {
				found = found || strings.TrimSpace(l.Text) == want
			}
			assert.True(t, found, "%s: the chart of %s says %q", v, name, want)
		}
	}
}
