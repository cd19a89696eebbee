package a2a

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestAppendTimestamp: the hand-written timestamp is the layout's, for
// times across the years and to the millisecond, in any zone.
func TestAppendTimestamp(t *testing.T) {
	zone := time.FixedZone("X", -5*3600-30*60)
	for i := range 10000 {
		at := time.Unix(rand.Int64N(300*365*86400)-50*365*86400, rand.Int64N(1e9))
		if i%2 == 0 {
			at = at.In(zone)
		}
		want := at.UTC().Format(timestampLayout)
		if got := string(appendTimestamp(nil, at)); got != want {
			t.Fatalf("appendTimestamp(%v) = %s, want %s", at, got, want)
		}
	}
	if got := string(appendTimestamp(nil, time.Date(12000, 1, 2, 3, 4, 5, 0, time.UTC))); got != time.Date(12000, 1, 2, 3, 4, 5, 0, time.UTC).Format(timestampLayout) {
		t.Fatalf("a year past 9999: %s", got)
	}
}
