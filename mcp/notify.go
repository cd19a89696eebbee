package mcp

import (
	"encoding/json"
	"log/slog"
	"math"
	"strconv"
	"sync"

	"github.com/otcgo/otc/internal/jsonrpc"
	"github.com/otcgo/otc/internal/wire"
)

// MCP's log levels, in the order of their severity, with the slog level
// each begins at. slog has four levels where MCP has eight; the ones
// between are reached with custom slog levels (slog.Level(2) is
// "notice").
var logLevels = []struct {
	name  string
	level slog.Level
}{
	{"debug", slog.LevelDebug},
	{"info", slog.LevelInfo},
	{"notice", slog.LevelInfo + 2},
	{"warning", slog.LevelWarn},
	{"error", slog.LevelError},
	{"critical", slog.LevelError + 4},
	{"alert", slog.LevelError + 8},
	{"emergency", slog.LevelError + 12},
}

// LevelName returns the MCP log level ("debug" … "emergency") that a
// message sent with [otc.LogToClient] at l goes out as: the highest MCP
// level at or below l. slog.LevelDebug is "debug", LevelInfo "info",
// LevelWarn "warning" and LevelError "error"; MCP's other levels are
// reached with slog levels between and above (LevelInfo+2 is "notice",
// LevelError+4 "critical", +8 "alert", +12 "emergency").
func LevelName(l slog.Level) string {
	name := logLevels[0].name
	for _, ll := range logLevels {
		if l >= ll.level {
			name = ll.name
		}
	}
	return name
}

// parseLevel returns the slog level an MCP level name begins at.
func parseLevel(name string) (slog.Level, bool) {
	for _, ll := range logLevels {
		if ll.name == name {
			return ll.level, true
		}
	}
	return 0, false
}

// sender carries a message to the client: a call's SSE stream, or a
// stdio connection.
type sender interface{ send(msg []byte) }

// callNotifier turns a tool's progress and log reports into MCP
// notifications sent by the transport. It implements otc.Notifier.
type callNotifier struct {
	mu   sync.Mutex
	done bool
	out  sender // called with mu held

	progressToken []byte // nil: the client asked for no progress
	logs          bool
	logLevel      slog.Level
	lastProgress  float64
	sentProgress  bool
}

// NotifyProgress sends notifications/progress when the request carried a
// progressToken. A report that does not move forward is dropped, as MCP
// requires progress to increase with each notification.
func (n *callNotifier) NotifyProgress(progress, total float64, message string) {
	if n.progressToken == nil || math.IsNaN(progress) || math.IsInf(progress, 0) || math.IsNaN(total) || math.IsInf(total, 0) {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.done || (n.sentProgress && progress <= n.lastProgress) {
		return
	}
	n.lastProgress, n.sentProgress = progress, true
	b := make([]byte, 0, 128+len(message))
	b = jsonrpc.AppendNotificationHead(b, "notifications/progress")
	b = append(b, `{"progressToken":`...)
	b = append(b, n.progressToken...)
	b = append(b, `,"progress":`...)
	b = strconv.AppendFloat(b, progress, 'g', -1, 64)
	if total > 0 {
		b = append(b, `,"total":`...)
		b = strconv.AppendFloat(b, total, 'g', -1, 64)
	}
	if message != "" {
		b = append(b, `,"message":`...)
		b = wire.AppendString(b, message)
	}
	b = append(b, "}}"...)
	n.out.send(b)
}

// NotifyLog sends notifications/message when level is at or above the
// client's.
func (n *callNotifier) NotifyLog(level slog.Level, data any) {
	if !n.logs || level < n.logLevel {
		return
	}
	d, err := json.Marshal(data)
	if err != nil {
		d, _ = json.Marshal(err.Error())
	}
	b := make([]byte, 0, 96+len(d))
	b = jsonrpc.AppendNotificationHead(b, "notifications/message")
	b = append(b, `{"level":"`...)
	b = append(b, LevelName(level)...)
	b = append(b, `","data":`...)
	b = append(b, d...)
	b = append(b, "}}"...)
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.done {
		n.out.send(b)
	}
}

// finish runs f, the writing of the call's answer, and drops every report
// that comes after it.
func (n *callNotifier) finish(f func()) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.done = true
	f()
}
