// Package backoff is the one exponential backoff of the client and the
// federation: a first wait, doubled after each failure in a row, up to a
// limit.
package backoff

import "time"

// Delay is the wait after the n-th failure in a row (n from 1): first,
// doubled for each failure after the first, and never more than limit.
// n below 1 counts as 1; first at or below zero waits nothing.
func Delay(first, limit time.Duration, n int) time.Duration {
	if first <= 0 {
		return 0
	}
	d := first
	for i := 1; i < n && d < limit; i++ {
		d *= 2
	}
	return min(d, limit)
}
