package app

// tracelog.go keeps each run's tracepoint log for the page: the latest
// TraceKeep events, read from the run as they are recorded (after every
// slice of events the controller runs, so a machine's 4096-event ring does
// not overwrite what the page has not read yet), on the run's clock.
//
// The log is a list of fixed-size chunks. Chunks fill in order and are
// never written again below the count a snapshot was given, and the
// oldest chunk is dropped, not reused, when the log is full; so a
// TraceLog handed to another goroutine (the panel) stays valid while the
// owner goes on appending, without a lock and without copying 10,000
// events per snapshot.

import (
	"strings"

	"github.com/pagesim/pagesim/engine/mm"
	"github.com/pagesim/pagesim/engine/scenario"
)

const (
	// TraceKeep is how many tracepoint events the page keeps per run.
	TraceKeep = 10000
	// traceChunk is the size of one chunk of the log.
	traceChunk = 1000
)

type traceChunkT = [traceChunk]mm.TraceEvent

// traceRing is a run's log, owned by the controller.
type traceRing struct {
	chunks []*traceChunkT
	first  int    // index of the oldest event in chunks[0]
	n      int    // events held
	read   uint64 // the run's events numbered below read have been read
	buf    []mm.TraceEvent
}

// fill reads the events the run recorded since the last call.
func (r *traceRing) fill(v scenario.View) {
	w := v.TraceWritten()
	if w == r.read {
		return
	}
	r.buf = v.TraceEvents(r.read, r.buf[:0])
	r.read = w
	for i := range r.buf {
		r.push(&r.buf[i])
	}
}

func (r *traceRing) push(e *mm.TraceEvent) {
	end := r.first + r.n
	if end == len(r.chunks)*traceChunk {
		r.chunks = append(r.chunks, new(traceChunkT))
	}
	r.chunks[end/traceChunk][end%traceChunk] = *e
	r.n++
	if r.n > TraceKeep && r.first+r.n-TraceKeep >= traceChunk {
		// The oldest chunk holds only events past the keep: drop it.
		r.chunks = append(r.chunks[:0:0], r.chunks[1:]...)
		r.n -= traceChunk - r.first
		r.first = 0
	}
}

// log returns an immutable view of the ring as it stands: its latest
// TraceKeep events (or fewer).
func (r *traceRing) log(written uint64) TraceLog {
	skip := max(r.n-TraceKeep, 0)
	return TraceLog{chunks: append([]*traceChunkT(nil), r.chunks...), first: r.first + skip, n: r.n - skip, Written: written}
}

// TraceLog is a run's kept tracepoint events as a snapshot holds them:
// read only, safe to read from any goroutine.
type TraceLog struct {
	chunks []*traceChunkT
	first  int
	n      int
	// Written counts every event the run recorded, kept or not.
	Written uint64
}

// Len is the number of events kept.
func (l TraceLog) Len() int { return l.n }

// At returns event i, 0 the oldest kept.
func (l TraceLog) At(i int) *mm.TraceEvent {
	j := l.first + i
	return &l.chunks[j/traceChunk][j%traceChunk]
}

// TraceFilter picks events of the log: by tracepoint name ("" any) and by
// task (a substring of "comm-pid"; "" any).
type TraceFilter struct {
	Event string
	Task  string
}

// Match reports whether the event passes the filter.
func (f TraceFilter) Match(e *mm.TraceEvent) bool {
	if f.Event != "" && e.Name() != f.Event {
		return false
	}
	if f.Task != "" && !strings.Contains(e.Comm+"-"+formatUint(uint64(e.PID)), f.Task) {
		return false
	}
	return true
}

// Select returns the indexes of the latest at most max events that pass
// the filter, oldest first, and how many pass in all.
func (l TraceLog) Select(f TraceFilter, limit int) (idx []int, matched int) {
	for i := l.n - 1; i >= 0; i-- {
		if f.Match(l.At(i)) {
			matched++
			if len(idx) < limit {
				idx = append(idx, i)
			}
		}
	}
	for a, b := 0, len(idx)-1; a < b; a, b = a+1, b-1 {
		idx[a], idx[b] = idx[b], idx[a]
	}
	return idx, matched
}

// File returns the events that pass the filter as the trace file
// (/sys/kernel/tracing/trace: its header, then a line per event), with
// nrCPUs for its #P; entries-written counts every event the run recorded.
func (l TraceLog) File(f TraceFilter, nrCPUs int) string {
	var ev []mm.TraceEvent
	for i := 0; i < l.n; i++ {
		if e := l.At(i); f.Match(e) {
			ev = append(ev, *e)
		}
	}
	return mm.FormatTraceFile(ev, l.Written, nrCPUs)
}
