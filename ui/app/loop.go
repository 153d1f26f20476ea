package app

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Loop connects the goroutine that owns a Controller with everyone else.
// Any goroutine may call Do, Snapshot and Updated; only the owner calls
// Tick (and may use Controller directly in between).
type Loop struct {
	ctl *Controller

	mu    sync.Mutex
	queue []func(*Controller) // guarded by mu

	snap    atomic.Pointer[Snapshot]
	updated chan struct{} // cap 1: a snapshot newer than the reader's was published

	seq         uint64        // owner only
	lastPublish time.Duration // owner only
	lastLink    string        // owner only
	lastHistory uint64        // owner only
	lastVersion uint64        // owner only
	lastPlaying bool          // owner only
	dirty       bool          // owner only: changed since the last snapshot

	// PublishEvery is the wall time between snapshots while the
	// simulation moves (default 100 ms). A command or a change of
	// play state publishes at once.
	PublishEvery time.Duration
	// LinkEvery is the wall time between permalink updates while playing
	// (default 1 s).
	LinkEvery  time.Duration
	lastLinkAt time.Duration
	// OnLink, if set, is called on the owner goroutine with the new
	// permalink (without '#') whenever it changes, at most every
	// LinkEvery while playing. push is true when the user changed what
	// runs (Controller.History): the link is then a new entry of the
	// browser's history, where otherwise it replaces the current one.
	OnLink func(frag string, push bool)
}

// NewLoop wraps a controller and publishes its first snapshot.
func NewLoop(ctl *Controller) *Loop {
	l := &Loop{ctl: ctl, updated: make(chan struct{}, 1), PublishEvery: 100 * time.Millisecond, LinkEvery: time.Second}
	l.publish()
	return l
}

// Controller returns the controller; only the owner goroutine may use it.
func (l *Loop) Controller() *Controller { return l.ctl }

// Do queues f to run on the owner goroutine at its next Tick. It never
// blocks, so it is safe inside a JavaScript callback.
func (l *Loop) Do(f func(*Controller)) {
	l.mu.Lock()
	l.queue = append(l.queue, f)
	l.mu.Unlock()
}

// Snapshot returns the latest published snapshot.
func (l *Loop) Snapshot() *Snapshot { return l.snap.Load() }

// Updated receives a value after a snapshot is published (coalesced: one
// pending signal at most).
func (l *Loop) Updated() <-chan struct{} { return l.updated }

// Tick applies queued commands, advances the simulation (see
// Controller.Tick) and publishes a snapshot when one is due. It returns
// true if anything drawn may have changed.
func (l *Loop) Tick(dt, budget time.Duration) bool {
	l.mu.Lock()
	q := l.queue
	l.queue = nil
	l.mu.Unlock()
	for _, f := range q {
		f(l.ctl)
	}
	v0 := l.ctl.Version()
	l.ctl.Tick(dt, budget)
	moving := l.ctl.Version() != v0
	changed := l.ctl.Version() != l.lastVersion
	l.lastVersion = l.ctl.Version()
	if changed {
		l.dirty = true
	}
	now := l.ctl.opt.Wall()
	// Publish at once after a command or a play/pause; while the runs
	// move, at most every PublishEvery; and once more when they settle.
	due := len(q) > 0 || l.ctl.Playing() != l.lastPlaying ||
		(l.dirty && (!moving || now-l.lastPublish >= l.PublishEvery))
	if due {
		l.publish()
	}
	return changed
}

func (l *Loop) publish() {
	l.seq++
	l.lastPublish = l.ctl.opt.Wall()
	l.lastPlaying = l.ctl.Playing()
	l.dirty = false
	s := l.ctl.Snapshot(l.seq)
	l.snap.Store(s)
	select {
	case l.updated <- struct{}{}:
	default:
	}
	if l.OnLink == nil {
		return
	}
	// A link read in part stays in the address bar as written until the
	// state changes; an over-budget one is replaced at once, even when the
	// state (and so the link) did not change.
	if l.ctl.takeKeepAddress() {
		l.lastLink, l.lastHistory = s.Link, s.History
	}
	relink := l.ctl.takeRelink()
	if s.Link != l.lastLink || relink {
		push := s.History != l.lastHistory && l.lastLink != ""
		if !s.Playing || relink || push || l.lastPublish-l.lastLinkAt >= l.LinkEvery {
			l.lastLink, l.lastHistory = s.Link, s.History
			l.lastLinkAt = l.lastPublish
			l.OnLink(s.Link, push)
		}
	}
}

func formatUint(v uint64) string { return strconv.FormatUint(v, 10) }
