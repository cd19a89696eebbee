// Package jwks holds the keys that verify signed bearer tokens (capability
// tokens, and the JWT access tokens of package oauth): a static set, read
// once, or the set an issuer publishes at a URL (RFC 7517), fetched by one
// goroutine per key set. jwkset parses the keys; when to fetch is decided
// here. A generic refresher could not keep the rules the root package's
// CapabilityOptions states: the first fetch must not block the
// constructor, a failed fetch is retried on a capped backoff rather than
// at the next period, and requests naming unknown kids must share one
// fetch after a short gap, so that a made-up kid never spends the refetch
// a rotated key needs. Where the set is may itself have to be found first
// (an OAuth authorization server names it in its metadata): a [Resolver]
// runs at the start of each fetch, so that finding it follows the same
// schedule, wait and backoff.
//
// What it promises, and how that is checked: the intervals are the
// documented ones (TestJWKSDefaultTiming); a resolver is asked again at
// scheduled fetches only, and its failure fails the fetch
// (TestRemoteFromResolver); over real HTTP, the root package's TestJWKS
// tests check that an attacker's kid cannot hold back a rotation, that a
// flood of made-up kids costs the issuer one fetch per gap, that an issuer
// back from an outage is seen within the backoff, and that a hanging
// issuer neither blocks startup nor holds a request longer than the
// bounded wait, with no goroutine left behind (goleak); package oauth's
// tests check the same through discovery.
package jwks
