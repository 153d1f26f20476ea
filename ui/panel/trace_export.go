package panel

// trace_export.go is the panel's trace downloads of the scenario's runs
// (trace-export.vugu): recording on or off, and each variant's trace up
// to the current time (app.Controller.WriteTrace).

import (
	"bytes"

	"github.com/vugu/vugu"

	"github.com/pagesim/pagesim/ui/app"
)

// TraceExport is the trace downloads' component.
type TraceExport struct {
	Backend Backend
	Host    ScriptHost
	Snap    *app.Snapshot

	on bool // recording asked for
}

func (c *TraceExport) toggle(e vugu.DOMEvent) {
	on := e.PropBool("target", "checked")
	c.on = on
	c.Backend.Do(func(ctl *app.Controller) { ctl.SetRecording(on) })
}

// download writes variant i's trace (or its report) on the simulation's
// goroutine and hands the file to the browser.
func (c *TraceExport) download(i int, report bool) {
	host := c.Host
	c.Backend.Do(func(ctl *app.Controller) {
		var b bytes.Buffer
		name, mime := ctl.TraceName(i)+".json", "application/json"
		var err error
		if report {
			name, mime = ctl.TraceName(i)+".txt", "text/plain"
			err = ctl.WriteTraceReport(i, &b)
		} else {
			err = ctl.WriteTrace(i, &b)
		}
		if err == nil && host != nil {
			host.Download(name, mime, b.Bytes())
		}
	})
}

// downloadMap saves the map as the canvas shows it, a PNG at the
// device's resolution (the view answers after its next frame).
func (c *TraceExport) downloadMap() {
	host := c.Host
	c.Backend.Do(func(ctl *app.Controller) {
		name := ctl.MapName()
		ctl.RequestMap(func(png []byte, err error) {
			if err == nil && host != nil {
				host.Download(name, "image/png", png)
			}
		})
	})
}

// downloadSeries saves every sampled series of the runs as CSV.
func (c *TraceExport) downloadSeries() {
	host := c.Host
	c.Backend.Do(func(ctl *app.Controller) {
		var b bytes.Buffer
		if err := ctl.WriteSeriesCSV(&b); err == nil && host != nil {
			host.Download(ctl.SeriesName(), "text/csv", b.Bytes())
		}
	})
}
