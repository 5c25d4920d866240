// Package replicatest is the in-memory relay change log the replica tests
// sync through: like the relay it keeps only the newest change per key,
// numbers changes with a per-workspace seq, and checks what it is pushed.
package replicatest

import (
	"context"
	"errors"
	"sort"
	"sync"

	"github.com/rerun-build/rerun-desktop/sync/protocol"
)

// Relay is one workspace's change log.
type Relay struct {
	mu      sync.Mutex
	seq     int64
	latest  map[string]protocol.Change
	offline bool
	// Pushed is every body ever pushed, for tests that inspect what the
	// relay saw.
	Pushed [][]byte
	// OnPush, when set, is told the newest seq after each push, like the
	// relay's "changes" frame to the other devices' sockets.
	OnPush func(last int64)
}

// New returns an empty log.
func New() *Relay { return &Relay{latest: map[string]protocol.Change{}} }

// ErrOffline is what a transport of an offline relay returns.
var ErrOffline = errors.New("relay unreachable")

// SetOffline makes every call fail (a laptop on a plane) or work again.
func (r *Relay) SetOffline(off bool) {
	r.mu.Lock()
	r.offline = off
	r.mu.Unlock()
}

// Push appends changes, replacing older changes of the same keys.
func (r *Relay) Push(ctx context.Context, changes []protocol.Change) (int64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.offline {
		return 0, ErrOffline
	}
	if err := protocol.CheckPush(protocol.ChangePush{Changes: changes}); err != nil {
		return 0, err
	}
	for _, c := range changes {
		r.seq++
		c.Seq = r.seq
		c.Body = append([]byte(nil), c.Body...)
		r.latest[c.Key] = c
		r.Pushed = append(r.Pushed, c.Body)
	}
	if r.OnPush != nil {
		go r.OnPush(r.seq)
	}
	return r.seq, nil
}

// Pull returns up to limit changes after seq after, in seq order.
func (r *Relay) Pull(ctx context.Context, after int64, limit int) (protocol.ChangePage, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.offline {
		return protocol.ChangePage{}, ErrOffline
	}
	var list []protocol.Change
	for _, c := range r.latest {
		if c.Seq > after {
			list = append(list, c)
		}
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Seq < list[j].Seq })
	page := protocol.ChangePage{Last: r.seq, Changes: []protocol.Change{}}
	if len(list) > limit {
		list, page.More = list[:limit], true
	}
	page.Changes = append(page.Changes, list...)
	return page, nil
}

// Tamper flips a byte of the body of every change after seq after (a
// relay that lies).
func (r *Relay) Tamper(after int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for k, c := range r.latest {
		if c.Seq > after {
			b := append([]byte(nil), c.Body...)
			b[len(b)-1] ^= 1
			c.Body = b
			r.latest[k] = c
		}
	}
}

// Last is the newest seq.
func (r *Relay) Last() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.seq
}

// Changes is the log as stored: the newest change per key.
func (r *Relay) Changes() []protocol.Change {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]protocol.Change, 0, len(r.latest))
	for _, c := range r.latest {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
	return out
}
