// MCP 2026-07-28 deprecates logging (SEP-2577) but still has it, and a
// tool that logs to its client with otc.LogToClient expects the log to
// arrive, so the bridge forwards it with the SDK's deprecated logging API.
//
//lint:file-ignore SA1019 the bridge forwards otc.LogToClient while MCP keeps logging

package mcpsdk

import (
	"context"
	"encoding/json"
	"log/slog"
	"math"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	otcmcp "github.com/otcgo/otc/mcp"
)

// notifier sends a tool's progress and log reports through the SDK
// session of the call. It implements otc.Notifier.
//
// It holds the call's context, against the usual rule, because the SDK
// sends a notification on the stream of the request whose context it is
// given, and otc.Notifier's methods take none; the notifier lives only as
// long as its call.
type notifier struct {
	ctx           context.Context
	session       *mcp.ServerSession // nil outside a session: nothing is sent
	progressToken any                // nil: the client asked for no progress

	mu           sync.Mutex
	done         bool
	sentProgress bool
	lastProgress float64
}

// NotifyProgress sends notifications/progress when the request carried a
// progressToken. A report that does not move forward is dropped, as MCP
// requires progress to increase with each notification, and as the
// native server does.
func (n *notifier) NotifyProgress(progress, total float64, message string) {
	if n.progressToken == nil || n.session == nil || !finite(progress) || !finite(total) {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.done || (n.sentProgress && progress <= n.lastProgress) {
		return
	}
	n.lastProgress, n.sentProgress = progress, true
	// An error means the client has gone; the tool cannot act on it.
	_ = n.session.NotifyProgress(n.ctx, &mcp.ProgressNotificationParams{
		ProgressToken: n.progressToken,
		Progress:      progress,
		Total:         max(total, 0), // zero, unknown, is left out
		Message:       message,
	})
}

// NotifyLog sends notifications/message. The SDK session drops it below
// the level the client chose, and when it chose none.
func (n *notifier) NotifyLog(level slog.Level, data any) {
	if n.session == nil {
		return
	}
	d, err := json.Marshal(data)
	if err != nil {
		d, _ = json.Marshal(err.Error())
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.done {
		return
	}
	_ = n.session.Log(n.ctx, &mcp.LoggingMessageParams{Level: mcp.LoggingLevel(otcmcp.LevelName(level)), Data: json.RawMessage(d)})
}

// finish drops every report that comes after it: a tool that ran past its
// timeout may report after its call was answered.
func (n *notifier) finish() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.done = true
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }
