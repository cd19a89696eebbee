package client

import (
	"context"
	"time"
)

// RetryPolicy says how a [Client] retries a call whose tool error has
// can_retry true. Each retry sends the same request, call id included, so
// a server can recognise a repeat. The zero value retries twice (three
// attempts in all) with the defaults below.
type RetryPolicy struct {
	// MaxAttempts is the number of attempts, the first included. Zero
	// means 3; 1 means no retries.
	MaxAttempts int

	// MaxWait caps each wait, including a retry_after_ms the server asks
	// for, so a server cannot stall the caller for long. Zero means 30s.
	MaxWait time.Duration

	// Backoff is the first wait when the server gives no retry_after_ms;
	// it doubles at each further attempt, up to MaxWait. Zero means 200ms.
	Backoff time.Duration
}

// Defaults of a zero RetryPolicy.
const (
	defaultMaxAttempts = 3
	defaultMaxWait     = 30 * time.Second
	defaultBackoff     = 200 * time.Millisecond
)

func (p *RetryPolicy) maxAttempts() int {
	if p.MaxAttempts <= 0 {
		return defaultMaxAttempts
	}
	return p.MaxAttempts
}

// wait is how long to wait after the attempt-th attempt failed with a
// retryable error that asked for retryAfter (zero when it did not).
func (p *RetryPolicy) wait(attempt int, retryAfter time.Duration) time.Duration {
	limit := p.MaxWait
	if limit <= 0 {
		limit = defaultMaxWait
	}
	d := retryAfter
	if d <= 0 {
		d = p.Backoff
		if d <= 0 {
			d = defaultBackoff
		}
		for i := 1; i < attempt && d < limit; i++ {
			d *= 2
		}
	}
	return min(d, limit)
}

// sleep waits for d, or returns the context's error as soon as it ends.
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
