package otc_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/mcp"
	"github.com/otcgo/otc/rest"
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
	return postTool(t, srv, "Search.Run", input)
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
		Required   []string                   `json:"required"`
	}
	require.NoError(t, json.Unmarshal(reg.Tools()[0].InputSchema.Parameters, &params))
	assert.JSONEq(t, `{"type":"string","description":"What to search for."}`, string(params.Properties["query"]))
	// An optional parameter is published as its plain schema: the null it
	// may be sent is the validator's leniency, not the schema's.
	assert.JSONEq(t, `{"type":"integer","minimum":1,"default":20,"description":"Page size."}`, string(params.Properties["limit"]))
	assert.JSONEq(t, `{"type":"string","enum":["relevance","date"],"default":"relevance","description":"The order."}`, string(params.Properties["sort"]))
	assert.JSONEq(t, `{"type":"integer","description":"The page; none for the first."}`, string(params.Properties["page"]))
	assert.JSONEq(t, `{"anyOf":[{"type":"string"},{"type":"null"}],"description":"A cursor or null."}`, string(params.Properties["cursor"]), "nullable as it was")
	assert.Equal(t, []string{"query"}, params.Required)
}

// shipInput has optional fields of every kind a converter could strip,
// at the top level and in a nested object.
type shipInput struct {
	To struct {
		Street string `json:"street" jsonschema:"description=The street."`
		Zip    string `json:"zip,omitempty" jsonschema:"description=The postal code.,pattern=^[0-9]{5}$"`
	} `json:"to" jsonschema:"description=Where to ship."`
	Speed string `json:"speed,omitempty" jsonschema:"description=How fast.,enum=standard,enum=express"`
	Boxes int    `json:"boxes,omitempty" jsonschema:"description=How many boxes.,minimum=1,maximum=9"`
}

// TestOptionalParametersPublishedPlain: the catalogs of OTC and MCP, over
// HTTP, publish optional parameters with their type, enum, bounds and
// pattern at the top of their schema, where every framework's converter
// looks (LangChain's keeps only the object branches of an anyOf); a call
// may still send null for them, except under StrictNulls.
func TestOptionalParametersPublishedPlain(t *testing.T) {
	for _, strict := range []bool{false, true} {
		t.Run(fmt.Sprintf("strict_nulls_%v", strict), func(t *testing.T) {
			reg := otc.NewRegistry(&otc.RegistryOptions{StrictNulls: strict})
			require.NoError(t, otc.Register(reg, otc.Tool{ID: "Shop.Ship", Version: "1.0.0", Description: "Ships an order."},
				func(_ context.Context, in shipInput) (shipInput, error) { return in, nil }))
			mux := http.NewServeMux()
			mux.Handle("/mcp", mcp.NewHandler(reg, nil))
			mux.Handle("/", otc.NewHandler(reg, nil))
			srv := httptest.NewServer(mux)
			t.Cleanup(srv.Close)

			post := func(path, body string, header ...string) (int, []byte) {
				req, err := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(body))
				require.NoError(t, err)
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				for i := 0; i+1 < len(header); i += 2 {
					req.Header.Set(header[i], header[i+1])
				}
				resp, err := http.DefaultClient.Do(req)
				require.NoError(t, err)
				defer resp.Body.Close()
				raw, err := io.ReadAll(resp.Body)
				require.NoError(t, err)
				return resp.StatusCode, raw
			}
			resp, err := http.Get(srv.URL + "/tools")
			require.NoError(t, err)
			otcList, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			require.NoError(t, err)
			_, mcpList := post("/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "MCP-Protocol-Version", "2025-11-25")

			var otcCatalog struct {
				Tools []struct {
					InputSchema struct {
						Parameters json.RawMessage `json:"parameters"`
					} `json:"input_schema"`
				} `json:"tools"`
			}
			require.NoError(t, json.Unmarshal(otcList, &otcCatalog), "%s", otcList)
			otcTools := otcCatalog.Tools
			var mcpTools struct {
				Result struct {
					Tools []struct {
						InputSchema json.RawMessage `json:"inputSchema"`
					} `json:"tools"`
				} `json:"result"`
			}
			require.NoError(t, json.Unmarshal(mcpList, &mcpTools), "%s", mcpList)
			require.Len(t, otcTools, 1)
			require.Len(t, mcpTools.Result.Tools, 1)
			for name, schema := range map[string]json.RawMessage{"otc": otcTools[0].InputSchema.Parameters, "mcp": mcpTools.Result.Tools[0].InputSchema} {
				assert.NotContains(t, string(schema), "anyOf", "%s: %s", name, schema)
				var s struct {
					Required   []string `json:"required"`
					Properties map[string]struct {
						Type       string         `json:"type"`
						Enum       []string       `json:"enum"`
						Minimum    *float64       `json:"minimum"`
						Maximum    *float64       `json:"maximum"`
						Required   []string       `json:"required"`
						Properties map[string]any `json:"properties"`
					} `json:"properties"`
				}
				require.NoError(t, json.Unmarshal(schema, &s), "%s", schema)
				assert.Equal(t, []string{"to"}, s.Required, name)
				assert.Equal(t, "string", s.Properties["speed"].Type, name)
				assert.Equal(t, []string{"standard", "express"}, s.Properties["speed"].Enum, name)
				assert.Equal(t, "integer", s.Properties["boxes"].Type, name)
				if assert.NotNil(t, s.Properties["boxes"].Minimum, name) && assert.NotNil(t, s.Properties["boxes"].Maximum, name) {
					assert.Equal(t, 1.0, *s.Properties["boxes"].Minimum, name)
					assert.Equal(t, 9.0, *s.Properties["boxes"].Maximum, name)
				}
				assert.Equal(t, []string{"street"}, s.Properties["to"].Required, name)
				assert.Equal(t, map[string]any{"type": "string", "pattern": "^[0-9]{5}$", "description": "The postal code."}, s.Properties["to"].Properties["zip"], name)
			}

			// null for an optional parameter, at any depth: not given by
			// default, refused under StrictNulls.
			status, body := post("/tools/call", `{"request":{"tool_id":"Shop.Ship","input":{"to":{"street":"1 Main","zip":null},"speed":null,"boxes":null}}}`)
			if strict {
				assert.Equal(t, http.StatusUnprocessableEntity, status, "%s", body)
				for _, p := range []string{"to.zip", "speed", "boxes"} {
					assert.Contains(t, string(body), `"`+p+`"`, "%s", body)
				}
				return
			}
			require.Equal(t, http.StatusOK, status, "%s", body)
			assert.Contains(t, string(body), `"value":{"to":{"street":"1 Main"}}`, "%s", body)
			// Values are still checked against the rules published.
			status, body = post("/tools/call", `{"request":{"tool_id":"Shop.Ship","input":{"to":{"street":"1 Main","zip":"7"},"speed":"slow","boxes":10}}}`)
			assert.Equal(t, http.StatusUnprocessableEntity, status, "%s", body)
			for _, p := range []string{"to.zip", "speed", "boxes"} {
				assert.Contains(t, string(body), `"`+p+`"`, "%s", body)
			}
		})
	}
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

// room is an object nested in bookingInput, with defaults of its own.
type room struct {
	Kind     string   `json:"kind,omitempty" jsonschema:"description=The room kind.,enum=single,enum=double,default=double"`
	Beds     int      `json:"beds,omitempty" jsonschema:"description=How many beds.,minimum=1,default=1"`
	Priority priority `json:"priority,omitempty" jsonschema:"description=How urgent the cleaning is: low or high."`
}

// bookingInput has defaults at the top level and inside objects and
// arrays, a duration and a date-time.
type bookingInput struct {
	Guest  string        `json:"guest" jsonschema:"description=Who stays."`
	Rooms  []room        `json:"rooms,omitempty" jsonschema:"description=The rooms to book."`
	Main   *room         `json:"main,omitempty" jsonschema:"description=The main room."`
	Hold   time.Duration `json:"hold,omitempty" jsonschema:"description=How long to hold the booking.,default=15m"`
	Arrive time.Time     `json:"arrive,omitempty" jsonschema:"description=When the guest arrives."`
}

// bookingSeen is what the function of Booking.Make received.
type bookingSeen struct {
	Rooms       []room  `json:"rooms"`
	Main        *room   `json:"main"`
	HoldMinutes float64 `json:"hold_minutes"`
}

func serveBooking(t *testing.T, opts *otc.RegistryOptions) *httptest.Server {
	t.Helper()
	if opts == nil {
		opts = &otc.RegistryOptions{}
	}
	opts.Logger = slog.New(slog.DiscardHandler)
	reg := otc.NewRegistry(opts)
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Booking.Make", Version: "1.0.0", Description: "Books rooms."},
		func(_ context.Context, in bookingInput) (bookingSeen, error) {
			return bookingSeen{Rooms: in.Rooms, Main: in.Main, HoldMinutes: in.Hold.Minutes()}, nil
		}))
	srv := httptest.NewServer(otc.NewHandler(reg, nil))
	t.Cleanup(srv.Close)
	return srv
}

func postTool(t *testing.T, srv *httptest.Server, tool, input string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Post(srv.URL+"/tools/call", "application/json",
		strings.NewReader(`{"request":{"tool_id":"`+tool+`","input":`+input+`}}`))
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m), "%s", b)
	return resp.StatusCode, m
}

// TestNestedDefaultsReachTheFunction: a default applies to an optional
// property left out, or sent as null, at any depth: in an object, in each
// element of an array, for a duration.
func TestNestedDefaultsReachTheFunction(t *testing.T) {
	srv := serveBooking(t, nil)
	for _, tc := range []struct {
		name, input, want string
	}{
		{"top level only", `{"guest":"Ada"}`,
			`{"rooms":null,"main":null,"hold_minutes":15}`},
		{"each element of an array", `{"guest":"Ada","rooms":[{},{"kind":"single","beds":null},{ "beds" : 2 } ]}`,
			`{"rooms":[{"kind":"double","beds":1},{"kind":"single","beds":1},{"kind":"double","beds":2}],"main":null,"hold_minutes":15}`},
		{"a nested object", `{"guest":"Ada","main":{"priority":"high"},"hold":null}`,
			`{"rooms":null,"main":{"kind":"double","beds":1,"priority":"high"},"hold_minutes":15}`},
		{"values sent are kept", `{"guest":"Ada","main":{"kind":"single","beds":3},"hold":"1h30m"}`,
			`{"rooms":null,"main":{"kind":"single","beds":3},"hold_minutes":90}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, m := postTool(t, srv, "Booking.Make", tc.input)
			require.Equal(t, http.StatusOK, status, "%v", m)
			got, err := json.Marshal(seen(t, m))
			require.NoError(t, err)
			assert.JSONEq(t, tc.want, string(got))
		})
	}
}

// TestInputRefusalsOverHTTP: what a model gets back (§6 validation
// error: 422, the protocol's message, each error under the parameter's
// path) for a date-time that is not RFC 3339, a bad value deep inside, a
// value the decoder refuses though the schema allows it (located under
// its path, not reported as "(input)"), and a null where StrictNulls
// refuses it.
func TestInputRefusalsOverHTTP(t *testing.T) {
	for _, tc := range []struct {
		name   string
		opts   *otc.RegistryOptions
		input  string
		errors map[string]any
	}{
		{"a date without a time", nil, `{"guest":"Ada","arrive":"2026-11-22"}`,
			map[string]any{"arrive": "Must be a date-time in RFC 3339 form, such as 2026-11-22T10:00:00Z"}},
		{"a time without a date", nil, `{"guest":"Ada","arrive":"10:00:00"}`,
			map[string]any{"arrive": "Must be a date-time in RFC 3339 form, such as 2026-11-22T10:00:00Z"}},
		{"an enum deep inside", nil, `{"guest":"Ada","rooms":[{},{"kind":"suite"}]}`,
			map[string]any{"rooms.1.kind": `Must be one of: "single", "double"`}},
		{"a value the decoder refuses, deep inside", nil, `{"guest":"Ada","rooms":[{},{"priority":"urgent"}]}`,
			map[string]any{"rooms.1.priority": `Cannot be read: unknown priority "urgent": use low or high`}},
		{"a duration in seconds", nil, `{"guest":"Ada","hold":300}`,
			map[string]any{"hold": `Must be a duration string such as "90s", "5m" or "1h30m" (not a number of seconds), or null`}},
		{"a duration in words", nil, `{"guest":"Ada","hold":"five minutes"}`,
			map[string]any{"hold": `Must be a duration such as "90s", "5m" or "1h30m" (units ns, us, ms, s, m, h)`}},
		{"null for an optional field with StrictNulls", &otc.RegistryOptions{StrictNulls: true}, `{"guest":"Ada","main":{"beds":null}}`,
			map[string]any{"main.beds": "Must be an integer"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, m := postTool(t, serveBooking(t, tc.opts), "Booking.Make", tc.input)
			require.Equal(t, http.StatusUnprocessableEntity, status, "%v", m)
			assert.Equal(t, "Some input parameters are invalid", m["message"])
			assert.Equal(t, tc.errors, m["parameter_errors"])
		})
	}
}

// TestDefaultsAndRefusalsOverREST: the REST view shares the pipeline:
// null for an optional field and nested defaults reach the function, and
// a date without a time is refused with tool.invalid_args, under the
// parameter's path.
func TestDefaultsAndRefusalsOverREST(t *testing.T) {
	reg := otc.NewRegistry(&otc.RegistryOptions{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Booking.Make", Version: "1.0.0", Description: "Books rooms."},
		func(_ context.Context, in bookingInput) (bookingSeen, error) {
			return bookingSeen{Rooms: in.Rooms, Main: in.Main, HoldMinutes: in.Hold.Minutes()}, nil
		}))
	srv := httptest.NewServer(rest.NewHandler(reg, nil))
	t.Cleanup(srv.Close)
	invoke := func(args string) (int, map[string]any) {
		resp, err := http.Post(srv.URL+"/tools/Booking_Make:invoke", "application/json",
			strings.NewReader(`{"schema_version":"0.1.0","args":`+args+`}`))
		require.NoError(t, err)
		defer resp.Body.Close()
		var m map[string]any
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&m))
		return resp.StatusCode, m
	}

	status, m := invoke(`{"guest":"Ada","hold":null,"main":{"beds":null},"arrive":null}`)
	require.Equal(t, http.StatusOK, status, "%v", m)
	got, err := json.Marshal(m["result"])
	require.NoError(t, err)
	assert.JSONEq(t, `{"rooms":null,"main":{"kind":"double","beds":1},"hold_minutes":15}`, string(got))

	status, m = invoke(`{"guest":"Ada","rooms":[{"kind":"single"}],"main":{"kind":"double"},"arrive":"2026-11-22"}`)
	require.Equal(t, http.StatusBadRequest, status, "%v", m)
	e, ok := m["error"].(map[string]any)
	require.True(t, ok, "%v", m)
	assert.Equal(t, rest.CodeInvalidArgs, e["code"])
	details, ok := e["details"].(map[string]any)
	require.True(t, ok, "%v", e)
	assert.Equal(t, map[string]any{"arrive": "Must be a date-time in RFC 3339 form, such as 2026-11-22T10:00:00Z"}, details["parameter_errors"])
}
