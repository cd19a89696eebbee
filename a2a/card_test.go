package a2a_test

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/a2a"
	"github.com/otcgo/otc/auth"
	"github.com/otcgo/otc/internal/testkit"
)

// cardOf decodes the skills, capabilities and security of a card.
type cardOf struct {
	Capabilities         capabilities               `json:"capabilities"`
	SecuritySchemes      map[string]json.RawMessage `json:"securitySchemes"`
	SecurityRequirements []map[string]any           `json:"securityRequirements"`
	Skills               []struct {
		ID string `json:"id"`
	} `json:"skills"`
}

// capabilities are a card's capabilities: the flags, and the extensions.
type capabilities struct {
	flags      map[string]bool
	Extensions []struct {
		URI      string          `json:"uri"`
		Required bool            `json:"required"`
		Params   json.RawMessage `json:"params"`
	}
}

func (c *capabilities) UnmarshalJSON(b []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	c.flags = map[string]bool{}
	for k, v := range raw {
		if k == "extensions" {
			if err := json.Unmarshal(v, &c.Extensions); err != nil {
				return err
			}
			continue
		}
		var f bool
		if err := json.Unmarshal(v, &f); err != nil {
			return err
		}
		c.flags[k] = f
	}
	return nil
}

func (c cardOf) ids() []string {
	var out []string
	for _, s := range c.Skills {
		out = append(out, s.ID)
	}
	return out
}

// TestExtendedCard: with an authenticator, the public card lists what an
// anonymous caller may call and says an extended card exists; the
// extended card (GetExtendedAgentCard, GET /extendedAgentCard) lists what
// the authenticated caller may call, by the same per-caller rules as the
// other formats' catalogs. Without an authenticator there is none.
func TestExtendedCard(t *testing.T) {
	reg := otc.NewRegistry(nil)
	add := func(id string, p *otc.Policy) {
		require.NoError(t, otc.Register(reg, otc.Tool{ID: id, Version: "1.0.0", Description: "A tool.", Policy: p},
			func(context.Context, struct{}) (int, error) { return 1, nil }))
	}
	add("Notes.Read", nil)
	add("Notes.Write", &otc.Policy{RequiredScopes: []string{"notes:write"}})
	mux := http.NewServeMux()
	mux.Handle("/a2a/", http.StripPrefix("/a2a", a2a.NewHandler(reg, &a2a.Options{Authenticator: testkit.ScopesAuth()})))
	mux.Handle("/open/", http.StripPrefix("/open", a2a.NewHandler(reg, nil)))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	s := &server{url: srv.URL + "/a2a"}

	resp, err := http.Get(s.url + "/.well-known/agent-card.json")
	require.NoError(t, err)
	var public cardOf
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&public))
	resp.Body.Close()
	assert.True(t, public.Capabilities.flags["extendedAgentCard"])
	assert.Equal(t, []string{"Notes.Read@1.0.0"}, public.ids(), "an anonymous caller may not call Notes.Write")
	assert.Empty(t, public.SecuritySchemes, "a custom authenticator without a challenge: no scheme derived")

	for _, tc := range []struct {
		scopes string
		want   []string
	}{
		{"", []string{"Notes.Read@1.0.0"}},
		{"notes:write", []string{"Notes.Read@1.0.0", "Notes.Write@1.0.0"}},
	} {
		r := decodeRPC(t, s.post(t, "/", a2a.Version10, `{"jsonrpc":"2.0","id":1,"method":"GetExtendedAgentCard","params":{}}`, testkit.ScopesHeader, tc.scopes))
		require.Nil(t, r.Error)
		var ext cardOf
		require.NoError(t, json.Unmarshal(r.Result, &ext))
		assert.ElementsMatch(t, tc.want, ext.ids(), tc.scopes)

		req, err := http.NewRequest(http.MethodGet, s.url+"/extendedAgentCard", nil)
		require.NoError(t, err)
		req.Header.Set(testkit.ScopesHeader, tc.scopes)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		var rest cardOf
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&rest))
		resp.Body.Close()
		assert.ElementsMatch(t, tc.want, rest.ids(), tc.scopes)
	}

	open := &server{url: srv.URL + "/open"}
	r := decodeRPC(t, open.post(t, "/", a2a.Version10, `{"jsonrpc":"2.0","id":1,"method":"GetExtendedAgentCard","params":{}}`))
	require.NotNil(t, r.Error)
	assert.Equal(t, -32007, r.Error.Code)
}

// TestSecuritySchemes: a bearer authenticator's card names an HTTP bearer
// scheme and requires it; auth.AnyOf of an API key and a JWT names both,
// and requires either; schemes given in the options are used as given.
// Each requirement lists its scopes as an array (a2a-go's form).
func TestSecuritySchemes(t *testing.T) {
	bearer := challenger{otc.AuthenticatorFunc(func(*http.Request) (*otc.Identity, error) { return nil, otc.ErrNoCredentials }),
		`Bearer resource_metadata="https://tools.example.com/.well-known/oauth-protected-resource/a2a"`}
	keys, err := auth.NewAPIKeyAuth(map[string]string{"ci": "card-test-key-2d8e4f1a9c3b7065"})
	require.NoError(t, err)
	jwtAuth, err := auth.NewJWTAuth(&auth.JWTOptions{Secret: []byte("card-test-secret-of-32-bytes-or-more")})
	require.NoError(t, err)
	const apiKey = `{"apiKeySecurityScheme":{"location":"header","name":"OXP-API-Key"}}`
	const jwtBearer = `{"httpAuthSecurityScheme":{"bearerFormat":"JWT","scheme":"Bearer"}}`
	for _, tc := range []struct {
		name string
		opts *a2a.Options
		want map[string]string
	}{
		{"from_the_challenge", &a2a.Options{Authenticator: bearer}, map[string]string{
			"bearer": `{"httpAuthSecurityScheme":{"bearerFormat":"JWT","description":"An OAuth 2.0 access token; the protected resource's metadata (RFC 9728) is at https://tools.example.com/.well-known/oauth-protected-resource/a2a","scheme":"Bearer"}}`}},
		{"api_key", &a2a.Options{Authenticator: keys}, map[string]string{"apiKey": apiKey}},
		{"any_of", &a2a.Options{Authenticator: auth.AnyOf(keys, jwtAuth)}, map[string]string{"apiKey": apiKey, "bearer": jwtBearer}},
		{"given", &a2a.Options{Authenticator: bearer, SecuritySchemes: map[string]json.RawMessage{"apiKey": json.RawMessage(apiKey)}},
			map[string]string{"apiKey": apiKey}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(a2a.NewHandler(otc.NewRegistry(nil), tc.opts))
			t.Cleanup(srv.Close)
			resp, err := http.Get(srv.URL + "/.well-known/agent-card.json")
			require.NoError(t, err)
			var card cardOf
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&card))
			resp.Body.Close()
			require.Len(t, card.SecuritySchemes, len(tc.want))
			var reqs []map[string]any
			for _, name := range slices.Sorted(maps.Keys(tc.want)) {
				assert.JSONEq(t, tc.want[name], string(card.SecuritySchemes[name]))
				reqs = append(reqs, map[string]any{"schemes": map[string]any{name: []any{}}})
			}
			assert.Equal(t, reqs, card.SecurityRequirements, "any one scheme will do")
		})
	}
}

// challenger is an authenticator with a fixed challenge.
type challenger struct {
	otc.Authenticator
	value string
}

func (c challenger) Challenge(*otc.Error) string { return c.value }

// TestExtendedCardWithoutCredentials: a caller that sends no credentials
// asks for the extended card, as the SDKs do whenever the public card says
// there is one, and gets the public card, over both bindings; one that
// sends a wrong key is refused; another method without credentials is
// refused too.
func TestExtendedCardWithoutCredentials(t *testing.T) {
	keys, err := auth.NewAPIKeyAuth(map[string]string{"ci": "ext-card-key-5b9d2e7c1a4f8036"})
	require.NoError(t, err)
	s := newServer(t, &a2a.Options{Authenticator: keys})
	r := decodeRPC(t, s.post(t, "/", a2a.Version10, `{"jsonrpc":"2.0","id":7,"method":"GetExtendedAgentCard","params":{}}`))
	require.Nil(t, r.Error)
	assert.JSONEq(t, `7`, string(r.ID))
	var card cardOf
	require.NoError(t, json.Unmarshal(r.Result, &card))
	assert.Contains(t, card.ids(), "Calculator.Add@1.0.0")
	r = decodeRPC(t, s.post(t, "/", "", `{"jsonrpc":"2.0","id":8,"method":"agent/getAuthenticatedExtendedCard"}`))
	require.Nil(t, r.Error, "0.3's name for it")

	a := s.get(t, "/extendedAgentCard")
	require.Equal(t, http.StatusOK, a.status, "%s", a.body)
	assert.Contains(t, string(a.body), `"Calculator.Add@1.0.0"`)

	a = s.get(t, "/extendedAgentCard", otc.HeaderAPIKey, "wrong")
	assert.Equal(t, http.StatusUnauthorized, a.status)
	a = s.post(t, "/", a2a.Version10, `{"jsonrpc":"2.0","id":9,"method":"GetTask","params":{"id":"x"}}`)
	assert.Equal(t, http.StatusUnauthorized, a.status)
}

// TestSkillSchemas: the card lists the skill-schemas extension, not
// required, whose params give each skill's input schema (and output
// schema) as the tool publishes them; the examples hold values the
// parameters take: an example, a default, the first enum value, a bound,
// a value of the format.
func TestSkillSchemas(t *testing.T) {
	reg := otc.NewRegistry(nil)
	type to struct {
		Country string `json:"country" jsonschema:"description=Two letters.,pattern=^[A-Z]{2}$,example=FR"`
	}
	type quoteIn struct {
		To      to     `json:"to" jsonschema:"description=Where."`
		Speed   string `json:"speed" jsonschema:"description=How fast.,enum=standard,enum=express"`
		Parcels int    `json:"parcels" jsonschema:"description=How many.,minimum=1,maximum=9"`
		When    string `json:"when" jsonschema:"description=When.,format=date"`
		Note    string `json:"note,omitempty" jsonschema:"description=A note."`
	}
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Shipping.Quote", Version: "1.0.0", Description: "Quotes."},
		func(context.Context, quoteIn) (string, error) { return "", nil }))
	srv := httptest.NewServer(a2a.NewHandler(reg, nil))
	t.Cleanup(srv.Close)
	resp, err := http.Get(srv.URL + "/.well-known/agent-card.json")
	require.NoError(t, err)
	var card struct {
		cardOf
		Skills []struct {
			Examples []string `json:"examples"`
		} `json:"skills"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&card))
	resp.Body.Close()
	require.Len(t, card.Capabilities.Extensions, 1)
	ext := card.Capabilities.Extensions[0]
	assert.Equal(t, a2a.ExtensionSkillSchemas, ext.URI)
	assert.False(t, ext.Required, "clients that do not know it are unaffected")
	var params struct {
		Skills map[string]struct {
			InputSchema  json.RawMessage `json:"inputSchema"`
			OutputSchema json.RawMessage `json:"outputSchema"`
		} `json:"skills"`
	}
	require.NoError(t, json.Unmarshal(ext.Params, &params))
	def, err := reg.Lookup("Shipping.Quote", "")
	require.NoError(t, err)
	s, ok := params.Skills["Shipping.Quote@1.0.0"]
	require.True(t, ok, "%s", ext.Params)
	assert.JSONEq(t, string(def.InputSchema.Parameters), string(s.InputSchema))
	assert.JSONEq(t, string(def.OutputSchema), string(s.OutputSchema))

	require.Len(t, card.Skills, 1)
	assert.JSONEq(t, `{"tool":"Shipping_Quote","input":{"to":{"country":"FR"},"speed":"standard","parcels":1,"when":"2026-01-01"}}`, card.Skills[0].Examples[0])
}
