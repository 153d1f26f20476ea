package mapview

// DebugReport is what the page's window.pagesimDebug() reports (as JSON)
// for tests and measurements: ui/ebview fills it, the browser tests in
// ui/e2e read it.
type DebugReport struct {
	Frames   int     `json:"frames"`
	W        int     `json:"w"`
	H        int     `json:"h"`
	Scale    float64 `json:"scale"`
	Cam      Camera  `json:"cam"`
	Fit      float64 `json:"fit"`
	PageView bool    `json:"pageView"`
	Link     string  `json:"link"`
	NowNS    int64   `json:"nowNs"`
	Playing  bool    `json:"playing"`
	Ended    bool    `json:"ended"`
	// CaughtUpBy says how the last catch-up to a link's time was done
	// (app.Controller.CaughtUpBy: "workers", or "main thread" and why).
	CaughtUpBy string `json:"caughtUpBy"`
	// Progress is how far the catch-up to a link's time is (0..1), and
	// ReadBackMs the longest a worker's run took to read back on the
	// main thread (app.Controller.Progress, ReadBack).
	Progress   float64 `json:"progress"`
	ReadBackMs float64 `json:"readBackMs"`
	// SeekMs is how long the last jump on the timeline took to restore
	// and replay the runs (app.Controller.SeekTook), without drawing.
	SeekMs float64 `json:"seekMs"`
	// Checkpoints counts the first variant's checkpoints
	// (app.Controller.Checkpoints).
	Checkpoints int `json:"checkpoints"`
	// Settled is true when the clock is stopped, the runs have caught up
	// with it and the frame on the canvas shows their current state.
	Settled   bool   `json:"settled"`
	Restoring bool   `json:"restoring"`
	Version   uint64 `json:"version"`
	Gen       uint64 `json:"gen"`
	Pages     uint64 `json:"pages"`
	// FrameCPUms and FrameGapms are medians over the last frameWindow
	// frames: the Go work per frame, and the time between frames.
	FrameCPUms float64 `json:"frameCpuMs"`
	FrameGapms float64 `json:"frameGapMs"`
	// RasterMs is the median time of drawing the map into the pixel
	// buffer (Render) over the last frameWindow redraws.
	RasterMs float64 `json:"rasterMs"`
	// UploadMs is the median time of the WritePixels call (Go side; the
	// GPU work happens later, in the browser's compositor).
	UploadMs float64 `json:"uploadMs"`
	// PanelMs is how long the panel's last render took.
	PanelMs float64 `json:"panelMs"`
	// Hover is the tooltip's text ("" when none shows).
	Hover string `json:"hover"`
	// Redraws counts the frames that drew the screen; the others kept
	// the previous frame\'s pixels.
	Redraws int `json:"redraws"`
	Labels  []Label
	// TextPx is the size of the smallest text on the canvas, in CSS
	// pixels (the em); Clipped lists any text that did not fit.
	TextPx  float64  `json:"textPx"`
	Clipped []string `json:"clipped"`
	// Layout is the map's layout in CSS pixels, which is the same at
	// every devicePixelRatio.
	Layout Layout `json:"layout"`
	// Scheme names the colour scheme ("dark", "projector"); Columns
	// the variants drawn (one at a time at phone widths).
	Scheme  string   `json:"scheme"`
	Columns []string `json:"columns"`
}
