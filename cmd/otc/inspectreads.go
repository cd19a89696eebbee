package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/internal/jsonrpc"
)

// What the inspector shows of an MCP server beside its tools: its
// resources and templates, read; its prompts, rendered; their arguments,
// completed as one types. The page asks for them here:
//
//	GET  /api/readables?server=mcp   the resources, templates and prompts
//	POST /api/read                   {"server", "uri"}: the contents
//	POST /api/prompt                 {"server", "name", "arguments"}: the messages
//	POST /api/complete               {"server", "ref", "argument", "value", "chosen"}: the values
//
// Only an MCP server (--mcp, or --stdio) has them; another answers none.

// readableRequest is the body of the POST endpoints above.
type readableRequest struct {
	Server    string               `json:"server"`
	URI       string               `json:"uri,omitempty"`
	Name      string               `json:"name,omitempty"`
	Arguments map[string]string    `json:"arguments,omitempty"`
	Ref       client.CompletionRef `json:"ref"`
	Argument  string               `json:"argument,omitempty"`
	Value     string               `json:"value,omitempty"`
	Chosen    map[string]string    `json:"chosen,omitempty"`
}

// readable is whether the server of kind has resources and prompts: an
// MCP server, over HTTP or --stdio.
func readable(kind string) bool { return kind == "mcp" }

// serveReadables lists a server's resources, templates and prompts.
func (in *inspector) serveReadables(w http.ResponseWriter, r *http.Request) {
	t, ok := in.getTarget(w, r)
	if !ok {
		return
	}
	if !readable(t.Kind) {
		writeInspectJSON(w, http.StatusOK, map[string]any{"resources": []client.Resource{}, "prompts": []client.Prompt{}})
		return
	}
	in.withServer(w, r, t, func(ctx context.Context, cl *client.Client) (any, error) {
		c := cl.MCP()
		if c == nil {
			return map[string]any{"resources": []client.Resource{}, "prompts": []client.Prompt{}}, nil
		}
		resources, err := c.ListResources(ctx)
		if err != nil && !methodMissing(err) {
			return nil, err
		}
		prompts, err := c.ListPrompts(ctx)
		if err != nil && !methodMissing(err) {
			return nil, err
		}
		if resources == nil {
			resources = []client.Resource{}
		}
		if prompts == nil {
			prompts = []client.Prompt{}
		}
		return map[string]any{"resources": resources, "prompts": prompts}, nil
	})
}

// serveRead, servePrompt and serveComplete answer the page's POSTs.
func (in *inspector) serveRead(w http.ResponseWriter, r *http.Request) {
	in.readablePost(w, r, func(ctx context.Context, c *client.Session, q readableRequest) (any, error) {
		contents, err := c.ReadResource(ctx, q.URI)
		return map[string]any{"contents": contents}, err
	})
}

func (in *inspector) servePrompt(w http.ResponseWriter, r *http.Request) {
	in.readablePost(w, r, func(ctx context.Context, c *client.Session, q readableRequest) (any, error) {
		res, err := c.GetPrompt(ctx, q.Name, q.Arguments)
		return map[string]any{"result": res}, err
	})
}

func (in *inspector) serveComplete(w http.ResponseWriter, r *http.Request) {
	in.readablePost(w, r, func(ctx context.Context, c *client.Session, q readableRequest) (any, error) {
		if q.Ref.Type != client.PromptRef("").Type && q.Ref.Type != client.TemplateRef("").Type {
			return nil, fmt.Errorf("ref.type is %q: it is a prompt's or a resource template's", q.Ref.Type)
		}
		values, more, err := c.Complete(ctx, q.Ref, q.Argument, q.Value, q.Chosen)
		if values == nil {
			values = []string{}
		}
		return map[string]any{"values": values, "more": more}, err
	})
}

// readablePost reads the body of a POST above, and answers it with do.
func (in *inspector) readablePost(w http.ResponseWriter, r *http.Request, do func(context.Context, *client.Session, readableRequest) (any, error)) {
	var q readableRequest
	if !readPost(w, r, &q, "one this endpoint takes") {
		return
	}
	t, ok := in.target(q.Server)
	if !ok || !readable(t.Kind) {
		refuse(w, http.StatusBadRequest, "server %q is not an MCP server this inspector was started with", q.Server)
		return
	}
	release, ok := in.slot(w)
	if !ok {
		return
	}
	defer release()
	in.withServer(w, r, t, func(ctx context.Context, c *client.Client) (any, error) {
		s := c.MCP()
		if s == nil {
			return nil, fmt.Errorf("server %q does not speak MCP", q.Server)
		}
		return do(ctx, s, q)
	})
}

// withServer connects to t, runs f, and answers with what it returned,
// or with its failure (the server's JSON-RPC error as it came, or what
// describeFailure makes of another) and the exchanges.
func (in *inspector) withServer(w http.ResponseWriter, r *http.Request, t inspectTarget, f func(context.Context, *client.Client) (any, error)) {
	rec := &recorder{base: in.base}
	srv, err := in.connect(t, rec, nil)
	if err != nil {
		refuse(w, http.StatusInternalServerError, "%v", err)
		return
	}
	defer srv.close()
	ctx, cancel := context.WithTimeout(r.Context(), time.Minute)
	defer cancel()
	out, err := f(ctx, srv.c)
	if err != nil {
		fail := describeFailure(err, rec)
		var rpc *client.RPCError
		if errors.As(err, &rpc) {
			fail.Code, fail.Message = "rpc", rpc.Message
		}
		writeInspectJSON(w, http.StatusBadGateway, map[string]any{"error": fail, "exchanges": rec.list()})
		return
	}
	writeInspectJSON(w, http.StatusOK, out)
}

// methodMissing reports whether err is an MCP server's answer that it
// has no such method: a server without resources or prompts.
func methodMissing(err error) bool {
	var rpc *client.RPCError
	return errors.As(err, &rpc) && rpc.Code == jsonrpc.CodeMethodNotFound
}
