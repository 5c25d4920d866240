package llm

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// Retry says how WithRetry retries. The zero value means the defaults.
type Retry struct {
	// Max is how many times a failed call is retried after the first
	// attempt: 0 means 3, a negative value means never.
	Max int
	// Base is the first backoff (default 1s); each retry doubles it, up to
	// MaxDelay (default 20s), with random jitter.
	Base, MaxDelay time.Duration
	// Sleep waits d or until ctx ends, returning ctx's error then. Tests
	// inject one that does not wait; nil means a real timer.
	Sleep func(ctx context.Context, d time.Duration) error
}

// maxRetryAfter bounds a provider's Retry-After so that a bogus header cannot
// park a run for an hour.
const maxRetryAfter = time.Minute

type retryProvider struct {
	p Provider
	r Retry
}

// WithRetry returns p retrying calls that fail with a retryable *Error:
// exponential backoff with jitter, or the provider's Retry-After when it sent
// one. A call whose stream already delivered text to onDelta is never
// retried, since the caller has shown that text: it fails with a
// non-retryable Error saying the stream was cut. Retrying stops when ctx
// ends; after the last attempt the provider's own error is returned.
func WithRetry(p Provider, r Retry) Provider {
	if r.Max == 0 {
		r.Max = 3
	}
	if r.Base <= 0 {
		r.Base = time.Second
	}
	if r.MaxDelay <= 0 {
		r.MaxDelay = 20 * time.Second
	}
	if r.Sleep == nil {
		r.Sleep = sleep
	}
	return &retryProvider{p: p, r: r}
}

func (rp *retryProvider) Name() string { return rp.p.Name() }

func (rp *retryProvider) Chat(ctx context.Context, req Request, onDelta func(Delta)) (Response, error) {
	delivered := false
	var track func(Delta)
	if onDelta != nil {
		track = func(d Delta) {
			delivered = true
			onDelta(d)
		}
	}
	for attempt := 0; ; attempt++ {
		resp, err := rp.p.Chat(ctx, req, track)
		if err == nil {
			return resp, nil
		}
		var e *Error
		if !errors.As(err, &e) {
			return resp, err
		}
		if delivered {
			if e.Retryable {
				return resp, cutError(e.Provider, err)
			}
			return resp, err
		}
		if !e.Retryable || attempt >= rp.r.Max || ctx.Err() != nil {
			return resp, err
		}
		if serr := rp.r.Sleep(ctx, rp.delay(attempt, e.RetryAfter)); serr != nil {
			return resp, fmt.Errorf("%s: %w (waiting to retry after: %v)", rp.Name(), serr, err)
		}
	}
}

// delay is the wait before retry number attempt+1.
func (rp *retryProvider) delay(attempt int, retryAfter time.Duration) time.Duration {
	if retryAfter > 0 {
		return min(retryAfter, max(rp.r.MaxDelay, maxRetryAfter))
	}
	d := rp.r.Base << min(attempt, 30)
	if d <= 0 || d > rp.r.MaxDelay {
		d = rp.r.MaxDelay
	}
	// Equal jitter: half fixed, half random, so parallel runs spread out.
	half := d / 2
	return half + rand.N(d-half+1)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
