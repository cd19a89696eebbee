package a2a_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/a2a"
	"github.com/otcgo/otc/auth"
	"github.com/otcgo/otc/idempotency"
)

// server serves a registry over A2A at /a2a/, as a server mounts it.
type server struct {
	url  string // the A2A endpoint: http://host/a2a
	runs *atomic.Int64
}

func newServer(t *testing.T, opts *a2a.Options) *server {
	t.Helper()
	runs := &atomic.Int64{}
	reg := otc.NewRegistry(&otc.RegistryOptions{Idempotency: idempotency.NewMemoryStore(nil)})
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Calculator.Add", Version: "1.0.0", Description: "Adds two numbers."},
		func(_ context.Context, in struct {
			A float64 `json:"a" jsonschema:"description=The first number."`
			B float64 `json:"b" jsonschema:"description=The second number."`
		}) (float64, error) {
			runs.Add(1)
			return in.A + in.B, nil
		}))
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Greeter.Hello", Version: "1.0.0", Description: "Says hello."},
		func(_ context.Context, in struct {
			Name string `json:"name" jsonschema:"description=Who to greet."`
		}) (string, error) {
			return "hello " + in.Name, nil
		}))
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Doorbell.Ring", Version: "1.0.0", Description: "Rings a doorbell."},
		func(_ context.Context, _ struct{}) (otc.NoOutput, error) {
			return otc.NoOutput{}, &otc.ToolError{Message: "Doorbell not found", AdditionalPromptContent: "ids: d1, d2", CanRetry: true, RetryAfter: 500 * time.Millisecond}
		}))
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Job.Steps", Version: "1.0.0", Description: "Reports two steps, then ends.", Tasks: otc.TasksOptional},
		func(ctx context.Context, _ struct{}) (string, error) {
			otc.ReportProgress(ctx, 1, 2, "first step")
			otc.ReportProgress(ctx, 2, 2, "")
			return "done", nil
		}))
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Mcp.Only", Version: "1.0.0", Description: "Only over MCP.",
		Policy: &otc.Policy{Protocols: []string{otc.ProtocolMCP}}},
		func(context.Context, struct{}) (int, error) { return 1, nil }))
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Draft.Listed", Version: "1.0.0", Description: "Lists the registry's A2A draft name.",
		Policy: &otc.Policy{Protocols: []string{"a2a/2025-draft-01"}}},
		func(context.Context, struct{}) (int, error) { return 2, nil }))
	mux := http.NewServeMux()
	mux.Handle("/a2a/", http.StripPrefix("/a2a", a2a.NewHandler(reg, opts)))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return &server{url: srv.URL + "/a2a", runs: runs}
}

// answer is an HTTP answer, read whole.
type answer struct {
	status int
	header http.Header
	body   []byte
}

func (s *server) post(t *testing.T, path, version, body string, header ...string) answer {
	t.Helper()
	return s.do(t, http.MethodPost, path, version, body, header...)
}

// postStream posts body at version 1.0 and reads the event stream of
// the answer, calling first once its first event has been read.
func (s *server) postStream(t *testing.T, path, body string, first func(), header ...string) answer {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, s.url+path, strings.NewReader(body))
	require.NoError(t, err)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("A2A-Version", a2a.Version10)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var b bytes.Buffer
	r := bufio.NewReader(resp.Body)
	called := false
	for {
		line, err := r.ReadString('\n')
		b.WriteString(line)
		if !called && line == "\n" && strings.Contains(b.String(), "data:") {
			called = true
			first()
		}
		if err != nil {
			break
		}
	}
	return answer{resp.StatusCode, resp.Header, b.Bytes()}
}

// do sends a request with A2A-Version version (none when empty), a JSON
// body when not empty, and the header pairs, and reads the answer.
func (s *server) do(t *testing.T, method, path, version, body string, header ...string) answer {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, s.url+path, strings.NewReader(body))
	require.NoError(t, err)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if version != "" {
		req.Header.Set("A2A-Version", version)
	}
	for i := 0; i+1 < len(header); i += 2 {
		if header[i] == "Host" {
			req.Host = header[i+1]
			continue
		}
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return answer{resp.StatusCode, resp.Header, b}
}

// get sends a GET of path with A2A-Version 1.0 and the header pairs.
func (s *server) get(t *testing.T, path string, header ...string) answer {
	t.Helper()
	return s.do(t, http.MethodGet, path, a2a.Version10, "", header...)
}

// send is a JSON-RPC SendMessage (1.0) of one message with parts.
func (s *server) send(t *testing.T, messageID, parts string, header ...string) answer {
	t.Helper()
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":%q,"role":"ROLE_USER","parts":%s}}}`, messageID, parts)
	return s.post(t, "/", a2a.Version10, body, header...)
}

// rpc decodes a JSON-RPC answer.
type rpc struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int              `json:"code"`
		Message string           `json:"message"`
		Data    []map[string]any `json:"data"`
	} `json:"error"`
}

func decodeRPC(t *testing.T, a answer) rpc {
	t.Helper()
	var r rpc
	require.NoError(t, json.Unmarshal(a.body, &r), "%s", a.body)
	return r
}

// reply is a message answering a call, as the tests read it.
type reply struct {
	MessageID string          `json:"messageId"`
	ContextID string          `json:"contextId"`
	TaskID    string          `json:"taskId"`
	Role      string          `json:"role"`
	Metadata  json.RawMessage `json:"metadata"`
	Parts     []struct {
		Text *string         `json:"text"`
		Data json.RawMessage `json:"data"`
	} `json:"parts"`
}

// replyOf is the message of a 1.0 SendMessageResponse.
func replyOf(t *testing.T, raw json.RawMessage) reply {
	t.Helper()
	var out struct {
		Message *reply `json:"message"`
	}
	require.NoError(t, json.Unmarshal(raw, &out), "%s", raw)
	require.NotNil(t, out.Message, "a message: %s", raw)
	return *out.Message
}

// taskOf is the task of a 1.0 SendMessageResponse.
type taskOf struct {
	Task struct {
		ID        string `json:"id"`
		ContextID string `json:"contextId"`
		Status    struct {
			State   string `json:"state"`
			Message *struct {
				Role  string            `json:"role"`
				Parts []json.RawMessage `json:"parts"`
			} `json:"message"`
			Timestamp string `json:"timestamp"`
		} `json:"status"`
		Artifacts []struct {
			ArtifactID string `json:"artifactId"`
			Parts      []struct {
				Text *string         `json:"text"`
				Data json.RawMessage `json:"data"`
			} `json:"parts"`
		} `json:"artifacts"`
	} `json:"task"`
}

func TestCard(t *testing.T) {
	s := newServer(t, nil)
	resp, err := http.Get(s.url + "/.well-known/agent-card.json")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	var card struct {
		Name                string `json:"name"`
		Description         string `json:"description"`
		Version             string `json:"version"`
		SupportedInterfaces []struct {
			URL             string `json:"url"`
			ProtocolBinding string `json:"protocolBinding"`
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"supportedInterfaces"`
		Capabilities       capabilities `json:"capabilities"`
		DefaultInputModes  []string     `json:"defaultInputModes"`
		DefaultOutputModes []string     `json:"defaultOutputModes"`
		Skills             []struct {
			ID       string   `json:"id"`
			Name     string   `json:"name"`
			Tags     []string `json:"tags"`
			Examples []string `json:"examples"`
		} `json:"skills"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&card))
	assert.NotEmpty(t, card.Name)
	assert.NotEmpty(t, card.Description)
	assert.NotEmpty(t, card.Version)
	require.Len(t, card.SupportedInterfaces, 2)
	for _, i := range card.SupportedInterfaces {
		assert.Equal(t, s.url, i.URL, "the endpoint where the handler is mounted")
		assert.Equal(t, "1.0", i.ProtocolVersion)
	}
	assert.Equal(t, []string{"JSONRPC", "HTTP+JSON"}, []string{card.SupportedInterfaces[0].ProtocolBinding, card.SupportedInterfaces[1].ProtocolBinding})
	assert.Equal(t, map[string]bool{"streaming": true, "pushNotifications": false, "extendedAgentCard": false}, card.Capabilities.flags)
	assert.NotEmpty(t, card.DefaultInputModes)
	assert.NotEmpty(t, card.DefaultOutputModes)
	var ids []string
	for _, sk := range card.Skills {
		ids = append(ids, sk.ID)
		require.Len(t, sk.Examples, 1)
		var ex struct {
			Tool  string         `json:"tool"`
			Input map[string]any `json:"input"`
		}
		require.NoError(t, json.Unmarshal([]byte(sk.Examples[0]), &ex), sk.Examples[0])
		assert.Equal(t, sk.Name, ex.Tool)
	}
	assert.ElementsMatch(t, []string{"Calculator.Add@1.0.0", "Greeter.Hello@1.0.0", "Doorbell.Ring@1.0.0", "Job.Steps@1.0.0", "Draft.Listed@1.0.0"}, ids,
		"a tool whose policy keeps it off A2A is not a skill; the registry's draft name counts as A2A")
}

func TestSendMessage(t *testing.T) {
	s := newServer(t, nil)

	t.Run("value", func(t *testing.T) {
		a := s.send(t, "m-value", `[{"data":{"tool":"Calculator_Add","input":{"a":1,"b":2}}}]`)
		require.Equal(t, http.StatusOK, a.status, "%s", a.body)
		r := decodeRPC(t, a)
		require.Nil(t, r.Error, "%s", a.body)
		out := replyOf(t, r.Result)
		assert.Equal(t, "ROLE_AGENT", out.Role)
		assert.NotEmpty(t, out.MessageID)
		assert.NotEmpty(t, out.ContextID)
		assert.Empty(t, out.TaskID, "a call answered within its message hands out no task")
		assert.JSONEq(t, `{"io.github.otcgo/outcome":"succeeded"}`, string(out.Metadata))
		require.Len(t, out.Parts, 2)
		assert.JSONEq(t, `3`, string(out.Parts[0].Data))
		require.NotNil(t, out.Parts[1].Text)
		assert.Equal(t, "3", *out.Parts[1].Text)

		again := replyOf(t, decodeRPC(t, s.send(t, "m-value", `[{"data":{"tool":"Calculator_Add","input":{"a":1,"b":2}}}]`)).Result)
		assert.Equal(t, out, again, "the message sent again gets the same answer")
	})
	t.Run("string_is_plain_text", func(t *testing.T) {
		r := decodeRPC(t, s.send(t, "m-hello", `[{"text":"say hello"},{"data":{"tool":"Greeter.Hello@1.0.0","input":{"name":"Ada"}}}]`))
		require.Nil(t, r.Error)
		parts := replyOf(t, r.Result).Parts
		assert.JSONEq(t, `"hello Ada"`, string(parts[0].Data))
		assert.Equal(t, "hello Ada", *parts[1].Text)
	})
	t.Run("tool_error", func(t *testing.T) {
		r := decodeRPC(t, s.send(t, "m-ring", `[{"data":{"tool":"Doorbell_Ring","input":{}}}]`))
		require.Nil(t, r.Error)
		out := replyOf(t, r.Result)
		assert.Equal(t, "ROLE_AGENT", out.Role)
		assert.JSONEq(t, `{"io.github.otcgo/outcome":"failed"}`, string(out.Metadata))
		require.Len(t, out.Parts, 2)
		assert.Equal(t, "Doorbell not found\n\nids: d1, d2\n\nThis may succeed if tried again after 500ms.", *out.Parts[0].Text)
		assert.JSONEq(t, `{"code":"tool_error","can_retry":true,"retry_after_ms":500,"additional_prompt_content":"ids: d1, d2"}`, string(out.Parts[1].Data))
	})
	t.Run("invalid_input", func(t *testing.T) {
		r := decodeRPC(t, s.send(t, "m-bad", `[{"data":{"tool":"Calculator_Add","input":{"a":"x"}}}]`))
		require.NotNil(t, r.Error)
		assert.Equal(t, -32602, r.Error.Code)
		assert.Contains(t, r.Error.Message, "- a: Must be a number")
		require.Len(t, r.Error.Data, 2)
		assert.Equal(t, "INVALID_PARAMS", r.Error.Data[0]["reason"])
		assert.Equal(t, "type.googleapis.com/google.rpc.BadRequest", r.Error.Data[1]["@type"])
		assert.Equal(t, []any{
			map[string]any{"field": "a", "description": "Must be a number"},
			map[string]any{"field": "b", "description": "Is required"},
		}, r.Error.Data[1]["fieldViolations"])
	})
	t.Run("unknown_tool", func(t *testing.T) {
		r := decodeRPC(t, s.send(t, "m-none", `[{"data":{"tool":"No_Such","input":{}}}]`))
		require.NotNil(t, r.Error)
		assert.Equal(t, -32602, r.Error.Code)
		assert.Contains(t, r.Error.Message, "No_Such")
	})
	t.Run("no_call_gets_a_guide", func(t *testing.T) {
		r := decodeRPC(t, s.send(t, "m-text", `[{"text":"add one and two"}]`))
		require.Nil(t, r.Error)
		var out struct {
			Message struct {
				Role  string `json:"role"`
				Parts []struct {
					Text string `json:"text"`
				} `json:"parts"`
			} `json:"message"`
		}
		require.NoError(t, json.Unmarshal(r.Result, &out))
		assert.Equal(t, "ROLE_AGENT", out.Message.Role)
		require.Len(t, out.Message.Parts, 1)
		for _, want := range []string{`{"tool": NAME, "input": {...}}`, "Calculator_Add", "Greeter_Hello", `{"input":{"a":0,"b":0},"tool":"Calculator_Add"}`} {
			assert.Contains(t, out.Message.Parts[0].Text, want)
		}
		assert.NotContains(t, out.Message.Parts[0].Text, "Mcp_Only")
	})
	t.Run("not_allowed_over_a2a", func(t *testing.T) {
		a := s.send(t, "m-mcp", `[{"data":{"tool":"Mcp_Only","input":{}}}]`)
		r := decodeRPC(t, a)
		require.NotNil(t, r.Error, "%s", a.body)
		assert.Equal(t, http.StatusOK, a.status, "a JSON-RPC error, as the binding's clients read it")
		assert.Equal(t, -31403, r.Error.Code)
		assert.Equal(t, "UNAUTHORIZED", r.Error.Data[0]["reason"])
		assert.Contains(t, strings.ToLower(r.Error.Message), "mcp_only")

		a = s.post(t, "/message:send", a2a.Version10, `{"message":{"messageId":"r-mcp","role":"ROLE_USER","parts":[{"data":{"tool":"Mcp_Only","input":{}}}]}}`)
		assert.Equal(t, http.StatusForbidden, a.status, "%s", a.body)
		assert.Contains(t, string(a.body), `"status":"PERMISSION_DENIED"`)
	})
	t.Run("draft_protocol_name", func(t *testing.T) {
		r := decodeRPC(t, s.send(t, "m-draft", `[{"data":{"tool":"Draft_Listed"}}]`))
		require.Nil(t, r.Error)
		assert.JSONEq(t, `2`, string(replyOf(t, r.Result).Parts[0].Data))
	})
	t.Run("message_id_is_the_call_id", func(t *testing.T) {
		before := s.runs.Load()
		for range 3 {
			r := decodeRPC(t, s.send(t, "m-once", `[{"data":{"tool":"Calculator_Add","input":{"a":5,"b":5}}}]`))
			require.Nil(t, r.Error)
		}
		assert.Equal(t, before+1, s.runs.Load(), "a message sent again is not run again")
	})
	t.Run("malformed", func(t *testing.T) {
		for _, tc := range []struct {
			parts, want string
		}{
			{`[]`, "message.parts"},
			{`[{"data":{"tool":"Calculator_Add","input":[1]}}]`, "must be a JSON object"},
			{`[{"data":{"tool":"Calculator_Add","input":{}}},{"data":{"tool":"Greeter_Hello","input":{}}}]`, "one message calls one tool"},
		} {
			r := decodeRPC(t, s.send(t, "m-malformed", tc.parts))
			require.NotNil(t, r.Error, tc.parts)
			assert.Equal(t, -32602, r.Error.Code, tc.parts)
			assert.Contains(t, r.Error.Message, tc.want, tc.parts)
		}
	})
}

// TestVersions: a request without A2A-Version is 0.3 (message/send, kind
// tags, lower-case states), one with an unknown version is refused with
// VersionNotSupportedError, and each version's methods are its own.
func TestVersions(t *testing.T) {
	s := newServer(t, nil)
	a := s.post(t, "/", "", `{"jsonrpc":"2.0","id":"x","method":"message/send","params":{"message":{"kind":"message","messageId":"v03","role":"user","parts":[{"kind":"data","data":{"tool":"Calculator_Add","input":{"a":2,"b":2}}}]}}}`)
	r := decodeRPC(t, a)
	require.Nil(t, r.Error, "%s", a.body)
	var msg struct {
		Kind     string           `json:"kind"`
		Role     string           `json:"role"`
		Parts    []map[string]any `json:"parts"`
		Metadata map[string]any   `json:"metadata"`
	}
	require.NoError(t, json.Unmarshal(r.Result, &msg))
	assert.Equal(t, "message", msg.Kind, "0.3's kind tag")
	assert.Equal(t, "agent", msg.Role)
	assert.Equal(t, "data", msg.Parts[0]["kind"])
	assert.Equal(t, map[string]any{"result": 4.0}, msg.Parts[0]["data"], "0.3's data parts hold objects")
	assert.Equal(t, "text", msg.Parts[1]["kind"])
	assert.Equal(t, "succeeded", msg.Metadata["io.github.otcgo/outcome"])
	assert.JSONEq(t, `"x"`, string(r.ID))

	// Without the header, a method only 1.0 has is served as 1.0 (a 1.0
	// client that leaves the header out); a header naming 0.3 is obeyed.
	r = decodeRPC(t, s.post(t, "/", "", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"v10","role":"ROLE_USER","parts":[{"data":{"tool":"Calculator_Add","input":{"a":2,"b":3}}}]}}}`))
	require.Nil(t, r.Error)
	assert.Contains(t, string(r.Result), `"role":"ROLE_AGENT"`, "1.0's shapes")
	assert.Contains(t, string(r.Result), `{"data":5}`)
	r = decodeRPC(t, s.post(t, "/", "", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"none"}}`))
	require.NotNil(t, r.Error)
	assert.Equal(t, -32001, r.Error.Code, "GetTask, 1.0's, looks the task up")
	r = decodeRPC(t, s.post(t, "/", "0.3", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{}}`))
	require.NotNil(t, r.Error)
	assert.Equal(t, -32601, r.Error.Code, "SendMessage is not a 0.3 method")
	assert.Contains(t, r.Error.Message, "(A2A 0.3)")
	r = decodeRPC(t, s.post(t, "/", "1.0", `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{}}`))
	require.NotNil(t, r.Error)
	assert.Equal(t, -32601, r.Error.Code, "message/send is not a 1.0 method")

	r = decodeRPC(t, s.post(t, "/", "2.0", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{}}`))
	require.NotNil(t, r.Error)
	assert.Equal(t, -32009, r.Error.Code)
	assert.Equal(t, "VERSION_NOT_SUPPORTED", r.Error.Data[0]["reason"])
}

// TestRESTBinding: POST /message:send in 1.0's shapes, and its errors as
// google.rpc.Status.
func TestRESTBinding(t *testing.T) {
	s := newServer(t, nil)
	a := s.post(t, "/message:send", a2a.Version10, `{"message":{"messageId":"r1","role":"ROLE_USER","parts":[{"data":{"tool":"Calculator_Add","input":{"a":3,"b":4}}}]}}`)
	require.Equal(t, http.StatusOK, a.status, "%s", a.body)
	assert.Equal(t, "application/a2a+json", a.header.Get("Content-Type"))
	assert.JSONEq(t, `7`, string(replyOf(t, a.body).Parts[0].Data))

	a = s.post(t, "/message:send", a2a.Version10, `{"message":{"messageId":"r2","role":"ROLE_USER","parts":[{"data":{"tool":"Calculator_Add","input":{"a":"x","b":1}}}]}}`)
	assert.Equal(t, http.StatusBadRequest, a.status)
	var e struct {
		Error struct {
			Code    int              `json:"code"`
			Status  string           `json:"status"`
			Message string           `json:"message"`
			Details []map[string]any `json:"details"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal(a.body, &e), "%s", a.body)
	assert.Equal(t, 400, e.Error.Code)
	assert.Equal(t, "INVALID_ARGUMENT", e.Error.Status)
	assert.Contains(t, e.Error.Message, "- a: Must be a number")
	require.Len(t, e.Error.Details, 2)
	assert.Equal(t, "type.googleapis.com/google.rpc.ErrorInfo", e.Error.Details[0]["@type"])
	assert.Equal(t, "type.googleapis.com/google.rpc.BadRequest", e.Error.Details[1]["@type"])

	a = s.post(t, "/tasks/t1:cancel", a2a.Version10, `{}`)
	assert.Equal(t, http.StatusNotFound, a.status)
	assert.Contains(t, string(a.body), "TASK_NOT_FOUND")

	a = s.post(t, "/tasks/t1/pushNotificationConfigs", a2a.Version10, `{}`)
	assert.Equal(t, http.StatusBadRequest, a.status)
	assert.Contains(t, string(a.body), "PUSH_NOTIFICATION_NOT_SUPPORTED")
}

// TestAuthentication: with an authenticator, a message without credentials
// is refused 401 with the challenge on both bindings, one with them is
// served, and the card stays public.
func TestAuthentication(t *testing.T) {
	keys, err := auth.NewJWTAuth(&auth.JWTOptions{Secret: []byte("a2a-test-secret-of-at-least-32-bytes!")})
	require.NoError(t, err)
	s := newServer(t, &a2a.Options{Authenticator: keys})

	a := s.send(t, "m-anon", `[{"data":{"tool":"Calculator_Add","input":{"a":1,"b":2}}}]`)
	assert.Equal(t, http.StatusUnauthorized, a.status, "%s", a.body)
	assert.Equal(t, "Bearer", a.header.Get("WWW-Authenticate"))
	r := decodeRPC(t, a)
	require.NotNil(t, r.Error)
	assert.Equal(t, -31401, r.Error.Code, "the code the A2A SDKs give an unauthenticated request")
	assert.Equal(t, "UNAUTHENTICATED", r.Error.Data[0]["reason"])

	a = s.post(t, "/message:send", a2a.Version10, `{"message":{"messageId":"r-anon","role":"ROLE_USER","parts":[{"data":{"tool":"Calculator_Add","input":{"a":1,"b":2}}}]}}`)
	assert.Equal(t, http.StatusUnauthorized, a.status)
	assert.Equal(t, "Bearer", a.header.Get("WWW-Authenticate"))
	assert.Contains(t, string(a.body), `"status":"UNAUTHENTICATED"`)

	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": "agent", "exp": time.Now().Add(time.Minute).Unix()}).
		SignedString([]byte("a2a-test-secret-of-at-least-32-bytes!"))
	require.NoError(t, err)
	a = s.send(t, "m-token", `[{"data":{"tool":"Calculator_Add","input":{"a":1,"b":2}}}]`, "Authorization", "Bearer "+tok)
	assert.Equal(t, http.StatusOK, a.status, "%s", a.body)
	assert.Nil(t, decodeRPC(t, a).Error)

	resp, err := http.Get(s.url + "/.well-known/agent-card.json")
	require.NoError(t, err)
	var card struct {
		SecuritySchemes map[string]json.RawMessage `json:"securitySchemes"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&card))
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode, "the card is public")
	assert.JSONEq(t, `{"httpAuthSecurityScheme":{"scheme":"Bearer","bearerFormat":"JWT"}}`, string(card.SecuritySchemes["bearer"]), "the JWT authenticator's scheme")
}

// TestDraftForm: the universal tool registry's draft form, JSON-RPC
// "a2a/tasks/send" with {agentCard, taskType, input}, calls the tool that
// taskType names and is answered in the task shape.
func TestDraftForm(t *testing.T) {
	s := newServer(t, nil)
	a := s.post(t, "/", "", `{"jsonrpc":"2.0","id":"d1","method":"a2a/tasks/send","params":{"agentCard":{"name":"caller"},"taskType":"Calculator_Add","input":{"a":20,"b":22}}}`, "X-A2A-Version", "2025-draft-01")
	r := decodeRPC(t, a)
	require.Nil(t, r.Error, "%s", a.body)
	var msg struct {
		Kind  string           `json:"kind"`
		Parts []map[string]any `json:"parts"`
	}
	require.NoError(t, json.Unmarshal(r.Result, &msg), "%s", r.Result)
	assert.Equal(t, "message", msg.Kind, "answered as message/send is, in 0.3's shapes")
	assert.Equal(t, map[string]any{"result": 42.0}, msg.Parts[0]["data"])

	r = decodeRPC(t, s.post(t, "/", "", `{"jsonrpc":"2.0","id":"d2","method":"a2a/tasks/send","params":{"taskType":"Calculator_Add","input":{"a":"x","b":1}}}`))
	require.NotNil(t, r.Error)
	assert.Equal(t, -32602, r.Error.Code)
	assert.Contains(t, r.Error.Message, "- a: Must be a number")

	r = decodeRPC(t, s.post(t, "/", "", `{"jsonrpc":"2.0","id":"d3","method":"a2a/tasks/send","params":{"input":{}}}`))
	require.NotNil(t, r.Error)
	assert.Contains(t, r.Error.Message, "params.taskType")
}

// TestCardAtRoot: Card serves the Agent Card at the host's well-known URL,
// naming the endpoint where the handler is mounted.
func TestCardAtRoot(t *testing.T) {
	reg := otc.NewRegistry(nil)
	h := a2a.NewHandler(reg, nil)
	mux := http.NewServeMux()
	mux.Handle("/agents/tools/", http.StripPrefix("/agents/tools", h))
	mux.Handle("/.well-known/agent-card.json", h.Card("/agents/tools"))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	for _, path := range []string{"/.well-known/agent-card.json", "/agents/tools/.well-known/agent-card.json"} {
		resp, err := http.Get(srv.URL + path)
		require.NoError(t, err)
		var card struct {
			SupportedInterfaces []struct {
				URL string `json:"url"`
			} `json:"supportedInterfaces"`
		}
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&card))
		resp.Body.Close()
		require.Len(t, card.SupportedInterfaces, 2, path)
		assert.Equal(t, srv.URL+"/agents/tools", card.SupportedInterfaces[0].URL, path)
	}
	resp, err := http.Post(srv.URL+"/.well-known/agent-card.json", "application/json", strings.NewReader("{}"))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
}

// TestTextTool: with Options.TextTool, a message of text calls that tool
// with the text as its one string parameter, and is answered as any call
// of it is: a task for a tool whose calls may run as tasks (blocking, at
// once, streamed), a message for another; without it, or with a data part
// beside the text, the guide; a text tool without exactly one string
// parameter is refused when the handler is made.
func TestTextTool(t *testing.T) {
	reg := otc.NewRegistry(nil)
	type question struct {
		Question string `json:"question" jsonschema:"description=What to ask."`
	}
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Assistant.Ask", Version: "1.0.0", Description: "Answers a question.", Tasks: otc.TasksOptional},
		func(ctx context.Context, in question) (string, error) {
			otc.ReportProgress(ctx, 1, 1, "thinking")
			return "you asked: " + in.Question, nil
		}))
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Echo.Say", Version: "1.0.0", Description: "Says it back."},
		func(_ context.Context, in question) (string, error) { return in.Question, nil }))
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Two.Strings", Version: "1.0.0", Description: "Takes two."},
		func(context.Context, struct {
			A string `json:"a" jsonschema:"description=One."`
			B string `json:"b" jsonschema:"description=Two."`
		}) (string, error) {
			return "", nil
		}))
	serve := func(opts *a2a.Options) *server {
		srv := httptest.NewServer(a2a.NewHandler(reg, opts))
		t.Cleanup(srv.Close)
		return &server{url: srv.URL}
	}
	s := serve(&a2a.Options{TextTool: "Assistant_Ask"})
	r := decodeRPC(t, s.send(t, "t1", `[{"text":"what is A2A?"},{"text":"in one line"}]`))
	require.Nil(t, r.Error)
	var out taskOf
	require.NoError(t, json.Unmarshal(r.Result, &out))
	assert.Equal(t, "TASK_STATE_COMPLETED", out.Task.Status.State, "%s", r.Result)
	require.NotEmpty(t, out.Task.Artifacts)
	assert.JSONEq(t, `"you asked: what is A2A?\n\nin one line"`, string(out.Task.Artifacts[0].Parts[0].Data))

	id, state, _ := rpcTask(t, s.post(t, "/", a2a.Version10, `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"t2","role":"ROLE_USER","parts":[{"text":"hi"}]},"configuration":{"returnImmediately":true}}}`))
	assert.Contains(t, []string{"TASK_STATE_WORKING", "TASK_STATE_COMPLETED"}, state)
	assert.NotEmpty(t, id)

	evs := events(t, s.post(t, "/", a2a.Version10, `{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"message":{"messageId":"t3","role":"ROLE_USER","parts":[{"text":"hi"}]}}}`))
	require.GreaterOrEqual(t, len(evs), 3)
	assert.Contains(t, string(evs[0]), `"task":`)
	assert.Contains(t, string(evs[len(evs)-1]), `"TASK_STATE_COMPLETED"`)

	r = decodeRPC(t, serve(&a2a.Options{TextTool: "Echo.Say"}).send(t, "t4", `[{"text":"hello"}]`))
	require.Nil(t, r.Error)
	assert.JSONEq(t, `"hello"`, string(replyOf(t, r.Result).Parts[0].Data), "a tool that runs within its message: a message")

	for _, opts := range []*a2a.Options{nil, {TextTool: "Assistant_Ask"}} {
		parts := `[{"text":"hello"}]`
		if opts != nil {
			parts = `[{"text":"hello"},{"data":{"note":1}}]`
		}
		r = decodeRPC(t, serve(opts).send(t, "t5", parts))
		require.Nil(t, r.Error)
		assert.Contains(t, *replyOf(t, r.Result).Parts[0].Text, "This agent runs tools", "the guide")
	}

	resp, err := http.Get(s.url + "/.well-known/agent-card.json")
	require.NoError(t, err)
	var card struct {
		Skills []struct {
			ID         string   `json:"id"`
			InputModes []string `json:"inputModes"`
		} `json:"skills"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&card))
	resp.Body.Close()
	modes := map[string][]string{}
	for _, sk := range card.Skills {
		modes[sk.ID] = sk.InputModes
	}
	assert.Equal(t, []string{"application/json", "text/plain"}, modes["Assistant.Ask@1.0.0"], "the card says a message of text calls it")
	assert.Equal(t, []string{"application/json"}, modes["Echo.Say@1.0.0"])

	assert.PanicsWithValue(t, `a2a: Options.TextTool: tool "Two.Strings@1.0.0" has 2 string parameters; the text of a message needs a tool with exactly one`, func() {
		a2a.NewHandler(reg, &a2a.Options{TextTool: "Two_Strings"})
	})
}

// TestMountedWithoutStripPrefix: a handler mounted as people write it,
// mux.Handle("/agents/a2a/", h) and the pattern without its slash, serves
// its card (naming the URL it is mounted at), JSON-RPC and the REST
// binding as the http.StripPrefix form does.
func TestMountedWithoutStripPrefix(t *testing.T) {
	reg := otc.NewRegistry(nil)
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Calculator.Add", Version: "1.0.0", Description: "Adds two numbers."},
		func(_ context.Context, in struct {
			A float64 `json:"a" jsonschema:"description=The first number."`
			B float64 `json:"b" jsonschema:"description=The second number."`
		}) (float64, error) {
			return in.A + in.B, nil
		}))
	h := a2a.NewHandler(reg, nil)
	mux := http.NewServeMux()
	mux.Handle("/agents/a2a/", h)
	mux.Handle("POST /agents/a2a", h)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	s := &server{url: srv.URL + "/agents/a2a"}

	card := s.get(t, "/.well-known/agent-card.json")
	require.Equal(t, http.StatusOK, card.status, "%s", card.body)
	var c struct {
		SupportedInterfaces []struct {
			URL string `json:"url"`
		} `json:"supportedInterfaces"`
	}
	require.NoError(t, json.Unmarshal(card.body, &c))
	require.NotEmpty(t, c.SupportedInterfaces)
	assert.Equal(t, srv.URL+"/agents/a2a", c.SupportedInterfaces[0].URL)

	for _, path := range []string{"/", ""} {
		a := s.post(t, path, "1.0", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m-`+path+`","role":"ROLE_USER","parts":[{"data":{"tool":"Calculator_Add","input":{"a":2,"b":3}}}]}}}`)
		require.Equal(t, http.StatusOK, a.status, "%q: %s", path, a.body)
		assert.Contains(t, string(a.body), `"data":5`, "%q", path)
	}
	rest := s.post(t, "/message:send", "1.0", `{"message":{"messageId":"m-rest","role":"ROLE_USER","parts":[{"data":{"tool":"Calculator_Add","input":{"a":1,"b":1}}}]}}`)
	require.Equal(t, http.StatusOK, rest.status, "%s", rest.body)
	assert.Contains(t, string(rest.body), `"data":2`)
	missing := s.get(t, "/nothing")
	assert.Equal(t, http.StatusNotFound, missing.status)
}
