package otc

import (
	"context"
	"log/slog"
)

// Notifier carries what a tool reports while it runs, its progress and
// its log messages, to the client that called it. The adapters of wire
// formats that can send such notifications (MCP) put one in the context of
// each call with [WithNotifier]; OTC and the REST view have no way to send
// them, so a tool's reports there go nowhere.
//
// A tool may report from any goroutine, so a Notifier must be safe for
// concurrent use. It must also drop what arrives after its call has been
// answered: a tool that ran past its timeout may report after that.
type Notifier interface {
	// NotifyProgress reports that the call has reached progress out of
	// total; total is zero when unknown. message may be empty.
	NotifyProgress(progress, total float64, message string)
	// NotifyLog sends a log message at level. data is any value that
	// encodes as JSON, usually a string.
	NotifyLog(level slog.Level, data any)
}

type notifierKey struct{}

// WithNotifier returns a context whose calls report to n. Adapters call it
// on the context they pass to [Registry.Call].
func WithNotifier(ctx context.Context, n Notifier) context.Context {
	return context.WithValue(ctx, notifierKey{}, n)
}

// ReportProgress tells the client how far the call has come: progress out
// of total, with total zero when it is unknown, and an optional message
// for a person watching. Progress should grow from one report to the next.
// Over MCP it becomes a progress notification when the client asked for
// them; elsewhere it does nothing, so a tool may always call it.
func ReportProgress(ctx context.Context, progress, total float64, message string) {
	if n, _ := ctx.Value(notifierKey{}).(Notifier); n != nil {
		n.NotifyProgress(progress, total, message)
	}
}

// LogToClient sends a log message to the client at level, as distinct from
// the server's own logs. data is any value that encodes as JSON, usually a
// string. Over MCP it becomes a log notification when the client's log
// level lets it through (slog.LevelDebug is MCP's "debug", LevelInfo
// "info", LevelWarn "warning", LevelError "error"); elsewhere it does
// nothing.
func LogToClient(ctx context.Context, level slog.Level, data any) {
	if n, _ := ctx.Value(notifierKey{}).(Notifier); n != nil {
		n.NotifyLog(level, data)
	}
}
