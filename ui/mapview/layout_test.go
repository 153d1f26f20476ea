package mapview

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/sim"
)

// hostPanels are n columns as the page draws thp-thisnode at its end: a
// two-node x86 host, the longest variant name, four phases' results and
// the three charts with nine-digit totals.
func hostPanels(t testing.TB, n int) []Panel {
	t.Helper()
	cfg, err := mm.X86Layout(2*983<<20, 2, 8)
	require.NoError(t, err)
	m, err := mm.NewMachine(cfg)
	require.NoError(t, err)
	pts := []Point{{T: sim.Second, V: 12.5}, {T: 2 * sim.Second, V: 99.9}}
	var ps []Panel
	for i := 0; i < n; i++ {
		ps = append(ps, Panel{
			Title: []string{"drop-thisnode", "only-compact", "upstream", "modern"}[i%4], Src: m,
			Now: 11234567 * sim.Microsecond, Phase: "4/4: 42 GB", PhaseStart: 9876543 * sim.Microsecond, Phases: 4,
			Results: []string{"30 GB: 4.94 GB/s", "34 GB: 1.04 GB/s", "38 GB: 0.53 GB/s", "42 GB: 0.38 GB/s"},
			Charts: []Chart{{Name: "psi10", Unit: "%", Points: pts},
				{Name: "allocstall_movable", Unit: "/s", Counter: 1, Total: 123456789, Points: pts},
				{Name: "pgscan_direct", Unit: "/s", Counter: 2, Total: 713085769, Points: pts}},
		})
	}
	return ps
}

// From a 960-pixel laptop to a 2560-pixel monitor, with one to four
// variants side by side, no text is cut: titles wrap, node rows split and
// charts stack as the columns narrow. At phone widths the page shows one
// variant at a time, which fits too; and presentation mode's larger text
// fits a 1280x720 projector.
func TestNoTextIsCutFromPhoneToWideMonitor(t *testing.T) {
	type screen struct {
		w, h, cols int
		present    bool
		embed      bool // the embed draws no charts
	}
	var screens []screen
	for _, w := range []int{960, 1100, 1280, 1440, 1680, 1920, 2560} {
		for cols := 1; cols <= 4; cols++ {
			// The panel takes clamp(320, 30vw, 544) px beside the map.
			screens = append(screens, screen{w - min(max(320, w*3/10), 544), 800, cols, false, false})
		}
	}
	// A laptop window 600 pixels high.
	for cols := 1; cols <= 4; cols++ {
		screens = append(screens, screen{960 - 320, 600, cols, false, false})
	}
	for _, w := range []int{390, 420} {
		screens = append(screens, screen{w, 500, 1, false, false})
	}
	// Presentation mode on a 1280x720 or 1920x1080 projector, less its
	// thin bar; an embed of 960x540 with its control strip.
	for cols := 1; cols <= 3; cols++ {
		screens = append(screens, screen{1280, 720 - 44, cols, true, false}, screen{1920, 1080 - 44, cols, true, false})
	}
	for cols := 1; cols <= 4; cols++ {
		screens = append(screens, screen{960, 540 - 40, cols, false, true})
	}
	for _, s := range screens {
		for _, scale := range []float64{1, 2} {
			t.Run(fmt.Sprintf("%dx%d %d columns present=%v embed=%v at %gx", s.w, s.h, s.cols, s.present, s.embed, scale), func(t *testing.T) {
				r := New(int(float64(s.w)*scale), int(float64(s.h)*scale))
				r.SetScale(scale)
				r.SetText(1, s.present)
				ps := hostPanels(t, s.cols)
				if s.embed {
					for i := range ps {
						ps[i].Charts = nil
					}
				}
				r.Render(ps)
				assert.Empty(t, r.Clipped)
				for _, l := range r.Labels {
					assert.GreaterOrEqual(t, l.Size, r.TextCSS(), "no text is smaller than the setting: %q", l.Text)
				}
				_, ok := labelAt(r, "42 GB: 0.38 GB/s")
				assert.True(t, ok, "every column writes its results")
				_, one := labelAt(r, "pgscan_direct 713085769")
				_, total := labelAt(r, "713085769")
				assert.True(t, one || total || s.embed, "a counter's chart says its total (on a line of its own when narrow)")
			})
		}
	}
}

// The same link looks the same at devicePixelRatio 1, 2 and 3, only
// sharper: the layout is in CSS pixels.
func TestTheLayoutIsTheSameAtEveryDevicePixelRatio(t *testing.T) {
	ps := hostPanels(t, 3)
	var first *Raster
	for _, scale := range []float64{1, 2, 3, 1.5} {
		r := New(int(1000*scale), int(700*scale))
		r.SetScale(scale)
		r.Render(ps)
		if first == nil {
			first = r
			continue
		}
		assert.Equal(t, first.Layout(), r.Layout(), "scale %g", scale)
		assert.Equal(t, first.Cam, r.Cam)
		assert.Equal(t, first.PageView, r.PageView)
		require.Equal(t, len(first.Labels), len(r.Labels), "scale %g", scale)
		for i, l := range r.Labels {
			f := first.Labels[i]
			assert.Equal(t, f.Text, l.Text)
			assert.InDelta(t, float64(f.X), float64(l.X)/scale, 1, "%q x", l.Text)
			assert.InDelta(t, float64(f.Y), float64(l.Y)/scale, 1, "%q y", l.Text)
			assert.Equal(t, f.Size, l.Size)
		}
		// The map's tiles are where the 1x ones are, in CSS pixels.
		x1, y1, ok1 := first.BlockCenter(1, 600)
		x2, y2, ok2 := r.BlockCenter(1, 600)
		require.True(t, ok1 && ok2)
		assert.InDelta(t, float64(x1), float64(x2)/scale, 2)
		assert.InDelta(t, float64(y1), float64(y2)/scale, 2)
	}
	// At 2x, the fit zoom is no more than a CSS pixel per page: block
	// view, as at 1x (a 2x screen once switched to page view).
	assert.False(t, first.PageView)
}

func TestTheTextSizeSettingAndPresentationModeGrowTheText(t *testing.T) {
	ps := hostPanels(t, 1)
	for _, c := range []struct {
		size    int
		present bool
		want    float64
	}{{1, false, 12}, {2, false, 24}, {3, false, 36}, {1, true, 16}, {2, true, 32}} {
		r := New(2000, 1400)
		r.SetText(c.size, c.present)
		r.Render(ps)
		small := math.Inf(1)
		for _, l := range r.Labels {
			small = math.Min(small, l.Size)
		}
		assert.Equal(t, c.want, small, "%+v", c)
		l, ok := labelAt(r, "30 GB: 4.94 GB/s")
		require.True(t, ok)
		assert.Equal(t, 2*c.want, l.Size, "results are in large type")
	}
}

func TestTheTitleSaysThePhaseAndANewMachine(t *testing.T) {
	p := Panel{Title: "upstream", Phase: "2/4: 34 GB", PhaseStart: 1234567 * sim.Microsecond, Now: 2 * sim.Second, Phases: 4}
	assert.Equal(t, []string{"upstream", "2/4: 34 GB (a new machine since t = 1.235 s)", "t = 2.000 s"}, titleParts(p))
	p.Done = true
	assert.Equal(t, []string{"upstream", "done", "t = 2.000 s"}, titleParts(p))
	assert.Equal(t, []string{"upstream  done", "t = 2.000 s"}, wrapParts(titleParts(p), 16))
	assert.Equal(t, []string{"a", "new", "machine"}, wrapParts([]string{"a new machine"}, 3))
}
