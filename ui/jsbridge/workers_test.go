//go:build js && wasm

package jsbridge

import (
	"syscall/js"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// installFakeWorker installs a Worker class on the global object that
// answers a run with its job text's bytes as the payload (transferred as
// an ArrayBuffer), a cancel with an error, and fails to start when its
// script is "missing.js". It counts the workers made in
// globalThis.workersMade.
func installFakeWorker(t *testing.T) {
	t.Helper()
	js.Global().Set("workersMade", 0)
	js.Global().Get("Function").New(`
globalThis.Worker = class {
  constructor(script) {
    globalThis.workersMade++;
    this.script = script;
    if (script === "missing.js") setTimeout(() => this.onerror({message: "no such script"}), 0);
  }
  postMessage(m) {
    setTimeout(() => {
      if (m.op === "run") {
        const b = new TextEncoder().encode(m.job);
        this.onmessage({data: {id: 7, now: 5, over: false}});
        this.onmessage({data: {id: 7, now: 9, over: true, payload: b.buffer}});
      } else if (m.op === "cancel") {
        this.onmessage({data: {id: m.id, now: 0, over: true, err: "stopped"}});
      }
    }, 0);
  }
  terminate() {}
};`).Invoke()
	t.Cleanup(func() { js.Global().Delete("Worker") })
}

// pollUntil polls p until it has n replies (or a second passes).
func pollUntil(t *testing.T, p *EngineWorkers, n int) []EngineReply {
	t.Helper()
	var got []EngineReply
	for end := time.Now().Add(time.Second); len(got) < n && time.Now().Before(end); {
		time.Sleep(time.Millisecond)
		got = append(got, p.Poll()...)
	}
	return got
}

func TestWithoutWebWorkersThereIsNoPool(t *testing.T) {
	js.Global().Delete("Worker")
	assert.Nil(t, New().NewEngineWorkers("engine-worker.js"))
}

// A job goes to a worker, its replies come back in order with the
// payload to copy into Go (in pieces, as the caller likes), and the
// worker, idle again, takes the next job.
func TestAnEngineWorkerRunsAJobAndTakesTheNext(t *testing.T) {
	installFakeWorker(t)
	p := New().NewEngineWorkers("engine-worker.js")
	require.NotNil(t, p)
	p.Start(7, `{"id":7}`)
	got := pollUntil(t, p, 2)
	require.Len(t, got, 2)
	assert.Equal(t, EngineReply{ID: 7, Now: 5}, got[0])
	require.NotNil(t, got[1].CopyPayload)
	payload := make([]byte, got[1].Size)
	got[1].CopyPayload(payload[3:], 3)
	got[1].CopyPayload(payload[:3], 0)
	assert.Equal(t, `{"id":7}`, string(payload))
	got[1].CopyPayload = nil
	assert.Equal(t, EngineReply{ID: 7, Now: 9, Over: true, Size: 8}, got[1])
	p.Start(7, `{"id":7}`)
	require.Len(t, pollUntil(t, p, 2), 2)
	assert.Equal(t, 1, js.Global().Get("workersMade").Int(), "the idle worker took the second job")
}

// A worker that cannot start ends its job with the reason.
func TestAWorkerThatCannotStartEndsItsJobWithTheReason(t *testing.T) {
	installFakeWorker(t)
	p := New().NewEngineWorkers("missing.js")
	p.Start(3, `{}`)
	got := pollUntil(t, p, 1)
	require.NotEmpty(t, got)
	assert.Equal(t, EngineReply{ID: 3, Over: true, Err: "the engine worker failed: no such script"}, got[0])
}
