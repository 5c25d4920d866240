package replica

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
)

// HLC is a hybrid logical clock reading: wall milliseconds and a counter
// that orders readings within one millisecond (or while the wall clock is
// behind a reading seen from another device). Records compare by HLC, then
// by device id.
type HLC struct {
	Wall    int64 // Unix ms
	Counter int64
}

// String is the stored form: fixed width, so text order is clock order.
func (h HLC) String() string { return fmt.Sprintf("%015d.%06d", h.Wall, h.Counter) }

// ParseHLC reads a String.
func ParseHLC(s string) (HLC, error) {
	w, c, ok := strings.Cut(s, ".")
	if !ok || len(w) != 15 || len(c) != 6 {
		return HLC{}, fmt.Errorf("clock %q is not a hybrid logical clock reading", s)
	}
	wall, err1 := strconv.ParseInt(w, 10, 64)
	counter, err2 := strconv.ParseInt(c, 10, 64)
	if err1 != nil || err2 != nil || wall < 0 || counter < 0 {
		return HLC{}, fmt.Errorf("clock %q is not a hybrid logical clock reading", s)
	}
	return HLC{wall, counter}, nil
}

// Compare orders a and b.
func (h HLC) Compare(o HLC) int {
	switch {
	case h.Wall != o.Wall:
		return cmpInt(h.Wall, o.Wall)
	default:
		return cmpInt(h.Counter, o.Counter)
	}
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// MaxDrift is how far ahead of this device's wall clock a pulled record's
// clock reading may be. Clocks kept by NTP differ by seconds; a record
// from further ahead is refused, so one wrong clock cannot win every
// comparison and carry every device's clock along.
const MaxDrift = 24 * time.Hour

// maxCounter keeps the counter inside its 6 digits: past it the clock
// moves its wall time on by a millisecond instead.
const maxCounter = 999_999

// clock is this device's HLC. Its last reading is persisted with every
// stamp and apply (sync_state 'hlc'), so it never runs backwards across
// restarts.
type clock struct {
	mu   sync.Mutex
	last HLC
}

// tick returns a reading later than every earlier one, for an event that
// happened at physical time ms.
func (c *clock) tick(ms int64) HLC {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ms > c.last.Wall {
		c.last = HLC{Wall: ms}
	} else {
		c.last.Counter++
		if c.last.Counter > maxCounter {
			c.last = HLC{Wall: c.last.Wall + 1}
		}
	}
	return c.last
}

// observe moves the clock past a reading received from another device.
func (c *clock) observe(r HLC) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r.Compare(c.last) > 0 {
		c.last = r
	}
}

func (c *clock) now() HLC {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last
}
