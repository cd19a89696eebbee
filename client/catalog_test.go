package client_test

// Lenient catalog reading (SPEC §3), against small fake servers that answer
// with shapes other servers send: the OXP OpenAPI file's "items", a bare
// array, unknown fields, a bare input schema, and every spelling of "no
// output".

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/export"
)

// fake serves the same response to every request.
func fake(t testing.TB, status int, contentType, body string) string {
	t.Helper()
	return serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if contentType != "" {
			w.Header().Set("Content-Type", contentType)
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	})).URL
}

// The two tool definitions of seed 000, the protocol's own catalog example.
const (
	seedAdd = `{
		"id": "Calculator.Add@1.0.0",
		"name": "Calculator_Add",
		"description": "Adds two numbers together.",
		"version": "1.0.0",
		"input_schema": {"parameters": ` + seedAddParams + `},
		"output_schema": {"type": "number", "description": "The sum of the two numbers."}
	}`
	seedAddParams = `{
		"type": "object",
		"properties": {
			"a": {"type": "number", "description": "The first number to add."},
			"b": {"type": "number", "description": "The second number to add."}
		},
		"required": ["a", "b"]
	}`
	seedRing = `{
		"id": "Doorbell.Ring@0.1.0",
		"name": "Doorbell_Ring",
		"description": "Rings a doorbell given a doorbell ID.",
		"version": "0.1.0",
		"input_schema": {"parameters": ` + seedRingParams + `},
		"output_schema": null
	}`
	seedRingParams = `{
		"type": "object",
		"properties": {
			"doorbell_id": {"type": "string", "description": "The ID of the doorbell to ring."}
		},
		"required": ["doorbell_id"]
	}`
	emptyParams = `{"type":"object","properties":{}}`
)

// wantDef is what a test expects of one decoded definition.
type wantDef struct {
	id, name, version string
	params            string // JSON
	output            string // JSON; "" for nil
	requirements      *otc.Requirements
}

var seedWant = []wantDef{
	{id: "Calculator.Add@1.0.0", name: "Calculator_Add", version: "1.0.0", params: seedAddParams,
		output: `{"type": "number", "description": "The sum of the two numbers."}`},
	{id: "Doorbell.Ring@0.1.0", name: "Doorbell_Ring", version: "0.1.0", params: seedRingParams},
}

func checkDefs(t *testing.T, want []wantDef, got []otc.ToolDefinition) {
	t.Helper()
	require.Len(t, got, len(want))
	for i, w := range want {
		g := got[i]
		assert.Equal(t, w.id, g.ID)
		assert.Equal(t, w.name, g.Name, w.id)
		assert.Equal(t, w.version, g.Version, w.id)
		assert.JSONEq(t, w.params, string(g.InputSchema.Parameters), w.id)
		if w.output == "" {
			assert.Nil(t, g.OutputSchema, w.id)
		} else {
			assert.JSONEq(t, w.output, string(g.OutputSchema), w.id)
		}
		assert.Equal(t, w.requirements, g.Requirements, w.id)
	}
}

// oneDef builds a catalog of one definition with the given input and
// output schema members (raw JSON members, or "" to leave them out).
func oneDef(inputSchema, outputSchema string) string {
	var b strings.Builder
	b.WriteString(`{"tools":[{"id":"Clock.Now@1.0.0","name":"Clock_Now","description":"Tells the time.","version":"1.0.0"`)
	if inputSchema != "" {
		b.WriteString(`,"input_schema":` + inputSchema)
	}
	if outputSchema != "" {
		b.WriteString(`,"output_schema":` + outputSchema)
	}
	b.WriteString(`}]}`)
	return b.String()
}

func clockWant(params, output string) []wantDef {
	return []wantDef{{id: "Clock.Now@1.0.0", name: "Clock_Now", version: "1.0.0", params: params, output: output}}
}

func TestListTools_LenientShapes(t *testing.T) {
	t.Parallel()
	timeParams := `{"type":"object","properties":{"zone":{"type":"string","description":"An IANA zone."}}}`
	for _, tc := range []struct {
		name string
		body string
		want []wantDef
	}{
		{"seed_000_tools", `{"$schema": "otc://1.0", "tools": [` + seedAdd + `,` + seedRing + `]}`, seedWant},
		{"seed_003_oxp", `{"$schema": "urn:oxp:1.0", "tools": [` + seedAdd + `,` + seedRing + `]}`, seedWant},
		{"no_tools", `{"$schema": "otc://1.0", "tools": []}`, nil},
		{"items_only", `{"$schema": "urn:oxp:1.0", "items": [` + seedAdd + `,` + seedRing + `]}`, seedWant},
		{"bare_array", "\n [" + seedAdd + `,` + seedRing + "]\n", seedWant},
		{"empty_bare_array", `[]`, nil},
		{"tools_preferred_over_items", `{"tools": [` + seedAdd + `], "items": [` + seedRing + `]}`, seedWant[:1]},
		{"null_tools_falls_back_to_items", `{"tools": null, "items": [` + seedRing + `]}`, seedWant[1:]},
		{
			"unknown_fields_everywhere",
			`{"$schema": "otc://1.0", "next_cursor": "abc", "server": {"name": "x"}, "tools": [{
				"id": "Mail.Read@2.1.0", "name": "Mail_Read", "description": "Reads mail.", "version": "2.1.0",
				"protocols": ["mcp", "http"], "deprecated": false, "x-cost": 3,
				"input_schema": {"parameters": ` + timeParams + `, "x-extra": true},
				"output_schema": {},
				"requirements": {
					"authorization": [{"id": "google", "oauth2": {"scopes": ["gmail.readonly"], "pkce": true}, "x": 1}],
					"secrets": [{"id": "MAIL_KEY", "hint": "from the vault"}],
					"user_id": true,
					"quota": 10
				}
			}]}`,
			[]wantDef{{
				id: "Mail.Read@2.1.0", name: "Mail_Read", version: "2.1.0", params: timeParams, output: `{}`,
				requirements: &otc.Requirements{
					Authorization: []otc.AuthorizationRequirement{{ID: "google", OAuth2: &otc.OAuth2Requirement{Scopes: []string{"gmail.readonly"}}}},
					Secrets:       []otc.SecretRequirement{{ID: "MAIL_KEY"}},
					UserID:        true,
				},
			}},
		},
		// SPEC §3: input_schema with or without the parameters wrapper.
		{"input_schema_wrapped", oneDef(`{"parameters":`+timeParams+`}`, `null`), clockWant(timeParams, "")},
		{"input_schema_bare", oneDef(timeParams, `null`), clockWant(timeParams, "")},
		{
			"input_schema_bare_with_a_parameter_named_parameters",
			oneDef(`{"type":"object","properties":{"parameters":{"type":"string","description":"Flags."}}}`, `null`),
			clockWant(`{"type":"object","properties":{"parameters":{"type":"string","description":"Flags."}}}`, ""),
		},
		{"input_schema_missing", oneDef("", `null`), clockWant(emptyParams, "")},
		{"input_schema_null", oneDef(`null`, `null`), clockWant(emptyParams, "")},
		{"input_schema_parameters_null", oneDef(`{"parameters":null}`, `null`), clockWant(emptyParams, "")},
		// SPEC §3: output_schema is a schema, {} for any value, or null.
		{"output_schema_missing", oneDef(`{"parameters":`+emptyParams+`}`, ""), clockWant(emptyParams, "")},
		{"output_schema_null", oneDef(`{"parameters":`+emptyParams+`}`, `null`), clockWant(emptyParams, "")},
		{"output_schema_any", oneDef(`{"parameters":`+emptyParams+`}`, `{}`), clockWant(emptyParams, `{}`)},
		{"output_schema_string", oneDef(`{"parameters":`+emptyParams+`}`, `{"type":"string"}`), clockWant(emptyParams, `{"type":"string"}`)},
		{
			"name_missing_stays_empty",
			`[{"id": "Clock.Now@1.0.0", "description": "Tells the time.", "version": "1.0.0", "input_schema": {"parameters": ` + emptyParams + `}}]`,
			[]wantDef{{id: "Clock.Now@1.0.0", version: "1.0.0", params: emptyParams}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := newClient(t, fake(t, http.StatusOK, "application/json", tc.body), nil)
			defs, err := c.ListTools(t.Context())
			require.NoError(t, err)
			require.NotNil(t, defs, "an empty catalog is an empty slice, not nil")
			checkDefs(t, tc.want, defs)
		})
	}
}

func TestListTools_Broken(t *testing.T) {
	t.Parallel()
	const page = "<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center></body></html>"
	for _, tc := range []struct {
		name        string
		status      int
		contentType string
		body        string
		wantStatus  int      // of the *client.ResponseError
		wantInError []string // in err.Error()
	}{
		{"html_502", 502, "text/html", page, 502, []string{"502", "Bad Gateway", `<html><head><title>502`, "text/html", "/tools"}},
		{"html_200", 200, "text/html", page, 200, []string{"200", `<html>`}},
		{"truncated_json", 200, "application/json", `{"$schema":"otc://1.0","tools":[{"id":"Calculator.Add@1.0.0","na`, 200, []string{"not valid JSON"}},
		{"neither_tools_nor_items", 200, "application/json", `{"$schema":"otc://1.0","tool":[]}`, 200, []string{`"tools"`, `"items"`}},
		{"string", 200, "application/json", `"tools"`, 200, []string{"not a JSON object or array"}},
		{"empty_body", 200, "application/json", ``, 200, []string{"200"}},
		{"entry_without_id", 200, "application/json", `{"tools":[{"name":"X_Y","description":"d","version":"1.0.0"}]}`, 200, []string{"tool 0", `"id"`}},
		{"entry_not_object", 200, "application/json", `{"tools":[` + seedAdd + `, 42]}`, 200, []string{"tool 1"}},
		{"input_schema_string", 200, "application/json", oneDef(`"object"`, `null`), 200, []string{"Clock.Now@1.0.0", "input_schema"}},
		{"parameters_array", 200, "application/json", oneDef(`{"parameters":[1]}`, `null`), 200, []string{"Clock.Now@1.0.0", `"parameters"`}},
		{"html_400", 400, "text/html", "<html><body>Bad Request</body></html>", 400, []string{"400", `<html>`}},
		{"rfc8693_error_400", 400, "application/json", `{"error":"invalid_request"}`, 400, []string{"400", `"message"`, "invalid_request"}},
		{"json_404", 404, "application/json", `{"message":"No endpoint at '/tools'"}`, 404, []string{"404", "No endpoint"}},
		{"json_500", 500, "application/json", `{"message":"boom"}`, 500, []string{"500", "boom"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := newClient(t, fake(t, tc.status, tc.contentType, tc.body), nil)
			defs, err := c.ListTools(t.Context())
			require.Error(t, err)
			assert.Nil(t, defs)
			re, ok := errors.AsType[*client.ResponseError](err)
			require.True(t, ok, "want a *client.ResponseError, got %T: %v", err, err)
			assert.Equal(t, tc.wantStatus, re.StatusCode)
			assert.Equal(t, http.MethodGet, re.Method)
			assert.True(t, strings.HasSuffix(re.URL, "/tools"), re.URL)
			assert.Equal(t, tc.contentType, re.ContentType)
			assert.True(t, bytes.HasPrefix([]byte(tc.body), re.Body), "Body holds the first bytes of the body")
			for _, s := range tc.wantInError {
				assert.Contains(t, err.Error(), s)
			}
			_, isRefusal := errors.AsType[*otc.Error](err)
			assert.False(t, isRefusal)
		})
	}

	t.Run("json_401", func(t *testing.T) {
		t.Parallel()
		c := newClient(t, fake(t, 401, "application/json", `{"$schema":"urn:oxp:1.0","message":"Missing bearer token"}`), nil)
		_, err := c.ListTools(t.Context())
		e, ok := errors.AsType[*otc.Error](err)
		require.True(t, ok, "want a *otc.Error, got %T: %v", err, err)
		assert.Equal(t, otc.CodeUnauthenticated, e.Code)
		assert.Equal(t, "Missing bearer token", e.Message)
		assert.Contains(t, err.Error(), "401")
	})
}

// FuzzListTools feeds arbitrary catalogs to ListTools through an in-memory
// Doer (the decoder is what is under test, not the network). Whatever a
// server sends, ListTools must not panic, and a catalog it accepts must
// give declarations a model API can be sent: every definition has an id
// and an input schema that is a JSON object.
func FuzzListTools(f *testing.F) {
	for _, seed := range []string{
		`{"$schema": "otc://1.0", "tools": [` + seedAdd + `,` + seedRing + `]}`,
		`{"items": [` + seedRing + `]}`,
		`[` + seedAdd + `]`,
		oneDef(`{"type":"object","properties":{}}`, `{}`),
		oneDef(`{"parameters":null}`, ``),
		oneDef(`{"parameters":{"type":"object"},"type":"object"}`, `null`),
		`{"tools":null,"items":null}`,
		`[{"id":"A.B@1.0.0","input_schema":{"parameters":"x"}}]`,
		`{"tools":[{"id":""}]}`,
		`<html>`,
		``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		c, err := client.New("http://fuzz.invalid", &client.Options{HTTPClient: staticDoer{status: 200, body: body}})
		require.NoError(t, err)
		defs, err := c.ListTools(t.Context())
		if err != nil {
			_, ok := errors.AsType[*client.ResponseError](err)
			require.True(t, ok, "a bad catalog is a *client.ResponseError, got %T: %v", err, err)
			return
		}
		for _, d := range defs {
			require.NotEmpty(t, d.ID)
			var params map[string]json.RawMessage
			require.NoError(t, json.Unmarshal(d.InputSchema.Parameters, &params), "parameters of %s: %s", d.ID, d.InputSchema.Parameters)
		}
		ts, err := export.New(defs, nil)
		if err != nil {
			_, ok := errors.AsType[*export.CatalogError](err)
			require.True(t, ok, "a catalog a toolset refuses is a *export.CatalogError, got %T: %v", err, err)
			return
		}
		_, err = json.Marshal(ts.OpenAI())
		require.NoError(t, err)
		_, err = json.Marshal(ts.Anthropic())
		require.NoError(t, err)
	})
}

// staticDoer answers every request in memory with the same response.
type staticDoer struct {
	status int
	body   []byte
}

func (d staticDoer) Do(r *http.Request) (*http.Response, error) {
	return &http.Response{
		StatusCode: d.status,
		Header:     http.Header{"Content-Type": {"application/json"}},
		Body:       io.NopCloser(bytes.NewReader(d.body)),
		Request:    r,
	}, nil
}

// TestListTools_Shape: what a catalog says is the same in every format's
// definitions: an OTC entry without a version has its id's, and an MCP
// tool without an output schema answers content blocks (Content).
func TestListTools_Shape(t *testing.T) {
	url := fake(t, 200, "application/json", `{"tools":[{"id":"Clock.Now@2.1.0","name":"Clock_Now","description":"Tells the time.","input_schema":{"parameters":{"type":"object","properties":{}}}}]}`)
	defs, err := newClient(t, url, nil).ListTools(t.Context())
	require.NoError(t, err)
	require.Len(t, defs, 1)
	assert.Equal(t, "2.1.0", defs[0].Version, "the id's version")

	urls, _, _ := formatServer(t, nil)
	c, err := client.New(urls[client.FormatMCP], &client.Options{Format: client.FormatMCP})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	defs, err = c.ListTools(t.Context())
	require.NoError(t, err)
	for _, d := range defs {
		assert.Equal(t, len(d.OutputSchema) == 0, d.Content, "%s: content blocks exactly when there is no output schema", d.Name)
	}
}
