package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/textproto"
	"strings"
	"time"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/wire"
)

// This file sends the client's HTTP requests and reads their answers:
// one path for the user agent, credentials, the redirect rule, the body
// limit and Retry-After, and the errors an answer that is not the
// protocol's becomes.

// response is a fully read, size-checked HTTP response.
type response struct {
	method, url string
	status      int
	contentType string
	body        []byte
	// retryAfter is the Retry-After header's wait, zero when it has none.
	retryAfter time.Duration
	// rpcMethod is the JSON-RPC method of an MCP or A2A request.
	rpcMethod string
	// challenge is the WWW-Authenticate header.
	challenge string
	// format is the format the client spoke, for the hint of a 404.
	format Format
}

// do sends a request to a path below the base URL and reads the whole
// response body, within the limit.
func (c *Client) do(ctx context.Context, method, path string, body []byte) (*response, error) {
	return c.send(ctx, method, c.base+path, body)
}

// send sends a request to u and reads the whole response body, within
// the limit.
func (c *Client) send(ctx context.Context, method, u string, body []byte) (*response, error) {
	return c.sendWith(ctx, method, u, body, nil, nil)
}

// sendWith is send, with a call's own headers (extra, nil outside a
// call) and the format's, set by headers.
func (c *Client) sendWith(ctx context.Context, method, u string, body []byte, extra http.Header, headers func(http.Header)) (*response, error) {
	hresp, err := c.open(ctx, method, u, "application/json", body, extra, headers)
	if err != nil {
		return nil, err
	}
	defer hresp.Body.Close()
	return c.readResponse(hresp, method, u)
}

// open sends a request and returns the response with its body unread
// (the caller closes it): sendWith's first half, for an answer that may
// be a stream.
func (c *Client) open(ctx context.Context, method, u, accept string, body []byte, extra http.Header, headers func(http.Header)) (*http.Response, error) {
	req, err := c.newRequest(ctx, method, u, accept, body, extra)
	if err != nil {
		return nil, err
	}
	if headers != nil {
		headers(req.Header)
	}
	return c.roundTrip(req, "")
}

// responseOf is the response hresp to method at u, its body read into
// data, as the client judges it.
func responseOf(hresp *http.Response, method, u string, data []byte, format Format) *response {
	return &response{method: method, url: u, status: hresp.StatusCode, contentType: hresp.Header.Get("Content-Type"), body: data, format: format,
		retryAfter: wire.RetryAfter(hresp.Header.Get("Retry-After"), time.Now()), challenge: hresp.Header.Get("WWW-Authenticate")}
}

// readResponse reads a response's body, within the client's limit.
func (c *Client) readResponse(hresp *http.Response, method, u string) (*response, error) {
	data, err := readBody(hresp, c.maxBytes)
	if err != nil {
		return nil, fmt.Errorf("%s %s: reading the response: %w", method, u, err)
	}
	resp := responseOf(hresp, method, u, data, c.format)
	if int64(len(data)) > c.maxBytes {
		resp.body = data[:c.maxBytes]
		return nil, resp.unexpected(fmt.Errorf("%w (limit %d bytes)", ErrResponseTooLarge, c.maxBytes))
	}
	return resp, nil
}

// readBody reads at most limit+1 bytes of hresp's body (one more than a
// body may hold, to tell one over it). A body whose length the server gave
// is read into a buffer of that length, where io.ReadAll would start at
// 512 bytes and grow.
func readBody(hresp *http.Response, limit int64) ([]byte, error) {
	r := io.LimitReader(hresp.Body, limit+1)
	n := hresp.ContentLength
	if n < 0 || n > limit {
		return io.ReadAll(r)
	}
	b := make([]byte, 0, n+1) // room to read the end of the body
	for {
		m, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+m]
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return b, err
		}
		if len(b) == cap(b) { // more than the server said
			b = append(b, 0)[:len(b)]
		}
	}
}

// Header values the client sends on most requests, made once: a value
// set with Header.Set is a new slice each time. Each holds one value and
// no room for more, so that adding to one makes a copy.
var (
	jsonType   = []string{"application/json"}
	acceptMCP  = []string{"application/json, text/event-stream"}
	acceptJSON = []string{"application/json"}
)

// acceptValue is v as an Accept header's value: one of those above when it is.
func acceptValue(v string) []string {
	switch v {
	case acceptMCP[0]:
		return acceptMCP
	case acceptJSON[0]:
		return acceptJSON
	}
	return []string{v}
}

// newRequest builds a request of the client's to its server, as every
// format sends it: what it accepts, the user agent, the body's type, the
// client's credentials, and then the call's own headers (extra, nil
// outside a call), which replace the client's: a call that carries its
// own Authorization sends no API key of the client's either.
func (c *Client) newRequest(ctx context.Context, method, u, accept string, body []byte, extra http.Header) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, u, err)
	}
	req.Header["Accept"] = acceptValue(accept)
	req.Header["User-Agent"] = c.agentValue
	if body != nil {
		req.Header["Content-Type"] = jsonType
	}
	if err := c.authorize(req); err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, u, err)
	}
	if len(extra) > 0 {
		if extra.Get("Authorization") != "" {
			req.Header.Del(otc.HeaderAPIKey)
		}
		for k, v := range extra {
			req.Header[textproto.CanonicalMIMEHeaderKey(k)] = v
		}
	}
	return req, nil
}

// roundTrip sends a request the client built, through its HTTP client.
// what, when not empty, names the request in errors beside its method
// and URL.
func (c *Client) roundTrip(req *http.Request, what string) (*http.Response, error) {
	return roundTrip(c.http, req, what)
}

// direct is the transport through which req can go without d, an
// *http.Client, doing anything of its own: a request whose redirect
// [CheckRedirect] refuses (any but GET and HEAD), from a client without
// a cookie jar or time limit, to a URL without credentials in it. The
// client's Do would then only copy the request's headers (for a
// redirect it refuses) and hand it to the transport; roundTrip turns the
// redirect into the same *RedirectError. (Every *http.Client the client
// sends with went through withRedirectRule.) Nil means through d.
func direct(d Doer, req *http.Request) http.RoundTripper {
	hc, ok := d.(*http.Client)
	if !ok || hc.Jar != nil || hc.Timeout != 0 || req.URL.User != nil || req.Method == http.MethodGet || req.Method == http.MethodHead {
		return nil
	}
	if hc.Transport != nil {
		return hc.Transport
	}
	return http.DefaultTransport
}

// roundTrip sends req with d, as every request of the client's goes, to
// its server or to an authorization server: a redirect d hands back
// unfollowed is a *RedirectError, and the response's body is the
// caller's to close.
func roundTrip(d Doer, req *http.Request, what string) (*http.Response, error) {
	// The request's name is made only for an error: a call makes none.
	name := func() string {
		if what != "" {
			return req.Method + " " + req.URL.String() + " (" + what + ")"
		}
		return req.Method + " " + req.URL.String()
	}
	var resp *http.Response
	var err error
	if tr := direct(d, req); tr != nil {
		resp, err = tr.RoundTrip(req)
	} else {
		resp, err = d.Do(req)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name(), err)
	}
	if isRedirect(resp.StatusCode) {
		if loc := resp.Header.Get("Location"); loc != "" {
			resp.Body.Close()
			if to, err := req.URL.Parse(loc); err == nil {
				loc = to.String()
			}
			return nil, fmt.Errorf("%s: %w", name(), &RedirectError{Method: req.Method, From: req.URL.String(), Location: loc, Status: resp.StatusCode})
		}
	}
	return resp, nil
}

// failure turns a non-200 response into an error: an [*otc.Error] for the
// protocol's error statuses with a protocol body, a [*ResponseError] for
// anything else. 401 and 413 often come from a proxy in front of the
// server, with a body of its own; they still map to their class.
func (r *response) failure() error {
	code, ok := refusalCode(r.status)
	switch {
	case r.status == http.StatusBadRequest:
		code = otc.CodeServerError
	case r.status == http.StatusUnprocessableEntity:
		code = otc.CodeInvalidInput
	case !ok:
		return r.unexpected(nil)
	}
	var body struct {
		Message             string                   `json:"message"`
		DeveloperMessage    string                   `json:"developer_message"`
		ParameterErrors     map[string]string        `json:"parameter_errors"`
		MissingRequirements *otc.MissingRequirements `json:"missing_requirements"`
		Reason              string                   `json:"reason"`
		RequiredScopes      []string                 `json:"required_scopes"`
		RetryAfterMS        int64                    `json:"retry_after_ms"`
	}
	err := json.Unmarshal(r.body, &body)
	if err == nil && body.Message != "" {
		e := &otc.Error{
			Code:                code,
			Message:             body.Message,
			DeveloperMessage:    body.DeveloperMessage,
			ParameterErrors:     body.ParameterErrors,
			MissingRequirements: body.MissingRequirements,
			Reason:              body.Reason,
			RequiredScopes:      body.RequiredScopes,
		}
		if retryable(code) {
			e.RetryAfter = max(r.retryAfter, retryMS(body.RetryAfterMS))
		}
		return r.withStatus(e)
	}
	if code != otc.CodeServerError && code != otc.CodeInvalidInput && code != otc.CodeForbidden &&
		(code != otc.CodeUnavailable || r.retryAfter > 0) {
		// A proxy's answer, most likely (an authenticating proxy, a body
		// limit, a gateway's rate limit, or a load balancer with no
		// server up that says when to come back): keep the class, and
		// say what came. A bare 503 page says nothing to act on.
		dev := fmt.Sprintf("the body is not the protocol's JSON (Content-Type %q); it starts %q", r.contentType, r.body[:min(len(r.body), maxQuoted)])
		e := &otc.Error{Code: code, Message: http.StatusText(r.status), DeveloperMessage: dev}
		if retryable(code) {
			e.RetryAfter = r.retryAfter
		}
		return r.withStatus(e)
	}
	if err == nil {
		err = errors.New(`the error body has no "message"`)
	}
	return r.unexpected(err)
}

// refusalCode is the class of a status that refuses the caller or says
// the server is busy, in every HTTP format: 401, 403, 413, 429 and 503.
func refusalCode(status int) (otc.Code, bool) {
	switch status {
	case http.StatusUnauthorized:
		return otc.CodeUnauthenticated, true
	case http.StatusForbidden:
		return otc.CodeForbidden, true
	case http.StatusRequestEntityTooLarge:
		return otc.CodeTooLarge, true
	case http.StatusTooManyRequests:
		return otc.CodeRateLimited, true
	case http.StatusServiceUnavailable:
		return otc.CodeUnavailable, true
	}
	return 0, false
}

// retryable reports whether a refusal of class code may pass if the call
// is sent again later: a rate limit, or a server too busy or going away.
func retryable(code otc.Code) bool {
	return code == otc.CodeRateLimited || code == otc.CodeUnavailable
}

// retryMS is a server's retry_after_ms as a wait, within [0,
// wire.MaxRetryAfter]; a RetryPolicy's MaxWait bounds it again.
func retryMS(ms int64) time.Duration {
	return time.Duration(min(max(ms, 0), int64(wire.MaxRetryAfter/time.Millisecond))) * time.Millisecond
}

// withStatus wraps e with the request and the status, which its message
// does not carry, so that the error reads well in a log line on its own.
func (r *response) withStatus(e *otc.Error) error {
	return fmt.Errorf("%s %s: status %d: %w", r.method, r.url, r.status, e)
}

// notFoundHints are the Hints of a 404, by the format the client spoke:
// the format's endpoints are never missing from its server, so the URL is
// not one; an otc server (mount.All, otc gateway) serves each format at
// its own path, which the hint names.
var notFoundHints = map[Format]string{
	FormatOTC:  "no OTC tool server is mounted at this URL: use the URL its OTC handler is mounted at (an otc server's /otc), not the server's root",
	FormatMCP:  "no MCP server answers at this URL: use its MCP endpoint (an otc server's /mcp)",
	FormatREST: "no REST tool view is mounted at this URL: use the URL it is mounted at (an otc server's /v1)",
	FormatA2A:  "no A2A agent answers at this URL: use the agent's URL, below which its card is (an otc server's /a2a)",
}

// unexpected wraps a response the client cannot use.
func (r *response) unexpected(err error) *ResponseError {
	hint := ""
	if r.status == http.StatusNotFound {
		hint = notFoundHints[r.format]
	}
	return &ResponseError{
		Hint:        hint,
		Method:      r.method,
		URL:         r.url,
		StatusCode:  r.status,
		ContentType: r.contentType,
		Body:        bytes.Clone(r.body[:min(len(r.body), maxQuoted)]),
		Err:         err,
	}
}

// ErrResponseTooLarge is wrapped by the [*ResponseError] for a response
// body over Options.MaxResponseBytes.
var ErrResponseTooLarge = errors.New("response body too large")

// maxQuoted is how much of an unexpected body a ResponseError keeps.
const maxQuoted = 256

// ResponseError is a response the client cannot use: a status the protocol
// does not define for the endpoint, or a body that is not the protocol's
// JSON, such as a proxy's HTML error page.
type ResponseError struct {
	Method      string
	URL         string
	StatusCode  int
	ContentType string
	// Body holds the first bytes of the response body.
	Body []byte
	// Err says what was wrong with the body, when it was the body.
	Err error
	// Hint, when not empty, says what to do about it: for a 404, that the
	// URL is not the one the format's server is at.
	Hint string
}

// Error says the status and quotes the start of the body.
func (e *ResponseError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: unexpected response %d %s", e.Method, e.URL, e.StatusCode, http.StatusText(e.StatusCode))
	if e.Err != nil {
		fmt.Fprintf(&b, ": %v", e.Err)
	}
	if e.ContentType != "" {
		fmt.Fprintf(&b, " (Content-Type %s)", e.ContentType)
	}
	if len(e.Body) > 0 {
		fmt.Fprintf(&b, ": body starts %q", e.Body)
	}
	if e.Hint != "" {
		fmt.Fprintf(&b, " (%s)", e.Hint)
	}
	return b.String()
}

// Unwrap returns Err.
func (e *ResponseError) Unwrap() error { return e.Err }
