package otc

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	idclaims "github.com/otcgo/otc/internal/claims"
	"github.com/otcgo/otc/internal/wire"
)

// Policy says who may call a tool: through which wire formats, and, for a
// tool that acts on something that matters (a refund, a deletion), with
// which capability token. It is part of the tool's definition, set in
// [Tool.Policy], and the registry's pipeline enforces it on every wire
// format, before the input is validated. The zero value allows every call,
// as a tool without a policy does.
//
// Protocols alone only chooses the wire formats. RequiredScopes asks for
// a caller whose token grants OAuth scopes, from any authenticator: an
// OAuth access token above all, or a capability token that carries a
// "scope" claim. Any of the other fields makes the tool need a capability
// token (see [github.com/otcgo/otc/auth.NewCapabilityAuth]): a caller
// that authenticated any other way, or not at all, is refused. A token has two claims for two checks,
// and may carry either or both: "caps", checked against
// RequiredCapabilities, and "scope" (or "scp"), checked against
// RequiredScopes. A policy that sets both needs a capability token that
// carries both.
//
// The checks run in this order, each refusal carrying its [Error.Reason]:
//
//  1. protocol: the call came through one of Protocols (ReasonProtocolDenied);
//  2. credentials (401 ReasonMissingToken): with a capability field set,
//     the caller proved itself with a capability token; with
//     RequiredScopes alone, it sent a token at all: a caller without an
//     identity, or whose identity carries no claims (an API key), has
//     none;
//  3. audience: the token's "aud" holds ResourceURI, or the tool's id
//     ("Toolkit.Tool@x.y.z") when ResourceURI is empty, so that a token
//     issued for one tool cannot call another (ReasonAudienceMismatch);
//  4. scopes: the token grants every one of RequiredScopes
//     ([Identity.Scopes]); a refusal is 403 ReasonInsufficientScope, and
//     [Error.RequiredScopes] names the scopes it lacks, which every wire
//     format also puts in its WWW-Authenticate challenge so that a client
//     can ask its authorization server for them (step-up authorization);
//  5. capabilities: the token's "caps", an array of strings, holds every
//     one of RequiredCapabilities (ReasonInsufficientCapabilities);
//  6. blast radius: the token's "blast_radius", "scope:value", fits
//     MaxBlastRadius (ReasonBlastRadiusExceeded); a token without the claim
//     is refused when the tool sets a maximum;
//  7. revocation: the authenticator's revocation check of the token's
//     "jti"; an error of the check refuses the call (ReasonTokenRevoked);
//  8. execution binding, when RequiresExecution is set: the token's id
//     and expiry (ReasonInvalidToken when it has no "jti" or "exp"), then
//     its binding to the call (ReasonExecBindingInvalid): see
//     RequiresExecution.
//
// Checks 3, 5 to 8 apply to capability tokens only; a policy that sets
// none of their fields skips them. The audience comes before the scopes
// because a token issued for another resource should be replaced, not
// stepped up; the scopes come before the capabilities because a client
// can act on their refusal by itself.
//
// The input is validated after these checks; an execution-bound token is
// then spent just before the function runs (ReasonTokenReplayed when it
// was spent already).
//
// The same checks, less those that depend on the exact call (revocation,
// execution binding, a spent token), decide which tools a caller's
// catalogs list: see [Registry.Visibility] and
// [RegistryOptions.ListEveryTool].
type Policy struct {
	// Protocols lists the wire formats that may call the tool, as
	// "name" or "name/version", compared by name: "otc" (the OTC/OXP
	// [Handler]), "http" (the REST view, package rest) and "mcp" (the mcp package),
	// or any other an adapter names. Empty means every protocol. The tool is
	// also left out of the catalogs of the protocols not listed. A direct
	// [Registry.Call] that names no protocol matches no list.
	Protocols []string `json:"protocols,omitempty"`
	// ResourceURI is the tool's RFC 8707 resource indicator, which a
	// token's "aud" must hold ("urn:example:payments"). Empty means the
	// tool's id.
	ResourceURI string `json:"resource_uri,omitempty"`
	// RequiredCapabilities lists the capabilities a token's "caps" must
	// all carry ("payments:refund").
	RequiredCapabilities []string `json:"required_capabilities,omitempty"`
	// MaxBlastRadius is the widest scope a call may claim, "scope:value"
	// ("tenant:acme"), "scope:*" for any value of the scope, or "*" for
	// anything. A token's "blast_radius" fits when the scopes match and the
	// maximum's value is "*" or the same.
	MaxBlastRadius string `json:"max_blast_radius,omitempty"`
	// RequiresExecution binds a token to one exact call, once: the token
	// must carry execution claims, its "inp_hash" must be the base64url
	// (no padding) SHA-256 of the exact bytes of the request body, its
	// "exec_act" must be one of AllowedOperations and its "target" one of
	// AllowedTargets when those are set, and its "htm" and "htu", when
	// present, must be the request's method and URL (without query).
	//
	// The token must also have an id ("jti", at most 256 bytes) and an
	// expiry, and runs the tool once: its id is spent, for its issuer,
	// when the function is about to run (after validation, and once the
	// tool's concurrency limit has let the call in, so that a refused or
	// busy call leaves the token usable). A later request with the same
	// token never runs the tool. When it carries the first request's
	// call id and the registry records call ids
	// ([RegistryOptions.Idempotency]), it is answered with the first
	// call's recorded outcome, as any retry is, so that a client that lost
	// an answer can ask again safely; otherwise it is refused, 401 with
	// ReasonTokenReplayed, on every wire format.
	//
	// The spent ids are kept in the registry's idempotency store when it
	// is one replicas share (anything but one in process, such as
	// idempotency.MemoryStore), under keys of
	// their own, for the store's retention (its TTL, which must be longer
	// than the tokens' lifetime); otherwise in memory, each until its
	// token has expired plus the authenticator's leeway and a minute,
	// never dropped earlier, at most 100,000 at once. When the store
	// cannot be reached, or the memory record is full, the call does not
	// run: it fails with a retryable tool error, so that a replay never
	// gets through an outage.
	RequiresExecution bool `json:"requires_execution,omitempty"`
	// AllowedOperations lists the "exec_act" values a bound token may
	// carry.
	AllowedOperations []string `json:"allowed_operations,omitempty"`
	// AllowedTargets lists the "target" values a bound token may carry.
	AllowedTargets []string `json:"allowed_targets,omitempty"`
	// RequiredScopes lists the OAuth scopes the caller's token must grant
	// ("counter:write"), read by [Identity.Scopes] from its "scope" or
	// "scp" claim. Unlike the other fields it does not ask for a
	// capability token: any authenticator whose identity carries scopes
	// will do, an OAuth access token above all. A caller without them is
	// refused, 403 with ReasonInsufficientScope, and the answer names the
	// scopes to ask for. Each scope is an RFC 6749 scope token: printable
	// ASCII without spaces, double quotes or backslashes, listed once.
	RequiredScopes []string `json:"required_scopes,omitempty"`
	// RequiresBoundToken refuses a bearer token (401 ReasonTokenNotBound):
	// the token's "cnf" must bind it to a key the caller proved it holds,
	// DPoP's "jkt" (RFC 9449, checked by package oauth with Options.DPoP)
	// or a TLS certificate's "x5t#S256" (RFC 8705).
	RequiresBoundToken bool `json:"requires_bound_token,omitempty"`
}

// The reasons of refusals by a tool's [Policy], in [Error.Reason].
// ReasonTokenReplayed refuses a call whose execution-bound token was
// already used (401): see [Policy.RequiresExecution].
const (
	ReasonMissingToken             = "missing_token"
	ReasonInvalidToken             = "invalid_token"
	ReasonTokenRevoked             = "token_revoked"
	ReasonProtocolDenied           = "protocol_denied"
	ReasonAudienceMismatch         = "audience_mismatch"
	ReasonInsufficientCapabilities = "insufficient_capabilities"
	ReasonBlastRadiusExceeded      = "blast_radius_exceeded"
	ReasonExecBindingInvalid       = "exec_binding_invalid"
	ReasonInsufficientScope        = "insufficient_scope"
	ReasonTokenReplayed            = "token_replayed"
	ReasonTokenNotBound            = "token_not_bound" // see Policy.RequiresBoundToken
)

// needsToken reports whether the policy asks for a capability token.
func (p *Policy) needsToken() bool {
	return p.ResourceURI != "" || len(p.RequiredCapabilities) > 0 || p.MaxBlastRadius != "" ||
		p.RequiresExecution || len(p.AllowedOperations) > 0 || len(p.AllowedTargets) > 0
}

// AllowsProtocol reports whether a call through the named protocol
// ("name" or "name/version") may reach a tool with this policy. A nil
// policy allows every protocol.
func (p *Policy) AllowsProtocol(protocol string) bool {
	if p == nil || len(p.Protocols) == 0 {
		return true
	}
	name := protocolName(protocol)
	if name == "" {
		return false
	}
	for _, allowed := range p.Protocols {
		if protocolName(allowed) == name {
			return true
		}
	}
	return false
}

// protocolName strips the version of "name/version".
func protocolName(p string) string {
	name, _, _ := strings.Cut(p, "/")
	return strings.TrimSpace(name)
}

// policyProblem checks a policy at registration.
func policyProblem(p *Policy) string {
	if p == nil {
		return ""
	}
	for _, proto := range p.Protocols {
		if protocolName(proto) == "" {
			return fmt.Sprintf("Protocols holds %q, which names no protocol", proto)
		}
	}
	if p.MaxBlastRadius != "" && p.MaxBlastRadius != "*" {
		scope, value, ok := strings.Cut(p.MaxBlastRadius, ":")
		if !ok || scope == "" || value == "" {
			return fmt.Sprintf("MaxBlastRadius %q must be \"*\" or \"scope:value\" (the value may be \"*\")", p.MaxBlastRadius)
		}
	}
	if (len(p.AllowedOperations) > 0 || len(p.AllowedTargets) > 0) && !p.RequiresExecution {
		return "AllowedOperations and AllowedTargets apply to bound tokens: set RequiresExecution too"
	}
	for _, list := range [][]string{p.RequiredCapabilities, p.AllowedOperations, p.AllowedTargets} {
		if slices.Contains(list, "") {
			return "an empty string in RequiredCapabilities, AllowedOperations or AllowedTargets would match nothing"
		}
	}
	for i, scope := range p.RequiredScopes {
		if problem := scopeProblem(scope); problem != "" {
			return fmt.Sprintf("RequiredScopes[%d] %s", i, problem)
		}
		if slices.Contains(p.RequiredScopes[:i], scope) {
			return fmt.Sprintf("RequiredScopes lists %q twice", scope)
		}
	}
	return ""
}

// scopeProblem says why s is not an RFC 6749 scope token (§3.3: one or
// more of the printable ASCII characters other than space, '"' and '\'),
// or returns "". A scope that breaks the rule could not be granted in a
// token's space-separated "scope" claim, nor named in the quoted scope
// of a WWW-Authenticate challenge.
func scopeProblem(s string) string {
	if s == "" {
		return "is empty: it would match nothing"
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == ' ':
			return fmt.Sprintf("%q holds a space: list each scope as an element of its own", wire.Truncate(s, 80))
		case c < 0x21 || c > 0x7e || c == '"' || c == '\\':
			return fmt.Sprintf("%q holds %q at byte %d: a scope is printable ASCII without spaces, double quotes or backslashes (RFC 6749 section 3.3)", wire.Truncate(s, 80), c, i)
		}
	}
	return ""
}

func clonePolicy(p *Policy) *Policy {
	if p == nil {
		return nil
	}
	c := *p
	c.Protocols = slices.Clone(p.Protocols)
	c.RequiredCapabilities = slices.Clone(p.RequiredCapabilities)
	c.AllowedOperations = slices.Clone(p.AllowedOperations)
	c.AllowedTargets = slices.Clone(p.AllowedTargets)
	c.RequiredScopes = slices.Clone(p.RequiredScopes)
	return &c
}

// refuse builds a policy refusal: 403, or 401 for the token's own faults.
func refuse(reason, message, developer string) *Error {
	code := CodeForbidden
	switch reason {
	case ReasonMissingToken, ReasonInvalidToken, ReasonTokenRevoked, ReasonTokenReplayed, ReasonTokenNotBound:
		code = CodeUnauthenticated
	}
	return &Error{Code: code, Message: message, DeveloperMessage: developer, Reason: reason, outcome: OutcomeRefused}
}

// checkPolicy enforces a tool's policy on a call, in the order the Policy
// documentation gives.
// A caller that sees the tool through no protocol is answered as for an
// unknown tool, but for the refusals it can act on: a missing token, and
// missing scopes (step up: the challenge names them).
func (r *Registry) checkPolicy(ctx context.Context, t *registeredTool, c *Call) error {
	p := t.def.Policy
	if p == nil {
		return nil
	}
	id := CallerIdentity(ctx)
	if !p.AllowsProtocol(c.Protocol) {
		if !r.Visibility(id, "").Sees(t.def.ID) {
			return unknownTo(c.req)
		}
		proto := c.Protocol
		if proto == "" {
			proto = "a direct call"
		}
		return refuse(ReasonProtocolDenied,
			fmt.Sprintf("Tool '%s' cannot be called through %s", t.def.Name, wire.Truncate(proto, 40)),
			fmt.Sprintf("%s accepts calls through %s only", t.def.ID, strings.Join(p.Protocols, ", ")))
	}
	n := t.needs
	if n == nil {
		return nil
	}
	var who caller
	who.read(id)
	if reason := n.firstFailed(&who, id, true); reason != "" {
		if reason != ReasonMissingToken && reason != ReasonInsufficientScope && reason != ReasonTokenNotBound && !r.Visibility(id, "").Sees(t.def.ID) {
			return unknownTo(c.req)
		}
		return refusal(reason, t, id)
	}
	if !n.capability {
		return nil
	}
	claims := id.Claims
	if err := r.checkRevoked(ctx, id, t.def.ID); err != nil {
		return err
	}

	if p.RequiresExecution {
		if _, _, problem := tokenID(claims); problem != "" {
			return refuse(ReasonInvalidToken, problem, "")
		}
		if msg := checkBinding(p, claims, c.req); msg != "" {
			return refuse(ReasonExecBindingInvalid,
				fmt.Sprintf("The token is not bound to this call of tool '%s'", t.def.Name), msg)
		}
	}
	return nil
}

// checkRevoked refuses a request of subject (a tool id, a resource's URI,
// a prompt's name) whose token has been revoked, or whose revocation
// cannot be checked.
func (r *Registry) checkRevoked(ctx context.Context, id *Identity, subject string) error {
	if id.revoked == nil {
		return nil
	}
	jti, _ := id.Claims["jti"].(string)
	revoked, err := id.revoked(ctx, jti)
	switch {
	case err != nil:
		r.logger.WarnContext(ctx, "otc: revocation check failed; refusing the request", "of", subject, "error", err.Error())
		return refuse(ReasonTokenRevoked, "The token's revocation could not be checked",
			"the revocation check failed, and a request is refused rather than let through unchecked")
	case revoked:
		return refuse(ReasonTokenRevoked, "The token has been revoked", "")
	}
	return nil
}

// refusal words the refusal of a call to tool t whose caller id failed
// the check of reason (callerChecks), saying what the caller lacks.
func refusal(reason string, t *registeredTool, id *Identity) *Error {
	p, n := t.def.Policy, t.needs
	switch reason {
	case ReasonMissingToken:
		if n.capability {
			return refuse(reason, fmt.Sprintf("Tool '%s' needs a capability token", t.def.Name),
				"send a bearer token from a configured issuer (see NewCapabilityAuth); other credentials cannot call this tool")
		}
		e := refuse(reason, fmt.Sprintf("Tool '%s' needs an access token granting %s", t.def.Name, namedScopes(p.RequiredScopes)),
			"send a bearer token (an OAuth access token) whose scope claim grants them; other credentials cannot call this tool")
		e.RequiredScopes = slices.Clone(p.RequiredScopes)
		return e
	case ReasonTokenNotBound:
		return refuse(reason, fmt.Sprintf("Tool '%s' takes only a token bound to a key the caller holds (DPoP), not a bearer token", t.def.Name),
			"get a DPoP-bound token (RFC 9449) and send it as \"Authorization: DPoP <token>\" with a proof for each request")
	case ReasonAudienceMismatch:
		return refuse(reason, fmt.Sprintf("The token was not issued for tool '%s'", t.def.Name),
			fmt.Sprintf("the token's aud must hold %q", n.resource))
	case ReasonInsufficientScope:
		missing := missingScopes(id, p.RequiredScopes)
		e := refuse(reason, fmt.Sprintf("Tool '%s' needs %s, which the token does not grant", t.def.Name, namedScopes(missing)),
			fmt.Sprintf("ask the authorization server for a token whose scope also holds %s (the tool needs %s)",
				strings.Join(missing, " "), strings.Join(p.RequiredScopes, " ")))
		e.RequiredScopes = missing
		return e
	case ReasonInsufficientCapabilities:
		caps, _ := idclaims.Strings(id.Claims["caps"])
		var missing []string
		for _, need := range p.RequiredCapabilities {
			if !slices.Contains(caps, need) {
				missing = append(missing, need)
			}
		}
		return refuse(reason, fmt.Sprintf("The token lacks the capabilities tool '%s' requires", t.def.Name),
			"missing from the token's caps: "+strings.Join(missing, ", "))
	}
	// ReasonBlastRadiusExceeded
	br, _ := id.Claims["blast_radius"].(string)
	switch {
	case br == "":
		return refuse(reason, fmt.Sprintf("The call's blast radius is wider than tool '%s' allows", t.def.Name),
			fmt.Sprintf("the token has no blast_radius, and the tool's maximum is %q", p.MaxBlastRadius))
	case !idclaims.WellFormedScope(br):
		return refuse(reason, fmt.Sprintf("The call's blast radius is not one tool '%s' can check", t.def.Name),
			fmt.Sprintf("the token's blast_radius %q is malformed: it must be \"scope:value\" with a scope and a value that are not empty", wire.Truncate(br, 80)))
	}
	return refuse(reason, fmt.Sprintf("The call's blast radius is wider than tool '%s' allows", t.def.Name),
		fmt.Sprintf("the token's blast_radius %q does not fit the tool's maximum %q", wire.Truncate(br, 80), p.MaxBlastRadius))
}

// checkBinding checks a token's execution binding against the call; it
// returns what is wrong, or "".
func checkBinding(p *Policy, claims map[string]any, req *CallRequest) string {
	if !idclaims.Bound(claims) {
		return "the tool requires an execution-bound token (exec_act, inp_hash, target, htm, htu); this one has none"
	}
	str := func(k string) (string, bool) {
		v, ok := claims[k].(string)
		return v, ok
	}
	if len(p.AllowedOperations) > 0 {
		if act, _ := str("exec_act"); !slices.Contains(p.AllowedOperations, act) {
			return fmt.Sprintf("exec_act %q is not one of %s", wire.Truncate(act, 80), strings.Join(p.AllowedOperations, ", "))
		}
	}
	if len(p.AllowedTargets) > 0 {
		if target, _ := str("target"); !slices.Contains(p.AllowedTargets, target) {
			return fmt.Sprintf("target %q is not one of %s", wire.Truncate(target, 80), strings.Join(p.AllowedTargets, ", "))
		}
	}
	hash, _ := str("inp_hash")
	if hash == "" {
		return "the token has no inp_hash: it must hold the base64url SHA-256 of the exact request body"
	}
	if req == nil || req.RequestBody == nil {
		return "the call carries no request body to compare inp_hash with"
	}
	sum := sha256.Sum256(req.RequestBody)
	if subtle.ConstantTimeCompare([]byte(hash), []byte(base64.RawURLEncoding.EncodeToString(sum[:]))) != 1 {
		return "inp_hash is not the SHA-256 of the request body: the body differs from the one the token was issued for"
	}
	var hr *http.Request
	if req != nil {
		hr = req.HTTPRequest
	}
	if htm, ok := claims["htm"]; ok {
		m, _ := htm.(string)
		if hr == nil || m != hr.Method {
			return "htm does not match the request's method"
		}
	}
	if htu, ok := claims["htu"]; ok {
		u, _ := htu.(string)
		if hr == nil || !sameTarget(u, hr) {
			return "htu does not match the request's URL"
		}
	}
	return ""
}

// sameTarget compares an htu claim with the URL a request was sent to:
// scheme, host and path, without query or fragment, as for DPoP. The
// path is the one the client sent, before any prefix was stripped.
func sameTarget(htu string, r *http.Request) bool {
	want, err := url.Parse(htu)
	if err != nil {
		return false
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	path := r.URL.Path
	if u, err := url.ParseRequestURI(r.RequestURI); err == nil {
		path = u.Path
	}
	return strings.EqualFold(want.Scheme, scheme) && strings.EqualFold(want.Host, r.Host) && want.Path == path
}

// namedScopes names scopes in a message: "the scope a", "the scopes a b".
func namedScopes(scopes []string) string {
	if len(scopes) == 1 {
		return "the scope " + scopes[0]
	}
	return "the scopes " + strings.Join(scopes, " ")
}

// missingScopes returns those of need that the identity's token does not
// grant ([Identity.Scopes]), or nil when it grants them all.
func missingScopes(id *Identity, need []string) []string {
	var missing []string
	for _, s := range need {
		if !idclaims.Granted(id.Claims, s) {
			missing = append(missing, s)
		}
	}
	return missing
}

// latestAllowed returns the highest version of a tool that the named
// protocol may call, or nil.
func latestAllowed(fam *toolFamily, protocol string) *registeredTool {
	for _, v := range slices.Backward(fam.versions) {
		if v.def.Policy.AllowsProtocol(protocol) {
			return v
		}
	}
	return nil
}
