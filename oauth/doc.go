// Package oauth makes a tool server an OAuth 2.0 resource server, as the
// MCP authorization spec asks of a remote MCP server: it accepts the
// access tokens that an authorization server issued for it, tells clients
// where to get one, and says which scopes a tool needs.
//
//	auth, err := oauth.New(ctx, &oauth.Options{
//		Resource:             "https://tools.example.com/mcp",
//		AuthorizationServers: []oauth.AuthorizationServer{{Issuer: "https://login.example.com"}},
//	})
//	if err != nil {
//		log.Fatal(err)
//	}
//	prm, err := auth.MetadataHandler(reg, &oauth.MetadataOptions{ResourceName: "Example tools"})
//	if err != nil {
//		log.Fatal(err)
//	}
//	mux := http.NewServeMux()
//	prm.Mount(mux) // /.well-known/oauth-protected-resource[/mcp]
//	mux.Handle("/mcp", mcp.NewHandler(reg, &mcp.Options{Authenticator: auth}))
//
// # Tokens
//
// An [Authenticator] accepts JWT access tokens (RFC 9068) signed by the
// keys of one or more authorization servers, found through their metadata
// (RFC 8414, or OpenID Connect Discovery) or configured, and fetched in
// the background with the refresh and backoff rules of the root package's
// capability tokens. A token must be for this server: its "aud" names
// [Options.Resource], the resource indicator (RFC 8707) a client sends
// when it asks for a token. Opaque tokens, and JWTs if so configured, are
// checked by introspection (RFC 7662), whose answers are cached briefly.
// The caller's [otc.Identity] has Method [Method] and the token's claims,
// so that [otc.Identity.Scopes] reads its scopes for a tool's
// [otc.Policy] RequiredScopes.
//
// Capability tokens and OAuth access tokens can be accepted side by side:
// auth.AnyOf(capabilityAuth, oauthAuth) sends each token to the
// authenticator whose issuer it names, and reports that authenticator's
// refusal when it is refused.
//
// # Challenges
//
// Every 401 answer names the metadata document:
//
//	WWW-Authenticate: Bearer resource_metadata="https://tools.example.com/.well-known/oauth-protected-resource/mcp"
//
// with error="invalid_token" and an error_description when a token was
// sent and refused; a call refused for lack of scopes is a 403 with
// error="insufficient_scope" and scope naming what to ask for, so that a
// client can step up (see [Authenticator.Challenge]). The handlers of
// every wire format ask for these through [otc.Challenge].
//
// # Metadata
//
// [Authenticator.MetadataHandler] serves the Protected Resource Metadata
// document (RFC 9728) that MCP clients read first: the resource, its
// authorization servers and the scopes its tools require, at the
// well-known URL of the resource ([MetadataURL]) and at the root's.
package oauth
