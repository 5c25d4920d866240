// Package waittest waits, in tests, for what another goroutine or process
// does. A test never waits a fixed total time: a slow or busy machine makes
// it slower, not failing. What makes countable progress (deliveries so far)
// fails only after a stall without any; a single event that has no count
// gets a bound generous enough that only a stuck test reaches it.
package waittest

import (
	"testing"
	"time"
)

// Patience bounds the wait for one event that has no countable progress: a
// process starting, a connection coming back, a message arriving. It is
// far above what any of them takes on a loaded machine; reaching it means
// the thing will not happen.
const Patience = 2 * time.Minute

// Stall is how long a wait on something that makes countable progress
// (each delivery, each frame) goes without any before the test fails.
const Stall = 30 * time.Second

// poll is how often a condition is checked.
const poll = 20 * time.Millisecond

// Progress polls progress until it reports done, and fails the test when
// the count it reports has not changed for stall.
func Progress(t testing.TB, what string, stall time.Duration, progress func() (n int, done bool)) {
	t.Helper()
	last, done := progress()
	moved := time.Now()
	for !done {
		time.Sleep(poll)
		var n int
		n, done = progress()
		if n != last {
			last, moved = n, time.Now()
			continue
		}
		if !done && time.Since(moved) > stall {
			t.Fatalf("%s: no progress for %s (at %d)", what, stall, n)
		}
	}
}

// Until polls cond until it holds, for at most Patience.
func Until(t testing.TB, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(Patience); !cond(); time.Sleep(poll) {
		if time.Now().After(end) {
			t.Fatalf("%s: still not so after %s", what, Patience)
		}
	}
}

// Recv receives from ch, for at most Patience.
func Recv[T any](t testing.TB, what string, ch <-chan T) T {
	t.Helper()
	timer := time.NewTimer(Patience)
	defer timer.Stop()
	select {
	case v := <-ch:
		return v
	case <-timer.C:
		t.Fatalf("%s: nothing after %s", what, Patience)
		var zero T
		return zero
	}
}
