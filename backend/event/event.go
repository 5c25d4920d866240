// Package event carries change notices from the domain to whoever shows them.
//
// Domain services publish a Change after each committed write; transports
// (the UI's /api/events stream) subscribe. Publishing never blocks a writer: a
// subscriber that falls behind loses notices, not the writer's time, and is told
// so by a Change of kind KindResync.
package event

import (
	"sync"
	"sync/atomic"
)

// KindResync tells a subscriber it missed notices and should reload everything.
const KindResync = "resync"

// KindDelta is streamed model text: Text holds the next tokens of run ID.
const KindDelta = "delta"

// Change says that something in a workspace changed.
type Change struct {
	Workspace string `json:"workspace"`
	Kind      string `json:"kind"` // e.g. "agent.updated"
	ID        string `json:"id,omitempty"`
	// Agent and Session locate run changes; Text is a delta's text.
	Agent   string `json:"agent,omitempty"`
	Session string `json:"session,omitempty"`
	Text    string `json:"text,omitempty"`
}

// Bus fans changes out to subscribers. The zero value is ready to use.
type Bus struct {
	mu   sync.Mutex
	subs map[*sub]struct{}
	// all counts the changes of no one workspace, revs those of each
	// (workspace id → *atomic.Uint64); see Revision.
	all  atomic.Uint64
	revs sync.Map
}

type sub struct {
	ch     chan Change
	missed bool
}

// Publish hands c to every subscriber without waiting. Every change but
// streamed text moves its workspace's Revision on first, so a reader that
// checks Revision after the change was published never misses it, though
// a subscriber that fell behind may.
func (b *Bus) Publish(c Change) {
	if c.Kind != KindDelta {
		if c.Workspace == "" {
			b.all.Add(1)
		} else {
			b.rev(c.Workspace).Add(1)
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for s := range b.subs {
		if s.missed {
			select {
			case s.ch <- Change{Kind: KindResync}:
				s.missed = false
			default:
				continue
			}
		}
		select {
		case s.ch <- c:
		default:
			s.missed = true
		}
	}
}

// Subscribe returns a channel of changes and a function that ends the
// subscription (and closes the channel).
func (b *Bus) Subscribe() (<-chan Change, func()) {
	s := &sub{ch: make(chan Change, 256)}
	b.mu.Lock()
	if b.subs == nil {
		b.subs = make(map[*sub]struct{})
	}
	b.subs[s] = struct{}{}
	b.mu.Unlock()
	var once sync.Once
	return s.ch, func() {
		once.Do(func() {
			b.mu.Lock()
			delete(b.subs, s)
			b.mu.Unlock()
			close(s.ch)
		})
	}
}

// Subscribers is how many subscriptions are open.
func (b *Bus) Subscribers() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.subs)
}

// Revision is a number that moves on with every change published for
// workspace (or for no one workspace), streamed text aside: a read model
// built at one revision is current while Revision returns the same. Read
// it before reading what it guards, so a change committed during the read
// moves it on.
func (b *Bus) Revision(workspace string) uint64 {
	return b.all.Load() + b.rev(workspace).Load()
}

func (b *Bus) rev(workspace string) *atomic.Uint64 {
	if v, ok := b.revs.Load(workspace); ok {
		return v.(*atomic.Uint64)
	}
	v, _ := b.revs.LoadOrStore(workspace, new(atomic.Uint64))
	return v.(*atomic.Uint64)
}
