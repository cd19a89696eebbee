package client

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"sync"
)

// A Transport is how a client reaches an MCP server: [StreamableHTTP],
// [SSE] or [Command]. [Connect] takes one; [New] with Options.Format
// FormatMCP speaks StreamableHTTP (or SSE, by Options.MCPTransport) at its
// URL, and [NewStdio] a Command.
type Transport interface {
	// describe names the transport in errors.
	describe() string
}

// StreamableHTTP is MCP's Streamable HTTP transport at URL, the server's
// endpoint. A server that refuses the POST of initialize with a 4xx, as a
// server of the HTTP+SSE transport of 2024-11-05 does, and whose URL opens
// an event stream that names the endpoint to POST to, is spoken to over
// HTTP+SSE instead, as MCP's backward compatibility asks: found once, by
// a client's first session, for all its sessions.
type StreamableHTTP struct{ URL string }

// SSE is the HTTP+SSE transport of 2024-11-05 alone, at URL, its event
// stream's (often /sse). Over it the client speaks the versions of
// sessions, not 2026-07-28.
type SSE struct{ URL string }

// Command is an MCP server run as a process, spoken to over its standard
// input and output, as [NewStdio] describes: Cmd is not yet started, with
// Stdin, Stdout and Stderr nil.
type Command struct{ Cmd *exec.Cmd }

func (t StreamableHTTP) describe() string { return "Streamable HTTP at " + t.URL }
func (t SSE) describe() string            { return "HTTP+SSE at " + t.URL }
func (t Command) describe() string {
	if t.Cmd == nil {
		return "a command"
	}
	return "the command " + t.Cmd.Path
}

// Connect returns a session of the MCP server t reaches, with opts (nil
// for the defaults; its Format and MCPTransport are t's), its handshake
// done within ctx: a server that cannot be reached, or speaks no version
// the client does, is an error here rather than at the first call.
// Closing the session closes the client it was made with.
func Connect(ctx context.Context, t Transport, opts *Options) (*Session, error) {
	o := Options{}
	if opts != nil {
		o = *opts
	}
	var c *Client
	var err error
	switch t := t.(type) {
	case StreamableHTTP:
		o.Format, o.MCPTransport = FormatMCP, ""
		c, err = New(t.URL, &o)
	case SSE:
		o.Format, o.MCPTransport = FormatMCP, transportSSE
		c, err = New(t.URL, &o)
	case Command:
		c, err = NewStdio(t.Cmd, &o)
	default:
		return nil, errors.New("otc client: Connect needs a transport: StreamableHTTP, SSE or Command")
	}
	if err != nil {
		return nil, err
	}
	s := c.MCP()
	if err := s.s.ensure(ctx, nil); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("otc client: connecting over %s: %w", t.describe(), err)
	}
	return s, nil
}

// reach is the transport of a client's sessions, shared by the client and
// its sessions: the one it was given, or, once the fallback found the
// server speaks HTTP+SSE, that.
type reach struct {
	mu sync.Mutex
	t  Transport
}

func (r *reach) get() Transport {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.t
}

// found records the transport the server turned out to speak.
func (r *reach) found(t Transport) {
	r.mu.Lock()
	r.t = t
	r.mu.Unlock()
}

// newSession starts a session of the client's server over its
// transport: over HTTP it makes no request; over stdio it starts a
// process, from a copy of the command.
func (c *Client) newSession() error {
	switch t := c.reach.get().(type) {
	case Command:
		return c.startStdio(copyCommand(t.Cmd))
	case SSE:
		c.t = newMCPSession(c, &mcpSSE{c: c, url: t.URL})
	case StreamableHTTP:
		c.t = newMCPSession(c, &mcpHTTP{c: c, url: t.URL})
	}
	return nil
}
