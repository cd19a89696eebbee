package otc_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
)

// searchInput has optional parameters with and without defaults, and a
// nullable one.
type searchInput struct {
	Query  string   `json:"query" jsonschema:"description=What to search for."`
	Limit  int      `json:"limit,omitempty" jsonschema:"description=Page size.,default=20,minimum=1"`
	Sort   string   `json:"sort,omitempty" jsonschema:"description=The order.,enum=relevance,enum=date,default=relevance"`
	Exact  bool     `json:"exact,omitempty" jsonschema:"description=Match exactly.,default=true"`
	Tags   []string `json:"tags,omitempty" jsonschema:"description=Tags to filter by."`
	Page   *int     `json:"page,omitempty" jsonschema:"description=The page; none for the first."`
	Cursor *string  `json:"cursor,omitempty" jsonschema:"description=A cursor or null.,nullable"`
}

// serveSearch serves Search.Run, which returns what it received, over OTC.
func serveSearch(t *testing.T, opts *otc.RegistryOptions) *httptest.Server {
	t.Helper()
	if opts == nil {
		opts = &otc.RegistryOptions{}
	}
	opts.Logger = slog.New(slog.DiscardHandler)
	reg := otc.NewRegistry(opts)
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Search.Run", Version: "1.0.0", Description: "Searches."},
		func(_ context.Context, in searchInput) (searchInput, error) { return in, nil }))
	srv := httptest.NewServer(otc.NewHandler(reg, nil))
	t.Cleanup(srv.Close)
	return srv
}

func postSearch(t *testing.T, srv *httptest.Server, input string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Post(srv.URL+"/tools/call", "application/json",
		strings.NewReader(`{"request":{"tool_id":"Search.Run","input":`+input+`}}`))
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m), "%s", b)
	return resp.StatusCode, m
}

func seen(t *testing.T, m map[string]any) map[string]any {
	t.Helper()
	res, ok := m["result"].(map[string]any)
	require.True(t, ok, "%v", m)
	v, ok := res["value"].(map[string]any)
	require.True(t, ok, "%v", m)
	return v
}

func TestDefaultsAndNullsReachTheFunction(t *testing.T) {
	srv := serveSearch(t, nil)
	for _, tc := range []struct {
		name, input string
		want        string
	}{
		{"absent parameters get their defaults", `{"query":"q"}`,
			`{"query":"q","limit":20,"sort":"relevance","exact":true}`},
		{"null means not given", `{"query":"q","limit":null,"sort":null,"exact":null,"tags":null,"page":null}`,
			`{"query":"q","limit":20,"sort":"relevance","exact":true}`},
		{"values sent are kept", `{"query":"q","limit":5,"sort":"date","exact":false,"tags":["a"],"page":2}`,
			`{"query":"q","limit":5,"sort":"date","tags":["a"],"page":2}`}, // exact false is omitted by omitempty on the way out
		{"white space around the object", ` { "query" : "q" } `,
			`{"query":"q","limit":20,"sort":"relevance","exact":true}`},
		{"a nullable parameter keeps its null", `{"query":"q","cursor":null}`,
			`{"query":"q","limit":20,"sort":"relevance","exact":true}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, m := postSearch(t, srv, tc.input)
			require.Equal(t, http.StatusOK, status, "%v", m)
			got, err := json.Marshal(seen(t, m))
			require.NoError(t, err)
			assert.JSONEq(t, tc.want, string(got))
		})
	}
}

func TestDefaultsAndNullsInTheSchema(t *testing.T) {
	reg := otc.NewRegistry(nil)
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Search.Run", Version: "1.0.0", Description: "Searches."},
		func(_ context.Context, in searchInput) (string, error) { return "", nil }))
	var params struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	require.NoError(t, json.Unmarshal(reg.Tools()[0].InputSchema.Parameters, &params))
	assert.JSONEq(t, `{"type":"string","description":"What to search for."}`, string(params.Properties["query"]))
	assert.JSONEq(t, `{"anyOf":[{"type":"integer","minimum":1},{"type":"null"}],"default":20,"description":"Page size."}`, string(params.Properties["limit"]))
	assert.JSONEq(t, `{"anyOf":[{"type":"string","enum":["relevance","date"]},{"type":"null"}],"default":"relevance","description":"The order."}`, string(params.Properties["sort"]))
	assert.JSONEq(t, `{"anyOf":[{"type":"string"},{"type":"null"}],"description":"A cursor or null."}`, string(params.Properties["cursor"]), "nullable as it was")
}

func TestStrictNullsRefusesNull(t *testing.T) {
	srv := serveSearch(t, &otc.RegistryOptions{StrictNulls: true})
	status, m := postSearch(t, srv, `{"query":"q","limit":null}`)
	require.Equal(t, http.StatusUnprocessableEntity, status, "%v", m)
	assert.Equal(t, map[string]any{"limit": "Must be an integer"}, m["parameter_errors"])

	// The nullable parameter still takes null; defaults still apply.
	status, m = postSearch(t, srv, `{"query":"q","cursor":null}`)
	require.Equal(t, http.StatusOK, status, "%v", m)
	assert.Equal(t, 20.0, seen(t, m)["limit"])
}

func TestNullForAnOptionalParameterStillValidatesValues(t *testing.T) {
	srv := serveSearch(t, nil)
	status, m := postSearch(t, srv, `{"query":"q","limit":0,"sort":"name"}`)
	require.Equal(t, http.StatusUnprocessableEntity, status, "%v", m)
	errs, ok := m["parameter_errors"].(map[string]any)
	require.True(t, ok, "%v", m)
	assert.Contains(t, errs["limit"], "at least 1")
	assert.Contains(t, errs, "sort")
}
