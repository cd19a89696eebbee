//lint:file-ignore SA1019 sampling is deprecated from 2026-07-28 on, and still part of 2025-11-25 and 2025-06-18, whose servers these tests check with the SDK's sampling handler.

package interop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/testkit"
	otcmcp "github.com/otcgo/otc/mcp"
)

// A tool that asks its caller in the middle of the call, answered by the
// SDK's client: elicitation/create and sampling/createMessage sent on the
// call's SSE stream over HTTP (the answer coming back as a POST of its
// own) and on the pipe over stdio, in the protocol versions that send
// server requests (2025-06-18 and 2025-11-25).

// askingRegistry returns newAskingRegistry's registry.
func askingRegistry(t *testing.T) *otc.Registry {
	t.Helper()
	reg, err := newAskingRegistry()
	require.NoError(t, err)
	return reg
}

// newAskingRegistry has Shop.Refund, which asks the user to confirm a
// refund before it makes it, and Shop.Summarize, which asks the client's
// model.
func newAskingRegistry() (*otc.Registry, error) {
	reg := otc.NewRegistry(&otc.RegistryOptions{Logger: slog.New(slog.DiscardHandler)})
	type refundIn struct {
		Order  string  `json:"order" jsonschema:"description=The order to refund."`
		Amount float64 `json:"amount" jsonschema:"description=The amount in euros."`
	}
	err := otc.Register(reg, otc.Tool{ID: "Shop.Refund", Version: "1.0.0", Description: "Refunds an order, once the user confirms."},
		func(ctx context.Context, in refundIn) (string, error) {
			params, _ := json.Marshal(map[string]any{
				"message": "Refund " + json.Number(jsonNumber(in.Amount)).String() + " € to order " + in.Order + "?",
				"requestedSchema": map[string]any{"type": "object",
					"properties": map[string]any{"reason": map[string]any{"type": "string", "description": "Why"}},
					"required":   []string{"reason"}},
			})
			answers, err := otc.Ask(ctx, otc.InputRequest{Method: otc.MethodElicit, Params: params})
			if errors.Is(err, otc.ErrInputUnsupported) {
				return "", &otc.ToolError{Message: "The refund needs the user's confirmation, and this client cannot ask for it."}
			}
			if err != nil {
				return "", err
			}
			var a struct {
				Action  string `json:"action"`
				Content struct {
					Reason string `json:"reason"`
				} `json:"content"`
			}
			if err := json.Unmarshal(answers[0], &a); err != nil {
				return "", err
			}
			if a.Action != "accept" {
				return "not refunded: the user chose " + a.Action, nil
			}
			return "refunded " + in.Order + " (" + a.Content.Reason + ")", nil
		})
	if err != nil {
		return nil, err
	}
	err = otc.Register(reg, otc.Tool{ID: "Shop.Summarize", Version: "1.0.0", Description: "Summarizes a text with the client's model."},
		func(ctx context.Context, in struct {
			Text string `json:"text" jsonschema:"description=The text."`
		}) (string, error) {
			params, _ := json.Marshal(map[string]any{"maxTokens": 50,
				"messages": []any{map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": "Summarize: " + in.Text}}}})
			answers, err := otc.Ask(ctx, otc.InputRequest{Method: otc.MethodSample, Params: params})
			if err != nil {
				return "", err
			}
			var a struct {
				Content struct {
					Text string `json:"text"`
				} `json:"content"`
			}
			if err := json.Unmarshal(answers[0], &a); err != nil {
				return "", err
			}
			return "summary: " + a.Content.Text, nil
		})
	return reg, err
}

// askStdioEnv, set to 1, makes the test binary serve the asking tools on
// its standard input and output instead of running tests: the stdio
// server the TypeScript client starts.
const askStdioEnv = "OTC_INTEROP_ASK_STDIO"

// serveAskingStdio is the test binary's life as that server.
func serveAskingStdio() int {
	reg, err := newAskingRegistry()
	if err == nil {
		err = otcmcp.ServeStdio(context.Background(), reg, nil)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "interop: serving the asking tools on stdio:", err)
		return 1
	}
	return 0
}

// TestTSClientAnswersQuestions has the official TypeScript SDK's client
// answer the tools' elicitation and sampling requests, over HTTP and over
// stdio (the test binary as the server process).
func TestTSClientAnswersQuestions(t *testing.T) {
	t.Parallel()
	node, modules := oauthNode(t)
	dir := t.TempDir()
	b, err := os.ReadFile(filepath.Join("testdata", "ask", "client.mjs"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "client.mjs"), b, 0o644))
	require.NoError(t, os.Symlink(modules, filepath.Join(dir, "node_modules")))
	srv := httptest.NewServer(otcmcp.NewHandler(askingRegistry(t), nil))
	t.Cleanup(srv.Close)
	self, err := os.Executable()
	require.NoError(t, err)
	for name, args := range map[string][]string{
		"http":  {"http", srv.URL},
		"stdio": {"stdio", self, "-test.run=^$"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
			defer cancel()
			cmd := exec.CommandContext(ctx, node, append([]string{"client.mjs"}, args...)...)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), askStdioEnv+"=1")
			stderr := &testkit.SyncBuffer{}
			cmd.Stderr = stderr
			stdout, err := cmd.Output()
			require.NoError(t, err, "the TypeScript client failed:\n%s\n%s", stdout, stderr)
			var steps []map[string]any
			for line := range strings.SplitSeq(strings.TrimSpace(string(stdout)), "\n") {
				var s map[string]any
				require.NoError(t, json.Unmarshal([]byte(line), &s), line)
				steps = append(steps, s)
			}
			want := []map[string]any{
				{"step": "connected"},
				{"step": "elicit", "message": "Refund 250 € to order A-1001?"},
				{"step": "call", "tool": "Shop_Refund", "isError": false, "content": []any{map[string]any{"type": "text", "text": "refunded A-1001 (damaged)"}}},
				{"step": "sample", "text": "Summarize: a long text"},
				{"step": "call", "tool": "Shop_Summarize", "isError": false, "content": []any{map[string]any{"type": "text", "text": "summary: short"}}},
			}
			require.Len(t, steps, len(want), "%v\n%s", steps, stderr)
			for i, w := range want {
				for k, v := range w {
					assert.Equal(t, v, steps[i][k], "step %d: %v", i, steps[i])
				}
			}
		})
	}
}

func jsonNumber(f float64) string {
	b, _ := json.Marshal(f)
	return string(b)
}

// askTransports are the ways the SDK's client reaches the asking tools.
func askTransports(t *testing.T, reg *otc.Registry) map[string]func() mcp.Transport {
	srv := httptest.NewServer(otcmcp.NewHandler(reg, nil))
	t.Cleanup(srv.Close)
	return map[string]func() mcp.Transport{
		"http": func() mcp.Transport {
			return &mcp.StreamableClientTransport{Endpoint: srv.URL, MaxRetries: -1}
		},
		"stdio": func() mcp.Transport {
			// The stdio transport's framing on a pair of pipes, as a
			// process's standard input and output would carry it.
			inR, inW := io.Pipe()
			outR, outW := io.Pipe()
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() {
				done <- otcmcp.Serve(ctx, reg, inR, outW, nil)
				outW.Close()
			}()
			t.Cleanup(func() {
				inW.Close()
				cancel()
				<-done
			})
			return &mcp.IOTransport{Reader: outR, Writer: inW}
		},
		"stdio_process": func() mcp.Transport {
			// The test binary as the server process, as a client launches one.
			self, err := os.Executable()
			require.NoError(t, err)
			cmd := exec.Command(self, "-test.run=^$")
			cmd.Env = append(os.Environ(), askStdioEnv+"=1")
			cmd.Stderr = os.Stderr
			return &mcp.CommandTransport{Command: cmd}
		},
	}
}

func TestSDKClientAnswersQuestions(t *testing.T) {
	t.Parallel()
	reg := askingRegistry(t)
	for name, transport := range askTransports(t, reg) {
		for _, version := range []string{otcmcp.Version20251125, otcmcp.Version20250618} {
			t.Run(name+"_"+version, func(t *testing.T) {
				t.Parallel()
				var asked *mcp.ElicitParams
				client := mcp.NewClient(&mcp.Implementation{Name: "otc-interop", Version: "0.0.0"}, &mcp.ClientOptions{
					ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
						asked = req.Params
						return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"reason": "damaged"}}, nil
					},
					CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
						return &mcp.CreateMessageResult{Role: "assistant", Model: "test-model", Content: &mcp.TextContent{Text: "short"}}, nil
					},
				})
				ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
				defer cancel()
				cs, err := client.Connect(ctx, transport(), &mcp.ClientSessionOptions{ProtocolVersion: version})
				require.NoError(t, err)
				defer cs.Close()
				assert.Equal(t, version, cs.InitializeResult().ProtocolVersion)

				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "Shop_Refund", Arguments: map[string]any{"order": "A-1001", "amount": 250}})
				require.NoError(t, err)
				require.False(t, res.IsError, "%s", onlyText(t, res))
				assert.Equal(t, "refunded A-1001 (damaged)", structuredResult(t, res))
				require.NotNil(t, asked, "the client was asked")
				assert.Equal(t, "Refund 250 € to order A-1001?", asked.Message)

				res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "Shop_Summarize", Arguments: map[string]any{"text": "a long text"}})
				require.NoError(t, err)
				require.False(t, res.IsError, "%s", onlyText(t, res))
				assert.Equal(t, "summary: short", structuredResult(t, res))
			})
		}
	}
}

func TestSDKClientWithoutElicitation(t *testing.T) {
	t.Parallel()
	// A client that declared no elicitation capability: over stdio the
	// server knows from initialize and does not ask; over HTTP it asks,
	// and the client refuses the method. Either way the tool learns it
	// cannot ask (otc.ErrInputUnsupported), and as it fails, the call is
	// answered with the missing-capability error naming what to enable.
	reg := askingRegistry(t)
	for name, transport := range askTransports(t, reg) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			client := mcp.NewClient(&mcp.Implementation{Name: "otc-interop", Version: "0.0.0"}, nil)
			ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
			defer cancel()
			cs, err := client.Connect(ctx, transport(), &mcp.ClientSessionOptions{ProtocolVersion: otcmcp.Version20251125})
			require.NoError(t, err)
			defer cs.Close()
			_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "Shop_Refund", Arguments: map[string]any{"order": "A-1001", "amount": 250}})
			var rpcErr *jsonrpc.Error
			require.ErrorAs(t, err, &rpcErr)
			assert.Equal(t, int64(-32021), rpcErr.Code)
			assert.Equal(t, "Missing required client capability: elicitation", rpcErr.Message)
			assert.JSONEq(t, `{"requiredCapabilities":{"elicitation":{}}}`, string(rpcErr.Data))
		})
	}
}

// structuredResult returns a call's {"result": string} structured content.
func structuredResult(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	var v struct {
		Result string `json:"result"`
	}
	require.NoError(t, json.Unmarshal(b, &v), "%s", b)
	return v.Result
}
