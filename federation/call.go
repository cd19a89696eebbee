package federation

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/client"
	"github.com/otcgo/otc/internal/wire"
)

// callValue is the function of a remote tool whose result is a JSON value.
func (rt *remoteTool) callValue(ctx context.Context, in json.RawMessage) (json.RawMessage, error) {
	res, err := rt.call(ctx, in)
	if err != nil {
		return nil, err
	}
	return res.Value, nil
}

// callContent is the function of an MCP tool without an output schema: its
// content blocks travel on as they came.
func (rt *remoteTool) callContent(ctx context.Context, in json.RawMessage) (otc.Content, error) {
	res, err := rt.call(ctx, in)
	if err != nil {
		return nil, err
	}
	return contentOf(res), nil
}

// contentOf reads the content blocks of an MCP result; a block of a kind
// the registry does not carry (a resource link) becomes its JSON as text.
func contentOf(res *client.Result) otc.Content {
	var raw struct {
		Content []json.RawMessage `json:"content"`
	}
	if len(res.Raw) == 0 || json.Unmarshal(res.Raw, &raw) != nil {
		if len(res.Value) == 0 {
			return otc.Content{}
		}
		var s string
		if json.Unmarshal(res.Value, &s) == nil {
			return otc.Content{otc.TextContent(s)}
		}
		return otc.Content{otc.TextContent(string(res.Value))}
	}
	out := make(otc.Content, 0, len(raw.Content))
	for _, b := range raw.Content {
		var blk otc.ContentBlock
		if json.Unmarshal(b, &blk) == nil {
			switch blk.Type {
			case "text", "image", "audio":
				out = append(out, blk)
				continue
			case "resource":
				if blk.Resource != nil {
					out = append(out, blk)
					continue
				}
			}
		}
		out = append(out, otc.TextContent(string(b)))
	}
	return out
}

// call calls the upstream's tool, within the breaker; the upstream's
// client sends a call that did not reach it again where that is safe
// (its RetryPolicy, set in dial).
func (rt *remoteTool) call(ctx context.Context, in json.RawMessage) (*client.Result, error) {
	u := rt.u
	// The call's own headers: the trace context, and the caller's token
	// where the upstream takes it (in place of the gateway's key).
	header := http.Header{}
	u.f.propagate(ctx, header)
	var token string
	if u.cfg.Credentials.PassThrough {
		tok, err := passThrough(ctx, u.cfg.Credentials.Audience)
		if err != nil {
			return nil, err
		}
		token = tok
	} else if u.cfg.Credentials.TokenExchange != nil {
		if _, err := callerToken(ctx, "token_exchange needs the caller's bearer token to exchange"); err != nil {
			return nil, err // refused before any request
		}
	}
	if token != "" {
		header.Set("Authorization", "Bearer "+token)
	}
	opts := &client.CallOptions{
		Header:     header,
		Idempotent: rt.idempotent,
		CallID:     hopCallID(ctx),
		UserID:     otc.UserID(ctx),
		Progress: func(p client.Progress) {
			if p.Progress > 0 || p.Total > 0 || p.Message != "" {
				otc.ReportProgress(ctx, p.Progress, p.Total, p.Message)
			}
		},
		OnNotification: func(method string, params json.RawMessage) {
			if method == "notifications/message" {
				forwardLog(ctx, params)
			}
		},
	}
	// What the upstream's tool requires of its caller, the gateway's
	// caller gave (the registry checked it): it goes on, and nothing else.
	if req := rt.def.Requirements; req != nil {
		for _, s := range req.Secrets {
			if v, ok := otc.Secret(ctx, s.ID); ok {
				opts.Secrets = append(opts.Secrets, otc.ToolSecret{ID: s.ID, Value: v})
			}
		}
		for _, a := range req.Authorization {
			if v, ok := otc.AuthorizationToken(ctx, a.ID); ok {
				opts.Authorization = append(opts.Authorization, otc.ToolAuthorization{ID: a.ID, Token: v})
			}
		}
	}
	if wait, ok := u.brk.allow(); !ok {
		return nil, &otc.ToolError{
			Message:          fmt.Sprintf("The tool's server (%s) is not answering just now; try again later.", u.cfg.Name),
			DeveloperMessage: "federation: the breaker of upstream " + u.cfg.Name + " is open: " + u.lastError(),
			CanRetry:         true, RetryAfter: wait,
		}
	}
	cl, release, err := u.clientFor(ctx)
	if err != nil {
		return nil, err
	}
	if u.cfg.Credentials.TokenExchange != nil {
		tok, err := exchangeFor(ctx, cl, u.cfg.Name)
		if err != nil {
			release(false)
			return nil, err
		}
		header.Set("Authorization", "Bearer "+tok)
	}
	// The client sends a call that failed in transport again where that
	// cannot run the tool twice (its RetryPolicy, set in dial).
	res, err := cl.Call(ctx, rt.remote, in, opts)
	unreached := err != nil && cl.Unreached(err)
	// A session that failed as a transport is closed; one whose call the
	// caller cancelled is kept.
	release(unreached && ctx.Err() == nil)
	if err == nil {
		u.brk.success()
		return res, nil
	}
	if ir, ok := errors.AsType[*otc.InputRequiredError](err); ok {
		return nil, ir // the caller was asked the upstream's question: its answer comes in the next round
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if isMisconfigured(err) {
		u.misconfigured(fmt.Errorf("misconfigured: %w", err))
		return nil, &otc.ToolError{Message: fmt.Sprintf("The tool's server (%s) is misconfigured and cannot be called; its operator must mend it.", u.cfg.Name), Err: err,
			DeveloperMessage: "federation: upstream " + u.cfg.Name + " is misconfigured: " + err.Error()}
	}
	if !unreached {
		u.brk.success()
		return nil, refusal(u.cfg.Name, err)
	}
	u.brk.failure()
	u.kick()
	wait := 100 * time.Millisecond
	var busy *otc.Error
	if errors.As(err, &busy) && busy.RetryAfter > wait {
		wait = busy.RetryAfter // a 503 that said when
	}
	return nil, &otc.ToolError{
		Message:          fmt.Sprintf("The tool's server (%s) could not be reached; try again.", u.cfg.Name),
		DeveloperMessage: "federation: upstream " + u.cfg.Name + ": " + err.Error(),
		CanRetry:         true, RetryAfter: wait, Err: err,
	}
}

// refusal is what the caller gets when the upstream answered but did not
// run the tool, or the tool failed.
func refusal(name string, err error) error {
	var te *otc.ToolError
	if errors.As(err, &te) {
		return te
	}
	var oe *otc.Error
	if errors.As(err, &oe) {
		switch oe.Code {
		case otc.CodeRateLimited:
			return &otc.ToolError{Message: fmt.Sprintf("The tool's server (%s) is busy; try again later.", name), CanRetry: true, RetryAfter: oe.RetryAfter, Err: err,
				DeveloperMessage: "federation: upstream " + name + " refused the call: " + oe.Error()}
		case otc.CodeUnauthenticated, otc.CodeForbidden:
			return &otc.ToolError{Message: fmt.Sprintf("The tool's server (%s) refused this gateway's credentials.", name), Err: err,
				DeveloperMessage: "federation: upstream " + name + " refused the gateway: " + oe.Error() + "; check the upstream's credentials"}
		case otc.CodeInvalidInput:
			return &otc.ToolError{Message: oe.Message, AdditionalPromptContent: paramText(oe.ParameterErrors), Err: err,
				DeveloperMessage: "federation: upstream " + name + " refused the input the gateway accepted: " + oe.Error()}
		}
	}
	return &otc.ToolError{Message: fmt.Sprintf("The tool's server (%s) refused the call: %s", name, wire.Truncate(err.Error(), 300)), Err: err,
		DeveloperMessage: "federation: upstream " + name + ": " + err.Error()}
}

// paramText lists a refusal's parameter errors, a line each, in the
// parameters' order: the same text each time, for a model's prompt cache
// and for a reader.
func paramText(m map[string]string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(m)) {
		fmt.Fprintf(&b, "%s: %s\n", k, m[k])
	}
	return strings.TrimSpace(b.String())
}

// hopCallID is the call id sent upstream: the caller's identity and its
// call id, hashed, so that two callers' ids never meet at the upstream
// (which knows only the gateway) and a caller's retry is the same key.
func hopCallID(ctx context.Context) string {
	id := otc.CallID(ctx)
	if id == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(callerKey(otc.CallerIdentity(ctx)) + "\x00" + id))
	return "fed-" + hex.EncodeToString(sum[:16])
}

// callerKey names a caller identity: its method, issuer and name; "" for
// none.
func callerKey(id *otc.Identity) string {
	if id == nil {
		return ""
	}
	iss, _ := id.Claims["iss"].(string)
	return id.Method + "\x00" + iss + "\x00" + id.Name
}

// passThrough returns the caller's bearer token when its audience holds
// aud.
func passThrough(ctx context.Context, aud string) (string, error) {
	need := "pass_through needs the caller's bearer token with " + aud + " in its aud"
	tok, err := callerToken(ctx, need)
	if err != nil {
		return "", err
	}
	if id := otc.CallerIdentity(ctx); id != nil {
		switch a := id.Claims["aud"].(type) {
		case string:
			if a == aud {
				return tok, nil
			}
		case []any:
			for _, v := range a {
				if s, _ := v.(string); s == aud {
					return tok, nil
				}
			}
		}
	}
	return "", &otc.ToolError{Message: "This tool needs a token issued for its server; the call did not carry one.",
		DeveloperMessage: "federation: " + need}
}

// questionHandlers hand an upstream's questions to the caller of the call
// that caused them, through otc.Ask: where the caller's format carries
// them (MCP's requests, OTC's and MCP 2026-07-28's input_required rounds),
// the caller answers; where it cannot, the upstream is told so.
func questionHandlers() *client.Handlers {
	ask := func(ctx context.Context, method string, params any) (json.RawMessage, error) {
		if otc.CallID(ctx) == "" {
			// The client found no call for it: over stdio a question names
			// none, and calls of several callers (or of callers without an
			// identity, who share one process) were under way on the
			// process, or none was. Those of one caller are put to it.
			return nil, fmt.Errorf("%w: the upstream asked a question that names no call (over stdio a question does not say which call it is of) while calls of several callers, or of callers without an identity, ran on its process: it is put to none; callers that authenticate get a process each (sessions)", otc.ErrInputUnsupported)
		}
		raw, err := json.Marshal(params)
		if err != nil {
			return nil, err
		}
		answers, err := otc.Ask(ctx, otc.InputRequest{Method: method, Params: raw})
		if err != nil {
			return nil, err
		}
		return answers[0], nil
	}
	return &client.Handlers{
		Elicit: func(ctx context.Context, req *client.ElicitRequest) (*client.ElicitResult, error) {
			a, err := ask(ctx, otc.MethodElicit, req)
			if err != nil {
				return nil, err
			}
			var res client.ElicitResult
			if err := json.Unmarshal(a, &res); err != nil {
				return nil, fmt.Errorf("the caller's answer is not an elicitation result: %w", err)
			}
			return &res, nil
		},
		Sample: func(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
			return ask(ctx, otc.MethodSample, params)
		},
	}
}

// forwardLog hands an upstream's log message of a call to the call's
// caller, at the level it names.
func forwardLog(ctx context.Context, params json.RawMessage) {
	var m struct {
		Level string          `json:"level"`
		Data  json.RawMessage `json:"data"`
	}
	if json.Unmarshal(params, &m) != nil || len(m.Data) == 0 {
		return
	}
	level := slog.LevelInfo
	switch m.Level {
	case "debug":
		level = slog.LevelDebug
	case "warning":
		level = slog.LevelWarn
	case "error", "critical", "alert", "emergency":
		level = slog.LevelError
	}
	otc.LogToClient(ctx, level, m.Data)
}
