package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/a2awire"
	"github.com/otcgo/otc/internal/wire"
)

// The paths below a server's root at which mount.All mounts each format
// (internal/wire's, which the mount package exports).
const (
	pathOTC  = wire.PathOTC
	pathMCP  = wire.PathMCP
	pathREST = wire.PathREST
	pathA2A  = wire.PathA2A
	pathCard = a2awire.CardPath
	// pathSSE is where servers of MCP's HTTP+SSE transport most often
	// open their event stream.
	pathSSE = "/sse"
)

// DefaultDialTimeout bounds the looking around [Dial] does when the URL
// does not answer as the first format it tries.
const DefaultDialTimeout = 10 * time.Second

// NoServerError is [Dial]'s failure when nothing at the URL answers as a
// tool server. It names what was tried.
type NoServerError struct {
	URL string
	// Tried lists each format and URL tried, in order, with what it
	// answered.
	Tried []Attempt
}

// Attempt is one format tried at one URL, and why it was not that.
type Attempt struct {
	Format Format
	URL    string
	Err    error
}

// Error names the first answer and the URLs tried.
func (e *NoServerError) Error() string {
	var urls []string
	for _, a := range e.Tried {
		urls = append(urls, string(a.Format)+" at "+a.URL)
	}
	first := ""
	if len(e.Tried) > 0 {
		first = ": " + brief(e.Tried[0].Err)
	}
	return fmt.Sprintf("otc client: no tool server answers at %s%s (tried %s); give the URL a server's OTC handler, MCP endpoint, REST view or A2A agent is mounted at, or set Options.Format",
		e.URL, first, strings.Join(urls, ", "))
}

// Dial returns a client for the tool server at rawURL, and when
// Options.Format is empty it finds the server's format first, by reading
// its catalog:
//
//   - a URL whose path ends with a format's mount (/otc, /mcp, /v1, /a2a,
//     as mount.All mounts them), with /sse (MCP's HTTP+SSE transport) or
//     with /.well-known/agent-card.json is tried as that format first;
//   - then as an OTC server (its catalog at rawURL/tools);
//   - when that answers something other than a tool server (a 404 page,
//     an HTML page: a [*ResponseError]), as an MCP endpoint (Streamable
//     HTTP, or HTTP+SSE: see [Options.MCPTransport]) and as a REST view
//     at rawURL, then at the mounts below it (/otc, /mcp, /v1), as the
//     event stream of an MCP server of HTTP+SSE at /sse, and last as an
//     A2A agent at rawURL and at /a2a below it (last, since a server's
//     root may serve the card of an agent mounted below it).
//
// A refusal of the caller (401, 403), a busy server or a transport
// failure ends the search with that error: the server is there, and
// speaks the format tried. [Client.Format] and [Client.URL] say what was
// found; with nothing found the error is a [*NoServerError]. Looking
// around is bounded by [DefaultDialTimeout] and ctx; the origin of rawURL
// bounds every URL tried.
func Dial(ctx context.Context, rawURL string, opts *Options) (*Client, error) {
	o := Options{}
	if opts != nil {
		o = *opts
	}
	if o.Format != "" {
		return New(rawURL, &o)
	}
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		// New says what is wrong with it.
		return New(rawURL, &o)
	}
	base := strings.TrimRight(rawURL, "/")
	type candidate struct {
		url string
		f   Format
	}
	var first []candidate
	switch path := strings.TrimRight(u.Path, "/"); {
	case strings.HasSuffix(path, pathMCP), strings.HasSuffix(path, pathSSE):
		first = []candidate{{base, FormatMCP}}
	case strings.HasSuffix(path, pathREST):
		first = []candidate{{base, FormatREST}}
	case strings.HasSuffix(path, pathA2A):
		first = []candidate{{base, FormatA2A}}
	case strings.HasSuffix(path, pathCard):
		first = []candidate{{strings.TrimSuffix(base, pathCard), FormatA2A}}
	}
	rest := []candidate{
		{base, FormatOTC},
		{base, FormatMCP},
		{base, FormatREST},
		{base + pathOTC, FormatOTC},
		{base + pathMCP, FormatMCP},
		{base + pathREST, FormatREST},
		{base + pathSSE, FormatMCP},
		{base, FormatA2A},
		{base + pathA2A, FormatA2A},
	}
	ctx, cancel := context.WithTimeout(ctx, DefaultDialTimeout)
	defer cancel()
	notFound := &NoServerError{URL: rawURL}
	seen := map[candidate]bool{}
	for _, cand := range append(first, rest...) {
		if seen[cand] {
			continue
		}
		seen[cand] = true
		try := o
		try.Format = cand.f
		c, err := New(cand.url, &try)
		if err != nil {
			return nil, err
		}
		if _, err = c.ListTools(ctx); err == nil || !notThisFormat(err) {
			return c, nil
		}
		_ = c.Close()
		notFound.Tried = append(notFound.Tried, Attempt{Format: cand.f, URL: cand.url, Err: err})
		if ctx.Err() != nil {
			break
		}
	}
	return nil, notFound
}

// notThisFormat reports whether a failure to list tools says the URL is
// not a server of the format tried (as opposed to a server of it that
// refuses the caller, is busy, or cannot be reached).
func notThisFormat(err error) bool {
	if e, ok := errors.AsType[*otc.Error](err); ok {
		switch e.Code {
		case otc.CodeUnauthenticated, otc.CodeForbidden, otc.CodeRateLimited, otc.CodeUnavailable:
			return false
		}
		return true
	}
	if re, ok := errors.AsType[*ResponseError](err); ok {
		return re.StatusCode != http.StatusUnauthorized && re.StatusCode != http.StatusForbidden
	}
	if _, ok := errors.AsType[*RedirectError](err); ok {
		return false // a server answered, and the client will not follow it
	}
	if _, ok := errors.AsType[*OriginError](err); ok {
		return false
	}
	if _, ok := errors.AsType[*RPCError](err); ok {
		return true
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return false // the server cannot be reached: no other URL of it will be
	}
	return true // an answer the format's client could not read
}

// brief is the first line of an error, cut short.
func brief(err error) string {
	if err == nil {
		return "ok"
	}
	s, _, _ := strings.Cut(err.Error(), "\n")
	return truncate(s, 160)
}
