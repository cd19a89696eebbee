// Package authin carries what the authenticators of packages auth and
// oauth make into the root package's types, where those types keep it
// unexported: the cause an authentication refusal wraps, and what a
// capability token's identity tells the root's policy (how to ask
// whether the token was revoked, and the clock skew it was allowed). It
// is not API, and widens none: the root package sets the functions when
// it is initialised, before any package importing it runs.
package authin

import (
	"context"
	"time"
)

// Refusal returns an *otc.Error with CodeUnauthenticated, the given
// message and reason, whose Unwrap returns cause (nil for none).
var Refusal func(message, reason string, cause error) error

// CapabilityIdentity returns an *otc.Identity with Method "capability"
// for a verified capability token: its subject, its claims, the
// revocation check a tool's policy runs before each call (nil for none),
// and the leeway its "exp" was checked with.
var CapabilityIdentity func(name string, claims map[string]any, revoked func(ctx context.Context, jti string) (bool, error), leeway time.Duration) any
