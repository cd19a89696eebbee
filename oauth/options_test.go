package oauth_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc/oauth"
)

// TestNewRefusesMisconfiguration: each misconfiguration fails New with a
// message naming it.
func TestNewRefusesMisconfiguration(t *testing.T) {
	t.Parallel()
	k := keys(t)
	good := jwksJSON(t, usualJWKs(t)...)
	private := func() json.RawMessage {
		j, err := jwkset.NewJWKFromKey(k.ec, jwkset.JWKOptions{Metadata: jwkset.JWKMetadataOptions{KID: "priv"}, Marshal: jwkset.JWKMarshalOptions{Private: true}})
		require.NoError(t, err)
		return jwksJSON(t, j.Marshal())
	}()
	as := func(s oauth.AuthorizationServer) []oauth.AuthorizationServer { return []oauth.AuthorizationServer{s} }
	in := func(edit func(in *oauth.Introspection)) *oauth.Introspection {
		i := &oauth.Introspection{Endpoint: "https://login.example.com/introspect", ClientID: "rs", ClientSecret: "s"}
		if edit != nil {
			edit(i)
		}
		return i
	}
	for _, tc := range []struct {
		name string
		ctx  context.Context
		opts oauth.Options
		want string
	}{
		{"nil_context", nil, oauth.Options{Resource: resource, AuthorizationServers: as(oauth.AuthorizationServer{Issuer: "x", JWKS: good})}, "nil context"},
		{"no_resource", t.Context(), oauth.Options{AuthorizationServers: as(oauth.AuthorizationServer{Issuer: "x", JWKS: good})}, "no Resource"},
		{"resource_relative", t.Context(), oauth.Options{Resource: "/mcp", AuthorizationServers: as(oauth.AuthorizationServer{Issuer: "x", JWKS: good})}, "not an absolute URL"},
		{"resource_fragment", t.Context(), oauth.Options{Resource: "https://tools.example.com/mcp#x", AuthorizationServers: as(oauth.AuthorizationServer{Issuer: "x", JWKS: good})}, "fragment"},
		{"resource_query", t.Context(), oauth.Options{Resource: "https://tools.example.com/mcp?a=1", AuthorizationServers: as(oauth.AuthorizationServer{Issuer: "x", JWKS: good})}, "query"},
		{"resource_plain_http", t.Context(), oauth.Options{Resource: "http://tools.example.com/mcp", AuthorizationServers: as(oauth.AuthorizationServer{Issuer: "x", JWKS: good})}, "must be an https URL"},
		{"no_servers", t.Context(), oauth.Options{Resource: resource}, "no AuthorizationServers"},
		{"empty_audience", t.Context(), oauth.Options{Resource: resource, Audiences: []string{""}, AuthorizationServers: as(oauth.AuthorizationServer{Issuer: "x", JWKS: good})}, "Audiences is empty"},
		{"no_issuer", t.Context(), oauth.Options{Resource: resource, AuthorizationServers: as(oauth.AuthorizationServer{JWKS: good})}, "has no Issuer"},
		{"issuer_twice", t.Context(), oauth.Options{Resource: resource, AuthorizationServers: []oauth.AuthorizationServer{{Issuer: "x", JWKS: good}, {Issuer: "x", JWKS: good}}}, "listed twice"},
		{"both_key_sources", t.Context(), oauth.Options{Resource: resource, AuthorizationServers: as(oauth.AuthorizationServer{Issuer: "x", JWKS: good, JWKSURL: "https://login.example.com/jwks"})}, "both JWKSURL and JWKS"},
		{"jwks_url_plain_http", t.Context(), oauth.Options{Resource: resource, AuthorizationServers: as(oauth.AuthorizationServer{Issuer: "x", JWKSURL: "http://login.example.com/jwks"})}, "must be an https URL"},
		{"discovery_issuer_not_url", t.Context(), oauth.Options{Resource: resource, AuthorizationServers: as(oauth.AuthorizationServer{Issuer: "urn:issuer"})}, "not an absolute URL"},
		{"discovery_issuer_plain_http", t.Context(), oauth.Options{Resource: resource, AuthorizationServers: as(oauth.AuthorizationServer{Issuer: "http://login.example.com"})}, "must be an https URL"},
		{"discovery_issuer_query", t.Context(), oauth.Options{Resource: resource, AuthorizationServers: as(oauth.AuthorizationServer{Issuer: "https://login.example.com?tenant=1"})}, "query or fragment"},
		{"jwks_not_a_set", t.Context(), oauth.Options{Resource: resource, AuthorizationServers: as(oauth.AuthorizationServer{Issuer: "x", JWKS: json.RawMessage(`[1]`)})}, "not a JSON Web Key Set"},
		{"jwks_private", t.Context(), oauth.Options{Resource: resource, AuthorizationServers: as(oauth.AuthorizationServer{Issuer: "x", JWKS: private})}, "private or secret key"},
		{"jwks_unusable", t.Context(), oauth.Options{Resource: resource, AuthorizationServers: as(oauth.AuthorizationServer{Issuer: "x", JWKS: jwksJSON(t, jwk(t, &k.rsa1024.PublicKey, "short"))})}, "no key with a kid"},
		{"negative_refresh", t.Context(), oauth.Options{Resource: resource, RefreshInterval: -time.Second, AuthorizationServers: as(oauth.AuthorizationServer{Issuer: "x", JWKS: good})}, "negative RefreshInterval"},
		{"negative_lifetime", t.Context(), oauth.Options{Resource: resource, MaxLifetime: -time.Second, AuthorizationServers: as(oauth.AuthorizationServer{Issuer: "x", JWKS: good})}, "negative MaxLifetime"},
		{"introspection_twice", t.Context(), oauth.Options{Resource: resource, AuthorizationServers: []oauth.AuthorizationServer{{Issuer: "x", JWKS: good, Introspection: in(nil)}, {Issuer: "y", JWKS: good, Introspection: in(nil)}}}, "at most one may"},
		{"introspection_no_client", t.Context(), oauth.Options{Resource: resource, AuthorizationServers: as(oauth.AuthorizationServer{Issuer: "x", JWKS: good, Introspection: in(func(i *oauth.Introspection) { i.ClientSecret = "" })})}, "needs ClientID and ClientSecret"},
		{"introspection_static_no_endpoint", t.Context(), oauth.Options{Resource: resource, AuthorizationServers: as(oauth.AuthorizationServer{Issuer: "x", JWKS: good, Introspection: in(func(i *oauth.Introspection) { i.Endpoint = "" })})}, "set Endpoint"},
		{"introspection_plain_http", t.Context(), oauth.Options{Resource: resource, AuthorizationServers: as(oauth.AuthorizationServer{Issuer: "x", JWKS: good, Introspection: in(func(i *oauth.Introspection) { i.Endpoint = "http://login.example.com/i" })})}, "must be an https URL"},
		{"introspection_negative_timeout", t.Context(), oauth.Options{Resource: resource, AuthorizationServers: as(oauth.AuthorizationServer{Issuer: "x", JWKS: good, Introspection: in(func(i *oauth.Introspection) { i.Timeout = -1 })})}, "negative Introspection.Timeout"},
		{"introspection_negative_bounds", t.Context(), oauth.Options{Resource: resource, AuthorizationServers: as(oauth.AuthorizationServer{Issuer: "x", JWKS: good, Introspection: in(func(i *oauth.Introspection) { i.CacheEntries = -1 })})}, "may not be negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := oauth.New(tc.ctx, &tc.opts)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.Contains(t, err.Error(), "otc/oauth: ")
		})
	}
}
