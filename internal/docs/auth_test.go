package docs_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/auth"
	"github.com/otcgo/otc/client"
)

// A server that takes an API key or an HS256 JWT, and clients that send
// each.
func Example_authentication() {
	os.Setenv("CI_KEY", "ci-key-for-the-example")
	os.Setenv("PARTNER_KEY", "partner-key-for-the-example")
	os.Setenv("JWT_SECRET", "a-shared-secret-of-at-least-32-bytes")
	defer func() {
		for _, name := range []string{"CI_KEY", "PARTNER_KEY", "JWT_SECRET"} {
			os.Unsetenv(name)
		}
	}()
	reg := calculator(nil)

	// docs:start authenticators
	keys, err := auth.NewAPIKeyAuth(map[string]string{
		"ci":      os.Getenv("CI_KEY"),
		"partner": os.Getenv("PARTNER_KEY"),
	})
	if err != nil {
		log.Fatal(err)
	}
	jwts, err := auth.NewJWTAuth(&auth.JWTOptions{
		Secret:    []byte(os.Getenv("JWT_SECRET")), // HS256, at least 32 bytes
		Audiences: []string{"calculator"},          // "aud", when a token has one, must be listed
	})
	if err != nil {
		log.Fatal(err)
	}
	h := otc.NewHandler(reg, &otc.HandlerOptions{Authenticator: auth.AnyOf(keys, jwts)})
	// docs:end authenticators

	send(h, "GET", "/tools", "", nil, "WWW-Authenticate")
	send(h, "GET", "/health", "", nil)

	srv := httptest.NewServer(h)
	defer srv.Close()
	url := srv.URL
	// docs:start client-credentials
	byKey, err := client.New(url, &client.Options{APIKey: os.Getenv("CI_KEY")})
	if err != nil {
		log.Fatal(err)
	}
	byJWT, err := client.New(url, &client.Options{JWT: &client.JWTSigner{
		Secret:   []byte(os.Getenv("JWT_SECRET")),
		Audience: "calculator",
	}})
	if err != nil {
		log.Fatal(err)
	}
	// docs:end client-credentials
	for _, c := range []*client.Client{byKey, byJWT} {
		defs, err := c.ListTools(context.Background())
		fmt.Println(len(defs), err)
	}
	// Output:
	// 401
	// WWW-Authenticate: Bearer
	// {"$schema":"otc://1.0","message":"Authentication required: send an API key in the OXP-API-Key header or a bearer token in the Authorization header"}
	// 200
	// {"$schema":"otc://1.0","status":"ok"}
	// 1 <nil>
	// 1 <nil>
}

// refundInput is the input of Payments.Refund.
type refundInput struct {
	OrderID     string `json:"order_id" jsonschema:"description=The order to refund."`
	AmountCents int    `json:"amount_cents" jsonschema:"description=How much to refund in cents.,minimum=1"`
}

func refund(ctx context.Context, in refundInput) (string, error) { return "rf_1", nil }

// registerRefund registers Payments.Refund with the policy the guides show.
func registerRefund(reg *otc.Registry) {
	// docs:start policy
	err := otc.Register(reg, otc.Tool{
		ID: "Payments.Refund", Version: "1.0.0", Description: "Refunds an order.",
		Policy: &otc.Policy{
			Protocols:            []string{"otc", "mcp"},
			ResourceURI:          "urn:otc:example:payments",
			RequiredCapabilities: []string{"payments:refund"},
			MaxBlastRadius:       "tenant:*",
			RequiresExecution:    true,
			AllowedOperations:    []string{"refund"},
		},
	}, refund)
	// docs:end policy
	if err != nil {
		panic(err)
	}
}

// A tool that changes things that matter, and who may call it.
func Example_policy() {
	reg := otc.NewRegistry(nil)
	registerRefund(reg)

	// docs:start policy-calls
	// A caller with an API key, over OTC and over the REST view.
	ctx := otc.WithIdentity(context.Background(), &otc.Identity{Method: "api_key", Name: "ci"})
	for _, protocol := range []string{otc.ProtocolOTC, otc.ProtocolHTTP} {
		_, err := reg.Call(ctx, &otc.CallRequest{
			Protocol: protocol,
			ToolID:   "Payments.Refund",
			Input:    json.RawMessage(`{"order_id":"A-1001","amount_cents":250}`),
		})
		var e *otc.Error
		if errors.As(err, &e) {
			fmt.Println(protocol, e.Code.HTTPStatus(), e.Reason, e.Message)
		}
	}
	// docs:end policy-calls

	// Output:
	// otc 401 missing_token Tool 'Payments_Refund' needs a capability token
	// http 400  Tool 'Payments_Refund' was not found
}

// noteInput is the input of Notes.Write.
type noteInput struct {
	Text string `json:"text" jsonschema:"description=The note's text."`
}

func writeNote(ctx context.Context, in noteInput) (string, error) { return "n_1", nil }

// A tool that needs an OAuth scope: a token without it is refused with a
// challenge naming it, and does not see the tool in its catalog.
func Example_scopes() {
	reg := calculator(nil)
	// docs:start scopes
	err := otc.Register(reg, otc.Tool{
		ID: "Notes.Write", Version: "1.0.0", Description: "Writes a note.",
		Policy: &otc.Policy{RequiredScopes: []string{"notes:write"}},
	}, writeNote)
	// docs:end scopes
	if err != nil {
		panic(err)
	}
	// A stand-in for an OAuth authenticator: the token's scopes come in a
	// header.
	oauth := otc.AuthenticatorFunc(func(r *http.Request) (*otc.Identity, error) {
		return &otc.Identity{Method: "oauth", Name: "user", Claims: map[string]any{"scope": r.Header.Get("X-Scopes")}}, nil
	})
	h := otc.NewHandler(reg, &otc.HandlerOptions{Authenticator: oauth})

	call := `{"request":{"tool_id":"Notes.Write","call_id":"c1","input":{"text":"hi"}}}`
	send(h, "POST", "/tools/call", call, []string{"X-Scopes", "notes:read"}, "WWW-Authenticate")
	send(h, "POST", "/tools/call", call, []string{"X-Scopes", "notes:read notes:write"})
	for _, scopes := range []string{"notes:read", "notes:read notes:write"} {
		req := httptest.NewRequest("GET", "/tools", nil)
		req.Header.Set("X-Scopes", scopes)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		var catalog struct {
			Tools []struct {
				ID string `json:"id"`
			} `json:"tools"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &catalog); err != nil {
			panic(err)
		}
		fmt.Printf("%s sees:", scopes)
		for _, t := range catalog.Tools {
			fmt.Print(" ", t.ID)
		}
		fmt.Println()
	}
	// Output:
	// 403
	// WWW-Authenticate: Bearer error="insufficient_scope", scope="notes:write"
	// {"$schema":"otc://1.0","message":"Tool 'Notes_Write' needs the scope notes:write, which the token does not grant","developer_message":"ask the authorization server for a token whose scope also holds notes:write (the tool needs notes:write)","reason":"insufficient_scope","required_scopes":["notes:write"]}
	// 200
	// {"$schema":"otc://1.0","result":{"call_id":"c1","duration":…,"success":true,"value":"n_1"}}
	// notes:read sees: Calculator.Add@1.0.0
	// notes:read notes:write sees: Calculator.Add@1.0.0 Notes.Write@1.0.0
}

// revocations stands for the service's own record of revoked tokens.
type revocations struct{}

func (revocations) Has(ctx context.Context, jti string) (bool, error) { return false, nil }

// Capability tokens, from an issuer's JWKS, beside API keys.
func Example_capabilityTokens() {
	ctx := context.Background()
	reg := calculator(nil)
	apiKeys, err := auth.NewAPIKeyAuth(map[string]string{"ops": os.Getenv("OPS_KEY")})
	if err != nil {
		log.Fatal(err)
	}
	var denylist revocations
	// docs:start capability
	capAuth, err := auth.NewCapabilityAuth(ctx, &auth.CapabilityOptions{
		Issuers: []string{"https://issuer.example"},
		JWKSURL: "https://issuer.example/.well-known/jwks.json", // or JWKS: a static set
		Revoked: func(ctx context.Context, jti string) (bool, error) {
			return denylist.Has(ctx, jti)
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	h := otc.NewHandler(reg, &otc.HandlerOptions{Authenticator: auth.AnyOf(apiKeys, capAuth)})
	// docs:end capability
	log.Fatal(http.ListenAndServe("127.0.0.1:8080", h))
}
