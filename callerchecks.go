package otc

import (
	"slices"
	"strings"

	idclaims "github.com/otcgo/otc/internal/claims"
)

// This file is the one list of the checks a tool's policy makes of its
// caller's identity. A call makes them in order and is refused for the
// first its caller fails (checkPolicy, policy.go); a catalog lists a tool
// only to the callers that pass them all (visibility.go). A new check goes
// here, and both follow. Checks that depend on the call itself (execution
// binding) or on the moment (revocation) are the call's only: they never
// hide a tool.

// callerNeeds is what a policy asks of its caller's identity, the
// audience apart: built once per tool at registration, nil for a policy
// that asks nothing of the caller.
type callerNeeds struct {
	capability bool     // a capability token (any other token kind is refused)
	resource   string   // the audience a capability token must name
	caps       []string // RequiredCapabilities, sorted, once each
	maxBlast   string   // MaxBlastRadius
	scopes     []string // RequiredScopes, sorted, once each
	bound      bool     // RequiresBoundToken
}

// needsOf returns what policy p of tool id asks of its caller, or nil.
func needsOf(p *Policy, id string) *callerNeeds {
	if p == nil || !p.needsToken() && len(p.RequiredScopes) == 0 && !p.RequiresBoundToken {
		return nil
	}
	n := &callerNeeds{capability: p.needsToken(), scopes: sortedSet(p.RequiredScopes), bound: p.RequiresBoundToken}
	if n.capability {
		n.caps, n.maxBlast = sortedSet(p.RequiredCapabilities), p.MaxBlastRadius
		n.resource = p.ResourceURI
		if n.resource == "" {
			n.resource = id
		}
	}
	return n
}

// callerChecks are the checks, by the reason a call is refused for when
// its caller fails one, in the order a call makes them: the kind of token
// first; then the audience, since a token issued for another resource is
// to be replaced, not stepped up; then the scopes, before the
// capabilities, because a client can step its scopes up; then the blast
// radius. fails says what each checks.
var callerChecks = [...]string{
	ReasonMissingToken,
	ReasonTokenNotBound,
	ReasonAudienceMismatch,
	ReasonInsufficientScope,
	ReasonInsufficientCapabilities,
	ReasonBlastRadiusExceeded,
}

// fails reports whether caller c (whose identity is id) fails the check
// of reason. The audience depends on the tool: the call compares it here
// (withAudience), and a catalog keys its listings by the audiences a token
// names instead (Visibility.sees).
func (n *callerNeeds) fails(reason string, c *caller, id *Identity, withAudience bool) bool {
	switch reason {
	case ReasonMissingToken:
		return !c.token || n.capability && !c.capability
	case ReasonTokenNotBound:
		return n.bound && !c.bound
	case ReasonAudienceMismatch:
		return withAudience && n.capability && !idclaims.Has(id.Claims["aud"], n.resource)
	case ReasonInsufficientScope:
		for _, s := range n.scopes {
			if !c.granted(s) {
				return true
			}
		}
	case ReasonInsufficientCapabilities:
		for _, need := range n.caps {
			if !idclaims.Has(c.caps, need) {
				return true
			}
		}
	case ReasonBlastRadiusExceeded:
		return n.maxBlast != "" && (c.blast == "" || !idclaims.WellFormedScope(c.blast) || !idclaims.BlastRadiusFits(c.blast, n.maxBlast))
	}
	return false
}

// firstFailed returns the reason of the first check c fails, or "" when
// it passes them all; the audience is checked when withAudience, against
// the claims of id.
func (n *callerNeeds) firstFailed(c *caller, id *Identity, withAudience bool) string {
	for _, reason := range callerChecks {
		if n.fails(reason, c, id, withAudience) {
			return reason
		}
	}
	return ""
}

// key names the needs among the others of a catalog, the audience apart:
// tools whose needs have one key are visible to the same callers.
func (n *callerNeeds) key() string {
	var b strings.Builder
	if n.capability {
		b.WriteByte('c')
	}
	if n.bound {
		b.WriteByte('b')
	}
	for _, part := range [][]string{n.caps, {n.maxBlast}, n.scopes} {
		b.WriteByte(0)
		for _, s := range part {
			b.WriteString(s)
			b.WriteByte(1)
		}
	}
	return b.String()
}

// caller is what the checks read of a caller's claims, each claim looked
// up once however many checks (or catalog classes) read it. The scopes
// granted are read into scopes, without allocating, up to its capacity; a
// longer list is searched in the claims themselves.
type caller struct {
	token      bool // the identity carries claims
	bound      bool // and they bind its token to a key ("cnf")
	capability bool // and proved itself with a capability token
	caps       any  // the "caps" claim
	blast      string
	claims     map[string]any
	scopes     [16]string
	nScopes    int
	overflow   bool // more scopes than scopes holds
}

// read fills c from id.
func (c *caller) read(id *Identity) {
	if id == nil || id.Claims == nil {
		return
	}
	claims := id.Claims
	c.token = true
	c.bound = idclaims.KeyBound(claims)
	if id.Method == MethodCapability {
		c.capability = true
		c.caps = claims["caps"]
		c.blast, _ = claims["blast_radius"].(string)
	}
	c.claims = claims
	for f := range idclaims.Scopes(claims) {
		if c.nScopes == len(c.scopes) {
			c.overflow = true
			return
		}
		c.scopes[c.nScopes] = f
		c.nScopes++
	}
}

// granted reports whether the caller's token grants scope s.
func (c *caller) granted(s string) bool {
	if c.overflow {
		return idclaims.Granted(c.claims, s)
	}
	return slices.Contains(c.scopes[:c.nScopes], s)
}
