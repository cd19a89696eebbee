package client

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestRetryPolicy_Wait checks the waits a policy computes, including the
// caps the timed tests over HTTP can only bound from below.
func TestRetryPolicy_Wait(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		policy     RetryPolicy
		attempt    int
		retryAfter time.Duration
		want       time.Duration
	}{
		{"zero_policy_first_backoff", RetryPolicy{}, 1, 0, 200 * time.Millisecond},
		{"zero_policy_doubles", RetryPolicy{}, 2, 0, 400 * time.Millisecond},
		{"zero_policy_doubles_again", RetryPolicy{}, 3, 0, 800 * time.Millisecond},
		{"zero_policy_backoff_capped_at_30s", RetryPolicy{}, 20, 0, 30 * time.Second},
		{"zero_policy_honours_retry_after", RetryPolicy{}, 1, 5 * time.Second, 5 * time.Second},
		{"retry_after_does_not_double", RetryPolicy{}, 3, 5 * time.Second, 5 * time.Second},
		{"zero_policy_caps_retry_after_at_30s", RetryPolicy{}, 1, 10 * time.Minute, 30 * time.Second},
		{"max_wait_caps_retry_after", RetryPolicy{MaxWait: 20 * time.Millisecond}, 1, 10 * time.Minute, 20 * time.Millisecond},
		{"max_wait_caps_backoff", RetryPolicy{Backoff: 40 * time.Millisecond, MaxWait: 50 * time.Millisecond}, 2, 0, 50 * time.Millisecond},
		{"backoff_below_cap", RetryPolicy{Backoff: 40 * time.Millisecond, MaxWait: 50 * time.Millisecond}, 1, 0, 40 * time.Millisecond},
		{"negative_retry_after_means_backoff", RetryPolicy{Backoff: 10 * time.Millisecond}, 1, -time.Second, 10 * time.Millisecond},
		{"huge_attempt_does_not_overflow", RetryPolicy{Backoff: time.Hour, MaxWait: 24 * time.Hour}, 1 << 30, 0, 24 * time.Hour},
		{"negative_max_wait_means_default", RetryPolicy{MaxWait: -1}, 1, time.Hour, 30 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tc.want, tc.policy.wait(tc.attempt, tc.retryAfter))
		})
	}
}

func TestRetryPolicy_MaxAttempts(t *testing.T) {
	t.Parallel()
	for in, want := range map[int]int{-1: 3, 0: 3, 1: 1, 2: 2, 10: 10} {
		assert.Equal(t, want, (&RetryPolicy{MaxAttempts: in}).maxAttempts(), "MaxAttempts %d", in)
	}
}
