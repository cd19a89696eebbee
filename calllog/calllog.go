// Package calllog writes one structured record per tool call, a registry
// middleware (otc.RegistryOptions.Middleware):
//
//	reg := otc.NewRegistry(&otc.RegistryOptions{Middleware: []otc.Middleware{calllog.New(logger, nil)}})
package calllog

import (
	"context"
	"log/slog"
	"time"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/wire"
)

// Options configures [New]. The zero value, and nil, give the
// defaults described on each field.
type Options struct {
	// Level is the level of each record. Calls whose function panicked or
	// returned a value that cannot be encoded (otc.OutcomeFault) are logged at
	// slog.LevelError whatever it says. The zero value is slog.LevelInfo.
	Level slog.Level

	// LogInput adds the call's input ("input", as JSON) and the message of
	// its error ("error") to each record. It is off by default: an input
	// can hold personal data, and a secret a caller put in the wrong
	// place, and an error message can quote the input.
	LogInput bool
}

// New returns middleware that writes one structured record per call
// to logger, after the call, whatever its outcome:
//
//	tool_id      the resolved tool ("Toolkit.Tool@x.y.z"), or the tool
//	             as the caller named it (at most 128 bytes) when none
//	             matched
//	call_id      the call id
//	trace_id     the caller's trace id, when it sent one
//	protocol     the wire format: "otc", "http" or "mcp"
//	caller       the name of the caller's [otc.Identity], when the server
//	             authenticates: an API key's name or a JWT's subject,
//	             never a credential
//	outcome      the class of the outcome ([otc.Outcome])
//	duration_ms  the time the call took below this middleware, in
//	             milliseconds
//	replayed     true when the call was answered with the outcome an
//	             earlier call with its call id recorded, without running
//	             (see [otc.RegistryOptions.Idempotency]); absent otherwise
//
// The record's message is "tool call". A read of a resource, a prompt
// rendered, an argument completed and a list of resources, templates or
// prompts (MCP's resources/read, prompts/get, completion/complete and
// resources/list, …, which pass the registry's middleware too) are
// logged alike, with the message "read", "render", "complete" or "list",
// and in place of tool_id:
//
//	kind         read, render, complete or list ([otc.CallKind])
//	target       the URI read, the prompt rendered, what is completed, or
//	             the list's method (at most 512 bytes)
//
// Secrets, tokens and input values
// never appear, unless [Options.LogInput] is set. Put it
// first in [otc.RegistryOptions.Middleware] to log calls that other
// middleware refuses. A nil logger means slog.Default().
func New(logger *slog.Logger, opts *Options) otc.Middleware {
	if logger == nil {
		logger = slog.Default()
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	return func(next otc.CallFunc) otc.CallFunc {
		return func(ctx context.Context, c *otc.Call) (otc.CallResult, error) {
			if !logger.Enabled(ctx, o.Level) && !logger.Enabled(ctx, slog.LevelError) {
				return next(ctx, c)
			}
			start := time.Now()
			res, err := next(ctx, c)
			end := time.Now()
			elapsed := end.Sub(start)

			outcome := otc.OutcomeOf(res, err)
			level := o.Level
			if outcome == otc.OutcomeFault {
				level = slog.LevelError
			}
			if !logger.Enabled(ctx, level) {
				return res, err
			}
			tool := c.ToolID
			if c.Tool != nil {
				tool = c.Tool.ID
			} else {
				tool = wire.Truncate(tool, otc.MaxIDLength)
			}
			var buf [10]slog.Attr
			attrs := buf[:0]
			msg := "tool call"
			if c.Kind != "" && c.Kind != otc.CallTool {
				// A read, a render or a completion: what it is, and of what.
				msg = string(c.Kind)
				attrs = append(attrs, slog.String("kind", string(c.Kind)), slog.String("target", wire.Truncate(c.Target, 512)))
			} else {
				attrs = append(attrs, slog.String("tool_id", tool))
			}
			attrs = append(attrs, slog.String("call_id", c.CallID))
			if c.TraceID != "" {
				attrs = append(attrs, slog.String("trace_id", c.TraceID))
			}
			attrs = append(attrs, slog.String("protocol", c.Protocol))
			if c.Identity != nil {
				attrs = append(attrs, slog.String("caller", c.Identity.Name))
			}
			attrs = append(attrs,
				slog.String("outcome", string(outcome)),
				slog.Float64("duration_ms", float64(elapsed.Microseconds())/1000))
			if res.Replayed {
				attrs = append(attrs, slog.Bool("replayed", true))
			}
			if o.LogInput {
				if len(c.Input) > 0 {
					attrs = append(attrs, slog.Any("input", c.Input))
				}
				if msg := outcomeMessage(res, err); msg != "" {
					attrs = append(attrs, slog.String("error", msg))
				}
			}
			// The record is built here rather than by logger.LogAttrs,
			// which would look up the caller's source line: that is this
			// function, which says nothing, and costs a stack walk.
			rec := slog.NewRecord(end, level, msg, 0)
			rec.AddAttrs(attrs...)
			_ = logger.Handler().Handle(ctx, rec)
			return res, err
		}
	}
}

// outcomeMessage is the message of a failed call, or "".
func outcomeMessage(res otc.CallResult, err error) string {
	switch {
	case err != nil:
		return err.Error()
	case res.Error != nil:
		return res.Error.Error()
	}
	return ""
}
