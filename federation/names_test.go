package federation_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/federation"
	"github.com/otcgo/otc/mount"
)

var update = flag.Bool("update", false, "rewrite testdata/names.golden")

// everyFormat serves the origin's registry on every format, as mount.All
// does, and returns the base URL.
func everyFormat(t *testing.T, o *origin) string {
	t.Helper()
	mux := http.NewServeMux()
	mount.All(mux, o.reg, nil)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestFederation_NamesGolden: the same origin federated through each
// format it is served in (OTC, the REST view, MCP, A2A), and the names
// of the gateway's tools as each of the gateway's formats lists them: OTC
// and the registry view (ids), the REST view, MCP at each version, A2A
// skills. testdata/names.golden holds them; -update rewrites it.
func TestFederation_NamesGolden(t *testing.T) {
	o := newOrigin(t)
	base := everyFormat(t, o)
	_, gw, _ := gateway(t, []federation.Upstream{
		{Name: "via_otc", URL: base + mount.PrefixOTC, Format: client.FormatOTC},
		{Name: "via_rest", URL: base + mount.PrefixREST, Format: client.FormatREST},
		{Name: "via_mcp", URL: base + mount.PrefixMCP, Format: client.FormatMCP},
		{Name: "via_a2a", URL: base + mount.PrefixA2A, Format: client.FormatA2A},
	}, nil)
	ctx := context.Background()
	var b strings.Builder
	section := func(title string, names []string) {
		slices.Sort(names)
		fmt.Fprintf(&b, "## %s\n%s\n\n", title, strings.Join(names, "\n"))
	}
	list := func(path string, o *client.Options, id bool) []string {
		cl, err := client.New(gw+path, o)
		require.NoError(t, err)
		defer cl.Close()
		defs, err := cl.ListTools(ctx)
		require.NoError(t, err, path)
		var names []string
		for _, d := range defs {
			if id {
				names = append(names, d.ID)
			} else {
				names = append(names, d.Name)
			}
		}
		return names
	}
	section("otc ids", list(mount.PrefixOTC, &client.Options{}, true))
	section("rest names", list(mount.PrefixREST, &client.Options{Format: client.FormatREST}, false))
	for _, v := range []string{"2025-06-18", "2025-11-25", "2026-07-28"} {
		section("mcp "+v, list(mount.PrefixMCP, &client.Options{Format: client.FormatMCP, MCPVersion: v}, false))
	}
	var card struct {
		Skills []struct {
			ID, Name string
		} `json:"skills"`
	}
	getJSON(t, gw+mount.PrefixA2A+"/.well-known/agent-card.json", &card)
	var skills []string
	for _, s := range card.Skills {
		skills = append(skills, s.ID+" "+s.Name)
	}
	section("a2a skills (id name)", skills)
	var view []struct {
		ToolID  string `json:"tool_id"`
		Version string `json:"version"`
	}
	getJSON(t, gw+mount.PrefixRegistry+"/v1/tools", &view)
	var ids []string
	for _, tl := range view {
		ids = append(ids, tl.ToolID+" "+tl.Version)
	}
	section("registry view ids", ids)

	golden := filepath.Join("testdata", "names.golden")
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(golden, []byte(b.String()), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err, "run go test -run NamesGolden -update ./federation")
	assert.Equal(t, string(want), b.String())

	// Every tool answers under its name, through each upstream format.
	cl, err := client.New(gw+mount.PrefixOTC, nil)
	require.NoError(t, err)
	for _, up := range []string{"via_otc", "via_rest", "via_mcp", "via_a2a"} {
		res, err := cl.Call(ctx, up+".Calculator_Add", addIn{A: 20, B: 22}, nil)
		require.NoError(t, err, up)
		assert.JSONEq(t, "42", string(res.Value), up)
	}
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, url)
	require.NoError(t, json.NewDecoder(resp.Body).Decode(v))
}

// TestFederation_SchemasAndPolicy: a remote tool is served with the
// upstream's schema (typed, through A2A's skill schemas too) and the
// upstream's policy fields; a call the local policy refuses makes no
// upstream request; the registry view lists the policy.
func TestFederation_SchemasAndPolicy(t *testing.T) {
	o := newOrigin(t)
	base := everyFormat(t, o)
	_, gw, reg := gateway(t, []federation.Upstream{
		{Name: "calc", URL: base + mount.PrefixA2A, Format: client.FormatA2A,
			Policy:   &otc.Policy{Protocols: []string{"otc", "mcp"}},
			Policies: map[string]*otc.Policy{"Echo_Say": {Protocols: []string{"mcp"}}}},
	}, nil)
	def, err := reg.Lookup("calc.Calculator_Add", otc.ProtocolOTC)
	require.NoError(t, err)
	var schema struct {
		Properties map[string]struct {
			Type string `json:"type"`
		} `json:"properties"`
	}
	require.NoError(t, json.Unmarshal(def.InputSchema.Parameters, &schema))
	assert.Equal(t, "integer", schema.Properties["a"].Type, "typed through the agent's skill schemas: %s", def.InputSchema.Parameters)
	assert.Equal(t, []string{"otc", "mcp"}, def.Policy.Protocols)

	// Over REST, which the policy leaves out, the tool is neither listed
	// nor called, and the upstream sees nothing.
	rest, err := client.New(gw+mount.PrefixREST, &client.Options{Format: client.FormatREST})
	require.NoError(t, err)
	defs, err := rest.ListTools(context.Background())
	require.NoError(t, err)
	assert.Empty(t, defs)
	before := o.runs.Load()
	_, err = rest.Call(context.Background(), "calc_Calculator_Add", addIn{A: 1, B: 2}, nil)
	require.Error(t, err)
	assert.Equal(t, before, o.runs.Load(), "refused locally, never sent")

	otcCl, err := client.New(gw+mount.PrefixOTC, nil)
	require.NoError(t, err)
	_, err = otcCl.Call(context.Background(), "calc.Echo_Say", echoIn{Text: "x"}, nil)
	var oe *otc.Error
	require.ErrorAs(t, err, &oe)
	assert.Equal(t, otc.ReasonProtocolDenied, oe.Reason, "the per-tool policy: MCP only")
	res, err := otcCl.Call(context.Background(), "calc.Calculator_Add", addIn{A: 1, B: 2}, nil)
	require.NoError(t, err)
	assert.JSONEq(t, "3", string(res.Value))

	var view []struct {
		ToolID    string   `json:"tool_id"`
		Protocols []string `json:"protocols"`
	}
	getJSON(t, gw+mount.PrefixRegistry+"/v1/tools", &view)
	require.NotEmpty(t, view)
	for _, tl := range view {
		assert.NotContains(t, tl.Protocols, "http", tl.ToolID)
		assert.Contains(t, tl.Protocols, "mcp", tl.ToolID)
	}
}

// TestFederation_A2ACardChange: an A2A agent's card is read again every
// Refresh; a skill it gains becomes a tool, one it loses answers as
// unknown.
func TestFederation_A2ACardChange(t *testing.T) {
	o := newOrigin(t)
	_, _, reg := gateway(t, []federation.Upstream{{Name: "agent", URL: everyFormat(t, o) + mount.PrefixA2A, Format: client.FormatA2A, Timeouts: federation.Timeouts{Refresh: 50 * time.Millisecond}}}, nil)
	require.NoError(t, otc.Register(o.reg, otc.Tool{ID: "Late.Skill", Version: "1.0.0", Description: "Added to the card later."},
		func(context.Context, otc.NoOutput) (string, error) { return "late", nil }))
	o.reg.Remove("Echo.Say")
	require.Eventually(t, func() bool {
		_, added := reg.Lookup("agent.Late_Skill", otc.ProtocolOTC)
		_, removed := reg.Lookup("agent.Echo_Say", otc.ProtocolOTC)
		return added == nil && errors.Is(removed, otc.ErrToolNotFound)
	}, 5*time.Second, 20*time.Millisecond)
}
