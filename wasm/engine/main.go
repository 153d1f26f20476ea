//go:build js && wasm

// Command engine is the page's engine worker's WebAssembly binary: the
// engine and ui/app's worker jobs, without Ebiten or Vugu. It runs in a
// Web Worker (static/engine-worker.js), takes jobs as messages
// ({op: "run", job: JSON of app.WorkerJob} and {op: "cancel", id}), runs
// each flat out, and posts {id, now} as it goes and {id, now, over, err,
// payload} at the end, the payload (app.RunWorkerJob's bytes) as a
// transferred ArrayBuffer.
package main

import (
	"encoding/json"
	"sync"
	"syscall/js"

	"github.com/pagesim/pagesim/engine/sim"
	"github.com/pagesim/pagesim/ui/app"
)

var (
	mu       sync.Mutex
	canceled = map[uint64]bool{}
)

func main() {
	self := js.Global()
	cat, catErr := app.DefaultCatalog()
	handler := js.FuncOf(func(this js.Value, args []js.Value) any {
		msg := args[0]
		switch msg.Get("op").String() {
		case "run":
			var job app.WorkerJob
			if err := json.Unmarshal([]byte(msg.Get("job").String()), &job); err != nil {
				post(self, job.ID, 0, true, "the job does not read: "+err.Error(), nil)
				return nil
			}
			if catErr != nil {
				post(self, job.ID, 0, true, "the scenario list is broken: "+catErr.Error(), nil)
				return nil
			}
			go run(self, cat, job)
		case "cancel":
			mu.Lock()
			canceled[uint64(msg.Get("id").Float())] = true
			mu.Unlock()
		}
		return nil
	})
	self.Set("pagesimEngine", handler)
	select {}
}

func run(self js.Value, cat *app.Catalog, job app.WorkerJob) {
	var now sim.Time
	payload, err := app.RunWorkerJob(cat, job, func(t sim.Time) bool {
		now = t
		post(self, job.ID, t, false, "", nil)
		yield(self)
		mu.Lock()
		defer mu.Unlock()
		return !canceled[job.ID]
	})
	mu.Lock()
	delete(canceled, job.ID)
	mu.Unlock()
	if err != nil {
		post(self, job.ID, now, true, err.Error(), nil)
		return
	}
	post(self, job.ID, job.Until, true, "", payload)
}

// yield waits for self.pagesimYield's promise: the messages queued
// meanwhile (a cancel) run.
func yield(self js.Value) {
	ch := make(chan struct{})
	f := js.FuncOf(func(js.Value, []js.Value) any { close(ch); return nil })
	self.Call("pagesimYield").Call("then", f)
	<-ch
	f.Release()
}

func post(self js.Value, id uint64, now sim.Time, over bool, errText string, payload []byte) {
	m := map[string]any{"id": float64(id), "now": float64(now), "over": over}
	if errText != "" {
		m["err"] = errText
	}
	if payload == nil {
		self.Call("postMessage", m)
		return
	}
	arr := js.Global().Get("Uint8Array").New(len(payload))
	js.CopyBytesToJS(arr, payload)
	buf := arr.Get("buffer")
	m["payload"] = buf
	self.Call("postMessage", m, []any{buf})
}
