package a2a

import (
	"hash/fnv"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/otcgo/otc/internal/wire"
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

// TestDerivedIDIsFNV: derivedID is FNV-1a-128 of kind, a zero byte and
// the message id, as hash/fnv computes it, so that an id derived by one
// version of this package is derived alike by the next (a message sent
// again during a rolling upgrade gets the same answer).
func TestDerivedIDIsFNV(t *testing.T) {
	for _, c := range [][2]string{{"reply", "m-7"}, {"context", ""}, {"question", strings.Repeat("é", 300)}, {"", "\x00\xff"}} {
		h := fnv.New128a()
		h.Write([]byte(c[0]))
		h.Write([]byte{0})
		h.Write([]byte(c[1]))
		var b [16]byte
		h.Sum(b[:0])
		if got, want := derivedID(c[0], c[1]), wire.UUID(b); got != want {
			t.Errorf("derivedID(%q, %q) = %s, hash/fnv gives %s", c[0], c[1], got, want)
		}
	}
}
