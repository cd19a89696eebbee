package otc

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	idclaims "github.com/otcgo/otc/internal/claims"
)

// This file is server authentication as a handler sees it: who may use
// the tool server at all, as opposed to the per-tool secrets and tokens a
// call carries in its context. The authenticators themselves (API keys,
// JWTs, capability tokens, and AnyOf to combine them) are in package auth;
// the OAuth resource server is in package oauth.

// Authenticator decides whether a request may use the tool server. Set one
// in [HandlerOptions.Authenticator] (and in the options of the other wire
// formats); the handler asks it before reading the body of any request
// except GET /health. Package auth has the authenticators this module
// ships; an [AuthenticatorFunc] adapts any other scheme.
type Authenticator interface {
	// Authenticate returns the identity the request proves, or an error.
	// An [*Error] is answered as is (401 for CodeUnauthenticated); any
	// other error is answered 401 with a generic message, so that its text
	// cannot leak. An error wrapping [ErrNoCredentials] means the request
	// carried none of the credentials this authenticator looks for;
	// auth.AnyOf relies on that to report the most useful failure.
	Authenticate(r *http.Request) (*Identity, error)
}

// AuthenticatorFunc adapts a function to [Authenticator], for schemes this
// module does not ship.
type AuthenticatorFunc func(r *http.Request) (*Identity, error)

// Authenticate calls f(r).
func (f AuthenticatorFunc) Authenticate(r *http.Request) (*Identity, error) { return f(r) }

// ErrNoCredentials is wrapped by authentication errors for a request that
// carried no credentials of the kind an authenticator looks for.
var ErrNoCredentials = errors.New("otc: no credentials")

// HTTP headers of the protocol. HeaderAPIKey (and HeaderLegacyAPIKey, the
// older name) is the header in which a client sends an API key (see
// auth.NewAPIKeyAuth); HeaderReplayed, "Idempotent-Replayed: true", marks
// the answer of the OTC handler and the REST view to a call whose outcome
// was replayed from the idempotency store rather than run.
const (
	HeaderAPIKey       = "OXP-API-Key"
	HeaderLegacyAPIKey = "OTC-API-Key"
	HeaderReplayed     = "Idempotent-Replayed"
)

// MethodCapability is the [Identity.Method] of a caller that proved itself
// with a capability token (see auth.NewCapabilityAuth), the only kind a
// tool's [Policy] token checks accept.
const MethodCapability = "capability"

// Identity is who a request proved to be. A tool function reads it with
// [CallerIdentity].
type Identity struct {
	// Method is how the caller proved itself: "api_key", "jwt",
	// [MethodCapability], "oauth", or what a custom authenticator says.
	Method string
	// Name is the name the server's author gave the API key that matched
	// (never the key itself), or a JWT's subject ("sub").
	Name string
	// Claims holds all the claims of a JWT, as decoded from JSON; nil for
	// other methods.
	Claims map[string]any

	// revoked, set by the capability-token authenticator, asks whether a
	// token id (jti) has been revoked; a tool's policy calls it.
	revoked func(ctx context.Context, jti string) (bool, error)
	// leeway is the clock skew the authenticator allowed the token's
	// "exp": a spent token id is remembered that much past it.
	leeway time.Duration
}

// Scopes returns the OAuth scopes the identity's token grants: its "scope"
// claim split on single spaces (RFC 6749 section 3.3, RFC 9068), or its
// "scp" claim, an array of strings (or one string) as some authorization
// servers write it. It returns nil for an identity without claims, whose
// claims name no scope, or whose scopes are malformed (another space or a
// control character, which the authenticators of this module refuse).
func (id *Identity) Scopes() []string {
	if id == nil {
		return nil
	}
	return slices.Collect(idclaims.Scopes(id.Claims))
}

type identityKey struct{}

// WithIdentity returns a context carrying id. The handler calls it after
// authentication; tests and custom transports may call it too.
func WithIdentity(ctx context.Context, id *Identity) context.Context {
	return context.WithValue(ctx, identityKey{}, id)
}

// CallerIdentity returns the identity the request proved, or nil when the
// server does not authenticate.
func CallerIdentity(ctx context.Context) *Identity {
	id, _ := ctx.Value(identityKey{}).(*Identity)
	return id
}

// unauthenticated builds the error of a failed authentication.
func unauthenticated(message string, cause error) *Error {
	return &Error{Code: CodeUnauthenticated, Message: message, cause: cause}
}

// Authenticate runs a on r and returns r with the caller's [Identity] in
// its context, or the error to answer with: a's own [*Error], or a generic
// 401 for any other failure (whose text could leak a secret), including
// an authenticator that returned neither identity nor error. A nil a
// accepts every request. The handlers of every wire format call it before
// reading a request's body; so may the adapters of other formats.
func Authenticate(a Authenticator, r *http.Request) (*http.Request, *Error) {
	if a == nil {
		return r, nil
	}
	id, err := a.Authenticate(r)
	if err == nil && id != nil {
		return r.WithContext(WithIdentity(r.Context(), id)), nil
	}
	e, ok := errors.AsType[*Error](err)
	if !ok {
		e = unauthenticated("Authentication failed", nil)
	}
	return r, e
}

// Challenger is implemented by an [Authenticator] that sets the
// WWW-Authenticate header of the answers refusing a request: "Bearer" for
// bearer tokens; an OAuth resource server names its metadata document in
// each, adds error="invalid_token" when a token was sent and refused, and
// error="insufficient_scope" with the scopes a tool needs.
type Challenger interface {
	// Challenge returns the WWW-Authenticate value of an answer refusing
	// a request with e: a 401 (CodeUnauthenticated), or a 403 with
	// ReasonInsufficientScope. "" leaves the value to [Challenge]'s
	// defaults.
	Challenge(e *Error) string
}

// Challenge returns the WWW-Authenticate value of an answer that refuses a
// request with e, for a server whose authenticator is a: the value a
// gives when it is a [Challenger], and otherwise, or when it gives "",
// "Bearer" for a 401 by which a tool's policy refused a token, and for a
// 403 with ReasonInsufficientScope `Bearer error="insufficient_scope",
// scope="…"` naming e.RequiredScopes (RFC 6750 §3.1). It returns "" for
// any other refusal, without asking the authenticator, so that a handler
// may call it with every error it answers. The handlers of every wire
// format (OTC, REST, MCP over HTTP and the registry view) take their
// challenges from it, so that a refusal reads the same on each.
func Challenge(a Authenticator, e *Error) string {
	if e == nil || e.Code != CodeUnauthenticated && e.Reason != ReasonInsufficientScope {
		return ""
	}
	if c, ok := a.(Challenger); ok {
		if v := c.Challenge(e); v != "" {
			return v
		}
	}
	switch {
	case e.Code == CodeUnauthenticated:
		if e.Reason != "" { // a tool's policy refused the token
			return "Bearer"
		}
	case e.Reason == ReasonInsufficientScope:
		return `Bearer error="insufficient_scope", scope="` + strings.Join(e.RequiredScopes, " ") + `"`
	}
	return ""
}
