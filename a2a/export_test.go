package a2a

import (
	"context"
	"net/netip"
	"time"
)

// SetPushLookup makes o resolve webhook hosts with lookup.
func SetPushLookup(o *PushOptions, lookup func(context.Context, string) ([]netip.Addr, error)) {
	o.lookup = lookup
}

// SetPushBackoff sets the first wait between a delivery's tries.
func SetPushBackoff(h *Handler, d time.Duration) { h.push.backoff = d }
