package backoff

import (
	"testing"
	"time"
)

func TestDelay(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		first, limit time.Duration
		n            int
		want         time.Duration
	}{
		{100 * ms, time.Second, 0, 100 * ms},
		{100 * ms, time.Second, 1, 100 * ms},
		{100 * ms, time.Second, 2, 200 * ms},
		{100 * ms, time.Second, 4, 800 * ms},
		{100 * ms, time.Second, 5, time.Second},
		{100 * ms, time.Second, 1 << 30, time.Second}, // no overflow however long the run
		{2 * time.Second, time.Second, 1, time.Second},
		{0, time.Second, 3, 0},
	} {
		if got := Delay(tc.first, tc.limit, tc.n); got != tc.want {
			t.Errorf("Delay(%v, %v, %d) = %v, want %v", tc.first, tc.limit, tc.n, got, tc.want)
		}
	}
}
