package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/mount"
)

// This file finds the wire format of a URL given without --mcp or --rest.

// detectTimeout bounds the looking around that detect does when the URL
// does not answer as an OTC server.
const detectTimeout = 10 * time.Second

// detect returns the server at url when no flag names its protocol. The
// URL is taken for an OTC server when its catalog answers as one (or
// refuses the request as one: a 401 is an OTC answer too). When it
// answers something else (a 404 page, an HTML page), the command looks
// for the server: an MCP endpoint or a REST view at the URL itself, then
// the documented mounts below it (/otc, /mcp, /v1). It goes on with the
// one it finds, saying so on note with the flag or URL to give next time,
// and fails with that advice when it finds none.
func (c *common) detect(ctx context.Context, url string, note io.Writer) (server, error) {
	first, err := c.serverAs(url)
	if err != nil {
		return nil, err
	}
	defs, err := first.list(ctx)
	var re *client.ResponseError
	if !errors.As(err, &re) {
		// An OTC server, or one that cannot be reached: a transport
		// failure is reported as it is, by the command's own request.
		if err == nil {
			return listed{first, defs}, nil
		}
		return first, nil
	}
	ctx, cancel := context.WithTimeout(ctx, detectTimeout)
	defer cancel()
	base := strings.TrimSuffix(url, "/")
	for _, cand := range []struct {
		url string
		f   format
	}{
		{url, formatMCP},
		{base, formatREST},
		{base + mount.PrefixOTC, formatOTC},
		{base + mount.PrefixMCP, formatMCP},
		{base + mount.PrefixREST, formatREST},
		// Last, since a mux's root serves the card of an agent mounted
		// below it: the formats above are the ones a URL names itself.
		{base, formatA2A},
		{base + mount.PrefixA2A, formatA2A},
	} {
		if c.jwtSecret != "" && cand.f != formatOTC {
			continue // an HS256 signer speaks OTC only
		}
		try := *c
		try.as, try.formats = cand.f, 1
		srv, err := try.serverAs(cand.url)
		if err != nil {
			continue
		}
		if _, err := srv.list(ctx); err != nil {
			continue
		}
		c.as, c.formats = cand.f, 1
		if cand.url == url || cand.url == base {
			fmt.Fprintf(note, "otc: %s is %s, not an OTC server; going on as with %s(give it to skip this check)\n", url, cand.f.kind(), cand.f.flag())
		} else {
			fmt.Fprintf(note, "otc: %s is not a tool server, but %s is %s; going on with that URL (give %s%s next time)\n", url, cand.url, cand.f.kind(), cand.f.flag(), cand.url)
		}
		return srv, nil
	}
	status := strings.TrimSpace(fmt.Sprintf("%d %s", re.StatusCode, http.StatusText(re.StatusCode)))
	return nil, &noToolServer{fmt.Sprintf("no tool server answers at %s: GET %s/tools answered %s, not an OTC catalog, and no MCP endpoint, REST view or A2A agent answers there or at %s, %s, %s or %s. "+
		"Give the URL the server's OTC handler is mounted at, or --mcp, --rest or --a2a with the URL of its MCP endpoint, REST view or A2A agent",
		url, base, status, base+mount.PrefixOTC, base+mount.PrefixMCP, base+mount.PrefixREST, base+mount.PrefixA2A)}
}

// noToolServer is detect's failure: nothing at the URL answers as a tool
// server. The command exits with exitTransport, as for any answer that is
// not the protocol.
type noToolServer struct{ msg string }

func (e *noToolServer) Error() string { return e.msg }

// serverFailed prints the failure of common.server for cmd and returns
// the exit code: exitTransport when nothing answered as a tool server,
// exitBadInput for options that do not go together.
func (e *cli) serverFailed(cmd string, err error) int {
	fmt.Fprintf(e.stderr, "otc %s: %v\n", cmd, err)
	var nts *noToolServer
	if errors.As(err, &nts) {
		return exitTransport
	}
	return exitBadInput
}

// format is a wire format the command speaks.
type format uint8

const (
	formatOTC format = iota // the zero value: no flag names another
	formatMCP
	formatREST
	formatA2A
)

// kind names the format for a note.
func (f format) kind() string {
	return [...]string{"an OTC server", "an MCP endpoint", "a REST view", "an A2A agent"}[f]
}

// flag is the flag that names the format, with a space, or "".
func (f format) flag() string {
	return [...]string{"", "--mcp ", "--rest ", "--a2a "}[f]
}

// listed is an OTC server whose catalog detect has read already: the
// command's first use of it reads the catalog from there rather than
// asking again.
type listed struct {
	server
	defs []otc.ToolDefinition
}

func (l listed) list(context.Context) ([]otc.ToolDefinition, error) { return l.defs, nil }

func (l listed) describe(_ context.Context, tool string) (otc.ToolDefinition, bool, error) {
	d, ok := findTool(l.defs, tool)
	return d, ok, nil
}
