package federation_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/federation"
	"github.com/otcgo/otc/idempotency"
	"github.com/otcgo/otc/mount"
)

type addIn struct {
	A int `json:"a" jsonschema:"description=The first number."`
	B int `json:"b" jsonschema:"description=The second number."`
}

type echoIn struct {
	Text string `json:"text" jsonschema:"description=What to say back."`
}

// origin is an otc server that the tests federate: Calculator.Add (which
// counts its runs and keeps the call ids it got), Echo.Say and Slow.Wait
// (which reports progress and waits for its context). It keeps the headers
// of every request.
type origin struct {
	url   string
	reg   *otc.Registry
	runs  atomic.Int64
	ids   sync.Map // call id → true
	srv   *httptest.Server
	mu    sync.Mutex
	heads []http.Header
}

func newOrigin(t *testing.T) *origin {
	t.Helper()
	o := &origin{reg: otc.NewRegistry(&otc.RegistryOptions{Idempotency: idempotency.NewMemoryStore(nil)})}
	require.NoError(t, otc.Register(o.reg, otc.Tool{ID: "Calculator.Add", Version: "1.0.0", Description: "Adds two numbers."},
		func(ctx context.Context, in addIn) (int, error) {
			o.runs.Add(1)
			o.ids.Store(otc.CallID(ctx), true)
			return in.A + in.B, nil
		}))
	require.NoError(t, otc.Register(o.reg, otc.Tool{ID: "Echo.Say", Version: "2.1.0", Description: "Says the text back."},
		func(_ context.Context, in echoIn) (string, error) { return in.Text, nil }))
	require.NoError(t, otc.Register(o.reg, otc.Tool{ID: "Slow.Wait", Version: "1.0.0", Description: "Reports progress, then waits until cancelled."},
		func(ctx context.Context, _ otc.NoOutput) (string, error) {
			for i := 1; i <= 3; i++ {
				otc.ReportProgress(ctx, float64(i), 3, "step")
			}
			<-ctx.Done()
			return "", ctx.Err()
		}))
	h := otc.NewHandler(o.reg, nil)
	o.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.mu.Lock()
		o.heads = append(o.heads, r.Header.Clone())
		o.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(o.srv.Close)
	o.url = o.srv.URL
	return o
}

// gateway mounts ups into a fresh registry served by every format, and
// returns the federation and the gateway's URL.
func gateway(t *testing.T, ups []federation.Upstream, setup func(*otc.Registry)) (*federation.Federation, string, *otc.Registry) {
	t.Helper()
	reg := otc.NewRegistry(&otc.RegistryOptions{Idempotency: idempotency.NewMemoryStore(nil)})
	if setup != nil {
		setup(reg)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	fed, err := federation.Mount(ctx, reg, ups, nil)
	require.NoError(t, err)
	t.Cleanup(func() { fed.Close() })
	mux := http.NewServeMux()
	mount.All(mux, reg, nil)
	mux.Handle("/health/upstreams", fed)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return fed, srv.URL, reg
}

// clients returns a client of the gateway in each format.
func clients(t *testing.T, base string) map[string]*client.Client {
	t.Helper()
	out := map[string]*client.Client{}
	for name, c := range map[string]struct {
		path   string
		format client.Format
		ver    string
	}{
		"otc":        {"/otc", client.FormatOTC, ""},
		"rest":       {"/v1", client.FormatREST, ""},
		"mcp":        {"/mcp", client.FormatMCP, ""},
		"mcp-2025-6": {"/mcp", client.FormatMCP, "2025-06-18"},
		"a2a":        {"/a2a", client.FormatA2A, ""},
	} {
		cl, err := client.New(base+c.path, &client.Options{Format: c.format, MCPVersion: c.ver})
		require.NoError(t, err)
		t.Cleanup(func() { cl.Close() })
		out[name] = cl
	}
	return out
}

// localName is how each format names a remote tool.
func localName(format, id string) string {
	if format == "otc" {
		return id
	}
	return strings.ReplaceAll(id, ".", "_")
}

func TestFederation_OTCUpstreamOverEveryFormat(t *testing.T) {
	o := newOrigin(t)
	_, base, reg := gateway(t, []federation.Upstream{{Name: "calc", URL: o.url, Format: client.FormatOTC}}, nil)

	ids := []string{}
	for _, d := range reg.Tools() {
		ids = append(ids, d.ID)
	}
	assert.Equal(t, []string{"calc.Calculator_Add@1.0.0", "calc.Echo_Say@2.1.0", "calc.Slow_Wait@1.0.0"}, ids,
		"the upstream's toolkit is kept in the tool's part, and its versions")

	ctx := context.Background()
	for format, cl := range clients(t, base) {
		t.Run(format, func(t *testing.T) {
			defs, err := cl.ListTools(ctx)
			require.NoError(t, err)
			names := map[string]bool{}
			for _, d := range defs {
				names[d.Name] = true
			}
			assert.True(t, names["calc_Calculator_Add"], "listed: %v", names)

			before := o.runs.Load()
			res, err := cl.Call(ctx, localName(format, "calc.Calculator.Add"), map[string]int{"a": 2, "b": 3}, nil)
			if format == "otc" {
				res, err = cl.Call(ctx, "calc.Calculator_Add", map[string]int{"a": 2, "b": 3}, nil)
			}
			require.NoError(t, err)
			assert.JSONEq(t, "5", string(res.Value))
			assert.Equal(t, before+1, o.runs.Load())

			// Invalid input is refused by the gateway: the upstream sees nothing.
			before = o.runs.Load()
			id := "calc.Calculator_Add"
			if format != "otc" {
				id = "calc_Calculator_Add"
			}
			_, err = cl.Call(ctx, id, map[string]any{"a": "two", "b": 3}, nil)
			var oe *otc.Error
			require.True(t, errors.As(err, &oe), "%v", err)
			assert.Equal(t, otc.CodeInvalidInput, oe.Code)
			assert.Contains(t, oe.ParameterErrors, "a")
			assert.Equal(t, before, o.runs.Load(), "invalid input cost the upstream nothing")
		})
	}
}

func TestFederation_CallIDAcrossTheHop(t *testing.T) {
	o := newOrigin(t)
	_, base, _ := gateway(t, []federation.Upstream{{Name: "calc", URL: o.url, Format: client.FormatOTC}}, nil)
	cl, err := client.New(base+"/otc", nil)
	require.NoError(t, err)
	ctx := context.Background()
	before := o.runs.Load()
	for range 3 {
		res, err := cl.Call(ctx, "calc.Calculator_Add", addIn{A: 1, B: 1}, &client.CallOptions{CallID: "same-call"})
		require.NoError(t, err)
		assert.JSONEq(t, "2", string(res.Value))
	}
	assert.Equal(t, before+1, o.runs.Load(), "a retry with the same call id runs the tool once")

	// The id the upstream saw is derived from the caller's, not the same.
	var seen []string
	o.ids.Range(func(k, _ any) bool { seen = append(seen, k.(string)); return true })
	require.Len(t, seen, 1)
	assert.True(t, strings.HasPrefix(seen[0], "fed-"), seen[0])

	// The gateway's own idempotency store answered the retries; the
	// upstream dedupes the forwarded id too: a second gateway with the
	// same caller and id does not run it again.
	_, base2, _ := gateway(t, []federation.Upstream{{Name: "calc", URL: o.url, Format: client.FormatOTC}}, nil)
	cl2, err := client.New(base2+"/otc", nil)
	require.NoError(t, err)
	_, err = cl2.Call(ctx, "calc.Calculator_Add", addIn{A: 1, B: 1}, &client.CallOptions{CallID: "same-call"})
	require.NoError(t, err)
	assert.Equal(t, before+1, o.runs.Load(), "the upstream deduped the forwarded call id")
}

func TestFederation_NoInboundHeaderReachesTheUpstream(t *testing.T) {
	o := newOrigin(t)
	_, base, _ := gateway(t, []federation.Upstream{{Name: "calc", URL: o.url, Format: client.FormatOTC}}, nil)
	body := `{"$schema":"otc://1.0","request":{"tool_id":"calc.Echo_Say","call_id":"h1","input":{"text":"hi"}}}`
	req, _ := http.NewRequest("POST", base+"/otc/tools/call", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer caller-secret")
	req.Header.Set("OXP-API-Key", "caller-key")
	req.Header.Set("Cookie", "session=caller")
	req.Header.Set("Traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var out struct {
		Result struct {
			Success bool            `json:"success"`
			Value   json.RawMessage `json:"value"`
		} `json:"result"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	require.Equal(t, 200, resp.StatusCode)
	assert.JSONEq(t, `"hi"`, string(out.Result.Value))

	o.mu.Lock()
	defer o.mu.Unlock()
	var call http.Header
	for _, h := range o.heads {
		if h.Get("Traceparent") != "" {
			call = h
		}
	}
	require.NotNil(t, call, "the trace context crossed the hop")
	assert.Equal(t, "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", call.Get("Traceparent"))
	for _, h := range o.heads {
		assert.Empty(t, h.Get("Authorization"))
		assert.Empty(t, h.Get("OXP-API-Key"))
		assert.Empty(t, h.Get("Cookie"))
	}
}
