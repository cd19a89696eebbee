package otc_test

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/testkit"
	"github.com/otcgo/otc/mcp"
	"github.com/otcgo/otc/registryview"
	"github.com/otcgo/otc/rest"
)

// benchPolicyMix registers 1,000 tools whose policies mix what a real
// registry holds: most without a policy, others needing scopes, some a
// capability token for a shared resource or for themselves, a few kept
// to MCP.
func benchPolicyMix(tb testing.TB, opts *otc.RegistryOptions) *otc.Registry {
	tb.Helper()
	opts.Logger = slog.New(slog.DiscardHandler)
	reg := otc.NewRegistry(opts)
	for i := range 1000 {
		var p *otc.Policy
		switch {
		case i < 500:
		case i < 700:
			p = &otc.Policy{RequiredScopes: []string{"notes:read"}}
		case i < 800:
			p = &otc.Policy{RequiredScopes: []string{"notes:read", "notes:write"}}
		case i < 850:
			p = &otc.Policy{RequiredScopes: []string{"notes:admin"}}
		case i < 950:
			p = &otc.Policy{ResourceURI: "urn:bench", RequiredCapabilities: []string{"pay"}, MaxBlastRadius: "tenant:*"}
		case i < 970:
			p = &otc.Policy{ResourceURI: "urn:audit", RequiredCapabilities: []string{"audit"}}
		case i < 975:
			p = &otc.Policy{RequiredCapabilities: []string{"audit"}} // audience: the tool's own id
		default:
			p = &otc.Policy{Protocols: []string{"mcp"}}
		}
		t := testkit.AddTool(fmt.Sprintf("Bench.Tool%04d", i), "1.0.0")
		t.Policy = p
		require.NoError(tb, otc.Register(reg, t, testkit.Add))
	}
	return reg
}

// benchCallers are the identities of BenchmarkListToolsPerCaller: one that
// sees most of the mix (a capability token with scopes, for one of the
// shared resources: every tool but those needing notes:admin, those for
// the other resource and those whose audience is their own id), and one
// that sees all of it.
func benchCallers() map[string]*otc.Identity {
	every := []any{"urn:bench", "urn:audit"}
	for i := 970; i < 975; i++ {
		every = append(every, fmt.Sprintf("Bench.Tool%04d@1.0.0", i))
	}
	return map[string]*otc.Identity{
		"most": {Method: otc.MethodCapability, Name: "agent", Claims: map[string]any{
			"aud": "urn:bench", "caps": []any{"pay"}, "blast_radius": "tenant:acme", "scope": "notes:read notes:write",
		}},
		"all": {Method: otc.MethodCapability, Name: "agent", Claims: map[string]any{
			"aud": every, "caps": []any{"pay", "audit"}, "blast_radius": "tenant:acme", "scope": "notes:read notes:write notes:admin",
		}},
	}
}

// BenchmarkListToolsPerCaller times listing 1,000 tools with per-caller
// catalogs on (the default), against the same registry with
// ListEveryTool, which serves the one cached catalog as before catalogs
// were per caller: GET /tools of the OTC handler, the REST planner view,
// MCP tools/list (every tool on one page) and the registry view. Both
// handlers authenticate with the same authenticator, so that the ratio
// shows what choosing and serving the caller's catalog adds. With
// identity=fixed it returns the same identity every time, at no cost,
// whose claims the copy of the previous answer has pushed out of the
// processor's caches: the worst case for reading them. With
// identity=fresh it returns a new identity with a copy of the claims, as
// an authenticator that decodes a token does (at a small fraction of the
// cost of verifying one). The handlers run in alternating
// blocks of 8 requests, in an order that rotates from block to block,
// and each per-caller handler's time is reported as a ratio to its
// ListEveryTool twin's (metric "<format>/every"), which drifts in the
// machine's speed during the run do not skew. The "most" caller sees
// about nine tools in ten, so its answers are a little shorter than the
// twin's; the "all" caller sees every tool, for answers of the same
// length.
func BenchmarkListToolsPerCaller(b *testing.B) {
	perCaller := benchPolicyMix(b, &otc.RegistryOptions{})
	every := benchPolicyMix(b, &otc.RegistryOptions{ListEveryTool: true})
	for _, mode := range []string{"fixed", "fresh"} {
		for name, id := range benchCallers() {
			b.Run("identity="+mode+"/caller="+name, func(b *testing.B) {
				benchListPerCaller(b, perCaller, every, name, benchAuth(mode, id))
			})
		}
	}
}

// benchAuth returns the authenticator of BenchmarkListToolsPerCaller: id
// itself (fixed), or a new identity with a copy of its claims (fresh).
func benchAuth(mode string, id *otc.Identity) otc.Authenticator {
	if mode == "fixed" {
		return otc.AuthenticatorFunc(func(*http.Request) (*otc.Identity, error) { return id, nil })
	}
	return otc.AuthenticatorFunc(func(*http.Request) (*otc.Identity, error) {
		return &otc.Identity{Method: id.Method, Name: id.Name, Claims: maps.Clone(id.Claims)}, nil
	})
}

// benchListPerCaller runs BenchmarkListToolsPerCaller for one caller.
func benchListPerCaller(b *testing.B, perCaller, every *otc.Registry, name string, auth otc.Authenticator) {
	type server struct {
		name    string
		handler http.Handler
		method  string
		path    string
		body    []byte
		header  http.Header
	}
	formats := func(reg *otc.Registry) []server {
		mcpHeader := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}, "Mcp-Protocol-Version": {"2025-11-25"}}
		return []server{
			{name: "otc", handler: otc.NewHandler(reg, &otc.HandlerOptions{Authenticator: auth}), method: http.MethodGet, path: "/tools"},
			{name: "rest", handler: rest.NewHandler(reg, &rest.Options{Authenticator: auth}), method: http.MethodGet, path: "/tools"},
			{name: "mcp", handler: mcp.NewHandler(reg, &mcp.Options{Authenticator: auth, PageSize: -1}), method: http.MethodPost, path: "/mcp",
				body: []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`), header: mcpHeader},
			{name: "registry", handler: registryview.NewHandler(reg, &registryview.Options{Authenticator: auth}), method: http.MethodGet, path: "/v1/tools"},
		}
	}
	ours, twins := formats(perCaller), formats(every)
	all := append(append([]server{}, ours...), twins...)
	protos := make([]*http.Request, len(all))
	for i, s := range all {
		protos[i] = httptest.NewRequest(s.method, s.path, nil)
		for k, v := range s.header {
			protos[i].Header[k] = v
		}
	}
	rd := bytes.NewReader(nil)
	// Each handler writes into a buffer of its own, grown once, as
	// a server's writes go to a socket: what is timed is the
	// handler's work and the one copy of its answer, not the
	// growth of a recorder's buffer.
	bodies := make([]*bytes.Buffer, len(all))
	for i := range bodies {
		bodies[i] = bytes.NewBuffer(make([]byte, 0, 1<<20))
	}
	serve := func(i int) *httptest.ResponseRecorder {
		rd.Reset(all[i].body)
		req := *protos[i]
		req.Body = io.NopCloser(rd)
		rec := httptest.NewRecorder()
		bodies[i].Reset()
		rec.Body = bodies[i]
		all[i].handler.ServeHTTP(rec, &req)
		return rec
	}
	for i, s := range ours { // each answers, and the per-caller ones list fewer tools, or as many
		rec, twin := serve(i), serve(i+len(ours))
		require.Equal(b, http.StatusOK, rec.Code, "%s: %.300s", s.name, rec.Body.Bytes())
		require.Equal(b, http.StatusOK, twin.Code, "%s: %.300s", s.name, twin.Body.Bytes())
		if name == "all" {
			require.Equal(b, twin.Body.Len(), rec.Body.Len(), s.name)
		} else {
			require.Less(b, rec.Body.Len(), twin.Body.Len(), s.name)
		}
	}
	const block = 8
	spent := make([]time.Duration, len(all))
	b.ReportAllocs()
	for n := 0; b.Loop(); n++ {
		if n%block != 0 {
			continue
		}
		for k := range all {
			i := (k + n/block) % len(all)
			start := time.Now()
			for range block {
				if rec := serve(i); rec.Code != http.StatusOK {
					b.Fatalf("%s: status %d", all[i].name, rec.Code)
				}
			}
			spent[i] += time.Since(start)
		}
	}
	for i, s := range ours {
		if twin := spent[i+len(ours)]; twin > 0 {
			b.ReportMetric(float64(spent[i])/float64(twin), s.name+"/every")
		}
	}
}

// The mix of the benchmark lists what its callers should see; checked
// here so that the benchmark measures the catalogs it claims to.
func TestBenchPolicyMixListings(t *testing.T) {
	t.Parallel()
	reg := benchPolicyMix(t, &otc.RegistryOptions{})
	callers := benchCallers()
	count := func(id *otc.Identity, protocol string) int {
		v := reg.Visibility(id, protocol)
		n := 0
		for _, d := range reg.Tools() {
			if v.Sees(d.ID) {
				n++
			}
		}
		return n
	}
	require.Equal(t, 900, count(callers["most"], otc.ProtocolOTC), "all but notes:admin (50), the other resource (20), own audiences (5) and MCP only (25)")
	require.Equal(t, 925, count(callers["most"], otc.ProtocolMCP))
	require.Equal(t, 975, count(callers["all"], otc.ProtocolOTC))
	require.Equal(t, 1000, count(callers["all"], otc.ProtocolMCP))
	require.True(t, strings.HasPrefix(reg.Visibility(callers["most"], otc.ProtocolOTC).Key(), "v"))
}

// raceEnabled is set by race_test.go when the tests run with -race, whose
// instrumentation changes what allocates.
var raceEnabled bool

// Listing per caller allocates no more than listing the one cached
// catalog, on every wire format, for a caller who sees every tool (so
// that the answers, and the buffers they are written to, are the same
// length). Not parallel: AllocsPerRun.
func TestListingPerCallerAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes what allocates")
	}
	id := benchCallers()["all"]
	auth := otc.AuthenticatorFunc(func(*http.Request) (*otc.Identity, error) { return id, nil })
	perCaller := benchPolicyMix(t, &otc.RegistryOptions{})
	every := benchPolicyMix(t, &otc.RegistryOptions{ListEveryTool: true})
	mcpBody := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	for _, f := range []struct {
		name   string
		make   func(*otc.Registry) http.Handler
		method string
		path   string
		body   []byte
	}{
		{"otc", func(r *otc.Registry) http.Handler { return otc.NewHandler(r, &otc.HandlerOptions{Authenticator: auth}) }, http.MethodGet, "/tools", nil},
		{"rest", func(r *otc.Registry) http.Handler { return rest.NewHandler(r, &rest.Options{Authenticator: auth}) }, http.MethodGet, "/tools", nil},
		{"mcp", func(r *otc.Registry) http.Handler {
			return mcp.NewHandler(r, &mcp.Options{Authenticator: auth, PageSize: -1})
		}, http.MethodPost, "/mcp", mcpBody},
		{"registry", func(r *otc.Registry) http.Handler {
			return registryview.NewHandler(r, &registryview.Options{Authenticator: auth})
		}, http.MethodGet, "/v1/tools", nil},
	} {
		allocs := func(reg *otc.Registry) float64 {
			h := f.make(reg)
			proto := httptest.NewRequest(f.method, f.path, nil)
			proto.Header.Set("Content-Type", "application/json")
			proto.Header.Set("Accept", "application/json, text/event-stream")
			rd := bytes.NewReader(nil)
			serve := func() {
				rd.Reset(f.body)
				req := *proto
				req.Body = io.NopCloser(rd)
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, &req)
				require.Equal(t, http.StatusOK, rec.Code, "%s: %.300s", f.name, rec.Body.Bytes())
			}
			serve()
			return testing.AllocsPerRun(20, serve)
		}
		ours, twin := allocs(perCaller), allocs(every)
		require.LessOrEqual(t, ours, twin, "%s: %v allocations per caller, %v for the one catalog", f.name, ours, twin)
	}
}
