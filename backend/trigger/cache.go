package trigger

import (
	"sync"
	"time"
)

// cacheFor is how long a lookup is kept. The service drops them all when
// it changes a trigger, and an accepted call is checked against the
// trigger's row when it commits (acceptAll), so this only bounds how long
// a refusal (paused, wrong method) may rest on a change made elsewhere.
const cacheFor = time.Second

// cacheMax bounds how many tokens are kept; more are found in the
// database.
const cacheMax = 1000

// cache keeps the triggers recent calls found, by token hash: a busy
// trigger's calls would otherwise each read it from a database that every
// commit of theirs has changed, which costs more than the read.
type cache struct {
	mu  sync.Mutex
	m   map[string]cached
	gen int // counts clears: a lookup read before one is not kept
}

type cached struct {
	t       Trigger
	until   time.Time  // when the lookup is stale
	expires *time.Time // when this (rotated-out) token stops working
}

// get returns the trigger token hash h opens, if a fresh lookup is kept;
// else gen, to put what the database says.
func (c *cache) get(h string, now time.Time) (t Trigger, ok bool, gen int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[h]
	if !ok || !now.Before(e.until) || e.expires != nil && !now.Before(*e.expires) {
		return Trigger{}, false, c.gen
	}
	return e.t, true, c.gen
}

// put keeps t as what h opens, read after get returned gen; expires is the
// token's end, nil for the current one.
func (c *cache) put(h string, t Trigger, expires *time.Time, now time.Time, gen int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return // the trigger may have changed since it was read
	}
	if c.m == nil || len(c.m) >= cacheMax {
		c.m = map[string]cached{}
	}
	c.m[h] = cached{t: t, until: now.Add(cacheFor), expires: expires}
}

// clear forgets every lookup: a trigger changed.
func (c *cache) clear() {
	c.mu.Lock()
	c.m = nil
	c.gen++
	c.mu.Unlock()
}
