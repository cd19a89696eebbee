package mcp_test

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/mcp"
	"github.com/otcgo/otc/prompt"
	"github.com/otcgo/otc/ratelimit"
	"github.com/otcgo/otc/resource"
)

// seen records what a middleware saw: each call's kind and target.
type seen struct {
	mu    sync.Mutex
	calls []string
}

func (s *seen) middleware(next otc.CallFunc) otc.CallFunc {
	return func(ctx context.Context, c *otc.Call) (otc.CallResult, error) {
		s.mu.Lock()
		s.calls = append(s.calls, string(c.Kind)+" "+c.Target)
		s.mu.Unlock()
		res, err := next(ctx, c)
		s.mu.Lock()
		s.calls = append(s.calls, "outcome "+string(otc.OutcomeOf(res, err)))
		s.mu.Unlock()
		return res, err
	}
}

func (s *seen) take() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.calls
	s.calls = nil
	return out
}

// nameArgs is the variable of test://names/{name}, and the argument of
// the prompt greet.
type nameArgs struct {
	Name string `json:"name" jsonschema:"description=A name."`
}

// registerNames registers the template test://names/{name}, which reads
// as its name and completes a prefix with "1".
func registerNames(t *testing.T, reg *otc.Registry) {
	t.Helper()
	_, err := resource.RegisterTemplate(reg, resource.Template[nameArgs]{URITemplate: "test://names/{name}", Name: "names",
		Complete: func(_ context.Context, _, prefix string, _ nameArgs) ([]string, error) {
			return []string{prefix + "1"}, nil
		}},
		func(_ context.Context, in nameArgs) (string, error) { return in.Name, nil })
	require.NoError(t, err)
}

// pipelineRegistry is a registry whose middleware records what it sees,
// with a DefaultTimeout of 300 ms: a resource, a resource that takes 5 s
// whatever its context says, a template that completes, and a prompt.
func pipelineRegistry(t *testing.T) (*otc.Registry, *seen) {
	t.Helper()
	s := &seen{}
	reg := otc.NewRegistry(&otc.RegistryOptions{Middleware: []otc.Middleware{s.middleware}, DefaultTimeout: 300 * time.Millisecond})
	_, err := resource.Register(reg, resource.Resource{URI: "test://fast", Name: "fast"}, func(context.Context) (string, error) { return "quick", nil })
	require.NoError(t, err)
	_, err = resource.Register(reg, resource.Resource{URI: "test://slow", Name: "slow"}, func(context.Context) (string, error) {
		time.Sleep(5 * time.Second)
		return "late", nil
	})
	require.NoError(t, err)
	// A timeout of its own, shorter; and none at all, past the default.
	_, err = resource.Register(reg, resource.Resource{URI: "test://brief", Name: "brief", Timeout: 100 * time.Millisecond}, func(context.Context) (string, error) {
		time.Sleep(time.Second)
		return "late", nil
	})
	require.NoError(t, err)
	_, err = resource.Register(reg, resource.Resource{URI: "test://patient", Name: "patient", Timeout: -1}, func(context.Context) (string, error) {
		time.Sleep(500 * time.Millisecond)
		return "in time", nil
	})
	require.NoError(t, err)
	registerNames(t, reg)
	_, err = prompt.Register(reg, prompt.Prompt[nameArgs]{Name: "greet"}, func(_ context.Context, in nameArgs) (string, error) { return "Hello " + in.Name, nil })
	require.NoError(t, err)
	return reg, s
}

// TestReadablesThroughPipeline: a read, a render, a completion and a
// list pass the registry's middleware as a tool call does, as a Call
// whose Kind and Target say what it is, over HTTP at 2025-11-25 and 2026-07-28 and
// over stdio; and a read is bounded by DefaultTimeout: one that takes 5 s
// is answered with a timeout error at 300 ms.
func TestReadablesThroughPipeline(t *testing.T) {
	t.Parallel()
	reg, s := pipelineRegistry(t)
	url := serve(t, reg, nil)
	requests := []struct {
		method string
		params obj
		want   string
	}{
		{"resources/read", obj{"uri": "test://fast"}, "read test://fast"},
		{"resources/read", obj{"uri": "test://names/ada"}, "read test://names/ada"},
		{"prompts/get", obj{"name": "greet", "arguments": obj{"name": "ada"}}, "render greet"},
		{"completion/complete", obj{"ref": obj{"type": "ref/resource", "uri": "test://names/{name}"}, "argument": obj{"name": "name", "value": "a"}}, "complete test://names/{name}"},
		{"completion/complete", obj{"ref": obj{"type": "ref/prompt", "name": "greet"}, "argument": obj{"name": "name", "value": "a"}}, "complete prompt:greet"},
		{"resources/list", obj{}, "list resources/list"},
		{"resources/templates/list", obj{}, "list resources/templates/list"},
		{"prompts/list", obj{}, "list prompts/list"},
	}
	for _, version := range []string{mcp.Version20251125, mcp.Version20260728} {
		for _, r := range requests {
			params := obj{}
			for k, v := range r.params {
				params[k] = v
			}
			hdr := map[string]string{"MCP-Protocol-Version": version}
			if version == mcp.Version20260728 {
				params["_meta"] = modernMeta(nil)
				hdr = modernHeaders(r.method, "")
			}
			post(t, url, request(1, r.method, params), hdr).result(t)
			assert.Equal(t, []string{r.want, "outcome success"}, s.take(), "%s %s", version, r.method)
		}
	}

	c := startStdio(t, t.Context(), reg, nil)
	c.send(request(0, "initialize", obj{"protocolVersion": mcp.Version20251125, "capabilities": obj{}, "clientInfo": obj{"name": "t", "version": "1"}}))
	c.recvResponse()
	for i, r := range requests {
		c.send(request(i+1, r.method, r.params))
		got := c.recvResponse()
		require.Nil(t, got.Error, "%s", got.Error)
		assert.Equal(t, []string{r.want, "outcome success"}, s.take(), "stdio %s", r.method)
	}
	// 2026-07-28 over stdio: each request says its version, no handshake.
	modern := startStdio(t, t.Context(), reg, nil)
	for i, r := range requests {
		params := obj{"_meta": modernMeta(nil)}
		for k, v := range r.params {
			params[k] = v
		}
		modern.send(request(i+1, r.method, params))
		got := modern.recvResponse()
		require.Nil(t, got.Error, "%s", got.Error)
		assert.Equal(t, []string{r.want, "outcome success"}, s.take(), "stdio 2026-07-28 %s", r.method)
	}

	start := time.Now()
	e, _ := post(t, url, request(1, "resources/read", obj{"uri": "test://slow"}), map[string]string{"MCP-Protocol-Version": mcp.Version20251125}).rpcErr(t, http.StatusOK, -32603)
	assert.Less(t, time.Since(start), 2*time.Second, "the read outran its timeout")
	assert.Contains(t, e.Message, "did not finish within its timeout (300ms)")
	assert.Equal(t, []string{"read test://slow", "outcome timeout"}, s.take())

	// An entry's own timeout wins over the default, either way.
	e, _ = post(t, url, request(1, "resources/read", obj{"uri": "test://brief"}), map[string]string{"MCP-Protocol-Version": mcp.Version20251125}).rpcErr(t, http.StatusOK, -32603)
	assert.Contains(t, e.Message, "did not finish within its timeout (100ms)")
	raw := post(t, url, request(1, "resources/read", obj{"uri": "test://patient"}), map[string]string{"MCP-Protocol-Version": mcp.Version20251125}).result(t)
	assert.Contains(t, string(raw), "in time", "no timeout: past the default of 300 ms")
	s.take()
}

// TestReadablesRefusedByMiddleware: a middleware's refusal of a read, or
// of a list, is the request's answer, as for a call: a rate limit's is
// -32000 with its delay, 429 over HTTP.
func TestReadablesRefusedByMiddleware(t *testing.T) {
	t.Parallel()
	limit := func(next otc.CallFunc) otc.CallFunc {
		return func(ctx context.Context, c *otc.Call) (otc.CallResult, error) {
			if c.Kind == otc.CallRead || c.Kind == otc.CallList {
				return otc.CallResult{}, &otc.Error{Code: otc.CodeRateLimited, Message: "Too many reads", RetryAfter: 2 * time.Second}
			}
			return next(ctx, c)
		}
	}
	reg := otc.NewRegistry(&otc.RegistryOptions{Middleware: []otc.Middleware{limit}})
	_, err := resource.Register(reg, resource.Resource{URI: "test://fast", Name: "fast"}, func(context.Context) (string, error) { return "quick", nil })
	require.NoError(t, err)
	url := serve(t, reg, nil)
	e, _ := post(t, url, request(1, "resources/read", obj{"uri": "test://fast"}), map[string]string{"MCP-Protocol-Version": mcp.Version20251125}).rpcErr(t, http.StatusTooManyRequests, -32000)
	assert.Equal(t, "Too many reads", e.Message)
	// A list is charged to the caller's budget too.
	e, _ = post(t, url, request(1, "resources/list", obj{}), map[string]string{"MCP-Protocol-Version": mcp.Version20251125}).rpcErr(t, http.StatusTooManyRequests, -32000)
	assert.Equal(t, "Too many reads", e.Message)
}

// TestReadablesBadInput: what a hostile client or a broken function can
// do to a read or a completion is answered with a clear error, bounded,
// and seen by the middleware: a read function that panics (the server
// goes on), one that returns 100 MB (not sent: MaxReadBytes), a URI of
// 100 KB (refused before any template is tried), and a flood of
// completions from one caller (the rate limit's middleware refuses what
// is over its limit, and the middleware before it counts every one).
func TestReadablesBadInput(t *testing.T) {
	t.Parallel()
	s := &seen{}
	limit, err := ratelimit.New(&ratelimit.Options{All: ratelimit.Limit{Rate: 1, Burst: 50}})
	require.NoError(t, err)
	reg := otc.NewRegistry(&otc.RegistryOptions{Middleware: []otc.Middleware{s.middleware, limit}, Logger: slog.New(slog.DiscardHandler)})
	_, err = resource.Register(reg, resource.Resource{URI: "test://panics", Name: "panics"}, func(context.Context) (string, error) { panic("the disk") })
	require.NoError(t, err)
	_, err = resource.Register(reg, resource.Resource{URI: "test://huge", Name: "huge"}, func(context.Context) (string, error) { return strings.Repeat("x", 100<<20), nil })
	require.NoError(t, err)
	registerNames(t, reg)
	url := serve(t, reg, nil)
	legacy := map[string]string{"MCP-Protocol-Version": mcp.Version20251125}

	e, _ := post(t, url, request(1, "resources/read", obj{"uri": "test://panics"}), legacy).rpcErr(t, http.StatusOK, -32603)
	assert.Contains(t, e.Message, "failed unexpectedly")
	assert.Equal(t, []string{"read test://panics", "outcome fault"}, s.take())

	a := post(t, url, request(1, "resources/read", obj{"uri": "test://huge"}), legacy)
	assert.Less(t, len(a.body), 4096, "the 100 MB were sent")
	e, _ = a.rpcErr(t, http.StatusOK, -32603)
	assert.Contains(t, e.Message, "more than the 16777216 this server sends")
	s.take()

	e, _ = post(t, url, request(1, "resources/read", obj{"uri": "test://names/" + strings.Repeat("a", 100<<10)}), legacy).rpcErr(t, http.StatusOK, -32602)
	assert.Contains(t, e.Message, "longer than 4096 bytes")

	const n = 2000
	codes := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			a := post(t, url, request(i, "completion/complete", obj{"ref": obj{"type": "ref/resource", "uri": "test://names/{name}"}, "argument": obj{"name": "name", "value": "a"}}), legacy)
			codes[i] = a.status
		})
	}
	wg.Wait()
	ok, refused := 0, 0
	for _, c := range codes {
		switch c {
		case http.StatusOK:
			ok++
		case http.StatusTooManyRequests:
			refused++
		}
	}
	assert.LessOrEqual(t, ok, 60, "completions past the caller's limit")
	assert.Equal(t, n, ok+refused)
	assert.Equal(t, 2*n, len(s.take()), "the middleware saw each, and its outcome")
}

// TestReadablesConcurrencyLimit: a resource's MaxConcurrent bounds its
// reads under way: one more is answered at once, -32000 (429), and the
// middleware sees it busy; once the first ends, the next read runs.
func TestReadablesConcurrencyLimit(t *testing.T) {
	t.Parallel()
	s := &seen{}
	reg := otc.NewRegistry(&otc.RegistryOptions{Middleware: []otc.Middleware{s.middleware}})
	started, release := make(chan struct{}, 1), make(chan struct{})
	_, err := resource.Register(reg, resource.Resource{URI: "test://one", Name: "one", MaxConcurrent: 1}, func(context.Context) (string, error) {
		started <- struct{}{}
		<-release
		return "done", nil
	})
	require.NoError(t, err)
	url := serve(t, reg, nil)
	legacy := map[string]string{"MCP-Protocol-Version": mcp.Version20251125}
	first := make(chan answer, 1)
	go func() { first <- post(t, url, request(1, "resources/read", obj{"uri": "test://one"}), legacy) }()
	recvWithin(t, started, "the first read")
	e, _ := post(t, url, request(2, "resources/read", obj{"uri": "test://one"}), legacy).rpcErr(t, http.StatusTooManyRequests, -32000)
	assert.Contains(t, e.Message, "busy (1 under way, its limit)")
	close(release)
	recvWithin(t, first, "the first read's answer").result(t)
	got := s.take()
	assert.Contains(t, got, "outcome busy")
	assert.Contains(t, got, "outcome success")
	go func() { <-started }()
	post(t, url, request(3, "resources/read", obj{"uri": "test://one"}), legacy).result(t)
}
