package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/otcgo/otc"
)

// This file is OTC over HTTP: the catalog, the health check and calls of
// an OTC/OXP server, in its envelope.

// list is ListTools of an OTC server.
func (w otcWire) list(ctx context.Context) ([]otc.ToolDefinition, error) {
	c := w.c
	resp, err := c.do(ctx, http.MethodGet, "/tools", nil)
	if err != nil {
		return nil, fmt.Errorf("otc client: list tools: %w", err)
	}
	if resp.status != http.StatusOK {
		return nil, fmt.Errorf("otc client: list tools: %w", resp.failure())
	}
	defs, err := decodeCatalog(resp.body)
	if err != nil {
		return nil, fmt.Errorf("otc client: list tools: %w", resp.unexpected(err))
	}
	return defs, nil
}

// search is SearchTools of an OTC server: GET /tools?q=…&limit=….
func (w otcWire) search(ctx context.Context, query string, limit int) ([]otc.ToolDefinition, error) {
	c := w.c
	q := url.Values{"q": {query}}
	if limit != 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	resp, err := c.do(ctx, http.MethodGet, "/tools?"+q.Encode(), nil)
	if err != nil {
		return nil, fmt.Errorf("otc client: search tools: %w", err)
	}
	if resp.status == http.StatusBadRequest {
		// What otc's handler answers when the program does not link the
		// search in; a bad query or limit is a 422.
		return nil, fmt.Errorf("%w (the server answered %w)", ErrNoSearch, resp.failure())
	}
	if resp.status != http.StatusOK {
		return nil, fmt.Errorf("otc client: search tools: %w", resp.failure())
	}
	defs, err := decodeCatalog(resp.body)
	if err != nil {
		return nil, fmt.Errorf("otc client: search tools: %w", resp.unexpected(err))
	}
	if n := limit; n == 0 && len(defs) > 100 || n > 0 && len(defs) > n {
		// More than asked for: a server that ignores q, and answered its
		// whole catalog.
		return nil, fmt.Errorf("%w (the server answered %d tools to a search for at most %d: it lists, and does not search)", ErrNoSearch, len(defs), max(n, 100))
	}
	return defs, nil
}

// health is Health of an OTC server.
func (w otcWire) health(ctx context.Context) error {
	c := w.c
	resp, err := c.do(ctx, http.MethodGet, "/health", nil)
	if err != nil {
		return fmt.Errorf("otc client: health: %w", err)
	}
	if resp.status != http.StatusOK {
		return fmt.Errorf("otc client: health: %w", resp.unexpected(nil))
	}
	return nil
}

// otcWire is the transport of an OTC server: the protocol's three
// endpoints below the base URL.
type otcWire struct{ c *Client }

func (otcWire) close() error { return nil }

// call sends one attempt of a call.
func (w otcWire) call(ctx context.Context, k *call) (*Result, error) {
	resp, err := w.c.sendWith(ctx, http.MethodPost, w.c.base+"/tools/call", k.otcBody, k.opts.Header, nil)
	if err != nil {
		return nil, err
	}
	if resp.status != http.StatusOK {
		return nil, resp.failure()
	}
	var out struct {
		Result *struct {
			CallID   string          `json:"call_id"`
			Duration float64         `json:"duration"`
			Success  *bool           `json:"success"`
			Value    json.RawMessage `json:"value"`
			Error    *otc.ToolError  `json:"error"`
		} `json:"result"`
	}
	if err := json.Unmarshal(resp.body, &out); err != nil {
		return nil, resp.unexpected(err)
	}
	r := out.Result
	if r == nil || r.Success == nil {
		return nil, resp.unexpected(errors.New(`the body has no "result" with "success"`))
	}
	res := &Result{CallID: r.CallID, Duration: msDuration(r.Duration)}
	if !*r.Success {
		te := r.Error
		if te == nil {
			te = &otc.ToolError{}
		}
		if te.Message == "" {
			te.Message = "the tool failed without a message"
		}
		return res, te
	}
	// A present value, JSON null included, decodes as non-empty; an absent
	// one (a tool that returns nothing) leaves Value nil.
	if len(r.Value) > 0 {
		res.Value = r.Value
	}
	return res, nil
}

// msDuration converts the protocol's fractional milliseconds, refusing
// nonsense rather than overflowing.
func msDuration(ms float64) time.Duration {
	if ms <= 0 || ms > float64(365*24*time.Hour/time.Millisecond) {
		return 0
	}
	return time.Duration(ms * float64(time.Millisecond))
}

// wireCall and wireRequest are the body of POST /tools/call.
type wireCall struct {
	Schema  string      `json:"$schema"`
	Request wireRequest `json:"request"`
}

type wireRequest struct {
	ToolID  string           `json:"tool_id"`
	CallID  string           `json:"call_id,omitempty"`
	TraceID string           `json:"trace_id,omitempty"`
	Input   json.RawMessage  `json:"input,omitempty"`
	Context *otc.CallContext `json:"context,omitempty"`
}
