package otc_test

// Black-box tests of the OTC/OXP HTTP handler over a real server, grouped
// by the section of SPEC.md they check. The tools and helpers they use are
// in helpers_test.go.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/testkit"
)

const wireAddBody = `{"request":{"tool_id":"Calculator.Add","input":{"a":10,"b":5}}}`

// ---------------------------------------------------------------------------
// SPEC §1: endpoints, methods, unknown paths, mounting.

func TestHandlerEndpoints(t *testing.T) {
	t.Parallel()
	f := newWireFixture(t, wireOptions{})

	t.Run("get_tools", func(t *testing.T) {
		t.Parallel()
		r := f.do(t, http.MethodGet, "/tools", nil)
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		obj := r.object(t)
		tools, ok := obj["tools"].([]any)
		require.True(t, ok, "tools must be an array: %s", r.body)
		assert.NotEmpty(t, tools)
		assert.NotContains(t, obj, "items", "items is off by default (SPEC §3)")
	})
	for _, path := range []string{"/tools/call", "/call"} {
		t.Run("post"+strings.ReplaceAll(path, "/", "_"), func(t *testing.T) {
			t.Parallel()
			r := f.do(t, http.MethodPost, path, strings.NewReader(wireAddBody))
			assert.JSONEq(t, `15`, string(r.success(t)))
		})
	}
	t.Run("get_health", func(t *testing.T) {
		t.Parallel()
		r := f.do(t, http.MethodGet, "/health", nil)
		assert.Equal(t, http.StatusOK, r.status, "%s", r.body)
		r.object(t)
	})
	t.Run("head_health", func(t *testing.T) {
		t.Parallel()
		r := f.do(t, http.MethodHead, "/health", nil)
		assert.Equal(t, http.StatusOK, r.status)
		assert.Equal(t, "application/json", r.header.Get("Content-Type"))
		assert.Empty(t, r.body)
	})
}

func TestHandlerHealthWhileUnavailable(t *testing.T) {
	t.Parallel()
	f := newWireFixture(t, wireOptions{})

	f.h.SetReady(false)
	r := f.do(t, http.MethodGet, "/health", nil)
	assert.Equal(t, http.StatusServiceUnavailable, r.status, "%s", r.body)
	r.object(t)

	for _, path := range []string{"/tools/call", "/call"} {
		e := f.do(t, http.MethodPost, path, strings.NewReader(wireAddBody)).errorBody(t, http.StatusBadRequest)
		assert.Contains(t, strings.ToLower(e.Message), "unavailable", "calls while unavailable are server errors (SPEC §6)")
	}
	// The catalog is still served, as SetReady documents.
	assert.Equal(t, http.StatusOK, f.do(t, http.MethodGet, "/tools", nil).status)

	f.h.SetReady(true)
	assert.Equal(t, http.StatusOK, f.do(t, http.MethodGet, "/health", nil).status)
	assert.JSONEq(t, `15`, string(f.call(t, wireAddBody).success(t)))
}

// TestHandlerHealthWhileDraining: a draining handler fails its health
// checks and still serves calls; SetReady(false) on top refuses them.
func TestHandlerHealthWhileDraining(t *testing.T) {
	t.Parallel()
	f := newWireFixture(t, wireOptions{})

	f.h.SetDraining(true)
	r := f.do(t, http.MethodGet, "/health", nil)
	assert.Equal(t, http.StatusServiceUnavailable, r.status, "%s", r.body)
	assert.JSONEq(t, `15`, string(f.call(t, wireAddBody).success(t)), "calls are still served")

	f.h.SetReady(false)
	f.do(t, http.MethodPost, "/tools/call", strings.NewReader(wireAddBody)).errorBody(t, http.StatusBadRequest)
	f.h.SetReady(true)
	assert.Equal(t, http.StatusServiceUnavailable, f.do(t, http.MethodGet, "/health", nil).status, "still draining")

	f.h.SetDraining(false)
	assert.Equal(t, http.StatusOK, f.do(t, http.MethodGet, "/health", nil).status)
}

func TestHandlerMethodNotAllowed(t *testing.T) {
	t.Parallel()
	f := newWireFixture(t, wireOptions{})

	tests := []struct {
		path    string
		method  string
		allowed string // the method the Allow header must name
	}{
		{"/tools", http.MethodPost, http.MethodGet},
		{"/tools", http.MethodPut, http.MethodGet},
		{"/tools", http.MethodDelete, http.MethodGet},
		{"/tools", http.MethodPatch, http.MethodGet},
		{"/tools/call", http.MethodGet, http.MethodPost},
		{"/tools/call", http.MethodPut, http.MethodPost},
		{"/tools/call", http.MethodDelete, http.MethodPost},
		{"/call", http.MethodGet, http.MethodPost},
		{"/call", http.MethodPatch, http.MethodPost},
		{"/health", http.MethodPost, http.MethodGet},
		{"/health", http.MethodDelete, http.MethodGet},
		{"/health", http.MethodOptions, http.MethodGet},
	}
	for _, tt := range tests {
		t.Run(tt.method+strings.ReplaceAll(tt.path, "/", "_"), func(t *testing.T) {
			t.Parallel()
			var body io.Reader
			if tt.method != http.MethodGet {
				body = strings.NewReader(wireAddBody)
			}
			r := f.do(t, tt.method, tt.path, body)
			r.errorBody(t, http.StatusMethodNotAllowed)
			allow := strings.Split(r.header.Get("Allow"), ", ")
			assert.Contains(t, allow, tt.allowed, "Allow header %q", r.header.Get("Allow"))
			assert.NotContains(t, allow, tt.method, "Allow header %q", r.header.Get("Allow"))
		})
	}
}

func TestHandlerNotFound(t *testing.T) {
	t.Parallel()
	f := newWireFixture(t, wireOptions{})

	tests := []struct {
		name, method, path string
	}{
		{"root", http.MethodGet, "/"},
		{"unknown", http.MethodGet, "/nope"},
		{"trailing_slash", http.MethodGet, "/tools/"},
		{"below_call", http.MethodPost, "/tools/call/extra"},
		{"rest_path", http.MethodGet, "/v1/tools"},
		{"upper_case", http.MethodGet, "/TOOLS"},
		{"health_slash", http.MethodGet, "/health/"},
		{"post_unknown", http.MethodPost, "/invoke"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var body io.Reader
			if tt.method == http.MethodPost {
				body = strings.NewReader(wireAddBody)
			}
			e := f.do(t, tt.method, tt.path, body).errorBody(t, http.StatusNotFound)
			assert.Equal(t, otc.SchemaOTC, e.Schema)
		})
	}
}

func TestHandlerMountedUnderPrefix(t *testing.T) {
	t.Parallel()
	f := newWireFixture(t, wireOptions{})
	mux := http.NewServeMux()
	mux.Handle("/otc/", http.StripPrefix("/otc", f.h))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "outside the tool server", http.StatusTeapot)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	send := func(t *testing.T, method, path, body string) wireResponse {
		var rd io.Reader
		if body != "" {
			rd = strings.NewReader(body)
		}
		req, err := http.NewRequest(method, srv.URL+path, rd)
		require.NoError(t, err)
		return wireSend(t, srv.Client(), req)
	}

	t.Run("tools", func(t *testing.T) {
		r := send(t, http.MethodGet, "/otc/tools", "")
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		assert.Contains(t, r.object(t), "tools")
	})
	t.Run("tools_call", func(t *testing.T) {
		assert.JSONEq(t, `15`, string(send(t, http.MethodPost, "/otc/tools/call", wireAddBody).success(t)))
	})
	t.Run("call_alias", func(t *testing.T) {
		assert.JSONEq(t, `15`, string(send(t, http.MethodPost, "/otc/call", wireAddBody).success(t)))
	})
	t.Run("health", func(t *testing.T) {
		r := send(t, http.MethodGet, "/otc/health", "")
		assert.Equal(t, http.StatusOK, r.status)
		r.object(t)
	})
	t.Run("unknown_below_prefix", func(t *testing.T) {
		send(t, http.MethodGet, "/otc/nope", "").errorBody(t, http.StatusNotFound)
	})
	t.Run("wrong_method_below_prefix", func(t *testing.T) {
		r := send(t, http.MethodPost, "/otc/tools", wireAddBody)
		r.errorBody(t, http.StatusMethodNotAllowed)
		assert.Contains(t, r.header.Get("Allow"), http.MethodGet)
	})
	t.Run("unprefixed_path_is_not_the_handler", func(t *testing.T) {
		assert.Equal(t, http.StatusTeapot, send(t, http.MethodGet, "/tools", "").status)
	})
}

func TestHandlerListToolsWithBody(t *testing.T) {
	t.Parallel()
	f := newWireFixture(t, wireOptions{handler: &otc.HandlerOptions{MaxBodyBytes: 256}})

	ok := []struct {
		name, body, wantSchema string
	}{
		{"schema_otc", `{"$schema":"otc://1.0"}`, otc.SchemaOTC},
		{"schema_oxp", `{"$schema":"urn:oxp:1.0"}`, otc.SchemaOXP},
		{"schema_openapi", `{"$schema":"` + otc.SchemaOpenAPI + `"}`, otc.SchemaOpenAPI},
		{"empty_object", `{}`, otc.SchemaOTC},
	}
	for _, tt := range ok {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := f.do(t, http.MethodGet, "/tools", strings.NewReader(tt.body))
			require.Equal(t, http.StatusOK, r.status, "%s", r.body)
			obj := r.object(t)
			assert.Equal(t, tt.wantSchema, obj["$schema"])
			assert.IsType(t, []any{}, obj["tools"])
		})
	}
	t.Run("chunked_schema_body", func(t *testing.T) {
		t.Parallel()
		req, err := http.NewRequest(http.MethodGet, f.srv.URL+"/tools", io.MultiReader(strings.NewReader(`{"$schema":"urn:oxp:1.0"}`)))
		require.NoError(t, err)
		req.ContentLength = -1
		r := wireSend(t, f.srv.Client(), req)
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		assert.Equal(t, otc.SchemaOXP, r.schema(t))
	})

	bad := []struct {
		name, body string
		status     int
	}{
		{"array", `[]`, http.StatusBadRequest},
		{"string", `"otc://1.0"`, http.StatusBadRequest},
		{"number", `1`, http.StatusBadRequest},
		{"null", `null`, http.StatusBadRequest},
		{"not_json", `tools please`, http.StatusBadRequest},
		{"truncated", `{"$schema":`, http.StatusBadRequest},
		{"unsupported_schema", `{"$schema":"otc://2.0"}`, http.StatusBadRequest},
		{"schema_not_string", `{"$schema":1}`, http.StatusBadRequest},
		{"other_field", `{"request":{}}`, http.StatusBadRequest},
		{"trailing_data", `{"$schema":"otc://1.0"} {}`, http.StatusBadRequest},
		{"too_large", `{"$schema":"otc://1.0"` + strings.Repeat(" ", 300) + `}`, http.StatusRequestEntityTooLarge},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := f.do(t, http.MethodGet, "/tools", strings.NewReader(tt.body)).errorBody(t, tt.status)
			assert.Equal(t, otc.SchemaOTC, e.Schema, "a body that was not accepted gets the default $schema")
			assert.NotContains(t, e.Message+e.DeveloperMessage, `"tools"`)
		})
	}
	t.Run("unsupported_schema_lists_accepted", func(t *testing.T) {
		t.Parallel()
		e := f.do(t, http.MethodGet, "/tools", strings.NewReader(`{"$schema":"otc://2.0"}`)).errorBody(t, http.StatusBadRequest)
		for _, s := range []string{otc.SchemaOTC, otc.SchemaOXP, otc.SchemaOpenAPI} {
			assert.Contains(t, e.DeveloperMessage, s)
		}
	})
}

// ---------------------------------------------------------------------------
// SPEC §2: $schema, echoed in every body, defaulted, refused when unknown.

func TestHandlerSchemaEchoed(t *testing.T) {
	t.Parallel()
	f := newWireFixture(t, wireOptions{})

	// Each request is one that gets past the $schema check; the response
	// must name the spelling the client sent, whatever its outcome.
	requests := []struct {
		name    string
		request map[string]any
		status  int
	}{
		{"success", map[string]any{"tool_id": "Calculator.Add", "input": map[string]any{"a": 1, "b": 2}}, http.StatusOK},
		{"tool_error", map[string]any{"tool_id": "Errors.Raise", "input": map[string]any{"mode": "plain"}}, http.StatusOK},
		{"unknown_tool", map[string]any{"tool_id": "Nope.Tool"}, http.StatusBadRequest},
		{"malformed_tool_id", map[string]any{"tool_id": "Calculator"}, http.StatusBadRequest},
		{"missing_tool_id", map[string]any{"input": map[string]any{}}, http.StatusBadRequest},
		{"missing_requirements", map[string]any{"tool_id": wireSecureTool}, http.StatusBadRequest},
		{"invalid_input", map[string]any{"tool_id": "Calculator.Add", "input": map[string]any{"a": "x", "b": 2}}, http.StatusUnprocessableEntity},
	}
	for _, schema := range []string{otc.SchemaOTC, otc.SchemaOXP, otc.SchemaOpenAPI} {
		for _, tt := range requests {
			t.Run(tt.name+"/"+schema, func(t *testing.T) {
				t.Parallel()
				r := f.call(t, wireCallBody(t, schema, tt.request))
				require.Equal(t, tt.status, r.status, "%s", r.body)
				assert.Equal(t, schema, r.schema(t))
			})
		}
		// Bodies that name a supported $schema but fail the strict
		// decoding of the envelope: the client's spelling is known, so it
		// is still echoed.
		for _, tt := range []struct{ name, body string }{
			{"unknown_top_level_field", `{"$schema":"` + schema + `","request":{"tool_id":"Calculator.Add"},"extra":1}`},
			{"unknown_request_field", `{"$schema":"` + schema + `","request":{"tool_id":"Calculator.Add","inputs":{"a":1,"b":2}}}`},
			{"tool_id_not_string", `{"$schema":"` + schema + `","request":{"tool_id":7}}`},
			{"request_not_object", `{"$schema":"` + schema + `","request":[]}`},
		} {
			t.Run(tt.name+"/"+schema, func(t *testing.T) {
				t.Parallel()
				e := f.call(t, tt.body).errorBody(t, http.StatusBadRequest)
				assert.Equal(t, schema, e.Schema)
			})
		}
		t.Run("catalog_unknown_field/"+schema, func(t *testing.T) {
			t.Parallel()
			e := f.do(t, http.MethodGet, "/tools", strings.NewReader(`{"$schema":"`+schema+`","extra":1}`)).errorBody(t, http.StatusBadRequest)
			assert.Equal(t, schema, e.Schema)
		})
		t.Run("catalog/"+schema, func(t *testing.T) {
			t.Parallel()
			r := f.do(t, http.MethodGet, "/tools", strings.NewReader(`{"$schema":"`+schema+`"}`))
			require.Equal(t, http.StatusOK, r.status, "%s", r.body)
			assert.Equal(t, schema, r.schema(t))
		})
	}
}

func TestHandlerSchemaDefault(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		opts *otc.HandlerOptions
		want string
	}{
		{"nil_options", nil, otc.SchemaOTC},
		{"empty_schema_option", &otc.HandlerOptions{}, otc.SchemaOTC},
		{"oxp_option", &otc.HandlerOptions{Schema: otc.SchemaOXP}, otc.SchemaOXP},
		{"openapi_option", &otc.HandlerOptions{Schema: otc.SchemaOpenAPI}, otc.SchemaOpenAPI},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newWireFixture(t, wireOptions{handler: tt.opts})
			responses := map[string]wireResponse{
				"success":       f.call(t, wireAddBody),
				"schema_null":   f.call(t, `{"$schema":null,"request":{"tool_id":"Calculator.Add","input":{"a":1,"b":2}}}`),
				"unknown_tool":  f.call(t, `{"request":{"tool_id":"Nope.Tool"}}`),
				"invalid_input": f.call(t, `{"request":{"tool_id":"Calculator.Add","input":{}}}`),
				"not_json":      f.call(t, `nope`),
				"catalog":       f.do(t, http.MethodGet, "/tools", nil),
				"health":        f.do(t, http.MethodGet, "/health", nil),
				"not_found":     f.do(t, http.MethodGet, "/nope", nil),
				"bad_method":    f.do(t, http.MethodDelete, "/tools", nil),
			}
			for name, r := range responses {
				assert.Equal(t, tt.want, r.schema(t), name)
			}
			// A client's own spelling still wins over the default.
			r := f.call(t, `{"$schema":"otc://1.0","request":{"tool_id":"Calculator.Add","input":{"a":1,"b":2}}}`)
			assert.Equal(t, otc.SchemaOTC, r.schema(t))
		})
	}
}

func TestHandlerSchemaUnsupported(t *testing.T) {
	t.Parallel()
	f := newWireFixture(t, wireOptions{handler: &otc.HandlerOptions{Schema: otc.SchemaOXP}})

	for _, tt := range []struct{ name, schema string }{
		{"otc_2", "otc://2.0"},
		{"oxp_2", "urn:oxp:2.0"},
		{"empty", ""},
		{"upper_case", "OTC://1.0"},
		{"trailing_space", "otc://1.0 "},
		{"bare_version", "1.0"},
		{"openapi_other_version", "https://github.com/OpenToolCalling/Specification/tree/main/spec/http/2.0/openapi.json"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			body, err := json.Marshal(map[string]any{
				"$schema": tt.schema,
				"request": map[string]any{"tool_id": "Calculator.Add", "input": map[string]any{"a": 1, "b": 2}},
			})
			require.NoError(t, err)
			e := f.call(t, string(body)).errorBody(t, http.StatusBadRequest)
			assert.Equal(t, otc.SchemaOXP, e.Schema, "the refused spelling is not echoed; the default is used")
			assert.Contains(t, strings.ToLower(e.Message), "not supported")
			for _, s := range []string{otc.SchemaOTC, otc.SchemaOXP, otc.SchemaOpenAPI} {
				assert.Contains(t, e.DeveloperMessage, s, "developer_message lists the accepted values")
			}
		})
	}
}

func TestNewHandlerSchemaOption(t *testing.T) {
	t.Parallel()
	reg := otc.NewRegistry(nil)
	for _, s := range []string{"", otc.SchemaOTC, otc.SchemaOXP, otc.SchemaOpenAPI} {
		t.Run("accepts_"+s, func(t *testing.T) {
			assert.NotPanics(t, func() { otc.NewHandler(reg, &otc.HandlerOptions{Schema: s}) })
		})
	}
	for _, s := range []string{"otc://2.0", "urn:oxp:1", "OTC://1.0"} {
		t.Run("panics_"+s, func(t *testing.T) {
			v := wireRecover(func() { otc.NewHandler(reg, &otc.HandlerOptions{Schema: s}) })
			require.NotNil(t, v, "NewHandler must panic on Schema %q", s)
			msg := fmt.Sprint(v)
			assert.True(t, strings.HasPrefix(msg, "otc: "), "panic %q lacks the otc: prefix", msg)
			assert.Contains(t, msg, s)
		})
	}
	t.Run("panics_nil_registry", func(t *testing.T) {
		v := wireRecover(func() { otc.NewHandler(nil, nil) })
		require.NotNil(t, v)
		assert.True(t, strings.HasPrefix(fmt.Sprint(v), "otc: "))
	})
}

func wireRecover(fn func()) (v any) {
	defer func() { v = recover() }()
	fn()
	return nil
}

// ---------------------------------------------------------------------------
// SPEC §3: the catalog.

func TestHandlerCatalogOrder(t *testing.T) {
	t.Parallel()
	reg := otc.NewRegistry(nil)
	register := func(id, version string) {
		require.NoError(t, otc.Register(reg, otc.Tool{ID: id, Version: version, Description: "A tool."},
			func(ctx context.Context, in struct{}) (string, error) { return version, nil }))
	}
	// Registered out of order. String order of the full ids would put
	// 10.0.0 before 2.0.0 and 9.0.0; the catalog orders versions as
	// numbers.
	register("Zeta.Last", "1.0.0")
	register("Versions.Which", "10.0.0")
	register("Versions.Which", "9.0.0")
	register("Alpha.Zed", "0.1.0")
	register("Versions.Which", "2.0.0")
	register("Alpha.Bee", "3.0.0")
	register("Versions.Which", "1.10.0")
	register("Versions.Which", "1.9.0")
	register("Alpha.Bee", "1.0.0")

	srv := httptest.NewServer(otc.NewHandler(reg, nil))
	t.Cleanup(srv.Close)
	req, err := http.NewRequest(http.MethodGet, srv.URL+"/tools", nil)
	require.NoError(t, err)
	r := wireSend(t, srv.Client(), req)
	require.Equal(t, http.StatusOK, r.status)
	r.object(t)

	var cat struct {
		Tools []otc.ToolDefinition `json:"tools"`
	}
	require.NoError(t, json.Unmarshal(r.body, &cat))
	var ids []string
	for _, d := range cat.Tools {
		ids = append(ids, d.ID)
	}
	assert.Equal(t, []string{
		"Alpha.Bee@1.0.0",
		"Alpha.Bee@3.0.0",
		"Alpha.Zed@0.1.0",
		"Versions.Which@1.9.0",
		"Versions.Which@1.10.0",
		"Versions.Which@2.0.0",
		"Versions.Which@9.0.0",
		"Versions.Which@10.0.0",
		"Zeta.Last@1.0.0",
	}, ids)

	// The same request twice gives the same bytes: the order is stable.
	req, err = http.NewRequest(http.MethodGet, srv.URL+"/tools", nil)
	require.NoError(t, err)
	again := wireSend(t, srv.Client(), req)
	assert.Equal(t, string(r.body), string(again.body))
}

func TestHandlerCatalogEntries(t *testing.T) {
	t.Parallel()
	f := newWireFixture(t, wireOptions{})
	r := f.do(t, http.MethodGet, "/tools", nil)
	require.Equal(t, http.StatusOK, r.status)
	var cat struct {
		Tools []map[string]json.RawMessage `json:"tools"`
	}
	require.NoError(t, json.Unmarshal(r.body, &cat))
	byID := map[string]map[string]json.RawMessage{}
	for _, d := range cat.Tools {
		var id string
		require.NoError(t, json.Unmarshal(d["id"], &id))
		byID[id] = d
	}

	t.Run("calculator_add", func(t *testing.T) {
		d := byID["Calculator.Add@1.0.0"]
		require.NotNil(t, d, "Calculator.Add@1.0.0 is listed")
		assert.JSONEq(t, `"Calculator_Add"`, string(d["name"]), "default name is Toolkit_Tool")
		assert.JSONEq(t, `"1.0.0"`, string(d["version"]))
		assert.JSONEq(t, `"Adds two numbers together."`, string(d["description"]))
		var in struct {
			Parameters struct {
				Type       string                     `json:"type"`
				Properties map[string]json.RawMessage `json:"properties"`
				Required   []string                   `json:"required"`
			} `json:"parameters"`
		}
		require.NoError(t, json.Unmarshal(d["input_schema"], &in))
		assert.Equal(t, "object", in.Parameters.Type)
		assert.ElementsMatch(t, []string{"a", "b"}, slices.Collect(maps.Keys(in.Parameters.Properties)))
		assert.ElementsMatch(t, []string{"a", "b"}, in.Parameters.Required)
		assert.NotContains(t, d, "requirements", "a tool without requirements lists none")
	})
	t.Run("no_output_is_null", func(t *testing.T) {
		d := byID["Meta.Noop@1.0.0"]
		require.NotNil(t, d)
		assert.Equal(t, "null", string(d["output_schema"]))
	})
	t.Run("every_version_listed", func(t *testing.T) {
		for _, v := range []string{"1.0.0", "2.0.0", "9.0.0", "10.0.0"} {
			assert.Contains(t, byID, "Versions.Which@"+v)
		}
	})
	t.Run("requirements", func(t *testing.T) {
		d := byID[wireSecureTool]
		require.NotNil(t, d)
		assert.JSONEq(t, `{"authorization":[{"id":"google","oauth2":{"scopes":["gmail.readonly"]}}],"secrets":[{"id":"API_KEY"}],"user_id":true}`,
			string(d["requirements"]))
	})
}

func TestHandlerCatalogItems(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		empty bool
		items bool
	}{
		{"items_off", false, false},
		{"items_on", false, true},
		{"empty_items_off", true, false},
		{"empty_items_on", true, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newWireFixture(t, wireOptions{empty: tt.empty, handler: &otc.HandlerOptions{IncludeItems: tt.items}})
			r := f.do(t, http.MethodGet, "/tools", nil)
			require.Equal(t, http.StatusOK, r.status)
			r.object(t)
			var raw map[string]json.RawMessage
			require.NoError(t, json.Unmarshal(r.body, &raw))
			tools, ok := raw["tools"]
			require.True(t, ok, "tools key present")
			if tt.empty {
				assert.Equal(t, "[]", string(tools), "an empty catalog is [], never null")
			} else {
				var list []any
				require.NoError(t, json.Unmarshal(tools, &list))
				assert.NotEmpty(t, list)
			}
			if tt.items {
				assert.Equal(t, string(tools), string(raw["items"]), "items is the same array as tools")
			} else {
				assert.NotContains(t, raw, "items")
			}
		})
	}
}

// ---------------------------------------------------------------------------
// SPEC §4 and §6: malformed calls, answered 400 before any tool runs.

func TestHandlerCallMalformedBody(t *testing.T) {
	t.Parallel()
	f := newWireFixture(t, wireOptions{})

	tests := []struct {
		name string
		body string
		// want is a word the message or developer message must contain
		// (case-insensitive), so that the caller learns what to fix.
		want string
	}{
		{"empty_body", ``, "empty"},
		{"whitespace_body", " \n\t ", "empty"},
		{"not_json", `hello`, "json"},
		{"json_array", `[{"request":{"tool_id":"Calculator.Add"}}]`, "object"},
		{"json_string", `"Calculator.Add"`, "object"},
		{"json_number", `42`, "object"},
		{"json_null", `null`, "object"},
		{"truncated", `{"request":{"tool_id":"Calculator.Add"`, "json"},
		{"syntax_error", `{"request":{"tool_id":"Calculator.Add",}}`, "json"},
		{"trailing_object", wireAddBody + ` {"request":{}}`, "after"},
		{"trailing_garbage", wireAddBody + `xyz`, "after"},
		{"request_missing", `{}`, "request"},
		{"request_only_schema", `{"$schema":"otc://1.0"}`, "request"},
		{"request_null", `{"request":null}`, "request"},
		{"request_string", `{"request":"Calculator.Add"}`, "request"},
		{"request_array", `{"request":[]}`, "request"},
		{"request_number", `{"request":1}`, "request"},
		{"unknown_top_level_field", `{"request":{"tool_id":"Calculator.Add"},"extra":1}`, "extra"},
		{"unknown_request_field_inputs", `{"request":{"tool_id":"Calculator.Add","inputs":{"a":1,"b":2}}}`, "inputs"},
		{"unknown_request_field_version", `{"request":{"tool_id":"Calculator.Add","version":"1.0.0","input":{"a":1,"b":2}}}`, "version"},
		{"tool_id_missing", `{"request":{"input":{"a":1,"b":2}}}`, "tool_id"},
		{"tool_id_null", `{"request":{"tool_id":null}}`, "tool_id"},
		{"tool_id_number", `{"request":{"tool_id":7}}`, "tool_id"},
		{"tool_id_object", `{"request":{"tool_id":{"id":"Calculator.Add"}}}`, "tool_id"},
		{"tool_id_array", `{"request":{"tool_id":["Calculator.Add"]}}`, "tool_id"},
		{"call_id_number", `{"request":{"tool_id":"Calculator.Add","call_id":1}}`, "call_id"},
		{"trace_id_bool", `{"request":{"tool_id":"Calculator.Add","trace_id":true}}`, "trace_id"},
		{"schema_number", `{"$schema":1,"request":{"tool_id":"Calculator.Add"}}`, "$schema"},
		{"input_array", `{"request":{"tool_id":"Calculator.Add","input":[10,5]}}`, "input"},
		{"input_string", `{"request":{"tool_id":"Calculator.Add","input":"a=10&b=5"}}`, "input"},
		{"input_number", `{"request":{"tool_id":"Calculator.Add","input":15}}`, "input"},
		{"input_bool", `{"request":{"tool_id":"Calculator.Add","input":true}}`, "input"},
		{"context_string", `{"request":{"tool_id":"Calculator.Add","input":{"a":1,"b":2},"context":"user"}}`, "context"},
		{"context_secrets_not_array", `{"request":{"tool_id":"Calculator.Add","input":{"a":1,"b":2},"context":{"secrets":{"id":"K"}}}}`, "secrets"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := f.call(t, tt.body).errorBody(t, http.StatusBadRequest)
			assert.Contains(t, strings.ToLower(e.Message+" "+e.DeveloperMessage), strings.ToLower(tt.want))
			assert.Nil(t, e.ParameterErrors, "a server error has no parameter_errors")
			assert.Nil(t, e.MissingRequirements)
		})
	}
}

func TestHandlerMalformedToolID(t *testing.T) {
	t.Parallel()
	f := newWireFixture(t, wireOptions{})

	huge := strings.Repeat("A", 10<<10)
	for _, tt := range []struct{ name, id string }{
		{"empty", ""},
		{"no_tool_part", "Calculator"},
		{"no_toolkit_part", ".Add"},
		{"empty_tool_part", "Calculator."},
		{"three_parts", "Calculator.Add.Extra"},
		{"dash", "Calc-ulator.Add"},
		{"space", " Calculator.Add"},
		{"two_part_version", "Calculator.Add@1.0"},
		{"only_version", "@v1"},
		{"v_prefix", "Calculator.Add@v1"},
		{"v_prefix_full", "Calculator.Add@v1.0.0"},
		{"pre_release", "Calculator.Add@1.0.0-beta"},
		{"build_metadata", "Calculator.Add@1.0.0+build"},
		{"latest", "Calculator.Add@latest"},
		{"empty_version", "Calculator.Add@"},
		{"leading_zero", "Calculator.Add@01.0.0"},
		{"four_parts", "Calculator.Add@1.0.0.0"},
		{"negative", "Calculator.Add@-1"},
		{"two_ats", "Calculator.Add@1@1"},
		{"name_not_id", "Calculator_Add"},
		{"ten_kilobytes", "Calculator." + huge},
		{"ten_kilobytes_version", "Calculator.Add@" + huge},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := f.call(t, wireCallBody(t, "", map[string]any{"tool_id": tt.id, "input": map[string]any{"a": 1, "b": 2}}))
			e := r.errorBody(t, http.StatusBadRequest)
			assert.Contains(t, strings.ToLower(e.Message), "malformed")
			assert.NotContains(t, e.Message, "not found", "a malformed id is not a missing tool")
			assert.Less(t, len(r.body), 2048, "the answer must not echo a long id")
			assert.NotContains(t, string(r.body), strings.Repeat("A", 200))
		})
	}
	t.Run("name_hint", func(t *testing.T) {
		t.Parallel()
		e := f.call(t, `{"request":{"tool_id":"Calculator_Add"}}`).errorBody(t, http.StatusBadRequest)
		assert.Contains(t, e.DeveloperMessage, "Calculator.Add", "a tool name sent as tool_id points at the id")
	})
}

func TestHandlerToolNotFound(t *testing.T) {
	t.Parallel()
	f := newWireFixture(t, wireOptions{})

	for _, tt := range []struct {
		name, id, wantMessage, wantDev string
	}{
		// The seed's own example exchange (002, "Server Error").
		{"seed_unknown_version", "Calculator.Add@2.0.0", "Tool 'Calculator_Add' was not found", "2.0.0"},
		{"shorthand_unknown_version", "Calculator.Add@2", "Tool 'Calculator_Add' was not found", "2.0.0"},
		{"multi_version_unknown", "Versions.Which@3.0.0", "Tool 'Versions_Which' was not found", "3.0.0"},
		{"unknown_tool", "Nope.Tool", "Tool 'Nope_Tool' was not found", "Nope.Tool"},
		{"unknown_tool_with_version", "Nope.Tool@1.0.0", "Tool 'Nope_Tool' was not found", "Nope.Tool"},
		{"unknown_toolkit_known_tool", "Calc.Add", "Tool 'Calc_Add' was not found", "Calc.Add"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := f.call(t, `{"$schema":"otc://1.0","request":{"call_id":"123e4567-e89b-12d3-a456-426614174000","tool_id":"`+tt.id+`"}}`).
				errorBody(t, http.StatusBadRequest)
			assert.Equal(t, tt.wantMessage, e.Message)
			assert.Contains(t, e.DeveloperMessage, tt.wantDev)
		})
	}
}

// ---------------------------------------------------------------------------
// SPEC §5: version resolution.

func TestHandlerVersionResolution(t *testing.T) {
	t.Parallel()
	f := newWireFixture(t, wireOptions{})
	for _, tt := range []struct{ id, want string }{
		{"Versions.Which", "Versions.Which@10.0.0"},
		{"Versions.Which@10", "Versions.Which@10.0.0"},
		{"Versions.Which@9", "Versions.Which@9.0.0"},
		{"Versions.Which@9.0.0", "Versions.Which@9.0.0"},
		{"Versions.Which@2", "Versions.Which@2.0.0"},
		{"Versions.Which@1", "Versions.Which@1.0.0"},
		{"Versions.Which@1.0.0", "Versions.Which@1.0.0"},
		{"Calculator.Add@1", "Calculator.Add@1.0.0"},
	} {
		t.Run(tt.id, func(t *testing.T) {
			t.Parallel()
			tool := tt.id
			if strings.HasPrefix(tool, "Calculator.Add") {
				r := f.call(t, `{"request":{"tool_id":"`+tool+`","input":{"a":1,"b":1}}}`)
				assert.JSONEq(t, `2`, string(r.success(t)))
				return
			}
			r := f.call(t, `{"request":{"tool_id":"`+tool+`"}}`)
			assert.JSONEq(t, `"`+tt.want+`"`, string(r.success(t)))
		})
	}
}

// ---------------------------------------------------------------------------
// SPEC §6: body size limit (413).

func TestHandlerBodyTooLarge(t *testing.T) {
	t.Parallel()

	// padded returns a call to Calculator.Add padded with trailing
	// whitespace to exactly n bytes.
	padded := func(t *testing.T, n int) []byte {
		b := []byte(wireAddBody)
		require.LessOrEqual(t, len(b), n)
		return append(b, bytes.Repeat([]byte(" "), n-len(b))...)
	}
	for _, tt := range []struct {
		name    string
		limit   int64 // HandlerOptions.MaxBodyBytes
		size    int
		chunked bool
		status  int
	}{
		{"default_limit_content_length", 0, otc.DefaultMaxBodyBytes + 1, false, http.StatusRequestEntityTooLarge},
		{"default_limit_chunked", 0, otc.DefaultMaxBodyBytes + 1, true, http.StatusRequestEntityTooLarge},
		{"default_limit_exact", 0, otc.DefaultMaxBodyBytes, false, http.StatusOK},
		{"custom_limit_content_length", 128, 129, false, http.StatusRequestEntityTooLarge},
		{"custom_limit_chunked", 128, 129, true, http.StatusRequestEntityTooLarge},
		{"custom_limit_far_over", 128, 1 << 20, false, http.StatusRequestEntityTooLarge},
		{"custom_limit_exact", 128, 128, false, http.StatusOK},
		{"custom_limit_exact_chunked", 128, 128, true, http.StatusOK},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newWireFixture(t, wireOptions{handler: &otc.HandlerOptions{MaxBodyBytes: tt.limit}})
			var body io.Reader = bytes.NewReader(padded(t, tt.size))
			if tt.chunked {
				body = io.MultiReader(body) // hides the length
			}
			req, err := http.NewRequest(http.MethodPost, f.srv.URL+"/tools/call", body)
			require.NoError(t, err)
			if tt.chunked {
				req.ContentLength = -1
			}
			r := wireSend(t, f.srv.Client(), req)
			if tt.status == http.StatusOK {
				assert.JSONEq(t, `15`, string(r.success(t)))
			} else {
				e := r.errorBody(t, tt.status)
				assert.Empty(t, e.DeveloperMessage)
				assert.Nil(t, e.ParameterErrors)
			}
			// The server keeps serving.
			assert.JSONEq(t, `15`, string(f.call(t, wireAddBody).success(t)))
		})
	}
}

// ---------------------------------------------------------------------------
// SPEC §4 and §6: input, validation errors (422) and their keys.

func TestHandlerInputAbsentOrNull(t *testing.T) {
	t.Parallel()
	f := newWireFixture(t, wireOptions{})
	for _, tt := range []struct{ name, body string }{
		{"absent", `{"request":{"tool_id":"Meta.Inspect"}}`},
		{"null", `{"request":{"tool_id":"Meta.Inspect","input":null}}`},
		{"empty_object", `{"request":{"tool_id":"Meta.Inspect","input":{}}}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f.call(t, tt.body).success(t)
		})
	}
	// Absent input is validated as {}, not skipped: Add's parameters are
	// required.
	t.Run("absent_is_validated_as_empty_object", func(t *testing.T) {
		t.Parallel()
		e := f.call(t, `{"request":{"tool_id":"Calculator.Add"}}`).errorBody(t, http.StatusUnprocessableEntity)
		assert.ElementsMatch(t, []string{"a", "b"}, slices.Collect(maps.Keys(e.ParameterErrors)))
	})
	t.Run("null_is_validated_as_empty_object", func(t *testing.T) {
		t.Parallel()
		e := f.call(t, `{"request":{"tool_id":"Calculator.Add","input":null}}`).errorBody(t, http.StatusUnprocessableEntity)
		assert.ElementsMatch(t, []string{"a", "b"}, slices.Collect(maps.Keys(e.ParameterErrors)))
	})
}

func TestHandlerValidationErrors(t *testing.T) {
	t.Parallel()
	f := newWireFixture(t, wireOptions{})

	// order builds a Shapes.Order input, replacing the named top-level
	// fields of a valid one.
	order := func(overrides string) string {
		base := `"customer":"Ada","address":{"street":"1 Main St","zip":"12345"},"items":[1,2,3]`
		if overrides != "" {
			base = overrides
		}
		return `{"request":{"tool_id":"Shapes.Order","input":{` + base + `}}}`
	}
	add := func(input string) string {
		return `{"request":{"tool_id":"Calculator.Add@1.0.0","input":` + input + `}}`
	}
	validAddress := `"address":{"street":"1 Main St","zip":"12345"}`

	tests := []struct {
		name string
		body string
		// want maps each expected key of parameter_errors to a word its
		// message must contain ("" for any non-empty message).
		want map[string]string
		// secret is a value from the input that no message may quote.
		secret string
	}{
		// The seed's own example exchange (002, "Input Validation Error").
		{"seed_b_not_a_number", add(`{"a":10,"b":"infinity"}`), map[string]string{"b": "Must be a number"}, "infinity"},
		{"both_wrong_types", add(`{"a":"ten","b":true}`), map[string]string{"a": "number", "b": "number"}, "ten"},
		{"null_value", add(`{"a":null,"b":1}`), map[string]string{"a": "number"}, ""},
		{"missing_required", add(`{"a":1}`), map[string]string{"b": "required"}, ""},
		{"missing_all", add(`{}`), map[string]string{"a": "required", "b": "required"}, ""},
		{"unexpected_parameter", add(`{"a":1,"b":2,"c":3}`), map[string]string{"c": ""}, ""},
		{"unexpected_and_missing", add(`{"a":1,"bee":2}`), map[string]string{"b": "required", "bee": ""}, ""},
		{"float_out_of_range", add(`{"a":1e400,"b":1}`), map[string]string{"a": ""}, "1e400"},
		{"nested_wrong_type", order(`"customer":"Ada","address":{"street":"1 Main St","zip":12345},"items":[]`),
			map[string]string{"address.zip": "string"}, ""},
		{"nested_pattern", order(`"customer":"Ada","address":{"street":"1 Main St","zip":"zip-code-secret"},"items":[]`),
			map[string]string{"address.zip": ""}, "zip-code-secret"},
		{"nested_missing", order(`"customer":"Ada","address":{"street":"1 Main St"},"items":[]`),
			map[string]string{"address.zip": "required"}, ""},
		{"nested_unexpected", order(`"customer":"Ada","address":{"street":"1 Main St","zip":"12345","floor":3},"items":[]`),
			map[string]string{"address.floor": ""}, ""},
		{"nested_not_object", order(`"customer":"Ada","address":"1 Main St","items":[]`),
			map[string]string{"address": "object"}, "1 Main St"},
		{"array_item", order(`"customer":"Ada",` + validAddress + `,"items":[1,2,"three"]`),
			map[string]string{"items.2": "integer"}, "three"},
		{"array_item_fraction", order(`"customer":"Ada",` + validAddress + `,"items":[1.5]`),
			map[string]string{"items.0": "integer"}, ""},
		{"array_not_array", order(`"customer":"Ada",` + validAddress + `,"items":{"0":1}`),
			map[string]string{"items": "array"}, ""},
		{"map_value", order(`"customer":"Ada",` + validAddress + `,"items":[],"tags":{"red":"many"}`),
			map[string]string{"tags.red": "integer"}, "many"},
		{"int_out_of_range", order(`"customer":"Ada",` + validAddress + `,"items":[],"count":1e20`),
			map[string]string{"count": ""}, "1e20"},
		{"int_fraction", order(`"customer":"Ada",` + validAddress + `,"items":[],"count":2.5`),
			map[string]string{"count": "integer"}, ""},
		{"several_levels", order(`"customer":7,"address":{"zip":"1"},"items":[true]`),
			map[string]string{"customer": "string", "address.street": "required", "address.zip": "", "items.0": "integer"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := f.call(t, tt.body)
			e := r.errorBody(t, http.StatusUnprocessableEntity)
			assert.Equal(t, "Some input parameters are invalid", e.Message)
			assert.ElementsMatch(t, slices.Collect(maps.Keys(tt.want)), slices.Collect(maps.Keys(e.ParameterErrors)), "keys of %s", r.body)
			for k, word := range tt.want {
				msg := e.ParameterErrors[k]
				assert.NotEmpty(t, msg, k)
				assert.Contains(t, strings.ToLower(msg), strings.ToLower(word), k)
			}
			if tt.secret != "" {
				assert.NotContains(t, string(r.body), tt.secret, "messages never quote the value sent")
			}
		})
	}
	// The valid base input passes, so the rows above fail for the reason
	// they name.
	t.Run("valid_order", func(t *testing.T) {
		t.Parallel()
		assert.JSONEq(t, `{"customer":"Ada","zip":"12345","items":3,"count":0}`, string(f.call(t, order("")).success(t)))
	})
	t.Run("valid_order_with_count_and_tags", func(t *testing.T) {
		t.Parallel()
		v := f.call(t, order(`"customer":"Ada",`+validAddress+`,"items":[],"tags":{"red":2},"count":1000`)).success(t)
		assert.JSONEq(t, `{"customer":"Ada","zip":"12345","items":0,"count":1000}`, string(v))
	})
}

func TestHandlerDeepNesting(t *testing.T) {
	t.Parallel()
	f := newWireFixture(t, wireOptions{})
	const depth = 100_000
	arrays := strings.Repeat("[", depth) + strings.Repeat("]", depth)
	objects := strings.Repeat(`{"a":`, depth) + "1" + strings.Repeat("}", depth)
	for _, tt := range []struct{ name, body string }{
		{"arrays_in_input", `{"request":{"tool_id":"Calculator.Add","input":{"a":` + arrays + `,"b":1}}}`},
		{"objects_in_input", `{"request":{"tool_id":"Calculator.Add","input":` + objects + `}}`},
		{"objects_in_context", `{"request":{"tool_id":"Calculator.Add","input":{"a":1,"b":1},"context":` + objects + `}}`},
		{"arrays_at_top", arrays},
		{"unclosed_arrays", `{"request":{"tool_id":"Calculator.Add","input":{"a":` + strings.Repeat("[", depth)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f.call(t, tt.body).errorBody(t, http.StatusBadRequest)
			assert.JSONEq(t, `15`, string(f.call(t, wireAddBody).success(t)), "the server keeps serving")
		})
	}
}

func TestHandlerInvalidUTF8(t *testing.T) {
	t.Parallel()
	f := newWireFixture(t, wireOptions{})
	for _, tt := range []struct{ name, body string }{
		{"in_call_id", `{"request":{"tool_id":"Calculator.Add","call_id":"id-` + "\xff\xfe" + `","input":{"a":1,"b":2}}}`},
		{"in_input_key", `{"request":{"tool_id":"Calculator.Add","input":{"a":1,"b":2,"` + "\xc3\x28" + `":3}}}`},
		{"in_input_value", `{"request":{"tool_id":"Shapes.Order","input":{"customer":"` + "\xed\xa0\x80" + `"}}}`},
		{"truncated_rune", `{"request":{"tool_id":"Calculator.Add","trace_id":"` + "\xe2\x82" + `"}}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := f.call(t, tt.body)
			r.errorBody(t, http.StatusBadRequest)
			assert.True(t, utf8.Valid(r.body), "the answer itself is valid UTF-8")
		})
	}
}

// ---------------------------------------------------------------------------
// SPEC §6: tool execution errors (200, success false).

func TestHandlerToolPanics(t *testing.T) {
	t.Parallel()
	f := newWireFixture(t, wireOptions{})

	r := f.call(t, `{"request":{"tool_id":"Faults.Panic","call_id":"call-panic-1"}}`)
	te := r.toolError(t)
	assert.True(t, strings.Contains(te.Message, "Faults_Panic") || strings.Contains(te.Message, "Faults.Panic"),
		"message %q names the tool", te.Message)
	assert.NotContains(t, te.Message, wirePanicValue, "the message is fixed; the panic value is for developers")
	require.NotNil(t, te.DeveloperMessage)
	assert.Contains(t, *te.DeveloperMessage, wirePanicValue)

	// The stack goes to the logger only.
	logs := f.logs.String()
	assert.Contains(t, logs, wirePanicValue)
	assert.Contains(t, logs, "goroutine ", "the log carries the stack")
	assert.Contains(t, logs, "helpers_test.go", "the stack reaches the panicking function")
	assert.Contains(t, logs, "call-panic-1")
	assert.NotContains(t, string(r.body), "goroutine ")
	assert.NotContains(t, string(r.body), ".go:")

	// The server keeps serving, and the same tool can be called again.
	assert.JSONEq(t, `15`, string(f.call(t, wireAddBody).success(t)))
	f.call(t, `{"request":{"tool_id":"Faults.Panic"}}`).toolError(t)
}

func TestHandlerUnencodableResult(t *testing.T) {
	t.Parallel()
	f := newWireFixture(t, wireOptions{})
	for _, tool := range []string{"Faults.NaN", "Faults.Chan"} {
		t.Run(tool, func(t *testing.T) {
			t.Parallel()
			te := f.call(t, `{"request":{"tool_id":"`+tool+`"}}`).toolError(t)
			assert.Contains(t, te.Message, "cannot", "message says the value cannot be sent")
			assert.Contains(t, te.Message, strings.ReplaceAll(tool, ".", "_"))
		})
	}
}

func TestHandlerClientGoesAway(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		ctx  func(started <-chan struct{}) (context.Context, context.CancelFunc)
	}{
		{"cancel_after_start", func(started <-chan struct{}) (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			go func() {
				select {
				case <-started:
					cancel()
				case <-ctx.Done():
				}
			}()
			return ctx, cancel
		}},
		{"short_deadline", func(<-chan struct{}) (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 500*time.Millisecond)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newWireFixture(t, wireOptions{})
			// The test watches the tool's start itself, then relays it.
			relay := make(chan struct{})
			ctx, cancel := tt.ctx(relay)
			defer cancel()

			errc := make(chan error, 1)
			go func() {
				req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.srv.URL+"/tools/call",
					strings.NewReader(`{"request":{"tool_id":"Slow.Wait"}}`))
				if err != nil {
					errc <- err
					return
				}
				resp, err := f.srv.Client().Do(req)
				if err == nil {
					resp.Body.Close()
				}
				errc <- err
			}()

			select {
			case <-f.started:
				close(relay)
			case <-time.After(10 * time.Second):
				t.Fatal("Slow.Wait never started")
			}
			select {
			case err := <-f.stopped:
				assert.ErrorIs(t, err, context.Canceled, "the function's context is cancelled when the client goes")
			case <-time.After(10 * time.Second):
				t.Fatal("the function's context was not cancelled after the client went away")
			}
			assert.Error(t, <-errc, "the client gave up")

			assert.JSONEq(t, `15`, string(f.call(t, wireAddBody).success(t)), "the server keeps serving")
		})
	}
}

// ---------------------------------------------------------------------------
// SPEC §4: call_id, trace_id, duration.

var wireUUIDv4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestHandlerCallID(t *testing.T) {
	t.Parallel()
	f := newWireFixture(t, wireOptions{})

	inspect := func(t *testing.T, r wireResponse) (wireResult, testkit.InspectOutput) {
		res, _ := r.result(t)
		require.True(t, res.Success, "%s", r.body)
		var seen testkit.InspectOutput
		require.NoError(t, json.Unmarshal(res.Value, &seen))
		return res, seen
	}

	for _, id := range []string{"123e4567-e89b-12d3-a456-426614174000", "my-call-1", "ünïcødé call ☎"} {
		t.Run("echoed/"+id, func(t *testing.T) {
			t.Parallel()
			res, seen := inspect(t, f.call(t, wireCallBody(t, "", map[string]any{"tool_id": "Meta.Inspect", "call_id": id})))
			assert.Equal(t, id, res.CallID)
			assert.Equal(t, id, seen.CallID, "the tool sees the call id")
		})
	}
	t.Run("echoed_on_tool_error", func(t *testing.T) {
		t.Parallel()
		res, _ := f.call(t, `{"request":{"tool_id":"Errors.Raise","call_id":"err-call-7","input":{"mode":"plain"}}}`).result(t)
		assert.False(t, res.Success)
		assert.Equal(t, "err-call-7", res.CallID)
	})
	for _, tt := range []struct{ name, body string }{
		{"absent", `{"request":{"tool_id":"Meta.Inspect"}}`},
		{"empty", `{"request":{"tool_id":"Meta.Inspect","call_id":""}}`},
	} {
		t.Run("generated/"+tt.name, func(t *testing.T) {
			t.Parallel()
			res1, seen := inspect(t, f.call(t, tt.body))
			assert.Regexp(t, wireUUIDv4, res1.CallID)
			assert.Equal(t, res1.CallID, seen.CallID, "the tool sees the generated id")
			res2, _ := inspect(t, f.call(t, tt.body))
			assert.Regexp(t, wireUUIDv4, res2.CallID)
			assert.NotEqual(t, res1.CallID, res2.CallID, "each call gets its own id")
		})
	}
}

func TestHandlerTraceID(t *testing.T) {
	t.Parallel()
	f := newWireFixture(t, wireOptions{})
	for _, tt := range []struct{ name, body, want string }{
		{"sent", `{"request":{"tool_id":"Meta.Inspect","trace_id":"trace-abc-123"}}`, "trace-abc-123"},
		{"absent", `{"request":{"tool_id":"Meta.Inspect"}}`, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var seen testkit.InspectOutput
			require.NoError(t, json.Unmarshal(f.call(t, tt.body).success(t), &seen))
			assert.Equal(t, tt.want, seen.TraceID)
			assert.Equal(t, "Meta.Inspect@1.0.0", seen.ToolID)
		})
	}
}

func TestHandlerDuration(t *testing.T) {
	t.Parallel()
	f := newWireFixture(t, wireOptions{})
	// result() checks that duration is a non-negative JSON number; these
	// rows make it do so on every kind of 200.
	for _, tt := range []struct{ name, body string }{
		{"success", wireAddBody},
		{"no_output", `{"request":{"tool_id":"Meta.Noop"}}`},
		{"tool_error", `{"request":{"tool_id":"Errors.Raise","input":{"mode":"tool_error"}}}`},
		{"panic", `{"request":{"tool_id":"Faults.Panic"}}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f.call(t, tt.body).result(t)
		})
	}
	t.Run("no_output_has_no_value", func(t *testing.T) {
		t.Parallel()
		r := f.call(t, `{"request":{"tool_id":"Meta.Noop"}}`)
		res, _ := r.result(t)
		assert.True(t, res.Success)
		assert.NotContains(t, r.object(t)["result"], "value", "value is omitted when output_schema is null")
	})
}

// ---------------------------------------------------------------------------
// SPEC §6: what a tool's error becomes on the wire.

func TestHandlerToolErrors(t *testing.T) {
	t.Parallel()
	f := newWireFixture(t, wireOptions{})

	str := func(s string) *string { return &s }
	yes := true
	tests := []struct {
		mode         string
		message      string // exact, or "" to check only that it names the tool
		developer    *string
		canRetry     *bool
		prompt       *string
		retryAfterMS string // the exact JSON literal, "" when absent
	}{
		// The seed's own example exchange (002, "Tool Execution Error").
		{"tool_error", "Doorbell ID not found", str("The doorbell with ID 'doorbell1' does not exist."), &yes, str("ids: doorbell42,doorbell84"), "500"},
		{"retry_sub_ms", "Busy", nil, &yes, nil, "2"},
		{"retry_1ns", "Busy", nil, &yes, nil, "1"},
		{"retry_exact_ms", "Busy", nil, &yes, nil, "2"},
		{"no_retry", "Quota exhausted", nil, nil, nil, ""},
		{"plain", "the upstream service refused the request", nil, nil, nil, ""},
		{"wrapped", "Profile is locked", str("row lock held by another session"), &yes, nil, "1000"},
		{"empty_tool_error", "", nil, nil, nil, ""},
		{"empty_plain", "", nil, nil, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			t.Parallel()
			r := f.call(t, `{"request":{"tool_id":"Errors.Raise","input":{"mode":"`+tt.mode+`"}}}`)
			te := r.toolError(t)
			if tt.message == "" {
				assert.Contains(t, te.Message, "Errors_Raise", "an empty message becomes one naming the tool")
			} else {
				assert.Equal(t, tt.message, te.Message)
			}
			assert.Equal(t, tt.developer, te.DeveloperMessage)
			if tt.canRetry == nil {
				assert.True(t, te.CanRetry == nil || !*te.CanRetry, "can_retry absent or false")
			} else {
				assert.Equal(t, tt.canRetry, te.CanRetry)
			}
			assert.Equal(t, tt.prompt, te.AdditionalPromptContent)
			if tt.retryAfterMS == "" {
				assert.Nil(t, te.RetryAfterMS)
			} else {
				require.NotNil(t, te.RetryAfterMS)
				assert.Equal(t, tt.retryAfterMS, te.RetryAfterMS.String(), "retry_after_ms is whole milliseconds, rounded up, written as an integer")
			}
			assert.NotContains(t, string(r.body), testkit.HiddenCause, "ToolError.Err is never sent")
			assert.NotContains(t, te.Message, "loading profile", "a wrapped ToolError is sent as itself")
		})
	}
}

// ---------------------------------------------------------------------------
// SPEC §4: the order of checks.

func TestHandlerCheckOrder(t *testing.T) {
	t.Parallel()
	f := newWireFixture(t, wireOptions{handler: &otc.HandlerOptions{MaxBodyBytes: 1024}})
	for _, tt := range []struct {
		name, body string
		status     int
		want       string // a word of the message
	}{
		{"size_before_schema", `{"$schema":"otc://9.9","request":{"tool_id":"Nope.Tool","trace_id":"` + strings.Repeat("x", 2000) + `"}}`,
			http.StatusRequestEntityTooLarge, ""},
		{"shape_before_schema", `{"$schema":"otc://9.9","request":[]}`, http.StatusBadRequest, "request"},
		{"schema_before_tool", `{"$schema":"otc://9.9","request":{"tool_id":"Nope.Tool"}}`, http.StatusBadRequest, "not supported"},
		{"tool_before_requirements", `{"request":{"tool_id":"Secure.Use@2.0.0"}}`, http.StatusBadRequest, "not found"},
		{"requirements_before_input", `{"request":{"tool_id":"Secure.Use","input":{"mode":5,"x":1}}}`, http.StatusBadRequest, "cannot run"},
		{"input_after_requirements", `{"request":{"tool_id":"Secure.Use","input":{"mode":5},"context":{"user_id":"u1","secrets":[{"id":"API_KEY","value":"` + wireSecretValue + `"}],"authorization":[{"id":"google","token":"` + wireTokenValue + `"}]}}}`,
			http.StatusUnprocessableEntity, "invalid"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := f.call(t, tt.body).errorBody(t, tt.status)
			assert.Contains(t, strings.ToLower(e.Message), tt.want)
		})
	}
}

// ---------------------------------------------------------------------------
// SPEC §7: requirements, call context, secrets.

func TestHandlerMissingRequirements(t *testing.T) {
	t.Parallel()
	f := newWireFixture(t, wireOptions{})

	tests := []struct {
		name        string
		context     map[string]any
		wantSecrets []otc.SecretRequirement
		wantUserID  bool
		wantWords   []string // named in the message
	}{
		{"nothing_sent", nil, []otc.SecretRequirement{{ID: "API_KEY"}}, true, []string{"API_KEY", "google"}},
		{"empty_context", map[string]any{}, []otc.SecretRequirement{{ID: "API_KEY"}}, true, []string{"API_KEY", "google"}},
		{"only_secret", map[string]any{"secrets": wireSecrets("API_KEY", wireSecretValue)}, nil, true, []string{"google"}},
		{"only_user_id_missing", map[string]any{
			"secrets":       wireSecrets("API_KEY", wireSecretValue),
			"authorization": wireTokens("google", wireTokenValue),
		}, nil, true, nil},
		{"only_secret_missing", map[string]any{
			"user_id":       "user-1",
			"secrets":       wireSecrets("EXTRA_KEY", wireExtraSecret),
			"authorization": wireTokens("google", wireTokenValue),
		}, []otc.SecretRequirement{{ID: "API_KEY"}}, false, []string{"API_KEY"}},
		{"secret_empty_value", map[string]any{
			"user_id":       "user-1",
			"secrets":       wireSecrets("API_KEY", ""),
			"authorization": wireTokens("google", wireTokenValue),
		}, []otc.SecretRequirement{{ID: "API_KEY"}}, false, []string{"API_KEY"}},
		{"secret_id_other_case", map[string]any{
			"user_id":       "user-1",
			"secrets":       wireSecrets("api_key", wireSecretValue),
			"authorization": wireTokens("google", wireTokenValue),
		}, []otc.SecretRequirement{{ID: "API_KEY"}}, false, []string{"API_KEY"}},
		{"token_missing", map[string]any{
			"user_id":       "user-1",
			"secrets":       wireSecrets("API_KEY", wireSecretValue),
			"authorization": wireTokens("github", wireExtraToken),
		}, nil, false, []string{"google"}},
		{"token_empty", map[string]any{
			"user_id":       "user-1",
			"secrets":       wireSecrets("API_KEY", wireSecretValue),
			"authorization": wireTokens("google", ""),
		}, nil, false, []string{"google"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := f.call(t, wireSecureBody(t, "", tt.context))
			e := r.errorBody(t, http.StatusBadRequest)
			require.NotNil(t, e.MissingRequirements, "missing_requirements: %s", r.body)
			assert.Equal(t, tt.wantSecrets, e.MissingRequirements.Secrets)
			assert.Equal(t, tt.wantUserID, e.MissingRequirements.UserID)
			for _, w := range tt.wantWords {
				assert.Contains(t, e.Message, w)
			}
			wireAssertNoSecrets(t, string(r.body), "response")

			var raw struct {
				MR map[string]json.RawMessage `json:"missing_requirements"`
			}
			require.NoError(t, json.Unmarshal(r.body, &raw))
			assert.NotContains(t, raw.MR, "authorization", "without a challenge hook the list is omitted")
		})
	}
}

func TestHandlerCallContextVisibility(t *testing.T) {
	t.Parallel()
	f := newWireFixture(t, wireOptions{})
	r := f.call(t, wireSecureBody(t, "", map[string]any{
		"user_id":       "user-42",
		"secrets":       wireSecrets("API_KEY", wireSecretValue, "EXTRA_KEY", wireExtraSecret),
		"authorization": wireTokens("google", wireTokenValue, "github", wireExtraToken),
		"unknown_field": "ignored",
	}))
	var seen wireSecureOutput
	require.NoError(t, json.Unmarshal(r.success(t), &seen))
	assert.Equal(t, wireSecureOutput{
		SecretOK:                true,
		TokenOK:                 true,
		UndeclaredSecretVisible: false,
		UndeclaredTokenVisible:  false,
		UserID:                  "user-42",
	}, seen)
	wireAssertNoSecrets(t, string(r.body), "response")
}

func TestHandlerAuthorizationChallenge(t *testing.T) {
	t.Parallel()
	type hookCall struct {
		toolID, provider, userID string
		scopes                   []string
	}
	var mu sync.Mutex
	var calls []hookCall
	f := newWireFixture(t, wireOptions{challenge: func(ctx context.Context, toolID string, req otc.AuthorizationRequirement, userID string) *otc.AuthorizationChallenge {
		mu.Lock()
		defer mu.Unlock()
		var scopes []string
		if req.OAuth2 != nil {
			scopes = req.OAuth2.Scopes
		}
		calls = append(calls, hookCall{toolID, req.ID, userID, scopes})
		if userID == "" {
			return nil // the hook may decline
		}
		return &otc.AuthorizationChallenge{
			ID:       req.ID,
			URL:      "https://auth.example/authorize?provider=" + req.ID + "&user=" + userID,
			CheckURL: "https://auth.example/check?user=" + userID,
		}
	}})

	t.Run("challenge_listed", func(t *testing.T) {
		r := f.call(t, wireSecureBody(t, "", map[string]any{
			"user_id": "user-9",
			"secrets": wireSecrets("API_KEY", wireSecretValue),
		}))
		e := r.errorBody(t, http.StatusBadRequest)
		require.NotNil(t, e.MissingRequirements)
		assert.Equal(t, []otc.AuthorizationChallenge{{
			ID:       "google",
			URL:      "https://auth.example/authorize?provider=google&user=user-9",
			CheckURL: "https://auth.example/check?user=user-9",
		}}, e.MissingRequirements.Authorization)
		assert.Empty(t, e.MissingRequirements.Secrets)
		assert.False(t, e.MissingRequirements.UserID)
		wireAssertNoSecrets(t, string(r.body), "response")

		mu.Lock()
		defer mu.Unlock()
		require.NotEmpty(t, calls)
		assert.Equal(t, hookCall{wireSecureTool, "google", "user-9", []string{"gmail.readonly"}}, calls[len(calls)-1])
	})
	t.Run("declined_challenge_omitted", func(t *testing.T) {
		r := f.call(t, wireSecureBody(t, "", map[string]any{"secrets": wireSecrets("API_KEY", wireSecretValue)}))
		e := r.errorBody(t, http.StatusBadRequest)
		require.NotNil(t, e.MissingRequirements)
		assert.Empty(t, e.MissingRequirements.Authorization)
		assert.True(t, e.MissingRequirements.UserID)
		assert.Contains(t, e.Message, "google")
	})
	t.Run("token_present_no_hook_call", func(t *testing.T) {
		mu.Lock()
		before := len(calls)
		mu.Unlock()
		r := f.call(t, wireSecureBody(t, "", map[string]any{
			"user_id":       "user-9",
			"secrets":       wireSecrets("API_KEY", wireSecretValue),
			"authorization": wireTokens("google", wireTokenValue),
		}))
		r.success(t)
		mu.Lock()
		defer mu.Unlock()
		assert.Len(t, calls, before, "the hook is asked only about missing authorizations")
	})
}

func TestHandlerChallengeHookPanics(t *testing.T) {
	t.Parallel()
	f := newWireFixture(t, wireOptions{challenge: func(context.Context, string, otc.AuthorizationRequirement, string) *otc.AuthorizationChallenge {
		panic("hook exploded")
	}})
	r := f.call(t, wireSecureBody(t, "", map[string]any{"user_id": "u", "secrets": wireSecrets("API_KEY", wireSecretValue)}))
	// An internal fault is still a JSON error body, never an HTML page
	// (SPEC §6).
	e := r.errorBody(t, http.StatusInternalServerError)
	assert.NotContains(t, e.Message+e.DeveloperMessage, "hook exploded")
	wireAssertNoSecrets(t, string(r.body), "response")
	wireAssertNoSecrets(t, f.logs.String(), "log")
	assert.JSONEq(t, `15`, string(f.call(t, wireAddBody).success(t)), "the server keeps serving")
}

func TestHandlerSecretsNeverLeak(t *testing.T) {
	t.Parallel()
	full := map[string]any{
		"user_id":       "user-1",
		"secrets":       wireSecrets("API_KEY", wireSecretValue, "EXTRA_KEY", wireExtraSecret),
		"authorization": wireTokens("google", wireTokenValue, "github", wireExtraToken),
	}
	for _, tt := range []struct {
		name   string
		body   func(t *testing.T) string
		status int
	}{
		{"tool_panics", func(t *testing.T) string { return wireSecureBody(t, "panic", full) }, http.StatusOK},
		{"tool_returns_error", func(t *testing.T) string { return wireSecureBody(t, "error", full) }, http.StatusOK},
		{"tool_returns_tool_error", func(t *testing.T) string { return wireSecureBody(t, "tool_error", full) }, http.StatusOK},
		{"success", func(t *testing.T) string { return wireSecureBody(t, "", full) }, http.StatusOK},
		{"invalid_input", func(t *testing.T) string {
			return wireCallBody(t, "", map[string]any{"tool_id": wireSecureTool, "input": map[string]any{"mode": wireSecretValue, "x": wireTokenValue}, "context": full})
		}, http.StatusUnprocessableEntity},
		{"unknown_version", func(t *testing.T) string {
			return wireCallBody(t, "", map[string]any{"tool_id": "Secure.Use@9.0.0", "context": full})
		}, http.StatusBadRequest},
		{"partial_requirements", func(t *testing.T) string {
			return wireSecureBody(t, "", map[string]any{"secrets": wireSecrets("API_KEY", wireSecretValue), "authorization": wireTokens("github", wireExtraToken)})
		}, http.StatusBadRequest},
		{"context_value_wrong_type", func(t *testing.T) string {
			return `{"request":{"tool_id":"Secure.Use","context":{"user_id":7,"secrets":[{"id":"API_KEY","value":"` + wireSecretValue + `"}]}}}`
		}, http.StatusBadRequest},
		{"unknown_field_beside_context", func(t *testing.T) string {
			return `{"request":{"tool_id":"Secure.Use","context":{"secrets":[{"id":"API_KEY","value":"` + wireSecretValue + `"}]},"extra":1}}`
		}, http.StatusBadRequest},
		{"syntax_error_after_secret", func(t *testing.T) string {
			return `{"request":{"tool_id":"Secure.Use","context":{"secrets":[{"id":"API_KEY","value":"` + wireSecretValue + `"}]}},}`
		}, http.StatusBadRequest},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newWireFixture(t, wireOptions{})
			r := f.call(t, tt.body(t))
			require.Equal(t, tt.status, r.status, "%s", r.body)
			r.object(t)
			wireAssertNoSecrets(t, string(r.body), "response")
			wireAssertNoSecrets(t, f.logs.String(), "log")
		})
	}
	// The panic case must actually have logged, or the log check above
	// proves nothing.
	t.Run("panic_is_logged", func(t *testing.T) {
		t.Parallel()
		f := newWireFixture(t, wireOptions{})
		f.call(t, wireSecureBody(t, "panic", full)).toolError(t)
		logs := f.logs.String()
		assert.Contains(t, logs, "the secure tool gave up")
		wireAssertNoSecrets(t, logs, "log")
	})
}

// ---------------------------------------------------------------------------
// Concurrency: registering while calls and listings are served.

func TestHandlerConcurrentRegisterCallList(t *testing.T) {
	t.Parallel()
	f := newWireFixture(t, wireOptions{})
	const (
		workers   = 8
		perWorker = 25
		newTools  = 24
	)
	initial := len(f.reg.Tools())

	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range newTools {
			err := otc.Register(f.reg, otc.Tool{
				ID: fmt.Sprintf("Gen.Tool%02d", i), Version: "1.0.0", Description: "A generated tool.",
			}, func(ctx context.Context, in testkit.AddInput) (float64, error) { return in.A * in.B, nil })
			assert.NoError(t, err)
		}
	}()
	client := f.srv.Client()
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lastSeen := 0
			for i := range perWorker {
				var req *http.Request
				if (w+i)%2 == 0 {
					req, _ = http.NewRequest(http.MethodPost, f.srv.URL+"/call", strings.NewReader(wireAddBody))
				} else {
					req, _ = http.NewRequest(http.MethodGet, f.srv.URL+"/tools", nil)
				}
				resp, err := client.Do(req)
				if !assert.NoError(t, err) {
					return
				}
				b, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				assert.NoError(t, err)
				if !assert.Equal(t, http.StatusOK, resp.StatusCode, "%s", b) {
					continue
				}
				var body struct {
					Tools  []otc.ToolDefinition `json:"tools"`
					Result *struct {
						Success bool            `json:"success"`
						Value   json.RawMessage `json:"value"`
					} `json:"result"`
				}
				if !assert.NoError(t, json.Unmarshal(b, &body), "%s", b) {
					continue
				}
				if req.Method == http.MethodPost {
					if assert.NotNil(t, body.Result) {
						assert.True(t, body.Result.Success)
						assert.JSONEq(t, `15`, string(body.Result.Value))
					}
					continue
				}
				n := len(body.Tools)
				assert.GreaterOrEqual(t, n, lastSeen, "a listing never loses tools")
				assert.LessOrEqual(t, n, initial+newTools)
				lastSeen = n
			}
		}()
	}
	// Calls to tools as they appear.
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range newTools {
			id := fmt.Sprintf("Gen.Tool%02d", i)
			for {
				req, _ := http.NewRequest(http.MethodPost, f.srv.URL+"/tools/call",
					strings.NewReader(`{"request":{"tool_id":"`+id+`","input":{"a":3,"b":4}}}`))
				resp, err := client.Do(req)
				if !assert.NoError(t, err) {
					return
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode == http.StatusBadRequest && bytes.Contains(b, []byte("was not found")) {
					runtime.Gosched()
					continue // not registered yet
				}
				assert.Equal(t, http.StatusOK, resp.StatusCode, "%s", b)
				assert.Contains(t, string(b), `"value":12`)
				break
			}
		}
	}()
	wg.Wait()

	r := f.do(t, http.MethodGet, "/tools", nil)
	var cat struct {
		Tools []otc.ToolDefinition `json:"tools"`
	}
	require.NoError(t, json.Unmarshal(r.body, &cat))
	assert.Len(t, cat.Tools, initial+newTools)
	ids := make([]string, len(cat.Tools))
	for i, d := range cat.Tools {
		ids[i] = d.ID
	}
	assert.True(t, slices.IsSortedFunc(cat.Tools, func(a, b otc.ToolDefinition) int {
		ka, _, _ := strings.Cut(a.ID, "@")
		kb, _, _ := strings.Cut(b.ID, "@")
		return strings.Compare(ka, kb)
	}), "catalog stays ordered: %v", ids)
}

// ---------------------------------------------------------------------------
// Duplicate JSON keys. encoding/json keeps the last value of a repeated
// key; the validator and the function's input both read it that way, so
// they agree on what was sent (an input the schema accepts is not refused
// because an overridden value had another type).

func TestHandlerDuplicateKeys(t *testing.T) {
	t.Parallel()
	f := newWireFixture(t, wireOptions{})

	// In the envelope a repeated field is a 400 naming it: which of the
	// values counts differs from parser to parser.
	for _, tt := range []struct{ name, body, field string }{
		{"repeated_request", `{"request":{"tool_id":"Calculator.Add","input":{"a":100,"b":1}},"request":{"input":{"a":1,"b":2}}}`, "request"},
		{"repeated_schema", `{"$schema":"otc://1.0","$schema":"urn:oxp:1.0","request":{"tool_id":"Calculator.Add","input":{"a":1,"b":2}}}`, "$schema"},
		{"repeated_tool_id", `{"request":{"tool_id":"Nope.Tool","tool_id":"Calculator.Add","input":{"a":1,"b":2}}}`, "request.tool_id"},
		{"repeated_input", `{"request":{"tool_id":"Calculator.Add","input":{"a":1,"b":2},"input":{"a":5,"b":5}}}`, "request.input"},
		{"repeated_user_id", `{"request":{"tool_id":"Meta.Inspect","context":{"user_id":"a","user_id":"b"}}}`, "request.context.user_id"},
		{"repeated_secret_value", `{"request":{"tool_id":"Meta.Inspect","context":{"secrets":[{"id":"K","value":"a","value":"b"}]}}}`, "request.context.secrets.0.value"},
		{"escaped_spelling", `{"request":{"tool_id":"Nope.Tool","tool_\u0069d":"Calculator.Add","input":{"a":1,"b":2}}}`, "request.tool_id"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := f.call(t, tt.body).errorBody(t, http.StatusBadRequest)
			assert.Equal(t, `Field "`+tt.field+`" is given more than once`, e.Message)
		})
	}
	t.Run("secret_listed_twice", func(t *testing.T) {
		t.Parallel()
		e := f.call(t, `{"request":{"tool_id":"Meta.Inspect","context":{"secrets":[{"id":"K","value":"a"},{"id":"K","value":"b"}]}}}`).errorBody(t, http.StatusBadRequest)
		assert.Equal(t, `request.context.secrets lists "K" more than once`, e.Message)
	})

	// In the input, a repeated parameter is a 422 under its own path,
	// whichever of its values would pass.
	for _, tt := range []struct{ name, body, key string }{
		{"last_value_valid", `{"request":{"tool_id":"Calculator.Add","input":{"a":"x","a":1,"b":2}}}`, "a"},
		{"last_value_invalid", `{"request":{"tool_id":"Calculator.Add","input":{"a":1,"a":"x","b":2}}}`, "a"},
		{"same_value", `{"request":{"tool_id":"Calculator.Add","input":{"a":1,"a":1,"b":2}}}`, "a"},
		{"repeated_nested_key", `{"request":{"tool_id":"Shapes.Order","input":{"customer":"Ada","address":{"zip":"12345","street":"x","zip":"12345"},"items":[1]}}}`, "address.zip"},
		{"repeated_in_free_form", `{"request":{"tool_id":"Shapes.Order","input":{"customer":"Ada","address":{"zip":"12345","street":"x"},"items":[1],"tags":{"t":1,"t":2}}}}`, "tags.t"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := f.call(t, tt.body).errorBody(t, http.StatusUnprocessableEntity)
			assert.Equal(t, map[string]string{tt.key: "Is given more than once"}, e.ParameterErrors)
		})
	}
}

// ---------------------------------------------------------------------------
// Errors returned by the handler are JSON even for methods without a
// body, and the handler never answers an HTML page.

func TestHandlerNeverHTML(t *testing.T) {
	t.Parallel()
	f := newWireFixture(t, wireOptions{})
	for _, tt := range []struct{ method, path, body string }{
		{http.MethodGet, "/", ""},
		{http.MethodPost, "/tools/call", "<html>"},
		{http.MethodPut, "/call", ""},
		{http.MethodGet, "/tools/call", ""},
	} {
		t.Run(tt.method+strings.ReplaceAll(tt.path, "/", "_"), func(t *testing.T) {
			t.Parallel()
			var body io.Reader
			if tt.body != "" {
				body = strings.NewReader(tt.body)
			}
			r := f.do(t, tt.method, tt.path, body)
			assert.GreaterOrEqual(t, r.status, 400)
			r.object(t)
			assert.NotContains(t, strings.ToLower(string(r.body)), "<html")
		})
	}
}
