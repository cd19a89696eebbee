// Package hook is the one seam between package otc and the packages
// beside it (the wire formats, resource, prompt, search, federation and
// the machinery they share): what they need of a registry, a policy or a
// call that otc does not export.
//
// The seam is typed by otc's own types, which this package cannot import:
// package otc lends a [Seam] of its types once, when it is initialized,
// and a package beside it takes it with [Of], naming the same types, so
// that a call with a wrong argument is a compile error. A package takes
// the seam in a variable of its own, initialized after otc:
//
//	var seam = hook.Of[otc.Registry, otc.Policy, otc.ToolDefinition, otc.CallRequest, otc.Identity, otc.Error]()
package hook

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/otcgo/otc/internal/jsonparse"
	"github.com/otcgo/otc/internal/params"
)

// Seam is what package otc lends: R is otc.Registry, P otc.Policy, D
// otc.ToolDefinition, Q otc.CallRequest, I otc.Identity and E otc.Error.
type Seam[R, P, D, Q, I, E any] struct {
	// Attached returns the values the packages beside otc keep on a
	// registry, by keys of their own types.
	Attached func(reg *R) *sync.Map

	// WatchTools calls f after each change of the catalog of tools of reg
	// (a registration, a removal), until stop is called. f runs while the
	// registry is locked: it must not block, nor register.
	WatchTools func(reg *R, f func()) (stop func())

	// Input prepares typed input of type t as reg prepares a tool's.
	Input func(reg *R, t reflect.Type) (*Input, error)

	// Definitions returns the revision of reg's catalog and its tools'
	// definitions in catalog order, shared with the catalog: to be read
	// and never changed. A definition that did not change from one
	// revision to the next is the same pointer in both.
	Definitions func(reg *R) (revision uint64, defs []*D)

	// PolicyProblem says what is wrong with a policy, as registering a
	// tool with it would, or "" when nothing is.
	PolicyProblem func(p *P) string

	// Admits returns the check of policy p (nil for none) for an entry
	// whose audience by default is subject: the policy's Admits of the
	// caller of ctx through protocol, with the policy copied (so that
	// changing it afterwards changes nothing) and what it asks of a
	// caller worked out once, here.
	Admits func(p *P, subject string) func(ctx context.Context, protocol string) bool

	// Guard returns, for policy p (nil for none) of the entry named
	// subject, what a read or a render of the entry checks beyond its
	// listing (Admits): the token's revocation and, for an execution-bound
	// policy, the token's binding to the request and its single use. Nil
	// checks nothing.
	Guard func(p *P, subject string) Guard

	// InvalidInput is the registry's invalid-input error (an *otc.Error)
	// with the problems of the parameters named, or, with none, message
	// as the developer's detail.
	InvalidInput func(params map[string]string, message string) error

	// Protocol is the wire format the call of ctx came through
	// (otc.CallRequest.Protocol), or "" outside a call.
	Protocol func(ctx context.Context) string

	// SetParsed records that req's Input is the text of node of doc, so
	// that the pipeline reads the node instead of parsing Input again. doc
	// must stay unreleased until the call returns.
	SetParsed func(req *Q, doc *jsonparse.Document, node int32)

	// SpendOnce records key as used until the given time and reports
	// whether it was fresh: once spent, a key is never fresh again before
	// then, but to a request with the same callID (not empty) when the
	// registry records call ids, whose idempotency then answers it. The
	// record is reg's idempotency store when replicas share one, its
	// in-memory ledger otherwise. An error means the record could not be
	// written, and what the key guards must not run.
	SpendOnce func(ctx context.Context, reg *R, key, callID string, until time.Time) (bool, error)

	// SetAdmitted makes admitted run once req's call is admitted: its
	// middleware passed it, its requirements are met and its input is
	// valid; an error it returns refuses the call with that error, before
	// the function runs. A task starter keeps a task from then on, so that
	// a call refused earlier leaves none behind.
	SetAdmitted func(req *Q, admitted func() error)

	// Resolve resolves the tool req names (its ToolID or ToolName, for its
	// Protocol) in reg, and keeps the resolution in req, so that reg's
	// Call of req does not resolve it again: a wire format that must know
	// a tool's task support before the call (MCP, A2A) resolves it once
	// per call. It returns the tool's otc.TaskSupport (as its uint8) and
	// its AskBeforeTask window; ok is false when the tool does not resolve
	// (the call then answers why).
	Resolve func(reg *R, req *Q) (tasks uint8, window time.Duration, ok bool)

	// CheckAnswer checks an answer against its question as both travel
	// (the question's method and params) with the checks otc makes of
	// answers, and returns what is wrong with it, or "".
	CheckAnswer func(method string, params, answer json.RawMessage) string

	// RunReadable runs r through reg's pipeline: its middleware, as an
	// otc.Call of r's Kind and Target, and its core: Guard, the entry's
	// concurrency limit, then Fn within its timeout, a panic recovered. It
	// returns what Fn returned, or the error that refused it (a
	// middleware's, the policy's, the limit's), or one that says it ran
	// past its timeout or panicked.
	RunReadable func(ctx context.Context, reg *R, r Readable) (json.RawMessage, error)

	// Refusal returns an error of code CodeUnauthenticated with the given
	// message and reason, whose Unwrap returns cause (nil for none): what
	// the authenticators of packages auth and oauth refuse with.
	Refusal func(message, reason string, cause error) *E

	// CapabilityIdentity returns the identity (Method "capability") of a
	// verified capability token: its subject, its claims, the revocation
	// check a tool's policy runs before each call (nil for none), and the
	// leeway its "exp" was checked with.
	CapabilityIdentity func(name string, claims map[string]any, revoked func(ctx context.Context, jti string) (bool, error), leeway time.Duration) *I
}

// Input is typed input prepared as a tool's: the JSON Schema of its
// parameters, reflected from its type with its tags (every top-level
// parameter described); the parameters, read from it once; and Prepare,
// which validates a JSON object against it and returns what the type is
// decoded from (defaults filled in), or the registry's invalid-input error
// naming each parameter.
type Input struct {
	Schema  json.RawMessage
	Params  params.List
	Prepare func(input []byte) ([]byte, error)
}

// Guard is what a read or a render checks beyond its entry's listing; only
// package otc makes one (Seam.Guard).
type Guard interface{ GuardsReadable() }

// Readable is a read ("read"), a render ("render"), a completion
// ("complete") or a listing ("list") of Target, as Seam.RunReadable runs
// it.
type Readable struct {
	Kind, Target, Protocol string
	// Request is the HTTP request it came in, nil over stdio; Body the
	// request as it came, which Guard (nil for none) is checked against
	// before Fn runs.
	Request *http.Request
	Body    []byte
	Guard   Guard
	// Timeout bounds Fn's run: zero means the registry's DefaultTimeout,
	// a negative value none. MaxConcurrent bounds the runs of the entry
	// under way at once, counted in Running (the entry's own): zero
	// means the registry's DefaultMaxConcurrent, a negative value none.
	Timeout       time.Duration
	MaxConcurrent int
	Running       *atomic.Int64
	Fn            func(context.Context) (json.RawMessage, error)
}

var lent any

// Lend is how package otc lends its seam, once, when it is initialized.
func Lend[R, P, D, Q, I, E any](s *Seam[R, P, D, Q, I, E]) { lent = s }

// Of returns the seam package otc lent, for its types R, P, D, Q, I and E. It
// panics when otc lent none, or lent it for other types: a program's
// initialization, never a request, meets that.
func Of[R, P, D, Q, I, E any]() *Seam[R, P, D, Q, I, E] {
	s, ok := lent.(*Seam[R, P, D, Q, I, E])
	if !ok {
		panic("hook: package otc lent no seam of these types (take it in a package-level variable of a package that imports otc)")
	}
	return s
}
