package mcp_test

// The stdio transport, over pipes: one JSON object per line, malformed and
// over-long lines, concurrency and cancellation, the end of input and of
// the context, and the log level a client sets on its connection.

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/testkit"
	"github.com/otcgo/otc/mcp"
)

// blocker is a tool, Block.Wait, that runs until it is released or its
// context ends.
type blocker struct {
	started chan struct{} // a value as each call begins
	release chan struct{} // closed to let the calls return
	ended   chan error    // each call's ctx.Err() as it returns; nil when released
}

func newBlocker(t testing.TB, reg *otc.Registry) *blocker {
	t.Helper()
	b := &blocker{started: make(chan struct{}, 8), release: make(chan struct{}), ended: make(chan error, 8)}
	addTool(t, reg, "Block.Wait", func(ctx context.Context, _ struct{}) (string, error) {
		b.started <- struct{}{}
		select {
		case <-ctx.Done():
			b.ended <- ctx.Err()
			return "", ctx.Err()
		case <-b.release:
			b.ended <- nil
			return "released", nil
		}
	})
	return b
}

func TestStdioSession(t *testing.T) {
	t.Parallel()
	c := startStdio(t, t.Context(), newRegistry(t), &mcp.Options{Name: "calc", Version: "1.0.0"})

	c.send(request(1, "initialize", obj{"protocolVersion": mcp.Version20250618, "capabilities": obj{}, "clientInfo": obj{"name": "t", "version": "1"}}))
	r := c.recvResponse()
	assert.Equal(t, "1", string(r.ID))
	assert.JSONEq(t, `{"protocolVersion":"2025-06-18","capabilities":{"logging":{},"tools":{"listChanged":true}},"serverInfo":{"name":"calc","version":"1.0.0"}}`, string(r.Result))

	c.send(request(nil, "notifications/initialized", nil))
	c.send(request("p", "ping", nil))
	r = c.recvResponse()
	assert.Equal(t, `"p"`, string(r.ID), "a notification is not answered")
	assert.Equal(t, `{}`, string(r.Result))

	c.send(request(3, "tools/list", nil))
	var l listResult
	require.NoError(t, json.Unmarshal(c.recvResponse().Result, &l))
	assert.Equal(t, fixtureNames, toolNames(l))

	c.send(request(4, "tools/call", callParams("Calculator_Add", obj{"a": 1, "b": 2}, nil)))
	assert.JSONEq(t, `{"content":[{"type":"text","text":"3"}],"structuredContent":{"result":3}}`, string(c.recvResponse().Result))

	c.send(request(5, "tools/call", callParams("Meta_Inspect", nil, obj{mcp.MetaCallID: "s-1", mcp.MetaContext: obj{"user_id": "u"}})))
	assert.JSONEq(t, `{"call_id":"s-1","user_id":"u","http":false}`, string(decodeCall(t, c.recvResponse().Result).StructuredContent),
		"no HTTP request on stdio")

	c.send(request(6, "server/discover", obj{"_meta": modernMeta(nil)}))
	assert.Contains(t, object(t, c.recvResponse().Result), "supportedVersions")

	c.send(modernCall(7, "Util_Noop", nil, nil))
	assert.JSONEq(t, `{"content":[],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"calc","version":"1.0.0"}},"resultType":"complete"}`, string(c.recvResponse().Result))

	require.NoError(t, c.closeAndWait())
	assert.Empty(t, c.rest())
}

func TestStdioMalformed(t *testing.T) {
	t.Parallel()
	c := startStdio(t, t.Context(), newRegistry(t), nil)
	for _, tc := range []struct {
		name string
		line string
		code int
		id   string
	}{
		{"invalid_json", `{"jsonrpc":"2.0","id":1,"method":"ping"`, -32700, "null"},
		{"two_objects", `{"jsonrpc":"2.0","id":1,"method":"ping"} {"jsonrpc":"2.0","id":2,"method":"ping"}`, -32700, "null"},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, -32600, "null"},
		{"id_float", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, -32600, "null"},
		{"repeated_id", `{"jsonrpc":"2.0","id":4,"method":"ping","id":5}`, -32600, "5"},
		{"no_method", `{"jsonrpc":"2.0","id":6}`, -32600, "6"},
		{"unknown_method", `{"jsonrpc":"2.0","id":3,"method":"nope"}`, -32601, "3"},
		{"params_not_an_object", `{"jsonrpc":"2.0","id":8,"method":"tools/list","params":"x"}`, -32602, "8"},
		{"bad_cursor", `{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{"cursor":"%%"}}`, -32602, "9"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// One connection, in order: each error is followed by the next line.
			c.send(tc.line)
			r := c.recvResponse()
			require.NotNil(t, r.Error)
			assert.Equal(t, tc.code, r.Error.Code)
			assert.Equal(t, tc.id, string(r.ID))
		})
	}
	t.Run("blank_lines_and_crlf", func(t *testing.T) {
		c.send("")
		c.send("   \t")
		c.send(request(10, "ping", nil) + "\r")
		r := c.recvResponse()
		assert.Equal(t, "10", string(r.ID))
		assert.Equal(t, `{}`, string(r.Result))
	})
	t.Run("stray_response", func(t *testing.T) {
		c.send(`{"jsonrpc":"2.0","id":99,"result":{}}`)
		c.send(request(11, "ping", nil))
		assert.Equal(t, "11", string(c.recvResponse().ID), "a response is not answered")
	})
}

func TestStdioLineLength(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t)
	for _, tc := range []struct {
		name  string
		limit int64
		size  int // bytes of the over-long line
	}{
		{"short_limit", 128, 300},
		{"longer_than_read_buffer", 1024, 200 << 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := startStdio(t, t.Context(), reg, &mcp.Options{MaxBodyBytes: tc.limit})
			long := request(1, "ping", obj{"pad": strings.Repeat("x", tc.size)})
			c.send(long)
			r := c.recvResponse()
			require.NotNil(t, r.Error)
			assert.Equal(t, -32600, r.Error.Code)
			assert.Contains(t, r.Error.Message, "limit")
			assert.Equal(t, "null", string(r.ID))

			fits := request(2, "ping", obj{"pad": strings.Repeat("y", int(tc.limit)-60)})
			require.LessOrEqual(t, int64(len(fits)), tc.limit)
			c.send(fits)
			r = c.recvResponse()
			assert.Equal(t, "2", string(r.ID), "the next line is still served")
			assert.Equal(t, `{}`, string(r.Result))
		})
	}
	t.Run("long_line_within_default", func(t *testing.T) {
		t.Parallel()
		c := startStdio(t, t.Context(), reg, nil)
		query := strings.Repeat("q", 300<<10) // several reads of the line
		c.send(request(3, "tools/call", callParams("Geo_Lookup", obj{"query": query}, nil)))
		var out map[string]string
		require.NoError(t, json.Unmarshal(decodeCall(t, c.recvResponse().Result).StructuredContent, &out))
		assert.Equal(t, query, out["query"])
	})
}

func TestStdioConcurrent(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t)
	b := newBlocker(t, reg)
	c := startStdio(t, t.Context(), reg, nil)
	c.send(request(1, "tools/call", callParams("Block_Wait", nil, nil)))
	recvWithin(t, b.started, "the call to start")
	c.send(request(2, "ping", nil))
	assert.Equal(t, "2", string(c.recvResponse().ID), "a slow call does not hold up the next request")
	close(b.release)
	r := c.recvResponse()
	assert.Equal(t, "1", string(r.ID))
	assert.JSONEq(t, `{"result":"released"}`, string(decodeCall(t, r.Result).StructuredContent))
}

func TestStdioEOF(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t)
	b := newBlocker(t, reg)
	c := startStdio(t, t.Context(), reg, nil)
	c.send(request(1, "tools/call", callParams("Block_Wait", nil, nil)))
	recvWithin(t, b.started, "the call to start")
	require.NoError(t, c.in.Close())
	select {
	case err := <-c.done:
		require.FailNow(t, "Serve returned with a call in flight", "%v", err)
	default:
	}
	close(b.release)
	r := c.recvResponse()
	assert.Equal(t, "1", string(r.ID), "the call in flight is answered")
	assert.Nil(t, r.Error)
	assert.NoError(t, c.closeAndWait(), "the end of input is not an error")
	assert.Empty(t, c.rest())
}

func TestStdioEOFWithoutNewline(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	err := mcp.Serve(t.Context(), newRegistry(t), strings.NewReader(request(1, "ping", nil)), &out, nil)
	require.NoError(t, err)
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":1,"result":{}}`, out.String())
	assert.True(t, strings.HasSuffix(out.String(), "}\n"))
}

func TestStdioContextCancel(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t)
	b := newBlocker(t, reg)
	ctx, cancel := context.WithCancel(t.Context())
	c := startStdio(t, ctx, reg, nil)
	c.send(request(1, "tools/call", callParams("Block_Wait", nil, nil)))
	recvWithin(t, b.started, "the call to start")
	cancel()
	err := recvWithin(t, c.done, "Serve to return")
	c.done <- err
	assert.ErrorIs(t, err, context.Canceled)
	assert.ErrorIs(t, recvWithin(t, b.ended, "the call to end"), context.Canceled, "the call in flight is cancelled")
	assert.Empty(t, c.rest(), "and not answered")

	t.Run("already_done", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		c := startStdio(t, ctx, reg, nil)
		assert.ErrorIs(t, recvWithin(t, c.done, "Serve to return"), context.Canceled)
		c.done <- nil
	})
}

func TestStdioCancelledNotification(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		id   any
	}{
		{"integer_id", 7},
		{"string_id", "call-7"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			reg := newRegistry(t)
			b := newBlocker(t, reg)
			c := startStdio(t, t.Context(), reg, nil)
			c.send(request(tc.id, "tools/call", callParams("Block_Wait", nil, nil)))
			recvWithin(t, b.started, "the call to start")

			c.send(request(nil, "notifications/cancelled", obj{"requestId": "other", "reason": "not this one"}))
			c.send(request(nil, "notifications/cancelled", obj{"requestId": tc.id, "reason": "the user gave up"}))
			assert.ErrorIs(t, recvWithin(t, b.ended, "the call to end"), context.Canceled)

			c.send(request(8, "ping", nil))
			r := c.recvResponse()
			assert.Equal(t, "8", string(r.ID), "the cancelled call is not answered; a later request is")
			assert.Equal(t, `{}`, string(r.Result))

			require.NoError(t, c.closeAndWait())
			assert.Empty(t, c.rest(), "the cancelled call is never answered")
		})
	}
}

func TestStdioProgress(t *testing.T) {
	t.Parallel()
	c := startStdio(t, t.Context(), newRegistry(t), nil)
	c.send(request(1, "tools/call", callParams("Progress_Count", nil, obj{"progressToken": "s"})))
	for i := 1; i <= 3; i++ {
		n := decodeNotification(t, c.recv())
		assert.Equal(t, "notifications/progress", n.Method)
		assert.Equal(t, progressParams("s", i), n.Params)
	}
	assert.Equal(t, "1", string(c.recvResponse().ID))

	c.send(request(2, "tools/call", callParams("Progress_Count", nil, nil)))
	assert.Equal(t, "2", string(c.recvResponse().ID), "no token, no progress")
}

func TestStdioLogging(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t)
	all := []string{`debug "debug message"`, `info "info message"`, `notice "notice message"`, `warning "warning message"`, `error {"error":"error message"}`}
	// emit calls Log.Emit and returns the logs sent before its answer.
	emit := func(t *testing.T, c *stdioClient, line string) []string {
		t.Helper()
		c.send(line)
		var ns []notification
		for {
			b := c.recv()
			var probe struct {
				ID json.RawMessage `json:"id"`
			}
			require.NoError(t, json.Unmarshal(b, &probe))
			if probe.ID != nil {
				r := decodeResponse(t, b)
				require.Nil(t, r.Error)
				return logsOf(t, ns)
			}
			ns = append(ns, decodeNotification(t, b))
		}
	}
	setLevel := func(t *testing.T, c *stdioClient, level string) *rpcError {
		t.Helper()
		c.send(request("lvl", "logging/setLevel", obj{"level": level}))
		return c.recvResponse().Error
	}
	call := request(1, "tools/call", callParams("Log_Emit", nil, nil))

	t.Run("set_level", func(t *testing.T) {
		t.Parallel()
		c := startStdio(t, t.Context(), reg, nil)
		assert.Equal(t, all[1:], emit(t, c, call), "info by default")
		require.Nil(t, setLevel(t, c, "error"))
		assert.Equal(t, all[4:], emit(t, c, call))
		require.Nil(t, setLevel(t, c, "debug"))
		assert.Equal(t, all, emit(t, c, call))
		e := setLevel(t, c, "loud")
		require.NotNil(t, e)
		assert.Equal(t, -32602, e.Code)
		assert.Equal(t, all, emit(t, c, call), "an invalid level changes nothing")
		require.Nil(t, setLevel(t, c, "emergency"))
		assert.Empty(t, emit(t, c, call))
	})
	t.Run("options_level", func(t *testing.T) {
		t.Parallel()
		c := startStdio(t, t.Context(), reg, &mcp.Options{LogLevel: slog.LevelWarn})
		assert.Equal(t, all[3:], emit(t, c, call))
	})
	t.Run("per_connection", func(t *testing.T) {
		t.Parallel()
		quiet := startStdio(t, t.Context(), reg, nil)
		loud := startStdio(t, t.Context(), reg, nil)
		require.Nil(t, setLevel(t, quiet, "error"))
		assert.Equal(t, all[1:], emit(t, loud, call), "another connection keeps its level")
	})
	t.Run("modern_uses_meta", func(t *testing.T) {
		t.Parallel()
		c := startStdio(t, t.Context(), reg, nil)
		require.Nil(t, setLevel(t, c, "debug"))
		assert.Empty(t, emit(t, c, modernCall(2, "Log_Emit", nil, nil)), "no level in _meta, no logs")
		assert.Equal(t, all[3:], emit(t, c, modernCall(3, "Log_Emit", nil, obj{"io.modelcontextprotocol/logLevel": "warning"})))
	})
}

func TestStdioModern(t *testing.T) {
	t.Parallel()
	c := startStdio(t, t.Context(), newRegistry(t), nil)
	for _, tc := range []struct {
		name string
		line string
		code int
		data string
	}{
		{"unsupported_version", request(1, "tools/list", obj{"_meta": modernMeta(obj{"io.modelcontextprotocol/protocolVersion": "v999"})}), -32022,
			`{"supported":["2026-07-28","2025-11-25","2025-06-18"],"requested":"v999"}`},
		{"no_capabilities", request(2, "tools/list", obj{"_meta": obj{"io.modelcontextprotocol/protocolVersion": mcp.Version20260728}}), -32602, ``},
		{"discover_without_meta", request(3, "server/discover", nil), -32602, ``},
		{"initialize", request(4, "initialize", obj{"_meta": modernMeta(nil), "protocolVersion": mcp.Version20260728}), -32601, ``},
		{"missing_capability", modernCall(5, "Agent_Sample", nil, nil), -32021, `{"requiredCapabilities":{"sampling":{}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c.send(tc.line)
			r := c.recvResponse()
			require.NotNil(t, r.Error)
			assert.Equal(t, tc.code, r.Error.Code)
			if tc.data != "" {
				assert.JSONEq(t, tc.data, string(r.Error.Data))
			}
		})
	}
	t.Run("list", func(t *testing.T) {
		c.send(request(6, "tools/list", obj{"_meta": modernMeta(nil)}))
		res := object(t, c.recvResponse().Result)
		assert.Equal(t, "complete", res["resultType"])
		assert.Equal(t, "public", res["cacheScope"])
	})
}

func TestStdioLateReport(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	finished := make(chan struct{})
	reg := otc.NewRegistry(&otc.RegistryOptions{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, otc.Register(reg, otc.Tool{
		ID: "Slow.Report", Version: "1.0.0", Description: "Reports after its timeout.", Timeout: 50 * time.Millisecond,
	}, func(ctx context.Context, _ struct{}) (string, error) {
		defer close(finished)
		<-ctx.Done()
		<-release
		otc.ReportProgress(ctx, 1, 1, "late")
		otc.LogToClient(ctx, slog.LevelError, "late log")
		return "late", nil
	}))
	c := startStdio(t, t.Context(), reg, nil)
	c.send(request(1, "tools/call", callParams("Slow_Report", nil, obj{"progressToken": 1})))
	r := c.recvResponse()
	assert.True(t, decodeCall(t, r.Result).IsError, "a timeout is a tool error")
	close(release)
	recvWithin(t, finished, "the tool to return")
	c.send(request(2, "ping", nil))
	assert.Equal(t, "2", string(c.recvResponse().ID), "nothing was sent after the answer")
}

// failingWriter fails every write.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

func TestStdioWriteError(t *testing.T) {
	t.Parallel()
	in := strings.NewReader(request(1, "ping", nil) + "\n" + request(2, "ping", nil) + "\n")
	err := mcp.Serve(t.Context(), newRegistry(t), in, failingWriter{}, nil)
	assert.EqualError(t, err, "broken pipe")
}

// pacedReader hands out the chunks sent to it, one per Read, and tells of
// each Read as it begins: the reader asking for more has done with what it
// had.
type pacedReader struct {
	chunks chan string
	reads  chan struct{}
}

func (r *pacedReader) Read(p []byte) (int, error) {
	r.reads <- struct{}{}
	c, ok := <-r.chunks
	if !ok {
		return 0, io.EOF
	}
	return copy(p, c), nil
}

func TestStdioNothingWrittenAfterReturn(t *testing.T) {
	t.Parallel()
	in := &pacedReader{chunks: make(chan string), reads: make(chan struct{}, 16)}
	defer close(in.chunks)
	var out testkit.SyncBuffer // written by Serve, read by the test
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- mcp.Serve(ctx, newRegistry(t), in, &out, &mcp.Options{MaxBodyBytes: 64}) }()
	recvWithin(t, in.reads, "the first read")
	cancel()
	assert.ErrorIs(t, recvWithin(t, done, "Serve to return"), context.Canceled)

	// A line arrives after Serve returned; the reader, still blocked in
	// Read, gets it. It is too long, but no answer is written now.
	in.chunks <- request(1, "ping", obj{"pad": strings.Repeat("x", 100)}) + "\n"
	recvWithin(t, in.reads, "the line to be read")
	assert.Empty(t, out.String(), "Serve wrote after it returned")
}

// A request over the concurrency limit is answered at once with a busy
// error, so that the lines behind it are still read: a cancellation of a
// running call gets through however many calls are running.
func TestStdioBusy(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t)
	b := newBlocker(t, reg)
	c := startStdio(t, t.Context(), reg, &mcp.Options{MaxConcurrent: 1})
	c.send(request(1, "tools/call", callParams("Block_Wait", nil, nil)))
	recvWithin(t, b.started, "the call to start")

	c.send(request(2, "ping", nil))
	r := c.recvResponse()
	assert.Equal(t, "2", string(r.ID))
	require.NotNil(t, r.Error)
	assert.Equal(t, -32000, r.Error.Code)
	assert.Contains(t, r.Error.Message, "Server busy")

	c.send(request(nil, "notifications/cancelled", obj{"requestId": 1}))
	assert.ErrorIs(t, recvWithin(t, b.ended, "the call to end"), context.Canceled)
	// The slot is given back once the cancelled call has returned; a
	// later request is served.
	require.Eventually(t, func() bool {
		c.send(request(3, "ping", nil))
		return c.recvResponse().Error == nil
	}, waitTimeout, 10*time.Millisecond)
	require.NoError(t, c.closeAndWait())
}
