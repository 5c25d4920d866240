package waittest_test

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/internal/waittest"
)

// A wait that keeps making progress outlasts its stall many times over.
func TestProgressOutlastsTheStall(t *testing.T) {
	var n atomic.Int64
	go func() {
		for range 20 {
			time.Sleep(10 * time.Millisecond)
			n.Add(1)
		}
	}()
	start := time.Now()
	waittest.Progress(t, "counting", 60*time.Millisecond, func() (int, bool) {
		v := int(n.Load())
		return v, v == 20
	})
	if time.Since(start) < 150*time.Millisecond {
		t.Fatalf("returned after %s, before the count reached 20", time.Since(start))
	}
}

// A wait without progress fails after the stall.
func TestProgressFailsOnAStall(t *testing.T) {
	ft := &fatalT{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		waittest.Progress(ft, "stuck", 50*time.Millisecond, func() (int, bool) { return 3, false })
	}()
	<-done
	if !ft.failed {
		t.Fatal("a stalled wait did not fail")
	}
}

// fatalT records Fatalf and ends the goroutine as testing.T does.
type fatalT struct {
	testing.TB
	failed bool
}

func (f *fatalT) Helper() {}
func (f *fatalT) Fatalf(string, ...any) {
	f.failed = true
	runtime.Goexit()
}
