package federation

import (
	"testing"
	"time"
)

// TestParamTextOrdered: the parameter errors a model reads come in the
// parameters' order, the same text every time (a map's order would
// change it from one call to the next).
func TestParamTextOrdered(t *testing.T) {
	errs := map[string]string{"zeta": "required", "alpha": "must be a number", "mid": "too long", "beta": "unknown"}
	const want = "alpha: must be a number\nbeta: unknown\nmid: too long\nzeta: required"
	for range 20 {
		if got := paramText(errs); got != want {
			t.Fatalf("paramText = %q, want %q", got, want)
		}
	}
}

// TestClientIdle: an upstream's Timeouts.Idle of zero means no idle bound,
// which the client says with a negative IdleTimeout (its zero is five
// minutes); other values pass as they are.
func TestClientIdle(t *testing.T) {
	for in, want := range map[time.Duration]time.Duration{0: -1, -1: -1, 5 * time.Second: 5 * time.Second} {
		if got := clientIdle(in); got != want {
			t.Errorf("clientIdle(%v) = %v, want %v", in, got, want)
		}
	}
}
