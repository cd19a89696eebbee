package mcp_test

// The Streamable HTTP transport around the methods: HTTP methods, media
// types, the body limit, malformed JSON-RPC, authentication, and the
// guards against DNS rebinding and cross-site calls.

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/auth"
	"github.com/otcgo/otc/mcp"
)

func TestHTTPMethods(t *testing.T) {
	t.Parallel()
	stateless := serve(t, newRegistry(t), &mcp.Options{Stateless: true})
	sessionful := serve(t, newRegistry(t), nil)
	for _, tc := range []struct {
		url     string
		methods []string
		allow   string
	}{
		{stateless, []string{http.MethodGet, http.MethodDelete, http.MethodPut, http.MethodPatch, http.MethodOptions}, "POST"},
		{sessionful, []string{http.MethodPut, http.MethodPatch, http.MethodOptions}, "GET, POST, DELETE"},
	} {
		for _, method := range tc.methods {
			t.Run(tc.allow+"/"+method, func(t *testing.T) {
				t.Parallel()
				req, err := http.NewRequest(method, tc.url, nil)
				require.NoError(t, err)
				req.Header.Set("Accept", "text/event-stream")
				a := do(t, req)
				e, id := a.rpcErr(t, http.StatusMethodNotAllowed, -32600)
				assert.Equal(t, tc.allow, a.header.Get("Allow"))
				assert.Contains(t, e.Message, "POST")
				assert.Equal(t, "null", id)
			})
		}
	}
	// A server with sessions: GET and DELETE name one, and 2026-07-28,
	// which has none, is told so.
	for _, method := range []string{http.MethodGet, http.MethodDelete} {
		t.Run("no_session/"+method, func(t *testing.T) {
			t.Parallel()
			req, err := http.NewRequest(method, sessionful, nil)
			require.NoError(t, err)
			req.Header.Set("Accept", "text/event-stream")
			e, _ := do(t, req).rpcErr(t, http.StatusBadRequest, -32600)
			assert.Contains(t, e.Message, "Mcp-Session-Id")
		})
		t.Run("2026-07-28/"+method, func(t *testing.T) {
			t.Parallel()
			req, err := http.NewRequest(method, sessionful, nil)
			require.NoError(t, err)
			req.Header.Set("Mcp-Protocol-Version", mcp.Version20260728)
			e, _ := do(t, req).rpcErr(t, http.StatusMethodNotAllowed, -32600)
			assert.Contains(t, e.Message, "subscriptions/listen")
		})
	}
}

func TestHTTPMediaTypes(t *testing.T) {
	t.Parallel()
	u := serve(t, newRegistry(t), nil)
	ping := request(1, "ping", nil)
	for _, tc := range []struct {
		name        string
		contentType string // "" sends none
		accept      string // "" sends none
		status      int
	}{
		{"json", "application/json", "application/json", http.StatusOK},
		{"json_charset", "application/json; charset=utf-8", "application/json, text/event-stream", http.StatusOK},
		{"json_upper_case", "Application/JSON", "application/json", http.StatusOK},
		{"json_other_parameter", "application/json; foo=bar", "application/json", http.StatusOK},
		{"content_type_text", "text/plain", "application/json", http.StatusUnsupportedMediaType},
		{"content_type_form", "application/x-www-form-urlencoded", "application/json", http.StatusUnsupportedMediaType},
		{"content_type_json_suffix", "application/vnd.api+json", "application/json", http.StatusUnsupportedMediaType},
		{"content_type_missing", "", "application/json", http.StatusUnsupportedMediaType},
		{"content_type_malformed", "application/json; ;", "application/json", http.StatusUnsupportedMediaType},
		{"accept_missing", "application/json", "", http.StatusOK},
		{"accept_any", "application/json", "*/*", http.StatusOK},
		{"accept_application_any", "application/json", "application/*", http.StatusOK},
		{"accept_sse_only", "application/json", "text/event-stream", http.StatusOK},
		{"accept_reversed", "application/json", "text/event-stream, application/json", http.StatusOK},
		{"accept_with_quality", "application/json", "text/html;q=0.9, application/json;q=0.5", http.StatusOK},
		{"accept_html", "application/json", "text/html", http.StatusNotAcceptable},
		{"accept_json_refused", "application/json", "application/json;q=0", http.StatusNotAcceptable},
		{"accept_json_refused_decimal", "application/json", "text/html, application/json;q=0.000", http.StatusNotAcceptable},
		{"accept_json_low_quality", "application/json", "application/json;q=0.001", http.StatusOK},
		{"accept_xml", "application/json", "application/xml, text/plain", http.StatusNotAcceptable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a := post(t, u, ping, map[string]string{"Content-Type": tc.contentType, "Accept": tc.accept})
			if tc.status == http.StatusOK {
				assert.Equal(t, `{}`, string(a.result(t)))
				return
			}
			e, id := a.rpcErr(t, tc.status, -32600)
			assert.Equal(t, "null", id, "the body was not read")
			switch tc.status {
			case http.StatusUnsupportedMediaType:
				assert.Contains(t, e.Message, "application/json")
			case http.StatusNotAcceptable:
				assert.Contains(t, e.Message, "Accept")
			}
		})
	}
}

func TestHTTPBodyLimit(t *testing.T) {
	t.Parallel()
	const limit = 256
	u := serve(t, newRegistry(t), &mcp.Options{MaxBodyBytes: limit})
	fits := request(1, "ping", obj{"pad": strings.Repeat("x", limit-60)})
	require.LessOrEqual(t, len(fits), limit)
	over := request(1, "ping", obj{"pad": strings.Repeat("x", limit)})
	for _, tc := range []struct {
		name    string
		body    string
		chunked bool
		status  int
	}{
		{"within", fits, false, http.StatusOK},
		{"within_chunked", fits, true, http.StatusOK},
		{"over", over, false, http.StatusRequestEntityTooLarge},
		{"over_chunked", over, true, http.StatusRequestEntityTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req := newPost(t, u, tc.body)
			if tc.chunked {
				req.ContentLength = -1
				req.Body = io.NopCloser(struct{ io.Reader }{strings.NewReader(tc.body)})
				req.GetBody = nil
			}
			a := do(t, req)
			if tc.status == http.StatusOK {
				assert.Equal(t, `{}`, string(a.result(t)))
				return
			}
			e, id := a.rpcErr(t, tc.status, -32600)
			assert.Contains(t, e.Message, "256 bytes")
			assert.Equal(t, "null", id)
		})
	}
}

func TestHTTPBodyReadTimeout(t *testing.T) {
	t.Parallel()
	u := serve(t, newRegistry(t), &mcp.Options{BodyReadTimeout: 100 * time.Millisecond})
	pu, err := url.Parse(u)
	require.NoError(t, err)
	conn, err := net.Dial("tcp", pu.Host)
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.SetDeadline(time.Now().Add(waitTimeout)))
	// Half a body, then nothing: the server gives up on it.
	_, err = io.WriteString(conn, "POST / HTTP/1.1\r\nHost: "+pu.Host+"\r\nContent-Type: application/json\r\n"+
		"Content-Length: 100\r\n\r\n{\"jsonrpc\":\"2.0\",")
	require.NoError(t, err)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	a := answer{status: resp.StatusCode, header: resp.Header, body: readAll(t, resp)}
	e, id := a.rpcErr(t, http.StatusRequestTimeout, -32600)
	assert.Contains(t, e.Message, "100ms")
	assert.Equal(t, "null", id)
}

func TestHTTPMalformed(t *testing.T) {
	t.Parallel()
	u := serve(t, newRegistry(t), nil)
	for _, tc := range []struct {
		name string
		body string
		code int
		id   string
		msg  string
	}{
		{"invalid_json", `{"jsonrpc":"2.0","id":1,"method":"ping"`, -32700, "null", "Parse error"},
		{"empty_body", ``, -32700, "null", "Parse error"},
		{"trailing_data", `{"jsonrpc":"2.0","id":1,"method":"ping"} {}`, -32700, "null", "Parse error"},
		{"invalid_utf8", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}", -32700, "null", "not valid UTF-8"},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, -32600, "null", "Batch"},
		{"empty_batch", `[]`, -32600, "null", "Batch"},
		{"string", `"ping"`, -32600, "null", "JSON object"},
		{"null", `null`, -32600, "null", "JSON object"},
		{"no_jsonrpc", `{"id":1,"method":"ping"}`, -32600, "1", `"jsonrpc": "2.0"`},
		{"jsonrpc_1", `{"jsonrpc":"1.0","id":1,"method":"ping"}`, -32600, "null", `"jsonrpc" must be "2.0"`},
		{"jsonrpc_number", `{"jsonrpc":2.0,"id":1,"method":"ping"}`, -32600, "null", `"jsonrpc" must be "2.0"`},
		{"id_null", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, -32600, "null", `"id"`},
		{"id_float", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, -32600, "null", `"id"`},
		{"id_exponent", `{"jsonrpc":"2.0","id":1e3,"method":"ping"}`, -32600, "null", `"id"`},
		{"id_object", `{"jsonrpc":"2.0","id":{"n":1},"method":"ping"}`, -32600, "null", `"id"`},
		{"id_array", `{"jsonrpc":"2.0","id":[1],"method":"ping"}`, -32600, "null", `"id"`},
		{"id_bool", `{"jsonrpc":"2.0","id":true,"method":"ping"}`, -32600, "null", `"id"`},
		{"no_method", `{"jsonrpc":"2.0","id":7}`, -32600, "7", `"method"`},
		{"method_not_a_string", `{"jsonrpc":"2.0","id":7,"method":5}`, -32600, "7", `"method" must be a string`},
		{"params_array", `{"jsonrpc":"2.0","id":7,"method":"ping","params":[]}`, -32602, "7", `"params" must be a JSON object`},
		{"repeated_id", `{"jsonrpc":"2.0","id":7,"id":8,"method":"ping"}`, -32600, "8", "more than once"},
		{"repeated_method", `{"jsonrpc":"2.0","id":7,"method":"ping","method":"tools/list"}`, -32600, "7", "more than once"},
		{"repeated_jsonrpc", `{"jsonrpc":"2.0","jsonrpc":"2.0","id":7,"method":"ping"}`, -32600, "null", "more than once"},
		{"repeated_params", `{"jsonrpc":"2.0","id":7,"method":"ping","params":{},"params":{}}`, -32600, "7", "more than once"},
		{"repeated_escaped_key", `{"jsonrpc":"2.0","id":7,"method":"ping","\u006dethod":"ping"}`, -32600, "7", "more than once"},
		{"repeated_param", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"Util_Noop","name":"Util_Fail"}}`, -32602, "7", "more than once"},
		{"repeated_meta_member", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"Util_Noop","_meta":{"progressToken":1,"progressToken":2}}}`, -32602, "7", "more than once"},
		{"progress_token_float", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"Util_Noop","_meta":{"progressToken":1.5}}}`, -32602, "7", "progressToken"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a := post(t, u, tc.body, nil)
			status := http.StatusBadRequest
			if tc.code == -32601 {
				status = http.StatusOK // a well-formed legacy request
			}
			e, id := a.rpcErr(t, status, tc.code)
			assert.Contains(t, e.Message, tc.msg)
			assert.Equal(t, tc.id, id, "the error names the request when its id could be read")
		})
	}
}

func TestHTTPAuthentication(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t)
	keys, err := auth.NewAPIKeyAuth(map[string]string{"ci": "key-1"})
	require.NoError(t, err)
	secret := []byte("0123456789abcdef0123456789abcdef")
	jwtAuth, err := auth.NewJWTAuth(&auth.JWTOptions{Secret: secret})
	require.NoError(t, err)
	token, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{
		"sub": "alice", "iat": time.Now().Unix(), "exp": time.Now().Add(5 * time.Minute).Unix(),
	}).SignedString(secret)
	require.NoError(t, err)
	keyURL := serve(t, reg, &mcp.Options{Authenticator: keys})
	jwtURL := serve(t, reg, &mcp.Options{Authenticator: jwtAuth})

	call := request(1, "tools/call", callParams("Meta_Inspect", nil, nil))
	for _, tc := range []struct {
		name      string
		url       string
		hdr       map[string]string
		caller    string // "" means refused
		challenge string
	}{
		{"api_key_missing", keyURL, nil, "", ""},
		{"api_key_wrong", keyURL, map[string]string{otc.HeaderAPIKey: "key-2"}, "", ""},
		{"api_key_right", keyURL, map[string]string{otc.HeaderAPIKey: "key-1"}, "api_key:ci", ""},
		{"api_key_legacy_header", keyURL, map[string]string{otc.HeaderLegacyAPIKey: "key-1"}, "api_key:ci", ""},
		{"jwt_missing", jwtURL, nil, "", "Bearer"},
		{"jwt_garbage", jwtURL, map[string]string{"Authorization": "Bearer not.a.token"}, "", "Bearer"},
		{"jwt_valid", jwtURL, map[string]string{"Authorization": "Bearer " + token}, "jwt:alice", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a := post(t, tc.url, call, tc.hdr)
			if tc.caller != "" {
				var out inspectOutput
				require.NoError(t, json.Unmarshal(decodeCall(t, a.result(t)).StructuredContent, &out))
				assert.Equal(t, tc.caller, out.Caller)
				return
			}
			e, id := a.rpcErr(t, http.StatusUnauthorized, -32001)
			assert.NotContains(t, e.Message, "key-2")
			assert.Equal(t, "null", id)
			assert.Equal(t, tc.challenge, a.header.Get("WWW-Authenticate"))
		})
	}
	t.Run("method_checked_first", func(t *testing.T) {
		t.Parallel()
		req, err := http.NewRequest(http.MethodPut, keyURL, nil)
		require.NoError(t, err)
		do(t, req).rpcErr(t, http.StatusMethodNotAllowed, -32600)
	})
	t.Run("a_session_stream_needs_credentials", func(t *testing.T) {
		t.Parallel()
		req, err := http.NewRequest(http.MethodGet, keyURL, nil)
		require.NoError(t, err)
		req.Header.Set("Mcp-Session-Id", "anything")
		do(t, req).rpcErr(t, http.StatusUnauthorized, -32001)
	})
}

func TestHTTPHostCheck(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t)
	plain := serve(t, reg, nil)
	allowed := serve(t, reg, &mcp.Options{AllowedHosts: []string{"mcp.example.com", "Proxy.Example.com:8443"}})
	disabled := serve(t, reg, &mcp.Options{DisableHostCheck: true})
	port := func(u string) string {
		pu, err := url.Parse(u)
		require.NoError(t, err)
		return pu.Port()
	}
	for _, tc := range []struct {
		name string
		url  string
		host string // with PORT replaced by the server's port
		ok   bool
	}{
		{"evil_host", plain, "evil.example.com", false},
		{"evil_host_with_port", plain, "evil.example.com:PORT", false},
		{"localhost_in_name", plain, "localhost.evil.example.com:PORT", false},
		{"localhost", plain, "localhost:PORT", true},
		{"localhost_upper_case", plain, "LOCALHOST:PORT", true},
		{"localhost_no_port", plain, "localhost", true},
		{"sub_localhost", plain, "app.localhost:PORT", true},
		{"ipv4_loopback", plain, "127.0.0.1:PORT", true},
		{"ipv4_loopback_other", plain, "127.0.0.2:PORT", true},
		{"ipv6_loopback", plain, "[::1]:PORT", true},
		{"ipv4_mapped_loopback", plain, "[::ffff:127.0.0.1]:PORT", true},
		{"sub_localhost_upper_case", plain, "App.LocalHost:PORT", true},
		{"bare_dot_localhost", plain, ".localhost:PORT", false},
		{"localhost_look_alike", plain, "evillocalhost:PORT", false},
		{"ipv4_not_loopback", plain, "10.0.0.1:PORT", false},
		{"ipv4_leading_zeros", plain, "127.000.000.001:PORT", false},
		{"allowed_host", allowed, "mcp.example.com", true},
		{"allowed_host_with_port", allowed, "mcp.example.com:PORT", true},
		{"allowed_host_case", allowed, "MCP.Example.COM:PORT", true},
		{"allowed_host_and_port", allowed, "proxy.example.com:8443", true},
		{"allowed_still_refuses_others", allowed, "evil.example.com", false},
		{"check_disabled", disabled, "evil.example.com", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req := newPost(t, tc.url, request(1, "ping", nil))
			req.Host = strings.ReplaceAll(tc.host, "PORT", port(tc.url))
			a := do(t, req)
			if tc.ok {
				assert.Equal(t, `{}`, string(a.result(t)))
				return
			}
			e, id := a.rpcErr(t, http.StatusForbidden, -32600)
			assert.Contains(t, e.Message, "AllowedHosts")
			assert.Equal(t, "null", id)
		})
	}
}

func TestHTTPOriginCheck(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t)
	plain := serve(t, reg, nil)
	allowed := serve(t, reg, &mcp.Options{AllowedOrigins: []string{"https://App.Example.com/"}})
	for _, tc := range []struct {
		name   string
		url    string
		origin string // SELF is the server's own origin
		method string
		ok     bool
	}{
		{"no_origin", plain, "", http.MethodPost, true},
		{"same_origin", plain, "SELF", http.MethodPost, true},
		{"evil", plain, "http://evil.example.com", http.MethodPost, false},
		{"evil_with_get", plain, "http://evil.example.com", http.MethodGet, false},
		{"null_origin", plain, "null", http.MethodPost, false},
		{"same_host_other_scheme", plain, "ftp://SELFHOST", http.MethodPost, false},
		{"allowed", allowed, "https://app.example.com", http.MethodPost, true},
		{"allowed_case", allowed, "HTTPS://APP.EXAMPLE.COM", http.MethodPost, true},
		{"allowed_prefix_only", allowed, "https://app.example.com.evil.example", http.MethodPost, false},
		{"allowed_other_scheme", allowed, "http://app.example.com", http.MethodPost, false},
		{"allowed_still_same_origin", allowed, "SELF", http.MethodPost, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			self := strings.TrimPrefix(tc.url, "http://")
			origin := strings.ReplaceAll(strings.ReplaceAll(tc.origin, "SELFHOST", self), "SELF", tc.url)
			req := newPost(t, tc.url, request(1, "ping", nil))
			req.Method = tc.method
			if origin != "" {
				req.Header.Set("Origin", origin)
			}
			a := do(t, req)
			if tc.ok {
				assert.Equal(t, `{}`, string(a.result(t)))
				return
			}
			e, _ := a.rpcErr(t, http.StatusForbidden, -32600)
			assert.Contains(t, e.Message, "AllowedOrigins")
		})
	}
}

func TestNilRegistry(t *testing.T) {
	t.Parallel()
	assert.PanicsWithValue(t, "mcp: NewHandler called with a nil *otc.Registry", func() { mcp.NewHandler(nil, nil) })
	err := mcp.Serve(t.Context(), nil, strings.NewReader(""), io.Discard, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "nil *otc.Registry")
}
