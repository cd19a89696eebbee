package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/jsonrpc"
	"github.com/otcgo/otc/internal/mcpwire"
)

// This file is the MCP handshake: the versions the client speaks, and
// server/discover or initialize, once per session.

// codeUnsupportedVersion is 2026-07-28's UnsupportedProtocolVersion,
// whose data lists the versions the server speaks.
const codeUnsupportedVersion = -32022

// offers reports whether an UnsupportedProtocolVersion error's data lists
// version among those the server speaks.
func offers(data json.RawMessage, version string) bool {
	var d struct {
		Supported []string `json:"supported"`
	}
	return json.Unmarshal(data, &d) == nil && slices.Contains(d.Supported, version)
}

// sameAnswer reports whether two requests failed with the same
// unexpected answer (a 404 to both, say), which is then said once.
func sameAnswer(a, b error) bool {
	ra, okA := errors.AsType[*ResponseError](a)
	rb, okB := errors.AsType[*ResponseError](b)
	return okA && okB && ra.StatusCode == rb.StatusCode && ra.URL == rb.URL
}

// ensure makes the handshake once: server/discover for 2026-07-28, which
// is stateless, else initialize (with its session, over HTTP, when the
// server keeps one) and notifications/initialized.
func (s *mcpSession) ensure(ctx context.Context, k *call) error {
	if s.ver() != nil {
		return nil
	}
	select {
	case s.shaking <- struct{}{}:
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	defer func() { <-s.shaking }()
	if s.ver() != nil {
		return nil
	}
	d := s.c.opts.HandshakeTimeout
	if d == 0 {
		d = DefaultHandshakeTimeout
	}
	if d < 0 {
		return s.handshake(ctx, k)
	}
	hctx, cancel := context.WithTimeoutCause(ctx, d,
		fmt.Errorf("the server did not answer the MCP handshake within %s (Options.HandshakeTimeout): %w", d, context.DeadlineExceeded))
	defer cancel()
	err := s.handshake(hctx, k)
	if err != nil && ctx.Err() == nil && hctx.Err() != nil {
		return context.Cause(hctx) // the bound, not the transport's words for it
	}
	return err
}

// overSSE reports whether the session speaks the HTTP+SSE transport,
// which has no stateless generation: its handshake is initialize.
func (s *mcpSession) overSSE() bool {
	_, ok := s.conn().(*mcpSSE)
	return ok
}

// fallback is MCP's backward compatibility, in one place: a Streamable
// HTTP server refused initialize's POST as an HTTP+SSE server would
// (failed); when a GET of the URL opens an event stream that names its
// endpoint, the session speaks HTTP+SSE from then on, and so do the
// client's next sessions (its transport is found to be SSE). When no
// event stream opens, the refusal is the answer. The handshake is held.
func (s *mcpSession) fallback(ctx context.Context, k *call, params map[string]any, out any, failed error) error {
	h, ok := s.conn().(*mcpHTTP)
	if !ok {
		return failed
	}
	l := &mcpSSE{c: s.c, url: h.url}
	s.link.Store(&connRef{l})
	if err := s.rpc(ctx, k, nil, "initialize", params, out); err != nil {
		_ = l.close()
		s.link.Store(&connRef{h})
		if errors.Is(err, errNoEventStream) {
			return failed
		}
		return fmt.Errorf("%w (the server refused a Streamable HTTP POST: %s)", err, brief(failed))
	}
	s.c.reach.found(SSE{URL: h.url})
	return nil
}

// handshake is ensure's handshake, the handshake held: the stateless
// generation's server/discover, unless a version of sessions is pinned,
// and then, if the server does not speak it, initialize.
func (s *mcpSession) handshake(ctx context.Context, k *call) error {
	pinned := mcpwire.Lookup(s.c.opts.MCPVersion) // nil for none: checked by New
	var discoverErr error
	if (pinned == nil || pinned.Stateless) && !s.overSSE() {
		latest := mcpwire.Latest
		var d struct {
			SupportedVersions []string `json:"supportedVersions"`
			Capabilities      struct {
				Extensions map[string]json.RawMessage `json:"extensions"`
				Tools      toolsCapability            `json:"tools"`
			} `json:"capabilities"`
		}
		discoverErr = s.rpc(ctx, k, latest, "server/discover", map[string]any{}, &d)
		if e, ok := errors.AsType[*RPCError](discoverErr); ok && e.Code == codeUnsupportedVersion && offers(e.Data, latest.Name) {
			// Refused, though the server names this version among those
			// it speaks: asked once more, as the version's negotiation
			// says.
			discoverErr = s.rpc(ctx, k, latest, "server/discover", map[string]any{}, &d)
		}
		if discoverErr == nil && slices.Contains(d.SupportedVersions, latest.Name) {
			_, s.tasks = d.Capabilities.Extensions[mcpwire.ExtensionTasks]
			_, skills := d.Capabilities.Extensions[mcpwire.ExtensionSkills]
			s.skills.Store(skills)
			s.dynamic.Store(d.Capabilities.Tools.Dynamic)
			s.version.Store(latest)
			return nil
		}
		if ctx.Err() != nil {
			return discoverErr
		}
		if pinned != nil {
			if discoverErr == nil {
				discoverErr = fmt.Errorf("server/discover lists versions %q", d.SupportedVersions)
			}
			return fmt.Errorf("the server does not speak MCP %s (Options.MCPVersion): %w", pinned.Name, discoverErr)
		}
		if e, ok := errors.AsType[*otc.Error](discoverErr); ok && e.Code != otc.CodeServerError {
			return discoverErr // a refusal of the caller, which initialize would get too
		}
	}
	want := pinned
	if want == nil {
		want = mcpwire.LatestSession
	}
	var init struct {
		ProtocolVersion string `json:"protocolVersion"`
		Capabilities    struct {
			Extensions map[string]json.RawMessage `json:"extensions"`
			Tools      toolsCapability            `json:"tools"`
		} `json:"capabilities"`
	}
	params := map[string]any{
		"protocolVersion": want.Name,
		"capabilities":    s.caps,
		"clientInfo":      clientInfo,
	}
	err := s.rpc(ctx, k, nil, "initialize", params, &init)
	if lr, ok := errors.AsType[*legacyRefused](err); ok {
		err = s.fallback(ctx, k, params, &init, lr.failed)
	}
	if err != nil {
		if discoverErr != nil && !sameAnswer(err, discoverErr) {
			d := discoverErr.Error()
			if !strings.HasPrefix(d, "server/discover") {
				d = "server/discover: " + d
			}
			return fmt.Errorf("%w (and %s)", err, d)
		}
		return err
	}
	v := mcpwire.Lookup(init.ProtocolVersion)
	switch {
	case v == nil || v.Stateless:
		return fmt.Errorf("the server answered initialize with MCP version %q, which the client does not speak (it speaks %s)",
			truncate(init.ProtocolVersion, 32), mcpwire.Names(nil, "and"))
	case pinned != nil && v != pinned:
		return fmt.Errorf("the server answered initialize with MCP version %q, not %s (Options.MCPVersion)", v.Name, pinned.Name)
	}
	s.version.Store(v)
	s.dynamic.Store(init.Capabilities.Tools.Dynamic)
	_, skills := init.Capabilities.Extensions[mcpwire.ExtensionSkills]
	s.skills.Store(skills)
	body, _ := jsonrpc.Notification("notifications/initialized", nil)
	if err := s.conn().send(ctx, s, k, body); err != nil {
		return err
	}
	s.conn().started(s, v.Name, k.header())
	if l := s.c.opts.LogLevel; l != "" {
		// A server without logging refuses it; its messages, if any,
		// still come.
		_ = s.rpc(ctx, k, v, "logging/setLevel", map[string]any{"level": l}, nil)
	}
	return nil
}

// toolsCapability is the part of a server's tools capability the client
// reads: dynamic, a tools/list that takes a query (SEP-1821).
type toolsCapability struct {
	Dynamic bool `json:"dynamic"`
}
