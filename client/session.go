package client

import (
	"context"
	"errors"
	"fmt"

	"github.com/otcgo/otc"
)

// Session is one session of an MCP server: over HTTP, a session with its
// own handshake, Mcp-Session-Id and event stream; over stdio, a process
// of its own. Beside the tools every format has, it reads what MCP alone
// has: resources and their templates, prompts, the completion of their
// arguments, subscriptions. A client of an MCP server holds one
// ([Client.MCP]), and makes more with [Client.NewSession], on its own
// options, handlers and credentials. It is safe for concurrent use.
type Session struct {
	c *Client // the client whose transport is s, sharing the configuration and credentials
	s *mcpSession
}

// Caller calls tools: a [*Client], or a [*Session] of one.
type Caller interface {
	Call(ctx context.Context, toolID string, input any, opts *CallOptions) (*Result, error)
}

var (
	_ Caller = (*Client)(nil)
	_ Caller = (*Session)(nil)
)

// MCP returns the session the client speaks MCP over, or nil when its
// server speaks another format (which has no resources, prompts or
// sessions). Each call returns a handle of the same session.
func (c *Client) MCP() *Session {
	if s, ok := c.t.(*mcpSession); ok {
		return &Session{c: c, s: s}
	}
	return nil
}

// NewSession returns another session of the client's MCP server, with the
// client's options, handlers and credentials: of an MCP server over
// HTTP, a session with its own handshake, Mcp-Session-Id and event
// stream; of one over stdio, a process of its own, started from a copy
// of the command [NewStdio] was given (a command made with
// exec.CommandContext starts without its context). Over HTTP it makes no
// request.
//
// The credentials are shared, not copied: an OAuth client's discovery and
// tokens serve the client and all its sessions, so that many sessions of
// one server cost one discovery and one token. Closing a session ends it
// alone. A client of another format has no sessions: the error wraps
// errors.ErrUnsupported.
func (c *Client) NewSession() (*Session, error) {
	if c.format != FormatMCP {
		return nil, fmt.Errorf("otc client: the server speaks %s, which keeps no sessions (MCP does): %w", c.format, errors.ErrUnsupported)
	}
	n := *c
	if err := n.newSession(); err != nil {
		return nil, err
	}
	return n.MCP(), nil
}

// ListTools lists the server's tools, as [Client.ListTools] does.
func (ss *Session) ListTools(ctx context.Context) ([]otc.ToolDefinition, error) {
	return ss.c.ListTools(ctx)
}

// SearchTools searches the server's tools, as [Client.SearchTools] does.
func (ss *Session) SearchTools(ctx context.Context, query string, limit int) ([]otc.ToolDefinition, error) {
	return ss.c.SearchTools(ctx, query, limit)
}

// Call calls a tool, as [Client.Call] does.
func (ss *Session) Call(ctx context.Context, toolID string, input any, opts *CallOptions) (*Result, error) {
	return ss.c.Call(ctx, toolID, input, opts)
}

// Health checks the server, as [Client.Health] does.
func (ss *Session) Health(ctx context.Context) error { return ss.c.Health(ctx) }

// Unreached reports whether err says a call never reached the server, as
// [Client.Unreached] does.
func (ss *Session) Unreached(err error) bool { return ss.c.Unreached(err) }

// ProtocolVersion is the MCP version the session speaks, once its
// handshake is done; "" before.
func (ss *Session) ProtocolVersion() string {
	if v := ss.s.ver(); v != nil {
		return v.Name
	}
	return ""
}

// Close ends the session: its process over stdio (asked to exit by
// closing its standard input, then sent SIGTERM and SIGKILL after a
// grace, with the processes it started), or, over HTTP, the session
// (ended with DELETE). It is safe to call more than once. Closing the
// client's own session ([Client.MCP]) closes the client.
func (ss *Session) Close() error { return ss.c.Close() }

// ExchangeToken gets a token for the server in exchange for subject's, as
// [Client.ExchangeToken] does, from the tokens the session shares with
// its client.
func (ss *Session) ExchangeToken(ctx context.Context, subject string) (string, error) {
	return ss.c.ExchangeToken(ctx, subject)
}
