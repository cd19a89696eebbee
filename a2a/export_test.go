package a2a

import (
	"context"
	"net/http"
	"net/netip"
	"time"
)

// SetPushLookup makes o resolve webhook hosts with lookup.
func SetPushLookup(o *PushOptions, lookup func(context.Context, string) ([]netip.Addr, error)) {
	o.lookup = lookup
}

// SetPushBackoff sets the first wait between a delivery's tries.
func SetPushBackoff(h *Handler, d time.Duration) { h.push.backoff = d }

// SetPushTransport makes h's deliveries go through rt.
func SetPushTransport(h *Handler, rt http.RoundTripper) { h.push.client.Transport = rt }
