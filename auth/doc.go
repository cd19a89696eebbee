// Package auth holds the authenticators a tool server configures, each an
// [otc.Authenticator] that the handlers of every wire format take (OTC,
// REST, MCP over HTTP, A2A, the registry view):
//
//   - [NewAPIKeyAuth]: a key in the OXP-API-Key header (or OTC-API-Key);
//   - [NewJWTAuth]: HS256 bearer tokens under a shared secret;
//   - [NewCapabilityAuth]: capability tokens, bearer JWTs signed by an
//     issuer's asymmetric keys, whose claims a tool's [otc.Policy] checks;
//   - [AnyOf]: a request passes when any of several methods accepts it.
//
// For example, to accept an API key or an HS256 token on every format:
//
//	keys, err := auth.NewAPIKeyAuth(map[string]string{"ci": os.Getenv("CI_KEY")})
//	if err != nil {
//		log.Fatal(err)
//	}
//	tokens, err := auth.NewJWTAuth(&auth.JWTOptions{Secret: secret, Audiences: []string{"tools.example.com"}})
//	if err != nil {
//		log.Fatal(err)
//	}
//	a := auth.AnyOf(keys, tokens)
//	mux.Handle("/", otc.NewHandler(reg, &otc.HandlerOptions{Authenticator: a}))
//	mux.Handle("/mcp", mcp.NewHandler(reg, &mcp.Options{Authenticator: a}))
//
// Every refusal is an [*otc.Error] with CodeUnauthenticated that says what
// was wrong without quoting the credential; the bearer methods answer
// with the challenge "Bearer" ([otc.Challenger]). Credentials sent more
// than once (two header lines, or bearer tokens joined by a comma) are
// refused, by AnyOf too, even when another method would accept them.
//
// The OAuth 2.0 resource server, which accepts the access tokens of an
// authorization server, is package oauth; AnyOf combines it with these.
package auth
