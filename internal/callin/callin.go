package callin

import (
	"context"
	"encoding/json"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/otcgo/otc/internal/jsonparse"
)

// SetParsed records that req's Input is the text of node of doc, so that
// the pipeline reads the node instead of parsing Input again. req is an
// *otc.CallRequest; doc must stay unreleased until the call returns.
var SetParsed func(req any, doc *jsonparse.Document, node int32)

// SpendOnce records key as used until the given time and reports whether
// it was fresh: once spent, a key is never fresh again before then, but
// to a request with the same callID (not empty) when the registry records
// call ids, whose idempotency then answers it. reg is the *otc.Registry
// whose record holds it: its idempotency store when replicas share one,
// its in-memory ledger otherwise. An error means the record could not be
// written, and what the key guards must not run.
var SpendOnce func(ctx context.Context, reg any, key, callID string, until time.Time) (bool, error)

// SetAdmitted makes admitted run once req's call is admitted: its
// middleware passed it, its requirements are met and its input is valid;
// an error it returns refuses the call with that error, before the
// function runs. req is an *otc.CallRequest. A task starter keeps a task
// from then on, so that a call refused earlier leaves none behind.
var SetAdmitted func(req any, admitted func() error)

// Resolve resolves the tool req names (its ToolID or ToolName, for its
// Protocol) in reg, and keeps the resolution in req, so that reg's Call
// of req does not resolve it again: a wire format that must know a
// tool's task support before the call (MCP, A2A) resolves it once per
// call. It returns the tool's otc.TaskSupport (as its uint8) and its
// AskBeforeTask window; ok is false when the tool does not resolve (the
// call then answers why). reg is an *otc.Registry, req an
// *otc.CallRequest.
var Resolve func(reg, req any) (tasks uint8, window time.Duration, ok bool)

// CheckAnswer checks an answer against its question as both travel (the
// question's method and params) with the checks the root package makes of
// answers, and returns what is wrong with it, or "".
var CheckAnswer func(method string, params, answer json.RawMessage) string

// Readable is a read ("read"), a render ("render") or a completion
// ("complete") of Target, as RunReadable runs it.
type Readable struct {
	Kind, Target, Protocol string
	// Request is the HTTP request it came in, nil over stdio; Body the
	// request as it came, which Guard (what hook.Guard made of the
	// entry's policy; nil for none) is checked against before Fn runs.
	Request *http.Request
	Body    []byte
	Guard   any
	// Timeout bounds Fn's run: zero means the registry's DefaultTimeout,
	// a negative value none. MaxConcurrent bounds the runs of the entry
	// under way at once, counted in Running (the entry's own): zero
	// means the registry's DefaultMaxConcurrent, a negative value none.
	Timeout       time.Duration
	MaxConcurrent int
	Running       *atomic.Int64
	Fn            func(context.Context) (json.RawMessage, error)
}

// RunReadable runs r through reg's pipeline: its middleware, as an
// otc.Call of r's Kind and Target, and its core: Guard, the entry's
// concurrency limit, then Fn within its timeout, a panic recovered. It
// returns what Fn returned, or the error that refused it (a
// middleware's, the policy's, the limit's), or one that says it ran past
// its timeout or panicked. reg is an *otc.Registry.
var RunReadable func(ctx context.Context, reg any, r Readable) (json.RawMessage, error)
