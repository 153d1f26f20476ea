//go:build js && wasm

package jsbridge

import (
	"sync"
	"syscall/js"
)

// EngineWorkers are the page's engine workers: Web Workers running
// static/engine-worker.js (the engine-only binary), one per job under
// way, kept for the next job when idle. The jobs and replies are
// ui/app's (WorkerJob, WorkerReply); this side only carries them:
// a job as JSON text, a reply's payload as a transferred ArrayBuffer
// copied into Go's memory.
type EngineWorkers struct {
	global js.Value
	script string
	mu     sync.Mutex
	idle   []*engineWorker
	byJob  map[uint64]*engineWorker
	// replies arrived since the last Poll.
	replies []EngineReply
}

type engineWorker struct {
	w      js.Value
	job    uint64 // the job it runs (0: idle)
	failed string // why it cannot run jobs
	funcs  []js.Func
}

// EngineReply is a worker's message about a job.
type EngineReply struct {
	ID   uint64
	Now  int64
	Over bool
	Err  string
	// Size is the payload's length; CopyPayload copies its bytes from
	// off into dst. The payload stays in JavaScript's memory until it is
	// copied, in pieces as the caller likes (a run at scale 1 is 276 MB:
	// copied at once, in the message's handler, it held the main thread
	// for seconds).
	Size        int
	CopyPayload func(dst []byte, off int)
}

// NewEngineWorkers returns the pool of workers running script, or nil
// when the browser has no Web Workers (the page then runs everything on
// its main thread).
func (b *Bridge) NewEngineWorkers(script string) *EngineWorkers {
	if b.global.Get("Worker").Type() != js.TypeFunction {
		return nil
	}
	return &EngineWorkers{global: b.global, script: script, byJob: map[uint64]*engineWorker{}}
}

// Start sends job id (its JSON text) to an idle worker, or a new one.
func (p *EngineWorkers) Start(id uint64, jobJSON string) {
	p.mu.Lock()
	var w *engineWorker
	if n := len(p.idle); n > 0 {
		w, p.idle = p.idle[n-1], p.idle[:n-1]
	}
	p.mu.Unlock()
	if w == nil {
		var failed string
		w, failed = p.spawn()
		if failed != "" {
			p.reply(EngineReply{ID: id, Over: true, Err: failed})
			return
		}
	}
	p.mu.Lock()
	w.job = id
	p.byJob[id] = w
	p.mu.Unlock()
	w.w.Call("postMessage", map[string]any{"op": "run", "job": jobJSON})
}

// Cancel stops job id; its worker goes back to the idle ones when it has
// stopped.
func (p *EngineWorkers) Cancel(id uint64) {
	p.mu.Lock()
	w := p.byJob[id]
	p.mu.Unlock()
	if w != nil {
		w.w.Call("postMessage", map[string]any{"op": "cancel", "id": float64(id)})
	}
}

// Poll returns the replies that arrived since the last call.
func (p *EngineWorkers) Poll() []EngineReply {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.replies
	p.replies = nil
	return out
}

func (p *EngineWorkers) reply(r EngineReply) {
	p.mu.Lock()
	p.replies = append(p.replies, r)
	p.mu.Unlock()
}

// spawn starts a worker, or says why it could not.
func (p *EngineWorkers) spawn() (w *engineWorker, failed string) {
	defer func() {
		if r := recover(); r != nil {
			w, failed = nil, "the engine worker could not start"
			if e, ok := r.(js.Error); ok {
				failed += ": " + e.Error()
			}
		}
	}()
	w = &engineWorker{w: p.global.Get("Worker").New(p.script)}
	onMessage := js.FuncOf(func(this js.Value, args []js.Value) any {
		d := args[0].Get("data")
		if f := d.Get("failed"); f.Truthy() {
			p.fail(w, "the engine worker could not start: "+f.String())
			return nil
		}
		r := EngineReply{ID: uint64(d.Get("id").Float()), Now: int64(d.Get("now").Float()), Over: d.Get("over").Truthy()}
		if e := d.Get("err"); e.Truthy() {
			r.Err = e.String()
		}
		if buf := d.Get("payload"); buf.Truthy() {
			arr := p.global.Get("Uint8Array").New(buf)
			r.Size = arr.Get("length").Int()
			r.CopyPayload = func(dst []byte, off int) {
				js.CopyBytesToGo(dst, arr.Call("subarray", off, off+len(dst)))
			}
		}
		if r.Over {
			p.mu.Lock()
			if p.byJob[r.ID] == w {
				delete(p.byJob, r.ID)
				w.job = 0
				p.idle = append(p.idle, w)
			}
			p.mu.Unlock()
		}
		p.reply(r)
		return nil
	})
	onError := js.FuncOf(func(this js.Value, args []js.Value) any {
		msg := "the engine worker failed"
		if m := args[0].Get("message"); m.Truthy() {
			msg += ": " + m.String()
		}
		p.fail(w, msg)
		return nil
	})
	w.funcs = []js.Func{onMessage, onError}
	w.w.Set("onmessage", onMessage)
	w.w.Set("onerror", onError)
	return w, ""
}

// fail ends w: its job is over with the error, and it runs no other.
func (p *EngineWorkers) fail(w *engineWorker, why string) {
	p.mu.Lock()
	w.failed = why
	id := w.job
	delete(p.byJob, id)
	for i, x := range p.idle {
		if x == w {
			p.idle = append(p.idle[:i], p.idle[i+1:]...)
			break
		}
	}
	p.mu.Unlock()
	// Its callbacks stay: one of them may be the caller.
	w.w.Call("terminate")
	if id != 0 {
		p.reply(EngineReply{ID: id, Over: true, Err: why})
	}
}
