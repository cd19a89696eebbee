package federation_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/auth"
	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/federation"
	"github.com/otcgo/otc/mcp"
	"github.com/otcgo/otc/mount"
	"github.com/otcgo/otc/prompt"
	"github.com/otcgo/otc/resource"
)

const jwtSecret = "a-shared-secret-of-at-least-32-bytes!!"

func signed(t *testing.T, aud ...string) string {
	t.Helper()
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.RegisteredClaims{
		Subject: "ada", Audience: aud, IssuedAt: jwt.NewNumericDate(time.Now()),
		ExpiresAt: jwt.NewNumericDate(time.Now().Add(5 * time.Minute)),
	}).SignedString([]byte(jwtSecret))
	require.NoError(t, err)
	return tok
}

// TestFederation_PassThrough: with pass_through, the caller's own token
// reaches the upstream when, and only when, its audience names the
// upstream; a token issued for the gateway alone makes no upstream
// request. Without it, no caller token ever leaves the gateway.
func TestFederation_PassThrough(t *testing.T) {
	o := newOrigin(t)
	upAuth, err := auth.NewJWTAuth(&auth.JWTOptions{Secret: []byte(jwtSecret), Audiences: []string{"calc"}})
	require.NoError(t, err)
	h := otc.NewHandler(o.reg, &otc.HandlerOptions{Authenticator: upAuth})
	var mu sync.Mutex
	var callAuth []string // the Authorization of each call the upstream got
	guarded := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			mu.Lock()
			callAuth = append(callAuth, r.Header.Get("Authorization"))
			mu.Unlock()
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(guarded.Close)

	gwAuth, err := auth.NewJWTAuth(&auth.JWTOptions{Secret: []byte(jwtSecret), Audiences: []string{"gateway"}})
	require.NoError(t, err)
	reg := otc.NewRegistry(nil)
	fed, err := federation.Mount(context.Background(), reg, []federation.Upstream{
		{Name: "calc", URL: guarded.URL, Format: client.FormatOTC,
			// The catalog is read with the gateway's own token; calls
			// carry the caller's.
			Credentials: federation.Credentials{BearerToken: signed(t, "calc"), PassThrough: true, Audience: "calc"}},
	}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { fed.Close() })
	mux := http.NewServeMux()
	mount.All(mux, reg, &mount.Options{Authenticator: gwAuth})
	gw := httptest.NewServer(mux)
	t.Cleanup(gw.Close)

	call := func(token string) (*client.Result, error) {
		cl, err := client.New(gw.URL+mount.PrefixOTC, &client.Options{BearerToken: token})
		require.NoError(t, err)
		return cl.Call(context.Background(), "calc.Calculator_Add", addIn{A: 1, B: 2}, nil)
	}
	callerToken := signed(t, "gateway", "calc")
	res, err := call(callerToken)
	require.NoError(t, err)
	assert.JSONEq(t, "3", string(res.Value))
	mu.Lock()
	assert.Equal(t, []string{"Bearer " + callerToken}, callAuth, "the call carried the caller's token")
	mu.Unlock()

	before := o.runs.Load()
	_, err = call(signed(t, "gateway"))
	var te *otc.ToolError
	require.ErrorAs(t, err, &te)
	assert.Contains(t, te.Message, "needs a token issued for its server")
	assert.Equal(t, before, o.runs.Load(), "no upstream request without a token for it")
}

// TestFederation_Requirements: an OTC upstream's tool that requires a
// secret and a user id requires them of the gateway's caller; what the
// caller gives goes on with the call, and a call without it is refused by
// the gateway, without an upstream request.
func TestFederation_Requirements(t *testing.T) {
	o := newOrigin(t)
	var runs atomic.Int64
	require.NoError(t, otc.Register(o.reg, otc.Tool{ID: "Signer.Sign", Version: "1.0.0", Description: "Signs for a user.",
		Requirements: &otc.Requirements{Secrets: []otc.SecretRequirement{{ID: "SIGNING_KEY"}}, UserID: true}},
		func(ctx context.Context, in echoIn) (string, error) {
			runs.Add(1)
			key, _ := otc.Secret(ctx, "SIGNING_KEY")
			return otc.UserID(ctx) + ":" + key + ":" + in.Text, nil
		}))
	_, gw, reg := gateway(t, []federation.Upstream{{Name: "calc", URL: o.url, Format: client.FormatOTC}}, nil)
	def, err := reg.Lookup("calc.Signer_Sign", otc.ProtocolOTC)
	require.NoError(t, err)
	require.NotNil(t, def.Requirements)
	assert.Equal(t, "SIGNING_KEY", def.Requirements.Secrets[0].ID)

	cl, err := client.New(gw+mount.PrefixOTC, nil)
	require.NoError(t, err)
	res, err := cl.Call(context.Background(), "calc.Signer_Sign", echoIn{Text: "hi"},
		&client.CallOptions{UserID: "ada", Secrets: []otc.ToolSecret{{ID: "SIGNING_KEY", Value: "k1"}}})
	require.NoError(t, err)
	assert.JSONEq(t, `"ada:k1:hi"`, string(res.Value))

	_, err = cl.Call(context.Background(), "calc.Signer_Sign", echoIn{Text: "hi"}, &client.CallOptions{UserID: "ada"})
	var oe *otc.Error
	require.ErrorAs(t, err, &oe)
	require.NotNil(t, oe.MissingRequirements)
	assert.Equal(t, int64(1), runs.Load(), "refused by the gateway, never sent")
}

// TestFederation_ReadablesCarryTheCaller: with pass_through, a read, a
// render and a completion reach the upstream with the caller's token,
// as a call does, never the gateway's own; a caller without a token for
// the upstream makes no upstream request; and a read the upstream never
// answers is answered within the upstream's call timeout.
func TestFederation_ReadablesCarryTheCaller(t *testing.T) {
	type dayIn struct {
		N int `json:"n" jsonschema:"required,maximum=31,description=The day."`
	}
	up := otc.NewRegistry(nil)
	_, err := resource.Register(up, resource.Resource{URI: "notes://today", Name: "today"}, func(context.Context) (string, error) { return "# Today", nil })
	require.NoError(t, err)
	hang := make(chan struct{})
	_, err = resource.Register(up, resource.Resource{URI: "notes://never", Name: "never"}, func(context.Context) (string, error) { <-hang; return "", nil })
	require.NoError(t, err)
	_, err = resource.RegisterTemplate(up, resource.Template[dayIn]{URITemplate: "notes://days/{n}", Name: "day",
		Complete: func(context.Context, string, string, dayIn) ([]string, error) { return []string{"1"}, nil }},
		func(_ context.Context, in dayIn) (string, error) { return "day", nil })
	require.NoError(t, err)
	_, err = prompt.Register(up, prompt.Prompt[summaryIn]{Name: "summarize"}, func(_ context.Context, in summaryIn) (string, error) { return in.Text, nil })
	require.NoError(t, err)
	upAuth, err := auth.NewJWTAuth(&auth.JWTOptions{Secret: []byte(jwtSecret), Audiences: []string{"calc"}})
	require.NoError(t, err)
	h := mcp.NewHandler(up, &mcp.Options{Authenticator: upAuth})
	var mu sync.Mutex
	seen := map[string][]string{} // method → the Authorization of each request
	guarded := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var m struct {
			Method string `json:"method"`
		}
		_ = json.Unmarshal(body, &m)
		mu.Lock()
		seen[m.Method] = append(seen[m.Method], r.Header.Get("Authorization"))
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(guarded.Close)
	t.Cleanup(func() { close(hang) }) // before the server's Close, which waits for the read

	gwAuth, err := auth.NewJWTAuth(&auth.JWTOptions{Secret: []byte(jwtSecret), Audiences: []string{"gateway"}})
	require.NoError(t, err)
	reg := otc.NewRegistry(nil)
	gatewayToken := signed(t, "calc")
	fed, err := federation.Mount(context.Background(), reg, []federation.Upstream{
		{Name: "notes", URL: guarded.URL, Format: client.FormatMCP, Timeouts: federation.Timeouts{Call: time.Second}, Sessions: -1,
			Credentials: federation.Credentials{BearerToken: gatewayToken, PassThrough: true, Audience: "calc"}},
	}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { fed.Close() })
	mux := http.NewServeMux()
	mount.All(mux, reg, &mount.Options{Authenticator: gwAuth})
	gw := httptest.NewServer(mux)
	t.Cleanup(gw.Close)
	as := func(token string) *client.Client {
		c, err := client.New(gw.URL+mount.PrefixMCP, &client.Options{Format: client.FormatMCP, BearerToken: token})
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
		return c
	}
	callerToken := signed(t, "gateway", "calc")
	c := as(callerToken)
	ctx := t.Context()
	_, err = c.MCP().ReadResource(ctx, "notes://today")
	require.NoError(t, err)
	_, err = c.MCP().GetPrompt(ctx, "notes_summarize", map[string]string{"text": "x"})
	require.NoError(t, err)
	_, _, err = c.MCP().Complete(ctx, client.TemplateRef("notes://days/{n}"), "n", "", nil)
	require.NoError(t, err)
	mu.Lock()
	for _, method := range []string{"resources/read", "prompts/get", "completion/complete"} {
		assert.Equal(t, []string{"Bearer " + callerToken}, seen[method], "%s carried the caller's token, and only it", method)
	}
	reads := len(seen["resources/read"])
	mu.Unlock()

	// A caller whose token is for the gateway alone: refused at the
	// gateway, with no upstream request.
	_, err = as(signed(t, "gateway")).MCP().ReadResource(ctx, "notes://today")
	require.Error(t, err)
	mu.Lock()
	assert.Len(t, seen["resources/read"], reads, "no upstream read without a token for it")
	mu.Unlock()

	start := time.Now()
	_, err = c.MCP().ReadResource(ctx, "notes://never")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "did not answer within 1s")
	assert.Less(t, time.Since(start), 10*time.Second, "the read outlived the upstream's call timeout")
}
