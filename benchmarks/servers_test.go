package benchmarks

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpgoserver "github.com/mark3labs/mcp-go/server"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"github.com/xeipuuv/gojsonschema"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/a2a"
	"github.com/otcgo/otc/internal/testkit"
	"github.com/otcgo/otc/mcp"
	"github.com/otcgo/otc/rest"
)

// Every server below offers one tool, "add two numbers", and is sent the
// same call: add 10 and 5. The answer must contain 15. For otc and the
// hand-written handlers the tool's input is testkit.AddInput.

// sdkAddInput is the same input for the official SDK, whose jsonschema
// tag is the description itself.
type sdkAddInput struct {
	A float64 `json:"a" jsonschema:"The first number to add."`
	B float64 `json:"b" jsonschema:"The second number to add."`
}

// sdkAddOutput is the SDK tool's structured result: MCP requires an object.
type sdkAddOutput struct {
	Result float64 `json:"result"`
}

// The call in each wire format; the OTC and MCP ones are testkit's
// OTCAddCall and MCPAddCall.
const (
	otcCall  = testkit.OTCAddCall
	restCall = `{"schema_version":"0.1.0","args":{"a":10,"b":5}}`
	mcpCall  = testkit.MCPAddCall
	// mcpCall2026 carries the per-request metadata that replaces the
	// initialize handshake in protocol version 2026-07-28.
	mcpCall2026 = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"Calculator_Add","arguments":{"a":10,"b":5},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},` +
		`"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1.0.0"}}}}`
	// a2aCall is an A2A 1.0 SendMessage with the call's data part.
	a2aCall        = `{"jsonrpc":"2.0","id":7,"method":"SendMessage","params":{"message":{"messageId":"m-7","role":"ROLE_USER","parts":[{"data":{"tool":"Calculator_Add","input":{"a":10,"b":5}}}]}}}`
	mcpInitialize  = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1.0.0"}}}`
	mcpInitialized = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
)

// server is one way of serving the tool, and the request that calls it.
type server struct {
	name    string
	handler http.Handler
	path    string
	body    []byte
	header  http.Header
	// open, when set, does what a client must do before its first call
	// (the initialize handshake of a server with sessions) and returns the
	// headers to send with each call.
	open func(do doFunc) (http.Header, error)
	// want matches a correct answer's body.
	want *regexp.Regexp
}

// doFunc sends one POST and returns the answer's status, headers and body.
type doFunc func(path string, header http.Header, body []byte) (int, http.Header, []byte, error)

var (
	wantOTC  = regexp.MustCompile(`"value":15[,}]`)
	wantREST = regexp.MustCompile(`"result":15[,}]`)
	wantMCP  = regexp.MustCompile(`"structuredContent":\{"result":15\}`)
	wantA2A  = regexp.MustCompile(`\{"data":15\}.*"io.github.otcgo/outcome":"succeeded"`)
)

func jsonHeader(kv ...string) http.Header {
	h := http.Header{"Content-Type": {"application/json"}}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	return h
}

// mcpHeader is what an MCP client sends with a POST at version v.
func mcpHeader(v string, kv ...string) http.Header {
	return jsonHeader(append([]string{"Accept", "application/json, text/event-stream", "MCP-Protocol-Version", v}, kv...)...)
}

// servers returns every server of the comparison, the floor first.
func servers(tb testing.TB) []server {
	tb.Helper()
	reg := newRegistry(tb, 1)
	mcpHandler := mcp.NewHandler(reg, nil)
	sdkServer := newSDKServer()
	getSDK := func(*http.Request) *sdk.Server { return sdkServer }
	return []server{
		{name: "floor", handler: floorHandler(), path: "/call", body: []byte(otcCall), header: jsonHeader(), want: wantOTC},
		{name: "floor-gojsonschema", handler: validatingFloorHandler(tb, reg), path: "/call", body: []byte(otcCall), header: jsonHeader(), want: wantOTC},
		{name: "otc", handler: otc.NewHandler(reg, nil), path: "/call", body: []byte(otcCall), header: jsonHeader(), want: wantOTC},
		{name: "otc-rest", handler: rest.NewHandler(reg, nil), path: "/tools/Calculator_Add:invoke", body: []byte(restCall), header: jsonHeader(), want: wantREST},
		{name: "otc-mcp", handler: mcpHandler, path: "/mcp", body: []byte(mcpCall), header: mcpHeader("2025-11-25"), want: wantMCP},
		{name: "floor-mcp-2026", handler: floorMCPHandler(), path: "/mcp", body: []byte(mcpCall2026),
			header: mcpHeader("2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", "Calculator_Add"), want: wantMCP},
		{name: "otc-mcp-2026", handler: mcpHandler, path: "/mcp", body: []byte(mcpCall2026),
			header: mcpHeader("2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", "Calculator_Add"), want: wantMCP},
		{name: "otc-a2a", handler: a2a.NewHandler(reg, nil), path: "/", body: []byte(a2aCall), header: jsonHeader("A2A-Version", "1.0"), want: wantA2A},
		{name: "sdk-stateless", path: "/mcp", body: []byte(mcpCall), header: mcpHeader("2025-11-25"), want: wantMCP,
			handler: sdk.NewStreamableHTTPHandler(getSDK, &sdk.StreamableHTTPOptions{Stateless: true, JSONResponse: true})},
		{name: "sdk-sessions", path: "/mcp", body: []byte(mcpCall), header: mcpHeader("2025-11-25"), want: wantMCP, open: openSession,
			handler: sdk.NewStreamableHTTPHandler(getSDK, &sdk.StreamableHTTPOptions{JSONResponse: true})},
		{name: "sdk-2026", path: "/mcp", body: []byte(mcpCall2026),
			header: mcpHeader("2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", "Calculator_Add"), want: wantMCP,
			handler: sdk.NewStreamableHTTPHandler(getSDK, &sdk.StreamableHTTPOptions{Stateless: true, JSONResponse: true})},
		{name: "mcpgo", handler: newMCPGoHandler(), path: "/mcp", body: []byte(mcpCall), header: mcpHeader("2025-11-25"), want: wantMCP},
	}
}

// newRegistry registers Calculator.Add@1.0.0 and, for a larger registry,
// n-1 more tools, each in the given versions.
func newRegistry(tb testing.TB, n int, versions ...string) *otc.Registry {
	tb.Helper()
	reg := testkit.NewAddRegistry(tb)
	for i := 1; i < n; i++ {
		for _, v := range versions {
			require.NoError(tb, otc.Register(reg, testkit.AddTool(fmt.Sprintf("Bench%05d.Add", i), v), testkit.Add))
		}
	}
	return reg
}

// floorHandler is the floor: the least a hand-written OTC server does for
// this call. It reads the body, decodes the envelope with the input in one
// pass, adds, and encodes the result with its duration; it checks the tool
// id and nothing else.
func floorHandler() http.Handler {
	type request struct {
		Schema  string `json:"$schema"`
		Request struct {
			CallID string           `json:"call_id"`
			ToolID string           `json:"tool_id"`
			Input  testkit.AddInput `json:"input"`
		} `json:"request"`
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, ok := readFloorCall(w, r, func(req *request) string { return req.Request.ToolID })
		if !ok {
			return
		}
		start := time.Now()
		in := req.Request.Input
		writeFloorResult(w, req.Request.CallID, in.A+in.B, start)
	})
}

// floorMCPHandler is the least a hand-written server of MCP 2026-07-28
// does for the same call: it reads the body, decodes the message with the
// arguments in one pass, adds, and encodes the result as that version has
// it (both content forms, the serverInfo _meta its servers should send,
// resultType); it checks the method and the tool name and nothing else,
// neither the headers nor the _meta a request must carry. Beside the
// floor, it shows what the protocol's own weight costs: a larger request
// with more headers, a larger answer.
func floorMCPHandler() http.Handler {
	type request = testkit.FloorMCPRequest[testkit.AddInput]
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, ok := readFloorCall(w, r, func(req *request) string {
			if req.Method != "tools/call" {
				return ""
			}
			return strings.Replace(req.Params.Name, "_", ".", 1)
		})
		if !ok {
			return
		}
		testkit.WriteFloorMCPResult(w, req.ID, req.Params.Arguments.A+req.Params.Arguments.B, true)
	})
}

// validatingFloorHandler is the floor with the input validated first, by a
// gojsonschema schema compiled once from the tool's input schema
// (testkit.FloorInput, which the root package's baseline uses too; the
// baseline differs in how it reads the body, which ids it accepts and the
// headers it sets, so each keeps its own).
func validatingFloorHandler(tb testing.TB, reg *otc.Registry) http.Handler {
	tb.Helper()
	defs := reg.Tools()
	require.Equal(tb, "Calculator.Add@1.0.0", defs[0].ID)
	schema, err := gojsonschema.NewSchema(gojsonschema.NewBytesLoader(defs[0].InputSchema.Parameters))
	require.NoError(tb, err)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, ok := readFloorCall(w, r, func(req *testkit.FloorCall) string { return req.Request.ToolID })
		if !ok {
			return
		}
		start := time.Now()
		in, ok := testkit.FloorInput(w, schema, req.Request.Input)
		if !ok {
			return
		}
		writeFloorResult(w, req.Request.CallID, in.A+in.B, start)
	})
}

// readFloorCall reads a call into a T, as the floors declare the envelope,
// and checks the tool id toolID finds in it. It answers a failure itself
// and then returns false.
func readFloorCall[T any](w http.ResponseWriter, r *http.Request, toolID func(*T) string) (T, bool) {
	var req T
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, otc.DefaultMaxBodyBytes))
	if err != nil {
		testkit.WriteFloorError(w, http.StatusBadRequest, "The request body could not be read")
		return req, false
	}
	if err := json.Unmarshal(body, &req); err != nil {
		testkit.WriteFloorError(w, http.StatusBadRequest, "The request body is not a valid call")
		return req, false
	}
	if id := toolID(&req); id != "Calculator.Add@1.0.0" && id != "Calculator.Add" {
		testkit.WriteFloorError(w, http.StatusBadRequest, "Unknown tool")
		return req, false
	}
	return req, true
}

func writeFloorResult(w http.ResponseWriter, callID string, sum float64, start time.Time) {
	var out testkit.FloorResult
	out.Schema = "otc://1.0"
	out.Result.CallID = callID
	out.Result.Success = true
	out.Result.Value = sum
	out.Result.Duration = float64(time.Since(start).Microseconds()) / 1000
	testkit.WriteFloorJSON(w, out)
}

// newSDKServer is the tool on the official MCP Go SDK, which validates the
// arguments against the schema it infers from sdkAddInput.
func newSDKServer() *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "bench", Version: "1.0.0"}, &sdk.ServerOptions{
		Logger: slog.New(slog.DiscardHandler),
	})
	sdk.AddTool(s, &sdk.Tool{Name: "Calculator_Add", Description: "Adds two numbers together."},
		func(_ context.Context, _ *sdk.CallToolRequest, in sdkAddInput) (*sdk.CallToolResult, sdkAddOutput, error) {
			return nil, sdkAddOutput{Result: in.A + in.B}, nil
		})
	return s
}

// newMCPGoHandler is the tool on mcp-go, stateless, with its input
// validation turned on so that it does the work the others do.
func newMCPGoHandler() http.Handler {
	s := mcpgoserver.NewMCPServer("bench", "1.0.0", mcpgoserver.WithToolCapabilities(false), mcpgoserver.WithInputSchemaValidation())
	s.AddTool(mcpgo.NewTool("Calculator_Add",
		mcpgo.WithDescription("Adds two numbers together."),
		mcpgo.WithNumber("a", mcpgo.Required(), mcpgo.Description("The first number to add.")),
		mcpgo.WithNumber("b", mcpgo.Required(), mcpgo.Description("The second number to add.")),
	), func(_ context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		a, err := req.RequireFloat("a")
		if err != nil {
			return mcpgo.NewToolResultError(err.Error()), nil
		}
		b, err := req.RequireFloat("b")
		if err != nil {
			return mcpgo.NewToolResultError(err.Error()), nil
		}
		sum := a + b
		return mcpgo.NewToolResultStructured(map[string]float64{"result": sum}, strconv.FormatFloat(sum, 'g', -1, 64)), nil
	})
	return mcpgoserver.NewStreamableHTTPServer(s, mcpgoserver.WithStateLess(true), mcpgoserver.WithStreamableHTTPLogger(slog.New(slog.DiscardHandler)))
}

// openSession runs the initialize handshake and returns the session's
// headers.
func openSession(do doFunc) (http.Header, error) {
	status, h, body, err := do("/mcp", mcpHeader("2025-11-25"), []byte(mcpInitialize))
	if err != nil {
		return nil, err
	}
	id := h.Get("Mcp-Session-Id")
	if status != http.StatusOK || id == "" {
		return nil, fmt.Errorf("initialize: status %d, session %q: %.200s", status, id, body)
	}
	status, _, body, err = do("/mcp", mcpHeader("2025-11-25", "Mcp-Session-Id", id), []byte(mcpInitialized))
	if err != nil {
		return nil, err
	}
	if status != http.StatusAccepted {
		return nil, fmt.Errorf("notifications/initialized: status %d: %.200s", status, body)
	}
	return http.Header{"Mcp-Session-Id": {id}}, nil
}

// inProcess returns a doFunc that serves requests straight through h.
func inProcess(h http.Handler) doFunc {
	return func(path string, header http.Header, body []byte) (int, http.Header, []byte, error) {
		req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
		for k, v := range header {
			req.Header[k] = v
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code, rec.Header(), rec.Body.Bytes(), nil
	}
}

// merge returns the call's headers with those of its session.
func merge(a, b http.Header) http.Header {
	h := a.Clone()
	for k, v := range b {
		h[k] = v
	}
	return h
}

// overHTTP returns a doFunc that sends requests to base with c.
func overHTTP(c *http.Client, base string) doFunc {
	return func(path string, header http.Header, body []byte) (int, http.Header, []byte, error) {
		req, err := http.NewRequest(http.MethodPost, base+path, bytes.NewReader(body))
		if err != nil {
			return 0, nil, nil, err
		}
		req.Header = header.Clone()
		resp, err := c.Do(req)
		if err != nil {
			return 0, nil, nil, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, b, err
	}
}

// floorListHandler is what a plain server does for GET /tools: marshal its
// definitions for each request.
func floorListHandler(defs []otc.ToolDefinition) http.Handler {
	type catalog struct {
		Schema string               `json:"$schema"`
		Tools  []otc.ToolDefinition `json:"tools"`
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := json.Marshal(catalog{Schema: "otc://1.0", Tools: defs})
		if err != nil {
			testkit.WriteFloorError(w, http.StatusInternalServerError, "The catalog could not be encoded")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(b)))
		_, _ = w.Write(b)
	})
}
