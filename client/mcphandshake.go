package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

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

// checkMCPVersion checks Options.MCPVersion.
func checkMCPVersion(v string) error {
	switch v {
	case "", mcpwire.V20260728, mcpwire.V20251125, mcpwire.V20250618:
		return nil
	}
	return fmt.Errorf("otc client: Options.MCPVersion %q is not one the client speaks: %s, %s or %s", v, mcpwire.V20260728, mcpwire.V20251125, mcpwire.V20250618)
}

// ensure makes the handshake once: server/discover for 2026-07-28, which
// is stateless, else initialize (with its session, over HTTP, when the
// server keeps one) and notifications/initialized.
func (s *mcpSession) ensure(ctx context.Context, k *call) error {
	if s.ver() != "" {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ver() != "" {
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

// handshake is ensure's handshake, s.mu held.
func (s *mcpSession) handshake(ctx context.Context, k *call) error {
	pinned := s.c.opts.MCPVersion
	var discoverErr error
	if pinned == "" || pinned == mcpwire.V20260728 {
		var d struct {
			SupportedVersions []string `json:"supportedVersions"`
			Capabilities      struct {
				Extensions map[string]json.RawMessage `json:"extensions"`
			} `json:"capabilities"`
		}
		discoverErr = s.rpc(ctx, k, mcpwire.V20260728, "server/discover", map[string]any{}, &d)
		if e, ok := errors.AsType[*RPCError](discoverErr); ok && e.Code == codeUnsupportedVersion && offers(e.Data, mcpwire.V20260728) {
			// Refused, though the server names this version among those
			// it speaks: asked once more, as the version's negotiation
			// says.
			discoverErr = s.rpc(ctx, k, mcpwire.V20260728, "server/discover", map[string]any{}, &d)
		}
		if discoverErr == nil && slices.Contains(d.SupportedVersions, mcpwire.V20260728) {
			_, s.tasks = d.Capabilities.Extensions[mcpwire.ExtensionTasks]
			v := mcpwire.V20260728
			s.version.Store(&v)
			return nil
		}
		if ctx.Err() != nil {
			return discoverErr
		}
		if pinned == mcpwire.V20260728 {
			if discoverErr == nil {
				discoverErr = fmt.Errorf("server/discover lists versions %q", d.SupportedVersions)
			}
			return fmt.Errorf("the server does not speak MCP %s (Options.MCPVersion): %w", mcpwire.V20260728, discoverErr)
		}
		if e, ok := errors.AsType[*otc.Error](discoverErr); ok && e.Code != otc.CodeServerError {
			return discoverErr // a refusal of the caller, which initialize would get too
		}
	}
	want := pinned
	if want == "" {
		want = mcpwire.V20251125
	}
	var init struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	params := map[string]any{
		"protocolVersion": want,
		"capabilities":    s.caps,
		"clientInfo":      clientInfo,
	}
	if err := s.rpc(ctx, k, "", "initialize", params, &init); err != nil {
		if discoverErr != nil {
			return fmt.Errorf("%w (and server/discover: %v)", err, discoverErr)
		}
		return err
	}
	switch v := init.ProtocolVersion; {
	case v == mcpwire.V20251125 || v == mcpwire.V20250618:
		if pinned != "" && v != pinned {
			return fmt.Errorf("the server answered initialize with MCP version %q, not %s (Options.MCPVersion)", v, pinned)
		}
	default:
		return fmt.Errorf("the server answered initialize with MCP version %q, which the client does not speak (it speaks %s, %s and %s)",
			truncate(v, 32), mcpwire.V20260728, mcpwire.V20251125, mcpwire.V20250618)
	}
	v := init.ProtocolVersion
	s.version.Store(&v)
	body, _ := jsonrpc.Notification("notifications/initialized", nil)
	if err := s.conn.send(ctx, s, k, body); err != nil {
		return err
	}
	s.conn.started(s, v)
	if l := s.c.opts.LogLevel; l != "" {
		// A server without logging refuses it; its messages, if any,
		// still come.
		_ = s.rpc(ctx, k, v, "logging/setLevel", map[string]any{"level": l}, nil)
	}
	return nil
}
