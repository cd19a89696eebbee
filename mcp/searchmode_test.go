package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/mcp"
	"github.com/otcgo/otc/prompt"
	"github.com/otcgo/otc/resource"
	"github.com/otcgo/otc/search"
	"github.com/otcgo/otc/skill"
)

// listNames returns the names of a tools/list result's tools, in order.
func listNames(t testing.TB, result json.RawMessage) []string {
	t.Helper()
	var r struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
		NextCursor string `json:"nextCursor"`
	}
	require.NoError(t, json.Unmarshal(result, &r), "%s", result)
	assert.Empty(t, r.NextCursor, "one page")
	names := make([]string, len(r.Tools))
	for i, tool := range r.Tools {
		names[i] = tool.Name
	}
	return names
}

// listedTools returns the Tool objects of a tools/list, by name.
func listedTools(t testing.TB, result json.RawMessage) map[string]json.RawMessage {
	t.Helper()
	var r struct {
		Tools []json.RawMessage `json:"tools"`
	}
	require.NoError(t, json.Unmarshal(result, &r), "%s", result)
	out := map[string]json.RawMessage{}
	for _, raw := range r.Tools {
		var named struct {
			Name string `json:"name"`
		}
		require.NoError(t, json.Unmarshal(raw, &named))
		out[named.Name] = raw
	}
	return out
}

// foundNames returns the names of the tools a search tool's result holds,
// and checks that its text says the same as its structured content.
func foundNames(t testing.TB, r callResult) []string {
	t.Helper()
	require.False(t, r.IsError, "%+v", r)
	require.Len(t, r.Content, 1)
	assert.JSONEq(t, string(r.StructuredContent), r.Content[0]["text"].(string), "the text is the structured content")
	return listNames(t, r.StructuredContent)
}

// TestSearchMode: past its threshold a caller lists the pinned tools, the
// search tool and the call tool; the search answers the full definitions
// of what it finds, as tools/list would give them; every tool stays
// callable by its name, and through the call tool.
func TestSearchMode(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t)
	full := serve(t, reg, nil)
	url := serve(t, reg, &mcp.Options{Search: &mcp.SearchMode{Threshold: 3, Pinned: []string{"Util_Noop", "No_Such", "Util_Noop"}}})

	all := listedTools(t, post(t, full, request(1, "tools/list", nil), legacy).result(t))
	require.Greater(t, len(all), 3)
	assert.Equal(t, []string{"Util_Noop", mcp.SearchToolName, mcp.CallToolName},
		listNames(t, post(t, url, request(1, "tools/list", nil), legacy).result(t)), "the pinned tool, then the two")
	whole := listedTools(t, post(t, url, request(1, "tools/list", obj{"_meta": obj{mcp.MetaFullCatalog: true}}), legacy).result(t))
	assert.Equal(t, all, whole, "the full catalog, asked for")

	res := decodeCall(t, post(t, url, request(2, "tools/call", callParams(mcp.SearchToolName, obj{"query": "add two numbers"}, nil)), legacy).result(t))
	found := foundNames(t, res)
	require.NotEmpty(t, found)
	assert.Equal(t, "Calculator_Add", found[0], "the best match first")
	assert.LessOrEqual(t, len(found), mcp.DefaultSearchLimit)
	got := listedTools(t, res.StructuredContent)
	assert.JSONEq(t, string(all["Calculator_Add"]), string(got["Calculator_Add"]), "the definition tools/list gives")

	res = decodeCall(t, post(t, url, request(3, "tools/call", callParams(mcp.SearchToolName, obj{"query": "tests", "limit": 2}, nil)), legacy).result(t))
	assert.Len(t, foundNames(t, res), 2, "the limit")

	// Called by its name although not listed, and through the call tool.
	res = decodeCall(t, post(t, url, request(4, "tools/call", callParams("Calculator_Add", obj{"a": 1, "b": 2}, nil)), legacy).result(t))
	assert.JSONEq(t, `{"result":3}`, string(res.StructuredContent))
	res = decodeCall(t, post(t, url, request(5, "tools/call", callParams(mcp.CallToolName, obj{"name": "Calculator_Add", "arguments": obj{"a": 2, "b": 3}}, nil)), legacy).result(t))
	assert.JSONEq(t, `{"result":5}`, string(res.StructuredContent))
	res = decodeCall(t, post(t, url, request(6, "tools/call", callParams(mcp.CallToolName, obj{"name": "Util_Noop"}, nil)), legacy).result(t))
	assert.False(t, res.IsError, "no arguments: %+v", res)
	// The tool's own errors are the tool's.
	res = decodeCall(t, post(t, url, request(7, "tools/call", callParams(mcp.CallToolName, obj{"name": "Calculator_Add", "arguments": obj{"a": "one"}}, nil)), legacy).result(t))
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content[0]["text"].(string), "a", "names the tool's parameter")
	post(t, url, request(8, "tools/call", callParams(mcp.CallToolName, obj{"name": "No_Such"}, nil)), legacy).rpcErr(t, http.StatusOK, -32602)

	// Without search mode the two are not there.
	post(t, full, request(9, "tools/call", callParams(mcp.SearchToolName, obj{"query": "add"}, nil)), legacy).rpcErr(t, http.StatusOK, -32602)
}

// TestSearchModeVersions: the same list and search at every version, over
// HTTP and stdio; the initialize and server/discover results declare the
// query capability.
func TestSearchModeVersions(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t)
	opts := &mcp.Options{Search: &mcp.SearchMode{}}
	url := serve(t, reg, opts)
	want := []string{mcp.SearchToolName, mcp.CallToolName}
	for _, v := range []string{mcp.Version20250618, mcp.Version20251125} {
		h := map[string]string{"MCP-Protocol-Version": v}
		assert.Equal(t, want, listNames(t, post(t, url, request(1, "tools/list", nil), h).result(t)), v)
		res := decodeCall(t, post(t, url, request(2, "tools/call", callParams(mcp.SearchToolName, obj{"query": "place an order"}, nil)), h).result(t))
		assert.Equal(t, "Order_Place", foundNames(t, res)[0], v)
	}
	res := post(t, url, request(1, "tools/list", obj{"_meta": modernMeta(nil)}), modernHeaders("tools/list", "")).result(t)
	assert.Equal(t, want, listNames(t, res))
	assert.Equal(t, "complete", object(t, res)["resultType"])
	call := post(t, url, request(2, "tools/call", callParams(mcp.SearchToolName, obj{"query": "look up a place"}, modernMeta(nil))), modernHeaders("tools/call", mcp.SearchToolName)).result(t)
	assert.Equal(t, "Geo_Lookup", foundNames(t, decodeCall(t, call))[0])
	assert.Equal(t, "complete", object(t, call)["resultType"])
	call = post(t, url, request(3, "tools/call", callParams(mcp.CallToolName, obj{"name": "Calculator_Add", "arguments": obj{"a": 1, "b": 1}}, modernMeta(nil))), modernHeaders("tools/call", mcp.CallToolName)).result(t)
	assert.JSONEq(t, `{"result":2}`, string(decodeCall(t, call).StructuredContent))

	disc := object(t, post(t, url, request(4, "server/discover", obj{"_meta": modernMeta(nil)}), modernHeaders("server/discover", "")).result(t))
	assert.Equal(t, true, disc["capabilities"].(map[string]any)["tools"].(map[string]any)["dynamic"])
	init := object(t, post(t, url, request(5, "initialize", obj{"protocolVersion": mcp.Version20251125, "capabilities": obj{}, "clientInfo": obj{"name": "c", "version": "1"}}), nil).result(t))
	assert.Equal(t, true, init["capabilities"].(map[string]any)["tools"].(map[string]any)["dynamic"])
	plain := object(t, post(t, serve(t, reg, nil), request(5, "initialize", obj{"protocolVersion": mcp.Version20251125, "capabilities": obj{}, "clientInfo": obj{"name": "c", "version": "1"}}), nil).result(t))
	assert.NotContains(t, plain["capabilities"].(map[string]any)["tools"], "dynamic", "only with search mode")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := startStdio(t, ctx, reg, opts)
	c.send(request(0, "initialize", obj{"protocolVersion": mcp.Version20251125, "capabilities": obj{}, "clientInfo": obj{"name": "c", "version": "1"}}))
	r := c.recvResponse()
	assert.Equal(t, true, object(t, r.Result)["capabilities"].(map[string]any)["tools"].(map[string]any)["dynamic"])
	c.send(request(1, "tools/list", nil))
	assert.Equal(t, want, listNames(t, c.recvResponse().Result))
	c.send(request(2, "tools/call", callParams(mcp.SearchToolName, obj{"query": "chart"}, nil)))
	assert.Equal(t, "Media_Chart", foundNames(t, decodeCall(t, c.recvResponse().Result))[0])
	c.send(request(3, "tools/call", callParams(mcp.CallToolName, obj{"name": "Calculator_Add", "arguments": obj{"a": 4, "b": 4}}, nil)))
	assert.JSONEq(t, `{"result":8}`, string(decodeCall(t, c.recvResponse().Result).StructuredContent))
}

// TestSearchModeQuery: with search mode set, a tools/list with a query
// (SEP-1821) answers the tools a search finds, in any mode; a query of
// another type, or too long, is invalid params.
func TestSearchModeQuery(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t)
	url := serve(t, reg, &mcp.Options{Search: &mcp.SearchMode{Threshold: 1000}})
	all := listNames(t, post(t, url, request(1, "tools/list", nil), legacy).result(t))
	assert.Greater(t, len(all), 5, "under the threshold: the whole catalog")
	assert.NotContains(t, all, mcp.SearchToolName)
	found := listNames(t, post(t, url, request(2, "tools/list", obj{"query": "read the vault"}), legacy).result(t))
	require.NotEmpty(t, found)
	assert.Equal(t, "Vault_Read", found[0])
	assert.Empty(t, listNames(t, post(t, url, request(3, "tools/list", obj{"query": "the"}), legacy).result(t)), "no word to search for")
	assert.Len(t, listNames(t, post(t, url, request(3, "tools/list", obj{"query": "tests", "limit": 2}), legacy).result(t)), 2, "otc's limit")
	for _, bad := range []any{0, 101, "2", 1.5} {
		e, _ := post(t, url, request(3, "tools/list", obj{"query": "tests", "limit": bad}), legacy).rpcErr(t, http.StatusOK, -32602)
		assert.Contains(t, e.Message, `"limit"`)
	}

	post(t, url, request(4, "tools/list", obj{"query": 7}), legacy).rpcErr(t, http.StatusOK, -32602)
	e, _ := post(t, url, request(5, "tools/list", obj{"query": strings.Repeat("x", 2000)}), legacy).rpcErr(t, http.StatusOK, -32602)
	assert.Contains(t, e.Message, `"query"`)
	// Under the threshold the two tools are not served.
	post(t, url, request(6, "tools/call", callParams(mcp.SearchToolName, obj{"query": "add"}, nil)), legacy).rpcErr(t, http.StatusOK, -32602)

	// Without search mode a query is an unknown member, ignored.
	plain := serve(t, reg, nil)
	assert.Equal(t, all, listNames(t, post(t, plain, request(7, "tools/list", obj{"query": 7}), legacy).result(t)))
}

// TestSearchModeBadArguments: the two tools refuse arguments they do not
// take as a tool does, with a result a model can act on that names the
// argument.
func TestSearchModeBadArguments(t *testing.T) {
	t.Parallel()
	url := serve(t, newRegistry(t), &mcp.Options{Search: &mcp.SearchMode{}})
	for _, tc := range []struct {
		tool  string
		args  any
		names string
	}{
		{mcp.SearchToolName, nil, "query"},
		{mcp.SearchToolName, obj{}, "query"},
		{mcp.SearchToolName, obj{"query": 3}, "query"},
		{mcp.SearchToolName, obj{"query": "add", "limit": 0}, "limit"},
		{mcp.SearchToolName, obj{"query": "add", "limit": -1}, "limit"},
		{mcp.SearchToolName, obj{"query": "add", "limit": 1e9}, "limit"},
		{mcp.SearchToolName, obj{"query": "add", "limit": 1.5}, "limit"},
		{mcp.SearchToolName, obj{"query": "add", "regex": ".*"}, "regex"},
		{mcp.SearchToolName, obj{"query": strings.Repeat("(a+)+", 1000)}, "query"},
		{mcp.CallToolName, nil, "name"},
		{mcp.CallToolName, obj{"name": ""}, "name"},
		{mcp.CallToolName, obj{"name": 5}, "name"},
		{mcp.CallToolName, obj{"name": "Util_Noop", "arguments": "x"}, "arguments"},
		{mcp.CallToolName, obj{"name": "Util_Noop", "args": obj{}}, "args"},
	} {
		t.Run(fmt.Sprintf("%s %v", tc.tool, tc.args), func(t *testing.T) {
			res := decodeCall(t, post(t, url, request(1, "tools/call", callParams(tc.tool, tc.args, nil)), legacy).result(t))
			require.True(t, res.IsError, "%+v", res)
			assert.Contains(t, res.Content[0]["text"].(string), tc.names)
		})
	}
	// A query of control characters is words apart: nothing to find.
	res := decodeCall(t, post(t, url, request(2, "tools/call", callParams(mcp.SearchToolName, obj{"query": "\x00\x01\t\n"}, nil)), legacy).result(t))
	assert.Empty(t, foundNames(t, res))
}

// TestSearchModePerCaller: whether a caller is in search mode depends on
// the tools it may see, and a search never finds a tool it could not
// list: one kept off MCP, or one whose scopes it lacks.
func TestSearchModePerCaller(t *testing.T) {
	t.Parallel()
	reg := otc.NewRegistry(nil)
	for i := range 4 {
		addTool(t, reg, fmt.Sprintf("Open.Tool%d", i), func(context.Context, struct{}) (string, error) { return "open", nil })
	}
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Secret.Payroll", Version: "1.0.0", Description: "Pays the salaries.",
		Policy: &otc.Policy{RequiredScopes: []string{"payroll"}}}, func(context.Context, struct{}) (string, error) { return "paid", nil }))
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Rest.Payroll", Version: "1.0.0", Description: "Payroll over REST only.",
		Policy: &otc.Policy{Protocols: []string{otc.ProtocolHTTP}}}, func(context.Context, struct{}) (string, error) { return "rest", nil }))
	url := serve(t, reg, &mcp.Options{Authenticator: claimsAuth(), Search: &mcp.SearchMode{Threshold: 4}})
	as := func(claims string) map[string]string {
		return map[string]string{"X-Test-Claims": claims, "MCP-Protocol-Version": mcp.Version20251125}
	}
	plain, payroll := as(`{"sub":"ann"}`), as(`{"sub":"bob","scope":"payroll"}`)

	names := listNames(t, post(t, url, request(1, "tools/list", nil), plain).result(t))
	assert.Len(t, names, 4, "four tools: under the threshold, the whole list")
	assert.NotContains(t, names, "Secret_Payroll")
	post(t, url, request(2, "tools/call", callParams(mcp.SearchToolName, obj{"query": "payroll"}, nil)), plain).rpcErr(t, http.StatusOK, -32602)
	assert.Empty(t, listNames(t, post(t, url, request(3, "tools/list", obj{"query": "pay the salaries payroll"}), plain).result(t)))

	assert.Equal(t, []string{mcp.SearchToolName, mcp.CallToolName}, listNames(t, post(t, url, request(4, "tools/list", nil), payroll).result(t)))
	found := foundNames(t, decodeCall(t, post(t, url, request(5, "tools/call", callParams(mcp.SearchToolName, obj{"query": "payroll"}, nil)), payroll).result(t)))
	assert.Equal(t, []string{"Secret_Payroll"}, found, "never the tool kept off MCP")
	res := decodeCall(t, post(t, url, request(6, "tools/call", callParams(mcp.CallToolName, obj{"name": "Secret_Payroll"}, nil)), payroll).result(t))
	assert.JSONEq(t, `{"result":"paid"}`, string(res.StructuredContent))
	// The call tool is no way around a tool's policy.
	post(t, url, request(7, "tools/call", callParams(mcp.CallToolName, obj{"name": "Rest_Payroll"}, nil)), payroll).rpcErr(t, http.StatusForbidden, -32002)
}

// TestSearchModeShadows: a registered tool named as the search tool is
// reached through the call tool in search mode, and by its name outside.
func TestSearchModeShadows(t *testing.T) {
	t.Parallel()
	reg := otc.NewRegistry(nil)
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Mine.Search", Name: mcp.SearchToolName, Version: "1.0.0", Description: "The registry's own."},
		func(context.Context, struct{}) (string, error) { return "mine", nil }))
	addTool(t, reg, "Other.Tool", func(context.Context, struct{}) (string, error) { return "other", nil })
	on := serve(t, reg, &mcp.Options{Search: &mcp.SearchMode{}})
	off := serve(t, reg, &mcp.Options{Search: &mcp.SearchMode{Threshold: 10}})
	res := decodeCall(t, post(t, on, request(1, "tools/call", callParams(mcp.CallToolName, obj{"name": mcp.SearchToolName}, nil)), legacy).result(t))
	assert.JSONEq(t, `{"result":"mine"}`, string(res.StructuredContent))
	res = decodeCall(t, post(t, on, request(2, "tools/call", callParams(mcp.SearchToolName, obj{"query": "other"}, nil)), legacy).result(t))
	assert.True(t, slices.Contains(foundNames(t, res), "Other_Tool"))
	res = decodeCall(t, post(t, off, request(3, "tools/call", callParams(mcp.SearchToolName, nil, nil)), legacy).result(t))
	assert.JSONEq(t, `{"result":"mine"}`, string(res.StructuredContent))
}

// TestSearchModeFlood: one caller's searches over HTTP are bounded: past
// search.CallerBurst the search tool answers a result the model may retry
// after a delay, and a tools/list with a query a 429 (-32000) with the
// delay in data; calls of other tools go on. Over stdio the process is
// the one caller, and nothing is bounded.
func TestSearchModeFlood(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t)
	opts := &mcp.Options{Search: &mcp.SearchMode{}}
	url := serve(t, reg, opts)
	// Searched until refused: at least the burst first, however slow the
	// machine (the budget refills at the rate meanwhile).
	var res callResult
	n := 0
	for ; n < 5*search.CallerBurst; n++ {
		res = decodeCall(t, post(t, url, request(n, "tools/call", callParams(mcp.SearchToolName, obj{"query": "add"}, nil)), legacy).result(t))
		if res.IsError {
			break
		}
	}
	require.True(t, res.IsError, "refused at last")
	assert.GreaterOrEqual(t, n, search.CallerBurst)
	meta := errorMeta(t, res)
	assert.Equal(t, true, meta["can_retry"])
	assert.Greater(t, meta["retry_after_ms"], float64(0))
	var a answer
	for range 5 * search.CallerBurst {
		if a = post(t, url, request(101, "tools/list", obj{"query": "add"}), legacy); a.status != http.StatusOK {
			break
		}
	}
	e, _ := a.rpcErr(t, http.StatusTooManyRequests, -32000)
	assert.Contains(t, string(e.Data), "retry_after_ms")
	res = decodeCall(t, post(t, url, request(102, "tools/call", callParams(mcp.CallToolName, obj{"name": "Calculator_Add", "arguments": obj{"a": 1, "b": 1}}, nil)), legacy).result(t))
	assert.False(t, res.IsError, "calling is not searching")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := startStdio(t, ctx, reg, opts)
	c.send(request(0, "initialize", obj{"protocolVersion": mcp.Version20251125, "capabilities": obj{}, "clientInfo": obj{"name": "c", "version": "1"}}))
	c.recvResponse()
	for i := range search.CallerBurst + 5 {
		c.send(request(i+1, "tools/call", callParams(mcp.SearchToolName, obj{"query": "add"}, nil)))
		require.False(t, decodeCall(t, c.recvResponse().Result).IsError, "search %d over stdio", i+1)
	}
}

// TestSearchModeReadables: where the server searches, resources/list,
// resources/templates/list, prompts/list and skills/list take a query as
// tools/list does: what the caller may read of the kind, best first.
func TestSearchModeReadables(t *testing.T) {
	t.Parallel()
	reg := otc.NewRegistry(nil)
	read := func(context.Context) (string, error) { return "", nil }
	for _, r := range []resource.Resource{
		{URI: "notes://holidays", Name: "holidays", Description: "The public holidays of this year."},
		{URI: "notes://standup", Name: "standup", Description: "Notes of the daily standup."},
		{URI: "ledger://payroll", Name: "payroll", Description: "Salaries paid this month.", Policy: &otc.Policy{Protocols: []string{otc.ProtocolA2A}}},
	} {
		_, err := resource.Register(reg, r, read)
		require.NoError(t, err)
	}
	type city struct {
		City string `json:"city" jsonschema:"description=The city"`
	}
	_, err := resource.RegisterTemplate(reg, resource.Template[city]{URITemplate: "weather://{city}", Name: "weather", Description: "Today's forecast for a city."},
		func(context.Context, city) (string, error) { return "", nil })
	require.NoError(t, err)
	type topic struct {
		Topic string `json:"topic" jsonschema:"description=What to write about"`
	}
	for _, name := range []string{"write_haiku", "review_code"} {
		_, err := prompt.Register(reg, prompt.Prompt[topic]{Name: name, Description: strings.ReplaceAll(name, "_", " ") + "."},
			func(context.Context, topic) (string, error) { return "", nil })
		require.NoError(t, err)
	}
	_, err = skill.Register(reg, fstest.MapFS{"expense-reports/SKILL.md": {Data: []byte("---\nname: expense-reports\ndescription: How to file expenses for a trip\n---\nKeep receipts.\n")}}, nil)
	require.NoError(t, err)
	url := serve(t, reg, &mcp.Options{Search: &mcp.SearchMode{Threshold: 1000}})
	names := func(result json.RawMessage, member, key string) []string {
		var r map[string][]map[string]any
		require.NoError(t, json.Unmarshal(result, &r), "%s", result)
		var out []string
		for _, e := range r[member] {
			switch {
			case e[key] != nil:
				out = append(out, e[key].(string))
			case key == "name" && e["frontmatter"] != nil: // a skill
				out = append(out, e["frontmatter"].(map[string]any)["name"].(string))
			}
		}
		return out
	}
	list := func(method string, params obj) json.RawMessage {
		return post(t, url, request(1, method, params), legacy).result(t)
	}
	assert.Equal(t, []string{"notes://holidays"}, names(list("resources/list", obj{"query": "public holidays"}), "resources", "uri"))
	assert.Empty(t, names(list("resources/list", obj{"query": "salaries payroll"}), "resources", "uri"), "A2A only")
	assert.Empty(t, names(list("resources/list", obj{"query": "forecast"}), "resources", "uri"), "a template is not a resource")
	assert.Equal(t, []string{"weather://{city}"}, names(list("resources/templates/list", obj{"query": "weather forecast"}), "resourceTemplates", "uriTemplate"))
	assert.Equal(t, []string{"write_haiku"}, names(list("prompts/list", obj{"query": "a haiku please"}), "prompts", "name"))
	assert.Equal(t, []string{"expense-reports"}, names(list("skills/list", obj{"query": "file my trip expenses"}), "skills", "name"))
	assert.Len(t, names(list("resources/list", obj{"query": "notes holidays standup", "limit": 1}), "resources", "uri"), 1)
	e, _ := post(t, url, request(2, "prompts/list", obj{"query": 5}), legacy).rpcErr(t, http.StatusOK, -32602)
	assert.Contains(t, e.Message, `"query"`)
	e, _ = post(t, url, request(2, "prompts/list", obj{"query": "haiku", "limit": 0}), legacy).rpcErr(t, http.StatusOK, -32602)
	assert.Contains(t, e.Message, `"limit"`)
	// Without search mode the query is an unknown member, ignored.
	plain := serve(t, reg, nil)
	assert.Len(t, names(post(t, plain, request(3, "resources/list", obj{"query": "public holidays"}), legacy).result(t), "resources", "uri"), 3)
}
